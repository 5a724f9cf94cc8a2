//! A pod template as every workload holds it (Deployment, and next ReplicaSet, StatefulSet,
//! DaemonSet, Job, Pod): its defaulting as the workloads' generated `SetObjectDefaults_*` apply
//! it (`pkg/apis/core/v1/defaults.go`: `SetDefaults_PodSpec`, `_Container`, `_Probe`,
//! `_HTTPGetAction`, `_Volume` and the volume sources', `_ObjectFieldSelector`,
//! `_ResourceList`, the declarative `protocol: TCP`), and the core of its validation
//! (`pkg/apis/core/validation`: `ValidatePodTemplateSpec`, `ValidatePodSpec`,
//! `validateContainers`, `validateContainerPorts`, `ValidateEnv`, `ValidateVolumes`,
//! `ValidateVolumeMounts`, `ValidateContainerResourceRequirements`), upstream's messages.
//!
//! Not ported (accepted as valid): probes' and lifecycle handlers' rules, security contexts,
//! affinity, tolerations, topology spread, DNS config, host aliases, readiness and scheduling
//! gates, each volume source's own fields, `envFrom` prefixes, ephemeral containers, resize
//! policies and restart policy rules of init containers, and the warnings
//! `GetWarningsForPodTemplate` gives.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::FieldError;
use super::names::{is_dns1123_label, is_qualified_name, is_valid_label_value};
use super::quantity::{self, Quantity};

/// `field.NotSupported(path, value, supported)` of a string.
pub(crate) fn unsupported(path: &str, value: &str, supported: &[&str]) -> FieldError {
    let supported: Vec<String> = supported.iter().map(|s| (*s).to_owned()).collect();
    FieldError::not_supported(path, &json!(value), &supported)
}

/// `field.Duplicate(path, value)` of a string.
fn duplicate(path: &str, value: &str) -> FieldError {
    FieldError::duplicate(path, &json!(value))
}

// Defaulting.

/// `SetDefaults_*` of a pod template (`spec.template` of a workload), as a workload's
/// `SetObjectDefaults_*` applies them; and the quantities' canonical form.
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_template(template: &mut Value) -> Result<(), String> {
    let Some(spec) = template.get_mut("spec").filter(|s| s.is_object()) else {
        return Ok(());
    };
    let set = |obj: &mut Value, key: &str, value: Value| {
        if obj.get(key).is_none_or(|v| v.is_null() || v == "") {
            obj[key] = value;
        }
    };
    drop_false_values(spec);
    set(spec, "dnsPolicy", json!("ClusterFirst"));
    set(spec, "restartPolicy", json!("Always"));
    set(spec, "securityContext", json!({}));
    set(spec, "terminationGracePeriodSeconds", json!(30));
    set(spec, "schedulerName", json!("default-scheduler"));
    // The v1 conversion keeps the deprecated `serviceAccount` equal to `serviceAccountName`.
    let account = [&spec["serviceAccountName"], &spec["serviceAccount"]]
        .into_iter()
        .filter_map(Value::as_str)
        .find(|a| !a.is_empty())
        .map(str::to_owned);
    if let Some(account) = account {
        spec["serviceAccountName"] = json!(account);
        spec["serviceAccount"] = json!(account);
    }
    if let Some(volumes) = spec.get_mut("volumes").and_then(Value::as_array_mut) {
        volumes.iter_mut().for_each(default_volume);
    }
    for list in ["initContainers", "containers"] {
        if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for container in containers {
                default_container(container)?;
            }
        }
    }
    Ok(())
}

/// The pod spec's and its containers' `bool` fields (not pointers) with `omitempty`, which the
/// Go decoder leaves unset when `false` and the encoder then omits.
fn drop_false_values(spec: &mut Value) {
    let drop = |obj: &mut Value, keys: &[&str]| {
        if let Some(map) = obj.as_object_mut() {
            map.retain(|k, v| !(keys.contains(&k.as_str()) && *v == false));
        }
    };
    drop(spec, &["hostNetwork", "hostPID", "hostIPC"]);
    for list in ["initContainers", "containers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            drop(c, &["stdin", "stdinOnce", "tty"]);
            for m in c
                .get_mut("volumeMounts")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                drop(m, &["readOnly"]);
            }
        }
    }
}

/// `SetDefaults_Container` and what its fields' defaulters add.
fn default_container(c: &mut Value) -> Result<(), String> {
    if !c.is_object() {
        return Ok(());
    }
    if c["imagePullPolicy"].as_str().unwrap_or_default().is_empty() {
        let policy = if image_tag(c["image"].as_str().unwrap_or_default()) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        c["imagePullPolicy"] = json!(policy);
    }
    if c["terminationMessagePath"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        c["terminationMessagePath"] = json!("/dev/termination-log");
    }
    if c["terminationMessagePolicy"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        c["terminationMessagePolicy"] = json!("File");
    }
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter(|p| p.is_object()) {
            if port["protocol"].as_str().unwrap_or_default().is_empty() {
                port["protocol"] = json!("TCP");
            }
        }
    }
    if let Some(env) = c.get_mut("env").and_then(Value::as_array_mut) {
        for var in env {
            if let Some(field_ref) = var
                .pointer_mut("/valueFrom/fieldRef")
                .filter(|f| f.is_object())
            {
                default_field_ref(field_ref);
            }
            if let Some(resource_ref) = var
                .pointer_mut("/valueFrom/resourceFieldRef")
                .filter(|f| f.is_object())
            {
                default_divisor(resource_ref);
            }
            if let Some(file_ref) = var
                .pointer_mut("/valueFrom/fileKeyRef")
                .filter(|f| f.is_object())
                && file_ref.get("optional").is_none_or(Value::is_null)
            {
                file_ref["optional"] = json!(false);
            }
        }
    }
    // ResourceRequirements is a value struct: the encoder always writes it.
    if !c["resources"].is_object() {
        c["resources"] = json!({});
    }
    for list in ["limits", "requests"] {
        if let Some(resources) = c["resources"].get_mut(list).and_then(Value::as_object_mut) {
            default_resource_list(resources)?;
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).filter(|p| p.is_object()) {
            default_probe(p);
        }
    }
    for hook in ["postStart", "preStop"] {
        if let Some(get) = c
            .get_mut("lifecycle")
            .and_then(|l| l.get_mut(hook))
            .and_then(|h| h.get_mut("httpGet"))
            .filter(|g| g.is_object())
        {
            default_http_get(get);
        }
    }
    Ok(())
}

/// `SetDefaults_ResourceList`: each quantity rounded up to milli, in canonical form.
pub(crate) fn default_resource_list(list: &mut Map<String, Value>) -> Result<(), String> {
    for value in list.values_mut() {
        let mut q = Quantity::of_json(value).ok_or_else(|| quantity::FORMAT_ERROR.to_owned())?;
        q.round_up(-3);
        *value = json!(q.canonical());
    }
    Ok(())
}

/// `SetDefaults_Probe` and its handlers'.
fn default_probe(p: &mut Value) {
    for (key, default) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        if p[key].as_i64().unwrap_or(0) == 0 {
            p[key] = json!(default);
        }
    }
    if let Some(get) = p.get_mut("httpGet").filter(|g| g.is_object()) {
        default_http_get(get);
    }
    if let Some(grpc) = p.get_mut("grpc").filter(|g| g.is_object())
        && grpc.get("service").is_none_or(Value::is_null)
    {
        grpc["service"] = json!("");
    }
}

/// `SetDefaults_HTTPGetAction`.
fn default_http_get(get: &mut Value) {
    if get["path"].as_str().unwrap_or_default().is_empty() {
        get["path"] = json!("/");
    }
    if get["scheme"].as_str().unwrap_or_default().is_empty() {
        get["scheme"] = json!("HTTP");
    }
}

/// A `resourceFieldRef`'s `divisor`, a `Quantity` value the encoder writes as `"0"`.
fn default_divisor(resource_ref: &mut Value) {
    if resource_ref.get("divisor").is_none_or(Value::is_null) {
        resource_ref["divisor"] = json!("0");
    }
}

/// `SetDefaults_ObjectFieldSelector`.
fn default_field_ref(field_ref: &mut Value) {
    if field_ref["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        field_ref["apiVersion"] = json!("v1");
    }
}

/// The volume sources (`VolumeSource`'s fields).
const VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

/// `SetDefaults_Volume` and the sources' defaulters (`defaultMode` 0644, a host path's type).
fn default_volume(v: &mut Value) {
    if !v.is_object() {
        return;
    }
    if !VOLUME_SOURCES.iter().any(|s| !v[*s].is_null()) {
        v["emptyDir"] = json!({});
    }
    if let Some(host) = v.get_mut("hostPath").filter(|h| h.is_object())
        && host.get("type").is_none_or(Value::is_null)
    {
        host["type"] = json!("");
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(source).filter(|s| s.is_object())
            && s.get("defaultMode").is_none_or(Value::is_null)
        {
            s["defaultMode"] = json!(0o644);
        }
    }
    let field_refs = |items: Option<&mut Value>| {
        for item in items.and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(f) = item.get_mut("fieldRef").filter(|f| f.is_object()) {
                default_field_ref(f);
            }
            if let Some(r) = item.get_mut("resourceFieldRef").filter(|r| r.is_object()) {
                default_divisor(r);
            }
        }
    };
    field_refs(v.pointer_mut("/downwardAPI/items"));
    if let Some(sources) = v
        .pointer_mut("/projected/sources")
        .and_then(Value::as_array_mut)
    {
        for s in sources {
            field_refs(s.pointer_mut("/downwardAPI/items"));
            if let Some(token) = s.get_mut("serviceAccountToken").filter(|t| t.is_object())
                && token.get("expirationSeconds").is_none_or(Value::is_null)
            {
                token["expirationSeconds"] = json!(3600);
            }
        }
    }
}

/// The tag of an image reference as `parsers.ParseImageName` finds it (`latest` when it has
/// neither tag nor digest).
fn image_tag(image: &str) -> String {
    // A reference that does not parse has no tag.
    let path = image.split_once('/').map_or(image, |(_, p)| p);
    let parses = !image.is_empty()
        && image
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._/:@-".contains(&b))
        && !path
            .split([':', '@'])
            .next()
            .unwrap_or("")
            .bytes()
            .any(|b| b.is_ascii_uppercase());
    if image.contains('@') || !parses {
        return String::new();
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag.to_owned(),
        None => "latest".to_owned(),
    }
}

// Validation.

/// `ValidatePodTemplateSpec` of the template at `path` (`spec.template`).
pub(crate) fn template_rules(template: &Value, path: &str) -> Vec<FieldError> {
    // `fldPath.Child("labels")`: upstream's path skips `metadata`.
    let mut errs = label_rules(&template["metadata"]["labels"], &format!("{path}.labels"));
    errs.extend(spec_rules(&template["spec"], &format!("{path}.spec")));
    errs
}

/// `ValidateLabels` of a template's labels.
pub(crate) fn label_rules(labels: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in labels.as_object().into_iter().flatten() {
        for m in is_qualified_name(key) {
            errs.push(FieldError::invalid(path, key, &m));
        }
        for m in is_valid_label_value(value.as_str().unwrap_or_default()) {
            errs.push(FieldError::invalid(
                path,
                value.as_str().unwrap_or_default(),
                &m,
            ));
        }
    }
    errs
}

/// `ValidatePodSpec` (the ported part) of a Pod's own spec at `path` (`spec`).
pub(crate) fn pod_spec_rules(spec: &Value, path: &str) -> Vec<FieldError> {
    spec_rules(spec, path)
}

/// `ValidatePodSpec` (the ported part).
fn spec_rules(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if spec["terminationGracePeriodSeconds"].is_null() {
        errs.push(FieldError::required(&format!(
            "{path}.terminationGracePeriodSeconds"
        )));
    }
    let volumes = volume_rules(&spec["volumes"], &format!("{path}.volumes"), &mut errs);
    let containers = items(&spec["containers"]);
    if containers.is_empty() {
        errs.push(FieldError::required(&format!("{path}.containers")));
    }
    let mut names = BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        let at = format!("{path}.containers[{i}]");
        errs.extend(container_rules(c, &at, &volumes));
        let name = c["name"].as_str().unwrap_or_default();
        if !names.insert(name.to_owned()) {
            errs.push(duplicate(&format!("{at}.name"), name));
        }
    }
    for (i, c) in items(&spec["initContainers"]).iter().enumerate() {
        let at = format!("{path}.initContainers[{i}]");
        errs.extend(container_rules(c, &at, &volumes));
        let name = c["name"].as_str().unwrap_or_default();
        if !names.insert(name.to_owned()) {
            errs.push(duplicate(&format!("{at}.name"), name));
        }
    }
    let restart = spec["restartPolicy"].as_str().unwrap_or_default();
    match restart {
        "Always" | "OnFailure" | "Never" => {}
        "" => errs.push(FieldError::required(&format!("{path}.restartPolicy"))),
        other => errs.push(unsupported(
            &format!("{path}.restartPolicy"),
            other,
            &["Always", "OnFailure", "Never"],
        )),
    }
    let dns = spec["dnsPolicy"].as_str().unwrap_or_default();
    match dns {
        "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None" => {}
        "" => errs.push(FieldError::required(&format!("{path}.dnsPolicy"))),
        other => errs.push(unsupported(
            &format!("{path}.dnsPolicy"),
            other,
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        )),
    }
    errs.extend(label_rules(
        &spec["nodeSelector"],
        &format!("{path}.nodeSelector"),
    ));
    errs
}

/// The items of a JSON list (none if it is not one).
fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `ValidateVolumes`: the rules, and the names of the volumes declared.
fn volume_rules(volumes: &Value, path: &str, errs: &mut Vec<FieldError>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, v) in items(volumes).iter().enumerate() {
        let at = format!("{path}[{i}]");
        let name = v["name"].as_str().unwrap_or_default();
        let mut ok = true;
        if name.is_empty() {
            errs.push(FieldError::required(&format!("{at}.name")));
            ok = false;
        } else {
            for m in is_dns1123_label(name) {
                errs.push(FieldError::invalid(&format!("{at}.name"), name, &m));
                ok = false;
            }
        }
        let sources: Vec<&str> = VOLUME_SOURCES
            .iter()
            .copied()
            .filter(|s| !v[*s].is_null())
            .collect();
        match sources.as_slice() {
            [] => {
                errs.push(FieldError::required_because(
                    &at,
                    "must specify a volume type",
                ));
                ok = false;
            }
            [_] => {}
            [_, more @ ..] => {
                for s in more {
                    errs.push(FieldError::forbidden(
                        &format!("{at}.{s}"),
                        "may not specify more than 1 volume type",
                    ));
                }
                ok = false;
            }
        }
        if names.contains(name) {
            errs.push(duplicate(&format!("{at}.name"), name));
        } else if ok {
            names.insert(name.to_owned());
        }
    }
    names
}

/// `validateContainerCommon` (the ported part) of the container at `path`.
fn container_rules(c: &Value, path: &str, volumes: &BTreeSet<String>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = c["name"].as_str().unwrap_or_default();
    if name.is_empty() {
        errs.push(FieldError::required(&format!("{path}.name")));
    } else {
        for m in is_dns1123_label(name) {
            errs.push(FieldError::invalid(&format!("{path}.name"), name, &m));
        }
    }
    if c["image"].as_str().unwrap_or_default().is_empty() {
        errs.push(FieldError::required(&format!("{path}.image")));
    }
    match c["terminationMessagePolicy"].as_str().unwrap_or_default() {
        "File" | "FallbackToLogsOnError" => {}
        "" => errs.push(FieldError::required(&format!(
            "{path}.terminationMessagePolicy"
        ))),
        other => errs.push(unsupported(
            &format!("{path}.terminationMessagePolicy"),
            other,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    errs.extend(port_rules(&c["ports"], &format!("{path}.ports")));
    errs.extend(env_rules(&c["env"], &format!("{path}.env")));
    errs.extend(mount_rules(
        &c["volumeMounts"],
        &format!("{path}.volumeMounts"),
        volumes,
    ));
    match c["imagePullPolicy"].as_str().unwrap_or_default() {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errs.push(FieldError::required(&format!("{path}.imagePullPolicy"))),
        other => errs.push(unsupported(
            &format!("{path}.imagePullPolicy"),
            other,
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    errs.extend(resource_rules(
        &c["resources"],
        &format!("{path}.resources"),
    ));
    errs
}

/// The port range message (`InclusiveRangeError(1, 65535)`).
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

/// `validateContainerPorts`.
fn port_rules(ports: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, p) in items(ports).iter().enumerate() {
        let at = format!("{path}[{i}]");
        if let Some(name) = p["name"].as_str().filter(|n| !n.is_empty()) {
            for m in port_name_problems(name) {
                errs.push(FieldError::invalid(&format!("{at}.name"), name, m));
            }
            if !names.insert(name.to_owned()) {
                errs.push(duplicate(&format!("{at}.name"), name));
            }
        }
        let port = p["containerPort"].as_i64().unwrap_or(0);
        if port == 0 {
            errs.push(FieldError::required(&format!("{at}.containerPort")));
        } else if !(1..=65535).contains(&port) {
            errs.push(FieldError::invalid_value(
                &format!("{at}.containerPort"),
                &json!(port),
                PORT_RANGE,
            ));
        }
        let host = p["hostPort"].as_i64().unwrap_or(0);
        if host != 0 && !(1..=65535).contains(&host) {
            errs.push(FieldError::invalid_value(
                &format!("{at}.hostPort"),
                &json!(host),
                PORT_RANGE,
            ));
        }
        match p["protocol"].as_str().unwrap_or_default() {
            "TCP" | "UDP" | "SCTP" => {}
            "" => errs.push(FieldError::required(&format!("{at}.protocol"))),
            other => errs.push(unsupported(
                &format!("{at}.protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
    }
    errs
}

/// `validation.IsValidPortName`.
pub(crate) fn port_name_problems(name: &str) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push("must be no more than 15 characters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens");
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)");
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen");
    }
    errs
}

/// `ValidateEnv` (names, and `valueFrom`'s one source with its required fields).
fn env_rules(env: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, var) in items(env).iter().enumerate() {
        let at = format!("{path}[{i}]");
        let name = var["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errs.push(FieldError::required(&format!("{at}.name")));
        } else if name.contains('=') || !name.bytes().all(|b| (32..=126).contains(&b)) {
            errs.push(FieldError::invalid(
                &format!("{at}.name"),
                name,
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
        let from = &var["valueFrom"];
        if from.is_object() {
            errs.extend(value_from_rules(
                from,
                &format!("{at}.valueFrom"),
                var["value"].as_str().unwrap_or_default(),
            ));
        }
    }
    errs
}

/// `validateEnvVarValueFrom`.
fn value_from_rules(from: &Value, path: &str, value: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sources: Vec<&str> = [
        "fieldRef",
        "resourceFieldRef",
        "configMapKeyRef",
        "secretKeyRef",
        "fileKeyRef",
    ]
    .into_iter()
    .filter(|s| !from[*s].is_null())
    .collect();
    for key_ref in ["configMapKeyRef", "secretKeyRef"] {
        let r = &from[key_ref];
        if r.is_object() && r["key"].as_str().unwrap_or_default().is_empty() {
            errs.push(FieldError::required(&format!("{path}.{key_ref}.key")));
        }
    }
    if sources.is_empty() {
        errs.push(FieldError::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if sources.len() > 1 {
        errs.push(FieldError::invalid(
            path,
            "",
            "may not have more than one field specified at a time",
        ));
    }
    if !value.is_empty() && !sources.is_empty() {
        errs.push(FieldError::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    }
    errs
}

/// `ValidateVolumeMounts` (names of declared volumes, paths required and unique).
fn mount_rules(mounts: &Value, path: &str, volumes: &BTreeSet<String>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut paths = BTreeSet::new();
    for (i, m) in items(mounts).iter().enumerate() {
        let at = format!("{path}[{i}]");
        let name = m["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            errs.push(FieldError::required(&format!("{at}.name")));
        } else if !volumes.contains(name) {
            errs.push(FieldError::not_found(&format!("{at}.name"), name));
        }
        let mount_path = m["mountPath"].as_str().unwrap_or_default();
        if mount_path.is_empty() {
            errs.push(FieldError::required(&format!("{at}.mountPath")));
        } else if !paths.insert(mount_path.to_owned()) {
            errs.push(FieldError::invalid(
                &format!("{at}.mountPath"),
                mount_path,
                "must be unique",
            ));
        }
    }
    errs
}

/// The resources a container may request (`IsStandardContainerResourceName`).
fn is_standard_container_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-")
}

/// `ValidateContainerResourceRequirements` (names, quantities, requests within limits).
fn resource_rules(resources: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut limits = Vec::new();
    for (list, into) in [("limits", Some(&mut limits)), ("requests", None)] {
        let at = format!("{path}.{list}");
        let mut into = into;
        for (name, value) in resources[list].as_object().into_iter().flatten() {
            let key = format!("{at}[{name}]");
            let fully_qualified = name.contains('/') && is_qualified_name(name).is_empty();
            if !is_standard_container_resource(name) && !fully_qualified {
                errs.push(FieldError::invalid(
                    &key,
                    name,
                    "must be a standard resource type or fully qualified",
                ));
                errs.push(FieldError::invalid(
                    &key,
                    name,
                    "must be a standard resource for containers",
                ));
            }
            let text = value.as_str().unwrap_or_default();
            if let Some(q) = Quantity::parse(text) {
                if q.is_negative() {
                    errs.push(FieldError::invalid(
                        &key,
                        text,
                        "must be greater than or equal to 0",
                    ));
                }
                if let Some(limits) = into.as_deref_mut() {
                    limits.push((name.clone(), q));
                }
            }
        }
    }
    for (name, value) in resources["requests"].as_object().into_iter().flatten() {
        let Some(q) = Quantity::of_json(value) else {
            continue;
        };
        if let Some((_, limit)) = limits.iter().find(|(n, _)| n == name)
            && q > *limit
        {
            errs.push(FieldError::invalid(
                &format!("{path}.requests"),
                value.as_str().unwrap_or_default(),
                &format!(
                    "must be less than or equal to {name} limit of {}",
                    limit.canonical()
                ),
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags_decide_the_pull_policy() {
        assert_eq!(image_tag("nginx"), "latest");
        assert_eq!(image_tag("nginx:1.25"), "1.25");
        assert_eq!(image_tag("registry:5000/team/nginx"), "latest");
        assert_eq!(image_tag("nginx@sha256:00"), "");
    }

    #[test]
    fn a_template_is_defaulted_as_the_workloads_default_it() {
        let mut template = json!({"spec": {"containers": [{"name": "a", "image": "nginx",
            "ports": [{"containerPort": 80}], "resources": {"requests": {"cpu": "0.5"}}}],
            "volumes": [{"name": "v"}]}});
        default_template(&mut template).unwrap();
        assert_eq!(
            template,
            json!({"spec": {"containers": [{"name": "a", "image": "nginx",
                "imagePullPolicy": "Always", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "500m"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"}],
                "volumes": [{"name": "v", "emptyDir": {}}],
                "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {},
                "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"}})
        );
        assert!(template_rules(&template, "spec.template").is_empty());
    }
}
