//! The static validation of a CRD version's `openAPIV3Schema` when the CRD is written
//! (apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`
//! `validateCustomResourceDefinitionValidation`), in upstream's order:
//!
//! 1. `nullable` at the root;
//! 2. unless the schema uses what a structural schema cannot hold (`$ref`, `definitions`, ...,
//!    `x-kubernetes-preserve-unknown-fields: false`): the structural invariants
//!    ([`structural`], sorted by their text as upstream sorts them), and when there are none the
//!    `default`s ([`defaults`]); only a schema that passes both has its CEL rules compiled;
//! 3. the OpenAPI rules of every node (`ValidateCustomResourceDefinitionOpenAPISchema`, this
//!    module): unsupported keywords and types, `uniqueItems`, `additionalProperties` beside
//!    `properties`, defaults where they are forbidden, map and list types and their keys, the
//!    static rules of `x-kubernetes-validations`;
//! 4. the CEL rules' compilation and `oldSelf` placement ([`crate::schema::cel::static_errors`]),
//!    for a node with no schema error at or below it.
//!
//! Not modelled: the CEL type checker and cost estimation (rules naming unknown fields, rules
//! that are not booleans, unbounded costs are accepted), and the root restrictions of a schema
//! with the status subresource.

mod defaults;
mod structural;

use serde_json::{Value, json};

use crate::schema::cel;
use crate::schema::field::{self, FieldError};
use structural::Level;

/// The problems of the schema `s` found at `path` (`spec.validation.openAPIV3Schema` when the
/// versions share it, else `spec.versions[i].schema.openAPIV3Schema`).
pub(crate) fn validate(s: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if s["nullable"].as_bool() == Some(true) {
        errs.push(FieldError::forbidden(
            &field::child(path, "nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let mut compile_cel = false;
    if converts_to_structural(s) {
        let mut invariants = Vec::new();
        structural::invariants(s, Level::Root, path, &mut invariants);
        structural::completeness(s, path, &mut invariants);
        invariants.sort_by_key(ToString::to_string);
        if !invariants.is_empty() {
            errs.extend(invariants);
        } else {
            let defaults = defaults::validate(s, path);
            compile_cel = defaults.is_empty();
            errs.extend(defaults);
        }
    }
    let mut found = Found::default();
    let root = Validator {
        allow_defaults: true,
        disallow_defaults_reason: String::new(),
        inside_resource_meta: false,
        uncorrelatable: None,
    };
    openapi(s, path, &root, true, compile_cel, &mut found);
    errs.extend(found.schema);
    errs.extend(found.cel);
    errs
}

/// Whether `NewStructural` converts the schema: none of the keywords it refuses, anywhere.
fn converts_to_structural(s: &Value) -> bool {
    let Some(map) = s.as_object() else {
        return true;
    };
    let refused = [
        "id",
        "$schema",
        "$ref",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
    ]
    .iter()
    .any(|k| map.get(*k).is_some_and(is_set))
        || map.get("items").is_some_and(Value::is_array)
        || map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false));
    !refused
        && map.iter().all(|(k, v)| match k.as_str() {
            "properties" => v
                .as_object()
                .is_none_or(|p| p.values().all(converts_to_structural)),
            "items" | "not" | "additionalProperties" => converts_to_structural(v),
            "allOf" | "anyOf" | "oneOf" => v
                .as_array()
                .is_none_or(|a| a.iter().all(converts_to_structural)),
            _ => true,
        })
}

/// Whether a keyword's value is other than Go's zero value (absent, `false`, `""`, empty).
fn is_set(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Number(_) => true,
    }
}

/// `path.Child(child).Key(k)`: `properties[spec]`.
fn key(path: &str, child: &str, k: &str) -> String {
    format!("{}[{k}]", field::child(path, child))
}

/// The strings of a JSON list.
fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The errors found, schema errors apart from CEL ones (`OpenAPISchemaErrorList`).
#[derive(Default)]
struct Found {
    schema: Vec<FieldError>,
    cel: Vec<FieldError>,
}

/// `specStandardValidatorV3`: what the walk knows of where it is.
#[derive(Clone)]
struct Validator {
    allow_defaults: bool,
    disallow_defaults_reason: String,
    inside_resource_meta: bool,
    /// The highest node under which `oldSelf` cannot be correlated (an atomic list, a set, an
    /// atomic map).
    uncorrelatable: Option<String>,
}

impl Validator {
    fn without_defaults(&self, reason: &str) -> Self {
        Validator {
            allow_defaults: false,
            disallow_defaults_reason: reason.to_owned(),
            ..self.clone()
        }
    }

    fn forbid_old_self(&self, path: &str) -> Self {
        Validator {
            uncorrelatable: self
                .uncorrelatable
                .clone()
                .or_else(|| Some(path.to_owned())),
            ..self.clone()
        }
    }

    /// `specStandardValidatorV3.validate`: keywords and types a CRD schema may not use.
    fn validate(&self, s: &Value, path: &str, errs: &mut Vec<FieldError>) {
        const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
        let at = |k: &str| field::child(path, k);
        let type_ = s["type"].as_str().unwrap_or_default();
        if !type_.is_empty() && !TYPES.contains(&type_) {
            errs.push(FieldError::not_supported(
                &at("type"),
                &json!(type_),
                &TYPES.map(String::from),
            ));
        }
        if !s["default"].is_null() && !self.allow_defaults {
            let mut detail = "must not be set".to_owned();
            if !self.disallow_defaults_reason.is_empty() {
                detail = format!("{detail} {}", self.disallow_defaults_reason);
            }
            errs.push(FieldError::forbidden(&at("default"), &detail));
        }
        for (k, what) in [
            ("id", "id"),
            ("additionalItems", "additionalItems"),
            ("patternProperties", "patternProperties"),
            ("definitions", "definitions"),
            ("dependencies", "dependencies"),
            ("$ref", "$ref"),
        ] {
            if s.get(k)
                .is_some_and(|v| k == "$ref" && !v.is_null() || is_set(v))
            {
                errs.push(FieldError::forbidden(
                    &at(k),
                    &format!("{what} is not supported"),
                ));
            }
        }
        if type_ == "null" {
            errs.push(FieldError::forbidden(
                &at("type"),
                "type cannot be set to null, use nullable as an alternative",
            ));
        }
        if s["items"].as_array().is_some_and(|a| !a.is_empty()) {
            errs.push(FieldError::forbidden(
                &at("items"),
                "items must be a schema object and not an array",
            ));
        }
        if self.inside_resource_meta && s["x-kubernetes-embedded-resource"].as_bool() == Some(true)
        {
            errs.push(FieldError::forbidden(
                &at("x-kubernetes-embedded-resource"),
                "must not be used inside of resource meta",
            ));
        }
    }
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` of the node `s` at `path`.
fn openapi(
    s: &Value,
    path: &str,
    v: &Validator,
    is_root: bool,
    compile_cel: bool,
    found: &mut Found,
) {
    if !s.is_object() {
        return;
    }
    let before = found.schema.len();
    let at = |k: &str| field::child(path, k);
    v.validate(s, path, &mut found.schema);
    if s["uniqueItems"].as_bool() == Some(true) {
        found.schema.push(FieldError::forbidden(
            &at("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let type_ = s["type"].as_str().unwrap_or_default();
    let properties = s["properties"].as_object();
    let additional = &s["additionalProperties"];
    if !additional.is_null() {
        if properties.is_some_and(|p| !p.is_empty()) && *additional != Value::Bool(true) {
            found.schema.push(FieldError::forbidden(
                &at("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let sub = if v.inside_resource_meta {
            v.without_defaults("inside additionalProperties applying to object metadata")
        } else {
            v.clone()
        };
        openapi(
            additional,
            &at("additionalProperties"),
            &sub,
            false,
            compile_cel,
            found,
        );
    }
    let embedded = s["x-kubernetes-embedded-resource"].as_bool() == Some(true);
    let map_type = s["x-kubernetes-map-type"].as_str();
    for (name, property) in properties.into_iter().flatten() {
        let mut sub = v.clone();
        if !matches!(map_type, None | Some("granular") | Some("")) {
            sub = sub.forbid_old_self(path);
        }
        if (is_root || embedded) && matches!(name.as_str(), "metadata" | "kind" | "apiVersion") {
            sub.inside_resource_meta = true;
            if is_root {
                sub = sub.without_defaults(&format!("in top-level {name}"));
            }
        }
        openapi(
            property,
            &key(path, "properties", name),
            &sub,
            false,
            compile_cel,
            found,
        );
    }
    if s["not"].is_object() {
        openapi(&s["not"], &at("not"), v, false, false, found);
    }
    for junctor in ["allOf", "oneOf", "anyOf"] {
        for (i, nested) in s[junctor].as_array().into_iter().flatten().enumerate() {
            let nested_path = field::index(&at(junctor), i);
            openapi(nested, &nested_path, v, false, false, found);
        }
    }
    let list_type = s["x-kubernetes-list-type"].as_str();
    let items = &s["items"];
    if !items.is_null() {
        let sub = if list_type != Some("map") {
            v.forbid_old_self(path)
        } else {
            v.clone()
        };
        if items.is_object() {
            openapi(items, &at("items"), &sub, false, compile_cel, found);
        }
        for (i, item) in items.as_array().into_iter().flatten().enumerate() {
            let item_path = field::index(&at("items"), i);
            openapi(item, &item_path, &sub, false, compile_cel, found);
        }
    }
    if s["x-kubernetes-preserve-unknown-fields"] == Value::Bool(false) {
        found.schema.push(FieldError::invalid_value(
            &at("x-kubernetes-preserve-unknown-fields"),
            &json!(false),
            "must be true or undefined",
        ));
    }
    map_and_list_types(s, path, type_, &mut found.schema);
    if let Some(rules) = s["x-kubernetes-validations"].as_array()
        && !rules.is_empty()
    {
        rule_fields(s, rules, &at("x-kubernetes-validations"), &mut found.schema);
        if found.schema.len() == before && compile_cel {
            found.cel.extend(cel::static_errors(
                rules,
                &at("x-kubernetes-validations"),
                v.uncorrelatable.as_deref(),
            ));
        }
    }
}

/// The rules of `x-kubernetes-map-type`, `x-kubernetes-list-type` and
/// `x-kubernetes-list-map-keys` (including `validateMapListKeysMapSet`).
fn map_and_list_types(s: &Value, path: &str, type_: &str, errs: &mut Vec<FieldError>) {
    let at = |k: &str| field::child(path, k);
    let map_type = s["x-kubernetes-map-type"].as_str();
    if let Some(map_type) = map_type {
        if type_ != "object" {
            let detail = "must be object if x-kubernetes-map-type is specified";
            errs.push(if type_.is_empty() {
                FieldError::required_because(&at("type"), detail)
            } else {
                FieldError::invalid(&at("type"), type_, detail)
            });
        }
        if map_type != "atomic" && map_type != "granular" {
            errs.push(FieldError::not_supported(
                &at("x-kubernetes-map-type"),
                &json!(map_type),
                &["atomic".into(), "granular".into()],
            ));
        }
    }
    let list_type = s["x-kubernetes-list-type"].as_str();
    let item = s["items"].is_object().then_some(&s["items"]);
    if list_type.is_some() && type_ != "array" {
        let detail = "must be array if x-kubernetes-list-type is specified";
        errs.push(if type_.is_empty() {
            FieldError::required_because(&at("type"), detail)
        } else {
            FieldError::invalid(&at("type"), type_, detail)
        });
    } else if list_type == Some("set")
        && let Some(item) = item
    {
        let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
        let items = at("items");
        match item["type"].as_str() {
            Some("array")
                if item["x-kubernetes-list-type"]
                    .as_str()
                    .is_some_and(|t| t != "atomic") =>
            {
                errs.push(FieldError::invalid_value(
                    &field::child(&items, "x-kubernetes-list-type"),
                    &item["x-kubernetes-list-type"],
                    detail,
                ))
            }
            Some("object") if item["x-kubernetes-map-type"].as_str() != Some("atomic") => {
                // Upstream renders the item's list type here, not its map type.
                errs.push(FieldError::invalid_json(
                    &field::child(&items, "x-kubernetes-map-type"),
                    &item["x-kubernetes-list-type"],
                    detail,
                ))
            }
            _ => {}
        }
    }
    if let Some(list_type) = list_type
        && !matches!(list_type, "atomic" | "set" | "map")
    {
        errs.push(FieldError::not_supported(
            &at("x-kubernetes-list-type"),
            &json!(list_type),
            &["atomic".into(), "set".into(), "map".into()],
        ));
    }
    let keys = strings(&s["x-kubernetes-list-map-keys"]);
    if !keys.is_empty() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errs.push(FieldError::required_because(
                &at("x-kubernetes-list-type"),
                detail,
            )),
            Some("map") => {}
            Some(other) => errs.push(FieldError::invalid(
                &at("x-kubernetes-list-type"),
                other,
                detail,
            )),
        }
    }
    if list_type == Some("map") {
        if keys.is_empty() {
            errs.push(FieldError::required_because(
                &at("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match &s["items"] {
            Value::Null => errs.push(FieldError::required_because(
                &at("items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Value::Object(_) => {}
            other => errs.push(FieldError::invalid_value(
                &at("items"),
                other,
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
        }
        if let Some(item) = item {
            let item_type = item["type"].as_str().unwrap_or_default();
            if item_type != "object" {
                errs.push(FieldError::invalid(
                    &field::child(&at("items"), "type"),
                    item_type,
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            } else {
                let mut seen = Vec::new();
                for k in &keys {
                    match item["properties"].get(k) {
                        Some(p) if matches!(p["type"].as_str(), Some("array" | "object")) => errs
                            .push(FieldError::invalid(
                                &field::child(&key(&at("items"), "properties", k), "type"),
                                item_type,
                                "must be a scalar type if parent array's x-kubernetes-list-type is map",
                            )),
                        Some(_) => {}
                        None => errs.push(FieldError::invalid_value(
                            &at("x-kubernetes-list-map-keys"),
                            &json!(keys),
                            "entries must all be names of item properties",
                        )),
                    }
                    if seen.contains(&k) {
                        errs.push(FieldError::invalid_value(
                            &at("x-kubernetes-list-map-keys"),
                            &json!(keys),
                            "must not contain duplicate entries",
                        ));
                    }
                    seen.push(k);
                }
            }
        }
    }
    // `validateMapListKeysMapSet`.
    if let (Some(list_type @ ("set" | "map")), Some(item)) = (list_type, item) {
        if item["nullable"].as_bool() == Some(true) {
            errs.push(FieldError::forbidden(
                &field::child(&at("items"), "nullable"),
                &format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
            ));
        }
        if list_type == "map" {
            let required = strings(&item["required"]);
            for k in &keys {
                let Some(p) = item["properties"].get(k) else {
                    continue;
                };
                let prop = key(&at("items"), "properties", k);
                if !required.contains(k) && p["default"].is_null() {
                    errs.push(FieldError::required_because(
                        &field::child(&prop, "default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
                if p["nullable"].as_bool() == Some(true) {
                    errs.push(FieldError::forbidden(
                        &field::child(&prop, "nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    ));
                }
            }
        }
    }
}

/// The static rules of each `x-kubernetes-validations` entry: a rule, a message without line
/// breaks, a supported reason, a valid `fieldPath`.
fn rule_fields(s: &Value, rules: &[Value], path: &str, errs: &mut Vec<FieldError>) {
    const REASONS: [&str; 4] = [
        "FieldValueDuplicate",
        "FieldValueForbidden",
        "FieldValueInvalid",
        "FieldValueRequired",
    ];
    let has_newline = |t: &str| t.contains('\n') || t.contains('\r');
    for (i, rule) in rules.iter().enumerate() {
        let at = |k: &str| field::child(&field::index(path, i), k);
        let text = |k: &str| rule[k].as_str().unwrap_or_default();
        let (source, message) = (text("rule").trim(), text("message"));
        if source.is_empty() {
            errs.push(FieldError::required_because(
                &at("rule"),
                "rule is not specified",
            ));
        } else if !message.is_empty() && message.trim().is_empty() {
            errs.push(FieldError::invalid(
                &at("message"),
                message,
                "must be non-empty if specified",
            ));
        } else if has_newline(message.trim()) {
            errs.push(FieldError::invalid(
                &at("message"),
                message,
                "must not contain line breaks",
            ));
        } else if has_newline(source) && message.trim().is_empty() {
            errs.push(FieldError::required_because(
                &at("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let expression = text("messageExpression");
        if !expression.is_empty() && expression.trim().is_empty() {
            errs.push(FieldError::required_because(
                &at("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule["reason"].as_str()
            && !REASONS.contains(&reason)
        {
            errs.push(FieldError::not_supported(
                &at("reason"),
                &json!(reason),
                &REASONS.map(String::from),
            ));
        }
        let field_path = text("fieldPath");
        if !field_path.is_empty() && field_path.trim().is_empty() {
            errs.push(FieldError::invalid(
                &at("fieldPath"),
                field_path,
                "must be non-empty if specified",
            ));
        }
        if has_newline(field_path) {
            errs.push(FieldError::invalid(
                &at("fieldPath"),
                field_path,
                "must not contain line breaks",
            ));
        }
        if !field_path.is_empty() && converts_to_structural(s) && !valid_field_path(field_path, s) {
            errs.push(FieldError::invalid(
                &at("fieldPath"),
                field_path,
                "must be a valid path",
            ));
        }
    }
}

/// cel `ValidFieldPath`: `.name` and `['name']` steps through declared properties (or any key
/// of a map), from the node that declares the rule.
fn valid_field_path(text: &str, schema: &Value) -> bool {
    let mut node = schema;
    let mut rest = text;
    while !rest.is_empty() {
        let name;
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[', ']']).unwrap_or(after.len());
            if end == 0 && after.is_empty() {
                return false;
            }
            name = after[..end].to_owned();
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let mut end = None;
            let bytes = after.as_bytes();
            for i in 0..bytes.len() {
                if bytes[i] == b'\'' && (i == 0 || bytes[i - 1] != b'\\') {
                    end = Some(i);
                    break;
                }
            }
            let Some(end) = end else {
                return false;
            };
            name = after[..end].replace("\\'", "'");
            let Some(after) = after[end + 1..].strip_prefix(']') else {
                return false;
            };
            rest = after;
        } else {
            return false;
        }
        if let Some(props) = node["properties"].as_object() {
            match props.get(&name) {
                Some(next) => node = next,
                None => return false,
            }
        } else if !node["additionalProperties"].is_null() {
            node = &node["additionalProperties"];
        } else {
            return false;
        }
    }
    true
}
