//! Responses as kube-apiserver writes them: JSON, YAML, plain text or empty bodies, an error's
//! `Status`, `Warning` headers; and the streamed bodies of watches (fed by a channel, delayed by
//! a fault, or ended by an expiry).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::status::ApiError;

/// A response body of the in-process server and of the fault proxy.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// A response body fed by a channel (watch streams).
pub(crate) struct ChannelBody(pub(crate) mpsc::Receiver<Bytes>);

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

/// `body` with each of its frames delivered `delay` after it was produced, in order (a lagging
/// watch cache). Ends when `body` ends (or fails) or the client goes away. The fault proxy in
/// front of a real kube-apiserver delays its watches with this too.
pub(crate) fn delayed<B>(mut body: B, delay: Duration) -> Body
where
    B: hyper::body::Body<Data = Bytes> + Send + Unpin + 'static,
{
    let (due_tx, mut due_rx) = mpsc::unbounded_channel::<(tokio::time::Instant, Bytes)>();
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    tokio::spawn(async move {
        let produce = async move {
            while let Some(Ok(frame)) = body.frame().await {
                if let Ok(data) = frame.into_data()
                    && due_tx
                        .send((tokio::time::Instant::now() + delay, data))
                        .is_err()
                {
                    return;
                }
            }
        };
        let deliver = async {
            while let Some((due, data)) = due_rx.recv().await {
                tokio::time::sleep_until(due).await;
                if tx.send(data).await.is_err() {
                    return;
                }
            }
        };
        // The producer ends with the body (dropping `due_tx`), then the deliverer drains what is
        // due; the client going away ends both.
        tokio::select! {
            ((), ()) = async { tokio::join!(produce, deliver) } => {}
            () = tx.closed() => {}
        }
    });
    ChannelBody(rx).boxed_unsync()
}

/// `body` (a JSON watch stream) ended with `ERROR 410 Expired` when `expirations` changes, as
/// kube-apiserver ends its watches once etcd compacted the history they read from: what
/// [`crate::Cluster::expire_watches`] does to the real backend's watches, through the proxy.
/// `expirations` is subscribed before the watch request is sent upstream, so an expiration
/// while it was on its way ends it too; and no frame that arrives after an expiration is
/// passed on before the 410.
pub(crate) fn expiring<B>(mut body: B, mut expirations: tokio::sync::watch::Receiver<u64>) -> Body
where
    B: hyper::body::Body<Data = Bytes, Error = Infallible> + Send + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                frame = body.frame() => match frame.map(|f| f.map(Frame::into_data)) {
                    Some(Ok(Ok(_))) if expirations.has_changed().unwrap_or(false) => {
                        let _ = tx.send(expired_line()).await;
                        return;
                    }
                    Some(Ok(Ok(data))) => {
                        if tx.send(data).await.is_err() {
                            return;
                        }
                    }
                    Some(_) => {}
                    None => return,
                },
                changed = expirations.changed() => {
                    if changed.is_ok() {
                        let _ = tx.send(expired_line()).await;
                    }
                    return;
                }
                () = tx.closed() => return,
            }
        }
    });
    ChannelBody(rx).boxed_unsync()
}

/// A watch refused as kube-apiserver refuses one from a compacted resourceVersion: `200`, then
/// an `ERROR 410 Expired` event, and the end.
pub(crate) fn expired_watch() -> Response<Body> {
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(expired_line()).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(expired_line()).boxed_unsync()))
}

/// The `ERROR 410 Expired` event line that ends an expired watch.
fn expired_line() -> Bytes {
    let status = crate::status::ApiError::expired(
        "too old resource version: the watch history was compacted".to_owned(),
    );
    let event = json!({"type": "ERROR", "object": status.to_status()});
    let mut line = serde_json::to_vec(&event).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

pub(crate) fn json_response(status: u16, body: &impl serde::Serialize) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(bytes)).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

/// A response with no body (kube-openapi's 406 for a format it does not serve).
pub(crate) fn empty_response(status: u16) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .body(Full::new(Bytes::new()).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

/// A plain-text answer as Go's `http.Error` writes it.
pub(crate) fn text_response(status: u16, text: &str) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(Full::new(Bytes::from(text.to_owned())).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

pub(crate) fn error_response(err: &ApiError) -> Response<Body> {
    json_response(err.code, &err.to_status())
}

/// A response of `body` in YAML, as sigs.k8s.io/yaml writes it ([`crate::yaml::encode`]).
pub(crate) fn yaml_response(status: u16, body: &Value) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/yaml")
        .body(Full::new(Bytes::from(crate::yaml::encode(body))).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

/// `response` with a `Warning` header for each of `warnings`: `299 - "text"`, as the
/// apiserver's warning recorder writes it.
pub(crate) fn with_warnings(mut response: Response<Body>, warnings: Vec<String>) -> Response<Body> {
    for warning in warnings {
        let text = format!("299 - {}", crate::schema::field::quote(&warning));
        if let Ok(v) = http::HeaderValue::from_str(&text) {
            response.headers_mut().append(header::WARNING, v);
        }
    }
    response
}
