//! core/v1 PersistentVolumeClaims and PersistentVolumes, storage.k8s.io/v1 StorageClasses:
//! their defaulting (`pkg/apis/core/v1/defaults.go`: `SetDefaults_PersistentVolume`,
//! `_PersistentVolumeClaim`, `_PersistentVolumeClaimSpec`, `_ResourceList`,
//! `_HostPathVolumeSource`; `pkg/apis/storage/v1/defaults.go`: `SetDefaults_StorageClass`), their
//! rules (`pkg/apis/core/validation/validation.go`: `ValidatePersistentVolumeClaim`,
//! `ValidatePersistentVolumeClaimUpdate`, `ValidatePersistentVolumeClaimStatusUpdate`,
//! `ValidatePersistentVolume`, `ValidatePersistentVolumeUpdate`; `pkg/volume/validation/
//! pv_validation.go`; `pkg/apis/storage/validation/validation.go`: `ValidateStorageClass`,
//! `ValidateStorageClassUpdate`) and the warnings of `pkg/api/persistentvolumeclaim/util.go`
//! and `pkg/api/persistentvolume/util.go`, upstream's messages.
//!
//! Not ported (accepted as valid): the inner rules
//! of volume sources other than `hostPath`, `local`, `nfs` and `csi` (only counted, one source
//! allowed), a claim's `allocatedResourceStatuses`, the beta storage-class annotation's upgrade
//! paths beyond its immutability, a StorageClass's `allowedTopologies` and `mountOptions`.

use serde_json::{Map, Value, json};

use super::FieldError;
use super::names::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value,
};
use super::pod::{default_resource_list, unsupported};
use super::pods::{pretty, unified_diff};
use super::quantity::Quantity;
use super::workloads::claim_spec_rules;

/// The beta annotation naming a claim's or a volume's class (`BetaStorageClassAnnotation`).
pub(crate) const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
/// The annotation marking the default StorageClass (`IsDefaultStorageClassAnnotation`).
pub(crate) const DEFAULT_CLASS_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
/// Its beta form, which `IsDefaultAnnotation` reads too.
pub(crate) const BETA_DEFAULT_CLASS_ANNOTATION: &str =
    "storageclass.beta.kubernetes.io/is-default-class";
/// The deprecated annotation of a volume's mount options (`MountOptionAnnotation`).
const MOUNT_OPTIONS_ANNOTATION: &str = "volume.beta.kubernetes.io/mount-options";

/// `supportedAccessModes`, sorted as `sets.List` gives them.
const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

// Defaulting.

/// Sets `obj[key]` to `value` where it is absent, null or `""`.
fn default_str(obj: &mut Value, key: &str, value: &str) {
    if obj.get(key).is_none_or(|v| v.is_null() || v == "") {
        obj[key] = json!(value);
    }
}

/// `SetDefaults_ResourceList` of the map at `pointer`, if there is one.
fn default_list_at(obj: &mut Value, pointer: &str) -> Result<(), String> {
    match obj.pointer_mut(pointer).and_then(Value::as_object_mut) {
        Some(list) => default_resource_list(list),
        None => Ok(()),
    }
}

/// `SetObjectDefaults_PersistentVolumeClaim`: the volume mode `Filesystem`, the phase `Pending`,
/// the quantities rounded up to milli in canonical form.
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_claim(obj: &mut Value) -> Result<(), String> {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    if obj["spec"]["volumeMode"].is_null() {
        obj["spec"]["volumeMode"] = json!("Filesystem");
    }
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    default_str(&mut obj["status"], "phase", "Pending");
    for pointer in [
        "/spec/resources/limits",
        "/spec/resources/requests",
        "/status/capacity",
        "/status/allocatedResources",
    ] {
        default_list_at(obj, pointer)?;
    }
    Ok(())
}

/// `SetObjectDefaults_PersistentVolume`: the phase `Pending`, the reclaim policy `Retain`, the
/// volume mode `Filesystem`, the capacity's canonical form and the sources' own defaults.
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_volume(obj: &mut Value) -> Result<(), String> {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    default_str(&mut obj["status"], "phase", "Pending");
    let spec = &mut obj["spec"];
    default_str(spec, "persistentVolumeReclaimPolicy", "Retain");
    if spec["volumeMode"].is_null() {
        spec["volumeMode"] = json!("Filesystem");
    }
    if let Some(host) = spec.get_mut("hostPath").filter(|h| h.is_object())
        && host["type"].is_null()
    {
        host["type"] = json!("");
    }
    let sources: [(&str, &[(&str, &str)]); 3] = [
        (
            "rbd",
            &[
                ("pool", "rbd"),
                ("user", "admin"),
                ("keyring", "/etc/ceph/keyring"),
            ],
        ),
        ("iscsi", &[("iscsiInterface", "default")]),
        (
            "scaleIO",
            &[("storageMode", "ThinProvisioned"), ("fsType", "xfs")],
        ),
    ];
    for (source, defaults) in sources {
        if let Some(s) = spec.get_mut(source).filter(|s| s.is_object()) {
            for (key, value) in defaults {
                default_str(s, key, value);
            }
        }
    }
    if let Some(disk) = spec.get_mut("azureDisk").filter(|d| d.is_object()) {
        for (key, value) in [
            ("cachingMode", json!("ReadWrite")),
            ("fsType", json!("ext4")),
            ("readOnly", json!(false)),
            ("kind", json!("Shared")),
        ] {
            if disk[key].is_null() {
                disk[key] = value;
            }
        }
    }
    default_list_at(obj, "/spec/capacity")
}

/// `SetDefaults_StorageClass`: the reclaim policy `Delete`, the binding mode `Immediate`.
pub(crate) fn default_class(obj: &mut Value) {
    if obj["reclaimPolicy"].is_null() {
        obj["reclaimPolicy"] = json!("Delete");
    }
    if obj["volumeBindingMode"].is_null() {
        obj["volumeBindingMode"] = json!("Immediate");
    }
}

// Shared rules.

/// `ValidateClassName` (`NameIsDNSSubdomain`) of the class name at `path`, when set.
fn class_name_rules(path: &str, value: &Value) -> Vec<FieldError> {
    match value.as_str().filter(|s| !s.is_empty()) {
        Some(name) => is_dns1123_subdomain(name)
            .into_iter()
            .map(|m| FieldError::invalid(path, name, &m))
            .collect(),
        None => Vec::new(),
    }
}

/// `ValidateLabelName`.
fn label_name_rules(path: &str, key: &str) -> Vec<FieldError> {
    is_qualified_name(key)
        .into_iter()
        .map(|m| FieldError::invalid(path, key, &m))
        .collect()
}

/// The items of a JSON list (none if it is not one).
fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// A quantity of a stored (canonical) object, zero when absent.
fn quantity(value: &Value) -> Quantity {
    Quantity::of_json(value)
        .or_else(|| Quantity::parse("0"))
        .expect("0 parses")
}

/// Whether a canonical quantity holds a fraction of a unit (`MilliValue() % 1000 != 0`): after
/// the round-up to milli, only those are written with the `m` suffix.
pub(crate) fn is_fractional(canonical: &str) -> bool {
    canonical.ends_with('m')
}

// Claims.

// Claims' data sources (`pkg/api/persistentvolumeclaim/util.go`).

/// Whether a data source is a claim or a volume snapshot (`dataSourceIsPvcOrSnapshot`).
fn is_claim_or_snapshot(source: &Value) -> bool {
    let group = source["apiGroup"].as_str().unwrap_or_default();
    let kind = source["kind"].as_str().unwrap_or_default();
    (kind == "PersistentVolumeClaim" && group.is_empty())
        || (kind == "VolumeSnapshot" && group == "snapshot.storage.k8s.io")
}

/// `DropDisabledFields` (a reference to another namespace), `EnforceDataSourceBackwardsCompatibility`
/// and `NormalizeDataSources` (AnyVolumeDataSource is GA) of a claim's `spec`, `old` the stored spec of an update: a `dataSource` of another kind
/// is dropped when no `dataSourceRef` asks for it; each of the two is filled from the other.
pub(crate) fn normalize_data_sources(spec: &mut Value, old: Option<&Value>) {
    // DropDisabledFields: CrossNamespaceVolumeDataSource is off (alpha), so a reference to
    // another namespace is dropped, unless the stored claim has a reference.
    let ref_in_use = old.is_some_and(|o| !o["dataSourceRef"].is_null());
    let cross_namespace = !spec["dataSourceRef"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .is_empty();
    if cross_namespace
        && !ref_in_use
        && let Some(s) = spec.as_object_mut()
    {
        s.remove("dataSourceRef");
    }
    let in_use = old.is_some_and(|o| !o["dataSource"].is_null() || !o["dataSourceRef"].is_null());
    if !in_use
        && spec["dataSourceRef"].is_null()
        && !spec["dataSource"].is_null()
        && !is_claim_or_snapshot(&spec["dataSource"])
        && let Some(s) = spec.as_object_mut()
    {
        s.remove("dataSource");
    }
    let copy = |from: &Value| {
        let mut to = json!({"kind": from["kind"], "name": from["name"]});
        if let Some(group) = from.get("apiGroup").filter(|g| !g.is_null()) {
            to["apiGroup"] = group.clone();
        }
        to
    };
    let (source, reference) = (&spec["dataSource"], &spec["dataSourceRef"]);
    if !source.is_null() && reference.is_null() {
        spec["dataSourceRef"] = copy(source);
    } else if !reference.is_null()
        && source.is_null()
        && reference["namespace"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
    {
        spec["dataSource"] = copy(reference);
    }
}

/// The v1 encoder's `apiGroup` of a claim's data sources (a pointer without `omitempty`:
/// `null` when unset).
pub(crate) fn null_api_groups(spec: &mut Value) {
    for key in ["dataSource", "dataSourceRef"] {
        if let Some(source) = spec.get_mut(key).and_then(Value::as_object_mut) {
            source.entry("apiGroup").or_insert(Value::Null);
        }
    }
}

/// `validateDataSource` and `validateDataSourceRef` at `path`.
fn data_source_rules(source: &Value, path: &str, allow_any_group: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = source["kind"].as_str().unwrap_or_default();
    if source["name"].as_str().unwrap_or_default().is_empty() {
        errs.push(FieldError::required(&format!("{path}.name")));
    }
    if kind.is_empty() {
        errs.push(FieldError::required(&format!("{path}.kind")));
    }
    let group = source["apiGroup"].as_str().unwrap_or_default();
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        errs.push(FieldError::invalid(
            path,
            kind,
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        ));
    }
    if !group.is_empty() && !allow_any_group {
        for m in is_dns1123_subdomain(group) {
            errs.push(FieldError::invalid(&format!("{path}.apiGroup"), group, &m));
        }
    }
    if let Some(ns) = source["namespace"].as_str().filter(|n| !n.is_empty()) {
        for m in is_dns1123_label(ns) {
            errs.push(FieldError::invalid(&format!("{path}.namespace"), ns, &m));
        }
    }
    errs
}

/// The data source rules of a claim's spec (`allow_any_group` on an update of a claim that had
/// one with an API group).
fn data_sources_rules(spec: &Value, allow_any_group: bool) -> Vec<FieldError> {
    let (source, reference) = (&spec["dataSource"], &spec["dataSourceRef"]);
    let mut errs = Vec::new();
    if source.is_object() {
        errs.extend(data_source_rules(
            source,
            "spec.dataSource",
            allow_any_group,
        ));
    }
    if reference.is_object() {
        errs.extend(data_source_rules(
            reference,
            "spec.dataSourceRef",
            allow_any_group,
        ));
    }
    // The value is the `*field.Path` of `dataSource`, which `json.Marshal` writes as `{}`.
    let path_value = "{}";
    if !reference["namespace"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        if !source.is_null() {
            errs.push(FieldError::invalid_rendered(
                "spec",
                path_value,
                "may not be specified when dataSourceRef.namespace is specified",
            ));
        }
    } else if !source.is_null()
        && !reference.is_null()
        && (source["apiGroup"] != reference["apiGroup"]
            || source["kind"] != reference["kind"]
            || source["name"] != reference["name"])
    {
        errs.push(FieldError::invalid_rendered(
            "spec",
            path_value,
            "must match dataSourceRef",
        ));
    }
    errs
}

/// `ValidatePersistentVolumeClaimSpec` at `spec`: the access modes, the selector, the storage
/// request (shared with claim templates), the class names and the data sources.
fn claim_spec(spec: &Value, allow_any_group: bool) -> Vec<FieldError> {
    let mut errs = claim_spec_rules(spec, "spec");
    // The class name is checked before the volume mode.
    let at = errs
        .iter()
        .position(|e| e.field == "spec.volumeMode")
        .unwrap_or(errs.len());
    let class = class_name_rules("spec.storageClassName", &spec["storageClassName"]);
    errs.splice(at..at, class);
    errs.extend(data_sources_rules(spec, allow_any_group));
    errs.extend(class_name_rules(
        "spec.volumeAttributesClassName",
        &spec["volumeAttributesClassName"],
    ));
    errs
}

/// The rules of a claim's create, on its spec as `PrepareForCreate` normalises its data sources.
pub(crate) fn claim_rules(new: &Value) -> Vec<FieldError> {
    let mut spec = new["spec"].clone();
    normalize_data_sources(&mut spec, None);
    claim_spec(&spec, false)
}

/// The internal `PersistentVolumeClaimSpec` as `json.MarshalIndent(spec, "", " ")` writes it
/// (Go field names, struct order, nil as `null`), for the immutability refusal's diff.
fn internal_claim_spec(spec: &Value) -> String {
    let or_null = |v: &Value| if v.is_null() { Value::Null } else { v.clone() };
    let reference = |r: &Value, with_namespace: bool| {
        if !r.is_object() {
            return Value::Null;
        }
        let mut out = Map::new();
        out.insert("APIGroup".into(), or_null(&r["apiGroup"]));
        out.insert("Kind".into(), json!(r["kind"].as_str().unwrap_or_default()));
        out.insert("Name".into(), json!(r["name"].as_str().unwrap_or_default()));
        if with_namespace {
            out.insert("Namespace".into(), or_null(&r["namespace"]));
        }
        Value::Object(out)
    };
    let resources = &spec["resources"];
    let fields = [
        ("AccessModes", or_null(&spec["accessModes"])),
        ("Selector", or_null(&spec["selector"])),
        (
            "Resources",
            json!({"Limits": or_null(&resources["limits"]), "Requests": or_null(&resources["requests"])}),
        ),
        (
            "VolumeName",
            json!(spec["volumeName"].as_str().unwrap_or_default()),
        ),
        ("StorageClassName", or_null(&spec["storageClassName"])),
        ("VolumeMode", or_null(&spec["volumeMode"])),
        ("DataSource", reference(&spec["dataSource"], false)),
        ("DataSourceRef", reference(&spec["dataSourceRef"], true)),
        (
            "VolumeAttributesClassName",
            or_null(&spec["volumeAttributesClassName"]),
        ),
    ];
    let fields: Vec<(&str, String)> = fields.iter().map(|(k, v)| (*k, pretty(v))).collect();
    go_struct(&fields)
}

/// A Go struct as `json.MarshalIndent(v, "", " ")` writes it: `fields` are (Go name, value
/// already written so) pairs in declaration order.
fn go_struct(fields: &[(&str, String)]) -> String {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!(" \"{k}\": {}", v.replace('\n', "\n ")))
        .collect();
    format!("{{\n{}\n}}", body.join(",\n"))
}

/// The internal `PersistentVolumeSource`'s fields: (JSON name, Go name), in declaration order.
const INTERNAL_SOURCES: &[(&str, &str)] = &[
    ("gcePersistentDisk", "GCEPersistentDisk"),
    ("awsElasticBlockStore", "AWSElasticBlockStore"),
    ("hostPath", "HostPath"),
    ("glusterfs", "Glusterfs"),
    ("nfs", "NFS"),
    ("rbd", "RBD"),
    ("quobyte", "Quobyte"),
    ("iscsi", "ISCSI"),
    ("flexVolume", "FlexVolume"),
    ("cinder", "Cinder"),
    ("cephfs", "CephFS"),
    ("fc", "FC"),
    ("flocker", "Flocker"),
    ("azureFile", "AzureFile"),
    ("vsphereVolume", "VsphereVolume"),
    ("azureDisk", "AzureDisk"),
    ("photonPersistentDisk", "PhotonPersistentDisk"),
    ("portworxVolume", "PortworxVolume"),
    ("scaleIO", "ScaleIO"),
    ("local", "Local"),
    ("storageos", "StorageOS"),
    ("csi", "CSI"),
];

/// The internal `PersistentVolumeSource` as `json.MarshalIndent` writes it, for the
/// immutability refusal's diff; `None` for a source whose internal struct is not reproduced
/// here (all but hostPath, nfs, local and csi).
fn internal_volume_source(source: &Value) -> Option<String> {
    let text = |v: &Value, k: &str| pretty(&json!(v[k].as_str().unwrap_or_default()));
    let flag = |v: &Value, k: &str| pretty(&json!(v[k].as_bool().unwrap_or(false)));
    let or_null = |v: &Value| {
        if v.is_null() {
            "null".to_owned()
        } else {
            pretty(v)
        }
    };
    let secret = |v: &Value| {
        if v.is_object() {
            go_struct(&[
                ("Name", text(v, "name")),
                ("Namespace", text(v, "namespace")),
            ])
        } else {
            "null".to_owned()
        }
    };
    let mut fields = Vec::new();
    for (key, go) in INTERNAL_SOURCES {
        let v = &source[*key];
        let rendered = match *key {
            _ if v.is_null() => "null".to_owned(),
            "hostPath" => go_struct(&[("Path", text(v, "path")), ("Type", or_null(&v["type"]))]),
            "nfs" => go_struct(&[
                ("Server", text(v, "server")),
                ("Path", text(v, "path")),
                ("ReadOnly", flag(v, "readOnly")),
            ]),
            "local" => go_struct(&[("Path", text(v, "path")), ("FSType", or_null(&v["fsType"]))]),
            "csi" => go_struct(&[
                ("Driver", text(v, "driver")),
                ("VolumeHandle", text(v, "volumeHandle")),
                ("ReadOnly", flag(v, "readOnly")),
                ("FSType", text(v, "fsType")),
                ("VolumeAttributes", or_null(&v["volumeAttributes"])),
                (
                    "ControllerPublishSecretRef",
                    secret(&v["controllerPublishSecretRef"]),
                ),
                ("NodeStageSecretRef", secret(&v["nodeStageSecretRef"])),
                ("NodePublishSecretRef", secret(&v["nodePublishSecretRef"])),
                (
                    "ControllerExpandSecretRef",
                    secret(&v["controllerExpandSecretRef"]),
                ),
                ("NodeExpandSecretRef", secret(&v["nodeExpandSecretRef"])),
            ]),
            _ => return None,
        };
        fields.push((*go, rendered));
    }
    Some(go_struct(&fields))
}

/// `spec` without nulls, empty lists and empty maps (`Semantic.DeepEqual` holds nil and empty
/// equal).
fn semantic(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| {
                    !v.is_null()
                        && !v.as_array().is_some_and(Vec::is_empty)
                        && !v.as_object().is_some_and(Map::is_empty)
                })
                .map(|(k, v)| (k.clone(), semantic(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

/// The storage request of a claim (zero when absent).
fn requested(obj: &Value) -> Quantity {
    quantity(&obj["spec"]["resources"]["requests"]["storage"])
}

/// `ValidatePersistentVolumeClaimUpdate` and the strategy's `ValidatePersistentVolumeClaim`
/// before it (the spec's rules are reported twice, as kube-apiserver reports them).
pub(crate) fn claim_update_rules(new: &Value, old: &Value) -> Vec<FieldError> {
    let allow_any_group = !old["spec"]["dataSource"]["apiGroup"].is_null()
        || !old["spec"]["dataSourceRef"]["apiGroup"].is_null();
    let mut errs = claim_spec(&new["spec"], allow_any_group);
    errs.extend(claim_spec(&new["spec"], allow_any_group));
    let annotation = |o: &Value| o["metadata"]["annotations"][BETA_CLASS_ANNOTATION].clone();
    let (new_annotation, old_annotation) = (annotation(new), annotation(old));
    let mut new_spec = new["spec"].clone();
    let mut old_spec = old["spec"].clone();
    if old_spec["volumeName"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        old_spec["volumeName"] = new_spec["volumeName"].clone();
    }
    let old_class = &old["spec"]["storageClassName"];
    let new_class = &new["spec"]["storageClassName"];
    let from_annotation = old_annotation.is_string()
        && old_class.is_null()
        && new_class.is_string()
        && *new_class == old_annotation
        && (new_annotation.is_null() || new_annotation == old_annotation);
    if from_annotation {
        new_spec["storageClassName"] = Value::Null;
    } else {
        if new_annotation.as_str().unwrap_or_default()
            != old_annotation.as_str().unwrap_or_default()
        {
            errs.push(FieldError::invalid(
                &format!("metadata.annotations.{BETA_CLASS_ANNOTATION}"),
                new_annotation.as_str().unwrap_or_default(),
                "field is immutable",
            ));
        }
        if new_class.is_string()
            && old_class.is_null()
            && (old_annotation.is_null() || *new_class == old_annotation)
        {
            new_spec["storageClassName"] = old_class.clone();
        }
    }
    let bound = new["status"]["phase"] == "Bound";
    if bound {
        if new_spec["resources"]["requests"].is_object() {
            new_spec["resources"]["requests"]["storage"] =
                old["spec"]["resources"]["requests"]["storage"].clone();
        }
        new_spec["volumeAttributesClassName"] = old_spec["volumeAttributesClassName"].clone();
    }
    if semantic(&new_spec) != semantic(&old_spec) {
        errs.push(FieldError::forbidden(
            "spec",
            &format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                unified_diff(&internal_claim_spec(&old_spec), &internal_claim_spec(&new_spec))
            ),
        ));
    }
    let capacity = quantity(&old["status"]["capacity"]["storage"]);
    // RecoverVolumeExpansionFailure is GA in 1.34: a request may shrink down to the capacity.
    if requested(new) < requested(old) && requested(new) <= capacity {
        errs.push(FieldError::forbidden(
            "spec.resources.requests.storage",
            "field can not be less than status.capacity",
        ));
    }
    if new["spec"]["volumeMode"] != old["spec"]["volumeMode"] {
        errs.push(FieldError::invalid_value(
            "volumeMode",
            &new["spec"]["volumeMode"],
            "field is immutable",
        ));
    }
    let (new_vac, old_vac) = (
        &new["spec"]["volumeAttributesClassName"],
        &old["spec"]["volumeAttributesClassName"],
    );
    if new_vac != old_vac && !old["status"]["currentVolumeAttributesClassName"].is_null() {
        if new_vac.is_null() {
            errs.push(FieldError::forbidden(
                "spec.volumeAttributesClassName",
                "update to nil is forbidden when status.currentVolumeAttributesClassName is not nil",
            ));
        } else if new_vac == "" {
            errs.push(FieldError::forbidden(
                "spec.volumeAttributesClassName",
                "update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil",
            ));
        }
    }
    errs
}

/// `validateBasicResource` of each quantity of the list at `path`.
fn basic_resource_rules(list: &Value, path: &str) -> Vec<FieldError> {
    let zero = quantity(&Value::Null);
    list.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let q = Quantity::of_json(value)?;
            (q < zero).then(|| {
                FieldError::invalid_rendered(
                    &format!("{path}[{name}]"),
                    &q.canonical(),
                    "must be a valid resource quantity",
                )
            })
        })
        .collect()
}

/// `ValidatePersistentVolumeClaimStatusUpdate` (the ported part), metadata aside.
pub(crate) fn claim_status_rules(new: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if items(&new["spec"]["accessModes"]).is_empty() {
        errs.push(FieldError::required("Spec.accessModes"));
    }
    errs.extend(basic_resource_rules(
        &new["status"]["capacity"],
        "status.capacity",
    ));
    errs
}

/// `GetWarningsForPersistentVolumeClaim`.
pub(crate) fn claim_warnings(obj: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    if obj["metadata"]["annotations"]
        .get(BETA_CLASS_ANNOTATION)
        .is_some()
    {
        warnings.push(format!(
            "metadata.annotations[{BETA_CLASS_ANNOTATION}]: deprecated since v1.8; use \"storageClassName\" attribute instead"
        ));
    }
    for list in ["requests", "limits"] {
        if let Some(value) = obj["spec"]["resources"][list]["storage"].as_str()
            && is_fractional(value)
        {
            warnings.push(format!(
                "spec.resources.{list}[storage]: fractional byte value {value:?} is invalid, must be an integer"
            ));
        }
    }
    warnings
}

// Volumes.

/// The volume sources of a `PersistentVolumeSpec`, in the order `ValidatePersistentVolumeSpec`
/// checks them, with the path its "more than 1" refusal names.
const VOLUME_SOURCES: &[(&str, &str)] = &[
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

/// The sources whose mount options the annotation may carry (`checkMountOption`).
const MOUNTABLE: &[&str] = &[
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "iscsi",
    "cinder",
    "cephfs",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
];

/// `validatePathNoBacksteps`.
fn no_backsteps(path: &str, value: &str) -> Vec<FieldError> {
    if value.split('/').any(|part| part == "..") {
        vec![FieldError::invalid(path, value, "must not contain '..'")]
    } else {
        Vec::new()
    }
}

/// `supportedHostPathTypes`, sorted.
const HOST_PATH_TYPES: &[&str] = &[
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];

/// The ported sources' own rules (`validateHostPathVolumeSource`, `validateLocalVolumeSource`,
/// `validateNFSVolumeSource`, `validateCSIPersistentVolumeSource`).
fn source_rules(key: &str, source: &Value) -> Vec<FieldError> {
    let path = format!("spec.{key}");
    let text = |k: &str| source[k].as_str().unwrap_or_default().to_owned();
    let mut errs = Vec::new();
    match key {
        "hostPath" | "local" => {
            let value = text("path");
            if value.is_empty() {
                return vec![FieldError::required(&format!("{path}.path"))];
            }
            errs.extend(no_backsteps(&format!("{path}.path"), &value));
            if key == "hostPath"
                && let Some(t) = source["type"].as_str()
                && !HOST_PATH_TYPES.contains(&t)
            {
                errs.push(unsupported(&format!("{path}.type"), t, HOST_PATH_TYPES));
            }
        }
        "nfs" => {
            if text("server").is_empty() {
                errs.push(FieldError::required(&format!("{path}.server")));
            }
            let value = text("path");
            if value.is_empty() {
                errs.push(FieldError::required(&format!("{path}.path")));
            }
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    &format!("{path}.path"),
                    &value,
                    "must be an absolute path",
                ));
            }
        }
        "csi" => {
            let driver = text("driver");
            let at = format!("{path}.driver");
            if driver.is_empty() {
                errs.push(FieldError::required(&at));
            }
            if driver.len() > 63 {
                errs.push(FieldError::too_long(&at, 63));
            }
            for m in is_dns1123_subdomain(&driver.to_lowercase()) {
                errs.push(FieldError::invalid(&at, &driver, &m));
            }
            if text("volumeHandle").is_empty() {
                errs.push(FieldError::required(&format!("{path}.volumeHandle")));
            }
        }
        _ => {}
    }
    errs
}

/// `ValidateNodeSelectorRequirement` (invalid label values refused).
fn requirement_rules(req: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let values = items(&req["values"]);
    match req["operator"].as_str().unwrap_or_default() {
        "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required_because(
            &format!("{path}.values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
            &format!("{path}.values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if values.len() != 1 => errs.push(FieldError::required_because(
            &format!("{path}.values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        other => errs.push(FieldError::invalid(
            &format!("{path}.operator"),
            other,
            "not a valid selector operator",
        )),
    }
    errs.extend(label_name_rules(
        &format!("{path}.key"),
        req["key"].as_str().unwrap_or_default(),
    ));
    for (i, value) in values.iter().enumerate() {
        let value = value.as_str().unwrap_or_default();
        for m in is_valid_label_value(value) {
            errs.push(FieldError::invalid(
                &format!("{path}.values[{i}]"),
                value,
                &m,
            ));
        }
    }
    errs
}

/// `ValidateNodeFieldSelectorRequirement`.
fn field_requirement_rules(req: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let values = items(&req["values"]);
    match req["operator"].as_str().unwrap_or_default() {
        "In" | "NotIn" => {
            if values.len() != 1 {
                errs.push(FieldError::required_because(
                    &format!("{path}.values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                ));
            }
        }
        other => errs.push(FieldError::invalid(
            &format!("{path}.operator"),
            other,
            "not a valid selector operator",
        )),
    }
    let key = req["key"].as_str().unwrap_or_default();
    if key == "metadata.name" {
        for (i, value) in values.iter().enumerate() {
            let value = value.as_str().unwrap_or_default();
            for m in is_dns1123_subdomain(value) {
                errs.push(FieldError::invalid(
                    &format!("{path}.values[{i}]"),
                    value,
                    &m,
                ));
            }
        }
    } else {
        errs.push(FieldError::invalid(
            &format!("{path}.key"),
            key,
            "not a valid field selector key",
        ));
    }
    errs
}

/// `validateVolumeNodeAffinity` at `spec.nodeAffinity`.
fn node_affinity_rules(affinity: &Value) -> Vec<FieldError> {
    let path = "spec.nodeAffinity.required";
    let required = &affinity["required"];
    if required.is_null() {
        return vec![FieldError::required_because(
            path,
            "must specify required node constraints",
        )];
    }
    let terms_path = format!("{path}.nodeSelectorTerms");
    let terms = items(&required["nodeSelectorTerms"]);
    if terms.is_empty() {
        return vec![FieldError::required_because(
            &terms_path,
            "must have at least one node selector term",
        )];
    }
    let mut errs = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        let at = format!("{terms_path}[{i}]");
        for (j, req) in items(&term["matchExpressions"]).iter().enumerate() {
            errs.extend(requirement_rules(
                req,
                &format!("{at}.matchExpressions[{j}]"),
            ));
        }
        for (j, req) in items(&term["matchFields"]).iter().enumerate() {
            errs.extend(field_requirement_rules(
                req,
                &format!("{at}.matchFields[{j}]"),
            ));
        }
    }
    errs
}

/// `ValidatePersistentVolumeSpec` (not inline) and `checkMountOption`.
pub(crate) fn volume_rules(new: &Value) -> Vec<FieldError> {
    let spec = &new["spec"];
    let mut errs = Vec::new();
    let modes = items(&spec["accessModes"]);
    if modes.is_empty() {
        errs.push(FieldError::required("spec.accessModes"));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in modes {
        let mode = mode.as_str().unwrap_or_default();
        if !ACCESS_MODES.contains(&mode) {
            errs.push(unsupported("spec.accessModes", mode, ACCESS_MODES));
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        errs.push(FieldError::forbidden(
            "spec.accessModes",
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let capacity = spec["capacity"].as_object();
    if capacity.is_none_or(Map::is_empty) {
        errs.push(FieldError::required("spec.capacity"));
    }
    if capacity.is_none_or(|c| !c.contains_key("storage") || c.len() > 1) {
        errs.push(FieldError::not_supported(
            "spec.capacity",
            &spec["capacity"],
            &["storage".to_owned()],
        ));
    }
    let zero = quantity(&Value::Null);
    for (name, value) in capacity.into_iter().flatten() {
        let at = format!("spec.capacity[{name}]");
        errs.extend(basic_resource_rules(
            &json!({ name: value }),
            "spec.capacity",
        ));
        if let Some(q) = Quantity::of_json(value)
            && q <= zero
        {
            errs.push(FieldError::invalid(
                &at,
                &q.canonical(),
                "must be greater than zero",
            ));
        }
    }
    if let Some(policy) = spec["persistentVolumeReclaimPolicy"]
        .as_str()
        .filter(|p| !p.is_empty())
        && !matches!(policy, "Delete" | "Recycle" | "Retain")
    {
        errs.push(unsupported(
            "spec.persistentVolumeReclaimPolicy",
            policy,
            &["Delete", "Recycle", "Retain"],
        ));
    }
    let affinity = spec["nodeAffinity"].is_object();
    if affinity {
        errs.extend(node_affinity_rules(&spec["nodeAffinity"]));
    }
    let mut count = 0;
    for (key, named) in VOLUME_SOURCES {
        if spec[*key].is_null() {
            continue;
        }
        // A flexVolume is counted without the check, as upstream counts it.
        if count > 0 && *key != "flexVolume" {
            errs.push(FieldError::forbidden(
                &format!("spec.{named}"),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        errs.extend(source_rules(key, &spec[*key]));
        if *key == "local" && !affinity {
            errs.push(FieldError::required_because(
                "spec.nodeAffinity",
                "Local volume requires node affinity",
            ));
        }
    }
    if count == 0 {
        errs.push(FieldError::required_because(
            "spec",
            "must specify a volume type",
        ));
    }
    let host_root = spec["hostPath"]["path"]
        .as_str()
        .is_some_and(|p| !p.is_empty() && p.split('/').all(|s| s.is_empty() || s == "."));
    if host_root && spec["persistentVolumeReclaimPolicy"] == "Recycle" {
        errs.push(FieldError::forbidden(
            "spec.persistentVolumeReclaimPolicy",
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    errs.extend(class_name_rules(
        "spec.storageClassName",
        &spec["storageClassName"],
    ));
    if let Some(mode) = spec["volumeMode"].as_str()
        && !matches!(mode, "Block" | "Filesystem")
    {
        errs.push(unsupported(
            "spec.volumeMode",
            mode,
            &["Block", "Filesystem"],
        ));
    }
    if let Some(class) = spec["volumeAttributesClassName"].as_str() {
        if class.is_empty() {
            errs.push(FieldError::required_because(
                "spec.volumeAttributesClassName",
                "an empty string is disallowed",
            ));
        } else {
            errs.extend(class_name_rules(
                "spec.volumeAttributesClassName",
                &json!(class),
            ));
        }
        if spec["csi"].is_null() {
            errs.push(FieldError::required_because(
                "spec.csi",
                "has to be specified when using volumeAttributesClassName",
            ));
        }
    }
    let mountable = MOUNTABLE.iter().any(|k| !spec[*k].is_null());
    if !mountable
        && new["metadata"]["annotations"]
            .get(MOUNT_OPTIONS_ANNOTATION)
            .is_some()
    {
        errs.push(FieldError::forbidden(
            &format!("metadata.annotations.{MOUNT_OPTIONS_ANNOTATION}"),
            "may not specify mount options for this volume type",
        ));
    }
    errs
}

/// The persistent volume source of a spec: every field but the spec's own.
fn volume_source(spec: &Value) -> Value {
    let own = [
        "capacity",
        "accessModes",
        "claimRef",
        "persistentVolumeReclaimPolicy",
        "storageClassName",
        "mountOptions",
        "volumeMode",
        "nodeAffinity",
        "volumeAttributesClassName",
    ];
    let mut source = spec.as_object().cloned().unwrap_or_default();
    source.retain(|k, _| !own.contains(&k.as_str()));
    Value::Object(source)
}

/// `ValidatePersistentVolumeUpdate` and the strategy's rules before it (the spec's rules are
/// reported twice, as kube-apiserver reports them). The source's change is refused with
/// upstream's message and its diff of the internal source (without the diff for sources whose
/// internal struct is not reproduced).
pub(crate) fn volume_update_rules(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = volume_rules(new);
    errs.extend(volume_rules(new));
    let mut new_source = volume_source(&new["spec"]);
    let old_source = volume_source(&old["spec"]);
    if old_source["csi"].is_object()
        && old_source["csi"]["controllerExpandSecretRef"].is_null()
        && new_source["csi"].is_object()
        && let Some(csi) = new_source["csi"].as_object_mut()
    {
        csi.remove("controllerExpandSecretRef");
    }
    if semantic(&new_source) != semantic(&old_source) {
        let diff = internal_volume_source(&old_source)
            .zip(internal_volume_source(&new_source))
            .map(|(old, new)| unified_diff(&old, &new))
            .unwrap_or_default();
        errs.push(FieldError::forbidden(
            "spec.persistentvolumesource",
            &format!("spec.persistentvolumesource is immutable after creation\n{diff}"),
        ));
    }
    if new["spec"]["volumeMode"] != old["spec"]["volumeMode"] {
        errs.push(FieldError::invalid_value(
            "volumeMode",
            &new["spec"]["volumeMode"],
            "field is immutable",
        ));
    }
    let (new_vac, old_vac) = (
        &new["spec"]["volumeAttributesClassName"],
        &old["spec"]["volumeAttributesClassName"],
    );
    if new_vac != old_vac && !old_vac.is_null() && new_vac.is_null() {
        errs.push(FieldError::forbidden(
            "spec.volumeAttributesClassName",
            "update from non-nil value to nil is forbidden",
        ));
    }
    errs
}

/// `GetWarningsForPersistentVolume` (its node-label deprecations aside).
pub(crate) fn volume_warnings(obj: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    for (key, message) in [
        (
            BETA_CLASS_ANNOTATION,
            "deprecated since v1.8; use \"storageClassName\" attribute instead",
        ),
        (
            MOUNT_OPTIONS_ANNOTATION,
            "deprecated since v1.31; use \"mountOptions\" attribute instead",
        ),
    ] {
        if obj["metadata"]["annotations"].get(key).is_some() {
            warnings.push(format!("metadata.annotations[{key}]: {message}"));
        }
    }
    let spec = &obj["spec"];
    if spec["persistentVolumeReclaimPolicy"] == "Recycle" {
        warnings.push("spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.".to_owned());
    }
    for (key, named, message) in [
        (
            "cephfs",
            "cephfs",
            "deprecated in v1.28, non-functional in v1.31+",
        ),
        (
            "photonPersistentDisk",
            "photonPersistentDisk",
            "deprecated in v1.11, non-functional in v1.16+",
        ),
        (
            "scaleIO",
            "scaleIO",
            "deprecated in v1.16, non-functional in v1.22+",
        ),
        (
            "storageos",
            "storageOS",
            "deprecated in v1.22, non-functional in v1.25+",
        ),
        (
            "glusterfs",
            "glusterfs",
            "deprecated in v1.25, non-functional in v1.26+",
        ),
        (
            "rbd",
            "rbd",
            "deprecated in v1.28, non-functional in v1.31+",
        ),
    ] {
        if !spec[key].is_null() {
            warnings.push(format!("spec.{named}: {message}"));
        }
    }
    warnings
}

// Storage classes.

/// `maxProvisionerParameterLen` and `maxProvisionerParameterSize`.
const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_SIZE: usize = 256 * 1024;

/// `ValidateStorageClass` (its metadata aside; `allowedTopologies` not ported).
pub(crate) fn class_rules(new: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let provisioner = new["provisioner"].as_str().unwrap_or_default();
    if provisioner.is_empty() {
        errs.push(FieldError::required("provisioner"));
    } else {
        errs.extend(label_name_rules("provisioner", &provisioner.to_lowercase()));
    }
    if let Some(params) = new["parameters"].as_object() {
        if params.len() > MAX_PARAMETERS {
            errs.push(FieldError::too_long("parameters", MAX_PARAMETERS));
        } else {
            let mut size = 0;
            for (k, v) in params {
                if k.is_empty() {
                    errs.push(FieldError::invalid(
                        "parameters",
                        k,
                        "field can not be empty.",
                    ));
                }
                size += k.len() + v.as_str().map_or(0, str::len);
            }
            if size > MAX_PARAMETERS_SIZE {
                errs.push(FieldError::too_long("parameters", MAX_PARAMETERS_SIZE));
            }
        }
    }
    if let Some(policy) = new["reclaimPolicy"].as_str().filter(|p| !p.is_empty())
        && !matches!(policy, "Delete" | "Retain")
    {
        errs.push(unsupported("reclaimPolicy", policy, &["Delete", "Retain"]));
    }
    match new["volumeBindingMode"].as_str() {
        None => errs.push(FieldError::required("volumeBindingMode")),
        Some("Immediate" | "WaitForFirstConsumer") => {}
        Some(mode) => errs.push(unsupported(
            "volumeBindingMode",
            mode,
            &["Immediate", "WaitForFirstConsumer"],
        )),
    }
    errs
}

/// `ValidateStorageClassUpdate` (its metadata aside).
pub(crate) fn class_update_rules(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = class_rules(new);
    let params = |o: &Value| {
        o["parameters"]
            .as_object()
            .filter(|p| !p.is_empty())
            .cloned()
    };
    if params(new) != params(old) {
        errs.push(FieldError::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if new["provisioner"] != old["provisioner"] {
        errs.push(FieldError::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    if new["reclaimPolicy"] != old["reclaimPolicy"] {
        errs.push(FieldError::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    if new["volumeBindingMode"] != old["volumeBindingMode"] {
        errs.push(FieldError::invalid_value(
            "volumeBindingMode",
            &new["volumeBindingMode"],
            "field is immutable",
        ));
    }
    errs
}

/// `IsDefaultAnnotation`: whether the class is marked the default one.
pub(crate) fn is_default_class(obj: &Value) -> bool {
    let annotations = &obj["metadata"]["annotations"];
    annotations[DEFAULT_CLASS_ANNOTATION] == "true"
        || annotations[BETA_DEFAULT_CLASS_ANNOTATION] == "true"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_defaulted_and_its_request_checked() {
        let mut claim = json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1024Mi"}}}});
        default_claim(&mut claim).unwrap();
        assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
        assert_eq!(claim["status"]["phase"], "Pending");
        assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "1Gi");
        assert!(claim_rules(&claim).is_empty());
        let mut empty = json!({"spec": {"accessModes": ["ReadWriteOnce"]}});
        default_claim(&mut empty).unwrap();
        assert_eq!(
            claim_rules(&empty)[0].to_string(),
            "spec.resources[storage]: Required value"
        );
    }

    #[test]
    fn the_claim_spec_diff_names_go_fields() {
        let text = internal_claim_spec(&json!({"accessModes": ["ReadWriteOnce"]}));
        assert!(
            text.starts_with(
                "{\n \"AccessModes\": [\n  \"ReadWriteOnce\"\n ],\n \"Selector\": null,"
            )
        );
        assert!(text.ends_with(" \"VolumeAttributesClassName\": null\n}"));
    }

    #[test]
    fn a_volume_needs_exactly_one_source() {
        let mut pv = json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"}}});
        default_volume(&mut pv).unwrap();
        let errs: Vec<String> = volume_rules(&pv).iter().map(ToString::to_string).collect();
        assert_eq!(errs, ["spec: Required value: must specify a volume type"]);
        pv["spec"]["hostPath"] = json!({"path": "/a", "type": ""});
        pv["spec"]["nfs"] = json!({"server": "s", "path": "/b"});
        let errs: Vec<String> = volume_rules(&pv).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            ["spec.nfs: Forbidden: may not specify more than 1 volume type"]
        );
    }
}
