//! The operations endpoint of a controller process: one small HTTP server with `/metrics`
//! (feature `prometheus`), `/healthz` (every controller's run loop is alive) and `/readyz` (every
//! controller is ready: its watch has listed its objects, or it is a standby waiting for the
//! lease).
//!
//! ```no_run
//! # async fn run(controller: kubeward::controller::Controller<impl kubeward::Reconciler>) -> std::io::Result<()> {
//! use kubeward::ops::OpsServer;
//! let ops = OpsServer::bind("0.0.0.0:8080".parse().unwrap())
//!     .await?
//!     .with_readiness(controller.readiness());
//! tokio::spawn(ops.serve());
//! # Ok(()) }
//! ```
//!
//! The server is bounded so that a misbehaving client cannot hurt the controller: one request per
//! connection; a connection that has not sent its request headers within
//! [`DEFAULT_HEADER_READ_TIMEOUT`] is closed, and one whose request and response take longer than
//! [`DEFAULT_REQUEST_TIMEOUT`] too; at most [`DEFAULT_MAX_CONNECTIONS`] are served at once (more
//! wait in the listen backlog); a failed `accept` is retried after a back-off, with a
//! rate-limited warning. `/metrics` is gathered and encoded on tokio's blocking pool, one scrape
//! at a time, and streamed in chunks of 64 KiB: a large scrape does not stall the
//! passes on the runtime's workers, nor hold its whole text in memory.

mod accept;
mod readiness;
#[cfg(feature = "prometheus")]
mod scrape;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub use self::readiness::ReadinessSignal;
#[cfg(feature = "prometheus")]
pub use self::scrape::{CHUNK_BYTES, CHUNKS_IN_FLIGHT};

/// How long a connection may take to send its request headers by default.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection's request and response (a whole scrape included) may take by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How many connections are served at once by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// A response body: a short text, or a streamed scrape.
type Body = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

/// The operations HTTP server.
#[derive(Debug)]
pub struct OpsServer {
    listener: TcpListener,
    header_read_timeout: Duration,
    request_timeout: Duration,
    max_connections: usize,
    routes: Routes,
}

/// What the server answers, shared by its connections.
#[derive(Debug, Default)]
struct Routes {
    readiness: Vec<ReadinessSignal>,
    #[cfg(feature = "prometheus")]
    scraper: Option<scrape::Scraper>,
}

impl OpsServer {
    /// Binds the server to `address` (port 0 picks a free port; see [`OpsServer::local_addr`]).
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub async fn bind(address: SocketAddr) -> std::io::Result<Self> {
        Ok(Self {
            listener: TcpListener::bind(address).await?,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            routes: Routes::default(),
        })
    }

    /// The address the server listens on.
    ///
    /// # Errors
    /// When the socket has no local address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Makes `/readyz` wait for this readiness signal too: a controller's
    /// [`Controller::readiness`](crate::controller::Controller::readiness) (which `/healthz`
    /// reads as well: it fails once the controller's run loop ended abnormally), or a
    /// `watch::Receiver<bool>` of one's own.
    #[must_use]
    pub fn with_readiness(mut self, ready: impl Into<ReadinessSignal>) -> Self {
        self.routes.readiness.push(ready.into());
        self
    }

    /// Serves `registry` on `/metrics`: in OpenMetrics when the scraper asks for it first (as
    /// Prometheus does), else in the Prometheus text format.
    #[cfg(feature = "prometheus")]
    #[must_use]
    pub fn with_registry(mut self, registry: prometheus::Registry) -> Self {
        self.routes.scraper = Some(scrape::Scraper::new(registry));
        self
    }

    /// Closes a connection that has not sent its request headers within `timeout` (default
    /// [`DEFAULT_HEADER_READ_TIMEOUT`]): a client that connects and sends nothing, or trickles
    /// its headers, holds a connection that long at most.
    #[must_use]
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Closes a connection whose request and response take longer than `timeout` (default
    /// [`DEFAULT_REQUEST_TIMEOUT`]), a scrape's streamed body included: keep it above the
    /// scrape time of the largest registry, and Prometheus' `scrape_timeout` below it.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Serves at most `max` connections at once (default [`DEFAULT_MAX_CONNECTIONS`], at least
    /// 1); further connections wait in the listen backlog until one ends.
    #[must_use]
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// Serves until the future is dropped.
    pub async fn serve(self) {
        let Self {
            listener,
            header_read_timeout,
            request_timeout,
            max_connections,
            routes,
        } = self;
        let routes = Arc::new(routes);
        let serve_one = move |(stream, _): (TcpStream, SocketAddr), permit| {
            let connection = Connection {
                routes: routes.clone(),
                header_read_timeout,
                request_timeout,
            };
            tokio::spawn(connection.serve(stream, permit));
        };
        accept::accept_forever(
            || listener.accept(),
            Arc::new(Semaphore::new(max_connections)),
            serve_one,
        )
        .await;
    }
}

/// One accepted connection and its bounds.
struct Connection {
    routes: Arc<Routes>,
    header_read_timeout: Duration,
    request_timeout: Duration,
}

impl Connection {
    /// Serves one request on `stream`, within the timeouts; `permit` counts the connection
    /// until it ends.
    async fn serve(self, stream: TcpStream, permit: OwnedSemaphorePermit) {
        let _permit = permit;
        let routes = self.routes;
        let service = service_fn(move |request| {
            let routes = routes.clone();
            async move { Ok::<_, Infallible>(routes.respond(&request).await) }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_read_timeout)
            // One request per connection: the request timeout below is then the timeout of
            // the request and its response, and no idle connection is kept.
            .keep_alive(false)
            .serve_connection(TokioIo::new(stream), service);
        match tokio::time::timeout(self.request_timeout, connection).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::debug!(%error, "ops server: connection failed"),
            Err(_) => tracing::debug!(
                timeout = ?self.request_timeout,
                "ops server: request timed out; connection closed"
            ),
        }
    }
}

impl Routes {
    async fn respond(&self, request: &Request<Incoming>) -> Response<Body> {
        if request.method() != Method::GET && request.method() != Method::HEAD {
            return text(StatusCode::METHOD_NOT_ALLOWED, "only GET is served\n");
        }
        match request.uri().path() {
            "/healthz" | "/livez" => {
                let failed: Vec<String> = self
                    .readiness
                    .iter()
                    .filter_map(|signal| signal.alive().err())
                    .collect();
                if failed.is_empty() {
                    text(StatusCode::OK, "ok\n")
                } else {
                    text(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!("unhealthy: {}\n", failed.join("; ")),
                    )
                }
            }
            "/readyz" => {
                let waiting: Vec<String> = self
                    .readiness
                    .iter()
                    .filter_map(|signal| signal.ready().err())
                    .collect();
                if waiting.is_empty() {
                    text(StatusCode::OK, "ok\n")
                } else {
                    text(
                        StatusCode::SERVICE_UNAVAILABLE,
                        &format!(
                            "not ready: {} of {} controller(s): {}\n",
                            waiting.len(),
                            self.readiness.len(),
                            waiting.join("; ")
                        ),
                    )
                }
            }
            #[cfg(feature = "prometheus")]
            "/metrics" => match &self.scraper {
                Some(scraper) => {
                    let accept = request.headers().get(header::ACCEPT);
                    let accept = accept.and_then(|accept| accept.to_str().ok());
                    scraper
                        .respond(crate::metrics::Format::negotiate(accept))
                        .await
                }
                None => text(StatusCode::NOT_FOUND, "no metrics registry configured\n"),
            },
            _ => text(
                StatusCode::NOT_FOUND,
                "not found: try /metrics, /healthz or /readyz\n",
            ),
        }
    }
}

fn text(status: StatusCode, body: &str) -> Response<Body> {
    let body = Full::new(Bytes::from(body.to_owned()))
        .map_err(|never| match never {})
        .boxed();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
