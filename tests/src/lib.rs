//! Shared helpers for kubeward's integration tests: a `Widget` custom resource whose spec scripts
//! what its reconciler does, a reconciler that follows the script, a recording observer, and
//! polling helpers.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use k8s_openapi::api::events::v1::Event as StoredEvent;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;
use kube::{CustomResource, CustomResourceExt};
use kubeward::conditions::{Condition, ConditionStatus, DesiredCondition};
use kubeward::controller::Controller;
use kubeward::events::{EventRecorder, Reporter};
use kubeward::observe::{Outcome, PassRecord, Phase, ReconcileObserver, StepRecord};
use kubeward::vocabulary::{Reason, Vocabulary};
use kubeward::{Action, Pass, Reconciler};
use kubeward_testing::{Cluster, Fault, FaultAction};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the test reconciler does in a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// `Ok(Action::await_change())`.
    #[default]
    Complete,
    /// `Ok(Action::requeue(requeue_ms))`.
    Requeue,
    /// `Err(WidgetError)` with the spec's `error` message.
    Fail,
    /// `pass.skip("suspended")`, `Ok(Action::await_change())`.
    Skip,
    /// Never returns (for abandonment tests).
    Hang,
}

/// A condition the script asks the reconciler to set on `Ready`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WantedCondition {
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// The reason.
    pub reason: String,
    /// The message.
    #[serde(default)]
    pub message: String,
}

/// The spec of a `Widget`: a script for its reconciler.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "test.kubeward.dev",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// What `apply` does.
    #[serde(default)]
    pub mode: Mode,
    /// What `cleanup` does.
    #[serde(default)]
    pub cleanup: Mode,
    /// The requeue delay for [`Mode::Requeue`], in milliseconds (default 50).
    #[serde(default)]
    pub requeue_ms: Option<u64>,
    /// The error message for [`Mode::Fail`].
    #[serde(default)]
    pub error: Option<String>,
    /// The `Ready` condition to set, if any.
    #[serde(default)]
    pub condition: Option<WantedCondition>,
    /// The `Ready` condition `cleanup` sets, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_condition: Option<WantedCondition>,
    /// Status fields `apply` sets (`None`: `null`, which deletes the field).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub status_fields: std::collections::BTreeMap<String, Option<String>>,
}

impl WidgetSpec {
    /// A script whose `apply` does `mode`.
    pub fn with_mode(mode: Mode) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// A script whose `apply` sets `Ready` to (`status`, `reason`, `message`), then does `mode`.
    pub fn ready(mode: Mode, status: &str, reason: &str, message: &str) -> Self {
        Self {
            mode,
            condition: Some(WantedCondition {
                status: status.into(),
                reason: reason.into(),
                message: message.into(),
            }),
            ..Self::default()
        }
    }
}

/// The status of a `Widget`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// A status field the type models (set through [`WidgetSpec::status_fields`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// The error of a scripted failure.
#[derive(Debug, thiserror::Error, kubeward::Terminal)]
#[error("{0}")]
pub struct WidgetError(pub String);

/// The `Ready` vocabulary of widgets, with overrides both ways.
pub static READY: Vocabulary = Vocabulary {
    type_: "Ready",
    reasons: &[
        Reason::new("Applying", ConditionStatus::Unknown)
            .initial()
            .to(&["WaitingForApproval", "Applied", "FailedDeploy", "Stalled"]),
        Reason::new("WaitingForApproval", ConditionStatus::False)
            .gate()
            .to(&["Applying"]),
        Reason::new("Applied", ConditionStatus::True).to(&["Applying"]),
        Reason::new("FailedDeploy", ConditionStatus::False).to(&["Applying"]),
        Reason::new("Stalled", ConditionStatus::True)
            .event(EventType::Warning)
            .to(&["Applying"]),
    ],
};

/// The finalizer of the test controller.
pub const FINALIZER: &str = "test.kubeward.dev/cleanup";
/// The name of the test controller.
pub const CONTROLLER: &str = "test.kubeward.dev/widgets";

/// Follows each widget's script, and notes the name of every object whose `apply` started.
#[derive(Debug, Default, Clone)]
pub struct Widgets {
    /// Names of the objects whose `apply` started, in order.
    pub started: Arc<Mutex<Vec<String>>>,
}

impl Widgets {
    /// How many `apply` calls started for `name`.
    pub fn started(&self, name: &str) -> usize {
        self.started
            .lock()
            .unwrap()
            .iter()
            .filter(|n| *n == name)
            .count()
    }
}

async fn follow(
    mode: Mode,
    spec: &WidgetSpec,
    pass: &mut Pass<Widget>,
) -> Result<Action, WidgetError> {
    match mode {
        Mode::Complete => Ok(Action::await_change()),
        Mode::Requeue => Ok(Action::requeue(Duration::from_millis(
            spec.requeue_ms.unwrap_or(50),
        ))),
        Mode::Fail => Err(WidgetError(
            spec.error
                .clone()
                .unwrap_or_else(|| "scripted failure".into()),
        )),
        Mode::Skip => {
            pass.skip("suspended");
            Ok(Action::await_change())
        }
        Mode::Hang => futures::future::pending().await,
    }
}

impl Reconciler for Widgets {
    type Resource = Widget;
    type Error = WidgetError;
    const NAME: Option<&'static str> = Some(CONTROLLER);
    const FINALIZER: Option<&'static str> = Some(FINALIZER);
    const CONDITIONS: &'static [&'static Vocabulary] = &[&READY];
    const INFO: &'static [kubeward::info::InfoField] = &[
        kubeward::info::InfoField::new("mode", "spec.mode"),
        kubeward::info::InfoField::new("wanted", ".spec.condition.reason"),
    ];

    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, WidgetError> {
        self.started
            .lock()
            .unwrap()
            .push(kube::ResourceExt::name_any(widget));
        if let Some(wanted) = &widget.spec.condition {
            set_ready(pass, wanted)?;
        }
        for (name, value) in &widget.spec.status_fields {
            let value = value.clone().map_or(serde_json::Value::Null, Into::into);
            pass.set_status_field(name.clone(), value);
        }
        follow(widget.spec.mode, &widget.spec, pass).await
    }

    async fn cleanup(
        &self,
        widget: &Widget,
        pass: &mut Pass<Widget>,
    ) -> Result<Action, WidgetError> {
        if let Some(wanted) = &widget.spec.cleanup_condition {
            set_ready(pass, wanted)?;
        }
        follow(widget.spec.cleanup, &widget.spec, pass).await
    }
}

/// Sets `Ready` as `wanted` says.
fn set_ready(pass: &mut Pass<Widget>, wanted: &WantedCondition) -> Result<(), WidgetError> {
    let status: ConditionStatus = wanted
        .status
        .parse()
        .map_err(|e| WidgetError(format!("{e}")))?;
    let desired = DesiredCondition::new(
        "Ready",
        status,
        wanted.reason.clone(),
        wanted.message.clone(),
    )
    .map_err(|e| WidgetError(e.to_string()))?;
    pass.set(desired);
    Ok(())
}

/// The timeout of the test controllers' event recorders: short, so that tests of a hung events
/// API run quickly.
pub const PUBLISH_TIMEOUT: Duration = Duration::from_millis(300);

/// An event recorder for the test controller.
pub fn recorder(client: &kube::Client) -> EventRecorder {
    EventRecorder::new(
        client.clone(),
        Reporter::new(CONTROLLER, "test-pod").expect("valid reporter"),
    )
    .with_timeout(PUBLISH_TIMEOUT)
}

/// The test controller running `widgets` as the [`OPERATOR`] service account (see
/// [`operator_client`]), reporting to `observer` and publishing events.
pub async fn start_widgets(
    server: &Cluster,
    widgets: &Widgets,
    observer: &Arc<Recording>,
) -> Running {
    let client = operator_client(server, OPERATOR).await;
    Running::start(
        Controller::new(widgets.clone(), client.clone())
            .with_observer(observer.clone())
            .with_event_recorder(recorder(&client))
            .with_shutdown_grace(Duration::from_millis(200)),
    )
}

/// Widgets in `default`.
pub fn widgets(client: &kube::Client) -> Api<Widget> {
    Api::namespaced(client.clone(), "default")
}

/// Replaces the spec of the widget `name` with `spec` (a merge patch).
pub async fn set_spec(client: &kube::Client, name: &str, spec: &WidgetSpec) {
    let patch = serde_json::json!({ "spec": spec });
    widgets(client)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("spec patched");
}

/// Writes `conditions` (raw JSON) to the widget's status, as another writer would.
pub async fn write_conditions(client: &kube::Client, name: &str, conditions: serde_json::Value) {
    let status = serde_json::json!({ "status": { "conditions": conditions } });
    widgets(client)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status patched");
}

/// The path of the widget's status subresource.
pub fn status_path(name: &str) -> String {
    format!("/apis/test.kubeward.dev/v1/namespaces/default/widgets/{name}/status")
}

/// Makes the next `times` status writes of the widget `name` conflict (409).
pub fn conflict_status_writes(server: &Cluster, name: &str, times: usize) {
    server.faults().add(
        Fault::new(FaultAction::Status(409))
            .method(Method::PATCH)
            .path_prefix(&status_path(name))
            .times(times),
    );
}

/// The HTTP statuses of the status writes the server saw for the widget `name`.
pub fn status_writes(server: &Cluster, name: &str) -> Vec<u16> {
    patch_statuses(server, &status_path(name))
}

/// The HTTP statuses of the PATCHes of `path` the server saw, in order (dry runs, which write
/// nothing, left out).
pub fn patch_statuses(server: &Cluster, path: &str) -> Vec<u16> {
    server
        .requests()
        .iter()
        .filter(|r| r.method == Method::PATCH && r.path == path && !r.query.contains("dryRun"))
        .map(|r| r.status)
        .collect()
}

/// A registry holding the per-object metrics of `controller` (prefix `kubeward`).
pub fn object_metrics_registry<R: Reconciler>(controller: &Controller<R>) -> prometheus::Registry {
    let registry = prometheus::Registry::new();
    registry
        .register(Box::new(
            controller.object_metrics("kubeward").expect("valid prefix"),
        ))
        .expect("registered once");
    registry
}

/// A scrape of `registry`: its samples in the text format `/metrics` serves.
pub fn scrape(registry: &prometheus::Registry) -> String {
    prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .expect("encodes")
}

/// An observer that keeps every record.
#[derive(Debug, Default)]
pub struct Recording {
    passes: Mutex<Vec<PassRecord>>,
    steps: Mutex<Vec<StepRecord>>,
}

impl Recording {
    /// A shared recording observer.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The (phase, outcome) of every pass over the object `name`, in order.
    pub fn passes_of(&self, name: &str) -> Vec<(Phase, Outcome)> {
        self.passes
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.object.name == name)
            .map(|p| (p.phase, p.outcome))
            .collect()
    }

    /// How many passes over `name` ended with `outcome`.
    pub fn count(&self, name: &str, outcome: Outcome) -> usize {
        self.passes_of(name)
            .iter()
            .filter(|(_, o)| *o == outcome)
            .count()
    }

    /// The records of every pass.
    pub fn passes(&self) -> Vec<PassRecord> {
        self.passes.lock().unwrap().clone()
    }
}

impl ReconcileObserver for Recording {
    fn pass_finished(&self, record: &PassRecord) {
        self.passes.lock().unwrap().push(record.clone());
    }
    fn step_finished(&self, record: &StepRecord) {
        self.steps.lock().unwrap().push(record.clone());
    }
}

/// Polls `condition` every 10 ms until it holds; panics with `what` after 30 s. (Not a timing
/// assertion: the bound only keeps a broken test from hanging.)
pub async fn eventually<F, Fut>(what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !condition().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// How long a pass that something started would take to show: [`settles_at`] asserts that no
/// further pass starts within it (not a timing assertion on the controller: a pass comes within
/// milliseconds of the event that starts it).
pub const QUIET: Duration = Duration::from_millis(700);

/// Waits until `count()` (passes of something) reaches `expected`, then asserts it stays there
/// for [`QUIET`]; `what` names it in the failure.
pub async fn settles_at(what: &str, count: impl Fn() -> usize, expected: usize) {
    eventually(&format!("{expected} {what}"), || {
        let reached = count() >= expected;
        async move { reached }
    })
    .await;
    tokio::time::sleep(QUIET).await;
    assert_eq!(count(), expected, "{what}");
}

/// The API server `KUBEWARD_TEST_APISERVER` picks (see [`Cluster`]) with the `Widget` CRD
/// installed, and an administrator's client of it.
pub async fn server_with_widgets() -> (Cluster, kube::Client) {
    let server = Cluster::start().await.expect("API server starts");
    server
        .install_crd(&Widget::crd())
        .await
        .expect("Widget CRD installs");
    let client = server.client().expect("client");
    (server, client)
}

/// The embedded server with the `Widget` CRD installed, whatever `KUBEWARD_TEST_APISERVER`
/// says, for tests of what only it offers ([`Cluster::embedded`]: compaction, restarts, direct
/// store access), and an administrator's client of it.
pub async fn embedded_with_widgets() -> (Cluster, kube::Client) {
    let server = Cluster::start_on(kubeward_testing::Backend::Embedded)
        .await
        .expect("API server starts");
    server
        .install_crd(&Widget::crd())
        .await
        .expect("Widget CRD installs");
    let client = server.client().expect("client");
    (server, client)
}

/// Creates a widget named `name` in `default` with `spec`.
pub async fn create_widget(client: &kube::Client, name: &str, spec: WidgetSpec) -> Widget {
    Api::<Widget>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &Widget::new(name, spec))
        .await
        .expect("widget created")
}

/// The events.k8s.io/v1 events stored about the object `name` in `default`.
pub async fn events_about(client: &kube::Client, name: &str) -> Vec<StoredEvent> {
    let events = Api::<StoredEvent>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .expect("events listed");
    events
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .collect()
}

/// `reconciler`'s controller, as `configure` sets it up (a 200 ms shutdown grace before that),
/// run in the background as the service account `account` of `default` holding the rules
/// generated for it.
pub async fn run_as<R: Reconciler>(
    server: &Cluster,
    account: &str,
    reconciler: R,
    configure: impl FnOnce(Controller<R>) -> Controller<R>,
) -> Running {
    let client = server
        .service_account_client("default", account, kubeward::rbac::rules::<R>(false))
        .await
        .expect("the generated RBAC is stored");
    let controller =
        Controller::new(reconciler, client).with_shutdown_grace(Duration::from_millis(200));
    Running::start(configure(controller))
}

/// Creates the namespace `name` (if missing) through `admin`.
pub async fn namespace(admin: &kube::Client, name: &str) {
    let namespace = k8s_openapi::api::core::v1::Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..kube::api::ObjectMeta::default()
        },
        ..Default::default()
    };
    match Api::<k8s_openapi::api::core::v1::Namespace>::all(admin.clone())
        .create(&PostParams::default(), &namespace)
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(error) => panic!("namespace {name}: {error}"),
    }
}

/// A controller running in the background.
pub struct Running {
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    handle: tokio::task::JoinHandle<Result<(), kubeward::controller::ControllerError>>,
}

impl Running {
    /// Starts `controller` with a shutdown trigger of the test's own.
    pub fn start<R: Reconciler>(controller: kubeward::controller::Controller<R>) -> Self {
        Self::start_in(controller, tracing::Span::none())
    }

    /// Starts `controller` like [`Running::start`], its log (and that of every task it spawns
    /// for a pass) inside `span`: a replica's name in a log of several.
    pub fn start_in<R: Reconciler>(
        controller: kubeward::controller::Controller<R>,
        span: tracing::Span,
    ) -> Self {
        use tracing::Instrument;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let controller = controller.shutdown_on(async move {
            let _ = rx.await;
        });
        Self {
            shutdown: Some(tx),
            handle: tokio::spawn(controller.run().instrument(span)),
        }
    }

    /// Signals shutdown and waits for the controller to return.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        (&mut self.handle)
            .await
            .expect("controller task")
            .expect("controller ran");
    }

    /// Kills the controller task outright (as a crashed process would be).
    pub fn kill(self) {
        self.handle.abort();
    }
}

/// `GET path` over plain HTTP/1.1 on `addr`: the status code and the body.
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("status line");
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The service account the test controller runs as.
pub const OPERATOR: &str = "widgets";

/// The user name the server authenticates the service account `default/<name>` as (what
/// [`Fault::user`] matches).
pub fn service_account_user(name: &str) -> String {
    format!("system:serviceaccount:default:{name}")
}

/// Asserts that `user` wrote nothing after its last release of a lease (a `PUT` of a Lease): a
/// replica that gave up its lease sends no write after it.
pub fn assert_no_write_after_release(server: &Cluster, user: &str) {
    let requests: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.user == user)
        .collect();
    let release = requests
        .iter()
        .rposition(|r| r.method == http::Method::PUT && r.path.contains("/leases/"))
        .expect("the release");
    let writes_after: Vec<_> = requests[release + 1..]
        .iter()
        .filter(|r| r.method != http::Method::GET)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(
        writes_after.is_empty(),
        "writes after the release: {writes_after:#?}"
    );
}

/// A client of `server` that is the service account `default/<name>`, holding exactly the RBAC
/// rules generated from the test controller's declaration (with leader election) through a
/// stored ClusterRole and binding. Controllers in tests run as this, never as the administrator:
/// a verb the generated RBAC lacks fails the test with the server's 403.
pub async fn operator_client(server: &Cluster, name: &str) -> kube::Client {
    server
        .service_account_client("default", name, kubeward::rbac::rules::<Widgets>(true))
        .await
        .expect("the generated RBAC is stored")
}

impl Running {
    /// Whether the controller is still running (it has not returned nor panicked).
    pub fn is_running(&self) -> bool {
        !self.handle.is_finished()
    }
}
