//! Records every change of the watched kinds in a scenario's namespace, then projects them to
//! what is compared ([`Outcome`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, WatchEvent, WatchParams};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::corpus::{Kind, Observation, Outcome, WATCHED};

pub const NAMESPACE: Kind = Kind {
    api_version: "v1",
    kind: "Namespace",
    plural: "namespaces",
};
pub const SERVICE_ACCOUNT: Kind = Kind {
    api_version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
};

/// The objects of `kind` in `namespace` (all namespaces when empty), untyped.
pub fn api(client: &Client, kind: &Kind, namespace: &str) -> Api<DynamicObject> {
    let (group, version) = kind
        .api_version
        .split_once('/')
        .unwrap_or(("", kind.api_version));
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(group, version, kind.kind),
        kind.plural,
    );
    if namespace.is_empty() {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    }
}

/// The watched kind of an object.
pub fn kind_of(object: &Value) -> Option<Kind> {
    WATCHED
        .into_iter()
        .find(|k| object["kind"] == k.kind && object["apiVersion"] == k.api_version)
}

type Log = Arc<Mutex<(Vec<(Kind, bool, Value)>, Instant)>>;

/// The watches of one scenario.
pub struct Recording {
    log: Log,
    watches: Vec<JoinHandle<()>>,
}

impl Recording {
    /// Watches every kind of [`WATCHED`] in `namespace` (from its empty start).
    pub async fn start(client: &Client, namespace: &str) -> Result<Self, String> {
        let log: Log = Arc::new(Mutex::new((Vec::new(), Instant::now())));
        let mut watches = Vec::new();
        for kind in WATCHED {
            let api = api(client, &kind, namespace);
            let stream = api
                .watch(&WatchParams::default().timeout(290), "0")
                .await
                .map_err(|e| format!("watching {}: {e}", kind.plural))?;
            let log = log.clone();
            watches.push(tokio::spawn(async move {
                let mut stream = std::pin::pin!(stream);
                while let Some(Ok(event)) = stream.next().await {
                    let (deleted, object) = match event {
                        WatchEvent::Added(o) | WatchEvent::Modified(o) => (false, o),
                        WatchEvent::Deleted(o) => (true, o),
                        WatchEvent::Bookmark(_) | WatchEvent::Error(_) => continue,
                    };
                    let object = serde_json::to_value(object).unwrap_or_default();
                    let mut log = log.lock().unwrap();
                    log.0.push((kind, deleted, object));
                    log.1 = Instant::now();
                }
            }));
        }
        Ok(Self { log, watches })
    }

    /// Waits until nothing changed for `quiet` (at most 15 s), stops the watches and projects
    /// what they saw; `named` are the objects the scenario created, by kind and name.
    pub async fn finish(self, named: &[(Kind, String)], quiet: Duration) -> Outcome {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let last = self.log.lock().unwrap().1;
            if last.elapsed() >= quiet || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(quiet / 4).await;
        }
        for watch in &self.watches {
            watch.abort();
        }
        let events = std::mem::take(&mut self.log.lock().unwrap().0);
        project(&events, named)
    }
}

/// What is compared of an object's state: its conditions and (for pods) its phase with the
/// first container's waiting or terminated reason.
fn observe(kind: &Kind, object: &Value) -> Observation {
    let mut conditions: Vec<(String, String, String)> = object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (text("type"), text("status"), text("reason"))
        })
        .collect();
    conditions.sort();
    let mut phase = object["status"]["phase"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if kind.kind == "Pod" {
        let state = &object["status"]["containerStatuses"][0]["state"];
        let reason = state["waiting"]["reason"]
            .as_str()
            .or(state["terminated"]["reason"].as_str());
        if let Some(reason) = reason {
            phase = format!("{phase}:{reason}");
        }
    }
    (conditions, phase)
}

/// The integer fields of an object's status.
fn counts(object: &Value) -> BTreeMap<String, i64> {
    object["status"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_i64().map(|n| (k.clone(), n)))
        .collect()
}

/// Groups the log by object (uid) and names each object by its role.
fn project(events: &[(Kind, bool, Value)], named: &[(Kind, String)]) -> Outcome {
    struct Seen<'a> {
        kind: Kind,
        object: &'a Value,
        deleted: bool,
        sequence: Vec<Observation>,
    }
    let mut objects: BTreeMap<String, Seen<'_>> = BTreeMap::new();
    let mut order = Vec::new();
    for (kind, deleted, object) in events {
        let uid = object["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let seen = objects.entry(uid.clone()).or_insert_with(|| {
            order.push(uid.clone());
            Seen {
                kind: *kind,
                object,
                deleted: false,
                sequence: Vec::new(),
            }
        });
        seen.object = object;
        seen.deleted = *deleted;
        let observation = observe(kind, object);
        if seen.sequence.last() != Some(&observation) {
            seen.sequence.push(observation);
        }
    }
    // Roles: a created object by its name; another by its kind and its controller's role.
    let mut roles: BTreeMap<String, String> = BTreeMap::new();
    for _ in 0..4 {
        for uid in &order {
            let seen = &objects[uid];
            let meta = &seen.object["metadata"];
            let name = meta["name"].as_str().unwrap_or_default();
            let role = if named.iter().any(|(k, n)| *k == seen.kind && n == name) {
                Some(format!("{} {name}", seen.kind.kind))
            } else {
                let owner = meta["ownerReferences"]
                    .as_array()
                    .and_then(|refs| refs.iter().find(|r| r["controller"] == true));
                match owner {
                    Some(owner) => {
                        let owner_uid = owner["uid"].as_str().unwrap_or_default();
                        let owner_name = owner["name"].as_str().unwrap_or_default();
                        let ordinal = name
                            .strip_prefix(owner_name)
                            .and_then(|rest| rest.strip_prefix('-'))
                            .is_some_and(|rest| rest.parse::<u32>().is_ok());
                        roles.get(owner_uid).map(|owner_role| {
                            if ordinal && owner["kind"] == "StatefulSet" {
                                format!("{} {name} of {owner_role}", seen.kind.kind)
                            } else {
                                format!("{} of {owner_role}", seen.kind.kind)
                            }
                        })
                    }
                    None => Some(format!("{} (unowned)", seen.kind.kind)),
                }
            };
            if let Some(role) = role {
                roles.insert(uid.clone(), role);
            }
        }
    }
    let mut outcome = Outcome::default();
    for uid in &order {
        let seen = &objects[uid];
        let role = roles
            .get(uid)
            .cloned()
            .unwrap_or_else(|| format!("{} of an unseen owner", seen.kind.kind));
        let mut end = counts(seen.object);
        if seen.deleted {
            end.insert("(deleted)".into(), 1);
        }
        outcome
            .sequences
            .entry(role.clone())
            .or_default()
            .push(seen.sequence.clone());
        outcome.counts.entry(role).or_default().push(end);
    }
    for sequences in outcome.sequences.values_mut() {
        sequences.sort();
    }
    for counts in outcome.counts.values_mut() {
        counts.sort();
    }
    outcome
}
