//! Condition vocabularies: a condition type's reasons, the status and event type each implies, and
//! the transitions allowed between them.
//!
//! A vocabulary is declared once — usually with `#[kubeward::condition]`, which also checks it at
//! compile time and generates a typestate API over it — and read by the runtime as plain data:
//! the controller takes the event type of a transition from the reason it enters.
//!
//! The default event type of a reason follows its status (`False` → Warning, `True` and `Unknown`
//! → Normal); a reason may override it both ways: the healthy `NotStalled` of an abnormal-true
//! condition such as `Stalled` is `False` but Normal, its `Stalled` is `True` but Warning. A reason
//! that parks the object until a human acts (an approval) is declared a [gate](Reason::gate):
//! Normal, and classed [`Waiting`](ReasonClass::Waiting) so alerts leave it alone.
//!
//! ```
//! use kube::runtime::events::EventType;
//! use kubeward::conditions::ConditionStatus::*;
//! use kubeward::vocabulary::{Reason, Vocabulary};
//!
//! static UP_TO_DATE: Vocabulary = Vocabulary {
//!     type_: "UpToDate",
//!     reasons: &[
//!         Reason::new("Applying", Unknown).initial().to(&["WaitingForApproval", "Applied"]),
//!         Reason::new("WaitingForApproval", False).gate().to(&["Applying"]),
//!         Reason::new("Applied", True).to(&["Applying"]),
//!     ],
//! };
//! assert_eq!(UP_TO_DATE.event_type("WaitingForApproval"), EventType::Normal);
//! assert!(UP_TO_DATE.allows(Some("Applied"), "Applying"));
//! assert!(!UP_TO_DATE.allows(Some("Applied"), "WaitingForApproval"));
//! assert!(UP_TO_DATE.allows(None, "Applying"));
//! ```

use std::fmt::Write as _;

use kube::runtime::events::EventType;

use crate::conditions::ConditionStatus;

/// The reasons of one condition type and the transitions between them.
#[derive(Debug)]
pub struct Vocabulary {
    /// The condition type, such as `UpToDate`.
    pub type_: &'static str,
    /// Every reason the condition may have.
    pub reasons: &'static [Reason],
}

/// One reason of a [`Vocabulary`].
#[derive(Debug, Clone, Copy)]
pub struct Reason {
    /// The reason string, such as `WaitingForApproval`.
    pub name: &'static str,
    /// The condition status this reason implies.
    pub status: ConditionStatus,
    /// The type of the event published when the condition transitions into this reason.
    pub event_type: EventType,
    /// Whether a condition may start in this reason (when it is absent from the status).
    pub initial: bool,
    /// Whether the reason is a human gate: the object is parked on purpose until someone acts
    /// (an approval, a manual resume). Only gates are classed [`ReasonClass::Waiting`].
    pub gate: bool,
    /// The reasons the condition may go to from this one.
    pub targets: &'static [&'static str],
}

impl Reason {
    /// A reason implying `status`, with the default event type for it, not initial, without
    /// targets.
    pub const fn new(name: &'static str, status: ConditionStatus) -> Self {
        Self {
            name,
            status,
            event_type: default_event_type(status),
            initial: false,
            gate: false,
            targets: &[],
        }
    }

    /// Overrides the event type.
    #[must_use]
    pub const fn event(mut self, event_type: EventType) -> Self {
        self.event_type = event_type;
        self
    }

    /// Marks the reason as one a condition may start in.
    #[must_use]
    pub const fn initial(mut self) -> Self {
        self.initial = true;
        self
    }

    /// Marks the reason as a human gate (an approval, a pause someone lifts) and makes its event
    /// Normal: the object waits on purpose, which is neither a failure nor stuck, so it is
    /// classed [`ReasonClass::Waiting`] and the generated alerts leave it alone. A later
    /// `.event(EventType::Warning)` makes it [`Failed`](ReasonClass::Failed) again.
    #[must_use]
    pub const fn gate(mut self) -> Self {
        self.gate = true;
        self.event_type = EventType::Normal;
        self
    }

    /// The class of the reason, from its event type, whether it is a [gate](Reason::gate) and its
    /// status; see [`ReasonClass`].
    pub const fn class(&self) -> ReasonClass {
        match (&self.event_type, self.gate, self.status) {
            (EventType::Warning, _, _) => ReasonClass::Failed,
            (EventType::Normal, true, _) => ReasonClass::Waiting,
            (EventType::Normal, false, ConditionStatus::Unknown) => ReasonClass::Progressing,
            (EventType::Normal, false, ConditionStatus::True | ConditionStatus::False) => {
                ReasonClass::Done
            }
        }
    }

    /// Sets the reasons the condition may go to from this one.
    #[must_use]
    pub const fn to(mut self, targets: &'static [&'static str]) -> Self {
        self.targets = targets;
        self
    }
}

/// What a reason means for someone watching the object, derived from its declaration: the
/// `class` label of `kubeward_object_condition_reason`, which lets alert rules tell a human gate
/// from a failure.
///
/// | declared | class |
/// |---|---|
/// | a Warning event (any status: `False`, or an abnormal `True` such as `Stalled`) | [`Failed`](ReasonClass::Failed) |
/// | a [gate](Reason::gate) (the author parks the object until a human acts: an approval) | [`Waiting`](ReasonClass::Waiting) |
/// | `Unknown`, Normal | [`Progressing`](ReasonClass::Progressing) |
/// | `True` or `False`, Normal (`Ready`, or the healthy `NotStalled` of a `Stalled` condition) | [`Done`](ReasonClass::Done) |
///
/// A False reason with a Normal event is not a gate by itself: the healthy state of a
/// negative-polarity condition (kstatus' `Stalled`, `Degraded`) is False and Normal too.
///
/// ```
/// # use kube::runtime::events::EventType;
/// # use kubeward::conditions::ConditionStatus::*;
/// use kubeward::vocabulary::{Reason, ReasonClass};
/// assert_eq!(Reason::new("WaitingForApproval", False).gate().class(), ReasonClass::Waiting);
/// assert_eq!(Reason::new("NotStalled", False).event(EventType::Normal).class(), ReasonClass::Done);
/// assert_eq!(Reason::new("FailedDeploy", False).class(), ReasonClass::Failed);
/// assert_eq!(Reason::new("Stalled", True).event(EventType::Warning).class(), ReasonClass::Failed);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReasonClass {
    /// The controller is working on it (`Unknown`, Normal).
    Progressing,
    /// Parked on purpose until someone acts (a [gate](Reason::gate)): never stuck, never failing.
    Waiting,
    /// Something went wrong (a Warning event).
    Failed,
    /// Converged or healthy (`True` or `False` with a Normal event, not a gate).
    Done,
}

impl ReasonClass {
    /// Every class, in label order.
    pub const ALL: [ReasonClass; 4] = [
        ReasonClass::Progressing,
        ReasonClass::Waiting,
        ReasonClass::Failed,
        ReasonClass::Done,
    ];

    /// The label value: `progressing`, `waiting`, `failed` or `done`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ReasonClass::Progressing => "progressing",
            ReasonClass::Waiting => "waiting",
            ReasonClass::Failed => "failed",
            ReasonClass::Done => "done",
        }
    }
}

impl std::fmt::Display for ReasonClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The event type a condition status implies unless its reason overrides it: `False` → Warning,
/// `True` and `Unknown` → Normal.
pub const fn default_event_type(status: ConditionStatus) -> EventType {
    match status {
        ConditionStatus::False => EventType::Warning,
        ConditionStatus::True | ConditionStatus::Unknown => EventType::Normal,
    }
}

/// Two vocabularies of one controller declare the same condition type: the condition's reasons,
/// event types and metric series would come from the first alone, the second's silently missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "two vocabularies declare the condition type `{condition_type}` (one with the reasons {first}, \
     the other with {second}); a condition type has one vocabulary: merge them or rename one"
)]
pub struct DuplicateConditionType {
    /// The condition type declared twice.
    pub condition_type: &'static str,
    /// The reasons of the first vocabulary, comma-separated.
    pub first: String,
    /// The reasons of the second vocabulary, comma-separated.
    pub second: String,
}

impl Vocabulary {
    /// Checks that no two of `vocabularies` declare the same condition type. `#[reconciler]`
    /// checks its `conditions(..)` at compile time; this is the check for a hand-written
    /// [`Reconciler::CONDITIONS`](crate::Reconciler::CONDITIONS).
    ///
    /// # Errors
    /// [`DuplicateConditionType`] for the first condition type declared twice.
    ///
    /// ```
    /// # use kubeward::conditions::ConditionStatus::*;
    /// use kubeward::vocabulary::{Reason, Vocabulary};
    /// static A: Vocabulary = Vocabulary { type_: "Ready", reasons: &[Reason::new("Up", True)] };
    /// static B: Vocabulary = Vocabulary { type_: "Ready", reasons: &[Reason::new("Down", False)] };
    /// let error = Vocabulary::check_distinct(&[&A, &B]).unwrap_err();
    /// assert_eq!((error.condition_type, error.first.as_str(), error.second.as_str()), ("Ready", "Up", "Down"));
    /// ```
    pub fn check_distinct(vocabularies: &[&Vocabulary]) -> Result<(), DuplicateConditionType> {
        for (j, second) in vocabularies.iter().enumerate() {
            if let Some(first) = vocabularies[..j].iter().find(|v| v.type_ == second.type_) {
                return Err(DuplicateConditionType {
                    condition_type: second.type_,
                    first: first.reason_list(),
                    second: second.reason_list(),
                });
            }
        }
        Ok(())
    }

    fn reason_list(&self) -> String {
        let names: Vec<&str> = self.reasons.iter().map(|r| r.name).collect();
        names.join(", ")
    }

    /// The reason named `name`, if declared.
    pub fn reason(&self, name: &str) -> Option<&Reason> {
        self.reasons.iter().find(|r| r.name == name)
    }

    /// The event type of a transition into `reason`: the declared one, or the default for
    /// `status` when the reason is not declared.
    pub fn event_type_or(&self, reason: &str, status: ConditionStatus) -> EventType {
        self.reason(reason)
            .map_or_else(|| default_event_type(status), |r| r.event_type)
    }

    /// The event type of a transition into the declared `reason` (Normal if undeclared).
    pub fn event_type(&self, reason: &str) -> EventType {
        self.reason(reason)
            .map_or(EventType::Normal, |r| r.event_type)
    }

    /// Whether the condition may go from `from` (`None`: absent) to `to`. Staying in the same
    /// reason is always allowed (a new message is not a transition). A stored reason outside the
    /// vocabulary (written by an older controller version) may go to any start state.
    pub fn allows(&self, from: Option<&str>, to: &str) -> bool {
        match from.and_then(|from| self.reason(from)) {
            Some(from) => from.name == to || from.targets.contains(&to),
            None => self.reason(to).is_some_and(|r| r.initial),
        }
    }

    /// A Mermaid state diagram of the vocabulary, for docs and READMEs: start states hang off
    /// `[*]`, each reason is labelled with its status, and reasons whose event is a Warning are
    /// styled as such.
    ///
    /// ```
    /// # use kubeward::conditions::ConditionStatus::*;
    /// # use kubeward::vocabulary::{Reason, Vocabulary};
    /// static READY: Vocabulary = Vocabulary {
    ///     type_: "Ready",
    ///     reasons: &[
    ///         Reason::new("Starting", Unknown).initial().to(&["Running"]),
    ///         Reason::new("Running", True).to(&["Crashed"]),
    ///         Reason::new("Crashed", False).to(&["Starting"]),
    ///     ],
    /// };
    /// assert_eq!(READY.mermaid(), "\
    /// stateDiagram-v2
    ///     %% condition Ready
    ///     Starting: Starting (Unknown)
    ///     Running: Running (True)
    ///     Crashed: Crashed (False, Warning)
    ///     [*] --> Starting
    ///     Starting --> Running
    ///     Running --> Crashed
    ///     Crashed --> Starting
    ///     classDef warning fill:#fdd,stroke:#c00
    ///     class Crashed warning
    /// ");
    /// ```
    pub fn mermaid(&self) -> String {
        let mut out = String::from("stateDiagram-v2\n");
        let _ = writeln!(out, "    %% condition {}", self.type_);
        for reason in self.reasons {
            let warning = if reason.event_type == EventType::Warning {
                ", Warning"
            } else {
                ""
            };
            let normal_false = if reason.event_type == EventType::Normal
                && reason.status == ConditionStatus::False
            {
                ", Normal"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "    {0}: {0} ({1}{warning}{normal_false})",
                reason.name, reason.status
            );
        }
        for reason in self.reasons.iter().filter(|r| r.initial) {
            let _ = writeln!(out, "    [*] --> {}", reason.name);
        }
        for reason in self.reasons {
            for target in reason.targets {
                let _ = writeln!(out, "    {} --> {target}", reason.name);
            }
        }
        let warnings: Vec<&str> = self
            .reasons
            .iter()
            .filter(|r| r.event_type == EventType::Warning)
            .map(|r| r.name)
            .collect();
        if !warnings.is_empty() {
            out.push_str("    classDef warning fill:#fdd,stroke:#c00\n");
            let _ = writeln!(out, "    class {} warning", warnings.join(","));
        }
        out
    }
}

/// A condition vocabulary declared as a Rust type (what `#[kubeward::condition]` implements).
pub trait ConditionType: 'static {
    /// The vocabulary.
    const VOCABULARY: &'static Vocabulary;

    /// The typed view of the condition as stored: one value per declared reason (offering only
    /// the transitions declared from it), one for an absent condition (offering the start
    /// states), and one for a reason outside the vocabulary.
    type State;

    /// The typed view of `stored`, the condition of this type as it stands (if present).
    fn state(stored: Option<&crate::conditions::Condition>) -> Self::State;
}

/// One reason of a vocabulary as a Rust type: `#[kubeward::condition]` generates a unit struct per
/// reason (such as `up_to_date::Applying`) and implements this trait for it. The reason types are
/// the targets of the typed transitions, `now.to(Applying, "rolling out")`.
pub trait ReasonType: Copy + 'static {
    /// The vocabulary the reason belongs to.
    const VOCABULARY: &'static Vocabulary;
    /// The reason's declaration in [`VOCABULARY`](ReasonType::VOCABULARY).
    const REASON: &'static Reason;
}

/// The condition of one type as it stands in a pass (absent, or the stored condition), carried by
/// every value of a typed [`ConditionType::State`] so the reconciler can read the message, the
/// transition time and the generation it describes.
///
/// ```
/// use kubeward::vocabulary::Stored;
/// let absent = Stored::new(None);
/// assert_eq!(absent.reason(), None);
/// assert_eq!(absent.message(), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stored {
    condition: Option<crate::conditions::Condition>,
}

impl Stored {
    /// The condition as stored (a copy of it), if present.
    pub fn new(condition: Option<&crate::conditions::Condition>) -> Self {
        Self {
            condition: condition.cloned(),
        }
    }

    /// The stored condition, `None` when the status has no condition of this type.
    pub fn condition(&self) -> Option<&crate::conditions::Condition> {
        self.condition.as_ref()
    }

    /// The stored reason.
    pub fn reason(&self) -> Option<&str> {
        self.condition.as_ref().map(|c| c.reason.as_str())
    }

    /// The stored message.
    pub fn message(&self) -> Option<&str> {
        self.condition.as_ref().map(|c| c.message.as_str())
    }

    /// When the condition last changed its status (`lastTransitionTime`).
    pub fn since(&self) -> Option<jiff::Timestamp> {
        self.condition.as_ref().map(|c| c.last_transition_time.0)
    }

    /// The `metadata.generation` the stored condition was computed from.
    pub fn observed_generation(&self) -> Option<i64> {
        self.condition.as_ref().and_then(|c| c.observed_generation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConditionStatus::*;

    static UP_TO_DATE: Vocabulary = Vocabulary {
        type_: "UpToDate",
        reasons: &[
            Reason::new("Applying", Unknown).initial().to(&[
                "WaitingForApproval",
                "ReadyToPromote",
                "FailedDeploy",
            ]),
            Reason::new("WaitingForApproval", False)
                .gate()
                .to(&["Applying"]),
            Reason::new("ReadyToPromote", Unknown).to(&["Applied"]),
            Reason::new("Applied", True).to(&["Applying"]),
            Reason::new("FailedDeploy", False).to(&["Applying"]),
            Reason::new("Stalled", True)
                .event(EventType::Warning)
                .to(&["Applying"]),
        ],
    };

    #[test]
    fn event_type_follows_status_unless_overridden_both_ways() {
        assert_eq!(UP_TO_DATE.event_type("Applying"), EventType::Normal);
        assert_eq!(UP_TO_DATE.event_type("Applied"), EventType::Normal);
        assert_eq!(UP_TO_DATE.event_type("FailedDeploy"), EventType::Warning);
        assert_eq!(
            UP_TO_DATE.event_type("WaitingForApproval"),
            EventType::Normal
        );
        assert_eq!(UP_TO_DATE.event_type("Stalled"), EventType::Warning);
        assert_eq!(
            UP_TO_DATE.event_type_or("Unheard", False),
            EventType::Warning
        );
        assert_eq!(UP_TO_DATE.event_type_or("Unheard", True), EventType::Normal);
    }

    #[test]
    fn class_follows_status_and_event_type() {
        let class = |name| UP_TO_DATE.reason(name).unwrap().class();
        assert_eq!(class("Applying"), ReasonClass::Progressing);
        assert_eq!(class("WaitingForApproval"), ReasonClass::Waiting);
        assert_eq!(class("FailedDeploy"), ReasonClass::Failed);
        assert_eq!(class("Stalled"), ReasonClass::Failed);
        assert_eq!(class("Applied"), ReasonClass::Done);
    }

    #[test]
    fn only_a_gate_is_waiting_not_every_false_with_a_normal_event() {
        // kstatus' `Stalled`: False is the healthy state, True the failure.
        let not_stalled = Reason::new("NotStalled", False).event(EventType::Normal);
        assert_eq!(not_stalled.class(), ReasonClass::Done);
        assert_eq!(not_stalled.event_type, EventType::Normal);
        let approval = Reason::new("WaitingForApproval", False).gate();
        assert_eq!(approval.event_type, EventType::Normal);
        assert_eq!(approval.class(), ReasonClass::Waiting);
        assert_eq!(
            Reason::new("AwaitingResume", Unknown).gate().class(),
            ReasonClass::Waiting
        );
        assert_eq!(
            approval.event(EventType::Warning).class(),
            ReasonClass::Failed
        );
    }

    #[test]
    fn only_declared_transitions_are_allowed() {
        assert!(UP_TO_DATE.allows(Some("Applying"), "WaitingForApproval"));
        assert!(UP_TO_DATE.allows(Some("Applying"), "Applying"));
        assert!(!UP_TO_DATE.allows(Some("Applied"), "ReadyToPromote"));
        assert!(UP_TO_DATE.allows(None, "Applying"));
        assert!(!UP_TO_DATE.allows(None, "Applied"));
        // A reason an older controller wrote behaves like an absent condition.
        assert!(UP_TO_DATE.allows(Some("LegacyReason"), "Applying"));
        assert!(!UP_TO_DATE.allows(Some("LegacyReason"), "Applied"));
    }
}
