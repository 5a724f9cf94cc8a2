//! [`Trigger`]: why a pass runs — the object's own change, a change of one of its children or of
//! a related object, or the controller's own schedule — carried from the watch that saw it to
//! the pass. kube-runtime's `ReconcileReason` is the counterpart, which its `Controller` logs
//! but does not hand to the reconciler.
//!
//! The runtime's policies read it where they decide: a hold after a terminal failure ends when
//! something the object depends on changed (a child, a related object), not on the object's own
//! status write; the queue (`controller/queue.rs`) counts what waits for a pass. A reconciler may log
//! it ([`Pass::triggers`](crate::Pass::triggers)), and it is a field of the pass's span; a pass
//! reconciles the object's whole state whatever started it (level-triggered), so it is no input
//! to branch on.

use std::fmt;

/// Why a pass runs, carried from the watch that saw it to the pass
/// ([`Pass::triggers`](crate::Pass::triggers)) and to the runtime's policies: a hold after a
/// terminal failure ends on a [`Child`](Trigger::Child) or [`Related`](Trigger::Related)
/// trigger. For logs: a pass reconciles the object's whole state whatever started it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Trigger {
    /// The object's watch saw it listed, created or changed in what starts a pass.
    Changed,
    /// One of the object's children (an owned kind) was created, changed or deleted, or a
    /// relist no longer listed it.
    Child(Related),
    /// A related object (a watched kind) the map function names this object for was created,
    /// changed or deleted, or a relist no longer listed it.
    Related(Related),
    /// A retry after a failed pass, with backoff.
    Retry,
    /// A pass the controller scheduled: a requeue the reconciler asked for, a periodic resync,
    /// the first pass of a new leader, or the follow-up after a stored transition.
    Scheduled,
}

impl Trigger {
    /// Whether the trigger is a change of something the object depends on, which ends a hold
    /// after a terminal failure (controller-runtime runs any request an `Owns` or `Watches`
    /// source enqueues).
    pub(crate) fn ends_terminal_hold(&self) -> bool {
        matches!(self, Trigger::Child(_) | Trigger::Related(_))
    }
}

/// The object of another kind a [`Trigger`] names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Related {
    /// Its kind (`ConfigMap`).
    pub kind: String,
    /// Its namespace; `None` when cluster-scoped.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl fmt::Display for Related {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{} {namespace}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// `changed`, `child ConfigMap demo/web-config`, `related Secret demo/tls`, `retry`,
/// `scheduled`.
impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trigger::Changed => f.write_str("changed"),
            Trigger::Child(child) => write!(f, "child {child}"),
            Trigger::Related(related) => write!(f, "related {related}"),
            Trigger::Retry => f.write_str("retry"),
            Trigger::Scheduled => f.write_str("scheduled"),
        }
    }
}

/// The triggers of one pass, as the span shows them: `changed, child ConfigMap demo/web`.
pub(super) struct Listed<'a>(pub(super) &'a [Trigger]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, trigger) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{trigger}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_read_as_a_log_line_says_them() {
        let child = Trigger::Child(Related {
            kind: "ConfigMap".into(),
            namespace: Some("demo".into()),
            name: "web".into(),
        });
        let node = Trigger::Related(Related {
            kind: "Node".into(),
            namespace: None,
            name: "n1".into(),
        });
        let listed = [Trigger::Changed, child.clone(), node.clone()];
        assert_eq!(
            Listed(&listed).to_string(),
            "changed, child ConfigMap demo/web, related Node n1"
        );
        assert!(child.ends_terminal_hold() && node.ends_terminal_hold());
        for trigger in [Trigger::Changed, Trigger::Retry, Trigger::Scheduled] {
            assert!(!trigger.ends_terminal_hold(), "{trigger}");
        }
    }
}
