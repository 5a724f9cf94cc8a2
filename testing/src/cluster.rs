//! [`Cluster`]: one entry point for a test's API server, the embedded one by default or a real
//! control plane when `KUBEWARD_TEST_APISERVER=real`, with the same clients, kubeconfig,
//! faults and request log on both — so a controller's tests run on either unchanged.

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ObjectMeta, PostParams};

use crate::auth::tls::Tls;
use crate::faults::Faults;
use crate::grant::{grant, ignore_status};
use crate::kubeconfig::{self, Credentials};
use crate::real::{ADMIN_USER, Assets, ControlPlane, Proxy};
use crate::requests::{RequestLog, RequestRecord};
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
    /// controller) from `KUBEBUILDER_ASSETS`, reached through a fault proxy.
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
    /// An embedded server started with its own options ([`ApiServer::builder`]).
    fn from(server: ApiServer) -> Self {
        Self {
            inner: Inner::Embedded(server),
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
        match backend {
            Backend::Embedded => Ok(ApiServer::start().await?.into()),
            Backend::Real => {
                let assets = Assets::from_env()?;
                let tls = Tls::new().map_err(ServerError::Tls)?;
                let admin_token = uuid::Uuid::new_v4().simple().to_string();
                let control_plane = ControlPlane::start(&assets, &tls, &admin_token).await?;
                let proxy = Proxy::start(&tls, control_plane.api).await?;
                proxy.state.name_token(&admin_token, ADMIN_USER);
                Ok(Self {
                    inner: Inner::Real(Box::new(Real {
                        proxy,
                        control_plane,
                        tls,
                        admin_token,
                    })),
                })
            }
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
        let real = match &self.inner {
            Inner::Embedded(server) => {
                return server.service_account_client(namespace, name, rules).await;
            }
            Inner::Real(real) => real,
        };
        let admin = self.client()?;
        grant(admin.clone(), namespace, name, rules).await?;
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

fn named<K: kube::Resource<DynamicType = ()> + Default>(name: &str) -> K {
    let mut object = K::default();
    *object.meta_mut() = ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    };
    object
}
