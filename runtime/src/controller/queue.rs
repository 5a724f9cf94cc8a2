//! [`Queue`]: the objects whose change a controller has seen and whose pass has not started yet —
//! controller-runtime's `workqueue_depth` and `workqueue_queue_duration_seconds`, measured where
//! kubeward sees the work: a watch event (of the resource or a relation) that starts a pass
//! enqueues its object, the pass's start dequeues it. Repeated triggers of a queued object keep
//! its first time (kube-runtime runs one pass for them). Requeues the reconciler asked for and
//! backoff retries are scheduled, not queued: they are not counted.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The objects waiting for a pass, by `namespace/name`, with when each was first triggered.
#[derive(Debug, Default)]
pub(super) struct Queue {
    waiting: Mutex<HashMap<String, Instant>>,
}

/// The key of the object `name` in `namespace`.
pub(super) fn key(namespace: Option<&str>, name: &str) -> String {
    format!("{}/{name}", namespace.unwrap_or_default())
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A change of the object `key` starts a pass.
    pub(super) fn triggered(&self, key: String) {
        self.lock().entry(key).or_insert_with(Instant::now);
    }

    /// The pass of the object `key` starts: how long it waited, if it was queued.
    pub(super) fn started(&self, key: &str) -> Option<Duration> {
        self.lock().remove(key).map(|since| since.elapsed())
    }

    /// The object `key` is gone: it waits no more.
    pub(super) fn forget(&self, key: &str) {
        self.lock().remove(key);
    }

    /// How many objects wait.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(super) fn depth(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_object_waits_from_its_first_trigger_to_its_pass() {
        let queue = Queue::default();
        queue.triggered(key(Some("demo"), "web"));
        tokio::time::advance(Duration::from_millis(300)).await;
        queue.triggered(key(Some("demo"), "web"));
        queue.triggered(key(Some("demo"), "api"));
        assert_eq!(queue.depth(), 2, "a repeated trigger is one entry");
        assert_eq!(queue.started("demo/web"), Some(Duration::from_millis(300)));
        assert_eq!(queue.started("demo/web"), None, "a requeue was not queued");
        queue.forget("demo/api");
        assert_eq!(queue.depth(), 0);
    }
}
