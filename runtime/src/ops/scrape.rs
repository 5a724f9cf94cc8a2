//! [`Scraper`]: `/metrics`, built off the async workers and streamed. A scrape of per-object
//! metrics over 100,000 objects gathers about a million series and encodes about 150 MiB of text
//! in seconds of CPU: done on a runtime worker it would stall every pass scheduled there, and
//! buffered whole it would hold the text twice over (string and response). So:
//!
//! - the registry is gathered and encoded on tokio's blocking pool (`spawn_blocking`);
//! - the text goes to the client in chunks of [`CHUNK_BYTES`] through a channel of
//!   [`CHUNKS_IN_FLIGHT`] chunks: the encoder waits for a slow client, and stops when the client
//!   is gone (the connection closed or timed out);
//! - at most one scrape is built at a time: a second scraper waits for the first to be encoded,
//!   so two scrapers cannot double the memory of a scrape.
//!
//! The format is negotiated from the request's `Accept` header ([`Format::negotiate`]): OpenMetrics
//! for Prometheus, which asks for it first, the text format otherwise. Per-object series are
//! written straight as text ([`crate::metrics::encode`]).
//!
//! An encoding error after the first chunk was sent ends the body with an error: hyper then
//! aborts the connection, and the scraper sees a failed scrape, never a silently cut one.

use std::io::{self, Write};
use std::sync::Arc;

use bytes::Bytes;
use http::{Response, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use tokio::sync::{Semaphore, mpsc};

use super::Body;
use crate::metrics::Format;

/// The size of one chunk of `/metrics` text sent to the client.
pub const CHUNK_BYTES: usize = 64 * 1024;
/// How many encoded chunks may wait for a slow client before the encoder waits too.
pub const CHUNKS_IN_FLIGHT: usize = 16;

/// Serves one registry on `/metrics`, one scrape at a time.
#[derive(Debug, Clone)]
pub(super) struct Scraper {
    registry: prometheus::Registry,
    one_at_a_time: Arc<Semaphore>,
}

impl Scraper {
    pub(super) fn new(registry: prometheus::Registry) -> Self {
        Self {
            registry,
            one_at_a_time: Arc::new(Semaphore::new(1)),
        }
    }

    /// The response to a scrape: its head once this scrape's turn has come, its body streamed as
    /// the blocking pool encodes it.
    pub(super) async fn respond(&self, format: Format) -> Response<Body> {
        let turn = match self.one_at_a_time.clone().acquire_owned().await {
            Ok(turn) => turn,
            Err(_) => unreachable!("the scrape semaphore is never closed"),
        };
        let (chunks, received) = mpsc::channel(CHUNKS_IN_FLIGHT);
        let registry = self.registry.clone();
        tokio::task::spawn_blocking(move || {
            // The next scrape starts once this one is encoded (or its client is gone).
            let _turn = turn;
            encode(&registry, format, chunks);
        });
        let body = futures::stream::unfold(received, |mut received| async move {
            let chunk = received.recv().await?;
            Some((chunk.map(Frame::data), received))
        });
        let mut response = Response::new(StreamBody::new(body).boxed());
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(format.content_type()),
        );
        response
    }
}

/// Encodes `registry` in `format` into `chunks`; an error is sent as the last item.
fn encode(
    registry: &prometheus::Registry,
    format: Format,
    chunks: mpsc::Sender<io::Result<Bytes>>,
) {
    let mut writer = ChunkWriter {
        chunks,
        buffer: Vec::with_capacity(CHUNK_BYTES),
    };
    let encoded = crate::metrics::encode(registry, format, &mut writer);
    if let Err(error) = encoded
        && !writer.chunks.is_closed()
    {
        tracing::warn!(%error, "ops server: /metrics encoding failed; the scrape is aborted");
        let _ = writer.chunks.blocking_send(Err(error));
    }
}

/// Cuts the encoder's output into chunks and sends each (waiting while the channel is full);
/// fails with `BrokenPipe` once the client is gone, which stops the encoder.
struct ChunkWriter {
    chunks: mpsc::Sender<io::Result<Bytes>>,
    buffer: Vec<u8>,
}

impl ChunkWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK_BYTES));
        self.chunks
            .blocking_send(Ok(Bytes::from(chunk)))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the scraper is gone"))
    }
}

impl Write for ChunkWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= CHUNK_BYTES {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}
