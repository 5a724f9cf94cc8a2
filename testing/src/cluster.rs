//! [`Cluster`]: one entry point for a test's API server, the embedded one by default or a real
//! control plane when `KUBEWARD_TEST_APISERVER=real`, with the same clients, kubeconfig,
//! faults and request log on both — so a controller's tests run on either unchanged.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::ObjectRef;
use kubeward_names::clock::SkippingClock;

use crate::auth::tls::Tls;
use crate::faults::{self, Faults};
use crate::grant::{Scope, grant, ignore_status, named};
use crate::kubeconfig::{self, Credentials};
use crate::real::{ADMIN_USER, Assets, ControlPlane, Proxy, set_kubelet_running};
use crate::requests::{RequestLog, RequestRecord};
use crate::workloads::Workloads;
use crate::{ApiServer, Identity, ServerError};

/// The environment variable that picks the backend of [`Cluster::start`]: unset or `embedded`
/// for the in-process server, `real` for kube-apiserver and etcd from
/// [`KUBEBUILDER_ASSETS`](crate::ASSETS_VARIABLE).
pub const BACKEND_VARIABLE: &str = "KUBEWARD_TEST_APISERVER";

/// How long a real server gets to establish a CustomResourceDefinition.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Which API server a [`Cluster`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The in-process [`ApiServer`]: milliseconds to start, every fault, direct store access.
    Embedded,
    /// kube-apiserver, etcd and kube-controller-manager (garbage collector and namespace
    /// controller) from `KUBEBUILDER_ASSETS`, reached through a fault proxy; with
    /// [`ClusterBuilder::workloads`], kube-controller-manager with all its controllers,
    /// kube-scheduler and KWOK.
    Real,
}

impl Backend {
    /// The backend `KUBEWARD_TEST_APISERVER` asks for.
    ///
    /// # Errors
    /// When it holds anything but `embedded`, `real` or nothing: a typo must not quietly run
    /// the embedded server.
    pub fn from_env() -> Result<Self, ServerError> {
        match std::env::var(BACKEND_VARIABLE) {
            Err(std::env::VarError::NotPresent) => Ok(Self::Embedded),
            Ok(value) if value.is_empty() || value == "embedded" => Ok(Self::Embedded),
            Ok(value) if value == "real" => Ok(Self::Real),
            Ok(value) => Err(ServerError::Backend(format!(
                "{BACKEND_VARIABLE}={value:?}: expected `embedded` or `real`"
            ))),
            Err(std::env::VarError::NotUnicode(value)) => Err(ServerError::Backend(format!(
                "{BACKEND_VARIABLE}={value:?}: expected `embedded` or `real`"
            ))),
        }
    }
}

/// A test's API server, embedded or real.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// // The embedded server, or kube-apiserver with KUBEWARD_TEST_APISERVER=real.
/// let cluster = kubeward_testing::Cluster::start().await?;
/// let cms: kube::Api<ConfigMap> = kube::Api::namespaced(cluster.client()?, "default");
/// assert!(cms.list(&Default::default()).await?.items.is_empty());
/// # Ok(()) }
/// ```
///
/// On the real backend every client goes through a loopback proxy that applies
/// [`Cluster::faults`] and fills [`Cluster::requests`], exactly as the embedded server does
/// itself; kube-controller-manager talks to kube-apiserver directly. Dropping the cluster stops
/// everything it started, by the processes' own ids; a test that panics keeps the control
/// plane's logs and prints where they are.
pub struct Cluster {
    inner: Inner,
    /// The simulated cluster's declaration, if one runs ([`ClusterBuilder::workloads`]).
    world: Option<Workloads>,
    /// The embedded server's clock, when this cluster started it ([`Cluster::elapse`]).
    clock: Option<SkippingClock>,
}

/// Options of a [`Cluster`]: its backend and its simulated cluster.
///
/// ```no_run
/// # async fn f() -> Result<(), kubeward_testing::ServerError> {
/// use kubeward_testing::{Cluster, Workloads};
/// // Embedded: the simulated cluster of `crate::workloads`. Real: kube-controller-manager with
/// // all its controllers, kube-scheduler and KWOK playing the two nodes' kubelets.
/// let cluster = Cluster::builder().workloads(Workloads::with_nodes(2)).start().await?;
/// assert!(cluster.has_workloads());
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
pub struct ClusterBuilder {
    backend: Option<Backend>,
    workloads: Option<Workloads>,
}

impl ClusterBuilder {
    /// The backend; by default the one `KUBEWARD_TEST_APISERVER` names
    /// ([`Backend::from_env`]).
    #[must_use]
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }

    /// Runs a simulated cluster of `workloads`' nodes, so that Deployments become available
    /// and pods run. On the embedded server, [`ApiServerBuilder::workloads`](crate::ApiServerBuilder::workloads).
    /// On the real one: kube-controller-manager with `--controllers=*`, kube-scheduler, and
    /// KWOK playing the nodes' kubelets with the Stages of `testing/kwok/stages.yaml`; the
    /// nodes are created through the API. There a fault must name an exact image (no `*`), or
    /// [`ClusterBuilder::start`] fails saying so; its kubelet events are recorded for image
    /// pulls only (see `testing/src/real/kwok.rs`).
    #[must_use]
    pub fn workloads(mut self, workloads: Workloads) -> Self {
        self.workloads = Some(workloads);
        self
    }

    /// Starts the cluster.
    ///
    /// # Errors
    /// As [`Cluster::start`]; on the real backend with workloads also when `KUBEBUILDER_ASSETS`
    /// lacks kube-scheduler or kwok, or a fault cannot be played there.
    pub async fn start(self) -> Result<Cluster, ServerError> {
        let backend = match self.backend {
            Some(backend) => backend,
            None => Backend::from_env()?,
        };
        let world = self.workloads.clone();
        let mut clock = None;
        let inner = match backend {
            Backend::Embedded => {
                let skipping = SkippingClock::default();
                let mut builder = ApiServer::builder().clock(Arc::new(skipping.clone()));
                clock = Some(skipping);
                if let Some(w) = self.workloads {
                    builder = builder.workloads(w);
                }
                Inner::Embedded(builder.start().await?)
            }
            Backend::Real => {
                let assets = Assets::from_env()?;
                let tls = Tls::new().map_err(ServerError::Tls)?;
                let admin_token = uuid::Uuid::new_v4().simple().to_string();
                let control_plane =
                    ControlPlane::start(&assets, &tls, &admin_token, self.workloads.as_ref())
                        .await?;
                let proxy = Proxy::start(&tls, control_plane.api).await?;
                proxy.state.name_token(&admin_token, ADMIN_USER);
                Inner::Real(Box::new(Real {
                    proxy,
                    control_plane,
                    tls,
                    admin_token,
                }))
            }
        };
        Ok(Cluster {
            inner,
            world,
            clock,
        })
    }
}

enum Inner {
    Embedded(ApiServer),
    Real(Box<Real>),
}

/// The real backend. Fields drop in order: the proxy closes before the control plane stops.
struct Real {
    proxy: Proxy,
    control_plane: ControlPlane,
    tls: Tls,
    admin_token: String,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("backend", &self.describe())
            .field("url", &self.url())
            .finish()
    }
}

impl From<ApiServer> for Cluster {
    /// An embedded server started with its own options ([`ApiServer::builder`]); it counts as
    /// without workloads ([`Cluster::has_workloads`]): start one with [`Cluster::builder`].
    fn from(server: ApiServer) -> Self {
        Self {
            inner: Inner::Embedded(server),
            world: None,
            clock: None,
        }
    }
}

impl Cluster {
    /// Starts the backend `KUBEWARD_TEST_APISERVER` names (see [`Backend::from_env`]).
    ///
    /// # Errors
    /// When the variable is invalid, or the backend cannot start (for the real one: no
    /// binaries in `KUBEBUILDER_ASSETS`, or a component that did not become ready, with the
    /// end of its log).
    pub async fn start() -> Result<Self, ServerError> {
        Self::start_on(Backend::from_env()?).await
    }

    /// Starts `backend`.
    ///
    /// # Errors
    /// As [`Cluster::start`].
    pub async fn start_on(backend: Backend) -> Result<Self, ServerError> {
        Self::builder().backend(backend).start().await
    }

    /// Options: the backend, a simulated cluster ([`ClusterBuilder::workloads`]).
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// Whether a simulated cluster runs (nodes, scheduler, kubelets, the workload
    /// controllers): it was started with [`ClusterBuilder::workloads`].
    pub fn has_workloads(&self) -> bool {
        self.world.is_some()
    }

    /// Lets `by` pass on the cluster's clock: what a test does to get past a grace period, a
    /// cron schedule, a probe's delay or a back-off. On the embedded server at once: its clock
    /// skips ahead and every timer due by then fires (the server's clock only: a client's own
    /// timers, kube-runtime's among them, still read the system clock). On the real one by
    /// sleeping, as its components read the system clock.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), kubeward_testing::ServerError> {
    /// use std::time::Duration;
    /// use kubeward_testing::{Cluster, Workloads};
    /// let cluster = Cluster::builder().workloads(Workloads::with_nodes(1)).start().await?;
    /// // A CronJob of `* * * * *` created now has fired once after this.
    /// cluster.elapse(Duration::from_secs(60)).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// On an embedded server made into a cluster with [`Cluster::from`]: it keeps the clock it
    /// was started with ([`crate::ApiServerBuilder::clock`]), which only its owner can move.
    pub async fn elapse(&self, by: Duration) -> Result<(), ServerError> {
        match (&self.inner, &self.clock) {
            (Inner::Embedded(_), Some(clock)) => clock.skip(by),
            (Inner::Embedded(_), None) => {
                return Err(ServerError::Unsupported(
                    "Cluster::elapse: this embedded server was started with its own clock \
                     (ApiServerBuilder::clock); move that clock, or start the cluster with \
                     Cluster::builder()"
                        .to_owned(),
                ));
            }
            (Inner::Real(_), _) => tokio::time::sleep(by).await,
        }
        Ok(())
    }

    /// Takes the kubelet of the declared node `node` away (`ready == false`) or brings it
    /// back: a node lost (powered off, cut from the network) and found again, on either
    /// backend.
    ///
    /// - Away, the kubelet posts nothing more: the node's pods keep their last status. Once
    ///   `--node-monitor-grace-period` (50 s) passed without a heartbeat, the node lifecycle
    ///   controller sets the node's conditions `Unknown` (`NodeStatusUnknown`), its pods'
    ///   `Ready` condition `False`, and taints the node `node.kubernetes.io/unreachable`
    ///   (`NoSchedule`, `NoExecute`); the pods that do not tolerate the taint are deleted after
    ///   their `tolerationSeconds` (300 s unless the pod says otherwise) and stay
    ///   `Terminating`, as no kubelet confirms their end. [`Cluster::elapse`] gets past the
    ///   waits.
    /// - Back, the kubelet posts its node `Ready` (the taints go) and syncs its pods: those
    ///   being deleted are removed.
    ///
    /// On the embedded server the simulated kubelet stops ([`ApiServer::set_node_ready`]); on
    /// the real one KWOK stops playing the node: the node's Lease passes to another holder,
    /// renewed no more, and the node is annotated `kubeward.dev/kubelet: stopped` until it is
    /// back (a heartbeat already due may land up to 25 s later, delaying the node's `Unknown`
    /// by as much).
    ///
    /// # Errors
    /// Without a simulated cluster ([`ClusterBuilder::workloads`]) or for a node it does not
    /// declare (there is no kubelet to stop); on the real backend, a write the API server
    /// refused.
    pub async fn set_node_ready(&self, node: &str, ready: bool) -> Result<(), ServerError> {
        let Some(world) = &self.world else {
            return Err(ServerError::Unsupported(format!(
                "Cluster::set_node_ready({node:?}): no simulated cluster runs (start one with \
                 ClusterBuilder::workloads)"
            )));
        };
        let Some(declared) = world.nodes.iter().find(|n| n.name == node) else {
            let names: Vec<&str> = world.nodes.iter().map(|n| n.name.as_str()).collect();
            return Err(ServerError::Unsupported(format!(
                "Cluster::set_node_ready({node:?}): not a declared node (declared: {})",
                names.join(", ")
            )));
        };
        match &self.inner {
            Inner::Embedded(server) => {
                server.set_node_ready(node, ready);
                Ok(())
            }
            Inner::Real(_) => set_kubelet_running(&self.client()?, declared, ready).await,
        }
    }

    /// The backend this cluster runs on.
    pub fn backend(&self) -> Backend {
        match &self.inner {
            Inner::Embedded(_) => Backend::Embedded,
            Inner::Real(_) => Backend::Real,
        }
    }

    /// `embedded API server`, or `real kube-apiserver v1.34.12` (its `gitVersion`).
    pub fn describe(&self) -> String {
        match &self.inner {
            Inner::Embedded(_) => "embedded API server".to_owned(),
            Inner::Real(real) => format!("real kube-apiserver {}", real.control_plane.version),
        }
    }

    /// The embedded server, for what only it offers (direct store access, compaction,
    /// restart); `None` on the real backend.
    pub fn embedded(&self) -> Option<&ApiServer> {
        match &self.inner {
            Inner::Embedded(server) => Some(server),
            Inner::Real(_) => None,
        }
    }

    /// Whether deleted owners' dependents are garbage-collected and deleted namespaces
    /// emptied: always on the embedded server; on the real one when kube-controller-manager
    /// was among the binaries (plain envtest assets lack it).
    pub fn has_controllers(&self) -> bool {
        match &self.inner {
            Inner::Embedded(_) => true,
            Inner::Real(real) => real.control_plane.controllers,
        }
    }

    /// The URL clients use (the proxy's, on the real backend).
    pub fn url(&self) -> String {
        match &self.inner {
            Inner::Embedded(server) => server.url(),
            Inner::Real(real) => format!("https://{}", real.proxy.addr()),
        }
    }

    /// A client acting as `identity`. On the embedded server as [`ApiServer::client_for`]; on
    /// the real backend through the proxy, [`Identity::User`] being the administrator
    /// impersonating the user (as `kubectl --as`), which kube-apiserver authorizes as that user.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// use kubeward_testing::{Cluster, Identity};
    /// let cluster = Cluster::start().await?;
    /// let someone = cluster.client_for(&Identity::user("someone", &["team"]))?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// When the client cannot be built, or on the real backend for [`Identity::Rules`] and
    /// [`Identity::Certificate`] (embedded only).
    pub fn client_for(&self, identity: &Identity) -> Result<kube::Client, ServerError> {
        match &self.inner {
            Inner::Embedded(server) => server.client_for(identity),
            Inner::Real(real) => Ok(kube::Client::try_from(real.config_for(identity)?)?),
        }
    }

    /// A client with full access: the cluster administrator, [`Identity::Admin`].
    ///
    /// # Errors
    /// When the client cannot be built.
    pub fn client(&self) -> Result<kube::Client, ServerError> {
        self.client_for(&Identity::Admin)
    }

    /// A client authenticated as the service account `namespace/name`, granted exactly `rules`
    /// (see [`ApiServer::service_account_client`]). On the real backend the ServiceAccount
    /// (and its namespace, if missing) is created and the client bears a token the server
    /// issued for it (TokenRequest), so requests are authenticated as a real service account.
    ///
    /// # Errors
    /// When the grant, the account or its token cannot be stored or issued.
    pub async fn service_account_client(
        &self,
        namespace: &str,
        name: &str,
        rules: Vec<PolicyRule>,
    ) -> Result<kube::Client, ServerError> {
        self.granted_client(namespace, name, rules, Scope::Cluster)
            .await
    }

    /// A client authenticated as the service account `namespace/name`, granted `rules` in
    /// `namespace` only (see [`ApiServer::namespaced_service_account_client`]), on either
    /// backend as [`Cluster::service_account_client`].
    ///
    /// # Errors
    /// When the grant, the account or its token cannot be stored or issued.
    pub async fn namespaced_service_account_client(
        &self,
        namespace: &str,
        name: &str,
        rules: Vec<PolicyRule>,
    ) -> Result<kube::Client, ServerError> {
        self.granted_client(namespace, name, rules, Scope::Namespace)
            .await
    }

    /// The service account client of `namespace/name`, granted `rules` as `scope` says.
    async fn granted_client(
        &self,
        namespace: &str,
        name: &str,
        rules: Vec<PolicyRule>,
        scope: Scope,
    ) -> Result<kube::Client, ServerError> {
        let real = match &self.inner {
            Inner::Embedded(server) => {
                return server.granted_client(namespace, name, rules, scope).await;
            }
            Inner::Real(real) => real,
        };
        let admin = self.client()?;
        grant(admin.clone(), namespace, name, rules, scope).await?;
        let namespaces: Api<Namespace> = Api::all(admin.clone());
        let created = namespaces
            .create(&PostParams::default(), &named(namespace))
            .await
            .map(drop);
        ignore_status(created, 409)?;
        let accounts: Api<ServiceAccount> = Api::namespaced(admin, namespace);
        let created = accounts
            .create(&PostParams::default(), &named(name))
            .await
            .map(drop);
        ignore_status(created, 409)?;
        let request = TokenRequest {
            spec: TokenRequestSpec {
                // A day: longer than any test; the client does not refresh it.
                expiration_seconds: Some(24 * 3600),
                ..TokenRequestSpec::default()
            },
            ..TokenRequest::default()
        };
        let issued = accounts
            .create_token_request(name, &PostParams::default(), &request)
            .await?;
        let token = issued
            .status
            .map(|s| s.token)
            .ok_or_else(|| ServerError::ControlPlane("TokenRequest answered no token".into()))?;
        real.proxy
            .state
            .name_token(&token, &format!("system:serviceaccount:{namespace}:{name}"));
        self.client_for(&Identity::Token(token))
    }

    /// Writes a kubeconfig that points `kubectl --kubeconfig <path>` at this cluster acting as
    /// `identity`: on the embedded server as [`ApiServer::write_kubeconfig_for`]; on the real
    /// backend bearing the administrator's token (impersonating an [`Identity::User`]) or the
    /// [`Identity::Token`].
    ///
    /// # Errors
    /// When the file cannot be written, or as [`Cluster::client_for`].
    pub fn write_kubeconfig_for(
        &self,
        path: impl AsRef<Path>,
        identity: &Identity,
    ) -> Result<(), ServerError> {
        let real = match &self.inner {
            Inner::Embedded(server) => return server.write_kubeconfig_for(path, identity),
            Inner::Real(real) => real,
        };
        let (token, impersonate) = real.acting_as(identity)?;
        let credentials = match impersonate {
            None => Credentials::Token(token),
            Some((user, groups)) => Credentials::Impersonating {
                token,
                user,
                groups,
            },
        };
        let text = kubeconfig::render(&self.url(), Some(&real.tls.ca_pem()), Some(credentials));
        std::fs::write(path, text).map_err(ServerError::Kubeconfig)
    }

    /// Writes a kubeconfig that points `kubectl --kubeconfig <path>` at this cluster as the
    /// administrator, [`Identity::Admin`].
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), ServerError> {
        self.write_kubeconfig_for(path, &Identity::Admin)
    }

    /// Installs a CustomResourceDefinition and waits until it is `Established` (at once on
    /// the embedded server).
    ///
    /// # Errors
    /// When the server refuses it, or a real server does not establish it within 30 s.
    pub async fn install_crd(&self, crd: &CustomResourceDefinition) -> Result<(), ServerError> {
        if let Inner::Embedded(server) = &self.inner {
            return server.install_crd(crd);
        }
        let crds: Api<CustomResourceDefinition> = Api::all(self.client()?);
        let name = crd.metadata.name.clone().unwrap_or_default();
        crds.create(&PostParams::default(), crd).await?;
        let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
        loop {
            let stored = crds.get(&name).await?;
            let established = stored
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if established {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                return Err(ServerError::ControlPlane(format!(
                    "CustomResourceDefinition {name} not Established after {ESTABLISH_TIMEOUT:?}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The fault rules, applied to every client request on either backend.
    pub fn faults(&self) -> &Faults {
        match &self.inner {
            Inner::Embedded(server) => server.faults(),
            Inner::Real(real) => &real.proxy.state.faults,
        }
    }

    /// Ends every open watch with `ERROR 410 Expired`, so that watchers relist: on the embedded
    /// server by compacting its watch history ([`ApiServer::compact`]); on the real one through
    /// the proxy (etcd's history is not compacted, so a later watch from an old resourceVersion
    /// may still be served).
    pub fn expire_watches(&self) {
        match &self.inner {
            Inner::Embedded(server) => server.compact(),
            Inner::Real(real) => real.proxy.state.expire_watches(),
        }
    }

    /// Deletes `objects` (all of kind `K`) while every watch relists, so that watchers learn of
    /// the deletes from their relist only, never from a `DELETED` event: what a controller meets
    /// when its watch ends with `410 Expired` (etcd compaction, an API server restart) and its
    /// relist fails and backs off while the objects go. Deterministic, not a race with the
    /// clients' relists. In order, on either backend (through the proxy on the real one):
    ///
    /// 1. every `GET` of `K`'s resource (lists, watches — a streaming list is one — and reads)
    ///    by any user but the administrator is refused with `500`;
    /// 2. every open watch ends with `ERROR 410 Expired` ([`Cluster::expire_watches`]), before
    ///    it could carry an event of the deletes;
    /// 3. the administrator deletes each object (a `DELETE`, which step 1 spares): one already
    ///    gone is skipped; one with finalizers only becomes Terminating;
    /// 4. the history before the deletes counts as compacted: a watch from a resourceVersion
    ///    before them (a watcher that had listed but not yet watched) gets `ERROR 410 Expired`
    ///    too — on the embedded server by [`ApiServer::compact`], on the real one the proxy
    ///    answers it so (etcd's history and the watch cache stay);
    /// 5. the refusal is lifted (also when a delete fails or this future is dropped), and this
    ///    returns. The watchers' next relist, after their backoff (0.8 s, doubling, for kube's
    ///    watcher), succeeds and finds the objects gone.
    ///
    /// Other fault rules stay as they are. A request already past the fault stage when this is
    /// called (a relist in flight) is served as it comes. Returns the objects deleted (not those
    /// already gone).
    ///
    /// ```
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use futures::StreamExt;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use k8s_openapi::api::rbac::v1::PolicyRule;
    /// use kube::runtime::reflector::ObjectRef;
    /// use kube::runtime::{WatchStreamExt, watcher};
    /// let cluster = kubeward_testing::Cluster::start().await?;
    /// let admin: kube::Api<ConfigMap> = kube::Api::namespaced(cluster.client()?, "default");
    /// let mut child = ConfigMap::default();
    /// child.metadata.name = Some("child".into());
    /// admin.create(&Default::default(), &child).await?;
    /// let rules = vec![PolicyRule {
    ///     api_groups: Some(vec![String::new()]),
    ///     resources: Some(vec!["configmaps".into()]),
    ///     verbs: vec!["list".into(), "watch".into()],
    ///     ..PolicyRule::default()
    /// }];
    /// let client = cluster.service_account_client("default", "watcher", rules).await?;
    /// let api: kube::Api<ConfigMap> = kube::Api::namespaced(client, "default");
    /// let mut events = watcher(api, watcher::Config::default()).default_backoff().boxed();
    /// // The names the watcher's next (re)list holds; its errors (the 410, the refused
    /// // relists) it retries.
    /// let mut next_list = async || {
    ///     let mut listed = Vec::new();
    ///     while let Some(event) = events.next().await {
    ///         match event {
    ///             Ok(watcher::Event::InitApply(cm)) => listed.push(cm.metadata.name.unwrap()),
    ///             Ok(watcher::Event::InitDone) => return listed,
    ///             Ok(watcher::Event::Delete(cm)) => panic!("a DELETED event: {cm:?}"),
    ///             _ => {}
    ///         }
    ///     }
    ///     unreachable!("a watcher's stream does not end")
    /// };
    /// assert_eq!(next_list().await, ["child"]);
    ///
    /// let gone = cluster
    ///     .relist_with_deletes(&[ObjectRef::<ConfigMap>::new("child").within("default")])
    ///     .await?;
    /// assert_eq!(gone.len(), 1);
    /// // No DELETED event: the watcher's relist shows the child gone.
    /// assert!(next_list().await.is_empty());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// A delete the server refused (but `404`), once the refusal was lifted; or the
    /// administrator's client could not be built.
    pub async fn relist_with_deletes<K>(
        &self,
        objects: &[ObjectRef<K>],
    ) -> Result<Vec<ObjectRef<K>>, ServerError>
    where
        K: kube::Resource<DynamicType = ()>,
    {
        let admin = self.client()?;
        let compact = |resource_version| match &self.inner {
            Inner::Embedded(server) => server.compact(),
            Inner::Real(real) => real.proxy.state.compact(resource_version),
        };
        faults::relist_with_deletes(self.faults(), compact, admin, objects).await
    }

    /// Drops every client connection (open watches end without a final event, hung requests go
    /// unanswered) and serves again on the same address, keeping the stored state: the embedded
    /// server restarts ([`ApiServer::restart`]); for the real one, its proxy does.
    ///
    /// # Errors
    /// When the address cannot be bound again.
    pub async fn restart(&self) -> Result<(), ServerError> {
        match &self.inner {
            Inner::Embedded(server) => server.restart().await,
            Inner::Real(real) => real.proxy.restart().await,
        }
    }

    /// Every client request so far, with the user it acted as and the status it got.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.request_log().all()
    }

    /// The request log (to clear it).
    pub fn request_log(&self) -> &RequestLog {
        match &self.inner {
            Inner::Embedded(server) => server.request_log(),
            Inner::Real(real) => &real.proxy.state.requests,
        }
    }
}

impl Real {
    /// A client configuration through the proxy acting as `identity`.
    fn config_for(&self, identity: &Identity) -> Result<kube::Config, ServerError> {
        let (token, impersonate) = self.acting_as(identity)?;
        let url = format!("https://{}", self.proxy.addr());
        let mut config = kube::Config::new(url.parse().expect("loopback URL parses"));
        config.root_cert = Some(vec![self.tls.ca_der()]);
        config.auth_info.token = Some(token.to_owned().into());
        if let Some((user, groups)) = impersonate {
            config.auth_info.impersonate = Some(user.to_owned());
            config.auth_info.impersonate_groups = Some(groups.to_vec());
        }
        Ok(config)
    }

    /// The token that acts as `identity` through the proxy, and the user and groups it
    /// impersonates, if any.
    #[allow(clippy::type_complexity)]
    fn acting_as<'a>(
        &'a self,
        identity: &'a Identity,
    ) -> Result<(&'a str, Option<(&'a str, &'a [String])>), ServerError> {
        match identity {
            Identity::Admin => Ok((&self.admin_token, None)),
            Identity::Token(token) => Ok((token, None)),
            Identity::User { user, groups } => Ok((&self.admin_token, Some((user, groups)))),
            Identity::Rules { .. } | Identity::Certificate { .. } => {
                Err(ServerError::Unsupported(format!(
                    "{identity:?}: rule-bound and client certificate identities are served by \
                     the embedded API server only"
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::{WatchStreamExt, watcher};

    use super::*;

    /// `relist_with_deletes` with the watch open (the watcher polled all along): the watch ends
    /// with 410, and the watcher learns of the delete from its relist, not from an event.
    #[tokio::test]
    async fn a_watcher_sees_objects_deleted_while_it_relists_only_in_its_relist() {
        let cluster = Cluster::start().await.expect("cluster starts");
        let admin: Api<ConfigMap> = Api::namespaced(cluster.client().unwrap(), "default");
        for name in ["gone", "kept"] {
            admin
                .create(&PostParams::default(), &named(name))
                .await
                .unwrap();
        }
        let rules = vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["configmaps".into()]),
            verbs: vec!["list".into(), "watch".into()],
            ..PolicyRule::default()
        }];
        let client = cluster
            .service_account_client("default", "watcher", rules)
            .await
            .unwrap();
        let api: Api<ConfigMap> = Api::namespaced(client, "default");
        let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
        let watching = tokio::spawn(async move {
            let mut stream = watcher(api, watcher::Config::default())
                .default_backoff()
                .boxed();
            while let Some(event) = stream.next().await {
                let _ = tx.send(event.map_err(|e| e.to_string()));
            }
        });
        let watches = || {
            cluster
                .requests()
                .iter()
                .filter(|r| r.query.contains("watch=true") && r.status == 200)
                .filter(|r| r.user == "system:serviceaccount:default:watcher")
                .count()
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while watches() == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the watch never opened"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        let gone = cluster
            .relist_with_deletes(&[
                ObjectRef::<ConfigMap>::new("gone").within("default"),
                ObjectRef::new("missing").within("default"),
            ])
            .await
            .unwrap();
        assert_eq!(gone, [ObjectRef::new("gone").within("default")]);
        assert!(
            cluster
                .faults()
                .take(&crate::faults::Matched {
                    method: &http::Method::GET,
                    path: "/api/v1/namespaces/default/configmaps",
                    resource: Some(("", "configmaps")),
                    user: "system:serviceaccount:default:watcher",
                    watch: false,
                })
                .is_none(),
            "the refusal is lifted"
        );

        // Every event up to the end of the relist that follows the initial list's.
        let mut seen = Vec::new();
        let mut lists_done = 0;
        while lists_done < 2 {
            let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
                .await
                .expect("the watcher relists")
                .expect("the watcher runs");
            match &event {
                Ok(watcher::Event::InitDone) => lists_done += 1,
                Ok(watcher::Event::Delete(cm)) => panic!("a DELETED event: {cm:?}"),
                _ => {}
            }
            seen.push(event);
        }
        let relisted: Vec<String> = seen
            .iter()
            .rev()
            .skip(1)
            .map_while(|e| match e {
                Ok(watcher::Event::InitApply(cm)) => cm.metadata.name.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(relisted, ["kept"], "{seen:?}");
        assert!(
            seen.iter()
                .any(|e| matches!(e, Err(error) if error.ends_with("Expired"))),
            "the open watch ended with 410: {seen:?}"
        );
        watching.abort();
    }
}
