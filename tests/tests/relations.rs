//! Owned children and watched related objects (`owns(..)`, `watches(..)`), through a controller
//! run as the identity its generated RBAC grants: a child's create, change and delete each start
//! exactly one pass of its owner, and the pass restores the child; the controller's own child
//! writes start none; a related object runs the passes its map function returns; a
//! cluster-scoped owner is found for its namespaced child; a child of an undeclared kind fails
//! the pass with the fix in the failure event.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use kubeward::children::{CONTROLLER_LABEL, ChildError};
use kubeward::controller::Controller;
use kubeward::{Action, Pass};
use kubeward_testing::Cluster;
use kubeward_tests::{
    Running, Widget, WidgetSpec, create_widget, eventually, namespace, run_as, server_with_widgets,
    settles_at,
};

const PARENTS: &str = "test.kubeward.dev/parents";

/// The passes started, by object name, in order.
#[derive(Debug, Default, Clone)]
struct Started(Arc<Mutex<Vec<String>>>);

impl Started {
    fn note(&self, name: String) {
        self.0.lock().unwrap().push(name);
    }

    fn count(&self, name: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|n| *n == name).count()
    }
}

/// Every Widget owns the ConfigMap `<name>-child` holding `{owner: <name>}`; Secrets labelled
/// `widget=<name>` (or `widget=all`) concern the widgets they name.
struct Parents {
    started: Started,
}

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
enum ParentError {
    #[error("could not write the child")]
    Child(#[from] ChildError),
}

fn child_name(widget: &str) -> String {
    format!("{widget}-child")
}

fn desired_child(widget: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(child_name(widget)),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("owner".to_owned(), widget.to_owned())])),
        ..ConfigMap::default()
    }
}

/// The widgets a Secret's `widget` label names: one by name, or every cached one for `all`.
fn secret_users(secret: &Secret, widgets: &Store<Widget>) -> Vec<ObjectRef<Widget>> {
    match secret.labels().get("widget").map(String::as_str) {
        Some("all") => widgets
            .state()
            .iter()
            .map(|w| ObjectRef::from_obj(&**w))
            .collect(),
        Some(name) => vec![ObjectRef::new(name).within(&secret.namespace().unwrap_or_default())],
        None => Vec::new(),
    }
}

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/parents",
    owns(ConfigMap),
    watches(Secret, map = secret_users, labels = "widget", fields = "type=Opaque"),
    kstatus = false,
)]
impl Parents {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, ParentError> {
        let name = widget.name_any();
        self.started.note(name.clone());
        pass.apply_child(&desired_child(&name)).await?;
        Ok(Action::await_change())
    }
}

/// The Parents controller run as the service account its generated RBAC is granted to.
async fn start_parents(server: &Cluster, started: &Started) -> Running {
    let parents = Parents {
        started: started.clone(),
    };
    run_as(server, "parents", parents, |c| c).await
}

fn config_maps(client: &kube::Client) -> Api<ConfigMap> {
    Api::namespaced(client.clone(), "default")
}

/// Waits until the ConfigMap `name` is stored in `api`'s namespace (`what` names it in the
/// failure).
async fn stored(api: &Api<ConfigMap>, name: &str, what: &str) {
    eventually(what, || async {
        api.get_opt(name).await.expect("get").is_some()
    })
    .await;
}

/// Waits until the child of `widget` is stored as desired; returns it.
async fn child_restored(client: &kube::Client, widget: &str) -> ConfigMap {
    let api = config_maps(client);
    let name = child_name(widget);
    let desired = desired_child(widget).data;
    eventually(&format!("{name} as desired"), || async {
        api.get_opt(&name)
            .await
            .expect("get")
            .is_some_and(|c| c.data == desired)
    })
    .await;
    api.get(&name).await.expect("get")
}

/// Waits until `widget` has `passes` passes and then none more for a while.
async fn passes_settle_at(started: &Started, widget: &str, passes: usize) {
    let what = format!("passes of {widget}");
    settles_at(&what, || started.count(widget), passes).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_created_changed_or_deleted_starts_exactly_one_owner_pass() {
    let (server, admin) = server_with_widgets().await;
    let started = Started::default();
    let running = start_parents(&server, &started).await;
    let widget = create_widget(&admin, "w", WidgetSpec::default()).await;

    // The first pass applies the child: owned by the widget, labelled, under the controller's
    // field manager. Its own write starts no pass.
    let child = child_restored(&admin, "w").await;
    passes_settle_at(&started, "w", 1).await;
    let owner = child.owner_references()[0].clone();
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.controller,
            owner.block_owner_deletion
        ),
        ("Widget", "w", Some(true), Some(true))
    );
    assert_eq!(Some(owner.uid), widget.uid());
    assert_eq!(
        child.labels().get(CONTROLLER_LABEL).map(String::as_str),
        Some("test.kubeward.dev.parents")
    );
    let managers: Vec<_> = child
        .managed_fields()
        .iter()
        .filter_map(|m| m.manager.as_deref())
        .collect();
    assert_eq!(managers, [PARENTS]);

    // Deleted: one pass, which restores it.
    config_maps(&admin)
        .delete(&child_name("w"), &DeleteParams::default())
        .await
        .expect("delete");
    let restored = child_restored(&admin, "w").await;
    assert_ne!(restored.uid(), child.uid(), "a new child");
    passes_settle_at(&started, "w", 2).await;

    // Changed: one pass, which sets the field back.
    let edit = serde_json::json!({ "data": { "owner": "someone-else" } });
    config_maps(&admin)
        .patch(
            &child_name("w"),
            &PatchParams::default(),
            &Patch::Merge(&edit),
        )
        .await
        .expect("edit");
    child_restored(&admin, "w").await;
    passes_settle_at(&started, "w", 3).await;

    // Its controller label taken away: out of the watch (narrowed to the label), so a delete
    // for the controller; one pass, which labels it again.
    let unlabel = serde_json::json!({ "metadata": { "labels": { CONTROLLER_LABEL: null } } });
    config_maps(&admin)
        .patch(
            &child_name("w"),
            &PatchParams::default(),
            &Patch::Merge(&unlabel),
        )
        .await
        .expect("unlabel");
    eventually("the child labelled again", || async {
        config_maps(&admin)
            .get(&child_name("w"))
            .await
            .is_ok_and(|c| c.labels().contains_key(CONTROLLER_LABEL))
    })
    .await;
    passes_settle_at(&started, "w", 4).await;

    // Created by someone else with the widget as its controller and the controller's label: one
    // pass.
    let controller = widget.controller_owner_ref(&()).expect("owner reference");
    let label = (CONTROLLER_LABEL, "test.kubeward.dev.parents");
    create_config_map(&admin, "adopted", Some(controller.clone()), Some(label)).await;
    passes_settle_at(&started, "w", 5).await;

    // Without the label, or not the widget's child (no controller reference to it): none —
    // the first is outside the watch, the second has no owner to run.
    create_config_map(&admin, "unlabelled", Some(controller.clone()), None).await;
    let reference = OwnerReference {
        controller: Some(false),
        ..controller
    };
    create_config_map(&admin, "stranger", Some(reference), Some(label)).await;
    passes_settle_at(&started, "w", 5).await;
    running.stop().await;
}

/// Creates the ConfigMap `name` in `default` with `owner` and the label `label` (key, value).
async fn create_config_map(
    client: &kube::Client,
    name: &str,
    owner: Option<OwnerReference>,
    label: Option<(&str, &str)>,
) {
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: owner.map(|o| vec![o]),
            labels: label.map(|(k, v)| BTreeMap::from([(k.to_owned(), v.to_owned())])),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    config_maps(client)
        .create(&PostParams::default(), &config_map)
        .await
        .expect("create");
}

fn secret(name: &str, widget: Option<&str>) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: widget.map(|w| BTreeMap::from([("widget".to_owned(), w.to_owned())])),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_related_object_runs_the_passes_its_map_function_returns() {
    let (server, admin) = server_with_widgets().await;
    let started = Started::default();
    let running = start_parents(&server, &started).await;
    for name in ["a", "b"] {
        create_widget(&admin, name, WidgetSpec::default()).await;
        child_restored(&admin, name).await;
    }
    passes_settle_at(&started, "a", 1).await;
    passes_settle_at(&started, "b", 1).await;
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), "default");

    // `widget=all` fans out to both.
    secrets
        .create(&PostParams::default(), &secret("shared", Some("all")))
        .await
        .expect("create");
    passes_settle_at(&started, "a", 2).await;
    passes_settle_at(&started, "b", 2).await;

    // `widget=a` concerns a alone; its delete too.
    secrets
        .create(&PostParams::default(), &secret("only-a", Some("a")))
        .await
        .expect("create");
    passes_settle_at(&started, "a", 3).await;
    secrets
        .delete("only-a", &DeleteParams::default())
        .await
        .expect("delete");
    passes_settle_at(&started, "a", 4).await;
    assert_eq!(started.count("b"), 2);

    // Outside the watch's label selector, or its field selector (another type): nothing.
    secrets
        .create(&PostParams::default(), &secret("unlabelled", None))
        .await
        .expect("create");
    let mut other_type = secret("other-type", Some("all"));
    other_type.type_ = Some("example.com/other".into());
    secrets
        .create(&PostParams::default(), &other_type)
        .await
        .expect("create");
    passes_settle_at(&started, "a", 4).await;
    assert_eq!(started.count("b"), 2);
    running.stop().await;
}

/// Stores the Role and RoleBinding of the generated rules in `namespace`, bound to the service
/// account `parents` of `service_account_namespace`.
async fn bind_generated_role(
    admin: &kube::Client,
    namespace: &str,
    service_account_namespace: &str,
) {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    let (role, binding) = kubeward::rbac::namespaced(
        "parents",
        namespace,
        Parents::rbac_rules(false),
        service_account_namespace,
        "parents",
    );
    Api::<Role>::namespaced(admin.clone(), namespace)
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    Api::<RoleBinding>::namespaced(admin.clone(), namespace)
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
}

/// The Parents controller on `client`, scoped by `scope` (a namespace, or a list).
fn parents_in(
    client: &kube::Client,
    started: &Started,
    scope: impl FnOnce(Controller<Parents>) -> Controller<Parents>,
) -> Running {
    let parents = Parents {
        started: started.clone(),
    };
    let controller =
        Controller::new(parents, client.clone()).with_shutdown_grace(Duration::from_millis(200));
    Running::start(scope(controller))
}

/// Creates a widget in each of `namespaces`, named after its namespace.
async fn widget_in_each(admin: &kube::Client, namespaces: &[&str]) {
    for namespace in namespaces {
        let mut widget = Widget::new(namespace, WidgetSpec::default());
        widget.metadata.namespace = Some((*namespace).into());
        Api::<Widget>::namespaced(admin.clone(), namespace)
            .create(&PostParams::default(), &widget)
            .await
            .expect("widget");
    }
}

/// How many of the requests of `user` the server refused (403).
fn refused(server: &Cluster, user: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.user == user && r.status == 403)
        .count()
}

/// Asserts that the controller, `user`, was refused nothing, and that its `client` may not list
/// widgets in the whole cluster (a 403): it holds nothing outside its namespaces.
async fn refused_only_outside(server: &Cluster, client: kube::Client, user: &str) {
    assert_eq!(
        refused(server, user),
        0,
        "the controller was refused something"
    );
    let everywhere = Api::<Widget>::all(client).list(&Default::default()).await;
    assert!(
        matches!(&everywhere, Err(kube::Error::Api(status)) if status.code == 403),
        "{everywhere:?}"
    );
    assert_eq!(refused(server, user), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_one_namespace_the_controller_and_its_relations_need_only_a_role_there() {
    let (server, admin) = server_with_widgets().await;
    for name in ["team-a", "team-b"] {
        namespace(&admin, name).await;
    }
    // The service account holds nothing cluster-wide: only the generated rules as a Role and
    // RoleBinding in team-a.
    let client = server
        .service_account_client("team-a", "parents", Vec::new())
        .await
        .expect("service account");
    bind_generated_role(&admin, "team-a", "team-a").await;
    let started = Started::default();
    let running = parents_in(&client, &started, |c| c.in_namespace("team-a"));
    widget_in_each(&admin, &["team-a", "team-b"]).await;
    let children: Api<ConfigMap> = Api::namespaced(admin.clone(), "team-a");
    stored(&children, &child_name("team-a"), "the child in team-a").await;
    passes_settle_at(&started, "team-a", 1).await;
    assert_eq!(started.count("team-b"), 0, "a widget outside the namespace");
    // The owned and the watched kinds are watched in the namespace.
    children
        .delete(&child_name("team-a"), &DeleteParams::default())
        .await
        .expect("delete");
    stored(&children, &child_name("team-a"), "the child restored").await;
    passes_settle_at(&started, "team-a", 2).await;
    let mut shared = secret("shared", Some("all"));
    shared.metadata.namespace = Some("team-a".into());
    Api::<Secret>::namespaced(admin.clone(), "team-a")
        .create(&PostParams::default(), &shared)
        .await
        .expect("secret");
    passes_settle_at(&started, "team-a", 3).await;
    running.stop().await;

    refused_only_outside(&server, client, "system:serviceaccount:team-a:parents").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_list_of_namespaces_each_is_watched_with_a_role_there_and_a_relist_keeps_the_others() {
    let (server, admin) = server_with_widgets().await;
    for name in ["operators", "team-a", "team-b", "team-c"] {
        namespace(&admin, name).await;
    }
    // The operator runs in `operators`; it holds the generated rules as a Role in team-a and
    // team-b, and nothing else.
    let client = server
        .service_account_client("operators", "parents", Vec::new())
        .await
        .expect("service account");
    for team in ["team-a", "team-b"] {
        bind_generated_role(&admin, team, "operators").await;
    }
    let started = Started::default();
    let running = parents_in(&client, &started, |c| c.in_namespaces(["team-a", "team-b"]));
    widget_in_each(&admin, &["team-a", "team-b", "team-c"]).await;
    for team in ["team-a", "team-b"] {
        let children: Api<ConfigMap> = Api::namespaced(admin.clone(), team);
        stored(&children, &child_name(team), "the child").await;
        passes_settle_at(&started, team, 1).await;
    }
    assert_eq!(
        started.count("team-c"),
        0,
        "a widget outside the namespaces"
    );
    assert!(
        Api::<ConfigMap>::namespaced(admin.clone(), "team-c")
            .get_opt(&child_name("team-c"))
            .await
            .expect("get")
            .is_none()
    );

    // Each namespace's children are watched: a child deleted in team-b is restored.
    let children_b: Api<ConfigMap> = Api::namespaced(admin.clone(), "team-b");
    children_b
        .delete(&child_name("team-b"), &DeleteParams::default())
        .await
        .expect("delete");
    stored(&children_b, &child_name("team-b"), "the child restored").await;
    passes_settle_at(&started, "team-b", 2).await;
    assert_eq!(started.count("team-a"), 1);

    // Every watch expires and relists, one namespace at a time: no object starts a pass, and
    // the cache still holds both namespaces' widgets (a Secret naming `all` maps to both).
    let widget_lists = || {
        server
            .requests()
            .iter()
            .filter(|r| r.user == "system:serviceaccount:operators:parents")
            .filter(|r| r.method == "GET" && !r.is_watch() && r.path.ends_with("/widgets"))
            .count()
    };
    let lists = widget_lists();
    server.expire_watches();
    eventually("both namespaces relisted", || async {
        widget_lists() >= lists + 2
    })
    .await;
    let mut shared = secret("shared", Some("all"));
    shared.metadata.namespace = Some("team-a".into());
    eventually("the secret created after the relists", || async {
        Api::<Secret>::namespaced(admin.clone(), "team-a")
            .create(&PostParams::default(), &shared)
            .await
            .is_ok()
    })
    .await;
    passes_settle_at(&started, "team-a", 2).await;
    passes_settle_at(&started, "team-b", 3).await;
    running.stop().await;

    refused_only_outside(&server, client, "system:serviceaccount:operators:parents").await;
}

/// Each labelled Namespace (cluster-scoped) owns a ConfigMap `quota` inside itself.
struct Tenants {
    started: Started,
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
        namespace: &Namespace,
        pass: &mut Pass<Namespace>,
    ) -> Result<Action, ParentError> {
        let name = namespace.name_any();
        self.started.note(name.clone());
        let quota = ConfigMap {
            metadata: ObjectMeta {
                name: Some("quota".into()),
                namespace: Some(name),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([("pods".to_owned(), "10".to_owned())])),
            ..ConfigMap::default()
        };
        pass.apply_child(&quota).await?;
        Ok(Action::await_change())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_scoped_owner_is_run_for_its_namespaced_child() {
    let (server, admin) = server_with_widgets().await;
    let started = Started::default();
    let tenants = Tenants {
        started: started.clone(),
    };
    let running = run_as(&server, "tenants", tenants, |c| {
        c.with_watcher_config(watcher::Config::default().labels("tenant"))
    })
    .await;
    let tenant = Namespace {
        metadata: ObjectMeta {
            name: Some("tenant-a".into()),
            labels: Some(BTreeMap::from([("tenant".to_owned(), "yes".to_owned())])),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(admin.clone())
        .create(&PostParams::default(), &tenant)
        .await
        .expect("namespace");
    let quotas: Api<ConfigMap> = Api::namespaced(admin.clone(), "tenant-a");
    stored(&quotas, "quota", "the quota").await;
    passes_settle_at(&started, "tenant-a", 1).await;
    quotas
        .delete("quota", &DeleteParams::default())
        .await
        .expect("delete");
    stored(&quotas, "quota", "the quota restored").await;
    passes_settle_at(&started, "tenant-a", 2).await;
    running.stop().await;
}

/// Applies a Secret without declaring `owns(Secret)`.
struct Undeclared;

#[kubeward::reconciler(resource = Widget, controller = "test.kubeward.dev/undeclared", kstatus = false)]
impl Undeclared {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, ParentError> {
        pass.apply_child(&secret(&widget.name_any(), None)).await?;
        Ok(Action::await_change())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_of_an_undeclared_kind_fails_the_pass_with_the_fix() {
    let (server, admin) = server_with_widgets().await;
    let running = run_as(&server, "undeclared", Undeclared, |c| c).await;
    create_widget(&admin, "u", WidgetSpec::default()).await;
    let failure = |events: Vec<k8s_openapi::api::events::v1::Event>| {
        events
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("ReconcileFailed"))
    };
    eventually("the failure event", || async {
        failure(kubeward_tests::events_about(&admin, "u").await).is_some()
    })
    .await;
    let event = failure(kubeward_tests::events_about(&admin, "u").await).expect("the event");
    let note = event.note.unwrap_or_default();
    assert!(
        note.contains(
            "Secret is not declared as owned by this controller, so a change to the child would go unnoticed: declare it with `#[reconciler(owns(Secret))]`"
        ),
        "{note}"
    );
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), "default");
    assert!(secrets.get_opt("u").await.expect("get").is_none());
    running.stop().await;
}

#[test]
fn the_generated_rules_cover_owned_and_watched_kinds() {
    let rules = Parents::rbac_rules(false);
    let verbs_on = |resource: &str| {
        rules
            .iter()
            .find(|r| r.resources.as_deref() == Some(&[resource.to_owned()][..]))
            .map(|r| r.verbs.clone())
    };
    assert_eq!(
        verbs_on("configmaps"),
        Some(
            ["get", "list", "watch", "create", "patch", "delete"]
                .map(String::from)
                .to_vec()
        )
    );
    assert_eq!(
        verbs_on("secrets"),
        Some(["list", "watch"].map(String::from).to_vec())
    );
}

/// The annotation that lists the children a widget wants (`a,b`: ConfigMaps `<widget>-a`, `-b`).
const WANTED: &str = "test.kubeward.dev/children";

/// Applies the children a widget's [`WANTED`] annotation lists and prunes the rest.
struct Fleet;

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/fleet",
    owns(ConfigMap),
    kstatus = false,
)]
impl Fleet {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, ParentError> {
        let owner = widget.name_any();
        let wanted: Vec<String> = widget
            .annotations()
            .get(WANTED)
            .map(|list| list.split(',').map(|c| format!("{owner}-{c}")).collect())
            .unwrap_or_default();
        for name in &wanted {
            let mut child = desired_child(&owner);
            child.metadata.name = Some(name.clone());
            pass.apply_child(&child).await?;
        }
        let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
        pass.prune_children::<ConfigMap>(&wanted).await?;
        Ok(Action::await_change())
    }
}

async fn names_of_config_maps(client: &kube::Client) -> Vec<String> {
    let mut names: Vec<String> = config_maps(client)
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(ResourceExt::name_any)
        .filter(|n| n.starts_with("f-") || n == "other")
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_a_pass_no_longer_wants_are_pruned_and_no_others() {
    let (server, admin) = server_with_widgets().await;
    let registry = prometheus::Registry::new();
    let running = run_as(&server, "fleet", Fleet, |c| {
        c.register_metrics(&registry).expect("metrics")
    })
    .await;
    let mut widget = Widget::new("f", WidgetSpec::default());
    widget.metadata.annotations = Some(BTreeMap::from([(WANTED.to_owned(), "a,b,c".to_owned())]));
    let widget = widgets_api(&admin)
        .create(&PostParams::default(), &widget)
        .await
        .expect("widget");
    eventually("three children", || async {
        names_of_config_maps(&admin).await == ["f-a", "f-b", "f-c"]
    })
    .await;
    // Not the fleet's to prune: one owned by the widget but not applied by the controller (no
    // label), and one with the label owned by nothing.
    let owner = widget.controller_owner_ref(&()).expect("owner");
    create_config_map(&admin, "f-manual", Some(owner), None).await;
    let label = (CONTROLLER_LABEL, "test.kubeward.dev.fleet");
    create_config_map(&admin, "other", None, Some(label)).await;
    let wanted = serde_json::json!({ "metadata": { "annotations": { WANTED: "a" } } });
    widgets_api(&admin)
        .patch("f", &PatchParams::default(), &Patch::Merge(&wanted))
        .await
        .expect("annotate");
    eventually("b and c pruned", || async {
        names_of_config_maps(&admin).await == ["f-a", "f-manual", "other"]
    })
    .await;
    running.stop().await;
    // Counted: at least 3 applies for a,b,c and one more of a (f-manual, owned by the widget,
    // starts a pass of its own, which applies all three again), the 2 prunes, nothing failed.
    let writes = |operation: &str, result: &str| {
        kubeward_testing::metric_value(
            &registry,
            "kubeward_child_writes_total",
            &[
                ("kind", "ConfigMap"),
                ("operation", operation),
                ("result", result),
            ],
        )
    };
    assert!(
        writes("apply", "ok").is_some_and(|n| n >= 4.0),
        "{:?}",
        writes("apply", "ok")
    );
    assert_eq!(writes("prune", "ok"), Some(2.0));
    for operation in ["apply", "delete", "prune"] {
        assert_eq!(writes(operation, "failed"), Some(0.0), "{operation}");
    }
}

fn widgets_api(client: &kube::Client) -> Api<Widget> {
    Api::namespaced(client.clone(), "default")
}
