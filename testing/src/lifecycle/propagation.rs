//! How a DELETE hands an object to the garbage collector: the propagation policy of its
//! `DeleteOptions` and the finalizers that policy puts on the object (apiserver
//! `registry/generic/registry/store.go`, `deletionFinalizersForGarbageCollection`).

use serde_json::Value;

use crate::status::{ApiError, Cause, Qualified};

/// The finalizer that makes the garbage collector orphan an owner's dependents before the owner
/// goes (`metav1.FinalizerOrphanDependents`).
pub(crate) const ORPHAN: &str = "orphan";
/// The finalizer that keeps an owner until its blocking dependents are gone
/// (`metav1.FinalizerDeleteDependents`).
pub(crate) const FOREGROUND: &str = "foregroundDeletion";

/// `DeleteOptions.propagationPolicy` (or the deprecated `orphanDependents`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Propagation {
    /// Dependents are deleted before the owner.
    Foreground,
    /// The owner goes at once; the garbage collector deletes dependents afterwards.
    Background,
    /// Dependents lose their owner reference and stay.
    Orphan,
}

impl Propagation {
    /// The wire value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Foreground => "Foreground",
            Self::Background => "Background",
            Self::Orphan => "Orphan",
        }
    }

    /// The policy a DELETE asked for (`None`: the object's finalizers or the kind's default
    /// decide), checked as apimachinery's `ValidateDeleteOptions` checks it: 422 `Invalid` on
    /// `DeleteOptions` for an unknown policy or for both fields at once.
    pub(crate) fn from_options(options: &Value) -> Result<Option<Self>, ApiError> {
        let orphan_dependents = options["orphanDependents"].as_bool();
        let policy = &options["propagationPolicy"];
        let mut causes = Vec::new();
        if orphan_dependents.is_some() && !policy.is_null() {
            causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {}: orphanDependents and deletionPropagation cannot be both set",
                    policy
                ),
                field: "propagationPolicy".into(),
            });
        }
        let parsed = match policy {
            Value::Null => None,
            Value::String(s) if s == "Foreground" => Some(Self::Foreground),
            Value::String(s) if s == "Background" => Some(Self::Background),
            Value::String(s) if s == "Orphan" => Some(Self::Orphan),
            other => {
                causes.push(Cause {
                    reason: "FieldValueNotSupported".into(),
                    message: format!(
                        "Unsupported value: {other}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                    ),
                    field: "propagationPolicy".into(),
                });
                None
            }
        };
        if !causes.is_empty() {
            return Err(ApiError::invalid(
                Qualified {
                    group: "meta.k8s.io",
                    name: "DeleteOptions",
                },
                "",
                causes,
            ));
        }
        Ok(match orphan_dependents {
            Some(true) => Some(Self::Orphan),
            // `orphanDependents: false` orphans nothing and does not delete in the foreground
            // either (the registry's `shouldDeleteDependents` is false whenever it is set):
            // background deletion.
            Some(false) => Some(Self::Background),
            None => parsed,
        })
    }
}

/// Whether a DELETE leaves `finalizer` (that of policy `wanted`) on the object
/// (`shouldOrphanDependents`, `shouldDeleteDependents`): the explicit policy, else an existing
/// garbage collector finalizer, else the kind's default — background for every kind served here
/// (the `OrphanDependents` defaults belong to `extensions/v1beta1` and `apps/v1beta1|2`
/// workloads).
fn should_have(
    current: &[String],
    policy: Option<Propagation>,
    wanted: Propagation,
    finalizer: &str,
) -> bool {
    match policy {
        Some(p) => p == wanted,
        None => current
            .iter()
            .find(|f| *f == ORPHAN || *f == FOREGROUND)
            .is_some_and(|f| f == finalizer),
    }
}

/// The finalizers an object has after a DELETE with `policy`: its own, with `orphan` and
/// `foregroundDeletion` removed and added back as the policy says. Returns `None` when the set
/// does not change (the stored order is kept then).
pub(crate) fn deletion_finalizers(
    current: &[String],
    policy: Option<Propagation>,
) -> Option<Vec<String>> {
    let orphan = should_have(current, policy, Propagation::Orphan, ORPHAN);
    let foreground = should_have(current, policy, Propagation::Foreground, FOREGROUND);
    let mut next: Vec<String> = current
        .iter()
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        next.push(ORPHAN.into());
    }
    if foreground {
        next.push(FOREGROUND.into());
    }
    let same = {
        let mut a: Vec<&String> = current.iter().collect();
        let mut b: Vec<&String> = next.iter().collect();
        a.sort();
        a.dedup();
        b.sort();
        b.dedup();
        a == b
    };
    (!same).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn explicit_policies_replace_the_gc_finalizers_and_keep_the_others() {
        let current = strings(&["example.com/cleanup", ORPHAN]);
        assert_eq!(
            deletion_finalizers(&current, Some(Propagation::Foreground)),
            Some(strings(&["example.com/cleanup", FOREGROUND]))
        );
        assert_eq!(
            deletion_finalizers(&current, Some(Propagation::Background)),
            Some(strings(&["example.com/cleanup"]))
        );
        assert_eq!(
            deletion_finalizers(&current, Some(Propagation::Orphan)),
            None
        );
    }

    #[test]
    fn without_a_policy_an_existing_gc_finalizer_decides_and_the_default_is_background() {
        assert_eq!(deletion_finalizers(&strings(&[FOREGROUND]), None), None);
        assert_eq!(deletion_finalizers(&strings(&["x"]), None), None);
        assert_eq!(deletion_finalizers(&[], None), None);
    }

    #[test]
    fn delete_options_are_validated_like_validate_delete_options() {
        assert_eq!(
            Propagation::from_options(&json!({"propagationPolicy": "Orphan"})).unwrap(),
            Some(Propagation::Orphan)
        );
        assert_eq!(
            Propagation::from_options(&json!({"orphanDependents": false})).unwrap(),
            Some(Propagation::Background)
        );
        assert_eq!(Propagation::from_options(&Value::Null).unwrap(), None);
        let err = Propagation::from_options(&json!({"propagationPolicy": "Later"})).unwrap_err();
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Later\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
        );
    }
}
