//! The TTL-after-finished controller (`pkg/controller/ttlafterfinished`): a finished Job (its
//! `Complete` or `Failed` condition true) with `ttlSecondsAfterFinished` is deleted that many
//! seconds after the condition's `lastTransitionTime`, on the clock, with `Foreground`
//! propagation and a uid precondition, as upstream deletes it.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::JOBS;
use super::job::finished_condition;
use super::{Controller, Ctx};
use crate::store::{ObjectKey, StorageKey};

const MANAGER: &str = "kube-controller-manager";

/// The controller: its keys are Jobs.
#[derive(Debug, Default)]
pub(crate) struct TtlAfterFinished;

/// When a Job is to be deleted (`getFinishAndExpireTime`), if it finished and has a TTL.
fn expire_at(job: &Value) -> Option<Timestamp> {
    let ttl = job["spec"]["ttlSecondsAfterFinished"].as_i64()?;
    let finished: Timestamp = finished_condition(job)?["lastTransitionTime"]
        .as_str()?
        .parse()
        .ok()?;
    finished.checked_add(SignedDuration::from_secs(ttl)).ok()
}

impl Controller for TtlAfterFinished {
    fn primary(&self) -> StorageKey {
        JOBS.storage()
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let job = ctx.get(JOBS, &key.0, &key.1)?;
        if super::context::is_deleting(&job) {
            return None;
        }
        let expire = expire_at(&job)?;
        if ctx.now() < expire {
            return Some(expire);
        }
        let options = json!({"propagationPolicy": "Foreground",
                             "preconditions": {"uid": job["metadata"]["uid"]}});
        let _ = ctx.delete(MANAGER, JOBS, &key.0, &key.1, &options);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_expires_its_ttl_after_it_finished() {
        // `TestTimeLeft`.
        let job = |ttl: Value, condition: &str| {
            json!({"spec": {"ttlSecondsAfterFinished": ttl}, "status": {"conditions": [
                {"type": condition, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
        };
        assert_eq!(
            expire_at(&job(json!(100), "Complete")),
            Some("2026-01-01T00:01:40Z".parse().unwrap())
        );
        assert_eq!(
            expire_at(&job(json!(0), "Failed")),
            Some("2026-01-01T00:00:00Z".parse().unwrap())
        );
        assert_eq!(expire_at(&job(Value::Null, "Complete")), None);
        assert_eq!(expire_at(&job(json!(5), "SuccessCriteriaMet")), None);
    }
}
