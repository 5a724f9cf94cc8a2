//! Items the macros expand onto. Not a public API: names and signatures change without notice.
//!
//! Everything a generated item does at run time is a call into this module or into a public
//! runtime item, so expansions stay short and the logic lives (and is tested) here.

use std::future::Future;

pub use ::core;
pub use ::k8s_openapi;
pub use ::kube;
pub use ::std;

use crate::conditions::{Condition, DesiredCondition};
pub use crate::observe::StepName;
use crate::vocabulary::{ReasonType, Stored, Vocabulary};

/// The desired condition of a typed transition into `target` with `message`.
///
/// `#[kubeward::condition]` validated the condition type and every reason at compile time, so
/// `DesiredCondition::new` cannot fail for a generated [`ReasonType`].
pub fn transition<T: ReasonType>(target: T, message: impl Into<String>) -> DesiredCondition {
    let _ = target;
    let reason = T::REASON;
    match DesiredCondition::new(T::VOCABULARY.type_, reason.status, reason.name, message) {
        Ok(desired) => desired,
        Err(err) => panic!("a ReasonType must have a valid condition type and reason: {err}"),
    }
}

/// The desired condition of going from `stored` to `target` with `message`, if `vocabulary`
/// allows that transition (`State::try_to`, the run-time-checked escape hatch of the typestate).
pub fn checked_transition(
    vocabulary: &Vocabulary,
    stored: &Stored,
    target: &crate::vocabulary::Reason,
    message: impl Into<String>,
) -> Option<DesiredCondition> {
    if !vocabulary.allows(stored.reason(), target.name) {
        return None;
    }
    DesiredCondition::new(vocabulary.type_, target.status, target.name, message).ok()
}

/// Where a stored condition stands in a vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classified {
    /// The status has no condition of this type.
    Absent,
    /// The stored reason is the vocabulary's reason at this index.
    Reason(usize),
    /// The stored reason is not in the vocabulary.
    Unrecognized,
}

/// The stored condition of `vocabulary`'s type (a copy) and where it stands in the vocabulary.
pub fn classify(vocabulary: &Vocabulary, stored: Option<&Condition>) -> (Classified, Stored) {
    let classified = match stored {
        None => Classified::Absent,
        Some(condition) => vocabulary
            .reasons
            .iter()
            .position(|r| r.name == condition.reason)
            .map_or(Classified::Unrecognized, Classified::Reason),
    };
    (classified, Stored::new(stored))
}

/// The output of a step that may fail: `Result<T, E>` (and any alias of it).
pub trait StepResult: Sized {
    /// `T` of `Result<T, E>`.
    type Ok;
    /// `E` of `Result<T, E>`.
    type Err;
    /// The result.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
    /// Back from the result.
    fn from_result(result: Result<Self::Ok, Self::Err>) -> Self;
}

impl<T, E> StepResult for Result<T, E> {
    type Ok = T;
    type Err = E;
    #[inline]
    fn into_result(self) -> Self {
        self
    }
    #[inline]
    fn from_result(result: Self) -> Self {
        result
    }
}

/// `#[step]` on an async fn (or an awaited statement) whose output is not a `Result`.
/// The output type comes first so generated code can name it (`step::<Ret, _>`).
#[inline]
pub fn step<R, F>(name: StepName, future: F) -> impl Future<Output = R>
where
    F: Future<Output = R>,
{
    crate::observe::step(name, future)
}

/// `#[step]` on an async fn (or an awaited statement) returning a `Result`: the step fails when
/// it returns `Err`.
pub async fn try_step<R, F>(name: StepName, future: F) -> R
where
    R: StepResult,
    F: Future<Output = R>,
{
    R::from_result(crate::observe::try_step(name, async move { future.await.into_result() }).await)
}

/// `#[step]` on a sync fn (or statement) whose output is not a `Result`.
#[inline]
pub fn step_sync<R>(name: StepName, body: impl FnOnce() -> R) -> R {
    crate::observe::step_sync(name, body)
}

/// `#[step]` on a sync fn (or statement) returning a `Result`.
#[inline]
pub fn try_step_sync<R: StepResult>(name: StepName, body: impl FnOnce() -> R) -> R {
    R::from_result(crate::observe::try_step_sync(name, || body().into_result()))
}

/// The RBAC rules a controller of `R` needs, and no more (the example operator's RBAC test
/// takes each verb away and sees the controller fail): its resource (list and watch for the
/// reflector, patch for the finalizer), its status (patch: status writes are merge patches with
/// a resourceVersion precondition), its finalizers subresource when it has a finalizer (update:
/// clusters that enforce owner references require it to create children whose owner reference
/// blocks the owner's deletion), events (create, patch) and, with `leader_election`, leases
/// (get, create, update).
pub fn rbac_rules<R: crate::Reconciler>(
    leader_election: bool,
) -> Vec<k8s_openapi::api::rbac::v1::PolicyRule> {
    use k8s_openapi::api::rbac::v1::PolicyRule;
    use kube::Resource;

    let rule = |group: &str, resources: &[String], verbs: &[&str]| PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.to_vec()),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    };
    let group = R::Resource::group(&());
    let plural = R::Resource::plural(&()).into_owned();
    let mut rules = vec![
        rule(
            &group,
            std::slice::from_ref(&plural),
            &["list", "watch", "patch"],
        ),
        rule(&group, &[format!("{plural}/status")], &["patch"]),
    ];
    if R::FINALIZER.is_some() {
        rules.push(rule(&group, &[format!("{plural}/finalizers")], &["update"]));
    }
    rules.push(rule(
        "events.k8s.io",
        &["events".to_owned()],
        &["create", "patch"],
    ));
    if leader_election {
        rules.push(rule(
            "coordination.k8s.io",
            &["leases".to_owned()],
            &["get", "create", "update"],
        ));
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::ConditionStatus::*;
    use crate::vocabulary::Reason;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    static READY: Vocabulary = Vocabulary {
        type_: "Ready",
        reasons: &[
            Reason::new("Starting", Unknown).initial().to(&["Running"]),
            Reason::new("Running", True),
        ],
    };

    fn stored(reason: &str) -> Condition {
        Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: reason.into(),
            message: String::new(),
            observed_generation: None,
            last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
        }
    }

    #[test]
    fn stored_reasons_outside_the_vocabulary_are_unrecognized_not_a_panic() {
        assert_eq!(classify(&READY, None).0, Classified::Absent);
        assert_eq!(
            classify(&READY, Some(&stored("Running"))).0,
            Classified::Reason(1)
        );
        let (classified, kept) = classify(&READY, Some(&stored("Legacy")));
        assert_eq!(classified, Classified::Unrecognized);
        assert_eq!(kept.reason(), Some("Legacy"));
    }

    #[derive(Clone, Copy)]
    struct Running;
    impl ReasonType for Running {
        const VOCABULARY: &'static Vocabulary = &READY;
        const REASON: &'static Reason = &READY.reasons[1];
    }

    #[test]
    fn checked_transitions_follow_the_vocabulary() {
        let running = &READY.reasons[1];
        let starting = &READY.reasons[0];
        let absent = Stored::new(None);
        assert!(checked_transition(&READY, &absent, running, "up").is_none());
        assert!(checked_transition(&READY, &absent, starting, "go").is_some());
        let from_starting = Stored::new(Some(&stored("Starting")));
        let desired = checked_transition(&READY, &from_starting, running, "up").unwrap();
        assert_eq!((desired.reason(), desired.status()), ("Running", True));
        let legacy = Stored::new(Some(&stored("Legacy")));
        assert!(checked_transition(&READY, &legacy, running, "up").is_none());
        assert!(checked_transition(&READY, &legacy, starting, "restart").is_some());
    }

    #[test]
    fn a_typed_transition_carries_the_declared_type_status_and_reason() {
        let desired = transition(Running, "up");
        assert_eq!(
            (
                desired.type_(),
                desired.status(),
                desired.reason(),
                desired.message()
            ),
            ("Ready", True, "Running", "up")
        );
    }

    struct Configs;
    impl crate::Reconciler for Configs {
        type Resource = ConfigMap;
        type Error = std::io::Error;
        const FINALIZER: Option<&'static str> = Some("demo.kubeward.dev/cleanup");
        async fn apply(
            &self,
            _: &ConfigMap,
            _: &mut crate::Pass<ConfigMap>,
        ) -> Result<crate::Action, Self::Error> {
            Ok(crate::Action::await_change())
        }
    }

    #[test]
    fn rbac_rules_cover_resource_status_finalizers_events_and_leases() {
        let rules = rbac_rules::<Configs>(true);
        let summary: Vec<(String, String, String)> = rules
            .iter()
            .map(|r| {
                (
                    r.api_groups.clone().unwrap_or_default().join(","),
                    r.resources.clone().unwrap_or_default().join(","),
                    r.verbs.join(","),
                )
            })
            .collect();
        let expected = [
            ("", "configmaps", "list,watch,patch"),
            ("", "configmaps/status", "patch"),
            ("", "configmaps/finalizers", "update"),
            ("events.k8s.io", "events", "create,patch"),
            ("coordination.k8s.io", "leases", "get,create,update"),
        ];
        assert_eq!(
            summary,
            expected.map(|(g, r, v)| (g.to_owned(), r.to_owned(), v.to_owned()))
        );
        assert_eq!(rbac_rules::<Configs>(false).len(), 4);
    }

    #[tokio::test]
    async fn try_step_keeps_the_declared_result_type() {
        type Alias<T> = Result<T, std::num::ParseIntError>;
        let parsed = try_step::<Alias<u8>, _>(StepName::from_static("parse"), async {
            let n: u8 = "7".parse()?;
            Ok(n)
        })
        .await;
        assert_eq!(parsed, Ok(7));
        let failed = try_step_sync::<Alias<u8>>(StepName::from_static("parse"), || {
            let n = "x".parse::<u8>()?;
            Ok(n)
        });
        assert!(failed.is_err());
    }
}
