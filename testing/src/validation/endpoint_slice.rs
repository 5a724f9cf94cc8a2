//! discovery.k8s.io/v1 EndpointSlices' defaulting and rules, ported from
//! `pkg/apis/discovery/v1/defaults.go` (`SetDefaults_EndpointPort`) and
//! `pkg/apis/discovery/validation/validation.go` (`ValidateEndpointSliceCreate`,
//! `ValidateEndpointSliceUpdate`).

use serde_json::{Value, json};

use super::FieldError;
use super::names::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value,
};
use super::pod::unsupported;
use super::service::{endpoint_ip_rules, ip_rules, parse_ip};

/// `supportedAddressTypes`, sorted.
const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
/// `supportedPortProtocols`, sorted.
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
/// The limits of a slice (`maxAddresses`, `maxPorts`, `maxEndpoints`, `maxZoneHints`,
/// `maxNodeHints`).
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_ENDPOINTS: usize = 1000;
const MAX_ZONE_HINTS: usize = 8;
const MAX_NODE_HINTS: usize = 8;

fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn too_many(path: &str, actual: usize, max: usize) -> FieldError {
    FieldError::too_many(path, actual as u64, max as u64)
}

/// `SetObjectDefaults_EndpointSlice`: each port's name `""` and protocol `TCP`; and the
/// endpoints' `deprecatedTopology`, which the strategy drops from every v1 write before its
/// validation (`dropTopologyOnV1`), removed.
pub(crate) fn default_endpoint_slice(obj: &mut Value) {
    if let Some(endpoints) = obj.get_mut("endpoints").and_then(Value::as_array_mut) {
        for endpoint in endpoints.iter_mut().filter_map(Value::as_object_mut) {
            endpoint.remove("deprecatedTopology");
        }
    }
    if let Some(ports) = obj.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter(|p| p.is_object()) {
            if port["name"].is_null() {
                port["name"] = json!("");
            }
            if port["protocol"].is_null() {
                port["protocol"] = json!("TCP");
            }
        }
    }
}

/// `ValidateEndpointSliceCreate` and, with `old`, `ValidateEndpointSliceUpdate` (the metadata's
/// rules are the registry's): the address type, the ports, the endpoints (whose problems an
/// update that leaves them unchanged keeps), the address type immutable.
pub(crate) fn endpoint_slice_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let address_type = new["addressType"].as_str().unwrap_or_default();
    let mut errs = Vec::new();
    if address_type.is_empty() {
        errs.push(FieldError::required("addressType"));
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errs.push(unsupported("addressType", address_type, ADDRESS_TYPES));
    }
    errs.extend(ports_rules(&new["ports"]));
    let endpoints = endpoints_rules(&new["endpoints"], address_type);
    if old.is_none_or(|o| o["endpoints"] != new["endpoints"]) {
        errs.extend(endpoints);
    }
    if let Some(old) = old
        && old["addressType"] != new["addressType"]
    {
        errs.push(FieldError::invalid(
            "addressType",
            address_type,
            "field is immutable",
        ));
    }
    errs
}

/// `validatePorts`.
fn ports_rules(ports: &Value) -> Vec<FieldError> {
    let ports = items(ports);
    if ports.len() > MAX_PORTS {
        return vec![too_many("ports", ports.len(), MAX_PORTS)];
    }
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("ports[{i}]");
        let name = port["name"].as_str().unwrap_or_default();
        if !name.is_empty() {
            for m in is_dns1123_label(name) {
                errs.push(FieldError::invalid(&format!("{at}.name"), name, &m));
            }
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(&format!("{at}.name"), &json!(name)));
        } else {
            names.push(name);
        }
        match port["protocol"].as_str() {
            None => errs.push(FieldError::required(&format!("{at}.protocol"))),
            Some(p) if !PROTOCOLS.contains(&p) => {
                errs.push(unsupported(&format!("{at}.protocol"), p, PROTOCOLS));
            }
            Some(_) => {}
        }
        if let Some(app) = port["appProtocol"].as_str() {
            for m in is_qualified_name(app) {
                errs.push(FieldError::invalid(&format!("{at}.appProtocol"), app, &m));
            }
        }
    }
    errs
}

/// One address's rules for the slice's `address_type`, at `path` (the address's own path) of
/// the list at `list_path`.
fn address_rules(
    address_type: &str,
    address: &str,
    list_path: &str,
    path: &str,
) -> Vec<FieldError> {
    match address_type {
        "IPv4" | "IPv6" => {
            let errs = ip_rules(path, address, &[]);
            if !errs.is_empty() {
                return errs;
            }
            let mut errs = Vec::new();
            let family_ok = match parse_ip(address) {
                Some(ip) => ip.is_ipv4() == (address_type == "IPv4"),
                None => false,
            };
            if !family_ok {
                let detail = if address_type == "IPv4" {
                    "must be an IPv4 address"
                } else {
                    "must be an IPv6 address"
                };
                errs.push(FieldError::invalid(list_path, address, detail));
            }
            errs.extend(endpoint_ip_rules(path, address));
            errs
        }
        "FQDN" => fqdn_rules(address, path),
        _ => Vec::new(),
    }
}

/// apimachinery `IsFullyQualifiedDomainName`.
fn fqdn_rules(name: &str, path: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path)];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let errs = is_dns1123_subdomain(name);
    if !errs.is_empty() {
        return vec![FieldError::invalid(path, name, &errs.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            path,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let errs = is_dns1123_label(label);
        if !errs.is_empty() {
            return vec![FieldError::invalid(path, label, &errs.join(","))];
        }
    }
    Vec::new()
}

/// `validateEndpoints`.
fn endpoints_rules(endpoints: &Value, address_type: &str) -> Vec<FieldError> {
    let endpoints = items(endpoints);
    if endpoints.len() > MAX_ENDPOINTS {
        return vec![too_many("endpoints", endpoints.len(), MAX_ENDPOINTS)];
    }
    let mut errs = Vec::new();
    for (i, endpoint) in endpoints.iter().enumerate() {
        let at = format!("endpoints[{i}]");
        let addresses_path = format!("{at}.addresses");
        let addresses = items(&endpoint["addresses"]);
        if addresses.is_empty() {
            errs.push(FieldError::required_because(
                &addresses_path,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            errs.push(too_many(&addresses_path, addresses.len(), MAX_ADDRESSES));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or_default();
            errs.extend(address_rules(
                address_type,
                address,
                &addresses_path,
                &format!("{addresses_path}[{j}]"),
            ));
        }
        if let Some(node) = endpoint["nodeName"].as_str() {
            for m in is_dns1123_subdomain(node) {
                errs.push(FieldError::invalid(&format!("{at}.nodeName"), node, &m));
            }
        }
        if let Some(host) = endpoint["hostname"].as_str() {
            for m in is_dns1123_label(host) {
                errs.push(FieldError::invalid(&format!("{at}.hostname"), host, &m));
            }
        }
        if endpoint["hints"].is_object() {
            errs.extend(hints_rules(&endpoint["hints"], &format!("{at}.hints")));
        }
    }
    errs
}

/// `validateHints`.
fn hints_rules(hints: &Value, path: &str) -> Vec<FieldError> {
    let zones = items(&hints["forZones"]);
    let zones_path = format!("{path}.forZones");
    if zones.len() > MAX_ZONE_HINTS {
        return vec![too_many(&zones_path, zones.len(), MAX_ZONE_HINTS)];
    }
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, zone) in zones.iter().enumerate() {
        let at = format!("{zones_path}[{i}].name");
        let name = zone["name"].as_str().unwrap_or_default();
        if seen.contains(&name) {
            errs.push(FieldError::duplicate(&at, &json!(name)));
        } else {
            seen.push(name);
        }
        for m in is_valid_label_value(name) {
            errs.push(FieldError::invalid(&at, name, &m));
        }
    }
    let nodes = items(&hints["forNodes"]);
    let nodes_path = format!("{path}.forNodes");
    if nodes.len() > MAX_NODE_HINTS {
        errs.push(too_many(&nodes_path, nodes.len(), MAX_NODE_HINTS));
        return errs;
    }
    let mut seen: Vec<&str> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        let at = format!("{nodes_path}[{i}].name");
        let name = node["name"].as_str().unwrap_or_default();
        if seen.contains(&name) {
            errs.push(FieldError::duplicate(&at, &json!(name)));
        } else {
            seen.push(name);
        }
        for m in is_dns1123_subdomain(name) {
            errs.push(FieldError::invalid(&at, name, &m));
        }
    }
    errs
}

/// `warnOnDeprecatedAddressType` of a create.
pub(crate) fn address_type_warning(obj: &Value) -> Option<String> {
    (obj["addressType"] == "FQDN")
        .then(|| "spec.addressType: FQDN endpoints are deprecated".to_owned())
}
