//! The caches of owned and watched kinds, through controllers run as the identity their
//! generated RBAC grants: a child deleted while its watch relists is restored; a cluster-scoped
//! owner reads, lists and prunes its children in their namespaces, from the cache (no LIST per
//! pass); a related object is read from the cache with no verb beyond `list` and `watch`, and
//! fixing it ends a terminal hold; a child another owner controls is neither taken nor deleted;
//! a relation whose kind cannot be listed keeps the controller not ready, naming that watch; a
//! child of a kind owned whole is read from the cache.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kubeward::children::ChildError;
use kubeward::controller::{Controller, ControllerState};
use kubeward::{Action, Pass};
use kubeward_testing::{Fault, FaultAction};
use kubeward_tests::{
    Running, Widget, WidgetSpec, create_widget, events_about, eventually, run_as,
    server_with_widgets, service_account_user, settles_at,
};

/// The passes that ran, in order: the object's name and the pass's triggers.
#[derive(Debug, Default, Clone)]
struct Passes(Arc<Mutex<Vec<(String, String)>>>);

impl Passes {
    fn note<K>(&self, name: String, pass: &Pass<K>) {
        let triggers: Vec<String> = pass.triggers().iter().map(ToString::to_string).collect();
        self.0.lock().unwrap().push((name, triggers.join(", ")));
    }

    fn count(&self, name: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(n, _)| n == name)
            .count()
    }

    /// The triggers of each pass of `name`, in order.
    fn triggers(&self, name: &str) -> Vec<String> {
        let passes = self.0.lock().unwrap();
        passes
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, triggers)| triggers.clone())
            .collect()
    }
}

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
enum CacheError {
    #[error("could not write a child")]
    Child(#[from] ChildError),
    #[terminal]
    #[error("ConfigMap {0}: replicas {1:?} is not a number")]
    NotANumber(String, String),
}

fn config_map(name: &str, namespace: Option<&str>, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: namespace.map(str::to_owned),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}

/// Notes the pass in `passes` and applies the widget's child, the ConfigMap `<name>-child`.
async fn apply_own_child(
    passes: &Passes,
    widget: &Widget,
    pass: &mut Pass<Widget>,
) -> Result<Action, CacheError> {
    let name = widget.name_any();
    passes.note(name.clone(), pass);
    let child = config_map(&format!("{name}-child"), None, &[("owner", &name)]);
    pass.apply_child(&child).await?;
    Ok(Action::await_change())
}

/// Creates the widget `w`; once its child is stored and its passes settled at one, the API of
/// its namespace's ConfigMaps.
async fn widget_with_its_child(admin: &kube::Client, passes: &Passes) -> Api<ConfigMap> {
    create_widget(admin, "w", WidgetSpec::default()).await;
    let children: Api<ConfigMap> = Api::namespaced(admin.clone(), "default");
    eventually("the child", || async {
        children.get_opt("w-child").await.unwrap().is_some()
    })
    .await;
    settles_at("passes of w", || passes.count("w"), 1).await;
    children
}

/// Each Widget owns the ConfigMap `<name>-child`.
struct Keeper {
    passes: Passes,
}

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/keeper",
    owns(ConfigMap),
    kstatus = false,
)]
impl Keeper {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, CacheError> {
        apply_own_child(&self.passes, widget, pass).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_deleted_while_its_watch_relists_is_restored() {
    let (server, admin) = server_with_widgets().await;
    let passes = Passes::default();
    let keeper = Keeper {
        passes: passes.clone(),
    };
    let running = run_as(&server, "keeper", keeper, |c| c).await;
    let children = widget_with_its_child(&admin, &passes).await;

    // Every watch ends with 410, and the child is deleted before any relist can see it: only
    // the relist shows it gone (no DELETED event).
    let deleted = server
        .relist_with_deletes(&[ObjectRef::<ConfigMap>::new("w-child").within("default")])
        .await
        .expect("the child is deleted");
    assert_eq!(deleted.len(), 1);
    eventually("the child restored after the relist", || async {
        children.get_opt("w-child").await.unwrap().is_some()
    })
    .await;
    settles_at("passes of w", || passes.count("w"), 2).await;
    assert_eq!(
        passes.triggers("w"),
        ["changed", "child ConfigMap default/w-child"],
        "the pass that restored it says why it ran"
    );
    running.stop().await;
}

/// A child write the API server never answers fails the pass after the controller's write
/// timeout, with the reason in its failure event, and the pass is retried: once the server
/// answers again, the child is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_child_write_fails_the_pass_after_the_write_timeout_and_is_retried() {
    let (server, admin) = server_with_widgets().await;
    server.faults().add(
        Fault::new(FaultAction::Hang)
            .method(Method::PATCH)
            .resource("", "configmaps")
            .user(&service_account_user("keeper"))
            .times(1),
    );
    let passes = Passes::default();
    let keeper = Keeper {
        passes: passes.clone(),
    };
    let running = run_as(&server, "keeper", keeper, |c| {
        c.with_status_write_timeout(Duration::from_millis(500))
    })
    .await;
    create_widget(&admin, "w", WidgetSpec::default()).await;
    let note = failure_note(&admin, "w", "did not answer").await;
    assert!(
        note.contains("the API server did not answer within 500ms"),
        "{note}"
    );
    let children: Api<ConfigMap> = Api::namespaced(admin.clone(), "default");
    eventually("the child stored by the retry", || async {
        children.get_opt("w-child").await.unwrap().is_some()
    })
    .await;
    assert_eq!(passes.triggers("w")[..2], ["changed", "retry"]);
    running.stop().await;
}

/// The annotation that lists the quotas a tenant wants (`a,b`: ConfigMaps `quota-a`, `quota-b`
/// in the tenant's namespace).
const WANTED: &str = "test.kubeward.dev/quotas";

/// What a pass of a tenant read: the names of its cached children, and the namespace of the
/// child `quota-a` it got.
type Read = (Vec<String>, Option<String>);

/// What the last pass of a tenant read.
#[derive(Debug, Default, Clone)]
struct Reads(Arc<Mutex<Option<Read>>>);

/// A cluster-scoped owner (a Namespace labelled `tenant`) of namespaced quotas.
struct Tenants {
    reads: Reads,
}

#[kubeward::reconciler(
    resource = Namespace,
    controller = "test.kubeward.dev/tenants",
    owns(ConfigMap),
    kstatus = false,
)]
impl Tenants {
    async fn apply(
        &self,
        tenant: &Namespace,
        pass: &mut Pass<Namespace>,
    ) -> Result<Action, CacheError> {
        let namespace = tenant.name_any();
        let wanted: Vec<String> = tenant
            .annotations()
            .get(WANTED)
            .map(|list| list.split(',').map(|q| format!("quota-{q}")).collect())
            .unwrap_or_default();
        for name in &wanted {
            pass.apply_child(&config_map(name, Some(&namespace), &[("pods", "10")]))
                .await?;
        }
        let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
        pass.prune_children::<ConfigMap>(&wanted).await?;
        let mut children: Vec<String> = pass
            .children::<ConfigMap>()?
            .iter()
            .map(|c| c.metadata.name.clone().unwrap_or_default())
            .collect();
        children.sort();
        let first = pass.get_child::<ConfigMap>("quota-a").await?;
        let first = first.and_then(|q| q.metadata.namespace);
        *self.reads.0.lock().unwrap() = Some((children, first));
        Ok(Action::await_change())
    }
}

async fn quota_names(client: &kube::Client) -> Vec<String> {
    let quotas: Api<ConfigMap> = Api::namespaced(client.clone(), "tenant-a");
    let mut names: Vec<String> = quotas
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(ResourceExt::name_any)
        .filter(|n| n.starts_with("quota-"))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_scoped_owner_reads_and_prunes_its_children_in_their_namespace_from_the_cache() {
    let (server, admin) = server_with_widgets().await;
    let reads = Reads::default();
    let tenants = Tenants {
        reads: reads.clone(),
    };
    let running = run_as(&server, "tenants", tenants, |c| {
        c.with_watcher_config(watcher::Config::default().labels("tenant"))
    })
    .await;
    let tenant = Namespace {
        metadata: ObjectMeta {
            name: Some("tenant-a".into()),
            labels: Some(BTreeMap::from([("tenant".to_owned(), "yes".to_owned())])),
            annotations: Some(BTreeMap::from([(WANTED.to_owned(), "a,b".to_owned())])),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    namespaces
        .create(&PostParams::default(), &tenant)
        .await
        .expect("namespace");
    eventually("both quotas", || async {
        quota_names(&admin).await == ["quota-a", "quota-b"]
    })
    .await;
    let user = service_account_user("tenants");
    let lists_of_config_maps = || {
        server
            .requests()
            .iter()
            .filter(|r| {
                r.user == user
                    && r.method == Method::GET
                    && r.path.ends_with("/configmaps")
                    && !r.is_watch()
            })
            .count()
    };
    let lists_before = lists_of_config_maps();
    let fewer = serde_json::json!({ "metadata": { "annotations": { WANTED: "a" } } });
    namespaces
        .patch("tenant-a", &PatchParams::default(), &Patch::Merge(&fewer))
        .await
        .expect("annotate");
    eventually("quota-b pruned", || async {
        quota_names(&admin).await == ["quota-a"]
    })
    .await;
    eventually("the pass's reads", || async {
        reads.0.lock().unwrap().clone()
            == Some((vec!["quota-a".to_owned()], Some("tenant-a".to_owned())))
    })
    .await;
    assert_eq!(
        lists_of_config_maps(),
        lists_before,
        "pruning reads the cache, not a LIST per pass"
    );
    running.stop().await;
}

/// The widgets in a ConfigMap's namespace.
fn widgets_beside(config: &ConfigMap, widgets: &Store<Widget>) -> Vec<ObjectRef<Widget>> {
    widgets
        .state()
        .iter()
        .filter(|w| w.namespace() == config.namespace())
        .map(|w| ObjectRef::from_obj(&**w))
        .collect()
}

/// Reads the replicas of its widget from the watched ConfigMap `cfg`; a value that is not a
/// number is a terminal error.
struct Scaler {
    passes: Passes,
    replicas: Arc<Mutex<Option<u32>>>,
}

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/scaler",
    watches(ConfigMap, map = widgets_beside),
    kstatus = false,
)]
impl Scaler {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, CacheError> {
        self.passes.note(widget.name_any(), pass);
        let config = pass.related::<ConfigMap>("cfg")?;
        let value = config
            .and_then(|c| c.data?.get("replicas").cloned())
            .unwrap_or_default();
        let replicas = value
            .parse()
            .map_err(|_| CacheError::NotANumber("cfg".into(), value))?;
        *self.replicas.lock().unwrap() = Some(replicas);
        Ok(Action::await_change())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixing_the_watched_object_a_terminal_error_was_about_runs_the_object_again() {
    let (server, admin) = server_with_widgets().await;
    let configs: Api<ConfigMap> = Api::namespaced(admin.clone(), "default");
    configs
        .create(
            &PostParams::default(),
            &config_map("cfg", None, &[("replicas", "three")]),
        )
        .await
        .expect("config");
    let scaler = Scaler {
        passes: Passes::default(),
        replicas: Arc::default(),
    };
    let (passes, replicas) = (scaler.passes.clone(), scaler.replicas.clone());
    let running = run_as(&server, "scaler", scaler, |c| c).await;
    create_widget(&admin, "w", WidgetSpec::default()).await;
    let failed = || async {
        events_about(&admin, "w").await.into_iter().any(|e| {
            e.note
                .unwrap_or_default()
                .contains("ConfigMap cfg: replicas \"three\" is not a number")
        })
    };
    eventually("the terminal failure's event", failed).await;
    // (The ConfigMap watch's first list may name `w` once more: that pass fails the same way.)

    let fix = serde_json::json!({ "data": { "replicas": "3" } });
    configs
        .patch("cfg", &PatchParams::default(), &Patch::Merge(&fix))
        .await
        .expect("fix");
    eventually("the replicas read from the fixed ConfigMap", || async {
        *replicas.lock().unwrap() == Some(3)
    })
    .await;
    assert_eq!(
        passes.triggers("w").last().map(String::as_str),
        Some("related ConfigMap default/cfg"),
        "{:?}",
        passes.triggers("w")
    );
    // Read from the cache: the generated RBAC grants only list and watch on ConfigMaps, and
    // nothing was refused.
    let user = service_account_user("scaler");
    let refused: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.user == user && r.status == 403)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(refused, Vec::<String>::new());
    running.stop().await;
}

/// Owns its ConfigMap `<name>-child` and watches every ConfigMap beside it (a kind both owned and
/// watched).
struct Watchful {
    passes: Passes,
}

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/watchful",
    owns(ConfigMap),
    watches(ConfigMap, map = widgets_beside),
    kstatus = false,
)]
impl Watchful {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, CacheError> {
        apply_own_child(&self.passes, widget, pass).await
    }
}

/// The controller's own child write starts no pass through the watch of the same kind either;
/// someone else's change of a ConfigMap beside it starts one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_both_owned_and_watched_is_not_triggered_by_the_controllers_own_writes() {
    let (server, admin) = server_with_widgets().await;
    let passes = Passes::default();
    let watchful = Watchful {
        passes: passes.clone(),
    };
    let running = run_as(&server, "watchful", watchful, |c| c).await;
    let children = widget_with_its_child(&admin, &passes).await;
    children
        .create(&PostParams::default(), &config_map("beside", None, &[]))
        .await
        .expect("another ConfigMap");
    settles_at("passes of w", || passes.count("w"), 2).await;
    assert_eq!(
        passes.triggers("w"),
        ["changed", "related ConfigMap default/beside"]
    );
    running.stop().await;
}

/// What a pass of the [`Reader`] read of its child: the `note` before applying it, the `owner`
/// after.
type ReadBack = (Option<String>, Option<String>);

/// Owns its ConfigMap `<name>-child` whole; notes what each pass reads of it.
#[derive(Default)]
struct Reader {
    passes: Passes,
    read: Arc<Mutex<Vec<ReadBack>>>,
}

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/reader",
    owns(whole(ConfigMap)),
    kstatus = false,
)]
impl Reader {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, CacheError> {
        let name = format!("{}-child", widget.name_any());
        let datum = |child: Option<ConfigMap>, key: &str| child?.data?.get(key).cloned();
        let before = datum(pass.get_child::<ConfigMap>(&name).await?, "note");
        let action = apply_own_child(&self.passes, widget, pass).await?;
        let after = datum(pass.get_child::<ConfigMap>(&name).await?, "owner");
        self.read.lock().unwrap().push((before, after));
        Ok(action)
    }
}

/// A kind owned whole is read from the cache: the pass sees its own write at once and someone
/// else's change once its watch event arrives, and the controller never GETs a child.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_of_a_kind_owned_whole_is_read_from_the_cache() {
    let (server, admin) = server_with_widgets().await;
    let reader = Reader::default();
    let (passes, read) = (reader.passes.clone(), reader.read.clone());
    let running = run_as(&server, "reader", reader, |c| c).await;
    let children = widget_with_its_child(&admin, &passes).await;
    let note = serde_json::json!({"data": {"note": "hello"}});
    children
        .patch("w-child", &PatchParams::default(), &Patch::Merge(&note))
        .await
        .expect("a user's change of the child");
    settles_at("passes of w", || passes.count("w"), 2).await;
    let w = || Some("w".to_owned());
    assert_eq!(
        *read.lock().unwrap(),
        [(None, w()), (Some("hello".to_owned()), w())],
        "no child at first, then the user's note; the pass's own write read back at once"
    );
    let user = service_account_user("reader");
    let gets: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.user == user && r.method == Method::GET && r.path.contains("/configmaps/"))
        .map(|r| r.path)
        .collect();
    assert!(gets.is_empty(), "no GET of a child: {gets:?}");
    running.stop().await;
}

/// Every widget wants the one ConfigMap `shared`; a widget annotated `delete` deletes it
/// instead. The widgets whose pass succeeded are noted.
#[derive(Default)]
struct Sharers {
    done: Passes,
}

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/sharers",
    owns(ConfigMap),
    kstatus = false,
)]
impl Sharers {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, CacheError> {
        if widget.annotations().contains_key("delete") {
            pass.delete_child::<ConfigMap>("shared").await?;
        } else {
            let name = widget.name_any();
            pass.apply_child(&config_map("shared", None, &[("owner", &name)]))
                .await?;
        }
        self.done.note(widget.name_any(), pass);
        Ok(Action::await_change())
    }
}

/// The note of the failure event about `widget` that contains `text`, once there is one.
async fn failure_note(client: &kube::Client, widget: &str, text: &str) -> String {
    let find = || async {
        events_about(client, widget)
            .await
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("ReconcileFailed"))
            .filter_map(|e| e.note)
            .find(|note| note.contains(text))
    };
    eventually(
        &format!("a failure event of {widget} saying {text:?}"),
        || async { find().await.is_some() },
    )
    .await;
    find().await.expect("the note")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_another_owner_controls_is_neither_taken_nor_deleted() {
    let (server, admin) = server_with_widgets().await;
    let sharers = Sharers::default();
    let done = sharers.done.clone();
    let running = run_as(&server, "sharers", sharers, |c| c).await;
    let a = create_widget(&admin, "a", WidgetSpec::default()).await;
    let configs: Api<ConfigMap> = Api::namespaced(admin.clone(), "default");
    // a's pass applied the child and knows it (as controller-runtime's cache would): a pass of
    // another owner racing it within that moment could not know.
    eventually("a's pass", || async { done.count("a") > 0 }).await;

    create_widget(&admin, "b", WidgetSpec::default()).await;
    let note = failure_note(&admin, "b", "already owned").await;
    assert!(
        note.contains("Object default/shared is already owned by another Widget controller a"),
        "{note}"
    );

    let mut c = Widget::new("c", WidgetSpec::default());
    c.metadata.annotations = Some(BTreeMap::from([("delete".to_owned(), String::new())]));
    Api::<Widget>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &c)
        .await
        .expect("c");
    let note = failure_note(&admin, "c", "not a child").await;
    assert!(
        note.contains(
            "ConfigMap default/shared is not a child of this object, so it is not deleted: its controller is Widget a"
        ),
        "{note}"
    );

    let shared = configs.get("shared").await.expect("still there");
    let controller = shared
        .owner_references()
        .iter()
        .find(|r| r.controller == Some(true))
        .cloned();
    assert_eq!(controller.map(|r| r.uid), a.uid(), "still a's");
    assert_eq!(
        shared.data.and_then(|d| d.get("owner").cloned()).as_deref(),
        Some("a")
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relation_whose_kind_cannot_be_listed_keeps_the_controller_not_ready_naming_its_watch() {
    let (server, _admin) = server_with_widgets().await;
    // The generated rules but those of the owned kind: its list answers 403.
    let rules: Vec<_> = kubeward::rbac::rules::<Sharers>(false)
        .into_iter()
        .filter(|r| r.resources.as_deref() != Some(&["configmaps".to_owned()][..]))
        .collect();
    let client = server
        .service_account_client("default", "blind", rules)
        .await
        .expect("the identity");
    let controller =
        Controller::new(Sharers::default(), client).with_sync_timeout(Duration::from_millis(500));
    let mut readiness = controller.readiness();
    let running = Running::start(controller);
    let state = tokio::time::timeout(
        Duration::from_secs(60),
        readiness.wait_for(|s| matches!(s, ControllerState::SyncTimedOut { .. })),
    )
    .await
    .expect("the sync timeout is reported")
    .expect("the controller runs")
    .clone();
    let said = state.to_string();
    assert!(
        said.starts_with(
            "test.kubeward.dev/sharers: the watch of configmaps (owned) has not listed its objects within 500ms: "
        ),
        "{said}"
    );
    assert!(said.contains("403"), "{said}");
    assert!(!state.is_ready());
    running.stop().await;
}

/// How many times [`ghost`] ran.
static GHOST_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Names a widget that does not exist for every ConfigMap.
fn ghost(_: &ConfigMap, _: &Store<Widget>) -> Vec<ObjectRef<Widget>> {
    GHOST_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    vec![ObjectRef::new("ghost").within("default")]
}

/// Watches ConfigMaps for a widget that is never there.
struct Haunted;

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/haunted",
    watches(ConfigMap, map = ghost),
    kstatus = false,
)]
impl Haunted {
    async fn apply(&self, _: &Widget, _: &mut Pass<Widget>) -> Result<Action, CacheError> {
        Ok(Action::await_change())
    }
}

/// A map function naming an object the controller does not cache starts no pass (kube-runtime
/// drops it), and the object is not counted as waiting for one: the queue depth stays 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trigger_for_an_object_not_cached_is_not_counted_as_queued() {
    let (server, admin) = server_with_widgets().await;
    let registry = prometheus::Registry::new();
    let running = run_as(&server, "haunted", Haunted, |c| {
        c.register_metrics(&registry).expect("metrics")
    })
    .await;
    Api::<ConfigMap>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &config_map("haunting", None, &[]))
        .await
        .expect("config");
    eventually("the map function ran", || async {
        GHOST_CALLS.load(std::sync::atomic::Ordering::SeqCst) > 0
    })
    .await;
    let depth = || {
        kubeward_testing::metric_value(
            &registry,
            "kubeward_controller_queue_depth",
            &[("controller", "test.kubeward.dev/haunted")],
        )
        .map_or(usize::MAX, |depth| depth as usize)
    };
    settles_at("the queue depth", depth, 0).await;
    running.stop().await;
}
