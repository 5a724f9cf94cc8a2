//! What a simulated controller sees and does during one sync: the stored objects, read as an
//! informer's cache, and writes through the registry under the component's field manager.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::Workloads;
use crate::object::rfc3339;
use crate::registry::{State, WriteOptions};
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::store::StorageKey;

/// A built-in resource the simulated cluster reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Resource {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
}

impl Resource {
    const fn new(group: &'static str, version: &'static str, plural: &'static str) -> Self {
        Self {
            group,
            version,
            plural,
        }
    }

    /// Where its objects are stored.
    pub(crate) fn storage(self) -> StorageKey {
        StorageKey {
            group: self.group.into(),
            resource: self.plural.into(),
        }
    }
}

pub(crate) const PODS: Resource = Resource::new("", "v1", "pods");
/// Where pods are stored.
static PODS_STORAGE: std::sync::LazyLock<StorageKey> = std::sync::LazyLock::new(|| PODS.storage());
pub(crate) const NODES: Resource = Resource::new("", "v1", "nodes");
pub(crate) const NAMESPACES: Resource = Resource::new("", "v1", "namespaces");
pub(crate) const SERVICE_ACCOUNTS: Resource = Resource::new("", "v1", "serviceaccounts");
pub(crate) const SERVICES: Resource = Resource::new("", "v1", "services");
pub(crate) const ENDPOINTS: Resource = Resource::new("", "v1", "endpoints");
pub(crate) const PERSISTENT_VOLUME_CLAIMS: Resource =
    Resource::new("", "v1", "persistentvolumeclaims");
pub(crate) const PERSISTENT_VOLUMES: Resource = Resource::new("", "v1", "persistentvolumes");
pub(crate) const EVENTS: Resource = Resource::new("", "v1", "events");
pub(crate) const DEPLOYMENTS: Resource = Resource::new("apps", "v1", "deployments");
pub(crate) const REPLICA_SETS: Resource = Resource::new("apps", "v1", "replicasets");
pub(crate) const STATEFUL_SETS: Resource = Resource::new("apps", "v1", "statefulsets");
pub(crate) const DAEMON_SETS: Resource = Resource::new("apps", "v1", "daemonsets");
pub(crate) const CONTROLLER_REVISIONS: Resource =
    Resource::new("apps", "v1", "controllerrevisions");
pub(crate) const JOBS: Resource = Resource::new("batch", "v1", "jobs");
pub(crate) const CRON_JOBS: Resource = Resource::new("batch", "v1", "cronjobs");
pub(crate) const ENDPOINT_SLICES: Resource =
    Resource::new("discovery.k8s.io", "v1", "endpointslices");
pub(crate) const STORAGE_CLASSES: Resource =
    Resource::new("storage.k8s.io", "v1", "storageclasses");

/// One sync's view of the cluster.
pub(crate) struct Ctx<'a> {
    pub(crate) state: &'a mut State,
    pub(crate) world: &'a Workloads,
    now: Timestamp,
    /// Whether a write of this sync was refused (an event's aside).
    write_failed: bool,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(state: &'a mut State, world: &'a Workloads, now: Timestamp) -> Self {
        Self {
            state,
            world,
            now,
            write_failed: false,
        }
    }

    /// Whether a write of this sync was refused: the sync failed, as a controller's sync
    /// returns an error, and the key is retried with back-off (see `run.rs`).
    pub(crate) fn write_failed(&self) -> bool {
        self.write_failed
    }

    /// Logs a refused write and marks the sync failed.
    fn note<T>(
        &mut self,
        manager: &str,
        verb: &str,
        resource: Resource,
        result: &Result<T, ApiError>,
    ) {
        if let Err(err) = result {
            tracing::debug!(manager, verb, resource = resource.plural, error = %err.message, "simulated cluster write refused");
            self.write_failed = true;
        }
    }

    /// The time of this sync (the server's clock).
    pub(crate) fn now(&self) -> Timestamp {
        self.now
    }

    /// The time of this sync as objects carry it.
    pub(crate) fn now_rfc3339(&self) -> String {
        rfc3339(self.now)
    }

    fn info(&self, resource: Resource) -> Arc<ResourceInfo> {
        self.state
            .resource(resource.group, resource.version, resource.plural)
            .unwrap_or_else(|| panic!("{} is built in", resource.plural))
    }

    /// A stored object (a copy, to change).
    pub(crate) fn get(&self, resource: Resource, namespace: &str, name: &str) -> Option<Value> {
        self.state
            .store
            .get(&resource.storage(), namespace, name)
            .cloned()
    }

    /// A stored object, shared with the store: for the syncs that mostly only read it.
    pub(crate) fn get_shared(
        &self,
        resource: Resource,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<Value>> {
        self.state
            .store
            .get_shared(&resource.storage(), namespace, name)
    }

    /// The stored objects of a resource, in `namespace` or all, in key order.
    pub(crate) fn list(&self, resource: Resource, namespace: Option<&str>) -> Vec<Value> {
        self.state
            .store
            .list(&resource.storage(), namespace)
            .cloned()
            .collect()
    }

    /// The objects of `namespace` without a controller owner reference (orphans to adopt).
    pub(crate) fn uncontrolled(&self, resource: Resource, namespace: &str) -> Vec<Value> {
        self.uncontrolled_shared(resource, namespace)
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect()
    }

    /// [`Ctx::uncontrolled`], shared.
    pub(crate) fn uncontrolled_shared(
        &self,
        resource: Resource,
        namespace: &str,
    ) -> Vec<Arc<Value>> {
        let key = resource.storage();
        self.state
            .store
            .uncontrolled(&key, namespace)
            .cloned()
            .collect()
    }

    /// The objects of `namespace` whose controller owner reference names `owner_uid` (copies,
    /// to change).
    pub(crate) fn owned(&self, resource: Resource, namespace: &str, owner_uid: &str) -> Vec<Value> {
        self.owned_shared(resource, namespace, owner_uid)
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect()
    }

    /// [`Ctx::owned`], shared: for the controllers that mostly read them (a ReplicaSet's pods).
    pub(crate) fn owned_shared(
        &self,
        resource: Resource,
        namespace: &str,
        owner_uid: &str,
    ) -> Vec<Arc<Value>> {
        let key = resource.storage();
        self.state
            .store
            .controlled_by(&key, owner_uid)
            .filter(|o| o["metadata"]["namespace"] == namespace)
            .cloned()
            .collect()
    }

    fn options(manager: &str) -> WriteOptions {
        WriteOptions {
            manager: manager.into(),
            ..WriteOptions::default()
        }
    }

    /// Creates `body` as `manager` (the create path of a client, admission included).
    pub(crate) fn create(
        &mut self,
        manager: &str,
        resource: Resource,
        body: Value,
    ) -> Result<Arc<Value>, ApiError> {
        let info = self.info(resource);
        let result = self
            .create_unchecked(manager, resource, body)
            .map(|stored| State::served(&info, &stored));
        self.note(manager, "create", resource, &result);
        result
    }

    /// Creates `body` as `manager`, whatever the outcome (an event: its recording never fails
    /// a sync); the object in its stored form.
    fn create_unchecked(
        &mut self,
        manager: &str,
        resource: Resource,
        body: Value,
    ) -> Result<Arc<Value>, ApiError> {
        let info = self.info(resource);
        let namespace = body["metadata"]["namespace"].as_str().map(str::to_owned);
        self.state
            .create_stored(&info, namespace.as_deref(), body, &Self::options(manager))
    }

    /// Updates `old` to `new` as `manager` (PUT without a resourceVersion precondition, on the
    /// stored object `old`); `subresource` is `Some("status")` for a status write.
    pub(crate) fn update(
        &mut self,
        manager: &str,
        resource: Resource,
        old: &Value,
        new: Value,
        subresource: Option<&str>,
    ) -> Result<Arc<Value>, ApiError> {
        let info = self.info(resource);
        let result =
            self.state
                .commit_update(&info, old, new, subresource, &Self::options(manager), true);
        self.note(manager, "update", resource, &result);
        result
    }

    /// Updates the status of `old` to `status`, when it differs.
    pub(crate) fn update_status(
        &mut self,
        manager: &str,
        resource: Resource,
        old: &Value,
        status: Value,
    ) -> Result<Arc<Value>, ApiError> {
        if old["status"] == status {
            return Ok(Arc::new(old.clone()));
        }
        let mut new = old.clone();
        new["status"] = status;
        self.update(manager, resource, old, new, Some("status"))
    }

    /// Deletes an object with `options` (a `DeleteOptions` body: `{}` for the defaults).
    pub(crate) fn delete(
        &mut self,
        manager: &str,
        resource: Resource,
        namespace: &str,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError> {
        let info = self.info(resource);
        let ns = (!namespace.is_empty()).then_some(namespace);
        let result = self.state.delete(&info, ns, name, options);
        self.note(manager, "delete", resource, &result);
        result
    }

    /// Binds a pod to a node (`pods/binding`).
    pub(crate) fn bind(&mut self, namespace: &str, name: &str, node: &str) -> Result<(), ApiError> {
        let binding = json!({
            "apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        });
        let result = self.state.bind_pod(namespace, name, &binding, false);
        self.note("kube-scheduler", "bind", PODS, &result);
        result.map(drop)
    }

    /// Records a core/v1 Event about `object`, as a component's `EventRecorder` does.
    pub(crate) fn event(
        &mut self,
        component: &str,
        object: &Value,
        kind: &str,
        type_: &str,
        reason: &str,
        message: String,
    ) {
        let source = EventSource::component(component);
        self.event_from(&source, object, kind, type_, reason, message);
    }
}

/// `<object>.<hex>` as client-go's recorder names events (the time in nanoseconds, here made
/// unique within the process: a test's clock may stand still).
fn event_name(object: &str, now: Timestamp) -> String {
    static SEQUENCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = u64::try_from(now.as_nanosecond()).unwrap_or_default();
    format!("{object}.{:x}", nanos.wrapping_add(seq))
}

pub(crate) use crate::store::controller_uid;

/// A controller owner reference to `owner` of `kind` (`blockOwnerDeletion` set, as the
/// workload controllers set it).
pub(crate) fn controller_ref(owner: &Value, api_version: &str, kind: &str) -> Value {
    json!({
        "apiVersion": api_version, "kind": kind,
        "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
        "controller": true, "blockOwnerDeletion": true,
    })
}

/// An object's labels.
pub(crate) fn labels(object: &Value) -> BTreeMap<String, String> {
    crate::selector::labels_of(object)
}

/// Whether a `metav1.LabelSelector` selects `labels` (`LabelSelectorAsSelector`: an absent
/// selector selects nothing, an empty one everything).
pub(crate) fn selects(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    selects_with(selector, |key| labels.get(key).map(String::as_str))
}

/// [`selects`] on an object's own labels, read in place.
pub(crate) fn selects_object(selector: &Value, object: &Value) -> bool {
    let labels = &object["metadata"]["labels"];
    selects_with(selector, |key| labels[key].as_str())
}

/// [`selects`] over any label lookup, without copying the labels (the hot path of the
/// controllers that match pods).
fn selects_with<'a>(selector: &Value, label: impl Fn(&str) -> Option<&'a str>) -> bool {
    if !selector.is_object() {
        return false;
    }
    let match_labels = selector["matchLabels"].as_object().into_iter().flatten();
    for (key, value) in match_labels {
        if label(key) != value.as_str() {
            return false;
        }
    }
    let expressions = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten();
    for expression in expressions {
        let have = label(expression["key"].as_str().unwrap_or_default());
        let listed = || {
            expression["values"]
                .as_array()
                .is_some_and(|values| values.iter().any(|v| v.as_str() == have))
        };
        let holds = match expression["operator"].as_str().unwrap_or_default() {
            "In" => have.is_some() && listed(),
            "NotIn" => have.is_none() || !listed(),
            "Exists" => have.is_some(),
            "DoesNotExist" => have.is_none(),
            _ => false,
        };
        if !holds {
            return false;
        }
    }
    true
}

/// Whether an object is being deleted.
pub(crate) fn is_deleting(object: &Value) -> bool {
    !object["metadata"]["deletionTimestamp"].is_null()
}

/// `controller.GetPodFromTemplate`: a pod of `template`'s labels, annotations, finalizers and
/// spec, named `<owner>-` + a generated suffix, controlled by `controller_ref` (empty maps and
/// lists left out, as Go's `omitempty` leaves them).
pub(crate) fn pod_from_template(owner: &Value, template: &Value, controller_ref: Value) -> Value {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "generateName": format!("{}-", owner["metadata"]["name"].as_str().unwrap_or_default()),
            "namespace": owner["metadata"]["namespace"],
            "ownerReferences": [controller_ref],
        },
        "spec": template["spec"],
    });
    for field in ["labels", "annotations", "finalizers"] {
        let value = &template["metadata"][field];
        let empty = value.as_object().is_none_or(serde_json::Map::is_empty)
            && value.as_array().is_none_or(Vec::is_empty);
        if !empty {
            pod["metadata"][field] = value.clone();
        }
    }
    pod
}

/// `podutil.IsPodReady`: the pod's `Ready` condition is `True`.
pub(crate) fn is_pod_ready(pod: &Value) -> bool {
    pod_ready_condition(pod).is_some_and(|c| c["status"] == "True")
}

/// The pod's `Ready` condition, whatever its status.
pub(crate) fn pod_ready_condition(pod: &Value) -> Option<&Value> {
    pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
}

/// When the pod became ready, if it is ready (its `Ready` condition's `lastTransitionTime`).
pub(crate) fn ready_since(pod: &Value) -> Option<Timestamp> {
    pod_ready_condition(pod).filter(|c| c["status"] == "True")?["lastTransitionTime"]
        .as_str()?
        .parse()
        .ok()
}

/// `podutil.IsPodAvailable`: ready for more than `min_ready_seconds` at `now` (the transition
/// plus the seconds strictly before `now`, as `Time.Before` compares).
pub(crate) fn is_pod_available(pod: &Value, min_ready_seconds: i64, now: Timestamp) -> bool {
    is_pod_ready(pod)
        && (min_ready_seconds == 0
            || ready_since(pod).is_some_and(|since| {
                since + jiff::SignedDuration::from_secs(min_ready_seconds) < now
            }))
}

/// `intstr.GetScaledValueFromIntOrPercent`: an int, or `"<n>%"` of `total` rounded up or down;
/// `None` for anything else.
pub(crate) fn scaled_value(value: &Value, total: i64, round_up: bool) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let percent: i64 = value.as_str()?.strip_suffix('%')?.parse().ok()?;
    let scaled = percent * total;
    Some(if round_up {
        scaled.div_euclid(100) + i64::from(scaled.rem_euclid(100) != 0)
    } else {
        scaled.div_euclid(100)
    })
}

/// Who records an event and about which part of its object: a component, on a host (a
/// kubelet's node), about a field (`spec.containers{app}`, as `GenerateContainerRef` names a
/// container).
pub(crate) struct EventSource<'s> {
    pub component: &'s str,
    pub host: Option<&'s str>,
    pub field_path: Option<String>,
}

impl<'s> EventSource<'s> {
    /// A control-plane component's recorder (no host, the whole object).
    pub(crate) fn component(component: &'s str) -> Self {
        Self {
            component,
            host: None,
            field_path: None,
        }
    }
}

impl Ctx<'_> {
    /// Records a core/v1 Event about `object` from `source`, as client-go's `EventRecorder`
    /// does (`source.host` and `reportingInstance` are the host's, when there is one).
    pub(crate) fn event_from(
        &mut self,
        source: &EventSource<'_>,
        object: &Value,
        kind: &str,
        type_: &str,
        reason: &str,
        message: String,
    ) {
        let meta = &object["metadata"];
        let namespace = meta["namespace"].as_str().unwrap_or("default");
        let name = meta["name"].as_str().unwrap_or_default();
        let now = self.now_rfc3339();
        let mut body = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {
                "namespace": namespace,
                "name": event_name(name, self.now),
            },
            "involvedObject": {
                "apiVersion": object["apiVersion"], "kind": kind, "namespace": meta["namespace"],
                "name": name, "uid": meta["uid"], "resourceVersion": meta["resourceVersion"],
            },
            "reason": reason, "message": message, "type": type_,
            "source": {"component": source.component},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "reportingComponent": source.component,
            "reportingInstance": source.host.unwrap_or_default(),
        });
        if let Some(host) = source.host {
            body["source"]["host"] = json!(host);
        }
        if let Some(path) = &source.field_path {
            body["involvedObject"]["fieldPath"] = json!(path);
        }
        let _ = self.create_unchecked(source.component, EVENTS, body);
    }
}

/// The keys of the pods bound to `node` (a Node object): a node's change concerns them.
pub(crate) fn pods_on_node<'a>(
    state: &'a State,
    node: &'a Value,
) -> impl Iterator<Item = crate::store::ObjectKey> + 'a {
    let name = &node["metadata"]["name"];
    state
        .store
        .list(&PODS_STORAGE, None)
        .filter(move |p| p["spec"]["nodeName"] == *name)
        .map(crate::store::object_key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_is_available_once_strictly_more_than_min_ready_seconds_passed() {
        let pod = |status: &str| {
            json!({"status": {"conditions": [{"type": "Ready", "status": status,
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
        };
        let at = |t: &str| t.parse::<Timestamp>().unwrap();
        assert!(is_pod_available(
            &pod("True"),
            0,
            at("2026-01-01T00:00:00Z")
        ));
        // `LastTransitionTime.Add(minReadySeconds).Before(now)`: not at the boundary itself.
        assert!(!is_pod_available(
            &pod("True"),
            10,
            at("2026-01-01T00:00:10Z")
        ));
        assert!(is_pod_available(
            &pod("True"),
            10,
            at("2026-01-01T00:00:10.001Z")
        ));
        assert!(!is_pod_available(
            &pod("False"),
            0,
            at("2026-01-01T00:01:00Z")
        ));
        assert_eq!(ready_since(&pod("False")), None);
        assert_eq!(ready_since(&pod("True")), Some(at("2026-01-01T00:00:00Z")));
    }

    #[test]
    fn label_selectors_select_as_apimachinery_reads_them() {
        let labels = BTreeMap::from([("app".to_string(), "web".to_string())]);
        assert!(selects(&json!({}), &labels));
        assert!(!selects(&Value::Null, &labels));
        assert!(selects(&json!({"matchLabels": {"app": "web"}}), &labels));
        assert!(!selects(&json!({"matchLabels": {"app": "db"}}), &labels));
        let exprs = |op: &str, values: Value| json!({"matchExpressions": [{"key": "app", "operator": op, "values": values}]});
        assert!(selects(&exprs("In", json!(["db", "web"])), &labels));
        assert!(!selects(&exprs("NotIn", json!(["web"])), &labels));
        assert!(selects(&exprs("Exists", Value::Null), &labels));
        assert!(!selects(&exprs("DoesNotExist", Value::Null), &labels));
        assert!(!selects(&exprs("Bogus", Value::Null), &labels));
        assert!(selects(&exprs("NotIn", json!(["db"])), &BTreeMap::new()));
        let object = json!({"metadata": {"labels": {"app": "web"}}});
        assert!(selects_object(&exprs("In", json!(["web"])), &object));
        assert!(!selects_object(
            &json!({"matchLabels": {"app": "web", "tier": "x"}}),
            &object
        ));
        assert!(selects_object(&json!({}), &json!({})));
    }
}
