//! networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies: their defaulting
//! (`pkg/apis/networking/v1/defaults.go`) and rules (`pkg/apis/networking/validation/
//! validation.go`), with upstream's messages.
//!
//! An Ingress has no defaults (a path's `pathType` is required); a NetworkPolicy's ports
//! default to TCP and its `policyTypes` to `Ingress` (and `Egress` when it has egress rules);
//! an IngressClass's parameters default to the `Cluster` scope.

use std::net::IpAddr;

use serde_json::{Value, json};

use super::FieldError;
use super::apps::selector_rules;
use super::names::{
    domain_prefixed_path_problems, is_dns1035_label, is_dns1123_subdomain,
    is_valid_path_segment_name, is_wildcard_dns1123_subdomain,
};
use super::pod::{port_name_problems, unsupported};
use super::service::{cidr_rules, parse_ip};

const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
/// `maxLenIngressClassController`.
const MAX_CONTROLLER_LENGTH: usize = 250;
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

fn invalid_all(errs: &mut Vec<FieldError>, path: &str, value: &str, problems: Vec<String>) {
    errs.extend(problems.iter().map(|m| FieldError::invalid(path, value, m)));
}

/// `validation.IsValidPortNum`'s problems.
fn port_number_problems(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![PORT_RANGE.to_owned()]
    }
}

// Defaulting.

/// `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`.
pub(crate) fn default_network_policy(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    for rules in ["ingress", "egress"] {
        let rules = spec.get_mut(rules).and_then(Value::as_array_mut);
        for rule in rules.into_iter().flatten() {
            let ports = rule.get_mut("ports").and_then(Value::as_array_mut);
            for port in ports.into_iter().flatten() {
                if port.is_object() && port["protocol"].is_null() {
                    port["protocol"] = json!("TCP");
                }
            }
        }
    }
    if items(&spec["policyTypes"]).is_empty() {
        let mut types = vec![json!("Ingress")];
        if !items(&spec["egress"]).is_empty() {
            types.push(json!("Egress"));
        }
        spec["policyTypes"] = Value::Array(types);
    }
}

/// `SetDefaults_IngressClass`.
pub(crate) fn default_ingress_class(obj: &mut Value) {
    let parameters = obj.get_mut("spec").and_then(|s| s.get_mut("parameters"));
    if let Some(parameters) = parameters.filter(|p| p.is_object())
        && parameters["scope"].is_null()
    {
        parameters["scope"] = json!("Cluster");
    }
}

// NetworkPolicies.

/// `ValidateNetworkPolicySpec` of a create; of an update, the strategy's
/// `ValidateNetworkPolicy` then `ValidateNetworkPolicyUpdate`: the spec's rules twice, the
/// second time lenient to the CIDRs `old` already held.
pub(crate) fn network_policy_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = policy_spec_rules(&new["spec"], &[]);
    if let Some(old) = old {
        errs.extend(policy_spec_rules(&new["spec"], &policy_cidrs(old)));
    }
    errs
}

/// `ValidateNetworkPolicySpec`, the CIDRs `existing` accepted as they are.
fn policy_spec_rules(spec: &Value, existing: &[String]) -> Vec<FieldError> {
    let mut errs = selector_rules(&spec["podSelector"], "spec.podSelector");
    for (rules, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in items(&spec[rules]).iter().enumerate() {
            let at = format!("spec.{rules}[{i}]");
            for (j, port) in items(&rule["ports"]).iter().enumerate() {
                errs.extend(policy_port_rules(port, &format!("{at}.ports[{j}]")));
            }
            for (j, peer) in items(&rule[peers]).iter().enumerate() {
                errs.extend(peer_rules(peer, &format!("{at}.{peers}[{j}]"), existing));
            }
        }
    }
    let types = items(&spec["policyTypes"]);
    if types.len() > 2 {
        errs.push(FieldError::invalid_value(
            "spec.policyTypes",
            &spec["policyTypes"],
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, policy_type) in types.iter().enumerate() {
        let policy_type = policy_type.as_str().unwrap_or_default();
        if !matches!(policy_type, "Ingress" | "Egress") {
            errs.push(unsupported(
                &format!("spec.policyTypes[{i}]"),
                policy_type,
                &["Ingress", "Egress"],
            ));
        }
    }
    errs
}

/// The CIDRs of a stored policy's ipBlocks, which an update may keep though invalid.
fn policy_cidrs(old: &Value) -> Vec<String> {
    let mut cidrs = Vec::new();
    for (rules, peers) in [("ingress", "from"), ("egress", "to")] {
        for rule in items(&old["spec"][rules]) {
            for peer in items(&rule[peers]) {
                let block = &peer["ipBlock"];
                if block.is_object() {
                    cidrs.push(str_of(block, "cidr").to_owned());
                    cidrs.extend(
                        items(&block["except"])
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned),
                    );
                }
            }
        }
    }
    cidrs
}

/// `ValidateNetworkPolicyPort`.
fn policy_port_rules(port: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(protocol) = port["protocol"].as_str()
        && !matches!(protocol, "TCP" | "UDP" | "SCTP")
    {
        errs.push(unsupported(
            &format!("{path}.protocol"),
            protocol,
            &["TCP", "UDP", "SCTP"],
        ));
    }
    let end_port = &port["endPort"];
    match &port["port"] {
        Value::Number(n) => {
            let number = n.as_i64().unwrap_or_default();
            for m in port_number_problems(number) {
                errs.push(FieldError::invalid_value(
                    &format!("{path}.port"),
                    &json!(number),
                    &m,
                ));
            }
            if let Some(end) = end_port.as_i64() {
                if end < number {
                    errs.push(FieldError::invalid_value(
                        &format!("{path}.endPort"),
                        &json!(number),
                        "must be greater than or equal to `port`",
                    ));
                }
                for m in port_number_problems(end) {
                    errs.push(FieldError::invalid_value(
                        &format!("{path}.endPort"),
                        &json!(end),
                        &m,
                    ));
                }
            }
        }
        Value::String(name) => {
            if !end_port.is_null() {
                errs.push(FieldError::invalid_value(
                    &format!("{path}.endPort"),
                    end_port,
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for m in port_name_problems(name) {
                errs.push(FieldError::invalid(&format!("{path}.port"), name, m));
            }
        }
        _ => {
            if !end_port.is_null() {
                errs.push(FieldError::invalid_value(
                    &format!("{path}.endPort"),
                    end_port,
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// `ValidateNetworkPolicyPeer`.
fn peer_rules(peer: &Value, path: &str, existing: &[String]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut peers = 0;
    for selector in ["podSelector", "namespaceSelector"] {
        if peer[selector].is_object() {
            peers += 1;
            errs.extend(selector_rules(
                &peer[selector],
                &format!("{path}.{selector}"),
            ));
        }
    }
    let has_block = peer["ipBlock"].is_object();
    if has_block {
        peers += 1;
        errs.extend(ip_block_rules(
            &peer["ipBlock"],
            &format!("{path}.ipBlock"),
            existing,
        ));
    }
    if peers == 0 {
        errs.push(FieldError::required_because(path, "must specify a peer"));
    } else if peers > 1 && has_block {
        errs.push(FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

/// `netutils.ParseCIDRSloppy`: the network's address bits and its prefix length.
fn parse_cidr(text: &str) -> Option<(u128, u32, bool)> {
    let (ip, len) = text.split_once('/')?;
    let len: u32 = len.parse().ok()?;
    match parse_ip(ip)? {
        IpAddr::V4(v4) if len <= 32 => Some((u128::from(u32::from(v4)) << 96, len, true)),
        IpAddr::V6(v6) if len <= 128 => Some((u128::from(v6), len, false)),
        _ => None,
    }
}

/// The top `len` bits of `bits` (an IPv4 address is held in the top 32 bits).
fn masked(bits: u128, len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        bits & (u128::MAX << (128 - len))
    }
}

/// `ValidateIPBlock`: a CIDR, and exceptions strictly inside it.
fn ip_block_rules(block: &Value, path: &str, existing: &[String]) -> Vec<FieldError> {
    let cidr = str_of(block, "cidr");
    if cidr.is_empty() {
        return vec![FieldError::required(&format!("{path}.cidr"))];
    }
    let mut errs = cidr_rules(&format!("{path}.cidr"), cidr, existing);
    let Some((net, net_len, net_v4)) = parse_cidr(cidr) else {
        return errs;
    };
    for (i, except) in items(&block["except"]).iter().enumerate() {
        let except = except.as_str().unwrap_or_default();
        let at = format!("{path}.except[{i}]");
        errs.extend(cidr_rules(&at, except, existing));
        let Some((ex, ex_len, ex_v4)) = parse_cidr(except) else {
            continue;
        };
        let inside = net_v4 == ex_v4 && masked(masked(ex, ex_len), net_len) == masked(net, net_len);
        if !inside || net_len >= ex_len {
            errs.push(FieldError::invalid(
                &at,
                except,
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errs
}

// Ingresses.

/// `ValidateIngressCreate` / `ValidateIngressUpdate` (without the metadata rules): the spec,
/// and on a create the class annotation that must match `ingressClassName`.
pub(crate) fn ingress_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let allow_invalid_secret = old.is_some_and(|old| {
        items(&old["spec"]["tls"])
            .iter()
            .any(|tls| !secret_name_problems(str_of(tls, "secretName")).is_empty())
    });
    let allow_wildcard = old.is_some_and(|old| {
        items(&old["spec"]["rules"]).iter().any(|rule| {
            str_of(rule, "host").contains('*') && !rule_value_rules(rule, "").is_empty()
        })
    });
    let mut errs = ingress_spec_rules(&new["spec"], allow_invalid_secret, allow_wildcard);
    if old.is_none()
        && let Some(annotation) = new["metadata"]["annotations"][INGRESS_CLASS_ANNOTATION].as_str()
        && let Some(class) = new["spec"]["ingressClassName"].as_str()
        && annotation != class
    {
        errs.push(FieldError::invalid(
            &format!("annotations.{INGRESS_CLASS_ANNOTATION}"),
            annotation,
            "must match `ingressClassName` when both are specified",
        ));
    }
    errs
}

/// `WarningsOnCreate` of Ingresses: the deprecated class annotation.
pub(crate) fn ingress_warnings(obj: &Value) -> Vec<String> {
    let annotated = obj["metadata"]["annotations"]
        .get(INGRESS_CLASS_ANNOTATION)
        .is_some();
    if annotated && obj["spec"]["ingressClassName"].is_null() {
        vec![format!(
            "annotation \"{INGRESS_CLASS_ANNOTATION}\" is deprecated, please use 'spec.ingressClassName' instead"
        )]
    } else {
        Vec::new()
    }
}

fn secret_name_problems(name: &str) -> Vec<String> {
    if name.is_empty() {
        Vec::new()
    } else {
        is_dns1123_subdomain(name)
    }
}

/// `ValidateIngressSpec`.
fn ingress_spec_rules(
    spec: &Value,
    allow_invalid_secret: bool,
    allow_wildcard: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = items(&spec["rules"]);
    if rules.is_empty() && spec["defaultBackend"].is_null() {
        // `spec.Rules` rendered as JSON: an empty list as given, null when absent.
        let rendered = if spec["rules"].is_array() {
            "[]"
        } else {
            "null"
        };
        errs.push(FieldError::invalid_rendered(
            "spec",
            rendered,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if spec["defaultBackend"].is_object() {
        errs.extend(backend_rules(
            &spec["defaultBackend"],
            "spec.defaultBackend",
        ));
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        let host = str_of(rule, "host");
        let mut wildcard = false;
        if !host.is_empty() {
            if parse_ip(host).is_some() {
                errs.push(FieldError::invalid(
                    &format!("{at}.host"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            if host.contains('*') {
                invalid_all(
                    &mut errs,
                    &format!("{at}.host"),
                    host,
                    is_wildcard_dns1123_subdomain(host),
                );
                wildcard = true;
            } else {
                invalid_all(
                    &mut errs,
                    &format!("{at}.host"),
                    host,
                    is_dns1123_subdomain(host),
                );
            }
        }
        if !wildcard || !allow_wildcard {
            errs.extend(rule_value_rules(rule, &at));
        }
    }
    for (i, tls) in items(&spec["tls"]).iter().enumerate() {
        for (j, host) in items(&tls["hosts"]).iter().enumerate() {
            let host = host.as_str().unwrap_or_default();
            let at = format!("spec.tls[{i}].hosts[{j}]");
            let problems = if host.contains('*') {
                is_wildcard_dns1123_subdomain(host)
            } else {
                is_dns1123_subdomain(host)
            };
            invalid_all(&mut errs, &at, host, problems);
        }
        if !allow_invalid_secret {
            let secret = str_of(tls, "secretName");
            invalid_all(
                &mut errs,
                &format!("spec.tls[{i}].secretName"),
                secret,
                secret_name_problems(secret),
            );
        }
    }
    if let Some(class) = spec["ingressClassName"].as_str() {
        invalid_all(
            &mut errs,
            "spec.ingressClassName",
            class,
            is_dns1123_subdomain(class),
        );
    }
    errs
}

/// `validateIngressRuleValue`: a rule's HTTP paths.
fn rule_value_rules(rule: &Value, at: &str) -> Vec<FieldError> {
    let http = &rule["http"];
    if !http.is_object() {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let paths = items(&http["paths"]);
    if paths.is_empty() {
        errs.push(FieldError::required(&format!("{at}.http.paths")));
    }
    for (i, path) in paths.iter().enumerate() {
        errs.extend(http_path_rules(path, &format!("{at}.http.paths[{i}]")));
    }
    errs
}

/// `validateHTTPIngressPath`.
fn http_path_rules(path: &Value, at: &str) -> Vec<FieldError> {
    let Some(path_type) = path["pathType"].as_str() else {
        return vec![FieldError::required_because(
            &format!("{at}.pathType"),
            "pathType must be specified",
        )];
    };
    let mut errs = Vec::new();
    let value = str_of(path, "path");
    let path_at = format!("{at}.path");
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    &path_at,
                    value,
                    "must be an absolute path",
                ));
            }
            if !value.is_empty() {
                for sequence in ["//", "/./", "/../", "%2f", "%2F"] {
                    if value.contains(sequence) {
                        errs.push(FieldError::invalid(
                            &path_at,
                            value,
                            &format!("must not contain '{sequence}'"),
                        ));
                    }
                }
                for suffix in ["/..", "/."] {
                    if value.ends_with(suffix) {
                        errs.push(FieldError::invalid(
                            &path_at,
                            value,
                            &format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    &path_at,
                    value,
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(unsupported(
            &format!("{at}.pathType"),
            other,
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    errs.extend(backend_rules(&path["backend"], &format!("{at}.backend")));
    errs
}

/// `validateIngressBackend`: a service (name and port name xor number) or a resource.
fn backend_rules(backend: &Value, at: &str) -> Vec<FieldError> {
    let resource = &backend["resource"];
    let service = &backend["service"];
    let mut errs = Vec::new();
    match (resource.is_object(), service.is_object()) {
        (true, true) => {
            errs.push(FieldError::invalid(
                at,
                "",
                "cannot set both resource and service backends",
            ));
        }
        (true, false) => errs.extend(typed_reference_rules(resource, &format!("{at}.resource"))),
        (false, true) => {
            let name = str_of(service, "name");
            if name.is_empty() {
                errs.push(FieldError::required(&format!("{at}.service.name")));
            } else {
                invalid_all(
                    &mut errs,
                    &format!("{at}.service.name"),
                    name,
                    is_dns1035_label(name),
                );
            }
            let port_name = str_of(&service["port"], "name");
            let number = service["port"]["number"].as_i64().unwrap_or(0);
            match (port_name.is_empty(), number == 0) {
                (false, false) => errs.push(FieldError::invalid(
                    at,
                    "",
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    for m in port_name_problems(port_name) {
                        errs.push(FieldError::invalid(
                            &format!("{at}.service.port.name"),
                            port_name,
                            m,
                        ));
                    }
                }
                (true, false) => {
                    for m in port_number_problems(number) {
                        errs.push(FieldError::invalid_value(
                            &format!("{at}.service.port.number"),
                            &json!(number),
                            &m,
                        ));
                    }
                }
                (true, true) => errs.push(FieldError::required_because(
                    at,
                    "port name or number is required",
                )),
            }
        }
        (false, false) => errs.push(FieldError::invalid(
            at,
            "",
            "resource or service backend is required",
        )),
    }
    errs
}

/// `validateIngressTypedLocalObjectReference`.
fn typed_reference_rules(reference: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(group) = reference["apiGroup"].as_str() {
        invalid_all(
            &mut errs,
            &format!("{at}.apiGroup"),
            group,
            is_dns1123_subdomain(group),
        );
    }
    for field in ["kind", "name"] {
        let value = str_of(reference, field);
        if value.is_empty() {
            errs.push(FieldError::required(&format!("{at}.{field}")));
        } else {
            invalid_all(
                &mut errs,
                &format!("{at}.{field}"),
                value,
                is_valid_path_segment_name(value),
            );
        }
    }
    errs
}

/// `ValidateIngressStatusUpdate`'s load balancer rules.
pub(crate) fn ingress_status_rules(new: &Value, old: &Value) -> Vec<FieldError> {
    let existing: Vec<String> = items(&old["status"]["loadBalancer"]["ingress"])
        .iter()
        .map(|i| str_of(i, "ip").to_owned())
        .filter(|ip| !ip.is_empty())
        .collect();
    let mut errs = Vec::new();
    for (i, ingress) in items(&new["status"]["loadBalancer"]["ingress"])
        .iter()
        .enumerate()
    {
        let at = format!("status.loadBalancer.ingress[{i}]");
        let ip = str_of(ingress, "ip");
        if !ip.is_empty() && !existing.iter().any(|e| e == ip) && parse_ip(ip).is_none() {
            errs.push(FieldError::invalid(
                &format!("{at}.ip"),
                ip,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ));
        }
        let hostname = str_of(ingress, "hostname");
        if !hostname.is_empty() {
            invalid_all(
                &mut errs,
                &format!("{at}.hostname"),
                hostname,
                is_dns1123_subdomain(hostname),
            );
            if parse_ip(hostname).is_some() {
                errs.push(FieldError::invalid(
                    &format!("{at}.hostname"),
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

// IngressClasses.

/// `ValidateIngressClass` (and `ValidateIngressClassUpdate`'s immutable controller first).
pub(crate) fn ingress_class_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &new["spec"];
    let mut errs = Vec::new();
    if let Some(old) = old
        && old["spec"]["controller"] != spec["controller"]
    {
        let controller = str_of(spec, "controller");
        errs.push(FieldError::invalid(
            "spec.controller",
            controller,
            "field is immutable",
        ));
    }
    let controller = str_of(spec, "controller");
    if controller.len() > MAX_CONTROLLER_LENGTH {
        errs.push(FieldError::too_long(
            "spec.controller",
            MAX_CONTROLLER_LENGTH,
        ));
    }
    if controller.is_empty() {
        errs.push(FieldError::required("spec.controller"));
    } else {
        for (value, m) in domain_prefixed_path_problems(controller) {
            errs.push(FieldError::invalid("spec.controller", &value, &m));
        }
    }
    let parameters = &spec["parameters"];
    if parameters.is_object() {
        errs.extend(parameters_rules(parameters));
    }
    errs
}

/// `validateIngressClassParametersReference`.
fn parameters_rules(parameters: &Value) -> Vec<FieldError> {
    let at = "spec.parameters";
    let mut errs = typed_reference_rules(parameters, at);
    let Some(scope) = parameters["scope"].as_str() else {
        errs.push(FieldError::required(&format!("{at}.scope")));
        return errs;
    };
    match scope {
        "Namespace" => match parameters["namespace"].as_str() {
            None => errs.push(FieldError::required_because(
                &format!("{at}.namespace"),
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(namespace) => invalid_all(
                &mut errs,
                &format!("{at}.namespace"),
                namespace,
                super::names::is_dns1123_label(namespace),
            ),
        },
        "Cluster" => {
            if !parameters["namespace"].is_null() {
                errs.push(FieldError::forbidden(
                    &format!("{at}.namespace"),
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        other => errs.push(unsupported(
            &format!("{at}.scope"),
            other,
            &["Cluster", "Namespace"],
        )),
    }
    errs
}
