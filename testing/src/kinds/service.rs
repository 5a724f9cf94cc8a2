//! core/v1 Services (`pkg/registry/core/service`) and Endpoints (`pkg/registry/core/endpoint`):
//! their Go types, defaulting, rules, columns, the Service's status isolation, and what the
//! Service REST storage does before its strategy (`beginCreate`, `beginUpdate`): the IP family
//! fields initialised, cluster IPs allocated from the server's service CIDR and node ports from
//! its node port range (`storage/alloc.go`).
//!
//! Allocation is deterministic (the lowest free address or port, where kube-apiserver picks at
//! random) and derived from the stored Services, so a deleted Service frees what it held and a
//! dry run holds nothing.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::ops::RangeInclusive;

use serde_json::{Value, json};

use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::{ApiError, Qualified};
use crate::store::{StorageKey, Store};
use crate::table::column::Column;
use crate::validation::names::NameRule;
use crate::validation::service as rules;
use crate::validation::{FieldError, gotypes};

/// The service network a server allocates from: kube-apiserver's `--service-cluster-ip-range`
/// (IPv4 single stack) and `--service-node-port-range`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServiceNetwork {
    /// The CIDR's network address.
    pub network: Ipv4Addr,
    /// The CIDR's prefix length.
    pub prefix: u8,
    /// The node ports.
    pub node_ports: RangeInclusive<u16>,
}

impl Default for ServiceNetwork {
    /// kube-apiserver's defaults: `10.0.0.0/24`, `30000-32767`.
    fn default() -> Self {
        Self {
            network: Ipv4Addr::new(10, 0, 0, 0),
            prefix: 24,
            node_ports: 30000..=32767,
        }
    }
}

impl ServiceNetwork {
    /// The network of `cidr` (`10.96.0.0/12`).
    ///
    /// # Errors
    /// A CIDR that is not an IPv4 one with at least 8 addresses.
    pub(crate) fn parse(cidr: &str, node_ports: RangeInclusive<u16>) -> Result<Self, String> {
        let (ip, len) = cidr
            .split_once('/')
            .ok_or_else(|| format!("{cidr:?} is not a CIDR"))?;
        let ip: Ipv4Addr = ip
            .parse()
            .map_err(|_| format!("{cidr:?} is not an IPv4 CIDR"))?;
        let prefix: u8 = len.parse().map_err(|_| format!("{cidr:?} is not a CIDR"))?;
        if !(1..=29).contains(&prefix) {
            return Err(format!("{cidr:?}: the prefix must be between 1 and 29"));
        }
        let mask = u32::MAX << (32 - prefix);
        Ok(Self {
            network: Ipv4Addr::from(u32::from(ip) & mask),
            prefix,
            node_ports,
        })
    }

    /// The first and last addresses a Service may hold (the network and broadcast addresses
    /// excluded).
    fn bounds(&self) -> (u32, u32) {
        let base = u32::from(self.network);
        let size = 1u32 << (32 - self.prefix);
        (base + 1, base + size - 2)
    }

    fn contains(&self, ip: Ipv4Addr) -> bool {
        let mask = u32::MAX << (32 - self.prefix);
        u32::from(ip) & mask == u32::from(self.network)
    }

    fn ports_text(&self) -> String {
        format!("{}-{}", self.node_ports.start(), self.node_ports.end())
    }
}

const SERVICE: &str = "io.k8s.api.core.v1.Service";
const ENDPOINTS: &str = "io.k8s.api.core.v1.Endpoints";

static SERVICE_TYPED: Typed = typed!(SERVICE, SERVICE_VALUE_STRUCTS);
static ENDPOINTS_TYPED: Typed = typed!(ENDPOINTS, &[]);

const SERVICE_VALUE_STRUCTS: &[&str] = &["spec", "status", "status.loadBalancer"];

fn description(name: &str, field: &str) -> String {
    crate::openapi::definitions::Definitions::builtin()
        .get(name)
        .and_then(|d| d["properties"][field]["description"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|s| s.as_str().unwrap_or_default().to_owned())
        .collect()
}

fn invalid(name: &str, errs: Vec<FieldError>) -> ApiError {
    ApiError::invalid(
        Qualified {
            group: "",
            name: "Service",
        },
        name,
        errs.into_iter().map(Into::into).collect(),
    )
}

/// apimachinery's `errors.NewInternalError`.
fn internal_error(message: impl Into<String>) -> ApiError {
    let message = message.into();
    ApiError {
        code: 500,
        reason: "InternalError",
        message: format!("Internal error occurred: {message}"),
        details: Some(json!({"causes": [{"message": message}]})),
    }
}

/// Services' [`Strategy`].
pub(crate) struct Services;

impl Strategy for Services {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*SERVICE_TYPED.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        rules::default_service(obj);
        Ok(())
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035Label
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if old.is_some() {
            // ValidateServiceUpdate's ValidateObjectMetaUpdate checks the new metadata twice
            // more (after the generic registry's check), as kube-apiserver reports them.
            let meta = crate::validation::meta::validate_update(&new["metadata"]);
            errs.extend(meta.iter().cloned());
            errs.extend(meta);
        }
        errs.extend(rules::service_rules(new, old));
        errs
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value, _subresource: Option<&str>) {
        drop_type_dependent_fields(&old["spec"], &mut new["spec"]);
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // Decoding defaulted the ingress by the written spec, before the strategy took the
        // stored one back.
        rules::default_ip_modes(new);
        new["spec"] = old["spec"].clone();
        if !new["status"].is_object() {
            new["status"] = json!({});
        }
        if !new["status"]["loadBalancer"].is_object() {
            new["status"]["loadBalancer"] = json!({});
        }
    }

    fn validate_update(
        &self,
        _info: &ResourceInfo,
        name: &str,
        new: &mut Value,
        old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        if subresource == Some("status") {
            let errs = rules::service_status_rules(new, old);
            if !errs.is_empty() {
                return Err(invalid(name, errs));
            }
        }
        Ok(())
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        _name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        Ok(warnings(obj))
    }

    fn creates_on_update(&self) -> bool {
        true
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn stored_form(&self, obj: &mut Value) {
        // `defaultOnReadInternalTrafficPolicy`: every read of an ExternalName Service drops it.
        if obj["spec"]["type"] == "ExternalName"
            && let Some(spec) = obj["spec"].as_object_mut()
        {
            spec.remove("internalTrafficPolicy");
        }
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&SERVICE_TYPED.apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        SERVICE_VALUE_STRUCTS
    }

    fn field_labels(&self) -> &'static [&'static str] {
        &["spec.clusterIP", "spec.type"]
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        let spec = "io.k8s.api.core.v1.ServiceSpec";
        vec![
            Column::name(),
            Column::new(
                "Type",
                "string",
                0,
                Box::new(|o, _| o["spec"]["type"].clone()),
            )
            .described(&description(spec, "type")),
            Column::new(
                "Cluster-IP",
                "string",
                0,
                Box::new(|o, _| {
                    json!(
                        strings(&o["spec"]["clusterIPs"])
                            .first()
                            .cloned()
                            .unwrap_or_else(|| "<none>".into())
                    )
                }),
            )
            .described(&description(spec, "clusterIP")),
            Column::new(
                "External-IP",
                "string",
                0,
                Box::new(|o, _| json!(external_ip(o))),
            )
            .described(&description(spec, "externalIPs")),
            Column::new(
                "Port(s)",
                "string",
                0,
                Box::new(|o, _| json!(port_string(o))),
            )
            .described(&description(spec, "ports")),
            Column::age(),
            Column::new(
                "Selector",
                "string",
                1,
                Box::new(|o, _| json!(format_labels(&o["spec"]["selector"]))),
            )
            .described(&description(spec, "selector")),
        ]
    }
}

/// `GetWarningsForService` (but the warnings of IPs and CIDRs in non-canonical forms).
fn warnings(obj: &Value) -> Vec<String> {
    let spec = &obj["spec"];
    let mut out = Vec::new();
    let hints = "service.kubernetes.io/topology-aware-hints";
    if !obj["metadata"]["annotations"][hints].is_null() {
        out.push(format!(
            "annotation {hints} is deprecated, please use service.kubernetes.io/topology-mode instead"
        ));
    }
    if rules::is_headless(spec) {
        if !spec["loadBalancerIP"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
        {
            out.push("spec.loadBalancerIP is ignored for headless services".into());
        }
        if !strings(&spec["externalIPs"]).is_empty() {
            out.push("spec.externalIPs is ignored for headless services".into());
        }
        if spec["sessionAffinity"] != "None" {
            out.push("spec.SessionAffinity is ignored for headless services".into());
        }
    }
    let t = spec["type"].as_str().unwrap_or_default();
    if t == "ExternalName" && !strings(&spec["externalIPs"]).is_empty() {
        out.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".into());
    }
    if t != "ExternalName" && !spec["externalName"].as_str().unwrap_or_default().is_empty() {
        out.push("spec.externalName is ignored when spec.type is not \"ExternalName\"".into());
    }
    out
}

/// `labels.FormatLabels`.
fn format_labels(labels: &Value) -> String {
    let pairs: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

/// `getServiceExternalIP`.
fn external_ip(o: &Value) -> String {
    let spec = &o["spec"];
    let external = strings(&spec["externalIPs"]);
    match spec["type"].as_str().unwrap_or_default() {
        "ClusterIP" | "NodePort" => {
            if external.is_empty() {
                "<none>".into()
            } else {
                external.join(",")
            }
        }
        "LoadBalancer" => {
            let mut lb = BTreeSet::new();
            for ing in o["status"]["loadBalancer"]["ingress"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let ip = ing["ip"].as_str().unwrap_or_default();
                let host = ing["hostname"].as_str().unwrap_or_default();
                if !ip.is_empty() {
                    lb.insert(ip.to_owned());
                } else if !host.is_empty() {
                    lb.insert(host.to_owned());
                }
            }
            let mut all: Vec<String> = lb.into_iter().collect();
            all.extend(external);
            if all.is_empty() {
                "<pending>".into()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => spec["externalName"].as_str().unwrap_or_default().into(),
        _ => "<unknown>".into(),
    }
}

/// `makePortString`, `<none>` for no ports.
fn port_string(o: &Value) -> String {
    let pieces: Vec<String> = o["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p["port"].as_i64().unwrap_or(0);
            let protocol = p["protocol"].as_str().unwrap_or_default();
            match p["nodePort"].as_i64().unwrap_or(0) {
                0 => format!("{port}/{protocol}"),
                np => format!("{port}:{np}/{protocol}"),
            }
        })
        .collect();
    if pieces.is_empty() {
        "<none>".into()
    } else {
        pieces.join(",")
    }
}

fn needs_cluster_ip(spec: &Value) -> bool {
    spec["type"] != "ExternalName"
}

fn needs_node_port(spec: &Value) -> bool {
    spec["type"] == "NodePort" || spec["type"] == "LoadBalancer"
}

fn node_ports_of(spec: &Value) -> BTreeSet<i64> {
    spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["nodePort"].as_i64())
        .filter(|n| *n != 0)
        .collect()
}

fn remove(spec: &mut Value, key: &str) {
    if let Some(m) = spec.as_object_mut() {
        m.remove(key);
    }
}

/// `dropTypeDependentFields`: what the old type needed and the new one does not, left as it
/// was, is cleared.
fn drop_type_dependent_fields(old: &Value, new: &mut Value) {
    if needs_cluster_ip(old) && !needs_cluster_ip(new) {
        if old["clusterIP"] == new["clusterIP"]
            && strings(&old["clusterIPs"]) == strings(&new["clusterIPs"])
        {
            remove(new, "clusterIP");
            remove(new, "clusterIPs");
        }
        if old["ipFamilies"] == new["ipFamilies"] {
            remove(new, "ipFamilies");
        }
        if old["ipFamilyPolicy"] == new["ipFamilyPolicy"] {
            remove(new, "ipFamilyPolicy");
        }
    }
    if needs_node_port(old)
        && !needs_node_port(new)
        && node_ports_of(old).is_superset(&node_ports_of(new))
        && let Some(ports) = new.get_mut("ports").and_then(Value::as_array_mut)
    {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            p.remove("nodePort");
        }
    }
    if rules::needs_health_check(old)
        && !rules::needs_health_check(new)
        && old["healthCheckNodePort"] == new["healthCheckNodePort"]
    {
        remove(new, "healthCheckNodePort");
    }
    if old["type"] == "LoadBalancer" && new["type"] != "LoadBalancer" {
        if !new["allocateLoadBalancerNodePorts"].is_null()
            && old["allocateLoadBalancerNodePorts"] == new["allocateLoadBalancerNodePorts"]
        {
            remove(new, "allocateLoadBalancerNodePorts");
        }
        if old["loadBalancerClass"] == new["loadBalancerClass"] {
            remove(new, "loadBalancerClass");
        }
    }
    if rules::externally_accessible(old)
        && !rules::externally_accessible(new)
        && old["externalTrafficPolicy"] == new["externalTrafficPolicy"]
    {
        remove(new, "externalTrafficPolicy");
    }
}

/// A Service write's object as the field manager sees it (kube-apiserver's runs before the
/// REST storage allocates): decoded and defaulted, nothing allocated; `None` for other kinds.
pub(crate) fn as_requested(info: &ResourceInfo, obj: &Value) -> Option<Value> {
    if !(info.group.is_empty() && info.plural == "services") {
        return None;
    }
    let mut seen = obj.clone();
    rules::default_service(&mut seen);
    Some(seen)
}

/// Records the write's managed fields with `track`: on `requested` (with the written object's
/// metadata) when there is one, so that what allocation added is owned by no one.
pub(crate) fn track_as_requested(
    requested: Option<Value>,
    obj: &mut Value,
    track: impl FnOnce(&mut Value),
) {
    let Some(mut seen) = requested else {
        track(obj);
        return;
    };
    seen["metadata"] = obj["metadata"].clone();
    track(&mut seen);
    match seen["metadata"].get_mut("managedFields").map(Value::take) {
        Some(entries) => obj["metadata"]["managedFields"] = entries,
        None => {
            if let Some(meta) = obj["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
        }
    }
}

/// The warning of every request to core/v1 Endpoints, deprecated since v1.33.
pub(crate) fn deprecation(r: &crate::routes::ResourcePath) -> Option<&'static str> {
    (r.group.is_empty() && r.version == "v1" && r.plural == "endpoints")
        .then_some("v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
}

/// Where Services are stored.
fn services_key() -> StorageKey {
    StorageKey {
        group: String::new(),
        resource: "services".into(),
    }
}

/// What the stored Services (but `except`, the one being updated) hold.
fn allocated(store: &Store, except: Option<(&str, &str)>) -> (BTreeSet<Ipv4Addr>, BTreeSet<i64>) {
    let mut ips = BTreeSet::new();
    let mut ports = BTreeSet::new();
    for svc in store.list(&services_key(), None) {
        let key = (
            svc["metadata"]["namespace"].as_str().unwrap_or_default(),
            svc["metadata"]["name"].as_str().unwrap_or_default(),
        );
        if except == Some(key) {
            continue;
        }
        for ip in strings(&svc["spec"]["clusterIPs"]) {
            if let Ok(ip) = ip.parse() {
                ips.insert(ip);
            }
        }
        ports.extend(node_ports_of(&svc["spec"]));
        if let Some(hc) = svc["spec"]["healthCheckNodePort"]
            .as_i64()
            .filter(|p| *p != 0)
        {
            ports.insert(hc);
        }
    }
    (ips, ports)
}

/// `normalizeClusterIPs` of a create: a lone `clusterIP` becomes `clusterIPs`.
fn normalize_create(spec: &mut Value) {
    if let Some(ip) = spec["clusterIP"].as_str().filter(|s| !s.is_empty())
        && strings(&spec["clusterIPs"]).is_empty()
    {
        spec["clusterIPs"] = json!([ip]);
    }
}

/// `normalizeClusterIPs` of an update.
fn normalize_update(spec: &mut Value, old: &Value) {
    let old_ips = strings(&old["clusterIPs"]);
    if !old_ips.is_empty()
        && strings(&spec["clusterIPs"]).is_empty()
        && old["clusterIP"] == spec["clusterIP"]
    {
        spec["clusterIPs"] = old["clusterIPs"].clone();
    }
    let same = old["clusterIP"] == spec["clusterIP"] && old_ips == strings(&spec["clusterIPs"]);
    let old_ip = old["clusterIP"].as_str().unwrap_or_default();
    let new_ip = spec["clusterIP"].as_str().unwrap_or_default().to_owned();
    if old_ip != new_ip {
        if !old_ip.is_empty() && new_ip.is_empty() {
            if same {
                remove(spec, "clusterIPs");
            }
        } else if old_ips == strings(&spec["clusterIPs"]) {
            spec["clusterIPs"] = json!([new_ip]);
        }
    }
}

/// `patchAllocatedValues`: what a PUT left out that the old object held.
fn patch_allocated_values(spec: &mut Value, old: &Value) {
    if needs_cluster_ip(old) && needs_cluster_ip(spec) {
        if spec["clusterIP"].as_str().unwrap_or_default().is_empty() && !old["clusterIP"].is_null()
        {
            spec["clusterIP"] = old["clusterIP"].clone();
        }
        if strings(&spec["clusterIPs"]).is_empty() && !strings(&old["clusterIPs"]).is_empty() {
            spec["clusterIPs"] = old["clusterIPs"].clone();
        }
    }
    if needs_node_port(old) && needs_node_port(spec) {
        let used: BTreeSet<i64> = node_ports_of(old)
            .intersection(&node_ports_of(spec))
            .copied()
            .collect();
        let by_name: Vec<(String, i64)> = old["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p["name"].as_str().unwrap_or_default().to_owned(),
                    p["nodePort"].as_i64().unwrap_or(0),
                )
            })
            .collect();
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut() {
                if p["nodePort"].as_i64().unwrap_or(0) == 0 {
                    let name = p["name"].as_str().unwrap_or_default();
                    // The last old port of that name, as Go's map keeps it.
                    let old_value = by_name
                        .iter()
                        .rev()
                        .find(|(n, _)| n == name)
                        .map_or(0, |(_, v)| *v);
                    if old_value != 0 && !used.contains(&old_value) {
                        p["nodePort"] = json!(old_value);
                    }
                }
            }
        }
    }
    if rules::needs_health_check(old)
        && rules::needs_health_check(spec)
        && spec["healthCheckNodePort"].as_i64().unwrap_or(0) == 0
        && !old["healthCheckNodePort"].is_null()
    {
        spec["healthCheckNodePort"] = old["healthCheckNodePort"].clone();
    }
}

/// `initIPFamilyFields` on this single-stack IPv4 server.
fn init_ip_families(name: &str, spec: &mut Value, old: Option<&Value>) -> Result<(), ApiError> {
    if spec["type"] == "ExternalName" {
        return Ok(());
    }
    let headless_selectorless =
        spec["clusterIP"] == "None" && spec["selector"].as_object().is_none_or(|m| m.is_empty());
    if spec["ipFamilyPolicy"].is_null() {
        spec["ipFamilyPolicy"] = match old.map(|o| &o["ipFamilyPolicy"]) {
            Some(p) if !p.is_null() => p.clone(),
            _ if headless_selectorless => json!("RequireDualStack"),
            _ => json!("SingleStack"),
        };
    }
    let errs = rules::cluster_ips_related_rules(spec, old);
    if !errs.is_empty() {
        return Err(invalid(name, errs));
    }
    let mut errs = Vec::new();
    let single = spec["ipFamilyPolicy"] == "SingleStack";
    if let Some(old) = old {
        let same_ips = old["clusterIP"] == spec["clusterIP"]
            && strings(&old["clusterIPs"]) == strings(&spec["clusterIPs"]);
        if single {
            if same_ips && strings(&spec["clusterIPs"]).len() > 1 {
                spec["clusterIPs"] = json!([strings(&spec["clusterIPs"])[0]]);
            }
            if old["ipFamilies"] == spec["ipFamilies"] && strings(&spec["ipFamilies"]).len() > 1 {
                spec["ipFamilies"] = json!([strings(&spec["ipFamilies"])[0]]);
            }
        } else {
            if strings(&spec["clusterIPs"]).len() < strings(&old["clusterIPs"]).len() {
                errs.push(FieldError::invalid_value(
                    "spec.ipFamilyPolicy",
                    &spec["ipFamilyPolicy"],
                    "must be 'SingleStack' to release the secondary cluster IP",
                ));
            }
            if strings(&spec["ipFamilies"]).len() < strings(&old["ipFamilies"]).len() {
                errs.push(FieldError::invalid_value(
                    "spec.ipFamilyPolicy",
                    &spec["ipFamilyPolicy"],
                    "must be 'SingleStack' to release the secondary IP family",
                ));
            }
        }
    }
    if single {
        if strings(&spec["clusterIPs"]).len() == 2 {
            errs.push(FieldError::invalid_value(
                "spec.ipFamilyPolicy",
                &spec["ipFamilyPolicy"],
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
            ));
        }
        if strings(&spec["ipFamilies"]).len() == 2 {
            errs.push(FieldError::invalid_value(
                "spec.ipFamilyPolicy",
                &spec["ipFamilyPolicy"],
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            ));
        }
    }
    let ips = strings(&spec["clusterIPs"]);
    let mut families = strings(&spec["ipFamilies"]);
    for (i, ip) in ips.iter().enumerate() {
        if ip == "None" {
            break;
        }
        if i >= families.len() {
            let v6 = matches!(rules::parse_ip(ip), Some(std::net::IpAddr::V6(_)));
            if v6 {
                errs.push(FieldError::invalid_value(
                    &format!("spec.clusterIPs[{i}]"),
                    &spec["clusterIPs"],
                    "IPv6 is not configured on this cluster",
                ));
            } else {
                families.push("IPv4".into());
            }
        }
    }
    if !errs.is_empty() {
        return Err(invalid(name, errs));
    }
    if !families.is_empty() {
        spec["ipFamilies"] = json!(families);
    }
    if headless_selectorless {
        if families.is_empty() {
            families.push("IPv4".into());
        }
        if families.len() < 2 && spec["ipFamilyPolicy"] != "SingleStack" {
            let other = if families[0] == "IPv4" {
                "IPv6"
            } else {
                "IPv4"
            };
            families.push(other.into());
        }
        spec["ipFamilies"] = json!(families);
        return Ok(());
    }
    if spec["ipFamilyPolicy"] == "RequireDualStack" {
        errs.push(FieldError::invalid_value(
            "spec.ipFamilyPolicy",
            &spec["ipFamilyPolicy"],
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, family) in families.iter().enumerate() {
        if family != "IPv4" {
            errs.push(FieldError::invalid(
                &format!("spec.ipFamilies[{i}]"),
                family,
                "not configured on this cluster",
            ));
        }
    }
    if !errs.is_empty() {
        return Err(invalid(name, errs));
    }
    if families.is_empty() {
        spec["ipFamilies"] = json!(["IPv4"]);
    }
    Ok(())
}

/// The cluster IP of a Service that needs one: the requested one, or the lowest free.
fn alloc_cluster_ip(
    name: &str,
    spec: &mut Value,
    net: &ServiceNetwork,
    taken: &BTreeSet<Ipv4Addr>,
) -> Result<(), ApiError> {
    if spec["type"] == "ExternalName"
        || strings(&spec["clusterIPs"])
            .first()
            .is_some_and(|ip| ip == "None")
    {
        return Ok(());
    }
    let requested = strings(&spec["clusterIPs"])
        .first()
        .cloned()
        .unwrap_or_default();
    let ip = if requested.is_empty() {
        let (first, last) = net.bounds();
        // The first address is the `kubernetes` Service's.
        (first + 1..=last)
            .map(Ipv4Addr::from)
            .find(|ip| !taken.contains(ip))
            .ok_or_else(|| internal_error("failed to allocate a serviceIP: range is full"))?
            .to_string()
    } else {
        let fail = |why: String| {
            invalid(
                name,
                vec![FieldError::invalid_value(
                    "spec.clusterIPs",
                    &spec["clusterIPs"],
                    &format!("failed to allocate IP {requested}: {why}"),
                )],
            )
        };
        let Ok(ip) = requested.parse::<Ipv4Addr>() else {
            return Err(internal_error(format!(
                "failed to parse service IP {requested:?}"
            )));
        };
        // The allocator of a CIDR holds neither its network nor its broadcast address
        // (`PrefixContainsIP`).
        let (first, last) = net.bounds();
        if !net.contains(ip) || u32::from(ip) < first || u32::from(ip) > last {
            return Err(fail(
                "the provided network does not match the current range".into(),
            ));
        }
        if taken.contains(&ip) || u32::from(ip) == first {
            return Err(fail("provided IP is already allocated".into()));
        }
        requested
    };
    spec["clusterIP"] = json!(ip);
    spec["clusterIPs"] = json!([ip]);
    Ok(())
}

/// A node port's allocation: `port` if free and in range.
fn take_port(
    name: &str,
    at: &str,
    port: i64,
    net: &ServiceNetwork,
    taken: &mut BTreeSet<i64>,
) -> Result<(), ApiError> {
    let why = if !(i64::from(*net.node_ports.start())..=i64::from(*net.node_ports.end()))
        .contains(&port)
    {
        format!(
            "provided port is not in the valid range. The range of valid ports is {}",
            net.ports_text()
        )
    } else if !taken.insert(port) {
        "provided port is already allocated".to_owned()
    } else {
        return Ok(());
    };
    Err(invalid(
        name,
        vec![FieldError::invalid_value(at, &json!(port), &why)],
    ))
}

fn next_port(net: &ServiceNetwork, taken: &mut BTreeSet<i64>) -> Result<i64, ApiError> {
    let port = net
        .node_ports
        .clone()
        .map(i64::from)
        .find(|p| !taken.contains(p))
        .ok_or_else(|| internal_error("failed to allocate a nodePort: range is full"))?;
    taken.insert(port);
    Ok(port)
}

/// `initNodePorts` and the health check node port, on a create.
fn alloc_node_ports(
    name: &str,
    spec: &mut Value,
    net: &ServiceNetwork,
    taken: &mut BTreeSet<i64>,
) -> Result<(), ApiError> {
    if needs_node_port(spec) {
        let allocate = spec["type"] == "NodePort"
            || (spec["type"] == "LoadBalancer" && spec["allocateLoadBalancerNodePorts"] != false);
        let snapshot: Vec<(i64, i64)> = spec["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p["port"].as_i64().unwrap_or(0),
                    p["nodePort"].as_i64().unwrap_or(0),
                )
            })
            .collect();
        let mut by_port: Vec<(i64, i64)> = Vec::new();
        for (i, (port, node_port)) in snapshot.iter().copied().enumerate() {
            if node_port == 0 && !allocate {
                continue;
            }
            let at = format!("spec.ports[{i}].nodePort");
            match by_port.iter().find(|(p, _)| *p == port).map(|(_, n)| *n) {
                None => {
                    let requested = snapshot[i..]
                        .iter()
                        .find(|(p, n)| *p == port && *n != 0)
                        .map_or(0, |(_, n)| *n);
                    let np = if requested != 0 {
                        take_port(name, &at, requested, net, taken)?;
                        requested
                    } else {
                        next_port(net, taken)?
                    };
                    spec["ports"][i]["nodePort"] = json!(np);
                    by_port.push((port, np));
                }
                Some(allocated) if allocated != node_port => {
                    if node_port == 0 {
                        spec["ports"][i]["nodePort"] = json!(allocated);
                    } else {
                        take_port(name, &at, node_port, net, taken)?;
                    }
                }
                Some(_) => {}
            }
        }
    }
    if rules::needs_health_check(spec) {
        let hc = spec["healthCheckNodePort"].as_i64().unwrap_or(0);
        if hc != 0 {
            if take_port(name, "spec.healthCheckNodePort", hc, net, taken).is_err() {
                return Err(internal_error(format!(
                    "failed to allocate requested HealthCheck NodePort {hc}: provided port is already allocated"
                )));
            }
        } else {
            spec["healthCheckNodePort"] = json!(next_port(net, taken)?);
        }
    }
    Ok(())
}

/// `beginCreate`: the IP family fields, the cluster IP and the node ports of a Service about
/// to be created, before its validation.
///
/// # Errors
/// The allocators' 422 (or 500 when a range is full).
pub(crate) fn begin_create(
    store: &Store,
    net: &ServiceNetwork,
    obj: &mut Value,
) -> Result<(), ApiError> {
    let name = obj["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let spec = &mut obj["spec"];
    normalize_create(spec);
    init_ip_families(&name, spec, None)?;
    let (ips, mut ports) = allocated(store, None);
    alloc_cluster_ip(&name, spec, net, &ips)?;
    alloc_node_ports(&name, spec, net, &mut ports)
}

/// `beginUpdate`: what a PUT left out that the stored Service holds, then the allocations the
/// new type needs (those it no longer needs are freed by the write itself).
///
/// # Errors
/// The allocators' 422.
pub(crate) fn begin_update(
    store: &Store,
    net: &ServiceNetwork,
    old: &Value,
    new: &mut Value,
) -> Result<(), ApiError> {
    let name = old["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let ns = old["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let old_spec = &old["spec"];
    let spec = &mut new["spec"];
    if !spec.is_object() {
        return Ok(());
    }
    patch_allocated_values(spec, old_spec);
    normalize_update(spec, old_spec);
    init_ip_families(&name, spec, Some(old_spec))?;
    let (ips, mut ports) = allocated(store, Some((&ns, &name)));
    // updateClusterIPs: a Service that did not need one (ExternalName) gets one.
    if !needs_cluster_ip(old_spec) && needs_cluster_ip(spec) {
        alloc_cluster_ip(&name, spec, net, &ips)?;
    }
    // updateNodePorts: the old Service's ports stay its own (still allocated while the update
    // allocates), new requested ones must be free, missing ones are allocated.
    let mut mine = node_ports_of(old_spec);
    if let Some(hc) = old_spec["healthCheckNodePort"].as_i64().filter(|p| *p != 0) {
        mine.insert(hc);
    }
    ports.extend(mine.iter().copied());
    if needs_node_port(spec) {
        let allocate = spec["type"] == "NodePort"
            || (spec["type"] == "LoadBalancer" && spec["allocateLoadBalancerNodePorts"] != false);
        let count = spec["ports"].as_array().map_or(0, Vec::len);
        let mut seen = BTreeSet::new();
        for i in 0..count {
            let np = spec["ports"][i]["nodePort"].as_i64().unwrap_or(0);
            let at = format!("spec.ports[{i}].nodePort");
            if np != 0 {
                if !mine.contains(&np) && !seen.contains(&np) {
                    take_port(&name, &at, np, net, &mut ports)?;
                }
                seen.insert(np);
            } else if allocate {
                let np = next_port(net, &mut ports)?;
                spec["ports"][i]["nodePort"] = json!(np);
            }
        }
    }
    if rules::needs_health_check(spec) {
        match spec["healthCheckNodePort"].as_i64().unwrap_or(0) {
            0 => spec["healthCheckNodePort"] = json!(next_port(net, &mut ports)?),
            hc if !mine.contains(&hc) => {
                take_port(&name, "spec.healthCheckNodePort", hc, net, &mut ports)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Endpoints' [`Strategy`].
pub(crate) struct Endpoints;

impl Strategy for Endpoints {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*ENDPOINTS_TYPED.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        rules::default_endpoints(obj);
        Ok(())
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        rules::endpoints_rules(new, old)
    }

    fn update_revalidates_metadata(&self) -> bool {
        // ValidateEndpointsUpdate: ValidateObjectMetaUpdate, then ValidateEndpoints' own
        // ValidateObjectMeta.
        true
    }

    fn creates_on_update(&self) -> bool {
        true
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&ENDPOINTS_TYPED.apply)
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        vec![
            Column::name(),
            Column::new(
                "Endpoints",
                "string",
                0,
                Box::new(|o, _| json!(format_endpoints(o))),
            )
            .described(&description(ENDPOINTS, "subsets")),
            Column::age(),
        ]
    }
}

/// `formatEndpoints`: the first three `ip:port`s, and how many more.
fn format_endpoints(o: &Value) -> String {
    let subsets = o["subsets"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if subsets.is_empty() {
        return "<none>".into();
    }
    let mut list = Vec::new();
    let mut more = false;
    let mut count = 0;
    for ss in subsets {
        let addresses = ss["addresses"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let ports = ss["ports"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let ip = |a: &Value| a["ip"].as_str().unwrap_or_default().to_owned();
        if ports.is_empty() {
            count += addresses.len();
            for a in addresses {
                if list.len() == 3 {
                    more = true;
                    break;
                }
                list.push(ip(a));
            }
            continue;
        }
        for p in ports {
            count += addresses.len();
            for a in addresses {
                if list.len() == 3 {
                    more = true;
                    break;
                }
                let host = ip(a);
                let port = p["port"].as_i64().unwrap_or(0);
                if host.contains(':') {
                    list.push(format!("[{host}]:{port}"));
                } else {
                    list.push(format!("{host}:{port}"));
                }
            }
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - 3)
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(ns: &str, name: &str, spec: Value) -> Value {
        json!({"metadata": {"namespace": ns, "name": name}, "spec": spec})
    }

    fn created(store: &Store, net: &ServiceNetwork, spec: Value) -> Result<Value, ApiError> {
        let mut obj = svc("default", "s", spec);
        rules::default_service(&mut obj);
        begin_create(store, net, &mut obj).map(|()| obj["spec"].clone())
    }

    #[test]
    fn networks_parse_to_their_network_address() {
        let net = ServiceNetwork::parse("10.96.7.9/12", 30000..=32767).unwrap();
        assert_eq!(net.network, Ipv4Addr::new(10, 96, 0, 0));
        assert_eq!(
            net.bounds(),
            (
                u32::from(Ipv4Addr::new(10, 96, 0, 1)),
                u32::from(Ipv4Addr::new(10, 111, 255, 254))
            )
        );
        assert!(ServiceNetwork::parse("fd00::/108", 30000..=32767).is_err());
        assert!(ServiceNetwork::parse("10.0.0.0/31", 30000..=32767).is_err());
    }

    #[test]
    fn addresses_and_ports_are_the_lowest_free_skipping_the_kubernetes_service() {
        let mut store = Store::new(100);
        let net = ServiceNetwork::default();
        let spec = created(
            &store,
            &net,
            json!({"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}),
        )
        .unwrap();
        assert_eq!(spec["clusterIPs"], json!(["10.0.0.2"]));
        assert_eq!(spec["ports"][0]["nodePort"], 30000);
        assert_eq!(spec["ports"][1]["nodePort"], 30001);
        store.put(&services_key(), svc("default", "a", spec));
        let next = created(
            &store,
            &net,
            json!({"type": "NodePort", "ports": [{"port": 80}]}),
        )
        .unwrap();
        assert_eq!(next["clusterIP"], "10.0.0.3");
        assert_eq!(next["ports"][0]["nodePort"], 30002);
        store.remove(&services_key(), "default", "a");
        let again = created(&store, &net, json!({"ports": [{"port": 80}]})).unwrap();
        assert_eq!(again["clusterIP"], "10.0.0.2");
    }

    #[test]
    fn headless_and_external_name_services_get_no_address() {
        let store = Store::new(100);
        let net = ServiceNetwork::default();
        let headless = created(
            &store,
            &net,
            json!({"clusterIP": "None", "ports": [{"port": 80}]}),
        )
        .unwrap();
        assert_eq!(headless["clusterIPs"], json!(["None"]));
        assert_eq!(headless["ipFamilyPolicy"], "RequireDualStack");
        assert_eq!(headless["ipFamilies"], json!(["IPv4", "IPv6"]));
        let external = created(
            &store,
            &net,
            json!({"type": "ExternalName", "externalName": "x.example.com"}),
        )
        .unwrap();
        assert!(external.get("clusterIP").is_none() && external.get("ipFamilies").is_none());
    }

    #[test]
    fn a_local_load_balancer_gets_a_health_check_node_port() {
        let store = Store::new(100);
        let net = ServiceNetwork::default();
        let lb = created(&store, &net, json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [{"port": 80}]})).unwrap();
        assert_eq!(lb["ports"][0]["nodePort"], 30000);
        assert_eq!(lb["healthCheckNodePort"], 30001);
        let none = created(&store, &net, json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false, "ports": [{"port": 80}]})).unwrap();
        assert!(none["ports"][0].get("nodePort").is_none());
    }

    #[test]
    fn endpoints_columns_show_three_addresses_and_how_many_more() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "10.1.0.1"}, {"ip": "10.1.0.2"}, {"ip": "fd00::3"}, {"ip": "10.1.0.4"}],
                                     "ports": [{"port": 80}]}]});
        assert_eq!(
            format_endpoints(&ep),
            "10.1.0.1:80,10.1.0.2:80,[fd00::3]:80 + 1 more..."
        );
        assert_eq!(format_endpoints(&json!({})), "<none>");
    }
}
