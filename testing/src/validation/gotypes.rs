//! Decoding of built-in kinds into their Go types, as kube-apiserver's JSON decoder does before
//! anything else sees the object (`sigs.k8s.io/json`, `encoding/json` semantics):
//!
//! - a value of the wrong JSON type is a 400, `json: cannot unmarshal number into Go struct
//!   field ObjectMeta.metadata.labels of type string` (the first one in the document; the
//!   struct is the innermost one holding the field, the path is the JSON path without indices;
//!   a number that is not a valid integer of the field's size is quoted: `number 1.5`);
//! - a time that does not parse is a 400 with Go's `time.Parse` error, a time that does is
//!   stored as the encoder writes it (UTC);
//! - fields the type does not declare are dropped and reported (`spec.holder`), for the
//!   `fieldValidation` directive to warn about or refuse;
//! - the encoder's view of what was decoded: a `null` field, an empty map or list of an
//!   `omitempty` field are dropped; a `null` string in a map or list is `""`.
//!
//! Only the kinds described here are decoded this way (ConfigMap, Secret, Lease,
//! ServiceAccount and the RBAC kinds; of events.k8s.io Events only which fields there are;
//! the kinds whose Go types [`from_definition`] reads from their OpenAPI definitions, as the
//! apps/v1 workloads with their pod templates), each kind's strategy naming its type
//! (`crate::kinds::Strategy::go_type`); unknown `metadata` fields are left to `schema::pruning`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::Value;

use crate::go::json;
use crate::go::time::{self as gotime, Layout};
use crate::openapi::definitions::{Definitions, V2_REF_PREFIX};

/// A Go type as the JSON decoder sees it.
pub(super) enum Ty {
    Str,
    Bool,
    I32,
    I64,
    /// `[]byte`: a base64 string.
    Bytes,
    /// `metav1.Time` or `metav1.MicroTime`.
    Time(Layout),
    /// `map[string]T`.
    Map(&'static Ty),
    /// `[]T`.
    Slice(&'static Ty),
    Struct(&'static Struct),
    /// Anything (`RawExtension`, types not described): not decoded.
    Any,
}

/// A Go struct: its name and JSON fields (`name`, type, `omitempty`).
pub(crate) struct Struct {
    name: &'static str,
    fields: &'static [(&'static str, Ty, bool)],
    /// Whether fields it does not declare are kept (ObjectMeta's are pruned elsewhere).
    open: bool,
}

impl Ty {
    /// The type as Go's `%v` of a `reflect.Type` names it in an error.
    fn go_name(&self) -> String {
        match self {
            Ty::Str | Ty::Time(_) => "string".into(),
            Ty::Bool => "bool".into(),
            Ty::I32 => "int32".into(),
            Ty::I64 => "int64".into(),
            Ty::Bytes => "[]uint8".into(),
            Ty::Map(t) => format!("map[string]{}", t.go_name()),
            Ty::Slice(t) => format!("[]{}", t.go_name()),
            Ty::Struct(s) => format!("v1.{}", s.name),
            Ty::Any => "interface {}".into(),
        }
    }
}

const fn field(name: &'static str, ty: Ty) -> (&'static str, Ty, bool) {
    (name, ty, true)
}

static OWNER_REFERENCE: Struct = Struct {
    name: "OwnerReference",
    fields: &[
        ("apiVersion", Ty::Str, false),
        ("kind", Ty::Str, false),
        ("name", Ty::Str, false),
        ("uid", Ty::Str, false),
        field("controller", Ty::Bool),
        field("blockOwnerDeletion", Ty::Bool),
    ],
    open: false,
};

static OBJECT_META: Struct = Struct {
    name: "ObjectMeta",
    fields: &[
        field("name", Ty::Str),
        field("generateName", Ty::Str),
        field("namespace", Ty::Str),
        field("selfLink", Ty::Str),
        field("uid", Ty::Str),
        field("resourceVersion", Ty::Str),
        field("generation", Ty::I64),
        field("creationTimestamp", Ty::Time(Layout::Time)),
        field("deletionTimestamp", Ty::Time(Layout::Time)),
        field("deletionGracePeriodSeconds", Ty::I64),
        field("labels", Ty::Map(&Ty::Str)),
        field("annotations", Ty::Map(&Ty::Str)),
        field("ownerReferences", Ty::Slice(&Ty::Struct(&OWNER_REFERENCE))),
        field("finalizers", Ty::Slice(&Ty::Str)),
        field("managedFields", Ty::Any),
    ],
    open: true,
};

/// `apiVersion`, `kind` and `metadata`, the start of every kind's fields.
macro_rules! envelope {
    ($($rest:expr),* $(,)?) => {
        &[
            field("apiVersion", Ty::Str),
            field("kind", Ty::Str),
            field("metadata", Ty::Struct(&OBJECT_META)),
            $($rest),*
        ]
    };
}

pub(crate) static CONFIG_MAP: Struct = Struct {
    name: "ConfigMap",
    fields: envelope![
        field("immutable", Ty::Bool),
        field("data", Ty::Map(&Ty::Str)),
        field("binaryData", Ty::Map(&Ty::Bytes)),
    ],
    open: false,
};

pub(crate) static SECRET: Struct = Struct {
    name: "Secret",
    fields: envelope![
        field("immutable", Ty::Bool),
        field("data", Ty::Map(&Ty::Bytes)),
        field("stringData", Ty::Map(&Ty::Str)),
        field("type", Ty::Str),
    ],
    open: false,
};

static LEASE_SPEC: Struct = Struct {
    name: "LeaseSpec",
    fields: &[
        field("holderIdentity", Ty::Str),
        field("leaseDurationSeconds", Ty::I32),
        field("acquireTime", Ty::Time(Layout::MicroTime)),
        field("renewTime", Ty::Time(Layout::MicroTime)),
        field("leaseTransitions", Ty::I32),
        field("strategy", Ty::Str),
        field("preferredHolder", Ty::Str),
    ],
    open: false,
};

pub(crate) static LEASE: Struct = Struct {
    name: "Lease",
    fields: envelope![("spec", Ty::Struct(&LEASE_SPEC), false)],
    open: false,
};

static OBJECT_REFERENCE: Struct = Struct {
    name: "ObjectReference",
    fields: &[
        field("kind", Ty::Str),
        field("namespace", Ty::Str),
        field("name", Ty::Str),
        field("uid", Ty::Str),
        field("apiVersion", Ty::Str),
        field("resourceVersion", Ty::Str),
        field("fieldPath", Ty::Str),
    ],
    open: false,
};

static LOCAL_OBJECT_REFERENCE: Struct = Struct {
    name: "LocalObjectReference",
    fields: &[field("name", Ty::Str)],
    open: false,
};

pub(crate) static SERVICE_ACCOUNT: Struct = Struct {
    name: "ServiceAccount",
    fields: envelope![
        field("secrets", Ty::Slice(&Ty::Struct(&OBJECT_REFERENCE))),
        field(
            "imagePullSecrets",
            Ty::Slice(&Ty::Struct(&LOCAL_OBJECT_REFERENCE))
        ),
        field("automountServiceAccountToken", Ty::Bool),
    ],
    open: false,
};

static POLICY_RULE: Struct = Struct {
    name: "PolicyRule",
    fields: &[
        ("verbs", Ty::Slice(&Ty::Str), false),
        field("apiGroups", Ty::Slice(&Ty::Str)),
        field("resources", Ty::Slice(&Ty::Str)),
        field("resourceNames", Ty::Slice(&Ty::Str)),
        field("nonResourceURLs", Ty::Slice(&Ty::Str)),
    ],
    open: false,
};

pub(crate) static ROLE: Struct = Struct {
    name: "Role",
    fields: envelope![("rules", Ty::Slice(&Ty::Struct(&POLICY_RULE)), false)],
    open: false,
};

pub(crate) static CLUSTER_ROLE: Struct = Struct {
    name: "ClusterRole",
    fields: envelope![
        ("rules", Ty::Slice(&Ty::Struct(&POLICY_RULE)), false),
        field("aggregationRule", Ty::Any),
    ],
    open: false,
};

static SUBJECT: Struct = Struct {
    name: "Subject",
    fields: &[
        ("kind", Ty::Str, false),
        field("apiGroup", Ty::Str),
        ("name", Ty::Str, false),
        field("namespace", Ty::Str),
    ],
    open: false,
};

static ROLE_REF: Struct = Struct {
    name: "RoleRef",
    fields: &[
        ("apiGroup", Ty::Str, false),
        ("kind", Ty::Str, false),
        ("name", Ty::Str, false),
    ],
    open: false,
};

pub(crate) static ROLE_BINDING: Struct = Struct {
    name: "RoleBinding",
    fields: envelope![
        field("subjects", Ty::Slice(&Ty::Struct(&SUBJECT))),
        ("roleRef", Ty::Struct(&ROLE_REF), false),
    ],
    open: false,
};

pub(crate) static CLUSTER_ROLE_BINDING: Struct = Struct {
    name: "ClusterRoleBinding",
    fields: envelope![
        field("subjects", Ty::Slice(&Ty::Struct(&SUBJECT))),
        ("roleRef", Ty::Struct(&ROLE_REF), false),
    ],
    open: false,
};

/// An events.k8s.io/v1 `Event`: its fields are only named (their values are the events
/// module's to decode and check), so that one it does not declare is found.
pub(crate) static EVENT: Struct = Struct {
    name: "Event",
    fields: envelope![
        ("eventTime", Ty::Any, false),
        ("series", Ty::Any, false),
        ("reportingController", Ty::Any, false),
        ("reportingInstance", Ty::Any, false),
        ("action", Ty::Any, false),
        ("reason", Ty::Any, false),
        ("regarding", Ty::Any, false),
        ("related", Ty::Any, false),
        ("note", Ty::Any, false),
        ("type", Ty::Any, false),
        ("deprecatedSource", Ty::Any, false),
        ("deprecatedFirstTimestamp", Ty::Any, false),
        ("deprecatedLastTimestamp", Ty::Any, false),
        ("deprecatedCount", Ty::Any, false),
    ],
    open: false,
};

/// The Go struct of the built-in definition `name` (`io.k8s.api.apps.v1.Deployment`), read from
/// its OpenAPI v2 definition: every property a JSON field of the Go type (the generator writes
/// one per field), typed by its schema (`integer`/`int32` an `int32`, `string`/`byte` a
/// `[]byte`, `$ref`s to `Time` and `MicroTime` times, to `Quantity`, `IntOrString` and
/// `RawExtension` values decoded by their own unmarshallers, here not at all), `omitempty`
/// unless the definition lists it `required` (the generator's rule for `+optional`). Built once
/// per call: a strategy keeps the result in a static.
///
/// # Panics
/// If the definitions do not hold `name` (a kind missing from `testing/openapi/trim.py`'s
/// roots), which the definitions' tests rule out.
pub(crate) fn from_definition(name: &str) -> &'static Struct {
    let defs = Definitions::builtin();
    let mut building = BTreeSet::new();
    match definition_ty(defs, name, &mut building) {
        Ty::Struct(s) => s,
        _ => panic!("{name} is not a struct among the built-in definitions"),
    }
}

/// The decoder's type of the definition `name`.
fn definition_ty(defs: &Definitions, name: &str, building: &mut BTreeSet<String>) -> Ty {
    match name {
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" => return Ty::Struct(&OBJECT_META),
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => return Ty::Time(Layout::Time),
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => return Ty::Time(Layout::MicroTime),
        _ => {}
    }
    let Some(def) = defs.get(name) else {
        return Ty::Any;
    };
    let Some(props) = def.get("properties").and_then(Value::as_object) else {
        return Ty::Any;
    };
    if !building.insert(name.to_owned()) {
        // A recursive type (none in the workloads' tree): its inner occurrence is not decoded.
        return Ty::Any;
    }
    let required: Vec<&str> = def["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<(&'static str, Ty, bool)> = props
        .iter()
        .map(|(field, schema)| {
            let ty = schema_ty(defs, schema, building);
            let omit_empty = !required.contains(&field.as_str());
            (leak(field), ty, omit_empty)
        })
        .collect();
    building.remove(name);
    let short = name.rsplit('.').next().unwrap_or(name);
    Ty::Struct(Box::leak(Box::new(Struct {
        name: leak(short),
        fields: Box::leak(fields.into_boxed_slice()),
        open: false,
    })))
}

/// The decoder's type of a property's schema.
fn schema_ty(defs: &Definitions, schema: &Value, building: &mut BTreeSet<String>) -> Ty {
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix(V2_REF_PREFIX))
    {
        return definition_ty(defs, name, building);
    }
    match (schema["type"].as_str(), schema["format"].as_str()) {
        (Some("string"), Some("byte")) => Ty::Bytes,
        (Some("string"), Some("date-time")) => Ty::Time(Layout::Time),
        (Some("string"), None) => Ty::Str,
        (Some("boolean"), _) => Ty::Bool,
        (Some("integer"), Some("int32")) => Ty::I32,
        (Some("integer"), _) => Ty::I64,
        (Some("array"), _) => Ty::Slice(Box::leak(Box::new(schema_ty(
            defs,
            &schema["items"],
            building,
        )))),
        (Some("object"), _) if schema["additionalProperties"].is_object() => Ty::Map(Box::leak(
            Box::new(schema_ty(defs, &schema["additionalProperties"], building)),
        )),
        _ => Ty::Any,
    }
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// Decodes `obj` as the Go type `ty`. Returns the fields it does not declare (dropped), or the
/// decoder's message.
pub(super) fn decode(ty: &'static Struct, obj: &mut Value) -> Result<Vec<String>, String> {
    let mut walk = Walk::default();
    walk.decode_struct(ty, obj)?;
    match walk.first_type_error {
        Some(e) => Err(e),
        None => Ok(walk.unknown),
    }
}

#[derive(Default)]
struct Walk {
    unknown: Vec<String>,
    first_type_error: Option<String>,
    /// Where the walk is, as the decoder names a field: `spec.containers.name` (no indices).
    go_path: String,
    /// Where the walk is, with indices and keys: `spec.containers[0].name`.
    path: String,
}

/// Appends `.name` (`name` at the root) to `path`; returns the length to truncate back to.
fn descend(path: &mut String, name: &str) -> usize {
    let len = path.len();
    if len > 0 {
        path.push('.');
    }
    path.push_str(name);
    len
}

impl Walk {
    /// Records a type error (the first one is answered).
    fn type_error(&mut self, found: &str, owner: &str, ty: &Ty) {
        let go_path = &self.go_path;
        self.first_type_error.get_or_insert_with(|| {
            json::unmarshal_field_error(found, &format!("{owner}.{go_path}"), &ty.go_name())
        });
    }

    /// Decodes an object of struct `s` at the walk's place.
    fn decode_struct(&mut self, s: &'static Struct, value: &mut Value) -> Result<(), String> {
        let Some(map) = value.as_object_mut() else {
            return Ok(());
        };
        // Dropped once the walk over the map is done: undeclared fields, and omitted empties.
        let mut dropped: Vec<String> = Vec::new();
        for (key, child) in map.iter_mut() {
            let Some((_, ty, omit_empty)) = s.fields.iter().find(|(name, _, _)| name == key) else {
                if !s.open {
                    dropped.push(key.clone());
                    let at = descend(&mut self.path, key);
                    self.unknown.push(self.path.clone());
                    self.path.truncate(at);
                }
                continue;
            };
            if child.is_null() {
                if *omit_empty {
                    dropped.push(key.clone());
                }
                continue;
            }
            let (go_at, at) = (
                descend(&mut self.go_path, key),
                descend(&mut self.path, key),
            );
            let decoded = self.decode_value(ty, child, s.name);
            self.go_path.truncate(go_at);
            self.path.truncate(at);
            decoded?;
            let empty = match child {
                Value::Object(o) => o.is_empty() && matches!(ty, Ty::Map(_)),
                Value::Array(a) => a.is_empty(),
                _ => false,
            };
            if empty && *omit_empty {
                dropped.push(key.clone());
            }
        }
        for key in dropped {
            map.remove(&key);
        }
        Ok(())
    }

    /// Decodes one non-null value of type `ty`, a field of struct `owner`, at the walk's place.
    fn decode_value(&mut self, ty: &Ty, value: &mut Value, owner: &str) -> Result<(), String> {
        let found = json::unmarshal_type(value);
        match (ty, &mut *value) {
            (Ty::Any, _) => {}
            (Ty::Str | Ty::Bytes, Value::String(_)) | (Ty::Bool, Value::Bool(_)) => {}
            (Ty::I32 | Ty::I64, Value::Number(n)) => {
                let fits = match ty {
                    Ty::I32 => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
                    _ => n.as_i64().is_some(),
                };
                if !fits {
                    let literal = format!("number {n}");
                    self.type_error(&literal, owner, ty);
                }
            }
            (Ty::Time(layout), Value::String(text)) => {
                *text = gotime::normalise(text, *layout)?;
            }
            (Ty::Map(item), Value::Object(map)) => {
                for (k, v) in map.iter_mut() {
                    if v.is_null() {
                        zero(item, v);
                    } else {
                        let at = self.path.len();
                        self.path.push('[');
                        self.path.push_str(k);
                        self.path.push(']');
                        let decoded = self.decode_value(item, v, owner);
                        self.path.truncate(at);
                        decoded?;
                    }
                }
            }
            (Ty::Slice(item), Value::Array(items)) => {
                for (i, v) in items.iter_mut().enumerate() {
                    if v.is_null() {
                        zero(item, v);
                    } else {
                        let at = self.path.len();
                        let _ = write!(self.path, "[{i}]");
                        let decoded = self.decode_value(item, v, owner);
                        self.path.truncate(at);
                        decoded?;
                    }
                }
            }
            (Ty::Struct(s), Value::Object(_)) => self.decode_struct(s, value)?,
            _ => self.type_error(found, owner, ty),
        }
        Ok(())
    }
}

/// A `null` in a map or list decodes to the item type's zero value.
fn zero(ty: &Ty, value: &mut Value) {
    match ty {
        Ty::Str | Ty::Bytes => *value = Value::String(String::new()),
        Ty::Bool => *value = Value::Bool(false),
        Ty::I32 | Ty::I64 => *value = Value::from(0),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode_as(s: &'static Struct, mut obj: Value) -> (Result<Vec<String>, String>, Value) {
        let mut walk = Walk::default();
        let result =
            walk.decode_struct(s, &mut obj)
                .and_then(|()| match walk.first_type_error.take() {
                    Some(e) => Err(e),
                    None => Ok(walk.unknown),
                });
        (result, obj)
    }

    #[test]
    fn type_errors_name_the_innermost_struct_and_the_path() {
        let (result, _) = decode_as(
            &CONFIG_MAP,
            json!({"metadata": {"name": "a", "labels": {"a": 1}}}),
        );
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
        );
        let (result, _) = decode_as(
            &CONFIG_MAP,
            json!({"metadata": {"ownerReferences": [{"controller": "true"}]}}),
        );
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool"
        );
        let (result, _) = decode_as(&LEASE, json!({"spec": {"leaseDurationSeconds": 1.5}}));
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"
        );
    }

    #[test]
    fn definitions_give_the_go_types_of_workloads() {
        let deployment = from_definition("io.k8s.api.apps.v1.Deployment");
        let (result, _) = decode_as(deployment, json!({"spec": {"replicas": "3"}}));
        assert_eq!(
            result.unwrap_err(),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let (result, obj) = decode_as(
            deployment,
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "a", "image": "b", "imagePolicy": "x", "ports": [{"containerPort": 80, "name": null}]}]}}}}),
        );
        assert_eq!(
            result.unwrap(),
            vec!["spec.template.spec.containers[0].imagePolicy".to_string()]
        );
        assert_eq!(
            obj["spec"]["template"]["spec"]["containers"][0],
            json!({"name": "a", "image": "b", "ports": [{"containerPort": 80}]})
        );
    }

    #[test]
    fn unknown_fields_are_dropped_and_empty_fields_omitted() {
        let (result, obj) = decode_as(
            &CONFIG_MAP,
            json!({"metadata": {"name": "a", "labels": {}}, "other": 1, "data": {"k": null}, "binaryData": null}),
        );
        assert_eq!(result.unwrap(), vec!["other".to_string()]);
        assert_eq!(obj, json!({"metadata": {"name": "a"}, "data": {"k": ""}}));
    }
}
