//! Writes whose answer was lost: the one rule for every write of a pass (the status write and the
//! finalizer patches build on it; it knows neither).
//!
//! kube's client has no read timeout of its own: a PATCH the server never answers would wedge the
//! pass (and its object) for good. So every request of a write — the write itself and each read
//! of its read-back — is [`bounded`] by the controller's write timeout
//! ([`Controller::with_status_write_timeout`](super::Controller::with_status_write_timeout)).
//! A write that failed [`in_doubt`] (a server error, no answer, none in time) may have committed:
//! it is resolved by reading the object back ([`read_back`]) and comparing what is stored with
//! what was written, never by assuming it failed or succeeded.

use std::future::Future;
use std::time::Duration;

use kube::Resource;
use kube::core::Request;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::leader::Fence;

/// What every write of a pass shares: the client, the write timeout that bounds each of its
/// requests, whether the controller's watch observed the written object deleted (so that a
/// read-back answered 404 is believed), and with leader election the [`Fence`] that keeps a
/// process that no longer leads from writing.
#[derive(Clone, Copy)]
pub(super) struct Writer<'a> {
    pub(super) client: &'a kube::Client,
    pub(super) timeout: Duration,
    pub(super) observed_gone: &'a (dyn Fn() -> bool + Send + Sync),
    pub(super) fence: Option<&'a Fence>,
}

impl Writer<'_> {
    /// Sends `request`, [`bounded`] by the write timeout. A write (anything but a GET) is not
    /// sent while the fence is closed: it fails with [`NotLeader`](crate::leader::NotLeader).
    pub(super) async fn send<T: DeserializeOwned>(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<T, kube::Error> {
        if request.method() != http::Method::GET
            && let Some(fence) = self.fence
        {
            fence.check()?;
        }
        bounded(self.timeout, self.client.request::<T>(request)).await
    }
}

/// A request that got no answer within the write timeout.
#[derive(Debug, thiserror::Error)]
#[error("no answer within {0:?}")]
struct TimedOut(Duration);

/// `request`, or a [`TimedOut`] error (a lost answer) if it takes longer than `timeout`.
async fn bounded<T>(
    timeout: Duration,
    request: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, kube::Error> {
    tokio::time::timeout(timeout, request)
        .await
        .unwrap_or_else(|_| Err(kube::Error::Service(Box::new(TimedOut(timeout)))))
}

/// Whether a write that failed with `error` may have committed: a server error (kube's client
/// retries 503 and 504 and reports the last answer) or no answer at all (also none in time).
pub(super) fn in_doubt(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.code >= 500,
        // A write the fence refused was never sent.
        kube::Error::Service(_) if crate::leader::is_not_leader(error) => false,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// A read-back answered 404 while the controller's watch still holds the object.
#[derive(Debug, thiserror::Error)]
#[error("the object was not found, but the watch has not observed its deletion")]
struct Unconfirmed;

/// How many times each request of a read-back is tried before the write is given up as failed.
const READ_BACK_ATTEMPTS: u32 = 3;

/// `request`, tried up to [`READ_BACK_ATTEMPTS`] times (100 ms, then 200 ms apart) while it
/// fails with an error `retry` accepts: the server that lost a write's answer may fail the
/// requests that resolve it too, or not answer them in time.
pub(super) async fn retried<T, Fut>(
    mut request: impl FnMut() -> Fut,
    retry: impl Fn(&kube::Error) -> bool,
) -> Result<T, kube::Error>
where
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut attempt = 1;
    loop {
        match request().await {
            Err(error) if attempt < READ_BACK_ATTEMPTS && retry(&error) => {
                tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
                attempt += 1;
            }
            result => return result,
        }
    }
}

/// The stored `object`, read to resolve an in-doubt write ([`retried`]).
/// A 404 is returned at once if the watch observed the object deleted (the caller decides what a
/// missing object means); otherwise it is not believed — a failed read like any other, and if
/// every read fails so, an error that is not a 404.
pub(super) async fn read_back<K>(writer: Writer<'_>, object: &K) -> Result<Value, kube::Error>
where
    K: Resource<DynamicType = ()>,
{
    let meta = object.meta();
    let request = || {
        Request::new(K::url_path(&(), meta.namespace.as_deref()))
            .get(
                meta.name.as_deref().unwrap_or_default(),
                &Default::default(),
            )
            .map_err(kube::Error::BuildRequest)
    };
    let gone = |error: &kube::Error| is_not_found(error) && (writer.observed_gone)();
    let read = retried(
        || async { writer.send::<Value>(request()?).await },
        |error| !gone(error),
    )
    .await;
    match read {
        Err(error) if is_not_found(&error) && !gone(&error) => {
            Err(kube::Error::Service(Box::new(Unconfirmed)))
        }
        read => read,
    }
}

fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}
