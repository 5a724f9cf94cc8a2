//! [`Terminal`]: whether a reconciler's error is permanent — retrying cannot fix it, only a
//! change to the object can.
//!
//! Every [`Reconciler::Error`](super::Reconciler::Error) implements it, so the choice is made
//! once per error type and the compiler asks for it: `#[derive(kubeward::Terminal)]` with
//! `#[terminal]` on the permanent variants (or on a struct error that is permanent), or an
//! `impl` by hand. It is required rather than defaulted to "never terminal": a default would
//! retry a permanent failure forever, with backoff, and say nothing — the silent fallback this
//! crate refuses — and Rust has no way to default it for one's own types only. A variant that is not marked
//! asks its source (`#[source]`, `#[from]`, a field named `source`, or the one field of an
//! `#[error(transparent)]` variant) when that source's type implements `Terminal`, so a wrapper
//! enum passes on what its inner error says.
//!
//! A pass that fails with a terminal error publishes its failure event once, counts as a failure
//! of reason `terminal` (`kubeward_reconcile_errors_total{reason="terminal"}`), marks the object
//! `kubeward_object_terminal 1` (the generated alert rules then call it stuck at once) and is not
//! retried: the next pass runs when the object changes — its generation (the spec), its labels
//! or annotations, or its deletion — and not on its own status writes or a resync.

use std::convert::Infallible;

/// Whether an error is permanent: the object has to change before a pass can succeed.
///
/// ```
/// #[derive(Debug, thiserror::Error, kubeward::Terminal)]
/// enum RenderError {
///     /// Permanent for this spec: not retried until the object changes.
///     #[terminal]
///     #[error("image reference {0:?} has no tag")]
///     InvalidImage(String),
///     /// The registry may have it later: retried with backoff.
///     #[error("registry unreachable")]
///     Unreachable(#[source] std::io::Error),
/// }
///
/// #[derive(Debug, thiserror::Error, kubeward::Terminal)]
/// enum Error {
///     // Not marked: asks its source, a `RenderError`.
///     #[error("cannot render")]
///     Render(#[from] RenderError),
///     #[error(transparent)]
///     Api(#[from] kube::Error),
/// }
///
/// /// A struct error: terminal as a whole, or (without `#[terminal]`) never.
/// #[derive(Debug, thiserror::Error, kubeward::Terminal)]
/// #[terminal]
/// #[error("the spec names no image")]
/// struct NoImage;
///
/// use kubeward::Terminal;
/// assert!(NoImage.is_terminal());
/// assert!(Error::from(RenderError::InvalidImage("web".into())).is_terminal());
/// let unreachable = RenderError::Unreachable(std::io::Error::other("refused"));
/// assert!(!Error::from(unreachable).is_terminal());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say which of its errors are terminal (permanent)",
    label = "a reconciler's error must implement `kubeward::Terminal`",
    note = "add `#[derive(kubeward::Terminal)]` to `{Self}`, then mark `#[terminal]` what no retry can fix: the variants of an enum, or a struct itself (nothing, if every error is worth retrying)",
    note = "for an error type of another crate, wrap it in an error type of yours"
)]
pub trait Terminal {
    /// Whether retrying cannot succeed until the object changes.
    fn is_terminal(&self) -> bool;
}

/// Errors that are never terminal: worth retrying.
macro_rules! never_terminal {
    ($($error:ty),* $(,)?) => {
        $(impl Terminal for $error {
            fn is_terminal(&self) -> bool {
                false
            }
        })*
    };
}

never_terminal!(
    Infallible,
    kube::Error,
    std::io::Error,
    std::fmt::Error,
    serde_json::Error,
    Box<dyn std::error::Error + Send + Sync>,
);

impl<E: Terminal + ?Sized> Terminal for Box<E> {
    fn is_terminal(&self) -> bool {
        (**self).is_terminal()
    }
}

impl<E: Terminal + ?Sized> Terminal for std::sync::Arc<E> {
    fn is_terminal(&self) -> bool {
        (**self).is_terminal()
    }
}

/// The probe `#[derive(Terminal)]` asks a variant's source with: `(&&Probe(source)).terminal()`
/// is the source's [`Terminal::is_terminal`] when its type implements [`Terminal`], else `false`
/// (autoref specialisation: the `&Probe` impl is found first when it applies).
#[doc(hidden)]
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// See [`Probe`]: the source implements [`Terminal`].
#[doc(hidden)]
pub trait ProbeTerminal {
    fn terminal(&self) -> bool;
}

impl<T: Terminal + ?Sized> ProbeTerminal for &Probe<'_, T> {
    fn terminal(&self) -> bool {
        self.0.is_terminal()
    }
}

/// See [`Probe`]: the source does not implement [`Terminal`].
#[doc(hidden)]
pub trait ProbeOther {
    fn terminal(&self) -> bool;
}

impl<T: ?Sized> ProbeOther for Probe<'_, T> {
    fn terminal(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Permanent;
    impl Terminal for Permanent {
        fn is_terminal(&self) -> bool {
            true
        }
    }
    struct Unmarked;

    #[test]
    // The double reference is the probe: it picks the `&Probe` impl when it applies.
    #[allow(clippy::needless_borrow)]
    fn the_probe_asks_a_source_that_says_and_takes_others_as_retryable() {
        #[allow(unused_imports)]
        use super::{ProbeOther as _, ProbeTerminal as _};
        assert!((&&Probe(&Permanent)).terminal());
        assert!((&&Probe(&Box::new(Permanent))).terminal());
        assert!(!(&&Probe(&Unmarked)).terminal());
        assert!(!(&&Probe(&std::io::Error::other("x"))).terminal());
    }
}
