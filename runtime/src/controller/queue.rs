//! [`Queue`]: the objects whose change a controller has seen and whose pass has not started yet —
//! controller-runtime's `workqueue_depth` and `workqueue_queue_duration_seconds`, measured where
//! kubeward sees the work: a watch event (of the resource or a relation) that starts a pass
//! enqueues its object with its [`Trigger`], the pass's start dequeues it with every trigger
//! it gathered. Repeated triggers of a queued object keep its first time (kube-runtime runs one
//! pass for them). Requeues the reconciler asked for and backoff retries are scheduled, not
//! queued: they are not counted.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::Trigger;

/// The most distinct triggers kept for one queued object (a map function naming it for a
/// thousand related objects keeps the first ones): enough for a log line.
const MAX_TRIGGERS: usize = 8;

/// The objects waiting for a pass, by `namespace/name`, with when each was first triggered and
/// why.
#[derive(Debug, Default)]
pub(super) struct Queue {
    waiting: Mutex<HashMap<String, Waiting>>,
}

#[derive(Debug)]
struct Waiting {
    since: Instant,
    triggers: Vec<Trigger>,
}

/// A queued object's pass starts: how long it waited, and why it runs.
#[derive(Debug, PartialEq)]
pub(super) struct Dequeued {
    pub(super) waited: Duration,
    pub(super) triggers: Vec<Trigger>,
}

/// The key of the object `name` in `namespace`.
pub(super) fn key(namespace: Option<&str>, name: &str) -> String {
    let namespace = namespace.unwrap_or_default();
    let mut key = String::with_capacity(namespace.len() + 1 + name.len());
    key.push_str(namespace);
    key.push('/');
    key.push_str(name);
    key
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `trigger` starts a pass of the object `key`.
    pub(super) fn triggered(&self, key: String, trigger: Trigger) {
        let mut waiting = self.lock();
        let entry = waiting.entry(key).or_insert_with(|| Waiting {
            since: Instant::now(),
            triggers: Vec::new(),
        });
        if entry.triggers.len() < MAX_TRIGGERS && !entry.triggers.contains(&trigger) {
            entry.triggers.push(trigger);
        }
    }

    /// The pass of the object `name` in `namespace` starts: how long it waited and why, if it
    /// was queued. (Its key is built only when some object waits: most passes are scheduled.)
    pub(super) fn started(&self, namespace: Option<&str>, name: &str) -> Option<Dequeued> {
        let mut waiting = self.lock();
        if waiting.is_empty() {
            return None;
        }
        waiting
            .remove(&key(namespace, name))
            .map(|waiting| Dequeued {
                waited: waiting.since.elapsed(),
                triggers: waiting.triggers,
            })
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
        let child = Trigger::Child(crate::controller::Related {
            kind: "ConfigMap".into(),
            namespace: Some("demo".into()),
            name: "web-config".into(),
        });
        queue.triggered(key(Some("demo"), "web"), Trigger::Changed);
        tokio::time::advance(Duration::from_millis(300)).await;
        queue.triggered(key(Some("demo"), "web"), child.clone());
        queue.triggered(key(Some("demo"), "web"), Trigger::Changed);
        queue.triggered(key(Some("demo"), "api"), Trigger::Changed);
        assert_eq!(queue.depth(), 2, "a repeated trigger is one entry");
        assert_eq!(
            queue.started(Some("demo"), "web"),
            Some(Dequeued {
                waited: Duration::from_millis(300),
                triggers: vec![Trigger::Changed, child],
            }),
            "from the first trigger, with each distinct one"
        );
        assert_eq!(
            queue.started(Some("demo"), "web"),
            None,
            "a requeue was not queued"
        );
        queue.forget("demo/api");
        assert_eq!(queue.depth(), 0);
    }
}
