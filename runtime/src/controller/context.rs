//! [`Context`]: the state every pass of one controller shares.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::Reconciler;
use crate::clock::SharedClock;
use crate::events::EventRecorder;
use crate::observe::Observers;

/// What a controller's passes share.
pub(super) struct Context<R: Reconciler> {
    pub(super) reconciler: R,
    pub(super) client: kube::Client,
    pub(super) name: Arc<str>,
    pub(super) observers: Observers,
    pub(super) recorder: Option<EventRecorder>,
    pub(super) clock: SharedClock,
    /// Consecutive failures per object, for the backoff; an entry goes on success.
    pub(super) failures: Mutex<HashMap<(Option<String>, String), u32>>,
}
