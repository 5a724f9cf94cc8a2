//! Why a pass failed, and the Warning event a failed pass publishes by default.

use std::error::Error as StdError;
use std::fmt;

use std::time::Duration;

use super::Terminal;
use crate::events::Event;
use crate::observe::{FailureReason, Phase};

/// Why a pass failed — the reconciler's own error, or a request the runtime made for it — or, for
/// [`error_backoff`](super::Reconciler::error_backoff) only, that its write met a conflict.
#[derive(Debug, thiserror::Error)]
pub enum PassError<E: StdError + 'static> {
    /// `apply` or `cleanup` returned an error.
    #[error(transparent)]
    Reconcile(E),
    /// Adding or removing the finalizer failed.
    #[error("failed to {action} finalizer {finalizer:?}")]
    Finalizer {
        /// `add` or `remove`.
        action: &'static str,
        /// The finalizer.
        finalizer: &'static str,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Writing `status` failed (other than by a conflict, which is [`PassError::Conflict`]).
    #[error("failed to write status")]
    Status(#[source] kube::Error),
    /// The pass's status write or finalizer patch met a conflict (409): the object changed since
    /// the pass read it (another writer, or a cache that had not caught up), so nothing was
    /// stored. Not a failure: the pass ends `waiting`, publishes no failure event (the
    /// [`failure_event`](super::Reconciler::failure_event) hook never sees it) and the object
    /// is retried after [`error_backoff`](super::Reconciler::error_backoff).
    #[error("the {write} write conflicted: the object changed since the pass read it")]
    Conflict {
        /// `status` or `finalizer`.
        write: &'static str,
    },
    /// `apply` or `cleanup` panicked. The pass is failed (its status is not written) and
    /// retried with backoff; the controller goes on.
    #[error("reconciler panicked: {message}")]
    Panicked {
        /// The panic's message (its payload, when a string).
        message: String,
    },
    /// `apply` or `cleanup` ran past the reconcile timeout and was abandoned: its steps are
    /// recorded as abandoned, nothing it decided is written (it never finished deciding), its
    /// concurrency slot is freed, and the object is retried with backoff.
    #[error("the pass did not finish within its reconcile timeout of {after:?}")]
    TimedOut {
        /// The timeout.
        after: Duration,
    },
}

impl<E: StdError + 'static> PassError<E> {
    /// The reconciler's error, if that is why the pass failed.
    pub fn reconcile_error(&self) -> Option<&E> {
        match self {
            PassError::Reconcile(error) => Some(error),
            _ => None,
        }
    }

    /// Whether the pass failed for good until the object changes: the reconciler's error is
    /// [`Terminal`].
    pub fn is_terminal(&self) -> bool
    where
        E: Terminal,
    {
        self.reconcile_error().is_some_and(Terminal::is_terminal)
    }

    /// Why the pass failed, as `kubeward_reconcile_errors_total` counts it (a conflict, which is
    /// no failure, counts as [`FailureReason::Write`] if asked).
    pub fn failure_reason(&self) -> FailureReason
    where
        E: Terminal,
    {
        match self {
            PassError::Reconcile(_) if self.is_terminal() => FailureReason::Terminal,
            PassError::Reconcile(_) => FailureReason::Error,
            PassError::Finalizer { .. } | PassError::Status(_) | PassError::Conflict { .. } => {
                FailureReason::Write
            }
            PassError::Panicked { .. } => FailureReason::Panic,
            PassError::TimedOut { .. } => FailureReason::Timeout,
        }
    }

    /// The error of a pass that panicked with `payload`.
    pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> Self {
        PassError::Panicked {
            message: crate::panics::panic_message(payload),
        }
    }
}

/// The default event reason of a failed pass in `phase`: `ReconcileFailed` while creating or
/// converging, `CleanupFailed` while deleting.
pub fn default_failure_reason(phase: Phase) -> &'static str {
    match phase {
        Phase::Init | Phase::Apply => "ReconcileFailed",
        Phase::Cleanup | Phase::Delete => "CleanupFailed",
    }
}

/// The default failure event: a Warning with [`default_failure_reason`], action `Reconcile`,
/// and the error's whole cause chain as the note.
pub fn default_failure_event(error: &(dyn StdError + 'static), phase: Phase) -> Event {
    Event::warning(default_failure_reason(phase), "Reconcile")
        .with_note(ErrorChain(error).to_string())
        .as_failure()
}

/// Displays an error with all its causes, `outer: cause: root cause`.
///
/// An error from the API server (`kube::Error::Api`, or its `Status`) reads as `kubectl` prints it,
/// `<reason>: <message>` (`Invalid: Widget.test.kubeward.dev "w1" is invalid: ..`), not as
/// kube-client's `Display`, which appends the whole `Status` in `Debug` form; the `Status` it
/// carries as its source is not repeated.
///
/// No cause is dropped because its text merely *occurs* in an outer message; a cause is left out
/// only when the message before it already ends with `": "` and exactly the cause's text — that
/// is, when the outer error's `Display` already printed it, so nothing is lost.
///
/// ```
/// use kubeward::controller::ErrorChain;
/// #[derive(Debug, thiserror::Error)]
/// #[error("deploy failed")]
/// struct Deploy(#[source] std::io::Error);
/// let error = Deploy(std::io::Error::other("secret \"db\" not found"));
/// assert_eq!(ErrorChain(&error).to_string(), "deploy failed: secret \"db\" not found");
/// ```
pub struct ErrorChain<'a>(pub &'a (dyn StdError + 'static));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut previous = message(self.0);
        f.write_str(&previous)?;
        let mut cause = source(self.0);
        while let Some(error) = cause {
            let message = message(error);
            let already_printed = previous
                .strip_suffix(message.as_str())
                .is_some_and(|head| head.ends_with(": "));
            if !already_printed && !message.is_empty() {
                write!(f, ": {message}")?;
            }
            previous = message;
            cause = source(error);
        }
        Ok(())
    }
}

/// The API server's answer, if `error` is one: `kube::Error::Api` or the `Status` itself.
fn api_status<'e>(error: &'e (dyn StdError + 'static)) -> Option<&'e kube::core::Status> {
    match error.downcast_ref::<kube::Error>() {
        Some(kube::Error::Api(status)) => Some(status),
        Some(_) => None,
        None => error.downcast_ref::<kube::core::Status>(),
    }
}

/// One link of the chain as a user reads it: an API error as `kubectl` renders it (its
/// `StandardErrorMessage`: `Error from server (<reason>): <message>`, here without the prefix),
/// any other error by its `Display`.
fn message(error: &(dyn StdError + 'static)) -> String {
    let Some(status) = api_status(error) else {
        return error.to_string();
    };
    match (status.reason.as_str(), status.message.as_str()) {
        ("", "") => format!("the server answered {}", status.code),
        ("", message) => message.to_owned(),
        (reason, "") => reason.to_owned(),
        (reason, message) => format!("{reason}: {message}"),
    }
}

/// The next link of the chain: an API error's `Status` is already rendered by [`message`].
fn source<'e>(error: &'e (dyn StdError + 'static)) -> Option<&'e (dyn StdError + 'static)> {
    if api_status(error).is_some() {
        None
    } else {
        error.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{message}")]
    struct Layer {
        message: &'static str,
        #[source]
        source: Option<Box<Layer>>,
    }

    fn chain(messages: &[&'static str]) -> Layer {
        messages
            .iter()
            .rev()
            .fold(None, |source, &message| {
                Some(Layer {
                    message,
                    source: source.map(Box::new),
                })
            })
            .unwrap()
    }

    #[test]
    fn every_cause_is_kept_even_when_its_text_occurs_in_an_outer_message() {
        // A substring-based dedupe would drop "refused" because it occurs in the outer message.
        let error = chain(&["connection refused by db", "refused"]);
        assert_eq!(
            ErrorChain(&error).to_string(),
            "connection refused by db: refused"
        );
        let error = chain(&["license key invalid", "key invalid", "invalid"]);
        assert_eq!(
            ErrorChain(&error).to_string(),
            "license key invalid: key invalid: invalid"
        );
    }

    #[test]
    fn a_cause_the_outer_message_already_printed_is_not_repeated() {
        let error = chain(&["apply failed: timeout", "timeout"]);
        assert_eq!(ErrorChain(&error).to_string(), "apply failed: timeout");
        let error = chain(&["a: b: c", "b: c", "c"]);
        assert_eq!(ErrorChain(&error).to_string(), "a: b: c");
    }

    fn invalid() -> kube::Error {
        kube::Error::Api(Box::new(
            kube::core::Status::failure(
                "Widget.test.kubeward.dev \"w1\" is invalid: spec.replicas: Invalid value: -1",
                "Invalid",
            )
            .with_code(422),
        ))
    }

    #[derive(Debug, thiserror::Error)]
    #[error("failed to write status")]
    struct WriteStatus(#[source] kube::Error);

    #[test]
    fn an_api_error_reads_as_kubectl_prints_it_inside_the_chain() {
        let expected =
            "Invalid: Widget.test.kubeward.dev \"w1\" is invalid: spec.replicas: Invalid value: -1";
        assert_eq!(ErrorChain(&invalid()).to_string(), expected);
        assert_eq!(
            ErrorChain(&WriteStatus(invalid())).to_string(),
            format!("failed to write status: {expected}")
        );
        let bare = kube::Error::Api(Box::new(kube::core::Status::failure("", "").with_code(500)));
        assert_eq!(ErrorChain(&bare).to_string(), "the server answered 500");
    }

    #[test]
    fn failure_event_defaults_by_phase() {
        let error = chain(&["secret \"db\" not found"]);
        let event = default_failure_event(&error, Phase::Apply);
        assert_eq!(event.reason, "ReconcileFailed");
        assert_eq!(event.note.as_deref(), Some("secret \"db\" not found"));
        assert_eq!(event.kind, crate::events::EventKind::Failure);
        assert_eq!(
            default_failure_event(&error, Phase::Cleanup).reason,
            "CleanupFailed"
        );
    }
}
