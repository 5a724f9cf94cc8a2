//! apimachinery `api/validation/objectmeta.go`: the metadata rules every object passes —
//! `generateName` and `name` by the kind's [`NameRule`], label keys and values, annotation keys
//! and their total size, owner references, finalizer names.
//!
//! Map entries are checked in key order (Go's map order is random, so any order is faithful).

use serde_json::Value;

use super::field::FieldError;
use super::names::{NameRule, is_qualified_name, is_valid_label_value};

/// `TotalAnnotationSizeLimitB`: the bytes of all annotation keys and values together.
pub(super) const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
/// `metav1.FinalizerOrphanDependents`.
const FINALIZER_ORPHAN: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
const FINALIZER_FOREGROUND: &str = "foregroundDeletion";

fn str_of<'a>(meta: &'a Value, field: &str) -> &'a str {
    meta.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn string_map(meta: &Value, field: &str) -> Vec<(String, String)> {
    meta.get(field)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// `ValidateObjectMetaAccessor` on a create (after name generation): `generateName` and `name`
/// by `rule`, then the rules shared with updates.
pub(crate) fn validate_create(obj: &Value, rule: NameRule) -> Vec<FieldError> {
    let meta = &obj["metadata"];
    let mut errs = Vec::new();
    let generate = str_of(meta, "generateName");
    if !generate.is_empty() {
        errs.extend(
            rule.check(generate, true)
                .iter()
                .map(|m| FieldError::invalid("metadata.generateName", generate, m)),
        );
    }
    let name = str_of(meta, "name");
    if name.is_empty() {
        errs.push(FieldError::required_because(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        errs.extend(
            rule.check(name, false)
                .iter()
                .map(|m| FieldError::invalid("metadata.name", name, m)),
        );
    }
    errs.extend(validate_common(meta));
    errs
}

/// The rules of `validateObjectMetaAccessorWithOptsCommon` that hold for creates and updates
/// alike (an update's `validateCommonFields` re-checks them on the new object).
pub(crate) fn validate_common(meta: &Value) -> Vec<FieldError> {
    let mut errs = validate_update(meta);
    errs.extend(validate_finalizers(meta));
    errs
}

/// What `ValidateObjectMetaAccessorUpdate` re-checks of the new metadata on every update:
/// labels, annotations and owner references (finalizer names are not among them).
pub(crate) fn validate_update(meta: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in string_map(meta, "labels") {
        errs.extend(
            is_qualified_name(&key)
                .iter()
                .map(|m| FieldError::invalid("metadata.labels", &key, m)),
        );
        errs.extend(
            is_valid_label_value(&value)
                .iter()
                .map(|m| FieldError::invalid("metadata.labels", &value, m)),
        );
    }
    let annotations = string_map(meta, "annotations");
    for (key, _) in &annotations {
        // QualifiedName, except that case does not matter.
        errs.extend(
            is_qualified_name(&key.to_lowercase())
                .iter()
                .map(|m| FieldError::invalid("metadata.annotations", key, m)),
        );
    }
    let size: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            "metadata.annotations",
            TOTAL_ANNOTATION_SIZE_LIMIT,
        ));
    }
    if let Some(refs) = meta.get("ownerReferences").and_then(Value::as_array) {
        errs.extend(validate_owner_references(refs));
    }
    errs
}

/// An owner reference as Go's encoder writes `metav1.OwnerReference` (struct field order), which
/// is how `field.Invalid` shows it.
fn render_owner_reference(r: &Value) -> String {
    let quoted = |field: &str| Value::String(str_of(r, field).to_owned()).to_string();
    let mut text = format!(
        "{{\"apiVersion\":{},\"kind\":{},\"name\":{},\"uid\":{}",
        quoted("apiVersion"),
        quoted("kind"),
        quoted("name"),
        quoted("uid"),
    );
    for flag in ["controller", "blockOwnerDeletion"] {
        if let Some(b) = r.get(flag).and_then(Value::as_bool) {
            text.push_str(&format!(",\"{flag}\":{b}"));
        }
    }
    text.push('}');
    text
}

/// `ValidateOwnerReferences`: each reference complete and not to a banned owner, at most one
/// controller.
fn validate_owner_references(refs: &[Value]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut first_controller: Option<String> = None;
    for r in refs {
        // Upstream validates every reference at the list's path, without an index.
        let path = "metadata.ownerReferences".to_owned();
        let api_version = str_of(r, "apiVersion");
        // `schema.FromAPIVersionAndKind`: an unparsable apiVersion has no version.
        let version = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [v] => *v,
            [_, v] => *v,
            _ => "",
        };
        if version.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{path}.apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        for field in ["kind", "name", "uid"] {
            if str_of(r, field).is_empty() {
                errs.push(FieldError::invalid(
                    &format!("{path}.{field}"),
                    "",
                    "must not be empty",
                ));
            }
        }
        // BannedOwners: core/v1 Events may own nothing.
        if api_version == "v1" && str_of(r, "kind") == "Event" {
            errs.push(FieldError::invalid_rendered(
                &path,
                &render_owner_reference(r),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let this = format!("{}/{}", str_of(r, "kind"), str_of(r, "name"));
            match &first_controller {
                Some(first) => {
                    let all: Vec<String> = refs.iter().map(render_owner_reference).collect();
                    errs.push(FieldError::invalid_rendered(
                        "metadata.ownerReferences",
                        &format!("[{}]", all.join(",")),
                        &format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {this}"
                        ),
                    ));
                }
                None => first_controller = Some(this),
            }
        }
    }
    errs
}

/// `ValidateFinalizers`: qualified names, and not both `orphan` and `foregroundDeletion`.
fn validate_finalizers(meta: &Value) -> Vec<FieldError> {
    let finalizers: Vec<&str> = meta
        .get("finalizers")
        .and_then(Value::as_array)
        .map(|fs| fs.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut errs = Vec::new();
    for f in &finalizers {
        errs.extend(
            is_qualified_name(f)
                .iter()
                .map(|m| FieldError::invalid("metadata.finalizers", f, m)),
        );
    }
    if finalizers.contains(&FINALIZER_ORPHAN) && finalizers.contains(&FINALIZER_FOREGROUND) {
        errs.push(FieldError::invalid_value(
            "metadata.finalizers",
            &Value::from(finalizers.clone()),
            &format!("finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set"),
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(errs: &[FieldError]) -> Vec<&str> {
        errs.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn generate_name_with_trailing_dash_is_a_valid_prefix() {
        let ok = json!({"metadata": {"name": "web-x7k2p", "generateName": "web-"}});
        assert!(validate_create(&ok, NameRule::DnsSubdomain).is_empty());
        let bad = json!({"metadata": {"name": "Web-x7k2p", "generateName": "Web-"}});
        assert_eq!(
            fields(&validate_create(&bad, NameRule::DnsSubdomain)),
            ["metadata.generateName", "metadata.name"]
        );
    }

    #[test]
    fn owner_references_render_in_go_field_order() {
        let r =
            json!({"uid": "u", "name": "n", "kind": "K", "apiVersion": "v1", "controller": true});
        assert_eq!(
            render_owner_reference(&r),
            r#"{"apiVersion":"v1","kind":"K","name":"n","uid":"u","controller":true}"#
        );
    }

    #[test]
    fn owner_reference_api_version_must_name_a_version() {
        let obj = json!({"metadata": {"name": "a", "ownerReferences": [
            {"apiVersion": "apps/", "kind": "K", "name": "n", "uid": "u"},
            {"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u"},
        ]}});
        let errs = validate_create(&obj, NameRule::DnsSubdomain);
        assert_eq!(
            fields(&errs),
            [
                "metadata.ownerReferences.apiVersion",
                "metadata.ownerReferences.apiVersion"
            ]
        );
    }
}
