//! The ClusterRole that `rollouts rbac` prints is sufficient and minimal: the scenario (and, for
//! the rule on pods, the smaller scenario of a pod failing after its Deployment settled,
//! `drive_pod_failure`: in the main one, the Deployment's changes happen to wake the operator
//! after the kubelet reported its pod) completes with a client restricted to exactly its rules — also when a status write and an event create
//! commit and lose their answer, so that the runtime reads them back — and fails, with a 403
//! seen by the API server, when any single verb of any rule is taken away (the `get` that only
//! those read-backs use is refused with a 403; what its absence costs, a lost or duplicated
//! event, is asserted by the in-doubt tests run as the generated identity). The same holds through the server's
//! RBAC: the printed role applied with `kubectl apply` and bound to the operator's service
//! account lets the operator (authenticated as that account) run the whole scenario, `kubectl
//! auth can-i --as` the account answers yes for every rule, and a role missing any one rule
//! breaks the scenario with a 403.

use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule};
use kube::Api;
use kube::api::PostParams;
use kubeward_examples::rollouts::operator::LeaseOptions;
use kubeward_examples::rollouts::rbac;
use kubeward_examples::rollouts::scenario::{
    RunningOperator, ScenarioError, ScenarioOptions, cluster, cluster_with, drive,
    drive_pod_failure,
};
use kubeward_testing::kubectl::Kubectl;
use kubeward_testing::{Backend, Cluster, Identity, Workloads};

const USER: &str = "system:serviceaccount:default:rollouts";

/// Runs the pod-failure scenario on a cluster without nodes with the operator restricted to
/// `rules`; the result and whether the server answered the operator with a 403.
async fn pod_failure_with(
    rules: Vec<PolicyRule>,
    stage_timeout: Duration,
) -> (Result<(), ScenarioError>, bool, String) {
    let backend = Backend::from_env().expect("backend");
    let server = cluster_with(backend, Workloads::new())
        .await
        .expect("cluster");
    let restricted = server
        .service_account_client("default", "rollouts", rules)
        .await
        .expect("restricted client");
    let admin = server.client().expect("admin client");
    let options = ScenarioOptions {
        stage_timeout,
        ..ScenarioOptions::default()
    };
    let operator = RunningOperator::start(restricted, &options.operator()).expect("operator");
    let mut output = Vec::new();
    let result = drive_pod_failure(&admin, &operator, &options, &mut output).await;
    let _ = operator.stop().await;
    let forbidden = server
        .requests()
        .iter()
        .any(|r| r.user == USER && r.status == 403);
    (
        result,
        forbidden,
        String::from_utf8_lossy(&output).into_owned(),
    )
}

/// Whether `rule` is the one on pods: its verbs are checked by the pod-failure scenario.
fn on_pods(rule: &PolicyRule) -> bool {
    rule.resources.as_deref() == Some(&["pods".to_owned()][..])
}

/// Runs the scenario with the operator restricted to `rules`; the result and whether the
/// server answered the operator with a 403.
async fn scenario_with(
    rules: Vec<PolicyRule>,
    stage_timeout: Duration,
    leader_election: Option<LeaseOptions>,
) -> (Result<(), ScenarioError>, bool, String) {
    let server = cluster().await.expect("cluster");
    let restricted = server
        .service_account_client("default", "rollouts", rules)
        .await
        .expect("restricted client");
    scenario_on(&server, restricted, stage_timeout, leader_election).await
}

/// Runs the scenario on `server` with the operator using `operator_client` (authenticated as
/// [`USER`]); the result and whether the server answered the operator with a 403.
async fn scenario_on(
    server: &Cluster,
    operator_client: kube::Client,
    stage_timeout: Duration,
    leader_election: Option<LeaseOptions>,
) -> (Result<(), ScenarioError>, bool, String) {
    let admin = server.client().expect("admin client");
    let restricted = operator_client;
    lose_answers_once(server);
    let options = ScenarioOptions {
        stage_timeout,
        leader_election,
        ..ScenarioOptions::default()
    };
    let operator = RunningOperator::start(restricted, &options.operator()).expect("operator");
    let mut output = Vec::new();
    let result = drive(&admin, &operator, &options, &mut output)
        .await
        .map(|_| ());
    let _ = operator.stop().await;
    let forbidden = server
        .requests()
        .iter()
        .any(|r| r.user == USER && r.status == 403);
    (
        result,
        forbidden,
        String::from_utf8_lossy(&output).into_owned(),
    )
}

/// Makes the operator's first status write and first event create commit and then lose their
/// answer (the connection closes), so that the runtime resolves both by reading them back.
fn lose_answers_once(server: &Cluster) {
    use http::Method;
    use kubeward_testing::{Fault, FaultAction};
    server.faults().add(
        Fault::new(FaultAction::CommitThenCloseConnection)
            .user(USER)
            .method(Method::PATCH)
            .path_prefix("/apis/demo.kubeward.dev/v1/namespaces/default/rollouts/web/status")
            .times(1),
    );
    server.faults().add(
        Fault::new(FaultAction::CommitThenCloseConnection)
            .user(USER)
            .method(Method::POST)
            .resource("events.k8s.io", "events")
            .times(1),
    );
}

/// Whether `verb` on `rule` is one only the read-back of a write whose answer was lost uses:
/// `get` on the declared resource and on events.
fn read_back_only(rule: &PolicyRule, verb: &str) -> bool {
    let resources = rule.resources.as_deref().unwrap_or_default();
    verb == "get" && (resources == ["rollouts"] || resources == ["events"])
}

/// Runs the scenarios of `removals` (they are independent: all at once on the embedded server,
/// two at a time on real control planes, which take a core and 370 MB each); each yields what
/// it took away, whether the scenario failed and whether the server answered the operator with
/// a 403. Every one must have done both.
async fn assert_each_removal_breaks(
    removals: impl IntoIterator<Item = impl std::future::Future<Output = (String, bool, bool)>>,
    how: &str,
) {
    use futures::StreamExt;
    let at_once = match Backend::from_env().expect("backend") {
        Backend::Embedded => usize::MAX,
        Backend::Real => 2,
    };
    let outcomes: Vec<(String, bool, bool)> = futures::stream::iter(removals)
        .buffer_unordered(at_once)
        .collect()
        .await;
    let unneeded: Vec<&String> = outcomes
        .iter()
        .filter(|(_, failed, forbidden)| !(*failed && *forbidden))
        .map(|(what, _, _)| what)
        .collect();
    assert!(
        unneeded.is_empty(),
        "the scenario completes (or fails without a 403){how} without: {unneeded:#?}"
    );
}

fn describe(rule: &PolicyRule) -> String {
    format!(
        "{:?} {:?}",
        rule.api_groups.as_deref().unwrap_or_default(),
        rule.resources.as_deref().unwrap_or_default()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_role_is_sufficient_and_every_verb_of_it_is_needed() {
    let rules = rbac::rules(false);
    let (result, forbidden, output) =
        scenario_with(rules.clone(), Duration::from_secs(30), None).await;
    if let Err(error) = result {
        panic!("the scenario fails with the printed role: {error}\n{output}");
    }
    assert!(
        !forbidden,
        "the operator was refused something with the printed role"
    );
    let (result, forbidden, output) =
        pod_failure_with(rules.clone(), Duration::from_secs(30)).await;
    if let Err(error) = result {
        panic!("the pod-failure scenario fails with the printed role: {error}\n{output}");
    }
    assert!(
        !forbidden,
        "the operator was refused something with the printed role"
    );

    // Take away one verb at a time; the runs are independent, so they run at once. A stage
    // that cannot complete fails after the (short) stage timeout.
    let mut removals = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        for verb in &rule.verbs {
            let mut reduced = rules.clone();
            reduced[index].verbs.retain(|v| v != verb);
            if reduced[index].verbs.is_empty() {
                reduced.remove(index);
            }
            let what = format!("{verb} on {}", describe(rule));
            let read_back = read_back_only(rule, verb);
            let pods = on_pods(rule);
            removals.push(async move {
                let (result, forbidden, _) = if pods {
                    pod_failure_with(reduced, Duration::from_secs(5)).await
                } else {
                    scenario_with(reduced, Duration::from_secs(5), None).await
                };
                // A refused read-back leaves a transition event lost, which the scenario's stages
                // do not wait for: the 403 is what shows the verb is needed.
                (what, result.is_err() || read_back, forbidden)
            });
        }
    }
    assert_each_removal_breaks(removals, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_in_one_namespace_the_printed_role_and_binding_there_are_sufficient() {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    let server = cluster().await.expect("cluster");
    let admin = server.client().expect("admin client");
    // Nothing cluster-wide: the Role and RoleBinding `rollouts rbac --namespace default` prints.
    let operator_client = server
        .service_account_client("default", rbac::SERVICE_ACCOUNT, Vec::new())
        .await
        .expect("service account");
    let (role, binding) = rbac::namespaced("default", "default");
    Api::<Role>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    Api::<RoleBinding>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
    let options = ScenarioOptions {
        stage_timeout: Duration::from_secs(30),
        ..ScenarioOptions::default()
    };
    let mut operator_options = options.operator();
    operator_options.namespaces = vec!["default".into()];
    let operator =
        RunningOperator::start(operator_client.clone(), &operator_options).expect("operator");
    let mut output = Vec::new();
    let result = drive(&admin, &operator, &options, &mut output).await;
    let _ = operator.stop().await;
    if let Err(error) = result {
        panic!(
            "the scenario fails in one namespace with its Role: {error}\n{}",
            String::from_utf8_lossy(&output)
        );
    }
    let refused: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.user == USER && r.status == 403)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(refused.is_empty(), "refused: {refused:?}");
    // The identity holds nothing outside the namespace.
    let elsewhere = Api::<kubeward_examples::rollouts::Rollout>::all(operator_client)
        .list(&Default::default())
        .await;
    assert!(
        matches!(&elsewhere, Err(kube::Error::Api(status)) if status.code == 403),
        "{elsewhere:?}"
    );
}

/// Timings short enough that a lost lease shows within the scenario: renewals every 200 ms,
/// leadership lost after 1.5 s without one.
fn fast_lease() -> LeaseOptions {
    LeaseOptions {
        namespace: "default".into(),
        timings: (
            Duration::from_secs(2),
            Duration::from_millis(1500),
            Duration::from_millis(200),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_leader_election_the_lease_rule_is_sufficient_and_each_of_its_verbs_is_needed() {
    let rules = rbac::rules(true);
    let (result, forbidden, output) =
        scenario_with(rules.clone(), Duration::from_secs(30), Some(fast_lease())).await;
    if let Err(error) = result {
        panic!("the scenario fails with the printed role and leader election: {error}\n{output}");
    }
    assert!(
        !forbidden,
        "the operator was refused something with the printed role"
    );

    let (index, lease) = rules
        .iter()
        .enumerate()
        .find(|(_, r)| r.resources.as_deref() == Some(&["leases".to_owned()][..]))
        .expect("a Lease rule with --leader-election");
    let removals = lease.verbs.iter().map(|verb| {
        let mut reduced = rules.clone();
        reduced[index].verbs.retain(|v| v != verb);
        let verb = verb.clone();
        async move {
            let (result, forbidden, _) =
                scenario_with(reduced, Duration::from_secs(5), Some(fast_lease())).await;
            (format!("{verb} on leases"), result.is_err(), forbidden)
        }
    });
    assert_each_removal_breaks(removals, " with leader election").await;
}

/// The ClusterRoleBinding of the printed role to the operator's service account.
const BINDING_YAML: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kubeward-rollouts
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kubeward-rollouts
subjects:
- kind: ServiceAccount
  name: rollouts
  namespace: default
";

/// `kubectl auth can-i` arguments for each verb of `rule`: `[verb, resource.group,
/// --subresource=…]`.
fn can_i_args(rule: &PolicyRule) -> Vec<Vec<String>> {
    let group = rule.api_groups.as_deref().unwrap_or_default()[0].clone();
    let mut out = Vec::new();
    for resource in rule.resources.as_deref().unwrap_or_default() {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        let qualified = if group.is_empty() {
            resource.to_owned()
        } else {
            format!("{resource}.{group}")
        };
        for verb in &rule.verbs {
            let mut args = vec![verb.clone(), qualified.clone()];
            if !subresource.is_empty() {
                args.push(format!("--subresource={subresource}"));
            }
            out.push(args);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_role_applied_with_kubectl_and_bound_to_the_service_account_runs_the_operator()
{
    let server = cluster().await.expect("cluster");
    let dir = std::env::temp_dir().join(format!(
        "kubeward-rbac-{}-{}",
        std::process::id(),
        server.url().rsplit(':').next().unwrap_or_default()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let printed = Command::new(env!("CARGO_BIN_EXE_rollouts"))
        .arg("rbac")
        .output()
        .expect("run rollouts rbac");
    assert!(printed.status.success(), "rollouts rbac failed");
    let (role_file, binding_file) = (dir.join("role.yaml"), dir.join("binding.yaml"));
    std::fs::write(&role_file, &printed.stdout).expect("write role");
    std::fs::write(&binding_file, BINDING_YAML).expect("write binding");

    let k = Kubectl::new(&kubeconfig);
    let (role, binding) = (role_file.clone(), binding_file.clone());
    tokio::task::spawn_blocking(move || {
        let (ok, applied) = k.run(&[
            "apply",
            "-f",
            role.to_str().unwrap(),
            "-f",
            binding.to_str().unwrap(),
        ]);
        assert!(ok, "{applied}");
        assert!(
            applied.contains("clusterrole.rbac.authorization.k8s.io/kubeward-rollouts created"),
            "{applied}"
        );
        let as_sa = format!("--as={USER}");
        for args in rbac::rules(false).iter().flat_map(can_i_args) {
            let mut full: Vec<&str> = vec!["auth", "can-i"];
            full.extend(args.iter().map(String::as_str));
            full.push(&as_sa);
            let (ok, answer) = k.run(&full);
            assert!(ok && answer.trim() == "yes", "kubectl {full:?}: {answer}");
        }
        // and not more than the role says
        let (ok, answer) = k.run(&[
            "auth",
            "can-i",
            "delete",
            "rollouts.demo.kubeward.dev",
            &as_sa,
        ]);
        assert!(!ok && answer.trim() == "no", "{answer}");
    })
    .await
    .expect("kubectl");

    let operator = server
        .client_for(&Identity::user(USER, &[]))
        .expect("service account client");
    let (result, forbidden, output) =
        scenario_on(&server, operator, Duration::from_secs(30), None).await;
    if let Err(error) = result {
        panic!("the scenario fails as the bound service account: {error}\n{output}");
    }
    assert!(
        !forbidden,
        "the operator was refused something through the applied role"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_rbac_a_role_missing_any_one_printed_rule_breaks_the_scenario() {
    let rules = rbac::rules(false);
    let removals = (0..rules.len()).map(|index| {
        let mut role = rbac::cluster_role(false);
        let rules = role.rules.as_mut().expect("rules");
        let removed = describe(&rules.remove(index));
        async move {
            let server = cluster().await.expect("cluster");
            let admin = server.client().expect("admin");
            Api::<ClusterRole>::all(admin.clone())
                .create(&PostParams::default(), &role)
                .await
                .expect("role");
            let binding: ClusterRoleBinding =
                serde_json::from_value(serde_json::json!({
                    "metadata": {"name": "kubeward-rollouts"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": rbac::ROLE_NAME},
                    "subjects": [{"kind": "ServiceAccount", "name": "rollouts", "namespace": "default"}],
                }))
                .expect("binding");
            Api::<ClusterRoleBinding>::all(admin)
                .create(&PostParams::default(), &binding)
                .await
                .expect("binding");
            let operator = server.client_for(&Identity::user(USER, &[])).expect("service account client");
            let (result, forbidden, _) =
                scenario_on(&server, operator, Duration::from_secs(5), None).await;
            (removed, result.is_err(), forbidden)
        }
    });
    assert_each_removal_breaks(removals, " through RBAC").await;
}
