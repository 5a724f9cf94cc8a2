//! WATCH streams: the replay a watch starts with, live changes filtered by scope and selectors,
//! bookmarks, timeouts, and the `ERROR 410 Expired` event a too-old resourceVersion gets.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kubeward_names::clock::SharedClock;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::negotiation::Representation;
use super::resources::ResourceInfo;
use super::status::ApiError;
use super::store::{Change, ChangeType};
use super::table::column::Column;
use crate::kinds;
use crate::registry::{Filter, State};

/// What a watch request asked for.
pub(crate) struct WatchRequest {
    /// The watched resource.
    pub info: Arc<ResourceInfo>,
    /// Namespace scope, `None` for all.
    pub namespace: Option<String>,
    /// `resourceVersion` as sent.
    pub resource_version: Option<String>,
    /// `sendInitialEvents` (`None` when not sent).
    pub send_initial_events: Option<bool>,
    /// `allowWatchBookmarks=true`.
    pub bookmarks: bool,
    /// `timeoutSeconds`.
    pub timeout: Option<Duration>,
    /// Label and field selectors.
    pub filter: Filter,
    /// How events carry their objects (the representation `Accept` negotiated).
    pub representation: Representation,
    /// The clock Table rows' ages are computed with.
    pub clock: SharedClock,
}

/// Timing knobs of watches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WatchConfig {
    /// How often a watch that allows bookmarks gets one.
    pub bookmark_interval: Duration,
}

/// One watch event's JSON line, `{"object":...,"type":...}`, written from the object itself (a
/// `json!` would first copy it).
fn line(event_type: &str, object: &Value) -> Bytes {
    #[derive(serde::Serialize)]
    struct Event<'a> {
        object: &'a Value,
        #[serde(rename = "type")]
        event_type: &'a str,
    }
    let mut s = serde_json::to_vec(&Event { object, event_type }).unwrap_or_default();
    s.push(b'\n');
    Bytes::from(s)
}

/// Serializes one watch's events in the representation the client negotiated, as the
/// apiserver's watch encoder does: every object (bookmarks included, `ERROR` statuses not) is
/// transformed, and a Table watch sends its column definitions with the first event only
/// (the encoder sets `TableOptions.noHeaders` once it encoded one; later events carry `null`).
struct Encoder {
    info: Arc<ResourceInfo>,
    representation: Representation,
    /// A Table watch's columns, looked up once (empty for other representations).
    columns: Vec<Column>,
    clock: SharedClock,
    encoded_one: bool,
}

impl Encoder {
    fn new(req: &WatchRequest) -> Self {
        Self {
            info: req.info.clone(),
            representation: req.representation,
            columns: match req.representation {
                Representation::Table(_) => kinds::strategy(&req.info).columns(&req.info),
                _ => Vec::new(),
            },
            clock: req.clock.clone(),
            encoded_one: false,
        }
    }

    /// An event carrying `object` (in the served view).
    fn object(&mut self, event_type: &str, object: &Value) -> Bytes {
        let headers = !std::mem::replace(&mut self.encoded_one, true);
        match self.representation {
            Representation::Object => line(event_type, object),
            Representation::PartialObjectMetadata { .. } => {
                line(event_type, &super::table::partial(object))
            }
            Representation::Table(include) => line(
                event_type,
                &super::table::table(
                    &self.columns,
                    std::slice::from_ref(object),
                    None,
                    include,
                    headers,
                    self.clock.now(),
                ),
            ),
        }
    }

    /// An `ERROR` event: the `Status` is sent as it is.
    fn error(&mut self, err: &ApiError) -> Bytes {
        self.encoded_one = true;
        line("ERROR", &err.to_status())
    }

    /// A `BOOKMARK` at `rv`, annotated `k8s.io/initial-events-end` when it ends a streaming
    /// list's initial events.
    fn bookmark(&mut self, rv: u64, initial_end: bool) -> Bytes {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object = json!({"kind": self.info.kind, "apiVersion": self.info.api_version(), "metadata": meta});
        self.object("BOOKMARK", &object)
    }

    /// The `410 Expired` that tells a watcher to start over.
    fn expired(&mut self, requested: u64, oldest: u64) -> Bytes {
        self.error(&expired_error(requested, oldest))
    }
}

fn expired_error(requested: u64, oldest: u64) -> ApiError {
    ApiError::expired(format!("too old resource version: {requested} ({oldest})"))
}

fn in_scope(req: &WatchRequest, object: &Value) -> bool {
    match &req.namespace {
        Some(ns) => object["metadata"]["namespace"].as_str() == Some(ns.as_str()),
        None => true,
    }
}

/// Translates a change into the event this watch sees, if any, as the watch cache's
/// `convertToWatchEvent` does: objects entering the selector are ADDED; an object leaving it is
/// DELETED carrying its previous state stamped with the change's resourceVersion.
fn event_for<'a>(req: &WatchRequest, change: &'a Change) -> Option<(ChangeType, Cow<'a, Value>)> {
    if change.storage != req.info.storage || !in_scope(req, &change.object) {
        return None;
    }
    // The stored objects themselves where they are served as stored: no copy per watcher.
    let strategy = kinds::strategy(&req.info);
    let now = strategy.to_served(&req.info, &change.object);
    let now_matches = req.filter.matches(&now);
    let before = change
        .previous
        .as_ref()
        .map(|p| strategy.to_served(&req.info, p))
        .filter(|before| req.filter.matches(before));
    match (change.kind, before) {
        (ChangeType::Added, _) if now_matches => Some((ChangeType::Added, now)),
        (ChangeType::Modified, Some(_)) if now_matches => Some((ChangeType::Modified, now)),
        (ChangeType::Modified, None) if now_matches => Some((ChangeType::Added, now)),
        (ChangeType::Modified, Some(before)) => {
            let mut before = before.into_owned();
            before["metadata"]["resourceVersion"] = json!(change.rv.to_string());
            Some((ChangeType::Deleted, Cow::Owned(before)))
        }
        (ChangeType::Deleted, Some(_)) => Some((ChangeType::Deleted, now)),
        _ => None,
    }
}

/// What a watch starts with, taken under the state lock: only cheap copies (the objects, or
/// shared changes), so that filtering and serializing a long replay never stalls other clients.
enum Opening {
    /// The objects of a list-then-watch (no resourceVersion, or `sendInitialEvents`).
    Objects(Vec<Value>),
    /// The retained changes after the requested resourceVersion.
    Replay(Vec<Arc<Change>>),
    /// An `ERROR` event that ends the watch at once (too old, or not a resourceVersion).
    Error(ApiError),
}

/// Starts a watch: takes the opening under the state lock, then filters, serializes and streams
/// from a spawned task into the returned channel until the client goes away, the timeout passes
/// or the history is compacted. A resourceVersion older than the kept history gets its
/// `410 Expired` without waiting for anything.
pub(crate) fn start(
    state: &Mutex<State>,
    req: WatchRequest,
    config: WatchConfig,
    mut compactions: tokio::sync::watch::Receiver<u64>,
) -> mpsc::Receiver<Bytes> {
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let (opening, mut changes, mut last_rv) = {
        let guard = state.lock().unwrap_or_else(|p| p.into_inner());
        let requested = req
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty() && *rv != "0");
        let current = guard.store.current_rv();
        if req.send_initial_events == Some(false) && requested.is_none() {
            // No initial events: the changes from now on.
            (
                Opening::Replay(Vec::new()),
                Some(guard.store.subscribe()),
                current,
            )
        } else if req.send_initial_events == Some(true) || requested.is_none() {
            let objects = guard
                .store
                .list(&req.info.storage, req.namespace.as_deref())
                .cloned()
                .collect();
            (
                Opening::Objects(objects),
                Some(guard.store.subscribe()),
                current,
            )
        } else {
            match requested.and_then(|r| r.parse::<u64>().ok()) {
                None => (
                    Opening::Error(ApiError::bad_request(format!(
                        "invalid resource version: {}",
                        requested.unwrap_or_default()
                    ))),
                    None,
                    current,
                ),
                Some(rv) => match guard.store.watch_from(rv) {
                    Ok((replay, receiver)) => {
                        (Opening::Replay(replay), Some(receiver), current.max(rv))
                    }
                    Err(too_old) => (
                        Opening::Error(expired_error(rv, too_old.oldest)),
                        None,
                        current,
                    ),
                },
            }
        }
    };
    compactions.mark_unchanged();
    tokio::spawn(async move {
        let mut encoder = Encoder::new(&req);
        let initial: Vec<Bytes> = match opening {
            Opening::Objects(objects) => {
                let mut lines: Vec<Bytes> = objects
                    .iter()
                    .map(|stored| State::to_view(&req.info, stored))
                    .filter(|view| req.filter.matches(view))
                    .map(|view| encoder.object("ADDED", &view))
                    .collect();
                // A streaming list ends its initial events with the annotated bookmark, and so
                // does kube-apiserver 1.34 for a watch from no resourceVersion (or "0": any)
                // that allows bookmarks.
                let unversioned = req
                    .resource_version
                    .as_deref()
                    .is_none_or(|rv| rv.is_empty() || rv == "0");
                let initial_end = req.send_initial_events == Some(true)
                    || (req.send_initial_events.is_none() && unversioned);
                if req.bookmarks && initial_end {
                    lines.push(encoder.bookmark(last_rv, true));
                }
                lines
            }
            Opening::Replay(replay) => replay
                .iter()
                .filter_map(|c| event_for(&req, c))
                .map(|(kind, object)| encoder.object(kind.as_str(), &object))
                .collect(),
            Opening::Error(err) => vec![encoder.error(&err)],
        };
        for event in initial {
            if tx.send(event).await.is_err() {
                return;
            }
        }
        let Some(changes) = changes.as_mut() else {
            return;
        };
        let timeout = async {
            match req.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(timeout);
        let mut ticks = tokio::time::interval_at(
            tokio::time::Instant::now() + config.bookmark_interval,
            config.bookmark_interval,
        );
        loop {
            tokio::select! {
                change = changes.recv() => match change {
                    // A compaction the select has not seen yet still goes first: no change
                    // committed after it (a delete) reaches the watch before its 410.
                    Ok(_) if compactions.has_changed().unwrap_or(false) => {
                        let _ = tx.send(encoder.expired(last_rv, last_rv + 1)).await;
                        return;
                    }
                    Ok(change) => {
                        last_rv = last_rv.max(change.rv);
                        if let Some((kind, object)) = event_for(&req, &change)
                            && tx.send(encoder.object(kind.as_str(), &object)).await.is_err()
                        {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        // The watcher fell too far behind to be caught up: like the watch cache,
                        // tell it to start over.
                        let _ = tx.send(encoder.expired(last_rv, last_rv + 1)).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = ticks.tick(), if req.bookmarks => {
                    if tx.send(encoder.bookmark(last_rv, false)).await.is_err() {
                        return;
                    }
                }
                changed = compactions.changed() => {
                    if changed.is_ok() {
                        let _ = tx.send(encoder.expired(last_rv, last_rv + 1)).await;
                    }
                    return;
                }
                () = &mut timeout => return,
                () = tx.closed() => return,
            }
        }
    });
    rx
}
