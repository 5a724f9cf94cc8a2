//! The accept loop of the ops server: at most a bounded number of connections at once (further
//! ones wait in the listen backlog), and a failed `accept` (out of file descriptors, most
//! often) retried after a back-off that doubles from [`ACCEPT_BACKOFF_MIN`] to
//! [`ACCEPT_BACKOFF_MAX`], with a rate-limited warning — never in a hot loop.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::rate_limit::{DEFAULT_LOG_INTERVAL, LogRateLimit};

/// The first wait after a failed `accept`.
pub(super) const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
/// The longest wait after failed `accept`s in a row.
pub(super) const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Accepts connections with `accept` forever, each handed to `handle` with its permit of
/// `connections` (the connection counts until the permit is dropped).
pub(super) async fn accept_forever<S, F>(
    mut accept: impl FnMut() -> F,
    connections: Arc<Semaphore>,
    mut handle: impl FnMut(S, OwnedSemaphorePermit),
) where
    F: Future<Output = io::Result<S>>,
{
    let warnings = LogRateLimit::new(DEFAULT_LOG_INTERVAL);
    let mut backoff = ACCEPT_BACKOFF_MIN;
    loop {
        let Ok(permit) = connections.clone().acquire_owned().await else {
            unreachable!("the connection semaphore is never closed")
        };
        match accept().await {
            Ok(connection) => {
                backoff = ACCEPT_BACKOFF_MIN;
                handle(connection, permit);
            }
            Err(error) => {
                drop(permit);
                if let Some(suppressed) = warnings.admit(&format!("{:?}", error.kind())) {
                    tracing::warn!(%error, retry_in = ?backoff, suppressed, "ops server: accept failed; backing off");
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// An `accept` that always fails (as when the process is out of file descriptors) is retried
    /// after a growing back-off: in 10 s of (paused) time, 7 tries up to the 1 s cap, then one a
    /// second. Without the back-off the loop never yields and the 1,000th try panics.
    #[tokio::test(start_paused = true)]
    async fn a_failing_accept_is_retried_with_backoff_not_in_a_hot_loop() {
        let tries = Arc::new(AtomicUsize::new(0));
        let counted = tries.clone();
        let accept = move || {
            let tries = counted.fetch_add(1, Ordering::Relaxed) + 1;
            assert!(tries < 1_000, "accept retried in a hot loop");
            async { Err::<(), _>(io::Error::other("Too many open files")) }
        };
        let serving = accept_forever(accept, Arc::new(Semaphore::new(4)), |(), _| {});
        let ran = tokio::time::timeout(Duration::from_secs(10), serving).await;
        assert!(ran.is_err(), "the loop serves forever");
        // 10, 20, ..., 640 ms (7 tries, 1.27 s), then one per second.
        let tries = tries.load(Ordering::Relaxed);
        assert!((14..=18).contains(&tries), "{tries} tries in 10 s");
    }

    /// The bound on connections: a connection past it is not accepted until one ends.
    #[tokio::test]
    async fn connections_past_the_bound_wait_for_a_permit() {
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = accepted.clone();
        let (held_tx, mut held) = tokio::sync::mpsc::unbounded_channel();
        let serving = tokio::spawn(accept_forever(
            || async { Ok::<_, io::Error>(()) },
            Arc::new(Semaphore::new(2)),
            move |(), permit| {
                counted.fetch_add(1, Ordering::Relaxed);
                let _ = held_tx.send(permit);
            },
        ));
        let first = held.recv().await.unwrap();
        let _second = held.recv().await.unwrap();
        tokio::task::yield_now().await;
        assert_eq!(
            accepted.load(Ordering::Relaxed),
            2,
            "no third connection while two are open"
        );
        drop(first);
        let _third = held.recv().await.unwrap();
        assert_eq!(accepted.load(Ordering::Relaxed), 3);
        serving.abort();
    }
}
