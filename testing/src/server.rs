//! The server's lifecycle: options, the loopback listener, connections, restart and shutdown,
//! and the handles tests use (clients, kubeconfig, faults, request log, compaction).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::header;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::accept::{Listening, accept_each};
use super::auth::authn::Authenticator;
use super::auth::authorizer::Identity as Grant;
use super::auth::bootstrap;
use super::auth::tls::{IssuedCertificate, Tls};
use super::auth::user::UserInfo;
use super::faults::Faults;
use super::grant::Scope;
use super::identity::Identity;
use super::kubeconfig::{self, Credentials};
use super::pipeline::handle;
use super::requests::{RequestLog, RequestRecord};
use super::shared::Shared;
use super::status::ApiError;
use super::validation::base64;
use super::watch::WatchConfig;
use crate::registry::State;
use kubeward_names::clock::{SharedClock, SystemClock};

/// Errors starting or restarting the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The loopback listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address tried.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The kube client could not be built.
    #[error("cannot build a kube client for the server: {0}")]
    Client(#[from] kube::Error),
    /// The kubeconfig could not be written.
    #[error("cannot write the kubeconfig: {0}")]
    Kubeconfig(#[source] std::io::Error),
    /// TLS could not be set up, or a certificate was asked of a server without TLS.
    #[error("TLS: {0}")]
    Tls(String),
    /// An object given to the server directly was rejected, as the API would reject it.
    #[error("rejected: {} ({})", .0.message, .0.code)]
    Rejected(ApiError),
    /// `KUBEWARD_TEST_APISERVER` names no backend.
    #[error("{0}")]
    Backend(String),
    /// The real control plane could not be found, started or reached.
    #[error("the real control plane: {0}")]
    ControlPlane(String),
    /// The backend cannot act as the identity asked for (see [`crate::Identity`]).
    #[error("{0}")]
    Unsupported(String),
}

/// Options of an [`ApiServer`].
///
/// ```no_run
/// # async fn f() -> Result<(), kubeward_testing::ServerError> {
/// use std::time::Duration;
/// let server = kubeward_testing::ApiServer::builder()
///     .event_ttl(Duration::from_secs(60))
///     .watch_history(100)
///     .start()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ApiServerBuilder {
    event_ttl: Duration,
    history: usize,
    bookmark_interval: Duration,
    clock: SharedClock,
    port: u16,
    tokens: Vec<(String, UserInfo)>,
    anonymous: bool,
    tls: bool,
    service_network: crate::kinds::service::ServiceNetwork,
    workloads: Option<crate::workloads::Workloads>,
}

impl Default for ApiServerBuilder {
    fn default() -> Self {
        Self {
            // kube-apiserver's --event-ttl default.
            event_ttl: Duration::from_secs(3600),
            history: 10_000,
            bookmark_interval: Duration::from_secs(10),
            clock: Arc::new(SystemClock),
            port: 0,
            tokens: Vec::new(),
            anonymous: false,
            tls: false,
            service_network: crate::kinds::service::ServiceNetwork::default(),
            workloads: None,
        }
    }
}

impl ApiServerBuilder {
    /// How long an event lives after its last write (default 1 h, kube-apiserver's `--event-ttl`).
    #[must_use]
    pub fn event_ttl(mut self, ttl: Duration) -> Self {
        self.event_ttl = ttl;
        self
    }

    /// Runs a simulated cluster behind the server: kube-controller-manager's workload
    /// controllers, a scheduler and the kubelets of `workloads`' nodes, so Deployments become
    /// available, Jobs complete and Services get endpoints ([`crate::workloads`]). Off by
    /// default: without it pods stay as written, as on a control plane without nodes.
    #[must_use]
    pub fn workloads(mut self, workloads: crate::workloads::Workloads) -> Self {
        self.workloads = Some(workloads);
        self
    }

    /// How many changes are kept for watches to resume from (default 10,000). A watch from a
    /// resourceVersion older than that gets `ERROR 410 Expired`.
    #[must_use]
    pub fn watch_history(mut self, changes: usize) -> Self {
        self.history = changes;
        self
    }

    /// How often watches that allow bookmarks get one (default 10 s).
    #[must_use]
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = every;
        self
    }

    /// The clock for timestamps and event TTLs (default: the system clock).
    #[must_use]
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// A fixed port on `127.0.0.1` (default 0: a free port chosen by the OS), e.g. to point a
    /// long-running kubectl session at an example operator.
    #[must_use]
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Authenticates requests bearing `token` (`Authorization: Bearer <token>`) as `user` in
    /// `groups`, plus `system:authenticated` and, for `system:serviceaccount:<ns>:<name>`, the
    /// groups of service accounts (`system:serviceaccounts`, `system:serviceaccounts:<ns>`), as
    /// kube-apiserver's token authenticators do. Its requests are authorized by RBAC from the
    /// Roles, ClusterRoles and bindings stored in the server (`kubectl apply -f rbac.yaml`).
    ///
    /// A request with an unknown token is answered 401 `Unauthorized`, configured tokens or not;
    /// once any token is configured, so is a request without one, and [`ApiServer::client`] and
    /// [`ApiServer::write_kubeconfig`] use a token minted for the administrator (`system:admin`
    /// in `system:masters`).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), kubeward_testing::ServerError> {
    /// use kubeward_testing::Identity;
    /// let server = kubeward_testing::ApiServer::builder()
    ///     .token("op-token", "system:serviceaccount:demo:op", &[])
    ///     .start()
    ///     .await?;
    /// let operator = server.client_for(&Identity::token("op-token"))?;
    /// server.write_kubeconfig_for("op.kubeconfig", &Identity::token("op-token"))?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn token(mut self, token: &str, user: &str, groups: &[&str]) -> Self {
        self.tokens
            .push((token.to_owned(), UserInfo::authenticated(user, groups)));
        self
    }

    /// With tokens configured: whether requests without credentials are served as
    /// `system:anonymous` in `system:unauthenticated` (kube-apiserver's `--anonymous-auth`)
    /// instead of answered 401 (default `false`).
    #[must_use]
    pub fn anonymous_auth(mut self, enabled: bool) -> Self {
        self.anonymous = enabled;
        self
    }

    /// Serves https (default: plain http) with a certificate authority minted at start: clients
    /// from [`ApiServer::client`] and the kubeconfigs written trust it, and
    /// [`Identity::Certificate`] clients and kubeconfigs ([`ApiServer::client_for`],
    /// [`ApiServer::write_kubeconfig_for`]) authenticate with client certificates it issues (user = common name, as
    /// kube-apiserver's x509 authenticator reads them). kubectl sends a kubeconfig's token or
    /// certificate only to https servers, so this is what kubectl needs to act as a configured
    /// identity.
    #[must_use]
    pub fn tls(mut self, enabled: bool) -> Self {
        self.tls = enabled;
        self
    }

    /// The IPv4 CIDR Services' cluster IPs are allocated from (kube-apiserver's
    /// `--service-cluster-ip-range`; default `10.0.0.0/24`, its default). Its first address is
    /// kept for the `kubernetes` Service, as kube-apiserver keeps it; the others are allocated
    /// lowest first (kube-apiserver picks at random).
    ///
    /// # Panics
    /// When `cidr` is not an IPv4 CIDR with a prefix between 1 and 29.
    #[must_use]
    pub fn service_cluster_ip_range(mut self, cidr: &str) -> Self {
        let ports = self.service_network.node_ports.clone();
        self.service_network = crate::kinds::service::ServiceNetwork::parse(cidr, ports)
            .unwrap_or_else(|why| panic!("service_cluster_ip_range: {why}"));
        self
    }

    /// The node ports NodePort and LoadBalancer Services are allocated from (kube-apiserver's
    /// `--service-node-port-range`; default `30000..=32767`), lowest first.
    #[must_use]
    pub fn service_node_port_range(mut self, ports: std::ops::RangeInclusive<u16>) -> Self {
        self.service_network.node_ports = ports;
        self
    }

    /// Starts serving on `127.0.0.1`.
    pub async fn start(self) -> Result<ApiServer, ServerError> {
        let bind: SocketAddr = ([127, 0, 0, 1], self.port).into();
        let listener = TcpListener::bind(bind)
            .await
            .map_err(|source| ServerError::Bind { addr: bind, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ServerError::Bind { addr: bind, source })?;
        let tls = if self.tls {
            Some(Tls::new().map_err(ServerError::Tls)?)
        } else {
            None
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let (compactions, _) = tokio::sync::watch::channel(0u64);
        let mut state = State::new(self.history, self.event_ttl, self.clock);
        state.service_network = self.service_network;
        bootstrap::install(&mut state);
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            faults: Faults::default(),
            requests: RequestLog::default(),
            authn: Authenticator::new(self.tokens, self.anonymous),
            tls,
            compactions,
            watch_config: WatchConfig {
                bookmark_interval: self.bookmark_interval,
            },
            url: format!("{scheme}://{addr}"),
        });
        let sweeper = tokio::spawn(sweep_events(Arc::downgrade(&shared)));
        let controllers = tokio::spawn(super::lifecycle::run(Arc::downgrade(&shared)));
        let simulation = self
            .workloads
            .map(|workloads| crate::workloads::start(&shared, workloads));
        let serving = shared.clone();
        let listening = Listening::serve(listener, move |listener| {
            tokio::spawn(accept_loop(listener, serving.clone()))
        })
        .map_err(|source| ServerError::Bind { addr: bind, source })?;
        Ok(ApiServer {
            shared,
            listening,
            sweeper,
            controllers,
            simulation,
        })
    }
}

/// An in-process Kubernetes API server on loopback.
///
/// Dropping it stops the listener and closes every connection, including open watches.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// let server = kubeward_testing::ApiServer::start().await?;
/// let cms: kube::Api<ConfigMap> = kube::Api::namespaced(server.client()?, "default");
/// let list = cms.list(&Default::default()).await?;
/// assert!(list.items.is_empty());
/// # Ok(()) }
/// ```
pub struct ApiServer {
    shared: Arc<Shared>,
    listening: Listening,
    sweeper: JoinHandle<()>,
    /// The namespace controller and the garbage collector.
    controllers: JoinHandle<()>,
    /// The simulated cluster, when [`ApiServerBuilder::workloads`] asked for one.
    simulation: Option<crate::workloads::Simulation>,
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("url", &self.shared.url)
            .finish()
    }
}

impl ApiServer {
    /// Starts a server with default options.
    pub async fn start() -> Result<Self, ServerError> {
        ApiServerBuilder::default().start().await
    }

    /// Options for a server.
    pub fn builder() -> ApiServerBuilder {
        ApiServerBuilder::default()
    }

    /// Stops (`false`) or starts again (`true`) the kubelet of the simulated cluster's node
    /// `node` ([`ApiServerBuilder::workloads`]), as a node that loses power or its network
    /// does:
    ///
    /// - stopped, the kubelet posts nothing: its pods keep their last status; once
    ///   `--node-monitor-grace-period` (50 s) passed on the server's clock, the node lifecycle
    ///   controller sets the node's conditions `Unknown` (`NodeStatusUnknown`, "Kubelet stopped
    ///   posting node status."), its pods' `Ready` condition `False`, and taints it
    ///   `node.kubernetes.io/unreachable` (`NoSchedule` and `NoExecute`); the taint eviction
    ///   controller then deletes the pods that do not tolerate the taint, after their
    ///   `tolerationSeconds` (300 s by default) on the clock; they stay `Terminating`, as no
    ///   kubelet confirms their end;
    /// - started, the kubelet posts its node `Ready` (the taints go) and syncs its pods again:
    ///   pods being deleted are removed, the others report `Ready` again.
    ///
    /// Does nothing without a simulated cluster; a node that is not declared has no kubelet to
    /// stop.
    pub fn set_node_ready(&self, node: &str, ready: bool) {
        if let Some(simulation) = &self.simulation {
            simulation.set_node_ready(&self.shared, node, ready);
        }
    }

    /// The base URL, `http://127.0.0.1:<port>` (`https` with [`ApiServerBuilder::tls`]).
    pub fn url(&self) -> String {
        self.shared.url.clone()
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.listening.addr()
    }

    /// A client configuration for the server, bearing `token` if any.
    fn config(&self, token: Option<&str>) -> Result<kube::Config, ServerError> {
        // The URL is built from a SocketAddr, so it always parses.
        let uri: http::Uri = self.shared.url.parse().expect("server URL parses");
        let mut config = kube::Config::new(uri);
        if let Some(tls) = &self.shared.tls {
            config.root_cert = Some(vec![tls.ca_der()]);
        }
        if let Some(token) = token {
            let value = http::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|e| ServerError::Kubeconfig(std::io::Error::other(e)))?;
            config.headers.push((header::AUTHORIZATION, value));
        }
        Ok(config)
    }

    /// How a client or kubeconfig authenticates as `identity`: a token (configured, the
    /// administrator's, or minted for the identity), a client certificate, or nothing.
    fn credentials(&self, identity: &Identity) -> Result<Option<Credential>, ServerError> {
        let mint = |grant: Grant| Some(Credential::Token(self.shared.authn.mint(grant)));
        Ok(match identity {
            Identity::Admin => self
                .shared
                .authn
                .admin_token()
                .map(|token| Credential::Token(token.to_owned())),
            Identity::Token(token) => Some(Credential::Token(token.clone())),
            Identity::User { user, groups } => mint(Grant::rbac(UserInfo::authenticated(
                user,
                &borrowed(groups),
            ))),
            Identity::Rules { user, rules } => mint(Grant {
                user: UserInfo::authenticated(user, &[]),
                rules: Some(rules.clone().into()),
            }),
            Identity::Certificate { user, groups } => {
                let tls = self.shared.tls.as_ref().ok_or_else(|| {
                    ServerError::Tls(
                        "the server serves plain http: start it with .tls(true)".into(),
                    )
                })?;
                let certificate = tls
                    .issue(&UserInfo::authenticated(user, &borrowed(groups)))
                    .map_err(ServerError::Tls)?;
                Some(Credential::Certificate(certificate))
            }
        })
    }

    /// A client acting as `identity` (see [`Identity`]). A [`Identity::Certificate`] needs a
    /// server started with [`ApiServerBuilder::tls`].
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kubeward_testing::Identity;
    /// let server = kubeward_testing::ApiServer::start().await?;
    /// let operator = server.client_for(&Identity::service_account("default", "op"))?;
    /// let cms: kube::Api<ConfigMap> = kube::Api::namespaced(operator, "default");
    /// // 403 until a RoleBinding grants the service account `list` on configmaps
    /// assert!(cms.list(&Default::default()).await.is_err());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// When the client cannot be built, or a certificate is asked of a plain http server.
    pub fn client_for(&self, identity: &Identity) -> Result<kube::Client, ServerError> {
        let config = match self.credentials(identity)? {
            None => self.config(None)?,
            Some(Credential::Token(token)) => self.config(Some(&token))?,
            Some(Credential::Certificate(certificate)) => {
                let mut config = self.config(None)?;
                config.auth_info.client_certificate_data =
                    Some(base64::encode(certificate.cert_pem.as_bytes()));
                config.auth_info.client_key_data =
                    Some(base64::encode(certificate.key_pem.as_bytes()).into());
                config
            }
        };
        Ok(kube::Client::try_from(config)?)
    }

    /// A client with full access: the cluster administrator, [`Identity::Admin`] (without
    /// credentials or, once tokens are configured, with the administrator's token).
    pub fn client(&self) -> Result<kube::Client, ServerError> {
        self.client_for(&Identity::Admin)
    }

    /// A client authenticated as the service account `namespace/name`, granted exactly `rules`
    /// through the server's RBAC: a ClusterRole and a ClusterRoleBinding named
    /// `kubeward-testing:<namespace>:<name>` are stored (replacing any of that name), as `kubectl
    /// apply` of a controller's generated role and its binding would, and the client acts as
    /// [`Identity::service_account`]. Run a controller in a test as this client, with the rules
    /// its declaration generates, and a verb the generated RBAC lacks fails the test with the
    /// 403 a cluster would answer — not a customer's deployment.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use k8s_openapi::api::rbac::v1::PolicyRule;
    /// let server = kubeward_testing::ApiServer::start().await?;
    /// let read = PolicyRule {
    ///     api_groups: Some(vec![String::new()]),
    ///     resources: Some(vec!["configmaps".into()]),
    ///     verbs: vec!["list".into()],
    ///     ..PolicyRule::default()
    /// };
    /// let operator = server.service_account_client("default", "op", vec![read]).await?;
    /// let cms: kube::Api<ConfigMap> = kube::Api::namespaced(operator, "default");
    /// cms.list(&Default::default()).await?; // allowed
    /// assert!(cms.get("settings").await.is_err()); // 403: `get` was not granted
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// When the role or the binding cannot be stored, or the client cannot be built.
    pub async fn service_account_client(
        &self,
        namespace: &str,
        name: &str,
        rules: Vec<PolicyRule>,
    ) -> Result<kube::Client, ServerError> {
        self.granted_client(namespace, name, rules, Scope::Cluster)
            .await
    }

    /// A client authenticated as the service account `namespace/name`, granted exactly `rules`
    /// in `namespace` only: a Role and a RoleBinding there, both named
    /// `kubeward-testing:<name>` (replacing any of that name), as a namespaced operator's RBAC
    /// is installed. The namespace is created if missing. Anything the rules name in another
    /// namespace, or cluster-wide, is answered 403.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use k8s_openapi::api::rbac::v1::PolicyRule;
    ///
    /// let server = kubeward_testing::ApiServer::start().await?;
    /// let read = PolicyRule {
    ///     api_groups: Some(vec![String::new()]),
    ///     resources: Some(vec!["configmaps".into()]),
    ///     verbs: vec!["list".into()],
    ///     ..PolicyRule::default()
    /// };
    /// let operator = server.namespaced_service_account_client("team-a", "op", vec![read]).await?;
    /// let here: kube::Api<ConfigMap> = kube::Api::namespaced(operator.clone(), "team-a");
    /// here.list(&Default::default()).await?; // allowed in its namespace
    /// let there: kube::Api<ConfigMap> = kube::Api::namespaced(operator, "default");
    /// assert!(there.list(&Default::default()).await.is_err()); // 403 elsewhere
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// When the namespace, the role or the binding cannot be stored, or the client cannot be
    /// built.
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
    pub(crate) async fn granted_client(
        &self,
        namespace: &str,
        name: &str,
        rules: Vec<PolicyRule>,
        scope: Scope,
    ) -> Result<kube::Client, ServerError> {
        super::grant::grant(self.client()?, namespace, name, rules, scope).await?;
        self.client_for(&Identity::service_account(namespace, name))
    }

    /// Writes a kubeconfig that points `kubectl --kubeconfig <path>` at this server acting as
    /// `identity` (see [`Identity`]). kubectl sends a kubeconfig's token or certificate only to
    /// https servers ([`ApiServerBuilder::tls`]): over plain http its requests bear no
    /// credentials (the administrator's, unless tokens are configured).
    ///
    /// # Errors
    /// When the file cannot be written, or a certificate is asked of a plain http server.
    pub fn write_kubeconfig_for(
        &self,
        path: impl AsRef<Path>,
        identity: &Identity,
    ) -> Result<(), ServerError> {
        let credential = self.credentials(identity)?;
        let credentials = credential.as_ref().map(|c| match c {
            Credential::Token(token) => Credentials::Token(token),
            Credential::Certificate(certificate) => Credentials::Certificate(certificate),
        });
        let ca = self.shared.tls.as_ref().map(Tls::ca_pem);
        let text = kubeconfig::render(&self.shared.url, ca.as_deref(), credentials);
        std::fs::write(path, text).map_err(ServerError::Kubeconfig)
    }

    /// Writes a kubeconfig that points `kubectl --kubeconfig <path>` at this server as the
    /// cluster administrator, [`Identity::Admin`] (see [`ApiServer::client`]).
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), ServerError> {
        self.write_kubeconfig_for(path, &Identity::Admin)
    }

    /// The fault rules.
    pub fn faults(&self) -> &Faults {
        &self.shared.faults
    }

    /// Every request served so far.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.requests.all()
    }

    /// The request log (to clear it).
    pub fn request_log(&self) -> &RequestLog {
        &self.shared.requests
    }

    /// Drops the watch history, as an etcd compaction does, and ends every open watch with an
    /// `ERROR` event carrying `410 Expired`: watchers must relist.
    pub fn compact(&self) {
        self.shared.lock().store.compact();
        self.shared.compactions.send_modify(|epoch| *epoch += 1);
    }

    /// Deletes `objects` (all of kind `K`) while every watch relists, so that watchers learn of
    /// the deletes from their relist only, never from a `DELETED` event: while every `GET` of
    /// `K`'s resource by any user but the administrator is refused with `500`, the history is
    /// compacted ([`ApiServer::compact`]: every open watch ends with `ERROR 410 Expired`), the
    /// administrator deletes the objects and the history is compacted again (a watch from
    /// before the deletes gets `410` too); then the refusal is lifted. Returns the objects
    /// deleted (not those already gone). The contract and an example are
    /// [`Cluster::relist_with_deletes`](crate::Cluster::relist_with_deletes)'s.
    ///
    /// # Errors
    /// A delete the server refused (but `404`), once the refusal was lifted.
    pub async fn relist_with_deletes<K>(
        &self,
        objects: &[kube::runtime::reflector::ObjectRef<K>],
    ) -> Result<Vec<kube::runtime::reflector::ObjectRef<K>>, ServerError>
    where
        K: kube::Resource<DynamicType = ()>,
    {
        let admin = self.client()?;
        super::faults::relist_with_deletes(self.faults(), |_| self.compact(), admin, objects).await
    }

    /// Registers a CustomResourceDefinition as if it had been POSTed (it is Established at once).
    pub fn install_crd(
        &self,
        crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    ) -> Result<(), ServerError> {
        let value = serde_json::to_value(crd).map_err(|e| {
            ServerError::Rejected(ApiError::bad_request(format!("unserializable CRD: {e}")))
        })?;
        self.shared
            .lock()
            .install_crd(value)
            .map(|_| ())
            .map_err(ServerError::Rejected)
    }

    /// The stored object as served at `api_version` (`"v1"`, `"group/version"`), if any.
    pub fn object(
        &self,
        api_version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let state = self.shared.lock();
        let info = state.resource(group, version, plural)?;
        state.get(&info, namespace, name).ok()
    }

    /// Every stored object of a resource as served at `api_version`, in one namespace or all,
    /// ordered by namespace and name. Empty if the resource is not served.
    pub fn objects(&self, api_version: &str, plural: &str, namespace: Option<&str>) -> Vec<Value> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let state = self.shared.lock();
        let Some(info) = state.resource(group, version, plural) else {
            return Vec::new();
        };
        state
            .store
            .list(&info.storage, namespace)
            .map(|o| State::to_view(&info, o))
            .collect()
    }

    /// The current cluster-wide resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().store.current_rv()
    }

    /// Stops serving and waits until the listener is closed and every connection (including
    /// open watches) is dropped. Dropping the server does the same without waiting.
    pub async fn shutdown(self) {
        self.sweeper.abort();
        self.controllers.abort();
        self.listening.stop().await;
    }

    /// Stops serving, closes every connection (open watches end without a final event), and
    /// serves the same stored state again on the same port.
    pub async fn restart(&self) -> Result<(), ServerError> {
        self.listening
            .restart()
            .await
            .map_err(|source| ServerError::Bind {
                addr: self.addr(),
                source,
            })
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.sweeper.abort();
        self.controllers.abort();
        if let Some(simulation) = &self.simulation {
            simulation.abort();
        }
    }
}

async fn sweep_events(shared: std::sync::Weak<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.lock().expire_events();
    }
}

/// A credential a client or kubeconfig presents.
enum Credential {
    /// A bearer token.
    Token(String),
    /// A client certificate and its key.
    Certificate(IssuedCertificate),
}

/// `groups` as the `&str`s [`UserInfo::authenticated`] takes.
fn borrowed(groups: &[String]) -> Vec<&str> {
    groups.iter().map(String::as_str).collect()
}

/// Serves HTTP/1.1 requests on one connection, whose verified client certificate (if any)
/// names `client`.
async fn serve_connection<S>(stream: S, shared: Arc<Shared>, client: Option<UserInfo>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let client = client.map(Arc::new);
    let service = hyper::service::service_fn(move |req| {
        let (shared, client) = (shared.clone(), client.clone());
        async move { handle(shared, req, client.as_deref()).await }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Serves connections until aborted (see [`accept_each`]).
async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    accept_each(listener, move |stream| {
        let shared = shared.clone();
        async move {
            let Some(tls) = &shared.tls else {
                return serve_connection(stream, shared, None).await;
            };
            // A failed handshake (an unknown client certificate) ends the connection.
            let Ok(stream) = tls.acceptor().accept(stream).await else {
                return;
            };
            let client = stream
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|certs| certs.first())
                .and_then(|cert| tls.user_of(cert));
            serve_connection(stream, shared, client).await;
        }
    })
    .await;
}
