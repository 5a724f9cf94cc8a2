//! apiextensions-apiserver `pkg/apiserver/schema/defaulting/validation.go` `ValidateDefaults`:
//! every `default` outside of object metadata must survive pruning unchanged, carry the
//! envelope of an embedded resource where it is one (the root counts as one), and be valid
//! against its own node's schema, worded as the custom resource validator words it.

use serde_json::Value;

use super::key;
use crate::schema::field::{self, FieldError};
use crate::schema::structural::Structural;
use crate::schema::{pruning, validation};
use crate::validation::names::is_dns1035_label;

/// The problems of the defaults in `s` (the root schema) at `path`.
pub(super) fn validate(s: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk(s, path, true, false, &mut errs);
    errs
}

fn walk(s: &Value, path: &str, root: bool, inside_meta: bool, errs: &mut Vec<FieldError>) {
    let embedded = root || s["x-kubernetes-embedded-resource"].as_bool() == Some(true);
    let inside_meta = inside_meta && !embedded;
    if let Some(default) = s.get("default").filter(|d| !d.is_null())
        && !inside_meta
    {
        default_errors(s, default, embedded, &field::child(path, "default"), errs);
    }
    // additionalProperties are not followed: defaults are forbidden there.
    if s["items"].is_object() {
        walk(
            &s["items"],
            &field::child(path, "items"),
            false,
            inside_meta,
            errs,
        );
    }
    for (k, v) in s["properties"].as_object().into_iter().flatten() {
        let meta = embedded && matches!(k.as_str(), "metadata" | "apiVersion" | "kind");
        walk(
            v,
            &key(path, "properties", k),
            false,
            inside_meta || meta,
            errs,
        );
    }
}

/// The problems of one `default` of the node `s`, each stage only when the one before found
/// nothing (as upstream chains them).
fn default_errors(
    s: &Value,
    default: &Value,
    embedded: bool,
    at: &str,
    errs: &mut Vec<FieldError>,
) {
    let mut node = s.clone();
    if embedded && let Some(map) = node.as_object_mut() {
        map.insert("x-kubernetes-embedded-resource".into(), Value::Bool(true));
    }
    let structural = Structural::from_json(&node);
    let mut pruned = default.clone();
    pruning::prune(&structural, "", &mut pruned);
    if pruned != *default {
        errs.push(FieldError::invalid_json(
            at,
            default,
            "must not have unknown fields",
        ));
    }
    if embedded && let Some(map) = default.as_object() {
        let envelope = envelope_errors(map, at);
        if !envelope.is_empty() {
            errs.extend(envelope);
            return;
        }
    }
    let mut found = Vec::new();
    validation::validate(&structural, "", default, None, &mut found);
    errs.extend(found.into_iter().map(|mut e| {
        e.field = if e.field.is_empty() {
            at.to_owned()
        } else if e.field.starts_with('[') {
            format!("{at}{}", e.field)
        } else {
            format!("{at}.{}", e.field)
        };
        e
    }));
}

/// objectmeta `validateEmbeddedResource`: `apiVersion` and `kind` required, strings, not empty;
/// the kind a DNS-1035 label in any case.
fn envelope_errors(map: &serde_json::Map<String, Value>, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for name in ["apiVersion", "kind"] {
        let path = field::child(at, name);
        match map.get(name) {
            None => errs.push(FieldError::required(&path)),
            Some(Value::String(s)) if s.is_empty() => {
                errs.push(FieldError::invalid(&path, "", "must not be empty"))
            }
            Some(Value::String(kind)) if name == "kind" => {
                let problems = is_dns1035_label(&kind.to_lowercase());
                if !problems.is_empty() {
                    errs.push(FieldError::invalid(
                        &path,
                        kind,
                        &format!(
                            "may have mixed case, but should otherwise match: {}",
                            problems.join(",")
                        ),
                    ));
                }
            }
            Some(Value::String(_)) => {}
            Some(other) => errs.push(FieldError::invalid_json(&path, other, "must be a string")),
        }
    }
    errs
}
