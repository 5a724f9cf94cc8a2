//! The delay before a Job replaces failed pods (`pkg/controller/job/backoff_utils.go`): the
//! failures since the last success, counted in pod finish order; the delay is 10 s doubled per
//! further failure, capped at 10 min (`DefaultJobPodFailureBackOff`,
//! `MaxJobPodFailureBackOff`), from the last failure's finish time.

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

const DEFAULT_BACKOFF: SignedDuration = SignedDuration::from_secs(10);
const MAX_BACKOFF: SignedDuration = SignedDuration::from_secs(600);

/// `backoffRecord`: kept per Job in the controller's memory, as upstream's `backoffStore`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BackoffRecord {
    pub(crate) failures_after_last_success: i64,
    pub(crate) last_failure: Option<Timestamp>,
}

impl BackoffRecord {
    /// `newBackoffRecord`: the record after the pods newly succeeded and failed.
    pub(crate) fn with_finished(&self, succeeded: &[&Value], failed: &[&Value]) -> Self {
        let mut failed: Vec<Timestamp> = failed.iter().map(|p| finished_time(p)).collect();
        failed.sort_unstable();
        let last_success = succeeded.iter().map(|p| finished_time(p)).max();
        let Some(last_success) = last_success else {
            let Some(&last) = failed.last() else {
                return self.clone();
            };
            return Self {
                failures_after_last_success: self.failures_after_last_success
                    + i64::try_from(failed.len()).unwrap_or(i64::MAX),
                last_failure: Some(last),
            };
        };
        let after: Vec<Timestamp> = failed.into_iter().filter(|t| *t > last_success).collect();
        Self {
            failures_after_last_success: i64::try_from(after.len()).unwrap_or(i64::MAX),
            last_failure: after.last().copied(),
        }
    }

    /// `getRemainingTime` as a time on the clock: when new pods may be created, if after `now`.
    pub(crate) fn ready_at(&self, now: Timestamp) -> Option<Timestamp> {
        let last = self.last_failure?;
        if self.failures_after_last_success == 0 {
            return None;
        }
        let mut delay = DEFAULT_BACKOFF;
        for _ in 1..self.failures_after_last_success {
            delay *= 2;
            if delay >= MAX_BACKOFF {
                delay = MAX_BACKOFF;
                break;
            }
        }
        let at = last.checked_add(delay).ok()?;
        (now < at).then_some(at)
    }
}

/// `getFinishedTime`: the latest container finish, else the time `Ready` turned false, else
/// the deletion time less the grace period, else the creation time.
pub(crate) fn finished_time(pod: &Value) -> Timestamp {
    let parse = |v: &Value| v.as_str().and_then(|s| s.parse::<Timestamp>().ok());
    let containers = pod["status"]["containerStatuses"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let finishes: Option<Vec<Timestamp>> = containers
        .iter()
        .map(|c| parse(&c["state"]["terminated"]["finishedAt"]))
        .collect();
    if let Some(latest) = finishes.and_then(|f| f.into_iter().max()) {
        return latest;
    }
    let ready_false = pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready" && c["status"] == "False")
        .and_then(|c| parse(&c["lastTransitionTime"]));
    if let Some(at) = ready_false {
        return at;
    }
    let meta = &pod["metadata"];
    if let Some(deleted) = parse(&meta["deletionTimestamp"]) {
        let grace = meta["deletionGracePeriodSeconds"].as_i64().unwrap_or(0);
        return deleted - SignedDuration::from_secs(grace);
    }
    parse(&meta["creationTimestamp"]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_finished(at: &str) -> Value {
        json!({"status": {"containerStatuses": [{"state": {"terminated": {"finishedAt": at}}}]}})
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn failures_after_the_last_success_are_counted() {
        // `TestNewBackoffRecord`.
        let f1 = pod_finished("2026-01-01T00:00:10Z");
        let f2 = pod_finished("2026-01-01T00:00:30Z");
        let s1 = pod_finished("2026-01-01T00:00:20Z");
        let none = BackoffRecord::default();
        let failed = none.with_finished(&[], &[&f1, &f2]);
        assert_eq!(failed.failures_after_last_success, 2);
        assert_eq!(failed.last_failure, Some(at("2026-01-01T00:00:30Z")));
        let mixed = failed.with_finished(&[&s1], &[&f1, &f2]);
        assert_eq!(mixed.failures_after_last_success, 1);
        assert_eq!(mixed.last_failure, Some(at("2026-01-01T00:00:30Z")));
        let success = failed.with_finished(&[&s1], &[]);
        assert_eq!(success, BackoffRecord::default());
    }

    #[test]
    fn the_delay_doubles_from_ten_seconds_up_to_the_cap() {
        // `TestGetRemainingBackoffTime`.
        let last = at("2026-01-01T00:00:00Z");
        let record = |failures| BackoffRecord {
            failures_after_last_success: failures,
            last_failure: Some(last),
        };
        assert_eq!(record(1).ready_at(last), Some(at("2026-01-01T00:00:10Z")));
        assert_eq!(record(3).ready_at(last), Some(at("2026-01-01T00:00:40Z")));
        assert_eq!(record(20).ready_at(last), Some(at("2026-01-01T00:10:00Z")));
        assert_eq!(record(1).ready_at(at("2026-01-01T00:00:11Z")), None);
        assert_eq!(record(0).ready_at(last), None);
    }
}
