//! [`WatchFailures`]: what a controller's watch and list failures make visible. Each failure is
//! logged at warn — the first of its kind at once, then at most once per
//! [`DEFAULT_LOG_INTERVAL`](crate::rate_limit::DEFAULT_LOG_INTERVAL) with the count of those left
//! unlogged — and the last one is kept as the reason readiness gives when the cache does not sync
//! in time (a CRD that is not installed answers every list with 404; one object that does not
//! deserialize fails every list page).

use std::sync::Mutex;

use kube::runtime::watcher;

use crate::rate_limit::{DEFAULT_LOG_INTERVAL, LogRateLimit};

/// The watch and list failures of one controller.
#[derive(Debug)]
pub(super) struct WatchFailures {
    controller: String,
    limit: LogRateLimit,
    last: Mutex<Option<String>>,
}

impl WatchFailures {
    /// The failures of the controller named `controller`.
    pub(super) fn new(controller: &str) -> Self {
        Self {
            controller: controller.to_owned(),
            limit: LogRateLimit::new(DEFAULT_LOG_INTERVAL),
            last: Mutex::new(None),
        }
    }

    /// Records `error` (the watcher retries it with backoff): logged if its kind is due, and
    /// kept as the last failure.
    pub(super) fn record(&self, error: &watcher::Error) {
        let kind = kind_of(error);
        let message = format!("{kind}: {}", crate::controller::ErrorChain(error));
        if let Some(suppressed) = self.limit.admit(&kind) {
            tracing::warn!(
                controller = %self.controller,
                error = %message,
                suppressed,
                "watch or list failed; retrying with backoff (`suppressed`: failures of this kind not logged since the last line)"
            );
        }
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(message);
    }

    /// The last failure recorded, if any.
    pub(super) fn last(&self) -> Option<String> {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The kind of a watch failure, for its rate limit: the request that failed and how (the status
/// code and reason of an API error), never the message, which may name an object or a position.
fn kind_of(error: &watcher::Error) -> String {
    let (request, source) = match error {
        watcher::Error::InitialListFailed(source) => ("list", source),
        watcher::Error::WatchStartFailed(source) => ("watch start", source),
        watcher::Error::WatchFailed(source) => ("watch", source),
        watcher::Error::WatchError(status) => {
            return format!("watch: {} {}", status.code, status.reason);
        }
        watcher::Error::NoResourceVersion => return "watch: no resourceVersion".to_owned(),
    };
    let how = match source {
        kube::Error::Api(status) => return format!("{request}: {} {}", status.code, status.reason),
        kube::Error::SerdeError(_) => "an object that does not deserialize",
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => {
            "transport"
        }
        kube::Error::Auth(_) => "authentication",
        _ => "client",
    };
    format!("{request}: {how}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_kind_names_the_request_and_the_status_not_the_message() {
        let status = |code, reason: &str, message: &str| {
            kube::Error::Api(Box::new(kube::core::Status {
                code,
                reason: reason.into(),
                message: message.into(),
                ..kube::core::Status::default()
            }))
        };
        let missing = watcher::Error::InitialListFailed(status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ));
        assert_eq!(kind_of(&missing), "list: 404 NotFound");
        let other = watcher::Error::InitialListFailed(status(404, "NotFound", "another message"));
        assert_eq!(kind_of(&other), kind_of(&missing));
        let undecodable = watcher::Error::InitialListFailed(kube::Error::SerdeError(
            serde_json::from_str::<u8>("x").unwrap_err(),
        ));
        assert_eq!(
            kind_of(&undecodable),
            "list: an object that does not deserialize"
        );
    }
}
