//! core/v1 PersistentVolumeClaims and PersistentVolumes (`pkg/registry/core/
//! {persistentvolumeclaim,persistentvolume}/strategy.go`) and storage.k8s.io/v1 StorageClasses
//! (`pkg/registry/storage/storageclass/strategy.go`): their Go types, defaulting, rules and
//! warnings ([`crate::validation::storage`]), status isolation both ways (a create resets the
//! status; a main write keeps the stored status; a status write keeps the stored spec), a
//! volume's phase transition time, the `StorageObjectInUseProtection` admission's finalizers
//! (`plugin/pkg/admission/storage/storageobjectinuseprotection`), the `DefaultStorageClass`
//! admission ([`admit_claim_create`]) and the printers' columns
//! (`pkg/printers/internalversion/printers.go`: `printPersistentVolumeClaim`,
//! `printPersistentVolume`, `printStorageClass`). None of them keeps a generation.

use serde_json::{Value, json};

use super::deployment::description;
use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::object::rfc3339;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::store::{StorageKey, Store};
use crate::table::column::Column;
use crate::validation::quantity::Quantity;
use crate::validation::storage::{self, BETA_CLASS_ANNOTATION};
use crate::validation::{FieldError, gotypes, invalid};

/// The strategy of one of the kinds.
pub(crate) enum Storage {
    /// `persistentvolumeclaims`.
    Claims,
    /// `persistentvolumes`.
    Volumes,
    /// `storageclasses`.
    Classes,
}

/// The finalizers `StorageObjectInUseProtection` adds to new claims and volumes.
const CLAIM_FINALIZER: &str = "kubernetes.io/pvc-protection";
const VOLUME_FINALIZER: &str = "kubernetes.io/pv-protection";

/// The fields of each Go type that are structs rather than pointers.
const CLAIM_STRUCTS: &[&str] = &["spec", "spec.resources", "status"];
const VOLUME_STRUCTS: &[&str] = &["spec", "status"];
const CLASS_STRUCTS: &[&str] = &["metadata"];

static CLAIM: Typed = typed!("io.k8s.api.core.v1.PersistentVolumeClaim", CLAIM_STRUCTS);
static VOLUME: Typed = typed!("io.k8s.api.core.v1.PersistentVolume", VOLUME_STRUCTS);
static CLASS: Typed = typed!("io.k8s.api.storage.v1.StorageClass", CLASS_STRUCTS);

/// Appends `finalizer` to the object's finalizers unless it holds it.
fn add_finalizer(obj: &mut Value, finalizer: &str) {
    let meta = &mut obj["metadata"];
    match meta["finalizers"].as_array_mut() {
        Some(list) if list.iter().any(|f| f == finalizer) => {}
        Some(list) => list.push(json!(finalizer)),
        None => meta["finalizers"] = json!([finalizer]),
    }
}

/// `GetAccessModesAsString`: the modes' abbreviations, deduplicated, in a fixed order.
fn access_modes(modes: &Value) -> String {
    let list = modes.as_array().map(Vec::as_slice).unwrap_or_default();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| list.iter().any(|m| m == mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// `GetPersistentVolumeClaimClass` and `GetPersistentVolumeClass`: the beta annotation, else
/// `spec.storageClassName`.
fn class_of(obj: &Value) -> Value {
    match obj["metadata"]["annotations"].get(BETA_CLASS_ANNOTATION) {
        Some(class) => class.clone(),
        None => json!(obj["spec"]["storageClassName"].as_str().unwrap_or_default()),
    }
}

/// A `Quantity`'s `String()`: its canonical form, `0` when absent.
fn quantity_cell(value: &Value) -> Value {
    json!(Quantity::of_json(value).map_or_else(|| "0".to_owned(), |q| q.canonical()))
}

/// A phase cell: `Terminating` for an object being deleted.
fn phase_cell(obj: &Value) -> Value {
    if obj["metadata"]["deletionTimestamp"].is_null() {
        json!(obj["status"]["phase"].as_str().unwrap_or_default())
    } else {
        json!("Terminating")
    }
}

/// A cell showing the string at `value`, `<unset>` when absent.
fn unset_cell(value: &Value) -> Value {
    json!(value.as_str().unwrap_or("<unset>"))
}

/// The printers' descriptions of `field` of the core/v1 definition `name`.
fn core(name: &str, field: &str) -> String {
    description(&format!("io.k8s.api.core.v1.{name}"), field)
}

fn claim_columns() -> Vec<Column> {
    let bound = |o: &Value| {
        !o["spec"]["volumeName"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
    };
    vec![
        Column::name(),
        Column::new("Status", "string", 0, Box::new(|o, _| phase_cell(o)))
            .described(&core("PersistentVolumeClaimStatus", "phase")),
        Column::new(
            "Volume",
            "string",
            0,
            Box::new(|o, _| json!(o["spec"]["volumeName"].as_str().unwrap_or_default())),
        )
        .described(&core("PersistentVolumeClaimSpec", "volumeName")),
        Column::new(
            "Capacity",
            "string",
            0,
            Box::new(move |o, _| match bound(o) {
                true => quantity_cell(&o["status"]["capacity"]["storage"]),
                false => json!(""),
            }),
        )
        .described(&core("PersistentVolumeClaimStatus", "capacity")),
        Column::new(
            "Access Modes",
            "string",
            0,
            Box::new(move |o, _| match bound(o) {
                true => json!(access_modes(&o["status"]["accessModes"])),
                false => json!(""),
            }),
        )
        .described(&core("PersistentVolumeClaimStatus", "accessModes")),
        Column::new("StorageClass", "string", 0, Box::new(|o, _| class_of(o)))
            .described("StorageClass of the pvc"),
        Column::new(
            "VolumeAttributesClass",
            "string",
            0,
            Box::new(|o, _| unset_cell(&o["spec"]["volumeAttributesClassName"])),
        )
        .described("VolumeAttributesClass of the pvc"),
        Column::age(),
        Column::new(
            "VolumeMode",
            "string",
            1,
            Box::new(|o, _| unset_cell(&o["spec"]["volumeMode"])),
        )
        .described(&core("PersistentVolumeClaimSpec", "volumeMode")),
    ]
}

fn volume_columns() -> Vec<Column> {
    vec![
        Column::name(),
        Column::new(
            "Capacity",
            "string",
            0,
            Box::new(|o, _| quantity_cell(&o["spec"]["capacity"]["storage"])),
        )
        .described(&core("PersistentVolumeSpec", "capacity")),
        Column::new(
            "Access Modes",
            "string",
            0,
            Box::new(|o, _| json!(access_modes(&o["spec"]["accessModes"]))),
        )
        .described(&core("PersistentVolumeSpec", "accessModes")),
        Column::new(
            "Reclaim Policy",
            "string",
            0,
            Box::new(|o, _| {
                json!(
                    o["spec"]["persistentVolumeReclaimPolicy"]
                        .as_str()
                        .unwrap_or_default()
                )
            }),
        )
        .described(&core(
            "PersistentVolumeSpec",
            "persistentVolumeReclaimPolicy",
        )),
        Column::new("Status", "string", 0, Box::new(|o, _| phase_cell(o)))
            .described(&core("PersistentVolumeStatus", "phase")),
        Column::new(
            "Claim",
            "string",
            0,
            Box::new(|o, _| {
                let claim = &o["spec"]["claimRef"];
                json!(match claim.is_object() {
                    true => format!(
                        "{}/{}",
                        claim["namespace"].as_str().unwrap_or_default(),
                        claim["name"].as_str().unwrap_or_default()
                    ),
                    false => String::new(),
                })
            }),
        )
        .described(&core("PersistentVolumeSpec", "claimRef")),
        Column::new("StorageClass", "string", 0, Box::new(|o, _| class_of(o)))
            .described("StorageClass of the pv"),
        Column::new(
            "VolumeAttributesClass",
            "string",
            0,
            Box::new(|o, _| unset_cell(&o["spec"]["volumeAttributesClassName"])),
        )
        .described("VolumeAttributesClass of the pv"),
        Column::new(
            "Reason",
            "string",
            0,
            Box::new(|o, _| json!(o["status"]["reason"].as_str().unwrap_or_default())),
        )
        .described(&core("PersistentVolumeStatus", "reason")),
        Column::age(),
        Column::new(
            "VolumeMode",
            "string",
            1,
            Box::new(|o, _| unset_cell(&o["spec"]["volumeMode"])),
        )
        .described(&core("PersistentVolumeSpec", "volumeMode")),
    ]
}

fn class_columns() -> Vec<Column> {
    let doc = |field: &str| description("io.k8s.api.storage.v1.StorageClass", field);
    vec![
        Column::new(
            "Name",
            "string",
            0,
            Box::new(|o, _| {
                let name = o["metadata"]["name"].as_str().unwrap_or_default();
                json!(match storage::is_default_class(o) {
                    true => format!("{name} (default)"),
                    false => name.to_owned(),
                })
            }),
        )
        .described(&description(
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "name",
        )),
        Column::new(
            "Provisioner",
            "string",
            0,
            Box::new(|o, _| json!(o["provisioner"].as_str().unwrap_or_default())),
        )
        .described(&doc("provisioner")),
        Column::new(
            "ReclaimPolicy",
            "string",
            0,
            Box::new(|o, _| json!(o["reclaimPolicy"].as_str().unwrap_or("Delete"))),
        )
        .described(&doc("reclaimPolicy")),
        Column::new(
            "VolumeBindingMode",
            "string",
            0,
            Box::new(|o, _| json!(o["volumeBindingMode"].as_str().unwrap_or("Immediate"))),
        )
        .described(&doc("volumeBindingMode")),
        Column::new(
            "AllowVolumeExpansion",
            "string",
            0,
            Box::new(|o, _| json!(o["allowVolumeExpansion"].as_bool().unwrap_or(false))),
        )
        .described(&doc("allowVolumeExpansion")),
        Column::age(),
    ]
}

/// The `DefaultStorageClass` admission of a new claim
/// (`plugin/pkg/admission/storage/storageclass/setdefault`): a claim without a class (neither
/// `storageClassName` nor the beta annotation) is given the default StorageClass in `store`, the
/// newest if several are marked (then the first by name).
pub(crate) fn admit_claim_create(store: &Store, claim: &mut Value) {
    let has_class = claim["metadata"]["annotations"]
        .get(BETA_CLASS_ANNOTATION)
        .is_some()
        || !claim["spec"]["storageClassName"].is_null();
    if has_class {
        return;
    }
    let key = StorageKey {
        group: "storage.k8s.io".into(),
        resource: "storageclasses".into(),
    };
    let created = |c: &Value| {
        c["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let name = |c: &Value| {
        c["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let default = store
        .list(&key, None)
        .filter(|c| storage::is_default_class(c))
        .max_by(|a, b| {
            created(a)
                .cmp(&created(b))
                .then_with(|| name(b).cmp(&name(a)))
        });
    if let Some(class) = default {
        claim["spec"]["storageClassName"] = json!(name(class));
    }
}

impl Storage {
    fn typed(&self) -> &'static Typed {
        match self {
            Storage::Claims => &CLAIM,
            Storage::Volumes => &VOLUME,
            Storage::Classes => &CLASS,
        }
    }
}

impl Strategy for Storage {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*self.typed().go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        match self {
            Storage::Claims => storage::default_claim(obj),
            Storage::Volumes => storage::default_volume(obj),
            Storage::Classes => {
                storage::default_class(obj);
                Ok(())
            }
        }
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        match (self, old) {
            (Storage::Claims, None) => storage::claim_rules(new),
            (Storage::Volumes, None) => storage::volume_rules(new),
            (Storage::Classes, None) => storage::class_rules(new),
            (Storage::Classes, Some(old)) => storage::class_update_rules(new, old),
            // A claim's or a volume's update rules depend on the endpoint: `validate_update`.
            (_, Some(_)) => Vec::new(),
        }
    }

    fn update_revalidates_metadata(&self) -> bool {
        true
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        _name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        Ok(match self {
            Storage::Claims => storage::claim_warnings(obj),
            Storage::Volumes => storage::volume_warnings(obj),
            // Only allowedTopologies' deprecated node labels earn one, not ported.
            Storage::Classes => Vec::new(),
        })
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        _name: &str,
        new: &mut Value,
        old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        let status = subresource == Some("status");
        let errs = match self {
            Storage::Claims if status => storage::claim_status_rules(new),
            Storage::Claims => storage::claim_update_rules(new, old),
            // `ValidatePersistentVolumeStatusUpdate` checks only the metadata.
            Storage::Volumes if status => Vec::new(),
            Storage::Volumes => storage::volume_update_rules(new, old),
            Storage::Classes => Vec::new(),
        };
        invalid(info, new, errs)
    }

    fn warnings_on_update(&self, new: &Value, subresource: Option<&str>) -> Vec<String> {
        match (self, subresource) {
            // The status strategies give none.
            (_, Some("status")) | (Storage::Classes, _) => Vec::new(),
            (Storage::Claims, _) => storage::claim_warnings(new),
            (Storage::Volumes, _) => storage::volume_warnings(new),
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        match self {
            Storage::Claims => {
                storage::normalize_data_sources(&mut obj["spec"], None);
                add_finalizer(obj, CLAIM_FINALIZER);
            }
            Storage::Volumes => {
                // PrepareForCreate: Pending since now (the creation's time).
                let now = obj["metadata"]["creationTimestamp"].clone();
                obj["status"] = json!({"phase": "Pending", "lastPhaseTransitionTime": now});
                add_finalizer(obj, VOLUME_FINALIZER);
            }
            Storage::Classes => {}
        }
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value, subresource: Option<&str>) {
        if matches!(self, Storage::Claims) && subresource.is_none() {
            storage::normalize_data_sources(&mut new["spec"], Some(&old["spec"]));
        }
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        crate::object::keep_stored(new, old, "spec");
        if !matches!(self, Storage::Volumes) {
            return;
        }
        // The status strategy's phase transition time.
        let (phase, old_phase) = (&new["status"]["phase"], &old["status"]["phase"]);
        let at = &new["status"]["lastPhaseTransitionTime"];
        let old_at = &old["status"]["lastPhaseTransitionTime"];
        let moved = phase != old_phase;
        if !moved && at.is_null() {
            new["status"]["lastPhaseTransitionTime"] = old_at.clone();
        } else if moved && (at.is_null() || at == old_at) {
            new["status"]["lastPhaseTransitionTime"] = json!(rfc3339(jiff::Timestamp::now()));
        }
    }

    fn stored_form(&self, obj: &mut Value) {
        match self {
            Storage::Claims => {
                storage::null_api_groups(&mut obj["spec"]);
                if !obj["spec"]["resources"].is_object() {
                    obj["spec"]["resources"] = json!({});
                }
                if !obj["status"].is_object() {
                    obj["status"] = json!({});
                }
                // The decoder's defaulting of what storage gives back.
                if obj["status"]["phase"]
                    .as_str()
                    .unwrap_or_default()
                    .is_empty()
                {
                    obj["status"]["phase"] = json!("Pending");
                }
            }
            Storage::Volumes => {
                if !obj["status"].is_object() {
                    obj["status"] = json!({});
                }
                if obj["status"]["phase"]
                    .as_str()
                    .unwrap_or_default()
                    .is_empty()
                {
                    obj["status"]["phase"] = json!("Pending");
                }
            }
            Storage::Classes => {}
        }
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&self.typed().apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        match self {
            Storage::Claims => CLAIM_STRUCTS,
            Storage::Volumes => VOLUME_STRUCTS,
            Storage::Classes => CLASS_STRUCTS,
        }
    }

    fn returns_deleted_object(&self) -> bool {
        // `ReturnDeletedObject` of the three stores.
        true
    }

    fn field_labels(&self) -> &'static [&'static str] {
        match self {
            // DefaultMetaV1FieldSelectorConversion takes `metadata.namespace` of any kind; a
            // cluster-scoped object's is empty.
            Storage::Volumes | Storage::Classes => &["metadata.namespace"],
            Storage::Claims => &[],
        }
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        match self {
            Storage::Claims => claim_columns(),
            Storage::Volumes => volume_columns(),
            Storage::Classes => class_columns(),
        }
    }
}
