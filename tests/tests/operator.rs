//! Two controllers in one `Operator`: one client, one registry and one ops server (every metric
//! family once, both controllers' series, `/readyz` over both), one shutdown.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ObjectMeta, PostParams};
use kubeward::controller::{Controller, ControllerState};
use kubeward::operator::{Operator, OperatorError};
use kubeward::{Action, Pass, Reconciler};
use kubeward_tests::{eventually, http_get};

struct Configs;
impl Reconciler for Configs {
    type Resource = ConfigMap;
    type Error = kube::Error;
    const NAME: Option<&'static str> = Some("test.kubeward.dev/configs");
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
        Ok(Action::await_change())
    }
}

struct Secrets;
impl Reconciler for Secrets {
    type Resource = Secret;
    type Error = kube::Error;
    const NAME: Option<&'static str> = Some("test.kubeward.dev/secrets");
    async fn apply(&self, _: &Secret, _: &mut Pass<Secret>) -> Result<Action, kube::Error> {
        Ok(Action::await_change())
    }
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_controllers_share_one_registry_one_ops_server_and_one_shutdown() {
    let server = kubeward_testing::ApiServer::start().await.expect("server");
    let client = server.client().expect("client");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let operator = Operator::new(client.clone())
        .with_reconciler(Configs)
        .expect("configs")
        .with_reconciler(Secrets)
        .expect("secrets")
        .with_ops_server("127.0.0.1:0".parse().unwrap())
        .await
        .expect("ops server")
        .shutdown_on(async move {
            let _ = stopped.await;
        });
    let ops = operator.ops_address().expect("ops address");
    let states = operator.readiness();
    let running = tokio::spawn(operator.run());

    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &ConfigMap {
                metadata: meta("settings"),
                ..ConfigMap::default()
            },
        )
        .await
        .expect("configmap");
    Api::<Secret>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &Secret {
                metadata: meta("token"),
                ..Secret::default()
            },
        )
        .await
        .expect("secret");
    let completed = |controller: &str| {
        format!(
            r#"kubeward_reconcile_passes_total{{controller="{controller}",outcome="completed",phase="apply"}}"#
        )
    };
    let passed = |metrics: &str, controller: &str| {
        metrics
            .lines()
            .find_map(|l| {
                l.strip_prefix(&completed(controller))?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .is_some_and(|n| n >= 1.0)
    };
    eventually("both controllers reconciled", || async {
        let (_, metrics) = http_get(ops, "/metrics").await;
        passed(&metrics, "test.kubeward.dev/configs")
            && passed(&metrics, "test.kubeward.dev/secrets")
    })
    .await;
    let (status, metrics) = http_get(ops, "/metrics").await;
    assert_eq!(status, 200);
    for family in [
        "kubeward_reconcile_passes_total",
        "kubeward_reconcile_errors_total",
        "kubeward_reconcile_passes_in_flight",
        "kubeward_event_publishes_total",
        // (ConfigMaps and Secrets have no generation: no kubeward_object_generation series.)
        "kubeward_object_suspended",
        "kubeward_object_terminal",
        "kubeward_controller_leading",
        "kubeward_controller_queue_depth",
        "kubeward_reconcile_queue_wait_seconds",
    ] {
        let headers = metrics
            .lines()
            .filter(|l| l.starts_with(&format!("# TYPE {family} ")))
            .count();
        assert_eq!(headers, 1, "{family} once in:\n{metrics}");
    }
    for series in [
        r#"kubeward_object_suspended{controller="test.kubeward.dev/configs",name="settings",namespace="default"} 0"#,
        r#"kubeward_object_suspended{controller="test.kubeward.dev/secrets",name="token",namespace="default"} 0"#,
        r#"kubeward_controller_leading{controller="test.kubeward.dev/configs"} 1"#,
        r#"kubeward_controller_leading{controller="test.kubeward.dev/secrets"} 1"#,
        // Nothing waits once both objects were reconciled.
        r#"kubeward_controller_queue_depth{controller="test.kubeward.dev/configs"} 0"#,
        r#"kubeward_controller_queue_depth{controller="test.kubeward.dev/secrets"} 0"#,
    ] {
        assert!(metrics.contains(series), "{series} in:\n{metrics}");
    }
    // Every pass a change started waited in the queue: one sample per object at least.
    for controller in ["test.kubeward.dev/configs", "test.kubeward.dev/secrets"] {
        let count =
            format!(r#"kubeward_reconcile_queue_wait_seconds_count{{controller="{controller}"}} "#);
        let waited = metrics
            .lines()
            .find_map(|l| l.strip_prefix(&count)?.trim().parse::<f64>().ok());
        assert!(waited.is_some_and(|n| n >= 1.0), "{count} in:\n{metrics}");
    }
    eventually("ready", || async {
        http_get(ops, "/readyz").await.0 == 200
    })
    .await;
    assert_eq!(http_get(ops, "/healthz").await.0, 200);

    let _ = stop.send(());
    running
        .await
        .expect("operator task")
        .expect("operator stopped cleanly");
    for state in states {
        assert_eq!(*state.borrow(), ControllerState::Stopped);
    }
}

#[tokio::test]
async fn two_controllers_of_one_name_are_refused() {
    let server = kubeward_testing::ApiServer::start().await.expect("server");
    let client = server.client().expect("client");
    let twin = Controller::new(Secrets, client.clone()).with_name("test.kubeward.dev/configs");
    let refused = Operator::new(client)
        .with_reconciler(Configs)
        .expect("configs")
        .with_controller(twin);
    match refused {
        Err(OperatorError::DuplicateController(name)) => {
            assert_eq!(name, "test.kubeward.dev/configs");
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
}

/// Notes the name of every ConfigMap it reconciles.
#[derive(Clone, Default)]
struct NotedConfigs(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl NotedConfigs {
    fn saw(&self, name: &str) -> bool {
        self.0.lock().unwrap().iter().any(|n| n == name)
    }
}

impl Reconciler for NotedConfigs {
    type Resource = ConfigMap;
    type Error = kube::Error;
    const NAME: Option<&'static str> = Some("test.kubeward.dev/noted-configs");
    async fn apply(
        &self,
        config: &ConfigMap,
        _: &mut Pass<ConfigMap>,
    ) -> Result<Action, kube::Error> {
        self.0
            .lock()
            .unwrap()
            .push(kube::ResourceExt::name_any(config));
        Ok(Action::await_change())
    }
}

/// One replica of an operator of two controllers sharing the Lease `operator`, run as the
/// service account `account` holding both controllers' generated rules.
struct Replica {
    widgets: kubeward_tests::Widgets,
    configs: NotedConfigs,
    stop: tokio::sync::oneshot::Sender<()>,
    run: tokio::task::JoinHandle<Result<(), OperatorError>>,
}

async fn replica(server: &kubeward_testing::Cluster, account: &str) -> Replica {
    use kubeward::leader::LeaderElection;
    let mut rules = kubeward::rbac::rules::<kubeward_tests::Widgets>(true);
    rules.extend(kubeward::rbac::rules::<NotedConfigs>(false));
    let client = server
        .service_account_client("default", account, rules)
        .await
        .expect("the generated RBAC is stored");
    let widgets = kubeward_tests::Widgets::default();
    let configs = NotedConfigs::default();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let election = LeaderElection::new(client.clone(), "default", "operator", account)
        .with_timings(
            std::time::Duration::from_secs(4),
            std::time::Duration::from_secs(2),
            std::time::Duration::from_millis(250),
        );
    let operator = Operator::new(client.clone())
        .with_leader_election(election)
        .with_controller(
            Controller::new(widgets.clone(), client.clone())
                .with_event_recorder(kubeward_tests::recorder(&client))
                .with_shutdown_grace(std::time::Duration::from_millis(100)),
        )
        .expect("widgets")
        .with_reconciler(configs.clone())
        .expect("configs")
        .shutdown_on(async move {
            let _ = stopped.await;
        });
    Replica {
        widgets,
        configs,
        stop,
        run: tokio::spawn(operator.run()),
    }
}

impl Replica {
    async fn stop(self) {
        let _ = self.stop.send(());
        self.run
            .await
            .expect("the operator's task")
            .expect("the operator stops cleanly");
    }
}

/// Waits until a replica of the identity prefix `prefix` holds the lease.
async fn leads(admin: &kube::Client, prefix: &str) {
    eventually(&format!("{prefix} leads"), || async {
        lease_holder(admin)
            .await
            .is_some_and(|h| h.starts_with(&format!("{prefix}_")))
    })
    .await;
}

/// Creates the ConfigMap `name` in `default`; returns it as stored.
async fn create_config(admin: &kube::Client, name: &str) -> ConfigMap {
    Api::<ConfigMap>::namespaced(admin.clone(), "default")
        .create(
            &PostParams::default(),
            &ConfigMap {
                metadata: meta(name),
                ..ConfigMap::default()
            },
        )
        .await
        .expect("configmap")
}

async fn lease_holder(client: &kube::Client) -> Option<String> {
    Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(client.clone(), "default")
        .get_opt("operator")
        .await
        .expect("lease")
        .and_then(|lease| lease.spec?.holder_identity)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_lease_runs_every_controller_of_the_leader_and_none_of_the_standby() {
    use kubeward_tests::{
        Mode, WidgetSpec, create_widget, server_with_widgets, service_account_user,
    };
    let (server, admin) = server_with_widgets().await;
    let a = replica(&server, "replica-a").await;
    leads(&admin, "replica-a").await;
    let b = replica(&server, "replica-b").await;
    create_widget(
        &admin,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "done"),
    )
    .await;
    create_config(&admin, "c1").await;
    eventually("both of replica-a's controllers reconcile", || async {
        a.widgets.started("w1") > 0 && a.configs.saw("c1")
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        b.widgets.started("w1"),
        0,
        "the standby reconciles no widget"
    );
    assert!(!b.configs.saw("c1"), "nor any ConfigMap");
    let leases =
        Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(admin.clone(), "default")
            .list(&Default::default())
            .await
            .expect("leases");
    let names: Vec<String> = leases
        .items
        .iter()
        .map(kube::ResourceExt::name_any)
        .collect();
    assert_eq!(names, ["operator"], "one Lease for both controllers");

    // Replica A shuts down: every controller stops, then the lease is released, and nothing of
    // A's is written after that.
    a.stop().await;
    kubeward_tests::assert_no_write_after_release(&server, &service_account_user("replica-a"));

    // Replica B takes over with both controllers.
    leads(&admin, "replica-b").await;
    create_config(&admin, "c2").await;
    eventually("both of replica-b's controllers reconcile", || async {
        b.widgets.started("w1") > 0 && b.configs.saw("c2")
    })
    .await;
    b.stop().await;
    assert_eq!(lease_holder(&admin).await, None, "released on shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_shared_lease_stops_every_controller_and_the_standby_takes_over() {
    use kubeward_testing::{Fault, FaultAction};
    use kubeward_tests::service_account_user;
    let (server, admin) = kubeward_tests::server_with_widgets().await;
    let a = replica(&server, "replica-a").await;
    leads(&admin, "replica-a").await;
    let b = replica(&server, "replica-b").await;
    // Replica A can no longer renew: it loses the lease at its renew deadline, and B acquires it
    // once the lease has expired.
    server.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(http::Method::PUT)
            .user(&service_account_user("replica-a"))
            .resource("coordination.k8s.io", "leases"),
    );
    leads(&admin, "replica-b").await;
    create_config(&admin, "after").await;
    eventually("replica-b's controller reconciles it", || async {
        b.configs.saw("after")
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        !a.configs.saw("after"),
        "the deposed replica's controllers reconcile nothing"
    );
    b.stop().await;
    a.stop().await;
}

/// An operator whose shared election cannot run — timings that break client-go's rules, or an
/// empty identity — fails at once with that error, and none of its controllers starts: no
/// replica idles as a ready standby of a lease it never seeks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_whose_shared_election_cannot_run_fails_at_once_and_runs_nothing() {
    use kubeward::leader::{LeaderElection, LeaderError};
    use kubeward_tests::service_account_user;
    use std::time::Duration;
    let server = kubeward_testing::Cluster::start().await.expect("cluster");
    let admin = server.client().expect("admin");
    create_config(&admin, "before").await;
    let mut rules = kubeward::rbac::rules::<NotedConfigs>(true);
    rules.extend(kubeward::rbac::rules::<Secrets>(false));
    let client = server
        .service_account_client("default", "invalid", rules)
        .await
        .expect("the generated RBAC is stored");
    let elections = [
        LeaderElection::new(client.clone(), "default", "operator", "invalid").with_timings(
            Duration::from_secs(10),
            Duration::from_secs(10),
            Duration::from_secs(2),
        ),
        LeaderElection::new(client.clone(), "default", "operator", ""),
    ];
    for election in elections {
        let configs = NotedConfigs::default();
        let operator = Operator::new(client.clone())
            .with_leader_election(election)
            .with_reconciler(configs.clone())
            .expect("configs")
            .with_reconciler(Secrets)
            .expect("secrets")
            .shutdown_on(std::future::pending());
        // Bounded only so that a run that idles fails instead of hanging: the assertion is on
        // the error.
        let ended = tokio::time::timeout(Duration::from_secs(30), operator.run())
            .await
            .expect("run() returns without a shutdown signal");
        assert!(
            matches!(
                &ended,
                Err(OperatorError::LeaderElection(
                    LeaderError::InvalidTimings { .. } | LeaderError::EmptyIdentity
                ))
            ),
            "{ended:?}"
        );
        assert!(!configs.saw("before"), "no pass ran");
    }
    let sent: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.user == service_account_user("invalid"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(sent.is_empty(), "no controller started: {sent:?}");
}

/// Every pass of the controllers below, as (controller index, object name).
type Passes = std::sync::Arc<std::sync::Mutex<Vec<(usize, String)>>>;

/// One of two controllers reconciling ConfigMaps and owning Secrets: controller `N` notes
/// each pass.
struct Owner<const N: usize>(Passes);

impl<const N: usize> Reconciler for Owner<N> {
    type Resource = ConfigMap;
    type Error = kube::Error;
    const NAME: Option<&'static str> =
        Some(["test.kubeward.dev/owner-a", "test.kubeward.dev/owner-b"][N]);

    /// Every Secret watched (`owns_with`), not only those labelled by this controller (the
    /// default): the two controllers' watches are then the same watch, shared.
    fn relations() -> kubeward::relations::Relations<ConfigMap> {
        kubeward::relations::Relations::new()
            .owns_with::<Secret>(kube::runtime::watcher::Config::default())
    }

    async fn apply(
        &self,
        config: &ConfigMap,
        _: &mut Pass<ConfigMap>,
    ) -> Result<Action, kube::Error> {
        let name = kube::ResourceExt::name_any(config);
        self.0.lock().unwrap().push((N, name));
        Ok(Action::await_change())
    }
}

/// The operator of [`Owner`]s 0 and 1, on `client`.
fn owners(client: kube::Client, passes: &Passes) -> Operator {
    Operator::new(client)
        .with_reconciler(Owner::<0>(passes.clone()))
        .expect("owner-a")
        .with_reconciler(Owner::<1>(passes.clone()))
        .expect("owner-b")
}

/// Applies `yaml` with `kubectl apply -f -` to `server`; kubectl's output.
async fn kubectl_apply(server: &kubeward_testing::Cluster, yaml: String) -> String {
    let port = server
        .url()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    let dir = std::env::temp_dir().join(format!(
        "kubeward-operator-rbac-{}-{port}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let manifest = dir.join("rbac.yaml");
    std::fs::write(&manifest, yaml).expect("manifest");
    let applied = tokio::task::spawn_blocking(move || {
        let kubectl = kubeward_testing::kubectl::Kubectl::new(&kubeconfig);
        kubectl.ok(&["apply", "-f", manifest.to_str().expect("UTF-8 path")])
    })
    .await
    .expect("kubectl");
    let _ = std::fs::remove_dir_all(&dir);
    applied
}

/// An operator's RBAC is its controllers' rules merged: two controllers that each read
/// ConfigMaps, own Secrets and publish events need each of those once.
#[tokio::test]
async fn an_operators_rbac_names_each_resource_once() {
    let client = kube::Client::try_from(kube::Config::new("http://127.0.0.1:9".parse().unwrap()))
        .expect("a client (never connected)");
    let rules = owners(client, &Passes::default()).rbac_rules();
    let targets: Vec<String> = rules
        .iter()
        .map(|r| format!("{:?} {:?}", r.api_groups, r.resources))
        .collect();
    let mut unique = targets.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), targets.len(), "{targets:#?}");
    let verbs = |resource: &str| {
        rules
            .iter()
            .find(|r| r.resources.as_deref() == Some(&[resource.to_owned()][..]))
            .map(|r| r.verbs.join(","))
    };
    assert_eq!(verbs("configmaps").as_deref(), Some("get,list,watch,patch"));
    assert_eq!(verbs("events").as_deref(), Some("get,create,patch"));
    assert!(verbs("leases").is_none(), "no election, no Lease rule");

    // With the operator's election, and with a controller's own: one Lease rule either way.
    let leases = |rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule>| -> Vec<String> {
        rules
            .iter()
            .filter(|r| r.resources.as_deref() == Some(&["leases".to_owned()][..]))
            .map(|r| r.verbs.join(","))
            .collect()
    };
    let client = || {
        kube::Client::try_from(kube::Config::new("http://127.0.0.1:9".parse().unwrap()))
            .expect("a client (never connected)")
    };
    let election = || kubeward::leader::LeaderElection::new(client(), "default", "operator", "a");
    let elected = owners(client(), &Passes::default()).with_leader_election(election());
    assert_eq!(leases(elected.rbac_rules()), ["get,create,update"]);
    let own = Operator::new(client())
        .with_reconciler(Owner::<0>(Passes::default()))
        .expect("owner-a")
        .with_controller(
            Operator::new(client())
                .controller(Owner::<1>(Passes::default()))
                .with_leader_election(election()),
        )
        .expect("owner-b with its own election");
    assert_eq!(leases(own.rbac_rules()), ["get,create,update"]);
}

/// Two controllers of one kind, both owning Secrets, run as a service account bound to the
/// operator's RBAC (its YAML, applied with kubectl): one list and one watch of ConfigMaps, and
/// one (metadata-only) of Secrets, serve both; each still reconciles every ConfigMap, and a
/// child's change starts the pass of its owner in each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_watching_the_same_kinds_share_one_watch_of_each() {
    let server = kubeward_testing::Cluster::start().await.expect("cluster");
    let admin = server.client().expect("admin");
    let passes = Passes::default();
    let yaml = owners(admin.clone(), &passes).rbac_yaml("sharing", "default", "sharing");
    let client = server
        .service_account_client("default", "sharing", Vec::new())
        .await
        .expect("the service account");
    let applied = kubectl_apply(&server, yaml).await;
    assert!(
        applied.contains("clusterrolebinding.rbac.authorization.k8s.io/sharing"),
        "{applied}"
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let operator = owners(client, &passes).shutdown_on(async move {
        let _ = stopped.await;
    });
    let running = tokio::spawn(operator.run());
    let settings = create_config(&admin, "settings").await;
    let passes_of = |controller: usize| {
        passes
            .lock()
            .unwrap()
            .iter()
            .filter(|(c, name)| *c == controller && name == "settings")
            .count()
    };
    eventually("both controllers reconciled the ConfigMap", || async {
        passes_of(0) >= 1 && passes_of(1) >= 1
    })
    .await;
    let before = (passes_of(0), passes_of(1));

    // A Secret the ConfigMap controls: its create starts the owner's pass in both controllers.
    let owner = k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "settings".into(),
        uid: settings.metadata.uid.clone().expect("uid"),
        controller: Some(true),
        block_owner_deletion: None,
    };
    Api::<Secret>::namespaced(admin, "default")
        .create(
            &PostParams::default(),
            &Secret {
                metadata: ObjectMeta {
                    owner_references: Some(vec![owner]),
                    ..meta("settings-token")
                },
                ..Secret::default()
            },
        )
        .await
        .expect("secret");
    eventually("the child's create started a pass in both", || async {
        passes_of(0) > before.0 && passes_of(1) > before.1
    })
    .await;

    let user = kubeward_tests::service_account_user("sharing");
    let requests = server.requests();
    let count = |path: &str, watch: bool| {
        requests
            .iter()
            .filter(|r| r.user == user && r.path == path && r.is_watch() == watch)
            .count()
    };
    assert_eq!(
        count("/api/v1/configmaps", false),
        1,
        "one list of ConfigMaps"
    );
    assert_eq!(
        count("/api/v1/configmaps", true),
        1,
        "one watch of ConfigMaps"
    );
    assert_eq!(count("/api/v1/secrets", false), 1, "one list of Secrets");
    assert_eq!(count("/api/v1/secrets", true), 1, "one watch of Secrets");

    let _ = stop.send(());
    running
        .await
        .expect("operator task")
        .expect("operator stopped cleanly");
}

/// Notes, as controller `N`, the name of every ConfigMap it reconciles.
#[derive(Clone, Default)]
struct NotedAs<const N: usize>(NotedConfigs);

impl<const N: usize> Reconciler for NotedAs<N> {
    type Resource = ConfigMap;
    type Error = kube::Error;
    const NAME: Option<&'static str> =
        Some(["test.kubeward.dev/here", "test.kubeward.dev/there"][N]);
    async fn apply(
        &self,
        config: &ConfigMap,
        pass: &mut Pass<ConfigMap>,
    ) -> Result<Action, kube::Error> {
        self.0.apply(config, pass).await
    }
}

/// A controller added with a client of its own (here: another cluster's) watches alone: the
/// operator's controller of the same kind does not see the other cluster's objects, nor the
/// other this cluster's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_with_a_client_of_its_own_shares_no_watch() {
    let here = kubeward_testing::ApiServer::start().await.expect("server");
    let there = kubeward_testing::ApiServer::start().await.expect("server");
    let (here_client, there_client) = (here.client().unwrap(), there.client().unwrap());
    let (noted_here, noted_there) = (NotedAs::<0>::default(), NotedAs::<1>::default());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let operator = Operator::new(here_client.clone())
        .with_reconciler(noted_here.clone())
        .expect("here")
        .with_controller(Controller::new(noted_there.clone(), there_client.clone()))
        .expect("there")
        .shutdown_on(async move {
            let _ = stopped.await;
        });
    let running = tokio::spawn(operator.run());
    for (client, name) in [(&here_client, "in-here"), (&there_client, "in-there")] {
        Api::<ConfigMap>::namespaced(client.clone(), "default")
            .create(
                &PostParams::default(),
                &ConfigMap {
                    metadata: meta(name),
                    ..ConfigMap::default()
                },
            )
            .await
            .expect("config");
    }
    eventually("each controller saw its cluster's ConfigMap", || async {
        noted_here.0.saw("in-here") && noted_there.0.saw("in-there")
    })
    .await;
    // A shared watch would have shown both controllers one cluster's objects, and each saw
    // its own list whole by now.
    assert!(!noted_here.0.saw("in-there"));
    assert!(!noted_there.0.saw("in-here"));
    let _ = stop.send(());
    running
        .await
        .expect("joined")
        .expect("operator stopped cleanly");
}

/// A controller of Widgets `N` that derives their kstatus conditions, or not (`DERIVES`).
struct Deriving<const N: usize, const DERIVES: bool>;

impl<const N: usize, const DERIVES: bool> Reconciler for Deriving<N, DERIVES> {
    type Resource = kubeward_tests::Widget;
    type Error = kube::Error;
    const NAME: Option<&'static str> = Some(
        [
            "test.kubeward.dev/first",
            "test.kubeward.dev/second",
            "test.kubeward.dev/third",
        ][N],
    );
    const KSTATUS: Option<kubeward::kstatus::Kstatus> = if DERIVES {
        Some(kubeward::kstatus::Kstatus::DEFAULT)
    } else {
        None
    };
    async fn apply(
        &self,
        _: &kubeward_tests::Widget,
        _: &mut Pass<kubeward_tests::Widget>,
    ) -> Result<Action, kube::Error> {
        Ok(Action::await_change())
    }
}

/// Two controllers of one kind that both derive `Ready`, `Reconciling` and `Stalled` would
/// overwrite each other's verdict: the second is refused, saying how to fix it; one that
/// derives nothing is welcome.
#[tokio::test]
async fn a_second_controller_deriving_the_kstatus_of_a_kind_is_refused() {
    let server = kubeward_testing::ApiServer::start().await.expect("server");
    let operator = Operator::new(server.client().expect("client"))
        .with_reconciler(Deriving::<0, true>)
        .expect("the first")
        .with_reconciler(Deriving::<2, false>)
        .expect("one that derives nothing");
    let refused = operator.with_reconciler(Deriving::<1, true>);
    let error = refused.expect_err("refused").to_string();
    assert_eq!(
        error,
        "controllers test.kubeward.dev/first and test.kubeward.dev/second both derive the kstatus conditions of Widget.test.kubeward.dev (Ready, Reconciling, Stalled): each would overwrite the other's; let one of them opt out (`#[reconciler(kstatus = false)]`, or `Reconciler::KSTATUS = None`)"
    );
}

/// `Operator::spawn`: a test's operator in the background, stopped by its handle.
mod spawned {
    use std::time::Duration;

    use kubeward::controller::ControllerState;
    use kubeward::leader::{LeaderElection, LeaderError};
    use kubeward::operator::{Operator, OperatorError};
    use kubeward_tests::eventually;

    use super::{NotedConfigs, create_config};

    /// `Operator::spawn`: the operator runs in the background once ready, reconciles what is
    /// created, and `stop` ends it cleanly — after which nothing is reconciled any more.
    #[tokio::test]
    async fn a_spawned_operator_reconciles_until_stopped() {
        let server = kubeward_testing::ApiServer::start().await.expect("server");
        let admin = server.client().expect("admin");
        let client = server
            .service_account_client(
                "default",
                "spawned",
                kubeward::rbac::rules::<NotedConfigs>(false),
            )
            .await
            .expect("the generated RBAC is stored");
        let configs = NotedConfigs::default();
        let operator = Operator::new(client)
            .with_reconciler(configs.clone())
            .expect("configs");
        let states = operator.readiness();
        let running = operator.spawn();
        tokio::time::timeout(Duration::from_secs(30), running.ready())
            .await
            .expect("ready");
        assert!(states.iter().all(|s| s.borrow().is_ready()));
        create_config(&admin, "while-running").await;
        eventually("the ConfigMap reconciled", || async {
            configs.saw("while-running")
        })
        .await;
        running.stop().await.expect("stopped cleanly");
        for state in &states {
            assert_eq!(*state.borrow(), ControllerState::Stopped);
        }
        create_config(&admin, "after-stop").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!configs.saw("after-stop"), "a stopped operator reconciled");
    }

    /// Dropping the handle of a spawned operator shuts it down: every controller stops.
    #[tokio::test]
    async fn dropping_a_spawned_operator_shuts_it_down() {
        let server = kubeward_testing::ApiServer::start().await.expect("server");
        let client = server.client().expect("client");
        let operator = Operator::new(client)
            .with_reconciler(NotedConfigs::default())
            .expect("configs");
        let mut state = operator.readiness().remove(0);
        let running = operator.spawn();
        tokio::time::timeout(Duration::from_secs(30), running.ready())
            .await
            .expect("ready");
        drop(running);
        tokio::time::timeout(
            Duration::from_secs(30),
            state.wait_for(|s| *s == ControllerState::Stopped),
        )
        .await
        .expect("the controller stops after the handle is dropped")
        .expect("its state was reported");
    }

    /// A spawned operator that cannot run: `ready` returns (it does not wait for controllers that
    /// never start) and `stop` returns why.
    #[tokio::test]
    async fn a_spawned_operator_that_cannot_run_reports_why_on_stop() {
        let server = kubeward_testing::ApiServer::start().await.expect("server");
        let client = server.client().expect("client");
        let running = Operator::new(client.clone())
            .with_leader_election(LeaderElection::new(client, "default", "operator", ""))
            .with_reconciler(NotedConfigs::default())
            .expect("configs")
            .spawn();
        tokio::time::timeout(Duration::from_secs(30), running.ready())
            .await
            .expect("ready() returns once the operator ended");
        let ended = running.stop().await;
        assert!(
            matches!(
                &ended,
                Err(OperatorError::LeaderElection(LeaderError::EmptyIdentity))
            ),
            "{ended:?}"
        );
    }
}
