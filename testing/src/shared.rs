//! The state every connection of one server shares: the object store, faults, request log,
//! authentication and watch settings. The listener (`server`) creates it; the request
//! handler (`handler`) reads it; neither depends on the other.

use std::sync::Mutex;

use super::auth::authn::Authenticator;
use super::auth::tls::Tls;
use super::faults::Faults;
use super::requests::RequestLog;
use super::watch::WatchConfig;
use crate::registry::State;

pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    pub(crate) faults: Faults,
    pub(crate) requests: RequestLog,
    /// The identities behind bearer tokens.
    pub(crate) authn: Authenticator,
    /// TLS, when the server serves https.
    pub(crate) tls: Option<Tls>,
    pub(crate) compactions: tokio::sync::watch::Sender<u64>,
    pub(crate) watch_config: WatchConfig,
    pub(crate) url: String,
}

impl Shared {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every write is applied to a clone-free path that cannot panic halfway through an
        // object; a poisoned lock only means a test thread panicked elsewhere.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}
