//! [`ControllerState`]: where a controller is in its life, as `/readyz` and `/healthz` report it
//! (see [`Controller::readiness`](super::Controller::readiness)).

use std::fmt;
use std::time::Duration;

/// How long a watch term may take to list its objects by default before the controller reports
/// itself not ready with the reason (see
/// [`Controller::with_sync_timeout`](super::Controller::with_sync_timeout)).
pub const DEFAULT_SYNC_TIMEOUT: Duration = Duration::from_secs(120);

/// Where a controller is in its life. Ready ([`is_ready`](ControllerState::is_ready)) only when
/// [`Synced`](ControllerState::Synced) or [`Standby`](ControllerState::Standby); alive
/// ([`is_alive`](ControllerState::is_alive)) unless [`Failed`](ControllerState::Failed).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControllerState {
    /// Not ready: not started yet, or its watch is listing its objects.
    Syncing,
    /// Ready: its cache holds the listed objects and it reconciles.
    Synced,
    /// Ready: with leader election, a standby waiting for the lease (readiness is about the
    /// process, not leadership).
    Standby,
    /// Not ready: one of its watches — of its resource, or of a kind it owns or watches — has
    /// not listed its objects within the sync timeout. It keeps trying (and becomes
    /// [`Synced`](ControllerState::Synced) when every watch has listed).
    SyncTimedOut {
        /// The controller's name.
        controller: String,
        /// The watch that has not listed: `its watch` (of the resource), or `the watch of
        /// configmaps (owned)` with the namespace when it watches one of several.
        watch: String,
        /// The sync timeout.
        after: Duration,
        /// The last watch or list failure, or that none was reported.
        reason: String,
    },
    /// Not ready: it stopped as asked (a shutdown signal).
    Stopped,
    /// Not alive: its run loop ended without being asked to (a panic, a fatal leader election
    /// error, the watch loop ending on its own).
    Failed {
        /// The controller's name.
        controller: String,
        /// What ended it.
        reason: String,
    },
}

impl ControllerState {
    /// Whether `/readyz` counts the controller as ready.
    pub fn is_ready(&self) -> bool {
        matches!(self, ControllerState::Synced | ControllerState::Standby)
    }

    /// Whether `/healthz` counts the controller as alive.
    pub fn is_alive(&self) -> bool {
        !matches!(self, ControllerState::Failed { .. })
    }
}

/// One line, for `/readyz` and `/healthz` bodies.
impl fmt::Display for ControllerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControllerState::Syncing => f.write_str("its watch is listing its objects"),
            ControllerState::Synced => f.write_str("synced"),
            ControllerState::Standby => f.write_str("a standby waiting for the lease"),
            ControllerState::SyncTimedOut {
                controller,
                watch,
                after,
                reason,
            } => write!(
                f,
                "{controller}: {watch} has not listed its objects within {after:?}: {reason}"
            ),
            ControllerState::Stopped => f.write_str("stopped"),
            ControllerState::Failed { controller, reason } => {
                write!(f, "{controller}: its run loop ended abnormally: {reason}")
            }
        }
    }
}
