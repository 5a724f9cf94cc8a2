//! The endpoints controller (`pkg/controller/endpoint/endpoints_controller.go`): for each
//! Service with a selector (not `ExternalName`), an `Endpoints` object of the same name lists
//! the pods it selects in its namespace that have an IP, are not terminal and not terminating
//! — under `addresses` when their `Ready` condition is `True` (or the Service sets
//! `publishNotReadyAddresses`), else under `notReadyAddresses` — with the Service's ports
//! resolved against each pod (`targetPort` a number, or a named container port: `FindPort`),
//! subsets repacked by port (`RepackSubsets`). It carries the Service's labels,
//! `endpoints.kubernetes.io/managed-by: endpoint-controller`, `service.kubernetes.io/headless`
//! for a Service without a cluster IP, and `endpoints.kubernetes.io/last-change-trigger-time`
//! (the trigger time tracker of `k8s.io/endpointslice/util`: the Service's creation for a new
//! Service, else the earliest `Ready` transition among the pods that changed since the last
//! sync). The Endpoints of a deleted Service are deleted; a Service without a selector keeps
//! the Endpoints its users write.
//!
//! The helpers every Service-to-pods controller shares (`k8s.io/endpointslice/util`:
//! `ShouldPodBeInEndpoints`, `FindPort`, the trigger time tracker, which Services a pod change
//! concerns) live here too, for [`super::endpoint_slice`].
//!
//! Simplified: subsets and their ports are sorted by address and by port name and number where
//! upstream sorts them by an md5 of their Go dump; the 1000-address truncation
//! (`endpoints.kubernetes.io/over-capacity`) is not played.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::context::{
    ENDPOINTS, PODS, SERVICES, is_deleting, is_pod_ready, labels, pod_ready_condition,
};
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::store::{Change, ChangeType, ObjectKey, StorageKey, object_key};

const MANAGER: &str = "kube-controller-manager";
/// `LabelManagedBy` and `ControllerName`.
const MANAGED_BY: &str = "endpoints.kubernetes.io/managed-by";
const CONTROLLER_NAME: &str = "endpoint-controller";
/// `v1.IsHeadlessService`.
pub(super) const HEADLESS: &str = "service.kubernetes.io/headless";
/// `v1.EndpointsLastChangeTriggerTime`.
pub(super) const TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// The controller: its keys are Services.
#[derive(Debug, Default)]
pub(crate) struct Endpoints {
    triggers: TriggerTimes,
}

impl Controller for Endpoints {
    fn primary(&self) -> StorageKey {
        SERVICES.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        if change.storage == SERVICES.storage()
            || (change.storage == ENDPOINTS.storage() && change.kind == ChangeType::Deleted)
        {
            keys.insert(object_key(&change.object));
        } else if change.storage == PODS.storage() {
            services_of_pod_change(change, state, keys);
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let (namespace, name) = key;
        let Some(service) = ctx.get(SERVICES, namespace, name) else {
            if ctx.get(ENDPOINTS, namespace, name).is_some() {
                let _ = ctx.delete(MANAGER, ENDPOINTS, namespace, name, &json!({}));
            }
            self.triggers.forget(key);
            return None;
        };
        let selector = selector_of(&service)?;
        let pods = selected_pods(ctx, &service, selector);
        let trigger = self.triggers.compute(key, &service, &pods);
        let subsets = repack(subsets_for(&service, &pods));
        let current = ctx.get(ENDPOINTS, namespace, name);
        let service_labels = labels(&service);
        if let Some(current) = &current
            && current["subsets"].as_array().map_or(&[][..], Vec::as_slice) == subsets.as_slice()
            && labels_correct(&labels(current), &service_labels)
        {
            return None;
        }
        let mut endpoints = current.clone().unwrap_or_else(|| {
            json!({"apiVersion": "v1", "kind": "Endpoints",
                   "metadata": {"name": name, "namespace": namespace}})
        });
        let mut new_labels = service_labels;
        if service_ip_set(&service) {
            new_labels.remove(HEADLESS);
        } else {
            new_labels.insert(HEADLESS.into(), String::new());
        }
        new_labels.insert(MANAGED_BY.into(), CONTROLLER_NAME.into());
        let meta = &mut endpoints["metadata"];
        meta["labels"] = json!(new_labels);
        set_trigger_annotation(meta, trigger);
        match endpoints.as_object_mut() {
            Some(object) if subsets.is_empty() => drop(object.remove("subsets")),
            _ => endpoints["subsets"] = Value::Array(subsets),
        }
        let _ = match &current {
            Some(current) => ctx.update(MANAGER, ENDPOINTS, current, endpoints, None),
            None => ctx.create(MANAGER, ENDPOINTS, endpoints),
        };
        None
    }
}

/// `labelsCorrectForEndpoints`: the Endpoints' labels are the Service's, plus the headless and
/// managed-by labels.
fn labels_correct(
    endpoints: &BTreeMap<String, String>,
    service: &BTreeMap<String, String>,
) -> bool {
    if endpoints.get(MANAGED_BY).map(String::as_str) != Some(CONTROLLER_NAME) {
        return false;
    }
    let mut skipped = 0;
    for (k, v) in endpoints {
        if k == HEADLESS || k == MANAGED_BY {
            skipped += 1;
        } else if service.get(k) != Some(v) {
            return false;
        }
    }
    service.len() == endpoints.len() - skipped
}

/// Sets (or clears, for no trigger time) the last-change-trigger-time annotation of `meta`.
pub(super) fn set_trigger_annotation(meta: &mut Value, trigger: Option<Timestamp>) {
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    if let Some(annotations) = meta["annotations"].as_object_mut() {
        match trigger {
            Some(at) => drop(annotations.insert(TRIGGER_TIME.into(), json!(at.to_string()))),
            None => drop(annotations.remove(TRIGGER_TIME)),
        }
    }
    // An empty map is not written (`omitempty`).
    if meta["annotations"].as_object().is_some_and(Map::is_empty)
        && let Some(meta) = meta.as_object_mut()
    {
        meta.remove("annotations");
    }
}

/// One address per pod and Service port, before repacking (the loop of `syncService`).
fn subsets_for(service: &Value, pods: &[Value]) -> Vec<(Value, Option<Value>, bool)> {
    let spec = &service["spec"];
    let publish = spec["publishNotReadyAddresses"] == true;
    let ports = spec["ports"].as_array().map_or(&[][..], Vec::as_slice);
    let mut entries = Vec::new();
    for pod in pods {
        if !should_be_in_endpoints(pod, publish) {
            continue;
        }
        let Some(ip) = pod_ip_of_family(pod, &address_family(service, pod)) else {
            continue;
        };
        let mut address = json!({"ip": ip, "nodeName": pod["spec"]["nodeName"],
                                 "targetRef": target_ref(pod)});
        if should_set_hostname(pod, service) {
            address["hostname"] = pod["spec"]["hostname"].clone();
        }
        let ready = publish || is_pod_ready(pod);
        if ports.is_empty() {
            if spec["clusterIP"] == "None" {
                entries.push((address, None, ready));
            }
            continue;
        }
        for port in ports {
            let Some(number) = find_port(pod, port) else {
                continue;
            };
            let mut endpoint_port = json!({"port": number, "protocol": port["protocol"]});
            if let Some(name) = port["name"].as_str().filter(|n| !n.is_empty()) {
                endpoint_port["name"] = json!(name);
            }
            if !port["appProtocol"].is_null() {
                endpoint_port["appProtocol"] = port["appProtocol"].clone();
            }
            entries.push((address.clone(), Some(endpoint_port), ready));
        }
    }
    entries
}

/// An address's identity in [`repack`]: its IP and its target's uid.
type AddressKey = (String, String);
/// Each address's readiness for one port.
type Readiness = BTreeMap<AddressKey, bool>;

/// `RepackSubsets`: the addresses grouped by the ports they serve, each address ready for a
/// port unless one of its entries for that port is not.
fn repack(entries: Vec<(Value, Option<Value>, bool)>) -> Vec<Value> {
    // Per port (None: the headless sentinel), each address (by ip and uid) and its readiness.
    let mut by_port: BTreeMap<String, (Option<Value>, Readiness)> = BTreeMap::new();
    let mut addresses: BTreeMap<AddressKey, Value> = BTreeMap::new();
    for (address, port, ready) in entries {
        let key = (
            address["ip"].as_str().unwrap_or_default().to_string(),
            address["targetRef"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        addresses.entry(key.clone()).or_insert(address);
        let slot = by_port
            .entry(port.as_ref().map(Value::to_string).unwrap_or_default())
            .or_insert_with(|| (port, BTreeMap::new()));
        let was = slot.1.entry(key).or_insert(ready);
        *was = *was && ready;
    }
    let mut groups: BTreeMap<Vec<(AddressKey, bool)>, Vec<Value>> = BTreeMap::new();
    for (port, members) in by_port.into_values() {
        let ports = groups.entry(members.into_iter().collect()).or_default();
        ports.extend(port);
    }
    groups
        .into_iter()
        .map(|(members, mut ports)| {
            ports.sort_by_key(|p| (p["name"].as_str().map(str::to_owned), p["port"].as_i64()));
            let pick = |want: bool| -> Vec<Value> {
                members
                    .iter()
                    .filter(|(_, ready)| *ready == want)
                    .filter_map(|(key, _)| addresses.get(key).cloned())
                    .collect()
            };
            let mut subset = Map::new();
            for (field, list) in [
                ("addresses", pick(true)),
                ("notReadyAddresses", pick(false)),
            ] {
                if !list.is_empty() {
                    subset.insert(field.into(), Value::Array(list));
                }
            }
            if !ports.is_empty() {
                subset.insert("ports".into(), Value::Array(ports));
            }
            Value::Object(subset)
        })
        .collect()
}

/// The IP family a Service's addresses are taken in (`podToEndpointAddressForService`): its
/// first `ipFamilies`, else its cluster IP's, else the pod IP's.
fn address_family(service: &Value, pod: &Value) -> String {
    let spec = &service["spec"];
    if let Some(first) = spec["ipFamilies"].get(0).and_then(Value::as_str) {
        return first.into();
    }
    let cluster_ip = spec["clusterIP"].as_str().unwrap_or_default();
    let probe = if !cluster_ip.is_empty() && cluster_ip != "None" {
        cluster_ip
    } else {
        pod["status"]["podIP"].as_str().unwrap_or_default()
    };
    if probe.contains(':') { "IPv6" } else { "IPv4" }.into()
}

/// The first of a pod's IPs of `family` (`IPv4` or `IPv6`), re-printed in canonical form.
pub(super) fn pod_ip_of_family(pod: &Value, family: &str) -> Option<String> {
    pod_ips(pod)
        .into_iter()
        .find(|ip| ip.is_ipv6() == (family == "IPv6"))
        .map(|ip| ip.to_string())
}

/// A pod's `status.podIPs`, parsed.
pub(super) fn pod_ips(pod: &Value) -> Vec<std::net::IpAddr> {
    pod["status"]["podIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["ip"].as_str()?.parse().ok())
        .collect()
}

/// The `targetRef` of an address for `pod`.
pub(super) fn target_ref(pod: &Value) -> Value {
    let meta = &pod["metadata"];
    json!({"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]})
}

/// A Service's selector when it has one (an empty map reads back from storage as none).
pub(super) fn selector_of(service: &Value) -> Option<&Map<String, Value>> {
    if service["spec"]["type"] == "ExternalName" {
        return None;
    }
    service["spec"]["selector"]
        .as_object()
        .filter(|s| !s.is_empty())
}

/// Whether a Service `selector` (a label map) selects `pod`.
fn selects_pod(selector: &Map<String, Value>, pod: &Value) -> bool {
    let pod_labels = labels(pod);
    selector
        .iter()
        .all(|(k, v)| pod_labels.get(k).map(String::as_str) == v.as_str())
}

/// The pods of the Service's namespace its `selector` selects, in name order.
pub(super) fn selected_pods(
    ctx: &Ctx<'_>,
    service: &Value,
    selector: &Map<String, Value>,
) -> Vec<Value> {
    let namespace = service["metadata"]["namespace"].as_str();
    ctx.list(PODS, namespace)
        .into_iter()
        .filter(|pod| selects_pod(selector, pod))
        .collect()
}

/// Adds the Services a pod change concerns: those of its namespace that select the pod now or
/// selected it before (`GetServicesToUpdateOnPodChange`).
pub(super) fn services_of_pod_change(change: &Change, state: &State, keys: &mut Keys) {
    let namespace = change.object["metadata"]["namespace"].as_str();
    for service in state.store.list(&SERVICES.storage(), namespace) {
        let Some(selector) = selector_of(service) else {
            continue;
        };
        let now = selects_pod(selector, &change.object);
        let before = change
            .previous
            .as_deref()
            .is_some_and(|p| selects_pod(selector, p));
        if now || before {
            keys.insert(object_key(service));
        }
    }
}

/// `isServiceIPSet`: the Service has a cluster IP (it is not headless).
pub(super) fn service_ip_set(service: &Value) -> bool {
    let ip = service["spec"]["clusterIP"].as_str().unwrap_or_default();
    !ip.is_empty() && ip != "None"
}

/// `ShouldPodBeInEndpoints`: not terminal, with an IP, and (unless `include_terminating`) not
/// being deleted.
pub(super) fn should_be_in_endpoints(pod: &Value, include_terminating: bool) -> bool {
    let status = &pod["status"];
    if matches!(status["phase"].as_str(), Some("Succeeded" | "Failed")) {
        return false;
    }
    let has_ip = status["podIP"].as_str().is_some_and(|ip| !ip.is_empty())
        || status["podIPs"]
            .as_array()
            .is_some_and(|ips| !ips.is_empty());
    has_ip && (include_terminating || !is_deleting(pod))
}

/// `ShouldSetHostname`: the pod names a hostname and the Service as its subdomain.
pub(super) fn should_set_hostname(pod: &Value, service: &Value) -> bool {
    pod["spec"]["hostname"]
        .as_str()
        .is_some_and(|h| !h.is_empty())
        && pod["spec"]["subdomain"] == service["metadata"]["name"]
        && pod["metadata"]["namespace"] == service["metadata"]["namespace"]
}

/// `FindPort`: a Service port's `targetPort` on `pod` — the number itself, or the
/// `containerPort` of the container port (of a container, or of a sidecar: an init container
/// with `restartPolicy: Always`) of that name and the Service port's protocol.
pub(super) fn find_port(pod: &Value, service_port: &Value) -> Option<i64> {
    let target = &service_port["targetPort"];
    if let Some(number) = target.as_i64() {
        return Some(number);
    }
    let name = target.as_str()?;
    let protocol = service_port["protocol"].as_str().unwrap_or("TCP");
    let spec = &pod["spec"];
    let containers = spec["containers"].as_array().into_iter().flatten();
    let sidecars = spec["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["restartPolicy"] == "Always");
    containers
        .chain(sidecars)
        .flat_map(|c| c["ports"].as_array().into_iter().flatten())
        .find(|p| p["name"] == name && p["protocol"].as_str().unwrap_or("TCP") == protocol)
        .and_then(|p| p["containerPort"].as_i64())
}

/// The `TriggerTimeTracker` of `k8s.io/endpointslice/util`: per Service, the trigger times seen
/// at its last sync (its creation, each pod's `Ready` transition).
#[derive(Debug, Default)]
pub(super) struct TriggerTimes {
    services: BTreeMap<ObjectKey, (Option<Timestamp>, BTreeMap<String, Timestamp>)>,
}

impl TriggerTimes {
    /// `ComputeEndpointLastChangeTriggerTime`: the Service's creation for a Service not seen
    /// before, else the earliest trigger time that moved since the last sync (none: the
    /// annotation goes).
    pub(super) fn compute(
        &mut self,
        key: &ObjectKey,
        service: &Value,
        pods: &[Value],
    ) -> Option<Timestamp> {
        let parse = |v: &Value| v.as_str().and_then(|t| t.parse::<Timestamp>().ok());
        let created = parse(&service["metadata"]["creationTimestamp"]);
        let known = self.services.get(key);
        let mut earliest: Option<Timestamp> = None;
        let mut pod_times = BTreeMap::new();
        for pod in pods {
            let Some(at) = pod_ready_condition(pod).and_then(|c| parse(&c["lastTransitionTime"]))
            else {
                continue;
            };
            let name = pod["metadata"]["name"].as_str().unwrap_or_default();
            let before = known.and_then(|(_, pods)| pods.get(name));
            if before.is_none_or(|b| at > *b) {
                earliest = Some(earliest.map_or(at, |e| e.min(at)));
            }
            pod_times.insert(name.to_string(), at);
        }
        if let Some(created) = created
            && known.is_none_or(|(seen, _)| seen.is_none_or(|s| created > s))
        {
            earliest = Some(earliest.map_or(created, |e| e.min(created)));
        }
        let was_known = known.is_some();
        self.services.insert(key.clone(), (created, pod_times));
        if was_known { earliest } else { created }
    }

    /// `DeleteService`.
    pub(super) fn forget(&mut self, key: &ObjectKey) {
        self.services.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ports: Value, ready: bool) -> Value {
        json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
            "spec": {"nodeName": "n1", "containers": [{"name": "app", "ports": ports}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}],
                       "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"},
                                       "lastTransitionTime": "2026-01-01T00:00:05Z"}]},
        })
    }

    #[test]
    fn target_ports_resolve_by_number_or_container_port_name() {
        let p = pod(
            json!([{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                   {"name": "dns", "containerPort": 53, "protocol": "UDP"}]),
            true,
        );
        let port = |target: Value, protocol: &str| json!({"port": 80, "targetPort": target, "protocol": protocol});
        assert_eq!(find_port(&p, &port(json!(9090), "TCP")), Some(9090));
        assert_eq!(find_port(&p, &port(json!("http"), "TCP")), Some(8080));
        // The name must match with the protocol.
        assert_eq!(find_port(&p, &port(json!("http"), "UDP")), None);
        assert_eq!(find_port(&p, &port(json!("dns"), "UDP")), Some(53));
        assert_eq!(find_port(&p, &port(json!("missing"), "TCP")), None);
        // A sidecar's named port counts; a plain init container's does not.
        let mut sidecar = p.clone();
        sidecar["spec"]["initContainers"] = json!([
            {"name": "init", "ports": [{"name": "metrics", "containerPort": 9000}]},
            {"name": "side", "restartPolicy": "Always", "ports": [{"name": "admin", "containerPort": 9001}]}]);
        assert_eq!(find_port(&sidecar, &port(json!("metrics"), "TCP")), None);
        assert_eq!(
            find_port(&sidecar, &port(json!("admin"), "TCP")),
            Some(9001)
        );
    }

    #[test]
    fn pods_in_endpoints_have_an_ip_and_are_not_terminal() {
        let ready = pod(json!([]), true);
        assert!(should_be_in_endpoints(&ready, false));
        let mut done = ready.clone();
        done["status"]["phase"] = json!("Succeeded");
        assert!(!should_be_in_endpoints(&done, true));
        let mut no_ip = ready.clone();
        no_ip["status"] = json!({"phase": "Pending"});
        assert!(!should_be_in_endpoints(&no_ip, true));
        let mut deleting = ready.clone();
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert!(!should_be_in_endpoints(&deleting, false));
        assert!(should_be_in_endpoints(&deleting, true));
    }

    #[test]
    fn subsets_split_ready_and_not_ready_addresses_by_port() {
        let service = json!({"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"clusterIP": "10.96.0.1", "ipFamilies": ["IPv4"],
                     "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}});
        let a = pod(
            json!([{"name": "http", "containerPort": 8080, "protocol": "TCP"}]),
            true,
        );
        let mut b = pod(
            json!([{"name": "http", "containerPort": 8080, "protocol": "TCP"}]),
            false,
        );
        b["metadata"]["name"] = json!("q");
        b["metadata"]["uid"] = json!("u2");
        b["status"]["podIPs"] = json!([{"ip": "10.0.0.2"}]);
        let subsets = repack(subsets_for(&service, &[a, b]));
        assert_eq!(subsets.len(), 1, "{subsets:?}");
        assert_eq!(subsets[0]["addresses"][0]["ip"], "10.0.0.1");
        assert_eq!(subsets[0]["notReadyAddresses"][0]["ip"], "10.0.0.2");
        assert_eq!(
            subsets[0]["ports"],
            json!([{"name": "http", "port": 8080, "protocol": "TCP"}])
        );
    }

    #[test]
    fn pods_serving_a_named_port_on_different_numbers_are_in_different_subsets() {
        let service = json!({"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"clusterIP": "10.96.0.1",
                     "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}});
        let a = pod(json!([{"name": "http", "containerPort": 8080}]), true);
        let mut b = pod(json!([{"name": "http", "containerPort": 9090}]), true);
        b["metadata"]["uid"] = json!("u2");
        b["status"]["podIPs"] = json!([{"ip": "10.0.0.2"}]);
        let mut c = pod(json!([]), true);
        c["metadata"]["uid"] = json!("u3");
        let subsets = repack(subsets_for(&service, &[a, b, c]));
        let ports: Vec<_> = subsets
            .iter()
            .map(|s| s["ports"][0]["port"].clone())
            .collect();
        assert_eq!(ports, [json!(8080), json!(9090)], "{subsets:?}");
        assert_eq!(subsets[0]["addresses"][0]["ip"], "10.0.0.1");
        assert_eq!(subsets[1]["addresses"][0]["ip"], "10.0.0.2");
    }

    #[test]
    fn a_headless_service_without_ports_lists_bare_addresses() {
        let service = json!({"metadata": {"name": "db", "namespace": "ns"},
            "spec": {"clusterIP": "None", "publishNotReadyAddresses": true}});
        let subsets = repack(subsets_for(&service, &[pod(json!([]), false)]));
        assert_eq!(subsets.len(), 1);
        assert_eq!(subsets[0]["addresses"][0]["ip"], "10.0.0.1");
        assert!(subsets[0]["ports"].is_null());
    }

    #[test]
    fn endpoints_labels_are_the_services_plus_the_reserved_ones() {
        let service = BTreeMap::from([("app".to_string(), "web".to_string())]);
        let mut ep = service.clone();
        assert!(!labels_correct(&ep, &service));
        ep.insert(MANAGED_BY.into(), CONTROLLER_NAME.into());
        assert!(labels_correct(&ep, &service));
        ep.insert(HEADLESS.into(), String::new());
        assert!(labels_correct(&ep, &service));
        ep.insert("extra".into(), "x".into());
        assert!(!labels_correct(&ep, &service));
    }

    #[test]
    fn the_trigger_time_is_the_creation_then_the_earliest_change() {
        let mut tracker = TriggerTimes::default();
        let key = ("ns".to_string(), "web".to_string());
        let service = json!({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}});
        let p = pod(json!([]), true);
        let first = tracker.compute(&key, &service, std::slice::from_ref(&p));
        assert_eq!(first.unwrap().to_string(), "2026-01-01T00:00:00Z");
        assert_eq!(
            tracker.compute(&key, &service, std::slice::from_ref(&p)),
            None
        );
        let mut later = p.clone();
        later["status"]["conditions"][0]["lastTransitionTime"] = json!("2026-01-01T00:01:00Z");
        let moved = tracker.compute(&key, &service, &[later]);
        assert_eq!(moved.unwrap().to_string(), "2026-01-01T00:01:00Z");
    }
}
