//! The fault proxy: a TLS listener on loopback that forwards every request to a real
//! kube-apiserver, through the same fault stage as the in-process server's pipeline, logging
//! each request with the user it acts as. Clients reach the real backend only through it, so
//! `faults()` and `requests()` mean the same on both backends.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, Request, Response, header};
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use crate::ServerError;
use crate::accept::{Listening, accept_each};
use crate::auth::tls::Tls;
use crate::faults::{Faults, Matched};
use crate::params::is_watch;
use crate::pipeline::response::{Body, expired_watch, expiring};
use crate::pipeline::serve_with_fault;
use crate::requests::{RequestLog, RequestRecord};
use crate::routes::{Route, parse_query, parse_route};

/// What the proxy's connections share.
pub(crate) struct ProxyState {
    upstream: SocketAddr,
    connector: TlsConnector,
    acceptor: TlsAcceptor,
    pub(crate) faults: Faults,
    pub(crate) requests: RequestLog,
    /// Bearer tokens handed out by the cluster, and whom they authenticate.
    users: Mutex<HashMap<String, String>>,
    /// Bumped to end every open watch with `ERROR 410 Expired`.
    expirations: tokio::sync::watch::Sender<u64>,
    /// The resourceVersion a watch must start from at least, else it is refused with
    /// `ERROR 410 Expired` (0: any): the history before it counts as compacted.
    floor: AtomicU64,
}

impl ProxyState {
    /// Ends every open watch with `ERROR 410 Expired`.
    pub(crate) fn expire_watches(&self) {
        self.expirations.send_modify(|epoch| *epoch += 1);
    }

    /// Compacts the history before `resource_version`, as far as watches through the proxy can
    /// tell (etcd's and the watch cache's histories stay): every open watch ends with
    /// `ERROR 410 Expired`, and so does every later watch from an older resourceVersion.
    pub(crate) fn compact(&self, resource_version: u64) {
        self.floor.fetch_max(resource_version, Ordering::SeqCst);
        self.expire_watches();
    }

    /// Whether a watch with these parameters starts from a resourceVersion compacted away
    /// ([`compact`](Self::compact)); a streaming list's resourceVersion is a lower bound of its
    /// list, not a start.
    fn compacted(&self, query: &HashMap<String, String>) -> bool {
        let streaming = crate::params::query_bool(query, "sendInitialEvents") == Some(true);
        let from = query
            .get("resourceVersion")
            .and_then(|rv| rv.parse::<u64>().ok());
        !streaming && from.is_some_and(|rv| rv != 0 && rv < self.floor.load(Ordering::SeqCst))
    }

    /// Remembers that `token` authenticates `user` (for the request log and `Fault::user`).
    pub(crate) fn name_token(&self, token: &str, user: &str) {
        self.users
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.to_owned(), user.to_owned());
    }

    /// The user a request acts as: the impersonated one, else its token's.
    fn user_of(&self, headers: &HeaderMap) -> String {
        if let Some(user) = headers
            .get("impersonate-user")
            .and_then(|v| v.to_str().ok())
        {
            return user.to_owned();
        }
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .and_then(|token| {
                self.users
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(token.trim())
                    .cloned()
            })
            .unwrap_or_default()
    }
}

/// A running proxy; dropping it closes the listener and every connection.
pub(crate) struct Proxy {
    pub(crate) state: Arc<ProxyState>,
    listening: Listening,
}

impl Proxy {
    /// Listens on a free loopback port, serving `tls`'s certificate, forwarding to `upstream`
    /// (whose certificate `tls`'s CA issued).
    pub(crate) async fn start(tls: &Tls, upstream: SocketAddr) -> Result<Self, ServerError> {
        let bind = SocketAddr::from(([127, 0, 0, 1], 0));
        let listener = TcpListener::bind(bind)
            .await
            .map_err(|source| ServerError::Bind { addr: bind, source })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut client = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ServerError::Tls(e.to_string()))?
            .with_root_certificates(tls.roots().map_err(ServerError::Tls)?)
            .with_no_client_auth();
        client.alpn_protocols = vec![b"http/1.1".to_vec()];
        let state = Arc::new(ProxyState {
            upstream,
            connector: TlsConnector::from(Arc::new(client)),
            acceptor: tls.acceptor(),
            faults: Faults::default(),
            requests: RequestLog::default(),
            users: Mutex::new(HashMap::new()),
            expirations: tokio::sync::watch::channel(0).0,
            floor: AtomicU64::new(0),
        });
        let serving = state.clone();
        let listening = Listening::serve(listener, move |listener| {
            tokio::spawn(accept_loop(listener, serving.clone()))
        })
        .map_err(|source| ServerError::Bind { addr: bind, source })?;
        Ok(Self { state, listening })
    }

    /// Drops every connection (open watches end without a final event, hung requests go
    /// unanswered) and listens again on the same port: the in-process server's
    /// [`restart`](crate::ApiServer::restart), with the real server's state kept as is.
    pub(crate) async fn restart(&self) -> Result<(), ServerError> {
        self.listening
            .restart()
            .await
            .map_err(|source| ServerError::Bind {
                addr: self.addr(),
                source,
            })
    }

    /// The address the proxy listens on.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.listening.addr()
    }
}

/// Serves connections until aborted (see [`accept_each`]).
async fn accept_loop(listener: TcpListener, state: Arc<ProxyState>) {
    accept_each(listener, move |stream| {
        let state = state.clone();
        async move {
            let Ok(stream) = state.acceptor.accept(stream).await else {
                return;
            };
            let service = hyper::service::service_fn(move |req| forward(state.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
    })
    .await;
}

/// One request: matched against the faults, forwarded on a connection of its own, answered
/// (or not) as its fault says.
async fn forward(
    state: Arc<ProxyState>,
    req: Request<Incoming>,
) -> Result<Response<Body>, std::io::Error> {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or_default().to_owned();
    let user = state.user_of(req.headers());
    let route = parse_route(&path);
    let resource = match &route {
        Route::Resource(r) => Some((r.group.as_str(), r.plural.as_str())),
        _ => None,
    };
    let params = parse_query(&query);
    let watch = is_watch(&params);
    // Before the request goes upstream: an expiration while it is on its way ends it too.
    let expirations = state.expirations.subscribe();
    let fault = state.faults.take(&Matched {
        method: req.method(),
        path: &path,
        resource,
        user: &user,
        watch,
    });
    let record = RequestRecord {
        method: req.method().clone(),
        path: path.clone(),
        query: query.clone(),
        content_type: req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        user,
        status: 0,
    };
    let serve = async {
        if watch && state.compacted(&params) {
            return Ok(expired_watch());
        }
        let response = send(&state, req).await?;
        Ok(if watch {
            response.map(|body| expiring(body, expirations))
        } else {
            response
        })
    };
    serve_with_fault(fault, &state.requests, record, serve).await
}

/// Sends `req` to the upstream server on a new connection and streams its answer back.
async fn send(
    state: &ProxyState,
    req: Request<Incoming>,
) -> Result<Response<Body>, std::io::Error> {
    let tcp = TcpStream::connect(state.upstream).await?;
    let _ = tcp.set_nodelay(true);
    let name = ServerName::IpAddress(state.upstream.ip().into());
    let tls = state.connector.connect(name, tcp).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(std::io::Error::other)?;
    tokio::spawn(connection);
    let response = sender
        .send_request(req)
        .await
        .map_err(std::io::Error::other)?;
    Ok(response.map(|body| UntilError(body).boxed_unsync()))
}

/// An upstream body that ends where the upstream connection failed (the client sees the
/// answer cut short, as it would from the server itself).
struct UntilError(Incoming);

impl hyper::body::Body for UntilError {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.0)
            .poll_frame(cx)
            .map(|frame| frame.and_then(Result::ok).map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.0.size_hint()
    }
}
