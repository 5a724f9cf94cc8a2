//! core/v1 Pods: `SetObjectDefaults_Pod` (`pkg/apis/core/v1/defaults.go`: `SetDefaults_Pod` on
//! top of the pod spec's defaults, [`super::pod`]), the QoS class `PrepareForCreate` computes
//! (`pkg/apis/core/helper/qos`), and `ValidatePodCreate`, `ValidatePodUpdate` and
//! `ValidatePodStatusUpdate` (`pkg/apis/core/validation/validation.go`), upstream's messages.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::FieldError;
use super::names::is_dns1123_subdomain;
use super::pod;
use super::quantity::Quantity;

/// `SetObjectDefaults_Pod`: the pod spec's defaults, then `SetDefaults_Pod` (requests default
/// to limits, `enableServiceLinks`, host ports of a host-network pod), and the value struct
/// `status` the encoder always writes.
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_pod(obj: &mut Value) -> Result<(), String> {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    pod::default_template(obj)?;
    let spec = &mut obj["spec"];
    let host_network = spec["hostNetwork"] == true;
    for list in ["containers", "initContainers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(limits) = c["resources"]["limits"].as_object().cloned() {
                if !c["resources"]["requests"].is_object() {
                    c["resources"]["requests"] = json!({});
                }
                for (name, q) in limits {
                    if c["resources"]["requests"].get(&name).is_none() {
                        c["resources"]["requests"][&name] = q;
                    }
                }
            }
            if host_network {
                for port in c
                    .get_mut("ports")
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    if port["hostPort"].as_i64().unwrap_or(0) == 0 {
                        port["hostPort"] = port["containerPort"].clone();
                    }
                }
            }
        }
    }
    if spec["enableServiceLinks"].is_null() {
        spec["enableServiceLinks"] = json!(true);
    }
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    convert_status(&mut obj["status"]);
    Ok(())
}

/// The v1 ↔ internal round trip of a pod's status: `podIP` authoritative over `podIPs` (and
/// `hostIP` over `hostIPs`), and the zero values the Go encoder writes (a condition's times,
/// a container status's states, `ready`, `restartCount`, `image`, `imageID`).
fn convert_status(status: &mut Value) {
    for (one, many) in [("podIP", "podIPs"), ("hostIP", "hostIPs")] {
        let Some(ip) = status[one]
            .as_str()
            .filter(|ip| !ip.is_empty())
            .map(str::to_owned)
        else {
            continue;
        };
        let first = status[many][0]["ip"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if first != ip {
            status[many] = json!([{"ip": ip}]);
        }
    }
    for c in status
        .get_mut("conditions")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter(|c| c.is_object())
    {
        for key in ["lastProbeTime", "lastTransitionTime"] {
            if c.get(key).is_none() {
                c[key] = Value::Null;
            }
        }
    }
    for list in [
        "initContainerStatuses",
        "containerStatuses",
        "ephemeralContainerStatuses",
    ] {
        for c in status
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter(|c| c.is_object())
        {
            for (key, zero) in [
                ("name", json!("")),
                ("ready", json!(false)),
                ("restartCount", json!(0)),
                ("image", json!("")),
                ("imageID", json!("")),
            ] {
                if c.get(key).is_none_or(Value::is_null) {
                    c[key] = zero;
                }
            }
            for key in ["state", "lastState"] {
                if !c[key].is_object() {
                    c[key] = json!({});
                }
                let state = &mut c[key];
                if state["running"].is_object() && state["running"].get("startedAt").is_none() {
                    state["running"]["startedAt"] = Value::Null;
                }
                if state["terminated"].is_object() {
                    for time in ["startedAt", "finishedAt"] {
                        if state["terminated"].get(time).is_none() {
                            state["terminated"][time] = Value::Null;
                        }
                    }
                }
            }
        }
    }
}

/// What the `DefaultTolerationSeconds` and `Priority` admission plugins do to an update of
/// `old` to `new` (through the main resource): the default tolerations added back, and the
/// stored priority and preemption policy kept when the write has none.
pub(crate) fn admit_update(new: &mut Value, old: &Value) {
    if !new["spec"].is_object() {
        return;
    }
    let spec = &mut new["spec"];
    let mut tolerations: Vec<Value> = spec["tolerations"].as_array().cloned().unwrap_or_default();
    let original = tolerations.len();
    for key in DEFAULT_TOLERATED {
        let tolerated = tolerations.iter().any(|t| {
            let k = t["key"].as_str().unwrap_or_default();
            let e = t["effect"].as_str().unwrap_or_default();
            (k == key || k.is_empty()) && (e == "NoExecute" || e.is_empty())
        });
        if !tolerated {
            tolerations.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 300}),
            );
        }
    }
    if tolerations.len() != original {
        spec["tolerations"] = json!(tolerations);
    }
    for key in ["priority", "preemptionPolicy"] {
        if spec[key].is_null() && !old["spec"][key].is_null() {
            spec[key] = old["spec"][key].clone();
        }
    }
}

/// The taints the `DefaultTolerationSeconds` admission plugin tolerates for 300 s.
pub(crate) const DEFAULT_TOLERATED: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

/// `qos.ComputePodQOS` of a pod's containers (pod-level resources aside).
pub(crate) fn qos_class(spec: &Value) -> &'static str {
    let mut requests: BTreeMap<String, Quantity> = BTreeMap::new();
    let mut limits: BTreeMap<String, Quantity> = BTreeMap::new();
    let mut guaranteed = true;
    let zero = Quantity::parse("0").expect("0 parses");
    for list in ["initContainers", "containers"] {
        for c in spec[list].as_array().into_iter().flatten() {
            for (kind, into) in [("requests", &mut requests), ("limits", &mut limits)] {
                let mut found = Vec::new();
                for (name, value) in c["resources"][kind].as_object().into_iter().flatten() {
                    if !matches!(name.as_str(), "cpu" | "memory") {
                        continue;
                    }
                    let Some(q) = Quantity::of_json(value) else {
                        continue;
                    };
                    if q > zero {
                        found.push(name.clone());
                        match into.get_mut(name) {
                            Some(sum) => *sum = sum.sum(&q),
                            None => {
                                into.insert(name.clone(), q);
                            }
                        }
                    }
                }
                if kind == "limits"
                    && !(found.iter().any(|n| n == "cpu") && found.iter().any(|n| n == "memory"))
                {
                    guaranteed = false;
                }
            }
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed {
        for (name, q) in &requests {
            if limits
                .get(name)
                .is_none_or(|l| l.cmp(q) != std::cmp::Ordering::Equal)
            {
                guaranteed = false;
                break;
            }
        }
    }
    if guaranteed && requests.len() == limits.len() {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// The rules of a pod's spec and status `ValidatePodCreate` (and, again, `ValidatePodUpdate`)
/// run, the object metadata aside.
fn spec_rules(new: &Value) -> Vec<FieldError> {
    let spec = &new["spec"];
    let mut errs = pod::pod_spec_rules(spec, "spec");
    if let Some(deadline) = spec["activeDeadlineSeconds"].as_i64()
        && !(1..=i64::from(i32::MAX)).contains(&deadline)
    {
        errs.push(FieldError::invalid_value(
            "spec.activeDeadlineSeconds",
            &json!(deadline),
            "must be between 1 and 2147483647, inclusive",
        ));
    }
    if let Some(node) = spec["nodeName"].as_str().filter(|n| !n.is_empty()) {
        for m in is_dns1123_subdomain(node) {
            errs.push(FieldError::invalid("spec.nodeName", node, &m));
        }
    }
    errs
}

/// `ValidatePodCreate` (the ported part).
pub(crate) fn create_rules(new: &Value) -> Vec<FieldError> {
    let mut errs = spec_rules(new);
    let spec = &new["spec"];
    if spec["ephemeralContainers"]
        .as_array()
        .is_some_and(|e| !e.is_empty())
    {
        errs.push(FieldError::forbidden(
            "spec.ephemeralContainers",
            "cannot be set on create",
        ));
    }
    if spec["nodeName"].as_str().is_some_and(|n| !n.is_empty())
        && spec["schedulingGates"]
            .as_array()
            .is_some_and(|g| !g.is_empty())
    {
        errs.push(FieldError::forbidden(
            "spec.nodeName",
            "cannot be set until all schedulingGates have been cleared",
        ));
    }
    errs
}

/// The fields of a pod's spec an update may change, as the refusal lists them.
const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// `value` without nulls, empty lists and empty maps below its top (`Semantic.DeepEqual` holds
/// nil and empty slices and maps equal).
fn semantic(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null() && !v.as_array().is_some_and(Vec::is_empty))
                .map(|(k, v)| (k.clone(), semantic(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

/// `ValidatePodUpdate` (the ported part) of `old` to `new`, metadata aside.
pub(crate) fn update_rules(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = spec_rules(new);
    let (spec, old_spec) = (&new["spec"], &old["spec"]);
    for list in ["containers", "initContainers"] {
        let new_list = spec[list].as_array().map(Vec::as_slice).unwrap_or_default();
        let old_list = old_spec[list]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if new_list.len() != old_list.len() {
            errs.push(FieldError::forbidden(
                &format!("spec.{list}"),
                "pod updates may not add or remove containers",
            ));
            return errs;
        }
        for (i, c) in new_list.iter().enumerate() {
            let image = c["image"].as_str().unwrap_or_default();
            if image.is_empty() {
                errs.push(FieldError::required(&format!("spec.{list}[{i}].image")));
            }
            if image.trim() != image {
                errs.push(FieldError::invalid(
                    &format!("spec.{list}[{i}].image"),
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    let deadline = &spec["activeDeadlineSeconds"];
    let old_deadline = &old_spec["activeDeadlineSeconds"];
    if let Some(d) = deadline.as_i64() {
        if !(0..=i64::from(i32::MAX)).contains(&d) {
            errs.push(FieldError::invalid_value(
                "spec.activeDeadlineSeconds",
                deadline,
                "must be between 0 and 2147483647, inclusive",
            ));
            return errs;
        }
        if old_deadline.as_i64().is_some_and(|o| o < d) {
            errs.push(FieldError::invalid_value(
                "spec.activeDeadlineSeconds",
                deadline,
                "must be less than or equal to previous value",
            ));
            return errs;
        }
    } else if !old_deadline.is_null() {
        errs.push(FieldError::invalid_rendered(
            "spec.activeDeadlineSeconds",
            "null",
            "must not update from a positive integer to nil value",
        ));
    }
    // validateOnlyAddedTolerations: each old toleration still there (but for its seconds).
    let new_tolerations = spec["tolerations"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    // (Unchanged tolerations are all found: only a changed list is searched.)
    let changed_tolerations = spec["tolerations"] != old_spec["tolerations"];
    for old_toleration in old_spec["tolerations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|_| changed_tolerations)
    {
        let found = new_tolerations.iter().any(|t| {
            let mut clone = old_toleration.clone();
            clone["tolerationSeconds"] = t["tolerationSeconds"].clone();
            semantic(&clone) == semantic(t)
        });
        if !found {
            errs.push(FieldError::forbidden(
                "spec.tolerations",
                "existing toleration can not be modified except its tolerationSeconds",
            ));
            break;
        }
    }
    // A spec left as it was (a status write's) is semantically equal without the copies.
    if spec == old_spec || semantic(spec) == semantic(old_spec) {
        return errs;
    }
    let mut munged = spec.clone();
    for list in ["containers", "initContainers"] {
        for (i, c) in munged
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .enumerate()
        {
            c["image"] = old_spec[list][i]["image"].clone();
        }
    }
    for field in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        munged[field] = old_spec[field].clone();
    }
    if old_spec["terminationGracePeriodSeconds"]
        .as_i64()
        .is_some_and(|g| g < 0)
        && munged["terminationGracePeriodSeconds"] == 1
    {
        munged["terminationGracePeriodSeconds"] = old_spec["terminationGracePeriodSeconds"].clone();
    }
    if semantic(&munged) != semantic(old_spec) {
        errs.push(FieldError::forbidden(
            "spec",
            &format!(
                "pod updates may not change fields other than {UPDATABLE}\n{}",
                unified_diff(&pretty(&semantic(old_spec)), &pretty(&semantic(&munged)))
            ),
        ));
    }
    errs
}

/// `json.MarshalIndent(v, "", " ")`.
pub(super) fn pretty(value: &Value) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(value, &mut ser).expect("JSON serializes");
    String::from_utf8(out).unwrap_or_default()
}

/// A unified diff (3 lines of context, no file headers) of `a` to `b`, as go-difflib writes it.
pub(super) fn unified_diff(a: &str, b: &str) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    // The longest common subsequence, by dynamic programming.
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // The edit script: (tag, a index, b index).
    let mut ops = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', i, j));
            i += 1;
        } else {
            ops.push(('+', i, j));
            j += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|k| ops[*k].0 != ' ').collect();
    let mut out = String::new();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(3);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 6 {
            end = changed[k];
            k += 1;
        }
        let end = (end + 3).min(ops.len() - 1);
        let hunk = &ops[start..=end];
        let a_len = hunk.iter().filter(|o| o.0 != '+').count();
        let b_len = hunk.iter().filter(|o| o.0 != '-').count();
        let range = |first: usize, len: usize| match len {
            1 => format!("{}", first + 1),
            0 => format!("{first},0"),
            _ => format!("{},{len}", first + 1),
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(hunk[0].1, a_len),
            range(hunk[0].2, b_len)
        ));
        for (tag, ai, bj) in hunk {
            let line = if *tag == '+' { b[*bj] } else { a[*ai] };
            out.push_str(&format!("{tag}{line}\n"));
        }
    }
    out
}

/// `ValidatePodStatusUpdate` (the ported part) of `old` to `new`, metadata aside.
pub(crate) fn status_rules(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let status = &new["status"];
    for (i, c) in status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if c["type"].as_str().unwrap_or_default().is_empty() {
            errs.push(FieldError::required(&format!(
                "status.conditions[{i}].type"
            )));
        }
    }
    if new["spec"]["nodeName"] != old["spec"]["nodeName"] {
        errs.push(FieldError::forbidden(
            "status.nodeName",
            "may not be changed directly",
        ));
    }
    let nominated = status["nominatedNodeName"].as_str().unwrap_or_default();
    if nominated
        != old["status"]["nominatedNodeName"]
            .as_str()
            .unwrap_or_default()
        && !nominated.is_empty()
    {
        for m in is_dns1123_subdomain(nominated) {
            errs.push(FieldError::invalid(
                "status.nominatedNodeName",
                nominated,
                &m,
            ));
        }
        if old["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
        {
            errs.push(FieldError::forbidden(
                "status.nominatedNodeName",
                "may not be set on pods that are already bound to a node",
            ));
        }
    }
    if let Some(g) = status["observedGeneration"].as_i64().filter(|g| *g < 0) {
        errs.push(FieldError::invalid_value(
            "status.observedGeneration",
            &json!(g),
            "must be a non-negative integer",
        ));
    }
    let qos = status["qosClass"].as_str().unwrap_or_default();
    let old_qos = old["status"]["qosClass"].as_str().unwrap_or_default();
    if qos != old_qos {
        errs.push(FieldError::invalid(
            "status.qosClass",
            qos,
            "field is immutable",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_classes_follow_requests_and_limits() {
        let spec = |resources: Value| json!({"containers": [{"resources": resources}]});
        assert_eq!(qos_class(&spec(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&spec(json!({"requests": {"cpu": "100m"}}))),
            "Burstable"
        );
        assert_eq!(
            qos_class(&spec(json!({"requests": {"cpu": "1", "memory": "1Gi"},
                "limits": {"cpu": "1", "memory": "1Gi"}}))),
            "Guaranteed"
        );
    }

    #[test]
    fn requests_default_to_limits() {
        let mut pod = json!({"spec": {"containers": [{"name": "a", "image": "x:1",
            "resources": {"limits": {"cpu": "1"}}}]}});
        default_pod(&mut pod).unwrap();
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "1"
        );
        assert_eq!(pod["spec"]["enableServiceLinks"], true);
    }

    #[test]
    fn unified_diffs_show_the_change_with_context() {
        let diff = unified_diff("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nX\nf\ng\nh\n");
        assert_eq!(diff, "@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+X\n f\n g\n h\n");
    }
}
