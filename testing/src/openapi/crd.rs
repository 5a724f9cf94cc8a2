//! The OpenAPI definitions of a kind served from a CustomResourceDefinition version, as
//! apiextensions-apiserver's OpenAPI builder publishes them
//! (`pkg/controller/openapi/builder/builder.go`): the version's schema with `apiVersion`,
//! `kind` and `metadata` (a reference to `ObjectMeta`) added, the same for every embedded
//! resource, the kind named `<reversed group>.<version>.<Kind>` with its
//! `x-kubernetes-group-version-kind`, and the list kind beside it.
//!
//! For OpenAPI v2 the schema is first reduced as `ToStructuralOpenAPIV2` and
//! `StripValueValidations` do (v2 cannot say nullable, and kubectl's old client-side validation
//! must not reject what the server accepts); a schema preserving unknown fields at its root is
//! published as a bare object there.

use serde_json::{Map, Value, json};

use super::definitions::V2_REF_PREFIX;
use crate::resources::ResourceInfo;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

/// `metav1.TypeMeta`'s field descriptions (its swagger docs).
const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
/// `PartialObjectMetadata`'s and `PartialObjectMetadataList`'s `metadata` docs.
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DOC: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
/// What `addEmbeddedProperties` says of an embedded resource's `apiVersion` and `kind`.
const EMBEDDED_API_VERSION_DOC: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const EMBEDDED_KIND_DOC: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The keywords `StripValueValidations` keeps for v2: the structure, docs and extensions.
const V2_KEPT: &[&str] = &[
    "type",
    "format",
    "description",
    "properties",
    "items",
    "additionalProperties",
    "required",
    "default",
    "nullable",
];

/// `gvkToModelName`: `demo.kubeward.dev`, `v1`, `Rollout` → `dev.kubeward.demo.v1.Rollout`.
pub(super) fn model_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.rsplit('.').collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The kind's and its list's definitions (references in v2 form, `#/definitions/`).
pub(super) fn definitions(info: &ResourceInfo, v2: bool) -> Vec<(String, Value)> {
    let name = model_name(&info.group, &info.version, &info.kind);
    let list_kind = &info.list_kind;
    let mut kind = kube_native(info.schema.as_ref(), v2);
    kind["x-kubernetes-group-version-kind"] =
        json!([{"group": info.group, "version": info.version, "kind": info.kind}]);
    let list = json!({
        "description": format!("{list_kind} is a list of {}", info.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"description": API_VERSION_DOC, "type": "string"},
            "kind": {"description": KIND_DOC, "type": "string"},
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", info.plural),
                "type": "array",
                "items": {"$ref": format!("{V2_REF_PREFIX}{name}")},
            },
            "metadata": {"$ref": format!("{V2_REF_PREFIX}{LIST_META}"), "description": LIST_METADATA_DOC},
        },
        "x-kubernetes-group-version-kind": [{"group": info.group, "version": info.version, "kind": list_kind}],
    });
    vec![
        (name.clone(), kind),
        (model_name(&info.group, &info.version, list_kind), list),
    ]
}

/// `buildKubeNative`.
fn kube_native(schema: Option<&Value>, v2: bool) -> Value {
    let Some(schema) = schema else {
        return json!({"type": "object"});
    };
    if v2 && preserves_unknown_fields(schema) {
        return json!({"type": "object"});
    }
    let mut out = if v2 {
        to_structural_v2(schema)
    } else {
        schema.clone()
    };
    add_embedded_properties(&mut out, v2);
    if let Some(props) = properties_mut(&mut out) {
        props.insert("metadata".into(), metadata_ref());
        props.insert(
            "apiVersion".into(),
            json!({"description": API_VERSION_DOC, "type": "string"}),
        );
        props.insert(
            "kind".into(),
            json!({"description": KIND_DOC, "type": "string"}),
        );
    }
    out
}

fn metadata_ref() -> Value {
    json!({"$ref": format!("{V2_REF_PREFIX}{OBJECT_META}"), "description": METADATA_DOC})
}

fn preserves_unknown_fields(schema: &Value) -> bool {
    schema["x-kubernetes-preserve-unknown-fields"] == json!(true)
}

fn properties_mut(schema: &mut Value) -> Option<&mut Map<String, Value>> {
    schema
        .as_object_mut()?
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()
}

/// The child schemas of a schema node: properties, items, additionalProperties.
fn children_mut(schema: &mut Value) -> Vec<&mut Value> {
    let Value::Object(map) = schema else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" => {
                if let Value::Object(props) = value {
                    out.extend(props.values_mut());
                }
            }
            "items" | "additionalProperties" if value.is_object() => out.push(value),
            _ => {}
        }
    }
    out
}

/// `addEmbeddedProperties`: embedded resources get `apiVersion`, `kind` (both required) and
/// `metadata` (not in v2 where they also preserve unknown fields).
fn add_embedded_properties(schema: &mut Value, v2: bool) {
    children_mut(schema)
        .into_iter()
        .for_each(|c| add_embedded_properties(c, v2));
    if v2 && preserves_unknown_fields(schema) {
        return;
    }
    if schema["x-kubernetes-embedded-resource"] != json!(true) {
        return;
    }
    let Some(props) = properties_mut(schema) else {
        return;
    };
    props.insert(
        "apiVersion".into(),
        json!({"description": EMBEDDED_API_VERSION_DOC, "type": "string"}),
    );
    props.insert(
        "kind".into(),
        json!({"description": EMBEDDED_KIND_DOC, "type": "string"}),
    );
    props.insert("metadata".into(), metadata_ref());
    let mut required: Vec<Value> = schema["required"].as_array().cloned().unwrap_or_default();
    for field in ["kind", "apiVersion"] {
        if !required.iter().any(|r| r == field) {
            required.push(json!(field));
        }
    }
    schema["required"] = Value::Array(required);
}

/// `StripValueValidations` then `ToStructuralOpenAPIV2`: value validations go; a nullable node
/// loses its type and structure (v2 has no nullable), as does one preserving unknown fields; a
/// nullable property is no longer required.
fn to_structural_v2(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| V2_KEPT.contains(&k.as_str()) || k.starts_with("x-kubernetes-"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(Value::Object(props)) = out.get_mut("properties") {
        for v in props.values_mut() {
            *v = to_structural_v2(v);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(v) = out.get_mut(key).filter(|v| v.is_object()) {
            *v = to_structural_v2(v);
        }
    }
    let nullable_props: Vec<String> = map
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, s)| s["nullable"] == json!(true))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Array(required)) = out.get_mut("required") {
        required.retain(|r| !nullable_props.iter().any(|p| r == p));
        if required.is_empty() {
            out.remove("required");
        }
    }
    if out.remove("nullable") == Some(json!(true)) {
        out.remove("type");
        out.remove("items");
        out.remove("properties");
    }
    if out.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true)) {
        out.remove("items");
        out.remove("properties");
        if out.get("type") == Some(&json!("object")) {
            out.remove("type");
        }
    }
    if out.get("type") == Some(&json!("array")) && !out.contains_key("items") {
        out.remove("type");
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::crd::infos_from_crd;

    fn rollout_info(schema: Value) -> ResourceInfo {
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "rollouts.demo.kubeward.dev"},
            "spec": {
                "group": "demo.kubeward.dev",
                "scope": "Namespaced",
                "names": {"plural": "rollouts", "singular": "rollout", "kind": "Rollout", "listKind": "RolloutCollection"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}}],
            },
        });
        infos_from_crd(&crd).expect("valid CRD").remove(0)
    }

    #[test]
    fn kind_and_list_are_named_and_tagged_like_upstream() {
        let info = rollout_info(json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 0}}},
        }}));
        let defs = definitions(&info, false);
        assert_eq!(defs[0].0, "dev.kubeward.demo.v1.Rollout");
        // The list kind is the CRD's spec.names.listKind.
        assert_eq!(defs[1].0, "dev.kubeward.demo.v1.RolloutCollection");
        assert_eq!(
            defs[1].1["x-kubernetes-group-version-kind"][0]["kind"],
            "RolloutCollection"
        );
        let kind = &defs[0].1;
        assert_eq!(
            kind["x-kubernetes-group-version-kind"],
            json!([{"group": "demo.kubeward.dev", "version": "v1", "kind": "Rollout"}])
        );
        assert_eq!(
            kind["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert_eq!(
            kind["properties"]["spec"]["properties"]["replicas"]["minimum"],
            0
        );
        assert_eq!(
            defs[1].1["properties"]["items"]["items"]["$ref"],
            "#/definitions/dev.kubeward.demo.v1.Rollout"
        );
        // v2 strips value validations.
        let v2 = definitions(&info, true);
        assert!(
            v2[0].1["properties"]["spec"]["properties"]["replicas"]
                .get("minimum")
                .is_none()
        );
    }

    #[test]
    fn v2_reduces_nullable_and_preserved_nodes_and_embedded_resources_get_type_meta() {
        let info = rollout_info(json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "string", "nullable": true},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"x": {"type": "string"}}},
            "tmpl": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
        }}));
        let v2 = &definitions(&info, true)[0].1;
        assert_eq!(v2["properties"]["a"], json!({}));
        assert!(v2.get("required").is_none());
        assert_eq!(
            v2["properties"]["free"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        let tmpl = &v2["properties"]["tmpl"];
        assert_eq!(tmpl["required"], json!(["kind", "apiVersion"]));
        assert!(tmpl["properties"]["metadata"]["$ref"].is_string());
        // A schema preserving unknown fields at its root is a bare object in v2 only.
        let info =
            rollout_info(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
        assert_eq!(definitions(&info, true)[0].1["type"], "object");
        assert!(definitions(&info, true)[0].1.get("properties").is_none());
        assert!(definitions(&info, false)[0].1["properties"]["metadata"].is_object());
    }
}
