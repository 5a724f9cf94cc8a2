//! core/v1 Nodes: their defaulting (`pkg/apis/core/v1/defaults.go`: `SetDefaults_NodeStatus`,
//! `_ResourceList`), the `TaintNodesByCondition` admission's taint
//! (`plugin/pkg/admission/nodetaint/admission.go`), their rules
//! (`pkg/apis/core/validation/validation.go`: `ValidateNode`, `ValidateNodeUpdate`,
//! `validateNodeTaints`, `ValidateNodeResources`) and the strategy's warnings
//! (`pkg/registry/core/node/strategy.go`: `nodeWarnings`), upstream's messages.
//!
//! Not ported (accepted as valid): the taints and avoid-pods annotations' own rules, the
//! deprecated `configSource` and `status.config` rules, `status.nodeInfo.swap`, the CIDR
//! warnings of `GetWarningsForCIDR`.

use serde_json::{Value, json};

use super::FieldError;
use super::names::{is_qualified_name, is_valid_label_value};
use super::pod::{default_resource_list, unsupported};
use super::quantity::Quantity;
use super::service::{cidr_rules, parse_ip};
use super::storage::is_fractional;

/// The taint `TaintNodesByCondition` puts on every new node (`TaintNodeNotReady`).
pub(crate) const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

/// The items of a JSON list (none if it is not one).
fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `SetObjectDefaults_Node`: the allocatable resources are the capacity when absent; the
/// quantities rounded up to milli in canonical form.
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_node(obj: &mut Value) -> Result<(), String> {
    let status = &mut obj["status"];
    if status.is_object() && status["allocatable"].is_null() && status["capacity"].is_object() {
        status["allocatable"] = status["capacity"].clone();
    }
    for list in ["capacity", "allocatable"] {
        if let Some(map) = status.get_mut(list).and_then(Value::as_object_mut) {
            default_resource_list(map)?;
        }
    }
    Ok(())
}

/// `addNotReadyTaint`: the not-ready `NoSchedule` taint, unless the node has it.
pub(crate) fn add_not_ready_taint(obj: &mut Value) {
    let has = items(&obj["spec"]["taints"])
        .iter()
        .any(|t| t["key"] == NOT_READY_TAINT && t["effect"] == "NoSchedule");
    if has {
        return;
    }
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    let taint = json!({"key": NOT_READY_TAINT, "effect": "NoSchedule"});
    match obj["spec"]["taints"].as_array_mut() {
        Some(taints) => taints.push(taint),
        None => obj["spec"]["taints"] = json!([taint]),
    }
}

/// `field.Duplicate` of an internal struct, which `json.Marshal` writes with its Go field names
/// in declaration order: `fields` are (Go name, JSON value) pairs.
fn duplicate_struct(path: &str, fields: &[(&str, Value)], detail: &str) -> FieldError {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    let mut message = format!("Duplicate value: {{{}}}", body.join(","));
    if !detail.is_empty() {
        message = format!("{message}: {detail}");
    }
    FieldError {
        field: path.to_owned(),
        reason: "FieldValueDuplicate",
        message,
    }
}

/// The internal `Taint`'s fields, as [`duplicate_struct`] renders them.
fn internal_taint(taint: &Value) -> [(&'static str, Value); 4] {
    let text = |k: &str| json!(taint[k].as_str().unwrap_or_default());
    [
        ("Key", text("key")),
        ("Value", text("value")),
        ("Effect", text("effect")),
        ("TimeAdded", taint["timeAdded"].clone()),
    ]
}

/// `validateNodeTaints`, at `metadata.taints` as upstream names the path.
fn taint_rules(taints: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for (i, taint) in items(taints).iter().enumerate() {
        let at = format!("metadata.taints[{i}]");
        let key = taint["key"].as_str().unwrap_or_default();
        for m in is_qualified_name(key) {
            errs.push(FieldError::invalid(&format!("{at}.key"), key, &m));
        }
        let value = taint["value"].as_str().unwrap_or_default();
        let problems = is_valid_label_value(value);
        if !problems.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{at}.value"),
                value,
                &problems.join(";"),
            ));
        }
        let effect = taint["effect"].as_str().unwrap_or_default();
        match effect {
            "" => errs.push(FieldError::required(&format!("{at}.effect"))),
            "NoSchedule" | "PreferNoSchedule" | "NoExecute" => {}
            other => errs.push(unsupported(
                &format!("{at}.effect"),
                other,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            )),
        }
        let pair = (effect.to_owned(), key.to_owned());
        if seen.contains(&pair) {
            errs.push(duplicate_struct(
                &at,
                &internal_taint(taint),
                "taints must be unique by key and effect pair",
            ));
            continue;
        }
        seen.push(pair);
    }
    errs
}

/// `IsIntegerResourceName`: the integer resources and extended (domain-qualified, not native)
/// ones.
fn is_integer_resource(name: &str) -> bool {
    const INTEGER: &[&str] = &[
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    ];
    INTEGER.contains(&name)
        || (name.contains('/')
            && !name.contains("kubernetes.io/")
            && !name.starts_with("requests."))
}

/// `ValidateNodeResources`: each quantity of the capacity and allocatable non-negative (and whole
/// for integer resources).
fn resource_rules(status: &Value) -> Vec<FieldError> {
    let zero = Quantity::parse("0").expect("0 parses");
    let mut errs = Vec::new();
    for list in ["capacity", "allocatable"] {
        for (name, value) in status[list].as_object().into_iter().flatten() {
            let Some(q) = Quantity::of_json(value) else {
                continue;
            };
            let at = format!("status.{list}.{name}");
            let text = q.canonical();
            if q < zero {
                errs.push(FieldError::invalid(
                    &at,
                    &text,
                    "must be greater than or equal to 0",
                ));
            }
            if is_integer_resource(name) && is_fractional(&text) {
                errs.push(FieldError::invalid(&at, &text, "must be an integer"));
            }
        }
    }
    errs
}

/// `ValidateNode` (its metadata aside): the taints, the resources, the pod CIDRs.
pub(crate) fn node_rules(new: &Value) -> Vec<FieldError> {
    let mut errs = taint_rules(&new["spec"]["taints"]);
    errs.extend(resource_rules(&new["status"]));
    let cidrs: Vec<&str> = items(&new["spec"]["podCIDRs"])
        .iter()
        .map(|c| c.as_str().unwrap_or_default())
        .collect();
    for (i, cidr) in cidrs.iter().enumerate() {
        errs.extend(cidr_rules(&format!("spec.podCIDRs[{i}]"), cidr, &[]));
    }
    if cidrs.len() > 1 {
        let v4 = |c: &&str| {
            c.split_once('/')
                .and_then(|(ip, _)| parse_ip(ip))
                .is_some_and(|ip| ip.is_ipv4())
        };
        let parsed = cidrs
            .iter()
            .all(|c| c.split_once('/').and_then(|(ip, _)| parse_ip(ip)).is_some());
        let dual = parsed && cidrs.len() == 2 && v4(&cidrs[0]) != v4(&cidrs[1]);
        if parsed && !dual {
            errs.push(FieldError::invalid_value(
                "spec.podCIDRs",
                &json!(cidrs),
                "may specify no more than one CIDR for each IP family",
            ));
        }
    }
    errs
}

/// `ValidateNodeUpdate` (its metadata aside): the resources, unique addresses, the pod CIDRs and
/// the provider ID set once, the taints, the external ID immutable.
pub(crate) fn node_update_rules(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = resource_rules(&new["status"]);
    let mut addresses: Vec<(&Value, &Value)> = Vec::new();
    for (i, address) in items(&new["status"]["addresses"]).iter().enumerate() {
        let pair = (&address["type"], &address["address"]);
        if addresses.contains(&pair) {
            let text = |v: &Value| json!(v.as_str().unwrap_or_default());
            errs.push(duplicate_struct(
                &format!("status.addresses[{i}]"),
                &[("Type", text(pair.0)), ("Address", text(pair.1))],
                "",
            ));
        }
        addresses.push(pair);
    }
    let old_cidrs = items(&old["spec"]["podCIDRs"]);
    if !old_cidrs.is_empty() {
        let new_cidrs = items(&new["spec"]["podCIDRs"]);
        let forbidden = || {
            FieldError::forbidden(
                "spec.podCIDRs",
                "node updates may not change podCIDR except from \"\" to valid",
            )
        };
        if old_cidrs.len() != new_cidrs.len() {
            errs.push(forbidden());
        } else {
            for (o, n) in old_cidrs.iter().zip(new_cidrs) {
                if o != n {
                    errs.push(forbidden());
                }
            }
        }
    }
    let old_provider = old["spec"]["providerID"].as_str().unwrap_or_default();
    if !old_provider.is_empty() && new["spec"]["providerID"].as_str() != Some(old_provider) {
        errs.push(FieldError::forbidden(
            "spec.providerID",
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    errs.extend(taint_rules(&new["spec"]["taints"]));
    let external = |o: &Value| {
        o["spec"]["externalID"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    if external(new) != external(old) {
        errs.push(FieldError::forbidden(
            "spec.externalID",
            "may not be updated",
        ));
    }
    errs
}

/// `nodeWarnings` (the CIDR warnings aside).
pub(crate) fn node_warnings(obj: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    if !obj["spec"]["configSource"].is_null() {
        warnings.push("spec.configSource: the feature is removed".to_owned());
    }
    if !obj["spec"]["externalID"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        warnings.push(
            "spec.externalID: this field is deprecated, and is unused by Kubernetes".to_owned(),
        );
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocatable_defaults_to_the_capacity() {
        let mut node = json!({"status": {"capacity": {"cpu": "4", "memory": "8192Mi"}}});
        default_node(&mut node).unwrap();
        assert_eq!(
            node["status"]["allocatable"],
            json!({"cpu": "4", "memory": "8Gi"})
        );
    }

    #[test]
    fn taints_are_unique_by_key_and_effect() {
        let node = json!({"spec": {"taints": [
            {"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"},
            {"key": "b", "effect": "Never"}]}});
        let errs: Vec<String> = node_rules(&node).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            [
                "metadata.taints[1]: Duplicate value: {\"Key\":\"a\",\"Value\":\"\",\"Effect\":\"NoSchedule\",\"TimeAdded\":null}: taints must be unique by key and effect pair",
                "metadata.taints[2].effect: Unsupported value: \"Never\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
            ]
        );
    }
}
