//! [`ReadinessSignal`]: what `/readyz` and `/healthz` read — a controller's
//! [`ControllerState`], or a plain readiness flag of the caller's own.

use tokio::sync::watch;

use crate::controller::ControllerState;

/// One source of readiness for [`OpsServer::with_readiness`](super::OpsServer::with_readiness):
/// a controller's state ([`Controller::readiness`](crate::controller::Controller::readiness)),
/// which `/healthz` reads too, or a flag of the caller's own (`true` when ready), which is not
/// ready once its sender is dropped.
#[derive(Debug, Clone)]
pub struct ReadinessSignal(Source);

#[derive(Debug, Clone)]
enum Source {
    Controller(watch::Receiver<ControllerState>),
    Flag(watch::Receiver<bool>),
}

impl From<watch::Receiver<ControllerState>> for ReadinessSignal {
    fn from(state: watch::Receiver<ControllerState>) -> Self {
        Self(Source::Controller(state))
    }
}

impl From<watch::Receiver<bool>> for ReadinessSignal {
    fn from(flag: watch::Receiver<bool>) -> Self {
        Self(Source::Flag(flag))
    }
}

impl ReadinessSignal {
    /// `Ok` when ready, else why not (one line).
    pub(super) fn ready(&self) -> Result<(), String> {
        match &self.0 {
            Source::Controller(state) => {
                let state = state.borrow();
                if state.is_ready() {
                    Ok(())
                } else {
                    Err(state.to_string())
                }
            }
            // A flag whose sender is gone is stuck at its last value: nothing sets it any more.
            Source::Flag(flag) if flag.has_changed().is_err() => {
                Err("its readiness flag was dropped".to_owned())
            }
            Source::Flag(flag) if *flag.borrow() => Ok(()),
            Source::Flag(_) => Err("its readiness flag is false".to_owned()),
        }
    }

    /// `Ok` when alive, else why not (one line). A flag is always alive.
    pub(super) fn alive(&self) -> Result<(), String> {
        match &self.0 {
            Source::Controller(state) => {
                let state = state.borrow();
                if state.is_alive() {
                    Ok(())
                } else {
                    Err(state.to_string())
                }
            }
            Source::Flag(_) => Ok(()),
        }
    }
}
