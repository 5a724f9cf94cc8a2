//! The operations endpoint of a controller process: one small HTTP server with `/metrics`
//! (feature `prometheus`), `/healthz` (the process serves) and `/readyz` (every controller is
//! ready: its watch has listed its objects, or it is a standby waiting for the lease).
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

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// The operations HTTP server.
#[derive(Debug)]
pub struct OpsServer {
    listener: TcpListener,
    readiness: Vec<watch::Receiver<bool>>,
    #[cfg(feature = "prometheus")]
    registry: Option<prometheus::Registry>,
}

impl OpsServer {
    /// Binds the server to `address` (port 0 picks a free port; see [`OpsServer::local_addr`]).
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub async fn bind(address: SocketAddr) -> std::io::Result<Self> {
        Ok(Self {
            listener: TcpListener::bind(address).await?,
            readiness: Vec::new(),
            #[cfg(feature = "prometheus")]
            registry: None,
        })
    }

    /// The address the server listens on.
    ///
    /// # Errors
    /// When the socket has no local address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Makes `/readyz` wait for this readiness signal too (see
    /// [`Controller::readiness`](crate::controller::Controller::readiness)).
    #[must_use]
    pub fn with_readiness(mut self, ready: watch::Receiver<bool>) -> Self {
        self.readiness.push(ready);
        self
    }

    /// Serves `registry` on `/metrics` in the Prometheus text format.
    #[cfg(feature = "prometheus")]
    #[must_use]
    pub fn with_registry(mut self, registry: prometheus::Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Serves until the future is dropped.
    pub async fn serve(self) {
        let state = std::sync::Arc::new(self);
        loop {
            let (stream, _) = match state.listener.accept().await {
                Ok(connection) => connection,
                Err(error) => {
                    tracing::debug!(%error, "ops server: accept failed");
                    continue;
                }
            };
            let state = state.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(state.respond(&request)) }
                });
                if let Err(error) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!(%error, "ops server: connection failed");
                }
            });
        }
    }

    fn respond(&self, request: &Request<Incoming>) -> Response<Full<Bytes>> {
        if request.method() != Method::GET && request.method() != Method::HEAD {
            return text(StatusCode::METHOD_NOT_ALLOWED, "only GET is served\n");
        }
        match request.uri().path() {
            "/healthz" | "/livez" => text(StatusCode::OK, "ok\n"),
            "/readyz" => {
                let waiting = self
                    .readiness
                    .iter()
                    .filter(|ready| !*ready.borrow())
                    .count();
                if waiting == 0 {
                    text(StatusCode::OK, "ok\n")
                } else {
                    text(
                        StatusCode::SERVICE_UNAVAILABLE,
                        &format!(
                            "not ready: {waiting} controller(s) have not listed their objects yet\n"
                        ),
                    )
                }
            }
            #[cfg(feature = "prometheus")]
            "/metrics" => match &self.registry {
                Some(registry) => match prometheus::TextEncoder::new()
                    .encode_to_string(&registry.gather())
                {
                    Ok(body) => Response::builder()
                        .header(header::CONTENT_TYPE, prometheus::TEXT_FORMAT)
                        .body(Full::new(Bytes::from(body)))
                        .unwrap_or_else(|_| {
                            text(StatusCode::INTERNAL_SERVER_ERROR, "encoding failed\n")
                        }),
                    Err(error) => text(StatusCode::INTERNAL_SERVER_ERROR, &format!("{error}\n")),
                },
                None => text(StatusCode::NOT_FOUND, "no metrics registry configured\n"),
            },
            _ => text(
                StatusCode::NOT_FOUND,
                "not found: try /metrics, /healthz or /readyz\n",
            ),
        }
    }
}

fn text(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_owned())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
