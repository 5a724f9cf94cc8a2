//! Items the macros expand onto. Not a public API: names and signatures change without notice.
//!
//! Everything a generated item does at run time is a call into this module or into a public
//! runtime item, so expansions stay short and the logic lives (and is tested) here.

use std::future::Future;

pub use ::core;
pub use ::k8s_openapi;
pub use ::kube;
pub use ::std;

/// The probe `#[derive(Terminal)]` asks a variant's source with.
pub mod terminal {
    pub use crate::controller::terminal::{Probe, ProbeOther, ProbeTerminal};
}

use crate::conditions::{Condition, DesiredCondition};
pub use crate::observe::StepName;
use crate::vocabulary::{ReasonType, Stored, Vocabulary};

/// The desired condition of a typed transition into `target` with `message`, carrying the event
/// type the reason declares.
///
/// `#[kubeward::condition]` validated the condition type and every reason at compile time, so
/// `DesiredCondition::new` cannot fail for a generated [`ReasonType`].
pub fn transition<T: ReasonType>(target: T, message: impl Into<String>) -> DesiredCondition {
    let _ = target;
    let reason = T::REASON;
    match DesiredCondition::new(T::VOCABULARY.type_, reason.status, reason.name, message) {
        Ok(desired) => desired.event_type(reason.event_type),
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
    DesiredCondition::new(vocabulary.type_, target.status, target.name, message)
        .ok()
        .map(|desired| desired.event_type(target.event_type))
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

/// Panics with `message` when `step` has the name of one of `others` (in a `const`, a compile
/// error: the check that the `#[step]` fns a reconciler lists in `steps(..)` have names of their
/// own).
pub const fn unique_step(step: StepName, others: &[StepName], message: &'static str) {
    let mut i = 0;
    while i < others.len() {
        if same_name(step, others[i]) {
            panic!("{}", message);
        }
        i += 1;
    }
}

/// Panics with `message` when `first` and `second` have the same condition type (in a `const`, a
/// compile error: the check that the vocabularies in a reconciler's `conditions(..)` are
/// distinct; [`Vocabulary::check_distinct`] is its run-time twin).
pub const fn distinct_condition_types(
    first: &Vocabulary,
    second: &Vocabulary,
    message: &'static str,
) {
    if same_str(first.type_, second.type_) {
        panic!("{}", message);
    }
}

const fn same_name(a: StepName, b: StepName) -> bool {
    same_str(a.as_str(), b.as_str())
}

const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
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

/// `#[step]` on a statement without `?` (awaited or not): the step fails when its value does.
pub use crate::observe::{step_sync_with, step_with};

/// Whether a statement step's value is a failure, judged by its type where the statement is
/// written: `Probe(&value).is_failure()` is `value.is_err()` for a `Result` and `false` for any
/// other type (through [`Deref`](core::ops::Deref) to [`NotAResult`]: method lookup tries
/// `Probe`'s own `is_failure` first, which exists only for `Result`s).
pub struct Probe<'a, T>(pub &'a T);

impl<T, E> Probe<'_, Result<T, E>> {
    /// An `Err` fails the step.
    #[inline]
    pub fn is_failure(&self) -> bool {
        self.0.is_err()
    }
}

impl<T> core::ops::Deref for Probe<'_, T> {
    type Target = NotAResult;
    #[inline]
    fn deref(&self) -> &NotAResult {
        &NotAResult
    }
}

/// A value that is not a `Result`: its step completes.
pub struct NotAResult;

impl NotAResult {
    /// Never a failure.
    #[inline]
    pub fn is_failure(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::ConditionStatus::*;
    use crate::vocabulary::Reason;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use kube::runtime::events::EventType;

    static READY: Vocabulary = Vocabulary {
        type_: "Ready",
        reasons: &[
            Reason::new("Starting", Unknown)
                .initial()
                .to(&["Running", "Held"]),
            Reason::new("Running", True),
            Reason::new("Held", False).event(EventType::Normal),
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
        // The declared event type travels with the transition: a False that is Normal.
        let held = checked_transition(&READY, &from_starting, &READY.reasons[2], "held").unwrap();
        assert_eq!(held.declared_event_type(), Some(EventType::Normal));
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
        assert_eq!(desired.declared_event_type(), Some(EventType::Normal));
    }

    #[test]
    fn a_probe_fails_an_err_and_nothing_else() {
        type Alias = Result<u8, String>;
        let err: Alias = Err("no".into());
        assert!(Probe(&err).is_failure());
        assert!(!Probe(&Ok::<u8, ()>(1)).is_failure());
        assert!(!Probe(&Some(1)).is_failure());
        assert!(!Probe(&()).is_failure());
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
