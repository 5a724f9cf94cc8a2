//! The HTTP front of the emulator: listener lifecycle, routing, content negotiation, faults,
//! authorization and the request log. The semantics live in [`super::api`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use super::api::{ListParams, PatchType, State, WriteOptions};
use super::apply::manager_or_user_agent;
use super::faults::{FaultAction, Faults};
use super::requests::{RequestLog, RequestRecord};
use super::status::ApiError;
use super::watch::{self, WatchConfig, WatchRequest};
use super::{discovery, kubeconfig, openapi, table};
use crate::clock::{SharedClock, SystemClock};

type Body = UnsyncBoxBody<Bytes, Infallible>;

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
    /// An object given to the server directly was rejected, as the API would reject it.
    #[error("rejected: {} ({})", .0.message, .0.code)]
    Rejected(ApiError),
}

/// Options of an [`ApiServer`].
///
/// ```no_run
/// # async fn f() -> Result<(), kubeward::testing::ServerError> {
/// use std::time::Duration;
/// let server = kubeward::testing::ApiServer::builder()
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

    /// Starts serving on `127.0.0.1`.
    pub async fn start(self) -> Result<ApiServer, ServerError> {
        let addr: SocketAddr = ([127, 0, 0, 1], self.port).into();
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ServerError::Bind { addr, source })?;
        let (compactions, _) = tokio::sync::watch::channel(0u64);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(self.history, self.event_ttl, self.clock)),
            faults: Faults::default(),
            requests: RequestLog::default(),
            users: Mutex::new(HashMap::new()),
            compactions,
            watch_config: WatchConfig {
                bookmark_interval: self.bookmark_interval,
            },
            url: format!("http://{addr}"),
        });
        let sweeper = tokio::spawn(sweep_events(Arc::downgrade(&shared)));
        let accept = tokio::spawn(accept_loop(listener, shared.clone()));
        Ok(ApiServer {
            shared,
            addr,
            accept: Mutex::new(Some(accept)),
            sweeper,
        })
    }
}

pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    pub(crate) faults: Faults,
    pub(crate) requests: RequestLog,
    /// Bearer token -> (user, rules).
    pub(crate) users: Mutex<HashMap<String, (String, Vec<PolicyRule>)>>,
    compactions: tokio::sync::watch::Sender<u64>,
    watch_config: WatchConfig,
    url: String,
}

impl Shared {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every write is applied to a clone-free path that cannot panic halfway through an
        // object; a poisoned lock only means a test thread panicked elsewhere.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// An in-process Kubernetes API server on loopback.
///
/// Dropping it stops the listener and closes every connection, including open watches.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// let server = kubeward::testing::ApiServer::start().await?;
/// let cms: kube::Api<ConfigMap> = kube::Api::namespaced(server.client()?, "default");
/// let list = cms.list(&Default::default()).await?;
/// assert!(list.items.is_empty());
/// # Ok(()) }
/// ```
pub struct ApiServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    accept: Mutex<Option<JoinHandle<()>>>,
    sweeper: JoinHandle<()>,
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

    /// The base URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        self.shared.url.clone()
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn config(&self) -> kube::Config {
        // The URL is built from a SocketAddr, so it always parses.
        let uri: http::Uri = self.shared.url.parse().expect("server URL parses");
        kube::Config::new(uri)
    }

    /// A client with full access (no credentials: the server treats anonymous as admin).
    pub fn client(&self) -> Result<kube::Client, ServerError> {
        Ok(kube::Client::try_from(self.config())?)
    }

    /// A client authenticated as `user` whose requests are authorized against `rules` (RBAC
    /// `PolicyRule`s): requests outside them get 403 Forbidden with the real message.
    pub fn client_with_rules(
        &self,
        user: &str,
        rules: Vec<PolicyRule>,
    ) -> Result<kube::Client, ServerError> {
        let token = uuid::Uuid::new_v4().simple().to_string();
        self.shared
            .users
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone(), (user.to_string(), rules));
        let mut config = self.config();
        let value = http::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|e| ServerError::Kubeconfig(std::io::Error::other(e)))?;
        config.headers.push((header::AUTHORIZATION, value));
        Ok(kube::Client::try_from(config)?)
    }

    /// Writes a kubeconfig that points `kubectl --kubeconfig <path>` at this server.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), ServerError> {
        std::fs::write(path, kubeconfig::render(&self.shared.url)).map_err(ServerError::Kubeconfig)
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

    /// The current cluster-wide resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().store.current_rv()
    }

    /// Stops serving and waits until the listener is closed and every connection (including
    /// open watches) is dropped. Dropping the server does the same without waiting.
    pub async fn shutdown(self) {
        self.sweeper.abort();
        let handle = self.accept.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = handle {
            handle.abort();
            let _ = handle.await;
        }
    }

    /// Stops serving, closes every connection (open watches end without a final event), and
    /// serves the same stored state again on the same port.
    pub async fn restart(&self) -> Result<(), ServerError> {
        let handle = self.accept.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = handle {
            handle.abort();
            let _ = handle.await;
        }
        let listener = TcpListener::bind(self.addr)
            .await
            .map_err(|source| ServerError::Bind {
                addr: self.addr,
                source,
            })?;
        let accept = tokio::spawn(accept_loop(listener, self.shared.clone()));
        *self.accept.lock().unwrap_or_else(|p| p.into_inner()) = Some(accept);
        Ok(())
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.sweeper.abort();
        if let Some(handle) = self.accept.lock().unwrap_or_else(|p| p.into_inner()).take() {
            handle.abort();
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

/// Accepts connections until aborted; aborting drops the `JoinSet`, which aborts every
/// connection task (and so every open watch).
async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let shared = shared.clone();
                        async move { handle(shared, req).await }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// A response body fed by a channel (watch streams).
struct ChannelBody(mpsc::Receiver<Bytes>);

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

fn json_response(status: u16, body: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(bytes)).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

fn error_response(err: &ApiError) -> Response<Body> {
    json_response(err.code, &err.to_status())
}

/// The parsed request path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    Root,
    Version,
    Health,
    CoreVersions,
    Groups,
    Group(String),
    GroupVersion(String, String),
    OpenApi(String),
    Resource(ResourcePath),
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) plural: String,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

fn parse_route(path: &str) -> Route {
    let segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let (group, version, rest) = match s.as_slice() {
        [] => return Route::Root,
        ["version"] => return Route::Version,
        ["healthz" | "readyz" | "livez", ..] => return Route::Health,
        ["openapi", "v3"] => return Route::OpenApi(String::new()),
        ["openapi", "v3", rest @ ..] => return Route::OpenApi(rest.join("/")),
        ["openapi", ..] => return Route::Unknown,
        ["api"] => return Route::CoreVersions,
        ["api", v] => return Route::GroupVersion(String::new(), v.to_string()),
        ["apis"] => return Route::Groups,
        ["apis", g] => return Route::Group(g.to_string()),
        ["apis", g, v] => return Route::GroupVersion(g.to_string(), v.to_string()),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Route::Unknown,
    };
    let namespaced = rest.len() >= 3
        && rest[0] == "namespaces"
        && !(rest.len() == 3 && matches!(rest[2], "status" | "finalize"));
    let (namespace, rest) = if namespaced {
        (Some(rest[1].to_string()), &rest[2..])
    } else {
        (None, rest)
    };
    if rest.is_empty() || rest.len() > 3 {
        return Route::Unknown;
    }
    Route::Resource(ResourcePath {
        group: group.into(),
        version: version.into(),
        namespace,
        plural: rest[0].into(),
        name: rest.get(1).map(|s| s.to_string()),
        subresource: rest.get(2).map(|s| s.to_string()),
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(query: &str) -> HashMap<String, String> {
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (
                percent_decode(&k.replace('+', " ")),
                percent_decode(&v.replace('+', " ")),
            )
        })
        .collect()
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Body>, std::io::Error> {
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Err(std::io::Error::other(e)),
    };
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or_default().to_string();
    let route = parse_route(&path);
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let token = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let identity = token.and_then(|t| {
        shared
            .users
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&t)
            .cloned()
    });
    let user = identity
        .as_ref()
        .map(|(u, _)| u.clone())
        .unwrap_or_else(|| "system:admin".into());
    let mut record = RequestRecord {
        method: parts.method.clone(),
        path: path.clone(),
        query: query.clone(),
        content_type: content_type.clone(),
        user: user.clone(),
        status: 0,
    };
    let resource = match &route {
        Route::Resource(r) => Some((r.group.as_str(), r.plural.as_str())),
        _ => None,
    };
    if let Some(action) = shared.faults.take(&parts.method, &path, resource) {
        match action {
            FaultAction::Latency(d) => tokio::time::sleep(d).await,
            FaultAction::Hang => {
                shared.requests.push(record);
                std::future::pending::<()>().await;
                unreachable!("pending never completes");
            }
            FaultAction::Status(code) => {
                record.status = code;
                shared.requests.push(record);
                return Ok(error_response(&ApiError::for_code(code)));
            }
            FaultAction::CloseConnection => {
                shared.requests.push(record);
                return Err(std::io::Error::other("injected fault: connection closed"));
            }
        }
    }
    let query_map = parse_query(&query);
    let response = match (&route, identity) {
        (Route::Resource(r), Some((_, rules))) => {
            match super::authz::authorize(&user, &rules, &parts.method, r, &path, &query_map) {
                Ok(()) => route_request(
                    &shared,
                    &parts.method,
                    &parts.headers,
                    &route,
                    &query_map,
                    &body,
                ),
                Err(message) => error_response(&ApiError::forbidden(message)),
            }
        }
        _ => route_request(
            &shared,
            &parts.method,
            &parts.headers,
            &route,
            &query_map,
            &body,
        ),
    };
    record.status = response.status().as_u16();
    shared.requests.push(record);
    Ok(response)
}

fn route_request(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    route: &Route,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> Response<Body> {
    let state = || shared.lock();
    match route {
        Route::Root => json_response(
            200,
            &json!({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz", "/version"]}),
        ),
        Route::Version => json_response(200, &discovery::version()),
        Route::Health => Response::builder()
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Full::new(Bytes::from_static(b"ok")).boxed_unsync())
            .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync())),
        Route::CoreVersions => json_response(
            200,
            &discovery::core_versions(&shared.url.replace("http://", "")),
        ),
        Route::Groups => json_response(200, &discovery::group_list(&state().registry)),
        Route::Group(g) => match discovery::group(&state().registry, g) {
            Some(v) => json_response(200, &v),
            None => error_response(&ApiError::no_route()),
        },
        Route::GroupVersion(g, v) => match discovery::resource_list(&state().registry, g, v) {
            Some(v) => json_response(200, &v),
            None => error_response(&ApiError::no_route()),
        },
        Route::OpenApi(p) if p.is_empty() => json_response(200, &openapi::root(&state().registry)),
        Route::OpenApi(p) => match openapi::group_version(&state().registry, p) {
            Some(v) => json_response(200, &v),
            None => error_response(&ApiError::no_route()),
        },
        Route::Unknown => error_response(&ApiError::no_route()),
        Route::Resource(r) => {
            let result = resource_request(shared, method, headers, r, query, body);
            // The dry-run flag lives only as long as the request that set it.
            shared.lock().dry_run = false;
            match result {
                Ok(resp) => resp,
                Err(e) => error_response(&e),
            }
        }
    }
}

fn write_options(headers: &HeaderMap, query: &HashMap<String, String>) -> WriteOptions {
    let given = query.get("fieldManager").filter(|m| !m.is_empty());
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    WriteOptions {
        manager: manager_or_user_agent(given.map(String::as_str), user_agent),
        manager_given: given.is_some(),
        force: query.get("force").map(|f| f == "true"),
    }
}

/// `ValidateListOptions` for watches: streaming lists need `resourceVersionMatch=NotOlderThan`
/// and bookmarks; `resourceVersionMatch` is otherwise forbidden on a watch.
fn validate_watch_options(query: &HashMap<String, String>) -> Result<(), ApiError> {
    let send_initial = query.get("sendInitialEvents").map(String::as_str);
    let version_match = query
        .get("resourceVersionMatch")
        .map(String::as_str)
        .filter(|m| !m.is_empty());
    let bookmarks = query
        .get("allowWatchBookmarks")
        .is_some_and(|b| b == "true");
    let mut causes = Vec::new();
    let mut cause = |reason: &str, field: &str, message: &str| {
        causes.push(super::status::Cause {
            reason: reason.into(),
            message: message.into(),
            field: field.into(),
        })
    };
    match send_initial {
        Some(_) => {
            if version_match != Some("NotOlderThan") {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                );
            }
            if !bookmarks {
                cause(
                    "FieldValueRequired",
                    "allowWatchBookmarks",
                    "Required value: sendInitialEvents requires setting allowWatchBookmarks to true",
                );
            }
        }
        None if version_match.is_some() => cause(
            "FieldValueForbidden",
            "resourceVersionMatch",
            "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
        None => {}
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            super::status::Qualified {
                group: "meta.k8s.io",
                name: "ListOptions",
            },
            "",
            causes,
        ))
    }
}

fn media_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| {
            ct.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
}

fn decode_body(headers: &HeaderMap, body: &Bytes) -> Result<Value, ApiError> {
    match media_type(headers).as_deref() {
        None | Some("application/json") | Some("*/*") => {}
        Some(other) => {
            return Err(ApiError::unsupported_media_type(
                other,
                &[
                    "application/json",
                    "application/yaml",
                    "application/vnd.kubernetes.protobuf",
                ],
            ));
        }
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the object provided is unrecognized: {e}")))
}

fn resource_request(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    r: &ResourcePath,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    let mut state = shared.lock();
    state.expire_events();
    state.dry_run = false;
    if let Some(dry_run) = query.get("dryRun") {
        if dry_run != "All" {
            // ValidateDryRun.
            let options = match *method {
                Method::POST => "CreateOptions",
                Method::PUT => "UpdateOptions",
                Method::DELETE => "DeleteOptions",
                _ => "PatchOptions",
            };
            return Err(ApiError::invalid(
                super::status::Qualified {
                    group: "meta.k8s.io",
                    name: options,
                },
                "",
                vec![super::status::Cause {
                    reason: "FieldValueNotSupported".into(),
                    message: format!("Unsupported value: \"{dry_run}\": supported values: \"All\""),
                    field: "dryRun".into(),
                }],
            ));
        }
        state.dry_run = true;
    }
    let info = state
        .resource(&r.group, &r.version, &r.plural)
        .ok_or_else(ApiError::no_route)?;
    match r.subresource.as_deref() {
        None => {}
        Some("status") if info.status_subresource => {}
        Some(_) => return Err(ApiError::no_route()),
    }
    let ns = r.namespace.as_deref();
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    // The first media type a client lists is the one it prefers.
    let preferred = accept.split(',').next().unwrap_or_default();
    let as_table = preferred.contains("as=Table");
    let metadata_only = preferred.contains("as=PartialObjectMetadata");
    let list_params = ListParams {
        label_selector: query.get("labelSelector").map(String::as_str),
        field_selector: query.get("fieldSelector").map(String::as_str),
        limit: query.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0),
        continue_token: query.get("continue").map(String::as_str),
    };
    let (code, value) = match (method, r.name.as_deref()) {
        (&Method::GET, Some(name)) => {
            let obj = state.get(&info, ns, name)?;
            if as_table {
                (
                    200,
                    table::table(
                        &info,
                        std::slice::from_ref(&obj),
                        None,
                        query,
                        state.clock.now(),
                    ),
                )
            } else if metadata_only {
                (200, table::partial(&obj))
            } else {
                (200, obj)
            }
        }
        (&Method::GET, None) => {
            if matches!(query.get("watch").map(String::as_str), Some("true" | "1")) {
                let filter = super::api::Filter::parse(
                    &info,
                    list_params.label_selector,
                    list_params.field_selector,
                )?;
                if ns.is_some() && !info.namespaced {
                    return Err(ApiError::no_route());
                }
                drop(state);
                validate_watch_options(query)?;
                let request = WatchRequest {
                    info: info.clone(),
                    namespace: r.namespace.clone(),
                    resource_version: query.get("resourceVersion").cloned(),
                    send_initial_events: query
                        .get("sendInitialEvents")
                        .is_some_and(|v| v == "true"),
                    bookmarks: query
                        .get("allowWatchBookmarks")
                        .is_some_and(|v| v == "true"),
                    timeout: query
                        .get("timeoutSeconds")
                        .and_then(|t| t.parse::<u64>().ok())
                        .map(Duration::from_secs),
                    filter,
                    metadata_only,
                };
                let rx = watch::start(
                    &shared.state,
                    request,
                    shared.watch_config,
                    shared.compactions.subscribe(),
                );
                let response = Response::builder()
                    .status(200)
                    .header(header::CONTENT_TYPE, "application/json")
                    .header(header::CACHE_CONTROL, "no-cache, private")
                    .body(ChannelBody(rx).boxed_unsync())
                    .map_err(|e| ApiError::internal(e.to_string()))?;
                return Ok(response);
            }
            let list = state.list(&info, ns, &list_params)?;
            if as_table {
                let items = list["items"].as_array().cloned().unwrap_or_default();
                (
                    200,
                    table::table(
                        &info,
                        &items,
                        Some(&list["metadata"]),
                        query,
                        state.clock.now(),
                    ),
                )
            } else if metadata_only {
                (200, table::partial_list(&list))
            } else {
                (200, list)
            }
        }
        (&Method::POST, None) if r.subresource.is_none() => {
            let obj = decode_body(headers, body)?;
            (
                201,
                state.create(&info, ns, obj, &write_options(headers, query))?,
            )
        }
        (&Method::PUT, Some(name)) => {
            let obj = decode_body(headers, body)?;
            (
                200,
                state.update(
                    &info,
                    ns,
                    name,
                    r.subresource.as_deref(),
                    obj,
                    &write_options(headers, query),
                )?,
            )
        }
        (&Method::PATCH, Some(name)) => {
            let patch_type = match media_type(headers).as_deref() {
                Some("application/json-patch+json") => PatchType::Json,
                Some("application/merge-patch+json") => PatchType::Merge,
                Some("application/apply-patch+yaml") => PatchType::Apply,
                Some("application/strategic-merge-patch+json") => PatchType::Strategic,
                other => {
                    return Err(ApiError::unsupported_media_type(
                        other.unwrap_or_default(),
                        &[
                            "application/json-patch+json",
                            "application/merge-patch+json",
                            "application/apply-patch+yaml",
                            "application/strategic-merge-patch+json",
                        ],
                    ));
                }
            };
            let (out, created) = state.patch(
                &info,
                ns,
                name,
                r.subresource.as_deref(),
                patch_type,
                body,
                &write_options(headers, query),
            )?;
            // An apply that created the object answers 201 like a POST.
            (if created { 201 } else { 200 }, out)
        }
        (&Method::DELETE, Some(name)) if r.subresource.is_none() => {
            let options: Value = if body.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(body).map_err(|e| {
                    ApiError::bad_request(format!("error decoding DeleteOptions: {e}"))
                })?
            };
            // DeleteOptions may carry dryRun in the body instead of the query.
            if options["dryRun"]
                .as_array()
                .is_some_and(|d| d.iter().any(|v| v == "All"))
            {
                state.dry_run = true;
            }
            (200, state.delete(&info, ns, name, &options)?)
        }
        (&Method::DELETE, None) => (200, state.delete_collection(&info, ns, &list_params)?),
        _ => return Err(ApiError::method_not_allowed()),
    };
    // Serialize outside the lock: other requests need not wait for a large list's bytes.
    drop(state);
    Ok(json_response(code, &value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(
        group: &str,
        ns: Option<&str>,
        plural: &str,
        name: Option<&str>,
        sub: Option<&str>,
    ) -> Route {
        Route::Resource(ResourcePath {
            group: group.into(),
            version: "v1".into(),
            namespace: ns.map(Into::into),
            plural: plural.into(),
            name: name.map(Into::into),
            subresource: sub.map(Into::into),
        })
    }

    #[test]
    fn paths_route_like_the_apiserver_request_info_factory() {
        assert_eq!(
            parse_route("/api/v1/namespaces"),
            resource("", None, "namespaces", None, None)
        );
        assert_eq!(
            parse_route("/api/v1/namespaces/default"),
            resource("", None, "namespaces", Some("default"), None)
        );
        assert_eq!(
            parse_route("/api/v1/namespaces/team/status"),
            resource("", None, "namespaces", Some("team"), Some("status"))
        );
        assert_eq!(
            parse_route("/api/v1/namespaces/default/configmaps/a"),
            resource("", Some("default"), "configmaps", Some("a"), None)
        );
        assert_eq!(
            parse_route("/apis/demo.kubeward.dev/v1/namespaces/default/rollouts/web/status"),
            resource(
                "demo.kubeward.dev",
                Some("default"),
                "rollouts",
                Some("web"),
                Some("status")
            )
        );
        assert_eq!(
            parse_route("/apis/demo.kubeward.dev/v1/rollouts"),
            resource("demo.kubeward.dev", None, "rollouts", None, None)
        );
        assert_eq!(
            parse_route("/apis/g/v1"),
            Route::GroupVersion("g".into(), "v1".into())
        );
        assert_eq!(parse_route("/version"), Route::Version);
        assert_eq!(parse_route("/nonsense/path"), Route::Unknown);
    }

    #[test]
    fn query_values_are_percent_decoded() {
        let q =
            parse_query("labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1&bad=%zz&trailing=%4");
        assert_eq!(q["labelSelector"], "app=web,tier in (a)");
        assert_eq!(q["watch"], "1");
        assert_eq!(q["bad"], "%zz");
        assert_eq!(q["trailing"], "%4");
    }
}
