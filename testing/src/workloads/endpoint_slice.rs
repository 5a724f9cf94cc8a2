//! The EndpointSlice controller (`pkg/controller/endpointslice/endpointslice_controller.go`,
//! its reconciler `staging/src/k8s.io/endpointslice/reconciler.go` and `utils.go`): for each
//! Service with a selector (not `ExternalName`), EndpointSlices named `<service>-<5 random
//! characters>` (`generateName`), owned by the Service (so the garbage collector deletes them
//! with it), labelled `kubernetes.io/service-name` and
//! `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io` (plus the
//! Service's labels, and `service.kubernetes.io/headless` without a cluster IP), one
//! `addressType` per family of the Service's `ipFamilies`. Each selected pod that has an IP of
//! the family and is not terminal is an endpoint — terminating pods included — with
//! `conditions.ready` (`Ready` and not terminating, or `publishNotReadyAddresses`), `serving`
//! (`Ready`) and `terminating`, its `nodeName`, `zone` (the node's
//! `topology.kubernetes.io/zone`), `hostname` (when its subdomain is the Service) and
//! `targetRef`; endpoints are grouped by the ports resolved for their pod (`FindPort`), at most
//! 100 a slice. The reconciler's steps are ported: endpoints kept in place in the slices
//! holding them, changed slices filled first, a leftover fitted in the unchanged slice closest
//! to full, a placeholder slice (no endpoints, no ports) when nothing else would exist, creates
//! turned into updates of slices that would be deleted; writes carry
//! `endpoints.kubernetes.io/last-change-trigger-time`.
//!
//! Simplified: endpoints are placed in pod-name order where upstream pops them from a map,
//! ports keep the Service's order where upstream sorts them by an md5 of their Go dump, and
//! topology hints and `trafficDistribution` are not played.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{
    ENDPOINT_SLICES, NODES, PODS, SERVICES, controller_ref, is_deleting, is_pod_ready, labels,
};
use super::endpoints::{
    HEADLESS, TriggerTimes, find_port, pod_ips, selected_pods, selector_of, service_ip_set,
    services_of_pod_change, set_trigger_annotation, should_be_in_endpoints, should_set_hostname,
    target_ref,
};
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::store::{Change, ObjectKey, StorageKey, object_key};

const MANAGER: &str = "kube-controller-manager";
/// `discovery.LabelServiceName`.
const SERVICE_NAME: &str = "kubernetes.io/service-name";
/// `discovery.LabelManagedBy`, and the controller's name.
const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
/// `--max-endpoints-per-slice`'s default.
const MAX_ENDPOINTS: usize = 100;
/// How long before a Service whose pod names a missing node is synced again (upstream
/// requeues it with a rate limit).
const RETRY: SignedDuration = SignedDuration::from_secs(1);

/// The controller: its keys are Services.
#[derive(Debug, Default)]
pub(crate) struct EndpointSlices {
    triggers: TriggerTimes,
}

impl Controller for EndpointSlices {
    fn primary(&self) -> StorageKey {
        SERVICES.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        if change.storage == SERVICES.storage() {
            keys.insert(object_key(&change.object));
        } else if change.storage == PODS.storage() {
            services_of_pod_change(change, state, keys);
        } else if change.storage == ENDPOINT_SLICES.storage() {
            let slice_labels = labels(&change.object);
            if slice_labels.get(MANAGED_BY).map(String::as_str) == Some(CONTROLLER_NAME)
                && let Some(service) = slice_labels.get(SERVICE_NAME)
            {
                let namespace = change.object["metadata"]["namespace"].as_str();
                keys.insert((namespace.unwrap_or_default().into(), service.clone()));
            }
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let Some(service) = ctx.get(SERVICES, &key.0, &key.1) else {
            // The garbage collector deletes the slices the Service owned.
            self.triggers.forget(key);
            return None;
        };
        let selector = selector_of(&service)?;
        let pods = selected_pods(ctx, &service, selector);
        let existing: Vec<Value> = ctx
            .list(ENDPOINT_SLICES, Some(&key.0))
            .into_iter()
            .filter(|s| {
                let l = labels(s);
                l.get(SERVICE_NAME) == Some(&key.1)
                    && l.get(MANAGED_BY).map(String::as_str) == Some(CONTROLLER_NAME)
                    && !is_deleting(s)
            })
            .collect();
        let trigger = self.triggers.compute(key, &service, &pods);
        let mut plan = Plan::default();
        let families = address_types(&service);
        for slice in &existing {
            if !families.contains(slice["addressType"].as_str().unwrap_or_default()) {
                plan.delete.push(slice.clone());
            }
        }
        let mut node_missing = false;
        for family in &families {
            let of_family: Vec<&Value> = existing
                .iter()
                .filter(|s| s["addressType"] == *family)
                .collect();
            let desired = desired_endpoints(ctx, &service, &pods, family, &mut node_missing);
            plan.extend(reconcile_family(&service, &of_family, desired, family));
        }
        plan.finalize(ctx, &service, trigger);
        node_missing.then(|| ctx.now() + RETRY)
    }
}

/// The slices to create, update and delete.
#[derive(Debug, Default)]
struct Plan {
    create: Vec<Value>,
    /// Each new slice and the stored one it replaces.
    update: Vec<(Value, Value)>,
    delete: Vec<Value>,
}

impl Plan {
    fn extend(&mut self, other: Plan) {
        self.create.extend(other.create);
        self.update.extend(other.update);
        self.delete.extend(other.delete);
    }

    /// `finalize`: creates become updates of owned slices of the same address type that would
    /// be deleted; no creates for a Service being deleted.
    fn finalize(mut self, ctx: &mut Ctx<'_>, service: &Value, trigger: Option<Timestamp>) {
        let mut i = 0;
        while i < self.delete.len() && !self.create.is_empty() {
            let old = &self.delete[i];
            let new = self.create.last().expect("not empty");
            if old["addressType"] == new["addressType"] && owned_by(old, service) {
                let mut new = self.create.pop().expect("not empty");
                let old = self.delete.remove(i);
                new["metadata"]["name"] = old["metadata"]["name"].clone();
                if let Some(meta) = new["metadata"].as_object_mut() {
                    meta.remove("generateName");
                }
                self.update.push((new, old));
            } else {
                i += 1;
            }
        }
        if !is_deleting(service) {
            for mut slice in self.create {
                set_trigger_annotation(&mut slice["metadata"], trigger);
                let _ = ctx.create(MANAGER, ENDPOINT_SLICES, slice);
            }
        }
        for (mut slice, old) in self.update {
            set_trigger_annotation(&mut slice["metadata"], trigger);
            let _ = ctx.update(MANAGER, ENDPOINT_SLICES, &old, slice, None);
        }
        for slice in self.delete {
            let meta = &slice["metadata"];
            let (ns, name) = (
                meta["namespace"].as_str().unwrap_or_default(),
                meta["name"].as_str().unwrap_or_default(),
            );
            let _ = ctx.delete(MANAGER, ENDPOINT_SLICES, ns, name, &json!({}));
        }
    }
}

/// `getAddressTypesForService`: the Service's `ipFamilies`, else its cluster IP's family, else
/// (headless) both.
fn address_types(service: &Value) -> BTreeSet<&'static str> {
    let spec = &service["spec"];
    let mut types: BTreeSet<&'static str> = spec["ipFamilies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| match f.as_str() {
            Some("IPv4") => Some("IPv4"),
            Some("IPv6") => Some("IPv6"),
            _ => None,
        })
        .collect();
    if types.is_empty() {
        if service_ip_set(service) {
            let v6 = spec["clusterIP"]
                .as_str()
                .is_some_and(|ip| ip.contains(':'));
            types.insert(if v6 { "IPv6" } else { "IPv4" });
        } else {
            types.extend(["IPv4", "IPv6"]);
        }
    }
    types
}

/// The desired endpoints of one address type, by their ports (keyed by [`port_key`]).
type Desired = BTreeMap<String, (Vec<Value>, Vec<Value>)>;

fn desired_endpoints(
    ctx: &Ctx<'_>,
    service: &Value,
    pods: &[Value],
    family: &str,
    node_missing: &mut bool,
) -> Desired {
    let publish = service["spec"]["publishNotReadyAddresses"] == true;
    let mut desired = Desired::new();
    for pod in pods {
        if !should_be_in_endpoints(pod, true) {
            continue;
        }
        let ports = endpoint_ports(service, pod);
        let group = desired
            .entry(port_key(&ports))
            .or_insert_with(|| (ports, Vec::new()));
        let node_name = pod["spec"]["nodeName"].as_str().unwrap_or_default();
        let node = ctx.get(NODES, "", node_name);
        if node.is_none() && !publish {
            *node_missing = true;
            continue;
        }
        let endpoint = pod_endpoint(pod, node.as_ref(), service, family);
        if endpoint["addresses"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
            && !group.1.iter().any(|e| hash(e) == hash(&endpoint))
        {
            group.1.push(endpoint);
        }
    }
    desired
}

/// `podToEndpoint`.
fn pod_endpoint(pod: &Value, node: Option<&Value>, service: &Value, family: &str) -> Value {
    let serving = is_pod_ready(pod);
    let terminating = is_deleting(pod);
    let ready = service["spec"]["publishNotReadyAddresses"] == true || (serving && !terminating);
    let addresses: Vec<String> = pod_ips(pod)
        .into_iter()
        .filter(|ip| ip.is_ipv6() == (family == "IPv6"))
        .map(|ip| ip.to_string())
        .collect();
    let mut endpoint = json!({
        "addresses": addresses,
        "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
        "targetRef": target_ref(pod),
    });
    if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        endpoint["nodeName"] = json!(node);
    }
    if let Some(zone) = node
        .and_then(|n| labels(n).get("topology.kubernetes.io/zone").cloned())
        .filter(|z| !z.is_empty())
    {
        endpoint["zone"] = json!(zone);
    }
    if should_set_hostname(pod, service) {
        endpoint["hostname"] = pod["spec"]["hostname"].clone();
    }
    endpoint
}

/// `getEndpointPorts`: each Service port found on the pod (none for a headless Service
/// without ports).
fn endpoint_ports(service: &Value, pod: &Value) -> Vec<Value> {
    let ports = service["spec"]["ports"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    ports
        .iter()
        .filter_map(|port| {
            let number = find_port(pod, port)?;
            let mut endpoint_port = json!({
                "name": port["name"].as_str().unwrap_or_default(),
                "port": number, "protocol": port["protocol"].as_str().unwrap_or("TCP"),
            });
            if !port["appProtocol"].is_null() {
                endpoint_port["appProtocol"] = port["appProtocol"].clone();
            }
            Some(endpoint_port)
        })
        .collect()
}

/// `NewPortMapKey`: the ports, order aside, as stored ports compare (defaults filled in).
fn port_key(ports: &[Value]) -> String {
    let mut normalized: Vec<String> = ports
        .iter()
        .map(|p| {
            json!([
                p["name"].as_str().unwrap_or_default(),
                p["port"],
                p["protocol"].as_str().unwrap_or("TCP"),
                p["appProtocol"]
            ])
            .to_string()
        })
        .collect();
    normalized.sort();
    normalized.join(";")
}

/// `hashEndpoint`: what identifies an endpoint (its sorted addresses, hostname and target).
fn hash(endpoint: &Value) -> String {
    let mut addresses: Vec<&str> = endpoint["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    addresses.sort_unstable();
    let target = &endpoint["targetRef"];
    json!([
        addresses,
        endpoint["hostname"],
        target["namespace"],
        target["name"]
    ])
    .to_string()
}

/// `EndpointsEqualBeyondHash`: node, zone, conditions and target (its resourceVersion aside).
fn equal_beyond_hash(a: &Value, b: &Value) -> bool {
    let target = |e: &Value| {
        let mut t = e["targetRef"].clone();
        if let Some(t) = t.as_object_mut() {
            t.remove("resourceVersion");
        }
        t
    };
    a["nodeName"] == b["nodeName"]
        && a["zone"] == b["zone"]
        && ["ready", "serving", "terminating"]
            .iter()
            .all(|c| a["conditions"][c] == b["conditions"][c])
        && target(a) == target(b)
}

/// `ownedBy`: the slice has an owner reference to this Service.
fn owned_by(slice: &Value, service: &Value) -> bool {
    slice["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|o| {
            o["uid"] == service["metadata"]["uid"]
                && o["kind"] == "Service"
                && o["apiVersion"] == "v1"
        })
}

/// `setEndpointSliceLabels`: the Service's labels (reserved ones aside) plus the reserved
/// ones, and whether the slice's non-reserved labels differ from the Service's.
fn slice_labels(slice: Option<&Value>, service: &Value) -> (BTreeMap<String, String>, bool) {
    let reserved = |k: &str| k == SERVICE_NAME || k == MANAGED_BY || k == HEADLESS;
    let strip = |mut l: BTreeMap<String, String>| {
        l.retain(|k, _| !reserved(k));
        l
    };
    let current = strip(slice.map(labels).unwrap_or_default());
    let mut wanted = strip(labels(service));
    let changed = current != wanted;
    if !service_ip_set(service) {
        wanted.insert(HEADLESS.into(), String::new());
    }
    wanted.insert(
        SERVICE_NAME.into(),
        service["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .into(),
    );
    wanted.insert(MANAGED_BY.into(), CONTROLLER_NAME.into());
    (wanted, changed)
}

/// `newEndpointSlice`.
fn new_slice(service: &Value, ports: &[Value], family: &str) -> Value {
    let meta = &service["metadata"];
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "generateName": format!("{}-", meta["name"].as_str().unwrap_or_default()),
            "namespace": meta["namespace"],
            "labels": slice_labels(None, service).0,
            "ownerReferences": [controller_ref(service, "v1", "Service")],
        },
        "addressType": family, "endpoints": [], "ports": ports,
    })
}

fn endpoints_of(slice: &Value) -> &[Value] {
    slice["endpoints"].as_array().map_or(&[][..], Vec::as_slice)
}

/// `reconcileByAddressType`, for the slices of one address type.
fn reconcile_family(service: &Value, existing: &[&Value], desired: Desired, family: &str) -> Plan {
    let mut plan = Plan::default();
    let mut by_ports: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for slice in existing {
        if owned_by(slice, service) {
            let ports = slice["ports"].as_array().map_or(&[][..], Vec::as_slice);
            by_ports.entry(port_key(ports)).or_default().push(slice);
        } else {
            plan.delete.push((*slice).clone());
        }
    }
    for (key, (ports, endpoints)) in desired {
        let slices = by_ports.remove(&key).unwrap_or_default();
        plan.extend(reconcile_ports(service, &slices, endpoints, &ports, family));
    }
    plan.delete
        .extend(by_ports.into_values().flatten().cloned());
    if existing.len() == plan.delete.len() && plan.create.is_empty() {
        let placeholder = new_slice(service, &[], family);
        let same = |s: &Value| {
            labels(s) == labels(&placeholder)
                && s["metadata"]["ownerReferences"] == placeholder["metadata"]["ownerReferences"]
                && s["addressType"] == family
                && endpoints_of(s).is_empty()
                && s["ports"].as_array().is_none_or(Vec::is_empty)
        };
        if plan.delete.len() == 1 && same(&plan.delete[0]) {
            plan.delete.clear();
        } else {
            plan.create.push(placeholder);
        }
    }
    plan
}

/// `reconcileByPortMapping`, for the slices of one set of ports.
fn reconcile_ports(
    service: &Value,
    existing: &[&Value],
    mut desired: Vec<Value>,
    ports: &[Value],
    family: &str,
) -> Plan {
    let mut plan = Plan::default();
    let mut to_update: Vec<(Value, Value)> = Vec::new();
    let mut unchanged: Vec<&Value> = Vec::new();
    // 1. Endpoints no longer desired leave their slices; changed ones are updated in place.
    for slice in existing {
        let mut kept = Vec::new();
        let mut updated = false;
        for endpoint in endpoints_of(slice) {
            if let Some(at) = desired.iter().position(|d| hash(d) == hash(endpoint)) {
                let want = desired.remove(at);
                updated |= !equal_beyond_hash(&want, endpoint);
                kept.push(want);
            }
        }
        let (slice_labels, labels_changed) = slice_labels(Some(slice), service);
        if updated || kept.len() != endpoints_of(slice).len() {
            if kept.is_empty() {
                plan.delete.push((*slice).clone());
            } else {
                let mut new = (*slice).clone();
                new["endpoints"] = Value::Array(kept);
                new["metadata"]["labels"] = json!(slice_labels);
                to_update.push((new, (*slice).clone()));
            }
        } else if labels_changed {
            let mut new = (*slice).clone();
            new["metadata"]["labels"] = json!(slice_labels);
            to_update.push((new, (*slice).clone()));
        } else {
            unchanged.push(slice);
        }
    }
    // 2. Slices being updated are filled up first, the fullest first.
    if !desired.is_empty() {
        to_update.sort_by_key(|(s, _)| std::cmp::Reverse(endpoints_of(s).len()));
        for (slice, _) in &mut to_update {
            fill(slice, &mut desired);
        }
    }
    // 3. What is left goes to the unchanged slice closest to full, else to new slices.
    while !desired.is_empty() {
        let fit = (desired.len() < MAX_ENDPOINTS)
            .then(|| slice_to_fill(&unchanged, desired.len()))
            .flatten();
        match fit {
            Some(at) => {
                let old = unchanged.remove(at);
                let mut slice = old.clone();
                fill(&mut slice, &mut desired);
                to_update.push((slice, old.clone()));
            }
            None => {
                let mut slice = new_slice(service, ports, family);
                fill(&mut slice, &mut desired);
                plan.create.push(slice);
            }
        }
    }
    plan.update = to_update;
    plan
}

/// Moves desired endpoints into `slice` until it is full.
fn fill(slice: &mut Value, desired: &mut Vec<Value>) {
    let room = MAX_ENDPOINTS.saturating_sub(endpoints_of(slice).len());
    let moved: Vec<Value> = desired.drain(..room.min(desired.len())).collect();
    if !slice["endpoints"].is_array() {
        slice["endpoints"] = json!([]);
    }
    if let Some(list) = slice["endpoints"].as_array_mut() {
        list.extend(moved);
    }
}

/// `getSliceToFill`: the slice that `count` more endpoints bring closest to full.
fn slice_to_fill(slices: &[&Value], count: usize) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, slice) in slices.iter().enumerate() {
        let Some(diff) = MAX_ENDPOINTS.checked_sub(count + endpoints_of(slice).len()) else {
            continue;
        };
        if best.is_none_or(|(d, _)| diff < d) {
            best = Some((diff, i));
            if diff == 0 {
                break;
            }
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(ip_families: Value, cluster_ip: &str) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns", "uid": "s1", "labels": {"app": "web"}},
               "spec": {"ipFamilies": ip_families, "clusterIP": cluster_ip,
                        "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}})
    }

    fn endpoint(name: &str, ready: bool) -> Value {
        json!({"addresses": [format!("10.0.0.{}", name.len())],
               "conditions": {"ready": ready, "serving": ready, "terminating": false},
               "targetRef": {"kind": "Pod", "namespace": "ns", "name": name, "uid": name}})
    }

    #[test]
    fn address_types_follow_the_ip_families() {
        let v4: Vec<_> = address_types(&service(json!(["IPv4"]), "10.96.0.1"))
            .into_iter()
            .collect();
        assert_eq!(v4, ["IPv4"]);
        let from_ip: Vec<_> = address_types(&service(Value::Null, "fd00::1"))
            .into_iter()
            .collect();
        assert_eq!(from_ip, ["IPv6"]);
        let headless: Vec<_> = address_types(&service(Value::Null, "None"))
            .into_iter()
            .collect();
        assert_eq!(headless, ["IPv4", "IPv6"]);
    }

    #[test]
    fn slices_carry_the_service_labels_and_the_reserved_ones() {
        let svc = service(json!(["IPv4"]), "None");
        let slice = new_slice(&svc, &[], "IPv4");
        assert_eq!(slice["metadata"]["generateName"], "web-");
        assert_eq!(
            slice["metadata"]["labels"],
            json!({"app": "web", "kubernetes.io/service-name": "web",
                   "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                   "service.kubernetes.io/headless": ""})
        );
        assert!(owned_by(&slice, &svc));
        assert!(!slice_labels(Some(&slice), &svc).1);
    }

    #[test]
    fn a_service_without_endpoints_gets_one_placeholder_slice() {
        let svc = service(json!(["IPv4"]), "10.96.0.1");
        let plan = reconcile_family(&svc, &[], Desired::new(), "IPv4");
        assert_eq!(plan.create.len(), 1);
        assert_eq!(plan.create[0]["endpoints"], json!([]));
        assert_eq!(plan.create[0]["ports"], json!([]));
        // An existing placeholder is kept as it is.
        let mut stored = plan.create[0].clone();
        stored["metadata"]["name"] = json!("web-abcde");
        let again = reconcile_family(&svc, &[&stored], Desired::new(), "IPv4");
        assert!(again.create.is_empty() && again.delete.is_empty() && again.update.is_empty());
    }

    #[test]
    fn endpoints_are_updated_in_place_and_leftovers_fill_the_closest_slice() {
        let svc = service(json!(["IPv4"]), "10.96.0.1");
        let ports = endpoint_ports(&svc, &json!({}));
        let mut slice = new_slice(&svc, &ports, "IPv4");
        slice["metadata"]["name"] = json!("web-abcde");
        slice["endpoints"] = json!([endpoint("a", false), endpoint("bb", true)]);
        // a becomes ready, bb goes, ccc comes.
        let plan = reconcile_ports(
            &svc,
            &[&slice],
            vec![endpoint("a", true), endpoint("ccc", true)],
            &ports,
            "IPv4",
        );
        assert!(plan.create.is_empty() && plan.delete.is_empty());
        assert_eq!(plan.update.len(), 1);
        let names: Vec<_> = endpoints_of(&plan.update[0].0)
            .iter()
            .map(|e| e["targetRef"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "ccc"]);
        assert_eq!(
            plan.update[0].0["endpoints"][0]["conditions"]["ready"],
            true
        );
        // Nothing changed: nothing to write.
        let same = reconcile_ports(
            &svc,
            &[&plan.update[0].0],
            vec![endpoint("a", true), endpoint("ccc", true)],
            &ports,
            "IPv4",
        );
        assert!(same.update.is_empty() && same.create.is_empty() && same.delete.is_empty());
    }

    #[test]
    fn each_set_of_ports_has_its_slices_and_a_placeholder_gives_way() {
        let svc = service(json!(["IPv4"]), "10.96.0.1");
        let port = |n: i64| vec![json!({"name": "http", "port": n, "protocol": "TCP"})];
        let desired = Desired::from([
            (
                port_key(&port(8080)),
                (port(8080), vec![endpoint("a", true)]),
            ),
            (
                port_key(&port(9090)),
                (port(9090), vec![endpoint("bb", true)]),
            ),
        ]);
        let mut placeholder = new_slice(&svc, &[], "IPv4");
        placeholder["metadata"]["name"] = json!("web-abcde");
        let mut plan = reconcile_family(&svc, &[&placeholder], desired, "IPv4");
        assert_eq!(plan.create.len(), 2);
        assert_eq!(plan.delete.len(), 1);
        // finalize's first step: the placeholder is updated into one of them.
        let (new, old) = (plan.create.pop().unwrap(), plan.delete.remove(0));
        assert_eq!(new["addressType"], old["addressType"]);
        assert!(owned_by(&old, &svc));
        // 250 endpoints of one port set fill three slices.
        let many: Vec<Value> = (0..250)
            .map(|i| {
                let mut e = endpoint("p", true);
                e["addresses"] = json!([format!("10.1.{}.{}", i / 200, i % 200)]);
                e["targetRef"]["name"] = json!(format!("p{i}"));
                e
            })
            .collect();
        let big = reconcile_ports(&svc, &[], many, &port(8080), "IPv4");
        let sizes: Vec<_> = big.create.iter().map(|s| endpoints_of(s).len()).collect();
        assert_eq!(sizes, [100, 100, 50]);
    }

    #[test]
    fn the_slice_to_fill_is_the_one_left_closest_to_full() {
        let with = |n: usize| json!({"endpoints": vec![json!({}); n]});
        let (a, b, c) = (with(10), with(95), with(50));
        assert_eq!(slice_to_fill(&[&a, &b, &c], 5), Some(1));
        assert_eq!(slice_to_fill(&[&a, &b, &c], 20), Some(2));
        assert_eq!(slice_to_fill(&[&b], 20), None);
    }
}
