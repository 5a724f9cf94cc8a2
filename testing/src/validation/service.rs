//! core/v1 Services and Endpoints: `SetDefaults_Service` and `SetDefaults_Endpoints`
//! (`pkg/apis/core/v1/defaults.go`), and `ValidateServiceCreate`, `ValidateServiceUpdate`,
//! `ValidateServiceClusterIPsRelatedFields` and `ValidateEndpoints`
//! (`pkg/apis/core/validation/validation.go`), with upstream's messages.

use super::pod::port_name_problems;
use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::{Value, json};

use super::FieldError;
use super::names::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value,
};
use super::pod::unsupported;

const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

/// `netutils.ParseIPSloppy`.
pub(crate) fn parse_ip(text: &str) -> Option<IpAddr> {
    text.parse().ok()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn strings(list: &Value) -> Vec<String> {
    items(list)
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// `apiservice.ExternallyAccessible`.
pub(crate) fn externally_accessible(spec: &Value) -> bool {
    let t = str_of(spec, "type");
    t == "LoadBalancer"
        || t == "NodePort"
        || (t == "ClusterIP" && !items(&spec["externalIPs"]).is_empty())
}

/// `apiservice.NeedsHealthCheck`.
pub(crate) fn needs_health_check(spec: &Value) -> bool {
    str_of(spec, "type") == "LoadBalancer" && str_of(spec, "externalTrafficPolicy") == "Local"
}

/// `isHeadlessService`.
pub(crate) fn is_headless(spec: &Value) -> bool {
    let ips = strings(&spec["clusterIPs"]);
    ips.len() == 1 && ips[0] == "None"
}

/// `SetObjectDefaults_Service`, and the status the encoder always writes.
pub(crate) fn default_service(obj: &mut Value) {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    let spec = &mut obj["spec"];
    if str_of(spec, "sessionAffinity").is_empty() {
        spec["sessionAffinity"] = json!("None");
    }
    if spec["sessionAffinity"] == "None"
        && let Some(m) = spec.as_object_mut()
    {
        m.remove("sessionAffinityConfig");
    }
    if spec["sessionAffinity"] == "ClientIP"
        && spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"].is_null()
    {
        spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
    }
    if str_of(spec, "type").is_empty() {
        spec["type"] = json!("ClusterIP");
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter(|p| p.is_object()) {
            if str_of(p, "protocol").is_empty() {
                p["protocol"] = json!("TCP");
            }
            let target = &p["targetPort"];
            if target.is_null() || *target == json!(0) || *target == json!("") {
                p["targetPort"] = json!(p["port"].as_i64().unwrap_or(0));
            }
        }
    }
    if externally_accessible(spec) && str_of(spec, "externalTrafficPolicy").is_empty() {
        spec["externalTrafficPolicy"] = json!("Cluster");
    }
    let t = str_of(spec, "type").to_owned();
    if spec["internalTrafficPolicy"].is_null()
        && matches!(t.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP")
    {
        spec["internalTrafficPolicy"] = json!("Cluster");
    }
    if t == "LoadBalancer" && spec["allocateLoadBalancerNodePorts"].is_null() {
        spec["allocateLoadBalancerNodePorts"] = json!(true);
    }
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    if !obj["status"]["loadBalancer"].is_object() {
        obj["status"]["loadBalancer"] = json!({});
    }
}

/// `SetDefaults_Service`'s part on the status: a LoadBalancer's ingress IPs' `ipMode` (the
/// decoding of a status write, before the status strategy takes the stored spec back).
pub(crate) fn default_ip_modes(obj: &mut Value) {
    if obj["spec"]["type"] != "LoadBalancer" {
        return;
    }
    if let Some(ingress) = obj
        .pointer_mut("/status/loadBalancer/ingress")
        .and_then(Value::as_array_mut)
    {
        for ing in ingress {
            if !str_of(ing, "ip").is_empty() && ing["ipMode"].is_null() {
                ing["ipMode"] = json!("VIP");
            }
        }
    }
}

/// `IsValidIPForLegacyField` (not strict).
pub(crate) fn ip_rules(path: &str, value: &str, old: &[String]) -> Vec<FieldError> {
    if old.iter().any(|o| o == value) || parse_ip(value).is_some() {
        return Vec::new();
    }
    vec![FieldError::invalid(
        path,
        value,
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
    )]
}

/// `IsValidCIDRForLegacyField` (not strict): `netutils.ParseCIDRSloppy`.
pub(crate) fn cidr_rules(path: &str, value: &str, old: &[String]) -> Vec<FieldError> {
    if old.iter().any(|o| o == value) {
        return Vec::new();
    }
    let valid = value.split_once('/').is_some_and(|(ip, len)| {
        let max = match parse_ip(ip) {
            Some(IpAddr::V4(_)) => 32,
            Some(IpAddr::V6(_)) => 128,
            None => return false,
        };
        !len.is_empty()
            && len.bytes().all(|b| b.is_ascii_digit())
            && len.parse::<u32>().is_ok_and(|n| n <= max)
    });
    if valid {
        return Vec::new();
    }
    vec![FieldError::invalid(
        path,
        value,
        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
    )]
}

/// `ValidateEndpointIP`.
pub(crate) fn endpoint_ip_rules(path: &str, value: &str) -> Vec<FieldError> {
    let Some(ip) = parse_ip(value) else {
        return vec![FieldError::invalid(
            path,
            value,
            "must be a valid IP address",
        )];
    };
    let mut errs = Vec::new();
    if ip.is_unspecified() {
        errs.push(FieldError::invalid(
            path,
            value,
            &format!("may not be unspecified ({value})"),
        ));
    }
    if ip.is_loopback() {
        errs.push(FieldError::invalid(
            path,
            value,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    let link_local = match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    };
    if link_local {
        errs.push(FieldError::invalid(
            path,
            value,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    let link_local_multicast = match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.is_multicast() && (v6.segments()[0] & 0x000f) == 2,
    };
    if link_local_multicast {
        errs.push(FieldError::invalid(
            path,
            value,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errs
}

fn label_value_errors(path: &str, value: &str, msgs: Vec<String>) -> Vec<FieldError> {
    msgs.into_iter()
        .map(|m| FieldError::invalid(path, value, &m))
        .collect()
}

/// `ValidateServiceClusterIPsRelatedFields`.
pub(crate) fn cluster_ips_related_rules(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    if str_of(spec, "type") == "ExternalName" {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let cluster_ip = str_of(spec, "clusterIP");
    let ips = strings(&spec["clusterIPs"]);
    let ips_value = if spec["clusterIPs"].is_array() {
        spec["clusterIPs"].clone()
    } else {
        Value::Null
    };
    if !cluster_ip.is_empty() {
        if ips.is_empty() {
            errs.push(FieldError::required("spec.clusterIPs"));
        } else if ips[0] != cluster_ip {
            errs.push(FieldError::invalid_value(
                "spec.clusterIPs",
                &ips_value,
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errs.push(FieldError::invalid_value(
            "spec.clusterIPs",
            &ips_value,
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let mut seen = BTreeSet::new();
    for (i, family) in strings(&spec["ipFamilies"]).iter().enumerate() {
        let at = format!("spec.ipFamilies[{i}]");
        if family != "IPv4" && family != "IPv6" {
            errs.push(unsupported(&at, family, &["IPv4", "IPv6"]));
        }
        if !seen.insert(family.clone()) {
            errs.push(FieldError::duplicate(&at, &json!(family)));
        }
    }
    if let Some(policy) = spec["ipFamilyPolicy"].as_str()
        && !["PreferDualStack", "RequireDualStack", "SingleStack"].contains(&policy)
    {
        errs.push(unsupported(
            "spec.ipFamilyPolicy",
            policy,
            &["PreferDualStack", "RequireDualStack", "SingleStack"],
        ));
    }
    let existing = old.map(|o| strings(&o["clusterIPs"])).unwrap_or_default();
    let mut invalid = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == "None" {
            if ips.len() > 1 {
                invalid = true;
                errs.push(FieldError::invalid_value(
                    "spec.clusterIPs",
                    &ips_value,
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let found = ip_rules(&format!("spec.clusterIPs[{i}]"), ip, &existing);
        invalid |= !found.is_empty();
        errs.extend(found);
    }
    if ips.len() > 2 {
        errs.push(FieldError::invalid_value(
            "spec.clusterIPs",
            &ips_value,
            "may only hold up to 2 values",
        ));
    }
    if invalid {
        return errs;
    }
    if ips.len() > 1 {
        let v6: Vec<bool> = ips
            .iter()
            .map(|ip| matches!(parse_ip(ip), Some(IpAddr::V6(_))))
            .collect();
        let dual = ips.len() == 2 && v6[0] != v6[1];
        if !dual {
            errs.push(FieldError::invalid_value(
                "spec.clusterIPs",
                &ips_value,
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    let families = strings(&spec["ipFamilies"]);
    if !is_headless(spec) && !ips.is_empty() && !families.is_empty() {
        for (i, ip) in ips.iter().enumerate() {
            let Some(family) = families.get(i) else { break };
            let is_v6 = matches!(parse_ip(ip), Some(IpAddr::V6(_)));
            if family == "IPv4" && is_v6 {
                errs.push(FieldError::invalid(
                    &format!("spec.clusterIPs[{i}]"),
                    ip,
                    &format!("expected an IPv4 value as indicated by `ipFamilies[{i}]`"),
                ));
            }
            if family == "IPv6" && !is_v6 {
                errs.push(FieldError::invalid(
                    &format!("spec.clusterIPs[{i}]"),
                    ip,
                    &format!("expected an IPv6 value as indicated by `ipFamilies[{i}]`"),
                ));
            }
        }
    }
    errs
}

/// `validateServicePort`.
fn port_rules(
    p: &Value,
    require_name: bool,
    names: &mut BTreeSet<String>,
    at: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(p, "name");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(&format!("{at}.name")));
    } else if !name.is_empty() {
        errs.extend(label_value_errors(
            &format!("{at}.name"),
            name,
            is_dns1123_label(name),
        ));
        if !names.insert(name.to_owned()) {
            errs.push(FieldError::duplicate(&format!("{at}.name"), &json!(name)));
        }
    }
    let port = p["port"].as_i64().unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid_value(
            &format!("{at}.port"),
            &json!(port),
            PORT_RANGE,
        ));
    }
    match str_of(p, "protocol") {
        "TCP" | "UDP" | "SCTP" => {}
        "" => errs.push(FieldError::required(&format!("{at}.protocol"))),
        other => errs.push(unsupported(&format!("{at}.protocol"), other, PROTOCOLS)),
    }
    let target = &p["targetPort"];
    if let Some(n) = target.as_i64() {
        if !(1..=65535).contains(&n) {
            errs.push(FieldError::invalid_value(
                &format!("{at}.targetPort"),
                &json!(n),
                PORT_RANGE,
            ));
        }
    } else if let Some(s) = target.as_str() {
        for m in port_name_problems(s) {
            errs.push(FieldError::invalid(&format!("{at}.targetPort"), s, m));
        }
    }
    if let Some(app) = p["appProtocol"].as_str() {
        errs.extend(label_value_errors(
            &format!("{at}.appProtocol"),
            app,
            is_qualified_name(app),
        ));
    }
    errs
}

/// `validateService` (and, on an update, `ValidateServiceUpdate`'s own rules before it).
pub(crate) fn service_rules(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &obj["spec"];
    let mut errs = Vec::new();
    if let Some(old) = old {
        errs.extend(update_rules(spec, &old["spec"]));
    }
    let t = str_of(spec, "type");
    let headless = is_headless(spec);
    let ports = items(&spec["ports"]);
    if ports.is_empty() && !headless && t != "ExternalName" {
        errs.push(FieldError::required("spec.ports"));
    }
    let ips = strings(&spec["clusterIPs"]);
    match t {
        "LoadBalancer" | "NodePort" if headless => errs.push(FieldError::invalid(
            "spec.clusterIPs[0]",
            &ips[0],
            &format!("may not be set to 'None' for {t} services"),
        )),
        "ExternalName" => {
            if !ips.is_empty() {
                errs.push(FieldError::forbidden(
                    "spec.clusterIPs",
                    "may not be set for ExternalName services",
                ));
            }
            if !items(&spec["ipFamilies"]).is_empty() {
                errs.push(FieldError::forbidden(
                    "spec.ipFamilies",
                    "may not be set for ExternalName services",
                ));
            }
            if !spec["ipFamilyPolicy"].is_null() {
                errs.push(FieldError::forbidden(
                    "spec.ipFamilyPolicy",
                    "may not be set for ExternalName services",
                ));
            }
            let name = str_of(spec, "externalName");
            let cname = name.strip_suffix('.').unwrap_or(name);
            if cname.is_empty() {
                errs.push(FieldError::required("spec.externalName"));
            } else {
                errs.extend(label_value_errors(
                    "spec.externalName",
                    cname,
                    is_dns1123_subdomain(cname),
                ));
            }
        }
        _ => {}
    }
    let mut names = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        errs.extend(port_rules(
            p,
            ports.len() > 1,
            &mut names,
            &format!("spec.ports[{i}]"),
        ));
    }
    if let Some(selector) = spec["selector"].as_object() {
        for (key, value) in selector {
            for m in is_qualified_name(key) {
                errs.push(FieldError::invalid("spec.selector", key, &m));
            }
            let value = value.as_str().unwrap_or_default();
            for m in is_valid_label_value(value) {
                errs.push(FieldError::invalid("spec.selector", value, &m));
            }
        }
    }
    match str_of(spec, "sessionAffinity") {
        "" => errs.push(FieldError::required("spec.sessionAffinity")),
        "ClientIP" => {
            let config = &spec["sessionAffinityConfig"];
            let why = "when session affinity type is ClientIP";
            if config.is_null() {
                errs.push(FieldError::required_because(
                    "spec.sessionAffinityConfig",
                    why,
                ));
            } else if config["clientIP"].is_null() {
                errs.push(FieldError::required_because(
                    "spec.sessionAffinityConfig.clientIP",
                    why,
                ));
            } else if let Some(timeout) = config["clientIP"]["timeoutSeconds"].as_i64()
                && !(1..=86400).contains(&timeout)
            {
                errs.push(FieldError::invalid_value(
                    "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                    &json!(timeout),
                    "must be greater than 0 and less than 86400",
                ));
            }
        }
        "None" => {
            if !spec["sessionAffinityConfig"].is_null() {
                errs.push(FieldError::forbidden(
                    "spec.sessionAffinityConfig",
                    "must not be set when session affinity is None",
                ));
            }
        }
        other => errs.push(unsupported(
            "spec.sessionAffinity",
            other,
            &["ClientIP", "None"],
        )),
    }
    errs.extend(cluster_ips_related_rules(spec, old.map(|o| &o["spec"])));
    let old_external = old
        .map(|o| strings(&o["spec"]["externalIPs"]))
        .unwrap_or_default();
    for (i, ip) in strings(&spec["externalIPs"]).iter().enumerate() {
        let at = format!("spec.externalIPs[{i}]");
        let found = ip_rules(&at, ip, &old_external);
        if found.is_empty() {
            errs.extend(endpoint_ip_rules(&at, ip));
        } else {
            errs.extend(found);
        }
    }
    const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if t.is_empty() {
        errs.push(FieldError::required("spec.type"));
    } else if !TYPES.contains(&t) {
        errs.push(unsupported("spec.type", t, TYPES));
    }
    if t == "ClusterIP" {
        for (i, p) in ports.iter().enumerate() {
            if p["nodePort"].as_i64().unwrap_or(0) != 0 {
                errs.push(FieldError::forbidden(
                    &format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let np = p["nodePort"].as_i64().unwrap_or(0);
        if np == 0 {
            continue;
        }
        if !node_ports.insert((str_of(p, "protocol").to_owned(), np)) {
            errs.push(FieldError::duplicate(
                &format!("spec.ports[{i}].nodePort"),
                &json!(np),
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let protocol = str_of(p, "protocol").to_owned();
        let port = p["port"].as_i64().unwrap_or(0);
        if !seen.insert((protocol.clone(), port)) {
            // The internal ServicePort, which has no JSON tags, in its fields' order.
            errs.push(FieldError {
                field: format!("spec.ports[{i}]"),
                reason: "FieldValueDuplicate",
                message: format!(
                    "Duplicate value: {{\"Name\":\"\",\"Protocol\":{},\"AppProtocol\":null,\"Port\":{port},\"TargetPort\":0,\"NodePort\":0}}",
                    json!(protocol)
                ),
            });
        }
    }
    let ranges = strings(&spec["loadBalancerSourceRanges"]);
    let annotation = "service.beta.kubernetes.io/load-balancer-source-ranges";
    if !ranges.is_empty() {
        if t != "LoadBalancer" {
            errs.push(FieldError::forbidden(
                "spec.LoadBalancerSourceRanges",
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
        let existing: Vec<String> = old
            .map(|o| strings(&o["spec"]["loadBalancerSourceRanges"]))
            .unwrap_or_default()
            .iter()
            .map(|r| r.trim().to_owned())
            .collect();
        for (i, value) in ranges.iter().enumerate() {
            errs.extend(cidr_rules(
                &format!("spec.LoadBalancerSourceRanges[{i}]"),
                value.trim(),
                &existing,
            ));
        }
    } else if let Some(value) = obj["metadata"]["annotations"][annotation].as_str() {
        let path = format!("metadata.annotations[{annotation}]");
        if t != "LoadBalancer" {
            errs.push(FieldError::forbidden(
                &path,
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
        let unchanged = old.is_some_and(|o| o["metadata"]["annotations"][annotation] == value);
        let value = value.trim();
        if !unchanged && !value.is_empty() {
            for cidr in value.split(',') {
                errs.extend(cidr_rules(&path, cidr.trim(), &[]));
            }
        }
    }
    if !spec["allocateLoadBalancerNodePorts"].is_null() && t != "LoadBalancer" {
        errs.push(FieldError::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if t == "LoadBalancer" && spec["allocateLoadBalancerNodePorts"].is_null() {
        errs.push(FieldError::required("allocateLoadBalancerNodePorts"));
    }
    errs.extend(load_balancer_class_rules(spec, None));
    // validateServiceExternalTrafficPolicy.
    let etp = str_of(spec, "externalTrafficPolicy");
    if !externally_accessible(spec) {
        if !etp.is_empty() {
            errs.push(FieldError::invalid(
                "spec.externalTrafficPolicy",
                etp,
                "may only be set for externally-accessible services",
            ));
        }
    } else if etp.is_empty() {
        errs.push(FieldError::required("spec.externalTrafficPolicy"));
    } else if etp != "Cluster" && etp != "Local" {
        errs.push(unsupported(
            "spec.externalTrafficPolicy",
            etp,
            &["Cluster", "Local"],
        ));
    }
    let hc = spec["healthCheckNodePort"].as_i64().unwrap_or(0);
    if !needs_health_check(spec) {
        if hc != 0 {
            errs.push(FieldError::invalid_value(
                "spec.healthCheckNodePort",
                &json!(hc),
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if hc == 0 {
        errs.push(FieldError::required("spec.healthCheckNodePort"));
    } else if !(1..=65535).contains(&hc) {
        errs.push(FieldError::invalid_value(
            "spec.healthCheckNodePort",
            &json!(hc),
            PORT_RANGE,
        ));
    }
    // validateServiceInternalTrafficFieldsValue.
    match spec["internalTrafficPolicy"].as_str() {
        None => {
            if matches!(t, "NodePort" | "LoadBalancer" | "ClusterIP") {
                errs.push(FieldError::required("spec.internalTrafficPolicy"));
            }
        }
        Some("Cluster" | "Local") => {}
        Some(other) => errs.push(unsupported(
            "spec.internalTrafficPolicy",
            other,
            &["Cluster", "Local"],
        )),
    }
    if let Some(td) = spec["trafficDistribution"].as_str() {
        const TD: &[&str] = &["PreferClose", "PreferSameZone", "PreferSameNode"];
        if !TD.contains(&td) {
            let supported: Vec<String> = TD.iter().map(|s| (*s).to_owned()).collect();
            errs.push(FieldError::not_supported(
                "spec.trafficDistribution",
                &json!(td),
                &supported,
            ));
        }
    }
    errs
}

/// `validateLoadBalancerClassField`.
fn load_balancer_class_rules(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let is_lb = |s: &Value| str_of(s, "type") == "LoadBalancer";
    if let Some(old) = old
        && is_lb(old)
        && is_lb(spec)
        && old["loadBalancerClass"] != spec["loadBalancerClass"]
    {
        errs.push(FieldError::invalid_value(
            "spec.loadBalancerClass",
            &spec["loadBalancerClass"],
            "may not change once set",
        ));
    }
    if let Some(class) = spec["loadBalancerClass"].as_str() {
        if is_lb(spec) {
            errs.extend(label_value_errors(
                "spec.loadBalancerClass",
                class,
                is_qualified_name(class),
            ));
        } else {
            errs.push(FieldError::forbidden(
                "spec.loadBalancerClass",
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
    }
    errs
}

/// `ValidateServiceUpdate`'s rules before `validateService`: the cluster IPs and IP families
/// (`validateUpgradeDowngrade*`), the load balancer class and the health check node port.
fn update_rules(spec: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let external = |s: &Value| str_of(s, "type") == "ExternalName";
    let ips = strings(&spec["clusterIPs"]);
    let old_ips = strings(&old["clusterIPs"]);
    let ips_value = if spec["clusterIPs"].is_array() {
        spec["clusterIPs"].clone()
    } else {
        Value::Null
    };
    let policy_single = spec["ipFamilyPolicy"] == "SingleStack";
    let both_headless = is_headless(spec) && is_headless(old);
    if !(external(spec) || external(old) || both_headless) {
        if old_ips.len() == ips.len() {
            for (i, ip) in old_ips.iter().enumerate() {
                if *ip != ips[i] {
                    errs.push(FieldError::invalid_value(
                        &format!("spec.clusterIPs[{i}]"),
                        &ips_value,
                        "may not change once set",
                    ));
                }
            }
        } else if old_ips.len() > ips.len() {
            if ips.is_empty() {
                errs.push(FieldError::invalid_value(
                    "spec.clusterIPs[0]",
                    &ips_value,
                    "primary clusterIP can not be unset",
                ));
            }
            if !old_ips.is_empty() && !ips.is_empty() && ips[0] != old_ips[0] {
                errs.push(FieldError::invalid_value(
                    "spec.clusterIPs[0]",
                    &ips_value,
                    "may not change once set",
                ));
            }
            if ips.len() == 1 && !policy_single {
                errs.push(FieldError::invalid_value(
                    "spec.ipFamilyPolicy",
                    &spec["ipFamilyPolicy"],
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                ));
            }
        } else if !old_ips.is_empty() && ips[0] != old_ips[0] {
            errs.push(FieldError::invalid_value(
                "spec.clusterIPs[0]",
                &ips_value,
                "may not change once set",
            ));
        }
    }
    let families = strings(&spec["ipFamilies"]);
    let old_families = strings(&old["ipFamilies"]);
    let families_value = if spec["ipFamilies"].is_array() {
        spec["ipFamilies"].clone()
    } else {
        Value::Null
    };
    if !external(spec)
        && !external(old)
        && is_headless(spec) == is_headless(old)
        && !is_headless(spec)
    {
        if old_families.len() == families.len() {
            for (i, f) in old_families.iter().enumerate() {
                if *f != families[i] {
                    errs.push(FieldError::invalid_value(
                        "spec.ipFamilies[0]",
                        &families_value,
                        "may not change once set",
                    ));
                }
            }
        } else if old_families.len() > families.len() {
            if ips.is_empty() {
                errs.push(FieldError::invalid_value(
                    "spec.ipFamilies[0]",
                    &families_value,
                    "primary ipFamily can not be unset",
                ));
            }
            if !families.is_empty() && families[0] != old_families[0] {
                errs.push(FieldError::invalid_value(
                    "spec.ipFamilies[0]",
                    &ips_value,
                    "may not change once set",
                ));
            }
            if families.len() == 1 && !policy_single {
                errs.push(FieldError::invalid_value(
                    "spec.ipFamilyPolicy",
                    &spec["ipFamilyPolicy"],
                    "must be set to 'SingleStack' when releasing the secondary ipFamily",
                ));
            }
        } else if !old_families.is_empty() && !families.is_empty() && families[0] != old_families[0]
        {
            errs.push(FieldError::invalid_value(
                "spec.ipFamilies[0]",
                &ips_value,
                "may not change once set",
            ));
        }
    }
    // The class's format is checked again by validateService.
    errs.extend(
        load_balancer_class_rules(spec, Some(old))
            .into_iter()
            .filter(|e| e.message.contains("may not change once set")),
    );
    if needs_health_check(old)
        && needs_health_check(spec)
        && old["healthCheckNodePort"] != spec["healthCheckNodePort"]
    {
        errs.push(FieldError::forbidden(
            "spec.healthCheckNodePort",
            "field is immutable",
        ));
    }
    errs
}

/// `ValidateServiceStatusUpdate`'s `ValidateLoadBalancerStatus` (the ingress IPs and hostnames).
pub(crate) fn service_status_rules(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ingress = items(&obj["status"]["loadBalancer"]["ingress"]);
    if obj["spec"]["type"] != "LoadBalancer" && !ingress.is_empty() {
        return vec![FieldError::forbidden(
            "status.loadBalancer.ingress",
            "may only be used when `spec.type` is 'LoadBalancer'",
        )];
    }
    let existing: Vec<String> = items(&old["status"]["loadBalancer"]["ingress"])
        .iter()
        .map(|i| str_of(i, "ip").to_owned())
        .filter(|ip| !ip.is_empty())
        .collect();
    for (i, ing) in ingress.iter().enumerate() {
        let at = format!("status.loadBalancer.ingress[{i}]");
        let ip = str_of(ing, "ip");
        if !ip.is_empty() {
            errs.extend(ip_rules(&format!("{at}.ip"), ip, &existing));
        }
        match ing["ipMode"].as_str() {
            None if !ip.is_empty() => errs.push(FieldError::required_because(
                &format!("{at}.ipMode"),
                "must be specified when `ip` is set",
            )),
            None => {}
            Some(_) if ip.is_empty() => errs.push(FieldError::forbidden(
                &format!("{at}.ipMode"),
                "may not be specified when `ip` is not set",
            )),
            Some("VIP" | "Proxy") => {}
            Some(other) => errs.push(unsupported(
                &format!("{at}.ipMode"),
                other,
                &["Proxy", "VIP"],
            )),
        }
        let host = str_of(ing, "hostname");
        if !host.is_empty() {
            errs.extend(label_value_errors(
                &format!("{at}.hostname"),
                host,
                is_dns1123_subdomain(host),
            ));
            if parse_ip(host).is_some() {
                errs.push(FieldError::invalid(
                    &format!("{at}.hostname"),
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errs
}

/// `SetObjectDefaults_Endpoints`.
pub(crate) fn default_endpoints(obj: &mut Value) {
    if let Some(subsets) = obj.get_mut("subsets").and_then(Value::as_array_mut) {
        for ss in subsets {
            if let Some(ports) = ss.get_mut("ports").and_then(Value::as_array_mut) {
                for p in ports.iter_mut().filter(|p| p.is_object()) {
                    if str_of(p, "protocol").is_empty() {
                        p["protocol"] = json!("TCP");
                    }
                }
            }
        }
    }
}

/// `ValidateEndpoints`' subsets (ignored on an update that leaves them unchanged).
pub(crate) fn endpoints_rules(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, ss) in items(&obj["subsets"]).iter().enumerate() {
        let at = format!("subsets[{i}]");
        if items(&ss["addresses"]).is_empty() && items(&ss["notReadyAddresses"]).is_empty() {
            errs.push(FieldError::required_because(
                &at,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for list in ["addresses", "notReadyAddresses"] {
            for (j, a) in items(&ss[list]).iter().enumerate() {
                let path = format!("{at}.{list}[{j}]");
                let ip = str_of(a, "ip");
                errs.extend(ip_rules(&format!("{path}.ip"), ip, &[]));
                let host = str_of(a, "hostname");
                if !host.is_empty() {
                    errs.extend(label_value_errors(
                        &format!("{path}.hostname"),
                        host,
                        is_dns1123_label(host),
                    ));
                }
                if let Some(node) = a["nodeName"].as_str() {
                    errs.extend(label_value_errors(
                        &format!("{path}.nodeName"),
                        node,
                        is_dns1123_subdomain(node),
                    ));
                }
                errs.extend(endpoint_ip_rules(&format!("{path}.ip"), ip));
            }
        }
        let ports = items(&ss["ports"]);
        for (j, p) in ports.iter().enumerate() {
            let path = format!("{at}.ports[{j}]");
            let name = str_of(p, "name");
            if ports.len() > 1 && name.is_empty() {
                errs.push(FieldError::required(&format!("{path}.name")));
            } else if !name.is_empty() {
                errs.extend(label_value_errors(
                    &format!("{path}.name"),
                    name,
                    is_dns1123_label(name),
                ));
            }
            let port = p["port"].as_i64().unwrap_or(0);
            if !(1..=65535).contains(&port) {
                errs.push(FieldError::invalid_value(
                    &format!("{path}.port"),
                    &json!(port),
                    PORT_RANGE,
                ));
            }
            match str_of(p, "protocol") {
                "TCP" | "UDP" | "SCTP" => {}
                "" => errs.push(FieldError::required(&format!("{path}.protocol"))),
                other => errs.push(unsupported(&format!("{path}.protocol"), other, PROTOCOLS)),
            }
            if let Some(app) = p["appProtocol"].as_str() {
                errs.extend(label_value_errors(
                    &format!("{path}.appProtocol"),
                    app,
                    is_qualified_name(app),
                ));
            }
        }
    }
    if !errs.is_empty() && old.is_some_and(|o| o["subsets"] == obj["subsets"]) {
        errs.clear();
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn services_are_defaulted_as_set_defaults_service_does() {
        let mut lb = json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP",
                                     "ports": [{"port": 443, "targetPort": 0}]}});
        default_service(&mut lb);
        assert_eq!(
            lb,
            json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP",
                            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
                            "ports": [{"port": 443, "targetPort": 443, "protocol": "TCP"}],
                            "externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Cluster",
                            "allocateLoadBalancerNodePorts": true},
                   "status": {"loadBalancer": {}}})
        );
        let mut external =
            json!({"spec": {"type": "ExternalName", "externalName": "x.example.com"}});
        default_service(&mut external);
        assert!(external["spec"].get("internalTrafficPolicy").is_none());
    }

    #[test]
    fn several_ports_need_unique_names() {
        let svc = json!({"spec": {"type": "ClusterIP", "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster",
            "ports": [{"name": "web", "port": 80, "protocol": "TCP", "targetPort": 80},
                      {"name": "web", "port": 81, "protocol": "TCP", "targetPort": 81},
                      {"port": 82, "protocol": "TCP", "targetPort": 82}]}});
        assert_eq!(
            messages(&service_rules(&svc, None)),
            [
                "spec.ports[1].name: Duplicate value: \"web\"",
                "spec.ports[2].name: Required value"
            ]
        );
    }

    #[test]
    fn the_cluster_ip_may_not_change_once_set() {
        let old = json!({"type": "ClusterIP", "clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"]});
        let new = json!({"type": "ClusterIP", "clusterIP": "10.0.0.6", "clusterIPs": ["10.0.0.6"]});
        assert_eq!(
            messages(&update_rules(&new, &old)),
            ["spec.clusterIPs[0]: Invalid value: [\"10.0.0.6\"]: may not change once set"]
        );
        let external = json!({"type": "ExternalName", "externalName": "x.example.com"});
        assert!(update_rules(&external, &old).is_empty());
    }

    #[test]
    fn endpoint_addresses_may_not_be_special() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "127.0.0.1"}, {"ip": "fe80::1"}, {"ip": "224.0.0.5"}]}]});
        assert_eq!(
            messages(&endpoints_rules(&ep, None)),
            [
                "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "subsets[0].addresses[1].ip: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "subsets[0].addresses[2].ip: Invalid value: \"224.0.0.5\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
            ]
        );
        // An update that leaves invalid subsets as they were is not refused for them.
        assert!(endpoints_rules(&ep, Some(&ep)).is_empty());
    }
}
