//! apiextensions-apiserver `pkg/apiserver/schema/validation.go` and `complete.go`: the
//! invariants of a structural schema (`validateStructuralInvariants`), the rules of the value
//! validations under `anyOf`, `allOf`, `oneOf` and `not` (`validateNestedValueValidation`), and
//! the completeness of the root's value validations (`validateStructuralCompleteness`), read off
//! the schema's JSON.

use serde_json::{Value, json};

use super::{is_set, key, strings};
use crate::schema::field::{self, FieldError};

/// Where a node sits, which words the "type must not be empty" message.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Root,
    Item,
    Field,
}

/// `validateStructuralInvariants` of `s` at `path`.
pub(super) fn invariants(s: &Value, level: Level, path: &str, errs: &mut Vec<FieldError>) {
    let type_ = s["type"].as_str().unwrap_or_default();
    let flag = |k: &str| s[k].as_bool() == Some(true);
    if type_ == "array" && !s["items"].is_object() {
        errs.push(FieldError::required_because(
            &field::child(path, "items"),
            "must be specified",
        ));
    }
    if s["items"].is_object() {
        invariants(&s["items"], Level::Item, &field::child(path, "items"), errs);
    }
    if let Some(props) = s["properties"].as_object() {
        for (k, v) in props {
            invariants(v, Level::Field, &key(path, "properties", k), errs);
        }
    }
    let additional = &s["additionalProperties"];
    if !additional.is_null() {
        if level == Level::Root {
            errs.push(FieldError::forbidden(
                &field::child(path, "additionalProperties"),
                "must not be used at the root",
            ));
        }
        if additional.is_object() {
            invariants(
                additional,
                Level::Field,
                &field::child(path, "additionalProperties"),
                errs,
            );
        }
    }
    let (int_or_string, preserve, embedded) = (
        flag("x-kubernetes-int-or-string"),
        flag("x-kubernetes-preserve-unknown-fields"),
        flag("x-kubernetes-embedded-resource"),
    );
    if int_or_string && preserve {
        errs.push(FieldError::invalid_value(
            &field::child(path, "x-kubernetes-preserve-unknown-fields"),
            &json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid_value(
            &field::child(path, "x-kubernetes-embedded-resource"),
            &json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    value_validation(
        s,
        is_int_or_string_any_of(&s["anyOf"]),
        s["allOf"]
            .get(0)
            .is_some_and(|first| is_int_or_string_any_of(&first["anyOf"])),
        path,
        errs,
    );
    let check_metadata = level == Level::Root || embedded;
    let at_type = field::child(path, "type");
    if embedded && type_ != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errs.push(if type_.is_empty() {
            FieldError::required_because(&at_type, detail)
        } else {
            FieldError::invalid(&at_type, type_, detail)
        });
    } else if type_.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required_because(&at_type, detail));
    }
    if embedded && !additional.is_null() {
        errs.push(FieldError::forbidden(
            &field::child(path, "additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !type_.is_empty() && type_ != "object" {
        errs.push(FieldError::invalid(
            &at_type,
            type_,
            "must be object at the root",
        ));
    }
    for name in ["kind", "apiVersion"] {
        if let Some(prop) = s["properties"].get(name)
            && check_metadata
            && prop["type"].as_str() != Some("string")
        {
            errs.push(FieldError::invalid(
                &field::child(&key(path, "properties", name), "type"),
                prop["type"].as_str().unwrap_or_default(),
                "must be string",
            ));
        }
    }
    if let Some(metadata) = s["properties"].get("metadata") {
        let at = key(path, "properties", "metadata");
        if check_metadata && metadata["type"].as_str() != Some("object") {
            errs.push(FieldError::invalid(
                &field::child(&at, "type"),
                metadata["type"].as_str().unwrap_or_default(),
                "must be object",
            ));
        }
        if level == Level::Root && !only_names_in_metadata(metadata) {
            errs.push(FieldError::forbidden(
                &at,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    if embedded && !preserve && s["properties"].as_object().is_none_or(|p| p.is_empty()) {
        errs.push(FieldError::required_because(
            &field::child(path, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// `validateStructuralMetadataInvariants` at the root: the metadata schema may say nothing but
/// its `type`, a `default`, and the properties `name` and `generateName`.
fn only_names_in_metadata(metadata: &Value) -> bool {
    let Some(map) = metadata.as_object() else {
        return true;
    };
    map.iter()
        .filter(|(_, v)| is_set(v))
        .all(|(k, v)| match k.as_str() {
            "type" | "default" => true,
            "properties" => v
                .as_object()
                .is_some_and(|p| p.keys().all(|k| k == "name" || k == "generateName")),
            _ => false,
        })
}

/// `[{type: integer}, {type: string}]`, the `anyOf` of an int-or-string.
fn is_int_or_string_any_of(any_of: &Value) -> bool {
    *any_of == json!([{"type": "integer"}, {"type": "string"}])
}

/// `validateValueValidation`: the junctors of `v` and its `pattern`.
fn value_validation(
    v: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if !skip_any_of {
        for (i, nested) in v["anyOf"].as_array().into_iter().flatten().enumerate() {
            nested_value_validation(
                nested,
                false,
                &field::index(&field::child(path, "anyOf"), i),
                errs,
            );
        }
    }
    for (i, nested) in v["allOf"].as_array().into_iter().flatten().enumerate() {
        nested_value_validation(
            nested,
            skip_first_all_of_any_of && i == 0,
            &field::index(&field::child(path, "allOf"), i),
            errs,
        );
    }
    for (i, nested) in v["oneOf"].as_array().into_iter().flatten().enumerate() {
        nested_value_validation(
            nested,
            false,
            &field::index(&field::child(path, "oneOf"), i),
            errs,
        );
    }
    if v["not"].is_object() {
        nested_value_validation(&v["not"], false, &field::child(path, "not"), errs);
    }
    if let Some(pattern) = v["pattern"].as_str().filter(|p| !p.is_empty())
        && let Err(e) = regex::Regex::new(pattern)
    {
        errs.push(FieldError::invalid(
            &field::child(path, "pattern"),
            pattern,
            &format!(
                "must be a valid regular expression, but isn't: {}",
                go_regexp_error(pattern, &e)
            ),
        ));
    }
}

/// Go's `regexp.Compile` error for a pattern the `regex` crate refuses, where the two agree on
/// the cause (`error parsing regexp: missing closing ): `a(``); the crate's own text otherwise.
fn go_regexp_error(pattern: &str, e: &regex::Error) -> String {
    let text = e.to_string();
    if text.ends_with("error: unclosed group") {
        format!("error parsing regexp: missing closing ): `{pattern}`")
    } else if text.ends_with("error: unopened group") {
        format!("error parsing regexp: unexpected ): `{pattern}`")
    } else if text.ends_with("error: unclosed character class") {
        format!("error parsing regexp: missing closing ]: `{pattern}`")
    } else {
        text
    }
}

/// `validateNestedValueValidation`: what a schema under a junctor may not say.
fn nested_value_validation(v: &Value, skip_any_of: bool, path: &str, errs: &mut Vec<FieldError>) {
    value_validation(v, skip_any_of, false, path, errs);
    if v["items"].is_object() {
        nested_value_validation(&v["items"], false, &field::child(path, "items"), errs);
    }
    if let Some(props) = v["properties"].as_object() {
        for (k, p) in props {
            nested_value_validation(p, false, &key(path, "properties", k), errs);
        }
    }
    let forbidden = |errs: &mut Vec<FieldError>, name: &str, detail: &str| {
        errs.push(FieldError::forbidden(&field::child(path, name), detail));
    };
    if v["type"].as_str().is_some_and(|t| !t.is_empty()) {
        forbidden(errs, "type", "must be empty to be structural");
    }
    if !v["additionalProperties"].is_null() {
        forbidden(
            errs,
            "additionalProperties",
            "must be undefined to be structural",
        );
    }
    if !v["default"].is_null() {
        forbidden(errs, "default", "must be undefined to be structural");
    }
    for name in ["title", "description"] {
        if v[name].as_str().is_some_and(|t| !t.is_empty()) {
            forbidden(errs, name, "must be empty to be structural");
        }
    }
    if v["nullable"].as_bool() == Some(true) {
        forbidden(errs, "nullable", "must be false to be structural");
    }
    for name in [
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if v[name].as_bool() == Some(true) {
            forbidden(errs, name, "must be false to be structural");
        }
    }
    if !strings(&v["x-kubernetes-list-map-keys"]).is_empty() {
        forbidden(
            errs,
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        );
    }
    for name in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if !v[name].is_null() {
            forbidden(errs, name, "must be undefined to be structural");
        }
    }
    if v["x-kubernetes-validations"]
        .as_array()
        .is_some_and(|r| !r.is_empty())
    {
        forbidden(
            errs,
            "x-kubernetes-validations",
            "must be empty to be structural",
        );
    }
    if v["properties"].get("metadata").is_some() {
        errs.push(FieldError::forbidden(
            &key(path, "properties", "metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateStructuralCompleteness`: every property and item the root's junctors validate is
/// declared outside of them.
pub(super) fn completeness(s: &Value, path: &str, errs: &mut Vec<FieldError>) {
    value_validation_completeness(s, Some(s), path, path, errs);
}

fn value_validation_completeness(
    v: &Value,
    s: Option<&Value>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    if v["not"].is_object() {
        nested_completeness(&v["not"], s, s_path, &field::child(v_path, "not"), errs);
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        for (i, nested) in v[junctor].as_array().into_iter().flatten().enumerate() {
            let at = field::index(&field::child(v_path, junctor), i);
            nested_completeness(nested, s, s_path, &at, errs);
        }
    }
}

fn nested_completeness(
    v: &Value,
    s: Option<&Value>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(s) = s else {
        errs.push(FieldError::required_because(
            s_path,
            &format!("because it is defined in {v_path}"),
        ));
        return;
    };
    value_validation_completeness(v, Some(s), s_path, v_path, errs);
    if v["items"].is_object() {
        nested_completeness(
            &v["items"],
            s.get("items").filter(|i| i.is_object()),
            &field::child(s_path, "items"),
            &field::child(v_path, "items"),
            errs,
        );
    }
    for (k, p) in v["properties"].as_object().into_iter().flatten() {
        let s_at = key(s_path, "properties", k);
        let v_at = key(v_path, "properties", k);
        match s["properties"].get(k) {
            Some(declared) => nested_completeness(p, Some(declared), &s_at, &v_at, errs),
            None => errs.push(FieldError::required_because(
                &s_at,
                &format!("because it is defined in {v_at}"),
            )),
        }
    }
}
