//! kstatus-compatible status, derived by the runtime from what it already knows about a pass: its
//! outcome and the classes of the reasons its declared conditions end in.
//!
//! Deploy tools (`kubectl wait`, Helm's `--wait`, Flux, Argo CD, `kpt live status`) decide whether
//! an applied object is done with [kstatus](https://github.com/kubernetes-sigs/cli-utils/tree/master/pkg/kstatus):
//! `status.observedGeneration` behind `metadata.generation` is InProgress, a `Reconciling`
//! condition True is InProgress, a `Stalled` condition True is Failed, and otherwise the object is
//! Current (newer versions also read `Ready`: False is InProgress). At the end of every `apply`
//! pass the runtime writes, for a reconciler with [`Reconciler::KSTATUS`](crate::Reconciler::KSTATUS)
//! set (`#[kubeward::reconciler]` sets it unless `kstatus = false`):
//!
//! - `status.observedGeneration`: the generation the pass worked on;
//! - `Ready`, `Reconciling` and `Stalled`, each with `observedGeneration` (so `kubectl wait
//!   --for=condition=Ready` after a spec change returns only once the new generation is
//!   observed), from the pass's [state](State):
//!
//! | the pass | state | `Ready` | `Reconciling` | `Stalled` |
//! |---|---|---|---|---|
//! | completed or requeued, its declared conditions healthy (`Applied`) | Current | True | — | — |
//! | a declared condition progressing (`Applying`, status `Unknown`), or requeued with no declared condition or a failed one | InProgress | False | True | — |
//! | a declared condition at a [gate](crate::vocabulary::Reason::gate) (`WaitingForApproval`) | InProgress | False | True | — |
//! | the same gate listed in [`Kstatus::current_at`] | Current | True | — | — |
//! | failed, to be retried | InProgress | False | True | — |
//! | failed with a [terminal](crate::Terminal) error, or [`Kstatus::stalled_after`] times in a row | Failed | False | — | True |
//! | completed with a declared condition failed (`RolloutTimeout`, a Warning reason) | Failed | False | — | True |
//!
//! The reason of each is the reason of the declared condition that decided the state (the first
//! vocabulary's, among conditions of the same class), else `Reconciled`, `Progressing` or
//! `ReconcileFailed`; the message is that condition's, or the error's cause chain. `Reconciling`
//! and `Stalled` are abnormal-true: removed rather than set False when they do not hold, as Flux
//! does. They are written for objects that have a status — the reconciler declares a condition
//! vocabulary, or the object's `status` holds something, or the pass writes there — so a
//! controller of a kind without status (a ConfigMap) writes none. A skipped pass (a suspended
//! object) changes none of them; neither does `cleanup`
//! (kstatus reports a deleting object Terminating from its `deletionTimestamp`), nor a pass that
//! panicked or ran past its timeout (nothing it decided is written).
//!
//! A pass that converged and asks to be requeued (kube-rs's periodic check,
//! `Ok(Action::requeue(..))`) is Current when its declared conditions say it is done: the state
//! comes from them, not from the requeue. Without a declared condition to read, a requeue is
//! InProgress; a reconciler that checks back periodically then runs with
//! [`Controller::with_resync`](crate::controller::Controller::with_resync) and returns
//! `Action::await_change()`.
//!
//! An approval gate is InProgress by default: `helm --wait` and `kubectl wait` wait for the
//! approval, which is what a pipeline that deploys and then tests wants. A gate that deploy tools
//! should treat as done (the operator parks there by design, and the pipeline must not block on a
//! human) is listed in [`Kstatus::current_at`] (`#[reconciler(kstatus(current_at(..)))]`).
//!
//! The other way round, [`readiness`] reads kstatus' verdict on any object — a Deployment or
//! custom resource the controller owns — so that a dependent's readiness can feed one of the
//! reconciler's declared conditions (read it with [`Pass::get_child`](crate::Pass::get_child)).
//!
//! The reconciler's own vocabularies take precedence: a declared `Ready` (or `Reconciling`,
//! `Stalled`) condition is the reconciler's, and the runtime derives only the others. The derived
//! conditions publish no events: they restate transitions the declared conditions already
//! announce.
//!
//! ```
//! use kube::runtime::controller::Action;
//! use kubeward::conditions::{Condition, ConditionStatus::*};
//! use kubeward::kstatus::{Kstatus, State, Verdict};
//! use kubeward::vocabulary::{Reason, Vocabulary};
//!
//! static UP_TO_DATE: Vocabulary = Vocabulary {
//!     type_: "UpToDate",
//!     reasons: &[
//!         Reason::new("Applying", Unknown).initial().to(&["WaitingForApproval", "Applied"]),
//!         Reason::new("WaitingForApproval", False).gate().to(&["Applied"]),
//!         Reason::new("Applied", True).to(&["Applying"]),
//!     ],
//! };
//! let at = |reason: &str, status: &str| Condition {
//!     type_: "UpToDate".into(),
//!     status: status.into(),
//!     reason: reason.into(),
//!     message: format!("at {reason}"),
//!     observed_generation: Some(1),
//!     last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
//! };
//! let state = |conditions: &[Condition]| {
//!     Kstatus::DEFAULT.state(&[&UP_TO_DATE], conditions, &Verdict::Completed)
//! };
//! assert_eq!(state(&[at("Applied", "True")]), State::Current { reason: "Applied".into(), message: "at Applied".into() });
//! assert!(matches!(state(&[at("WaitingForApproval", "False")]), State::InProgress { .. }));
//! ```

mod readiness;

pub use self::readiness::{Readiness, readiness};

use crate::conditions::{Condition, ConditionStatus};
use crate::vocabulary::{ReasonClass, ReasonType, Vocabulary};

/// The condition type that is True when the object is reconciled at its current generation.
pub const READY: &str = "Ready";
/// The kstatus condition type that is True while the controller works towards the spec.
pub const RECONCILING: &str = "Reconciling";
/// The kstatus condition type that is True when the controller cannot make progress.
pub const STALLED: &str = "Stalled";
/// The status field holding the generation the controller last worked on.
pub const OBSERVED_GENERATION: &str = "observedGeneration";

/// How a reconciler reports kstatus-compatible status; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kstatus {
    /// After this many consecutive failed passes of an object (retried ones), it is reported
    /// `Stalled` (kstatus Failed) while the retries go on; `None`: only a terminal failure or a
    /// failed declared condition stalls.
    pub stalled_after: Option<u32>,
    /// Gates that deploy tools see as Current (`Ready` True) rather than InProgress.
    pub current_at: &'static [GateRef],
}

impl Kstatus {
    /// The default: stalled only by terminal failures and failed declared conditions, every gate
    /// InProgress.
    pub const DEFAULT: Kstatus = Kstatus {
        stalled_after: None,
        current_at: &[],
    };
}

impl Default for Kstatus {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A gate of a declared vocabulary, named by its condition type and reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateRef {
    /// The condition type, such as `UpToDate`.
    pub condition_type: &'static str,
    /// The gate's reason, such as `WaitingForApproval`.
    pub reason: &'static str,
}

impl GateRef {
    /// The gate `R` (a reason type of `#[kubeward::condition]`, such as
    /// `up_to_date::WaitingForApproval`).
    ///
    /// # Panics
    ///
    /// When `R` is not declared a gate (`#[reason(False, gate)]`) — at compile time where the
    /// reference is built in a constant, as `#[reconciler(kstatus(current_at(..)))]` does.
    pub const fn of<R: ReasonType>() -> GateRef {
        assert!(
            R::REASON.gate,
            "kstatus current_at(..) names a reason that is not a gate: declare it #[reason(.., gate)]"
        );
        GateRef {
            condition_type: R::VOCABULARY.type_,
            reason: R::REASON.name,
        }
    }
}

/// How a pass ended, as the derivation needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It returned `Ok` and waits for the next change (or said it completed).
    Completed,
    /// It returned `Ok` and asked to be requeued: Current when its declared conditions are
    /// healthy (their deciding reason is [done](ReasonClass::Done)), InProgress otherwise.
    Requeued,
    /// It failed.
    Failed {
        /// With a [terminal](crate::Terminal) error: not retried until the object changes.
        terminal: bool,
        /// The consecutive failed passes of the object, this one included.
        consecutive: u32,
        /// The error's cause chain.
        message: String,
    },
}

/// The kstatus state of an object after a pass, with the reason and message of the derived
/// conditions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Reconciled: `Ready` True.
    Current {
        /// The derived conditions' reason.
        reason: String,
        /// Their message.
        message: String,
    },
    /// Being reconciled: `Reconciling` True, `Ready` False.
    InProgress {
        /// The derived conditions' reason.
        reason: String,
        /// Their message.
        message: String,
    },
    /// Cannot make progress: `Stalled` True, `Ready` False.
    Failed {
        /// The derived conditions' reason.
        reason: String,
        /// Their message.
        message: String,
    },
}

impl Kstatus {
    /// The state after a pass that ended as `verdict` with `conditions`, the declared ones among
    /// them read through `vocabularies`.
    pub fn state(
        &self,
        vocabularies: &[&Vocabulary],
        conditions: &[Condition],
        verdict: &Verdict,
    ) -> State {
        let deciding = deciding_condition(vocabularies, conditions);
        let declared = |fallback: &str| match deciding {
            Some((condition, _)) => (condition.reason.clone(), condition.message.clone()),
            None => (fallback.to_owned(), String::new()),
        };
        let class = deciding.map(|(_, class)| class);
        match verdict {
            Verdict::Failed {
                terminal,
                consecutive,
                message,
            } => {
                let reason = match deciding {
                    Some((condition, ReasonClass::Failed)) => condition.reason.clone(),
                    _ => "ReconcileFailed".to_owned(),
                };
                if *terminal {
                    State::Failed {
                        reason,
                        message: message.clone(),
                    }
                } else if self.stalled_after.is_some_and(|n| *consecutive >= n) {
                    State::Failed {
                        reason,
                        message: format!("failed {consecutive} times in a row: {message}"),
                    }
                } else {
                    State::InProgress {
                        reason,
                        message: message.clone(),
                    }
                }
            }
            Verdict::Completed if class == Some(ReasonClass::Failed) => {
                let (reason, message) = declared("ReconcileFailed");
                State::Failed { reason, message }
            }
            _ if class == Some(ReasonClass::Waiting) => {
                let (reason, message) = declared("Progressing");
                let gate = deciding.map(|(c, _)| (c.type_.as_str(), c.reason.as_str()));
                let current = self
                    .current_at
                    .iter()
                    .any(|g| Some((g.condition_type, g.reason)) == gate);
                if current {
                    State::Current { reason, message }
                } else {
                    State::InProgress { reason, message }
                }
            }
            // Converged, and checking back later: the declared conditions say it is done.
            Verdict::Requeued if class == Some(ReasonClass::Done) => {
                let (reason, message) = declared("Reconciled");
                State::Current { reason, message }
            }
            Verdict::Requeued => {
                let (reason, message) = declared("Progressing");
                State::InProgress { reason, message }
            }
            Verdict::Completed if class == Some(ReasonClass::Progressing) => {
                let (reason, message) = declared("Progressing");
                State::InProgress { reason, message }
            }
            Verdict::Completed => {
                let (reason, message) = declared("Reconciled");
                State::Current { reason, message }
            }
        }
    }

    /// The state after a pass that moved a declared condition further than one declared
    /// transition, as its hop `hop` (the conditions with that hop) is written before the next, so
    /// the object is InProgress at the hop's reason — also at a healthy one — except
    /// at a gate listed in [`current_at`](Kstatus::current_at), which is Current as at rest.
    pub(crate) fn state_of_hop(&self, vocabularies: &[&Vocabulary], hop: &[Condition]) -> State {
        let done = deciding_condition(vocabularies, hop)
            .is_some_and(|(_, class)| class == ReasonClass::Done);
        match self.state(vocabularies, hop, &Verdict::Requeued) {
            State::Current { reason, message } if done => State::InProgress { reason, message },
            state => state,
        }
    }
}

/// The declared condition that decides the state: the one whose reason's class comes first in
/// failed, waiting, progressing, done (the first vocabulary's among equals), with that class.
/// Conditions at a reason their vocabulary does not declare (an older vocabulary's) are left out.
fn deciding_condition<'c>(
    vocabularies: &[&Vocabulary],
    conditions: &'c [Condition],
) -> Option<(&'c Condition, ReasonClass)> {
    let rank = |class: ReasonClass| match class {
        ReasonClass::Failed => 0,
        ReasonClass::Waiting => 1,
        ReasonClass::Progressing => 2,
        ReasonClass::Done => 3,
    };
    vocabularies
        .iter()
        .filter_map(|vocabulary| {
            let condition = crate::conditions::find(conditions, vocabulary.type_)?;
            let reason = vocabulary
                .reasons
                .iter()
                .find(|r| r.name == condition.reason)?;
            Some((condition, reason.class()))
        })
        .min_by_key(|(_, class)| rank(*class))
}

/// A derived condition: its type, and its (status, reason, message), or `None` when it is
/// removed.
pub type DerivedCondition<'a> = (&'static str, Option<(ConditionStatus, &'a str, &'a str)>);

impl State {
    /// The derived conditions of this state, each as (type, status, reason, message); a type
    /// with `None` is removed. Only the types in `derived` (see [`derived_types`]) are returned.
    pub fn conditions<'a>(&'a self, derived: &[&'static str]) -> Vec<DerivedCondition<'a>> {
        let (ready, reconciling, stalled, reason, message) = match self {
            State::Current { reason, message } => {
                (ConditionStatus::True, false, false, reason, message)
            }
            State::InProgress { reason, message } => {
                (ConditionStatus::False, true, false, reason, message)
            }
            State::Failed { reason, message } => {
                (ConditionStatus::False, false, true, reason, message)
            }
        };
        let text = (reason.as_str(), message.as_str());
        [
            (READY, Some((ready, text.0, text.1))),
            (
                RECONCILING,
                reconciling.then_some((ConditionStatus::True, text.0, text.1)),
            ),
            (
                STALLED,
                stalled.then_some((ConditionStatus::True, text.0, text.1)),
            ),
        ]
        .into_iter()
        .filter(|(type_, _)| derived.contains(type_))
        .collect()
    }
}

/// The condition types the runtime derives for a reconciler with `policy` and `vocabularies`:
/// `Ready`, `Reconciling` and `Stalled`, less those a vocabulary declares; none without a policy.
pub fn derived_types(policy: Option<&Kstatus>, vocabularies: &[&Vocabulary]) -> Vec<&'static str> {
    if policy.is_none() {
        return Vec::new();
    }
    [READY, RECONCILING, STALLED]
        .into_iter()
        .filter(|type_| !vocabularies.iter().any(|v| v.type_ == *type_))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::ConditionStatus::*;
    use crate::vocabulary::Reason;
    use kube::runtime::events::EventType;

    static UP_TO_DATE: Vocabulary = Vocabulary {
        type_: "UpToDate",
        reasons: &[
            Reason::new("Applying", Unknown).initial(),
            Reason::new("WaitingForApproval", False).gate(),
            Reason::new("Applied", True),
            Reason::new("RolloutTimeout", False),
        ],
    };
    static HEALTHY: Vocabulary = Vocabulary {
        type_: "Healthy",
        reasons: &[
            Reason::new("Healthy", True).initial(),
            Reason::new("NotStalled", False).event(EventType::Normal),
            Reason::new("Degraded", False),
        ],
    };

    fn at(type_: &str, reason: &str, status: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: format!("{type_} at {reason}"),
            observed_generation: Some(1),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                jiff::Timestamp::UNIX_EPOCH,
            ),
        }
    }

    fn state(policy: &Kstatus, conditions: &[Condition], verdict: &Verdict) -> State {
        policy.state(&[&UP_TO_DATE, &HEALTHY], conditions, verdict)
    }

    fn failed(terminal: bool, consecutive: u32) -> Verdict {
        Verdict::Failed {
            terminal,
            consecutive,
            message: "image not found".into(),
        }
    }

    #[test]
    fn a_completed_pass_with_healthy_conditions_is_current_at_the_deciding_reason() {
        let conditions = [
            at("UpToDate", "Applied", "True"),
            at("Healthy", "Healthy", "True"),
        ];
        assert_eq!(
            state(&Kstatus::DEFAULT, &conditions, &Verdict::Completed),
            State::Current {
                reason: "Applied".into(),
                message: "UpToDate at Applied".into()
            }
        );
        assert_eq!(
            state(&Kstatus::DEFAULT, &[], &Verdict::Completed),
            State::Current {
                reason: "Reconciled".into(),
                message: String::new()
            }
        );
    }

    #[test]
    fn progress_and_requeues_without_healthy_conditions_are_in_progress() {
        let applying = [at("UpToDate", "Applying", "Unknown")];
        assert_eq!(
            state(&Kstatus::DEFAULT, &applying, &Verdict::Completed),
            State::InProgress {
                reason: "Applying".into(),
                message: "UpToDate at Applying".into()
            }
        );
        assert!(matches!(
            state(&Kstatus::DEFAULT, &applying, &Verdict::Requeued),
            State::InProgress { reason, .. } if reason == "Applying"
        ));
        assert_eq!(
            state(&Kstatus::DEFAULT, &[], &Verdict::Requeued),
            State::InProgress {
                reason: "Progressing".into(),
                message: String::new()
            }
        );
        // One healthy condition does not outweigh another's progress.
        let half = [
            at("UpToDate", "Applying", "Unknown"),
            at("Healthy", "Healthy", "True"),
        ];
        assert!(matches!(
            state(&Kstatus::DEFAULT, &half, &Verdict::Requeued),
            State::InProgress { reason, .. } if reason == "Applying"
        ));
    }

    #[test]
    fn a_requeue_of_a_converged_object_is_current_at_the_deciding_reason() {
        // kube-rs's periodic check: `Ok(Action::requeue(5 min))` once the object converged.
        let conditions = [
            at("UpToDate", "Applied", "True"),
            at("Healthy", "Healthy", "True"),
        ];
        assert_eq!(
            state(&Kstatus::DEFAULT, &conditions, &Verdict::Requeued),
            State::Current {
                reason: "Applied".into(),
                message: "UpToDate at Applied".into()
            }
        );
        let healthy = [at("Healthy", "NotStalled", "False")];
        assert!(matches!(
            state(&Kstatus::DEFAULT, &healthy, &Verdict::Requeued),
            State::Current { reason, .. } if reason == "NotStalled"
        ));
    }

    #[test]
    fn a_first_hop_is_in_progress_even_at_a_healthy_reason_but_current_at_a_current_gate() {
        let applied = [at("UpToDate", "Applied", "True")];
        assert_eq!(
            Kstatus::DEFAULT.state_of_hop(&[&UP_TO_DATE, &HEALTHY], &applied),
            State::InProgress {
                reason: "Applied".into(),
                message: "UpToDate at Applied".into()
            }
        );
        let waiting = [at("UpToDate", "WaitingForApproval", "False")];
        let current = Kstatus {
            current_at: &[GateRef {
                condition_type: "UpToDate",
                reason: "WaitingForApproval",
            }],
            ..Kstatus::DEFAULT
        };
        assert!(matches!(
            current.state_of_hop(&[&UP_TO_DATE, &HEALTHY], &waiting),
            State::Current { reason, .. } if reason == "WaitingForApproval"
        ));
        assert!(matches!(
            Kstatus::DEFAULT.state_of_hop(&[&UP_TO_DATE, &HEALTHY], &waiting),
            State::InProgress { .. }
        ));
    }

    #[test]
    fn a_gate_is_in_progress_unless_listed_as_current() {
        let waiting = [
            at("UpToDate", "WaitingForApproval", "False"),
            at("Healthy", "Healthy", "True"),
        ];
        assert!(matches!(
            state(&Kstatus::DEFAULT, &waiting, &Verdict::Completed),
            State::InProgress { reason, .. } if reason == "WaitingForApproval"
        ));
        let current = Kstatus {
            current_at: &[GateRef {
                condition_type: "UpToDate",
                reason: "WaitingForApproval",
            }],
            ..Kstatus::DEFAULT
        };
        assert!(matches!(
            state(&current, &waiting, &Verdict::Completed),
            State::Current { reason, .. } if reason == "WaitingForApproval"
        ));
    }

    #[test]
    fn failures_stall_when_terminal_past_the_threshold_or_declared_failed_at_rest() {
        let applying = [at("UpToDate", "Applying", "Unknown")];
        assert_eq!(
            state(&Kstatus::DEFAULT, &applying, &failed(false, 9)),
            State::InProgress {
                reason: "ReconcileFailed".into(),
                message: "image not found".into()
            }
        );
        assert_eq!(
            state(&Kstatus::DEFAULT, &applying, &failed(true, 1)),
            State::Failed {
                reason: "ReconcileFailed".into(),
                message: "image not found".into()
            }
        );
        let threshold = Kstatus {
            stalled_after: Some(3),
            ..Kstatus::DEFAULT
        };
        assert!(matches!(
            state(&threshold, &applying, &failed(false, 2)),
            State::InProgress { .. }
        ));
        assert_eq!(
            state(&threshold, &applying, &failed(false, 3)),
            State::Failed {
                reason: "ReconcileFailed".into(),
                message: "failed 3 times in a row: image not found".into()
            }
        );
        // A declared failed condition gives its reason to the failure, and stalls a pass that
        // completed (nothing will change until the object does), not one that requeued.
        let timed_out = [at("UpToDate", "RolloutTimeout", "False")];
        assert!(matches!(
            state(&Kstatus::DEFAULT, &timed_out, &failed(true, 1)),
            State::Failed { reason, .. } if reason == "RolloutTimeout"
        ));
        assert!(matches!(
            state(&Kstatus::DEFAULT, &timed_out, &Verdict::Completed),
            State::Failed { reason, .. } if reason == "RolloutTimeout"
        ));
        assert!(matches!(
            state(&Kstatus::DEFAULT, &timed_out, &Verdict::Requeued),
            State::InProgress { .. }
        ));
        // The healthy False of a negative condition is done, not failed.
        let healthy = [at("Healthy", "NotStalled", "False")];
        assert!(matches!(
            state(&Kstatus::DEFAULT, &healthy, &Verdict::Completed),
            State::Current { reason, .. } if reason == "NotStalled"
        ));
    }

    #[test]
    fn a_reason_the_vocabulary_does_not_declare_decides_nothing() {
        let older = [at("UpToDate", "Rendering", "Unknown")];
        assert!(matches!(
            state(&Kstatus::DEFAULT, &older, &Verdict::Completed),
            State::Current { reason, .. } if reason == "Reconciled"
        ));
    }

    #[test]
    fn the_states_conditions_are_abnormal_true_and_leave_declared_types_alone() {
        let all = derived_types(Some(&Kstatus::DEFAULT), &[&UP_TO_DATE]);
        assert_eq!(all, [READY, RECONCILING, STALLED]);
        let in_progress = State::InProgress {
            reason: "Applying".into(),
            message: "m".into(),
        };
        assert_eq!(
            in_progress.conditions(&all),
            [
                (READY, Some((False, "Applying", "m"))),
                (RECONCILING, Some((True, "Applying", "m"))),
                (STALLED, None),
            ]
        );
        static READY_VOCABULARY: Vocabulary = Vocabulary {
            type_: "Ready",
            reasons: &[],
        };
        let without_ready = derived_types(Some(&Kstatus::DEFAULT), &[&READY_VOCABULARY]);
        assert_eq!(without_ready, [RECONCILING, STALLED]);
        assert!(derived_types(None, &[&UP_TO_DATE]).is_empty());
    }
}
