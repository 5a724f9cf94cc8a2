//! `status.conditions` maintained exactly like apimachinery's `meta.SetStatusCondition`.
//!
//! The rules operator authors most often get wrong: `lastTransitionTime` moves only when a
//! condition is added or its *status* changes — never when only the reason, message or
//! observedGeneration does — and a condition describes the generation it was computed from, so a
//! reader must not trust a condition computed from an older spec ([`find_observed`]).
//!
//! ```
//! use kubeward::conditions::{self, Change, ConditionStatus, DesiredCondition};
//!
//! let mut conditions = Vec::new();
//! let applying = DesiredCondition::new("UpToDate", ConditionStatus::Unknown, "Applying", "rolling out")?
//!     .observed_generation(4)?;
//! assert_eq!(conditions::set(&mut conditions, applying.clone()), Change::Transitioned);
//! assert_eq!(conditions::set(&mut conditions, applying), Change::Unchanged);
//! assert!(conditions::is_unknown(&conditions, "UpToDate"));
//! assert!(conditions::find_observed(&conditions, "UpToDate", Some(4)).is_some());
//! assert!(conditions::find_observed(&conditions, "UpToDate", Some(5)).is_none());
//! # Ok::<(), kubeward::conditions::ConditionError>(())
//! ```

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::events::EventType;

use crate::clock::{Clock, SystemClock};
use crate::limits::{CONDITION_MESSAGE_MAX_BYTES, truncated};
use crate::names::{InvalidName, NameKind};

/// The status of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// It is not known (yet) whether the condition holds.
    Unknown,
}

impl ConditionStatus {
    /// Every status.
    pub const ALL: [ConditionStatus; 3] = [
        ConditionStatus::True,
        ConditionStatus::False,
        ConditionStatus::Unknown,
    ];

    /// The status as the API spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ConditionStatus {
    type Err = ConditionError;

    /// Parses `True`, `False` or `Unknown` (case-sensitive, as the API server validates it).
    fn from_str(status: &str) -> Result<Self, Self::Err> {
        match status {
            "True" => Ok(ConditionStatus::True),
            "False" => Ok(ConditionStatus::False),
            "Unknown" => Ok(ConditionStatus::Unknown),
            other => Err(ConditionError::InvalidStatus(other.to_owned())),
        }
    }
}

/// A condition that does not pass the API server's validation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConditionError {
    /// The type or the reason is not a valid name.
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    /// The status is not `True`, `False` or `Unknown`.
    #[error("invalid condition status {0:?}: must be one of \"True\", \"False\", \"Unknown\"")]
    InvalidStatus(String),
    /// The observedGeneration is negative (apimachinery `ValidateCondition`).
    #[error("invalid condition observedGeneration {0}: must be greater than or equal to zero")]
    NegativeObservedGeneration(i64),
}

/// The state a reconciler wants a condition to be in. Validated on construction, so [`set`]
/// cannot fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredCondition {
    type_: String,
    status: ConditionStatus,
    reason: String,
    message: String,
    pub(crate) observed_generation: Option<i64>,
    last_transition_time: Option<Timestamp>,
    event_type: Option<EventType>,
}

impl DesiredCondition {
    /// A desired condition.
    ///
    /// # Errors
    /// [`ConditionError::InvalidName`] when `type_` is not a qualified name of at most 316 bytes,
    /// or `reason` does not match `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$` or is over 1024
    /// bytes. A message over 32768 bytes is cut at a char boundary, never rejected.
    pub fn new(
        type_: impl Into<String>,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Result<Self, ConditionError> {
        let type_ = type_.into();
        let reason = reason.into();
        NameKind::ConditionType.validate(&type_)?;
        NameKind::ConditionReason.validate(&reason)?;
        let mut message = message.into();
        let kept = truncated(&message, CONDITION_MESSAGE_MAX_BYTES).len();
        message.truncate(kept);
        Ok(Self {
            type_,
            status,
            reason,
            message,
            observed_generation: None,
            last_transition_time: None,
            event_type: None,
        })
    }

    /// Records the `metadata.generation` the condition was computed from.
    ///
    /// # Errors
    /// [`ConditionError::NegativeObservedGeneration`] when `generation` is negative, which the
    /// API server rejects ("must be greater than or equal to zero").
    pub fn observed_generation(mut self, generation: i64) -> Result<Self, ConditionError> {
        if generation < 0 {
            return Err(ConditionError::NegativeObservedGeneration(generation));
        }
        self.observed_generation = Some(generation);
        Ok(self)
    }

    /// Declares the type of the event a transition into this condition publishes, overriding the
    /// controller's default (the reason's declaration in [`Reconciler::CONDITIONS`], else False →
    /// Warning and True/Unknown → Normal). The typed transitions of `#[kubeward::condition]`
    /// (`now.to(..)`, `try_to(..)`) carry their reason's declared type this way, so the event type
    /// never depends on a list the reconciler must keep complete.
    ///
    /// [`Reconciler::CONDITIONS`]: crate::Reconciler::CONDITIONS
    ///
    /// ```
    /// use kube::runtime::events::EventType;
    /// use kubeward::conditions::{ConditionStatus, DesiredCondition};
    /// let gate = DesiredCondition::new("Ready", ConditionStatus::False, "WaitingForApproval", "")?
    ///     .event_type(EventType::Normal);
    /// assert_eq!(gate.declared_event_type(), Some(EventType::Normal));
    /// # Ok::<(), kubeward::conditions::ConditionError>(())
    /// ```
    #[must_use]
    pub fn event_type(mut self, event_type: EventType) -> Self {
        self.event_type = Some(event_type);
        self
    }

    /// The event type declared with [`DesiredCondition::event_type`], if any.
    pub fn declared_event_type(&self) -> Option<EventType> {
        self.event_type
    }

    /// Uses `time` as the transition time if this turns out to be a transition, instead of the
    /// clock's time (as `meta.SetStatusCondition` does with a non-zero `LastTransitionTime`).
    #[must_use]
    pub fn last_transition_time(mut self, time: Timestamp) -> Self {
        self.last_transition_time = Some(time);
        self
    }

    /// The condition type.
    pub fn type_(&self) -> &str {
        &self.type_
    }

    /// The status.
    pub fn status(&self) -> ConditionStatus {
        self.status
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The message (already cut to the API's limit).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The observed generation, if set.
    pub fn generation(&self) -> Option<i64> {
        self.observed_generation
    }
}

/// What [`set`] did to the condition list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Change {
    /// Nothing changed: no status write is needed.
    Unchanged,
    /// The reason, message or observedGeneration changed; lastTransitionTime was kept.
    Updated,
    /// The condition was added or its status changed; lastTransitionTime is now.
    Transitioned,
}

impl Change {
    /// Whether anything changed (the status needs writing).
    pub fn is_changed(self) -> bool {
        self != Change::Unchanged
    }
}

/// Sets `desired` in `conditions` as `meta.SetStatusCondition` does, stamping transitions with
/// the system clock. See [`set_with_clock`].
#[must_use = "the change tells whether the status needs to be written"]
pub fn set(conditions: &mut Vec<Condition>, desired: DesiredCondition) -> Change {
    set_with_clock(conditions, desired, &SystemClock)
}

/// Sets `desired` in `conditions` as apimachinery's `meta.SetStatusCondition` does:
///
/// - absent: the condition is appended with lastTransitionTime = now → [`Change::Transitioned`];
/// - status differs: status and lastTransitionTime = now are set, along with any other
///   difference → [`Change::Transitioned`];
/// - only reason, message or observedGeneration differ: they are set, lastTransitionTime is kept
///   → [`Change::Updated`];
/// - identical → [`Change::Unchanged`].
///
/// "now" is the clock's time truncated to whole seconds (the API serialises `metav1.Time` with
/// second precision), unless the desired condition carries its own transition time.
///
/// A list that someone else wrote with the same type twice (which the API server's list-map
/// validation would reject on the next write) keeps only the first entry of that type, which is
/// updated as above; the removal counts as at least [`Change::Updated`].
///
/// ```
/// use std::time::Duration;
/// use kubeward::clock::ManualClock;
/// use kubeward::conditions::{set_with_clock, Change, ConditionStatus::*, DesiredCondition};
///
/// let clock = ManualClock::new("2026-01-01T00:00:00.750Z".parse().unwrap());
/// let mut conditions = Vec::new();
/// let ready = |status, reason| DesiredCondition::new("Ready", status, reason, "").unwrap();
/// assert_eq!(set_with_clock(&mut conditions, ready(False, "Pending"), &clock), Change::Transitioned);
/// clock.advance(Duration::from_secs(60));
/// assert_eq!(set_with_clock(&mut conditions, ready(False, "Pulling"), &clock), Change::Updated);
/// assert_eq!(conditions[0].last_transition_time.0.to_string(), "2026-01-01T00:00:00Z");
/// assert_eq!(set_with_clock(&mut conditions, ready(True, "Running"), &clock), Change::Transitioned);
/// assert_eq!(conditions[0].last_transition_time.0.to_string(), "2026-01-01T00:01:00Z");
/// ```
#[must_use = "the change tells whether the status needs to be written"]
pub fn set_with_clock(
    conditions: &mut Vec<Condition>,
    desired: DesiredCondition,
    clock: &dyn Clock,
) -> Change {
    let transition_time = || {
        let now = desired.last_transition_time.unwrap_or_else(|| clock.now());
        Time(whole_seconds(now))
    };
    let Some(index) = conditions.iter().position(|c| c.type_ == desired.type_) else {
        conditions.push(Condition {
            last_transition_time: transition_time(),
            message: desired.message.clone(),
            observed_generation: desired.observed_generation,
            reason: desired.reason.clone(),
            status: desired.status.as_str().to_owned(),
            type_: desired.type_.clone(),
        });
        return Change::Transitioned;
    };
    let duplicates_removed = remove_duplicates_after(conditions, index);

    let existing = &mut conditions[index];
    let mut change = if duplicates_removed {
        Change::Updated
    } else {
        Change::Unchanged
    };
    if existing.status != desired.status.as_str() {
        existing.status = desired.status.as_str().to_owned();
        existing.last_transition_time = transition_time();
        change = Change::Transitioned;
    }
    let mut update = |field: &mut String, value: &str| {
        if field != value {
            *field = value.to_owned();
            if change == Change::Unchanged {
                change = Change::Updated;
            }
        }
    };
    update(&mut existing.reason, &desired.reason);
    update(&mut existing.message, &desired.message);
    if existing.observed_generation != desired.observed_generation {
        existing.observed_generation = desired.observed_generation;
        if change == Change::Unchanged {
            change = Change::Updated;
        }
    }
    change
}

/// Removes later entries with the same type as `conditions[index]`; whether any were removed.
fn remove_duplicates_after(conditions: &mut Vec<Condition>, index: usize) -> bool {
    let before = conditions.len();
    let type_ = conditions[index].type_.clone();
    let mut position = 0;
    conditions.retain(|c| {
        let keep = position <= index || c.type_ != type_;
        position += 1;
        keep
    });
    conditions.len() != before
}

fn whole_seconds(time: Timestamp) -> Timestamp {
    // `as_second` rounds towards negative infinity for times before the epoch too.
    Timestamp::from_second(time.as_second()).unwrap_or(time)
}

/// The condition of type `type_`, if present.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// The condition of type `type_`, only if it was computed from exactly `generation` (the
/// object's current `metadata.generation`): a condition computed from an older spec says nothing
/// about the current one.
///
/// ```
/// use kubeward::conditions::{self, ConditionStatus, DesiredCondition};
/// let mut list = Vec::new();
/// let _ = conditions::set(&mut list, DesiredCondition::new("Ready", ConditionStatus::True, "Running", "")?.observed_generation(3)?);
/// assert!(conditions::find_observed(&list, "Ready", Some(3)).is_some());
/// assert!(conditions::find_observed(&list, "Ready", Some(4)).is_none());
/// assert!(conditions::find_observed(&list, "Ready", None).is_none());
/// # Ok::<(), kubeward::conditions::ConditionError>(())
/// ```
pub fn find_observed<'a>(
    conditions: &'a [Condition],
    type_: &str,
    generation: Option<i64>,
) -> Option<&'a Condition> {
    find(conditions, type_).filter(|c| generation.is_some() && c.observed_generation == generation)
}

/// Removes the condition of type `type_` (every entry of it); whether anything was removed.
pub fn remove(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

/// Whether the condition `type_` is present with status `status`.
pub fn has_status(conditions: &[Condition], type_: &str, status: ConditionStatus) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == status.as_str())
}

/// Whether the condition `type_` is present and `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    has_status(conditions, type_, ConditionStatus::True)
}

/// Whether the condition `type_` is present and `False`.
pub fn is_false(conditions: &[Condition], type_: &str) -> bool {
    has_status(conditions, type_, ConditionStatus::False)
}

/// Whether the condition `type_` is present and `Unknown`.
pub fn is_unknown(conditions: &[Condition], type_: &str) -> bool {
    has_status(conditions, type_, ConditionStatus::Unknown)
}

#[cfg(test)]
mod tests {
    use super::ConditionStatus::{False, True, Unknown};
    use super::*;
    use crate::clock::ManualClock;
    use proptest::prelude::*;

    const T0: &str = "2026-01-01T00:00:00Z";
    const NOW: &str = "2026-01-01T01:00:00.999Z";
    const NOW_SECONDS: &str = "2026-01-01T01:00:00Z";

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn stored(
        type_: &str,
        status: ConditionStatus,
        reason: &str,
        message: &str,
        generation: Option<i64>,
        ltt: &str,
    ) -> Condition {
        Condition {
            last_transition_time: Time(ts(ltt)),
            message: message.into(),
            observed_generation: generation,
            reason: reason.into(),
            status: status.as_str().into(),
            type_: type_.into(),
        }
    }

    fn desired(
        type_: &str,
        status: ConditionStatus,
        reason: &str,
        message: &str,
        generation: Option<i64>,
    ) -> DesiredCondition {
        let d = DesiredCondition::new(type_, status, reason, message).unwrap();
        match generation {
            Some(g) => d.observed_generation(g).unwrap(),
            None => d,
        }
    }

    /// Every branch of apimachinery's `SetStatusCondition` (its own test table, plus the
    /// branches it leaves implicit).
    #[test]
    fn set_follows_set_status_condition_in_every_branch() {
        struct Case {
            name: &'static str,
            before: Vec<Condition>,
            set: DesiredCondition,
            change: Change,
            after: Vec<Condition>,
        }
        let a = |status, reason, message, generation, ltt| {
            stored("A", status, reason, message, generation, ltt)
        };
        let b = stored("B", True, "Fine", "", None, T0);
        let cases = vec![
            Case {
                name: "add to an empty list stamps now",
                before: vec![],
                set: desired("A", True, "Ready", "msg", Some(1)),
                change: Change::Transitioned,
                after: vec![a(True, "Ready", "msg", Some(1), NOW_SECONDS)],
            },
            Case {
                name: "add beside another type appends",
                before: vec![b.clone()],
                set: desired("A", False, "Failed", "", None),
                change: Change::Transitioned,
                after: vec![b.clone(), a(False, "Failed", "", None, NOW_SECONDS)],
            },
            Case {
                name: "add with an explicit transition time keeps it",
                before: vec![],
                set: desired("A", True, "Ready", "", None).last_transition_time(ts(T0)),
                change: Change::Transitioned,
                after: vec![a(True, "Ready", "", None, T0)],
            },
            Case {
                name: "identical is unchanged",
                before: vec![a(True, "Ready", "msg", Some(1), T0)],
                set: desired("A", True, "Ready", "msg", Some(1)),
                change: Change::Unchanged,
                after: vec![a(True, "Ready", "msg", Some(1), T0)],
            },
            Case {
                name: "status change stamps now and takes everything",
                before: vec![a(True, "Ready", "msg", Some(1), T0), b.clone()],
                set: desired("A", False, "Broken", "other", Some(2)),
                change: Change::Transitioned,
                after: vec![a(False, "Broken", "other", Some(2), NOW_SECONDS), b.clone()],
            },
            Case {
                name: "status change with an explicit transition time uses it",
                before: vec![a(True, "Ready", "", None, NOW_SECONDS)],
                set: desired("A", Unknown, "Probing", "", None).last_transition_time(ts(T0)),
                change: Change::Transitioned,
                after: vec![a(Unknown, "Probing", "", None, T0)],
            },
            Case {
                name: "reason change keeps lastTransitionTime",
                before: vec![a(False, "Pending", "", None, T0)],
                set: desired("A", False, "Pulling", "", None),
                change: Change::Updated,
                after: vec![a(False, "Pulling", "", None, T0)],
            },
            Case {
                name: "message change keeps lastTransitionTime",
                before: vec![a(False, "Pending", "one", None, T0)],
                set: desired("A", False, "Pending", "two", None),
                change: Change::Updated,
                after: vec![a(False, "Pending", "two", None, T0)],
            },
            Case {
                name: "observedGeneration change keeps lastTransitionTime",
                before: vec![a(True, "Ready", "", Some(1), T0)],
                set: desired("A", True, "Ready", "", Some(2)),
                change: Change::Updated,
                after: vec![a(True, "Ready", "", Some(2), T0)],
            },
            Case {
                name: "observedGeneration cleared is an update",
                before: vec![a(True, "Ready", "", Some(1), T0)],
                set: desired("A", True, "Ready", "", None),
                change: Change::Updated,
                after: vec![a(True, "Ready", "", None, T0)],
            },
            Case {
                name: "explicit transition time is ignored without a status change",
                before: vec![a(True, "Ready", "", None, T0)],
                set: desired("A", True, "Ready", "new", None).last_transition_time(ts(NOW)),
                change: Change::Updated,
                after: vec![a(True, "Ready", "new", None, T0)],
            },
            Case {
                name: "duplicate types written by someone else collapse to the first",
                before: vec![
                    a(True, "Ready", "", None, T0),
                    b.clone(),
                    a(False, "Old", "", None, T0),
                ],
                set: desired("A", True, "Ready", "", None),
                change: Change::Updated,
                after: vec![a(True, "Ready", "", None, T0), b.clone()],
            },
        ];
        let clock = ManualClock::new(ts(NOW));
        for case in cases {
            let mut conditions = case.before;
            let change = set_with_clock(&mut conditions, case.set, &clock);
            assert_eq!(change, case.change, "{}", case.name);
            assert_eq!(conditions, case.after, "{}", case.name);
        }
    }

    #[test]
    fn transition_time_is_truncated_to_whole_seconds() {
        let clock = ManualClock::new(ts("2026-03-04T05:06:07.999999Z"));
        let mut conditions = Vec::new();
        let _ = set_with_clock(
            &mut conditions,
            desired("A", True, "Ready", "", None),
            &clock,
        );
        assert_eq!(
            conditions[0].last_transition_time.0,
            ts("2026-03-04T05:06:07Z")
        );
    }

    #[test]
    fn find_observed_requires_exactly_the_current_generation() {
        let conditions = vec![
            stored("A", True, "Ready", "", Some(3), T0),
            stored("B", True, "Ready", "", None, T0),
        ];
        assert!(find_observed(&conditions, "A", Some(3)).is_some());
        assert!(find_observed(&conditions, "A", Some(4)).is_none());
        assert!(find_observed(&conditions, "A", Some(2)).is_none());
        assert!(find_observed(&conditions, "B", Some(1)).is_none());
        assert!(find_observed(&conditions, "C", Some(1)).is_none());
    }

    #[test]
    fn remove_and_status_predicates() {
        let mut conditions = vec![
            stored("A", True, "Ready", "", None, T0),
            stored("B", False, "Broken", "", None, T0),
            stored("C", Unknown, "Probing", "", None, T0),
        ];
        assert!(
            is_true(&conditions, "A")
                && !is_false(&conditions, "A")
                && !is_unknown(&conditions, "A")
        );
        assert!(is_false(&conditions, "B") && is_unknown(&conditions, "C"));
        assert!(
            !is_true(&conditions, "missing")
                && !is_false(&conditions, "missing")
                && !is_unknown(&conditions, "missing")
        );
        assert!(remove(&mut conditions, "B"));
        assert!(!remove(&mut conditions, "B"));
        assert_eq!(
            conditions
                .iter()
                .map(|c| c.type_.as_str())
                .collect::<Vec<_>>(),
            ["A", "C"]
        );
    }

    #[test]
    fn invalid_type_reason_and_status_are_typed_errors() {
        let err = DesiredCondition::new("Up To Date", True, "Applied", "").unwrap_err();
        assert!(matches!(
            err,
            ConditionError::InvalidName(InvalidName {
                kind: NameKind::ConditionType,
                ..
            })
        ));
        let err = DesiredCondition::new("UpToDate", True, "applied-ok", "").unwrap_err();
        assert!(matches!(
            err,
            ConditionError::InvalidName(InvalidName {
                kind: NameKind::ConditionReason,
                ..
            })
        ));
        assert_eq!(
            "true".parse::<ConditionStatus>().unwrap_err().to_string(),
            "invalid condition status \"true\": must be one of \"True\", \"False\", \"Unknown\""
        );
        assert_eq!("Unknown".parse::<ConditionStatus>().unwrap(), Unknown);
    }

    #[test]
    fn a_negative_observed_generation_is_refused_as_apimachinery_does() {
        let d = DesiredCondition::new("A", True, "Ready", "").unwrap();
        assert_eq!(
            d.clone().observed_generation(-1).unwrap_err().to_string(),
            "invalid condition observedGeneration -1: must be greater than or equal to zero"
        );
        assert_eq!(d.observed_generation(0).unwrap().generation(), Some(0));
    }

    #[test]
    fn messages_over_32_kib_are_cut_at_a_char_boundary() {
        let message = "é".repeat(20_000); // 40,000 bytes
        let d = DesiredCondition::new("A", True, "Ready", message).unwrap();
        assert_eq!(d.message().len(), 32_768);
        assert!(d.message().chars().all(|c| c == 'é'));
    }

    fn status_strategy() -> impl Strategy<Value = ConditionStatus> {
        prop_oneof![Just(True), Just(False), Just(Unknown)]
    }

    fn desired_strategy() -> impl Strategy<Value = DesiredCondition> {
        (
            prop_oneof![Just("A"), Just("B"), Just("example.com/C")],
            status_strategy(),
            prop_oneof![Just("R1"), Just("R2")],
            prop_oneof![Just(""), Just("m")],
            proptest::option::of(1i64..3),
        )
            .prop_map(|(t, s, r, m, g)| desired(t, s, r, m, g))
    }

    proptest! {
        #[test]
        fn last_transition_time_changes_only_on_add_or_status_change(
            steps in proptest::collection::vec((desired_strategy(), 0u64..100), 1..30)
        ) {
            let clock = ManualClock::new(ts(T0));
            let mut conditions: Vec<Condition> = Vec::new();
            for (d, advance) in steps {
                clock.advance(std::time::Duration::from_secs(advance + 1));
                let before = find(&conditions, d.type_()).cloned();
                let change = set_with_clock(&mut conditions, d.clone(), &clock);
                let after = find(&conditions, d.type_()).unwrap().clone();
                match before {
                    None => {
                        prop_assert_eq!(change, Change::Transitioned);
                        prop_assert_eq!(after.last_transition_time.0, whole_seconds(clock.now()));
                    }
                    Some(before) if before.status != after.status => {
                        prop_assert_eq!(change, Change::Transitioned);
                        prop_assert_eq!(after.last_transition_time.0, whole_seconds(clock.now()));
                    }
                    Some(before) => {
                        prop_assert_ne!(change, Change::Transitioned);
                        prop_assert_eq!(&after.last_transition_time, &before.last_transition_time);
                    }
                }
                prop_assert_eq!(after.status.as_str(), d.status().as_str());
                prop_assert_eq!(after.reason.as_str(), d.reason());
                prop_assert_eq!(after.message.as_str(), d.message());
                prop_assert_eq!(after.observed_generation, d.generation());
            }
        }

        #[test]
        fn setting_the_same_desired_condition_twice_is_unchanged(
            existing in proptest::collection::vec(desired_strategy(), 0..6),
            d in desired_strategy(),
        ) {
            let clock = ManualClock::new(ts(T0));
            let mut conditions = Vec::new();
            for e in existing {
                let _ = set_with_clock(&mut conditions, e, &clock);
            }
            let _ = set_with_clock(&mut conditions, d.clone(), &clock);
            let snapshot = conditions.clone();
            clock.advance(std::time::Duration::from_secs(10));
            prop_assert_eq!(set_with_clock(&mut conditions, d, &clock), Change::Unchanged);
            prop_assert_eq!(conditions, snapshot);
        }

        #[test]
        fn a_type_never_appears_twice(steps in proptest::collection::vec(desired_strategy(), 0..40)) {
            let clock = ManualClock::new(ts(T0));
            let mut conditions = Vec::new();
            for d in steps {
                let _ = set_with_clock(&mut conditions, d, &clock);
                let mut types: Vec<_> = conditions.iter().map(|c| c.type_.clone()).collect();
                let len = types.len();
                types.sort();
                types.dedup();
                prop_assert_eq!(types.len(), len);
            }
        }

        #[test]
        fn message_truncation_yields_valid_utf8_within_the_limit(
            unit in "\\PC", repeat in 0usize..12_000
        ) {
            let message = unit.repeat(repeat);
            let d = DesiredCondition::new("A", True, "Ready", message.clone()).unwrap();
            prop_assert!(d.message().len() <= CONDITION_MESSAGE_MAX_BYTES);
            prop_assert!(message.starts_with(d.message()));
            prop_assert!(d.message().len() + 4 > CONDITION_MESSAGE_MAX_BYTES || d.message() == message);
        }
    }
}
