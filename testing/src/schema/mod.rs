//! The structural schema of a CustomResourceDefinition enforced on writes of its custom resources,
//! as apiextensions-apiserver does when it decodes, defaults and validates a custom resource:
//!
//! 1. fields the schema does not declare are pruned ([`pruning`]), and duplicate JSON keys of the
//!    request body are found ([`duplicates`]); with `fieldValidation=Strict` either is a 400
//!    naming the fields, with `Warn` (the default) each is a `Warning` header
//!    (`unknown field "spec.foo"`), with `Ignore` nothing is said;
//! 2. `default`s are applied ([`defaulting`]);
//! 3. the object is validated: OpenAPI value rules ([`validation`], [`formats`]), list types
//!    ([`listtype`]) and, unless a value has the wrong type, `x-kubernetes-validations` CEL rules
//!    ([`cel`]); any error is a 422 Invalid with one cause per field.
//!
//! The schema is read once per CRD version into a [`Structural`] when the CRD is stored, after
//! [`checks`] found nothing wrong with it.

pub(crate) mod cel;
pub(crate) mod checks;
pub(crate) mod defaulting;
pub(crate) mod duplicates;
pub(crate) mod embedded;
pub(crate) mod field;
pub(crate) mod formats;
pub(crate) mod listtype;
pub(crate) mod pruning;
pub(crate) mod ratcheting;
pub(crate) mod structural;
pub(crate) mod typed;
pub(crate) mod validation;

use serde_json::Value;

pub(crate) use structural::Structural;

use crate::resources::ResourceInfo;
use crate::status::ApiError;
pub(crate) use field::FieldError;

/// The `fieldValidation` directive of a write: what to do about unknown and duplicate fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and say so in a `Warning` header (the default).
    #[default]
    Warn,
    /// Reject the request with 400 BadRequest.
    Strict,
}

impl FieldValidation {
    /// Reads the query parameter (absent or empty is `Warn`), or the error
    /// `ValidateFieldValidation` reports for another value.
    pub(crate) fn parse(value: Option<&str>) -> Result<Self, FieldError> {
        match value.unwrap_or_default() {
            "" | "Warn" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            "Strict" => Ok(Self::Strict),
            other => Err(FieldError::not_supported(
                "fieldValidation",
                &Value::String(other.into()),
                &["", "Ignore", "Strict", "Warn"].map(String::from),
            )),
        }
    }
}

/// What a write brings to schema admission beyond the object.
#[derive(Debug, Clone, Default)]
pub(crate) struct Decoding {
    /// The `fieldValidation` directive.
    pub directive: FieldValidation,
    /// Duplicate keys of the request body, by path.
    pub duplicate_fields: Vec<String>,
    /// Duplicate keys of a YAML request body, as go-yaml's strict decoder reports them
    /// (`line 7: key "a" already set in map`).
    pub yaml_duplicates: Vec<String>,
}

/// A custom resource is decoded into Go's `map[string]interface{}`, where `1e3` is a
/// float64 that encodes back as `1000`: integral numbers written with a fraction or an
/// exponent are stored as the integers they are.
fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(map) => map.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

/// Prunes, defaults and validates a custom resource about to be stored (`old` is the stored
/// object on an update). Adds the warnings to send to `warnings` — also when the object is then
/// refused, as the apiserver's warning recorder sends them whatever the status — and returns
/// the error to answer, if any.
///
/// Resources without a structural schema (built-ins) only have their duplicate fields and
/// unknown `metadata` fields handled.
pub(crate) fn admit(
    info: &ResourceInfo,
    obj: &mut Value,
    old: Option<&Value>,
    decoding: &Decoding,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    let mut problems: Vec<String> = Vec::new();
    if info.custom {
        integral_floats_as_integers(obj);
    }
    let unknown = match info.structural.as_deref() {
        Some(schema) => pruning::prune(schema, "", obj),
        None => match obj.get_mut("metadata") {
            Some(metadata) => pruning::prune_object_meta("metadata", metadata),
            None => Vec::new(),
        },
    };
    problems.extend(
        unknown
            .into_iter()
            .map(|f| format!("unknown field {}", field::quote(&f))),
    );
    problems.extend(
        decoding
            .duplicate_fields
            .iter()
            .map(|f| format!("duplicate field {}", field::quote(f))),
    );
    let yaml = &decoding.yaml_duplicates;
    match decoding.directive {
        FieldValidation::Strict if !problems.is_empty() || !yaml.is_empty() => {
            // The YAML decoder's errors come first, as one group.
            let mut errors = Vec::new();
            if !yaml.is_empty() {
                errors.push(format!("yaml: unmarshal errors:\n  {}", yaml.join("\n  ")));
            }
            errors.extend(problems);
            let why = format!("strict decoding error: {}", errors.join(", "));
            return Err(info.undecodable(&why));
        }
        FieldValidation::Warn => warnings.extend(yaml.iter().cloned().chain(problems)),
        _ => {}
    }
    let Some(schema) = info.structural.as_deref() else {
        return Ok(());
    };
    defaulting::apply(schema, obj);
    let causes = validate(schema, obj, old, info.scale.as_ref());
    if causes.is_empty() {
        Ok(())
    } else {
        let name = obj["metadata"]["name"].as_str().unwrap_or_default();
        let causes = causes.into_iter().map(Into::into).collect();
        Err(ApiError::invalid(info.qualified_kind(), name, causes))
    }
}

/// Applies the schema's defaults to an object read from storage (a no-op without a schema).
pub(crate) fn default_on_read(info: &ResourceInfo, obj: &mut Value) {
    if let Some(schema) = info.structural.as_deref() {
        defaulting::apply(schema, obj);
    }
}

/// The error types that keep CEL rules from running (`hasBlockingErr` in the custom resource
/// strategy): a rule could not rely on the schema's guarantees.
const BLOCKING: &[&str] = &[
    "FieldValueNotSupported",
    "FieldValueRequired",
    "FieldValueTooLong",
    "FieldValueTooMany",
    "FieldValueTypeInvalid",
];

/// Every schema error of `obj` in the custom resource strategy's order: value rules, embedded
/// resources, list types, the scale subresource's paths, then CEL rules unless a blocking error
/// came first; on an update (`old`), unchanged values are not re-validated ([`ratcheting`]).
fn validate(
    schema: &Structural,
    obj: &Value,
    old: Option<&Value>,
    scale: Option<&crate::scale::ScalePaths>,
) -> Vec<FieldError> {
    let mut causes = Vec::new();
    validation::validate(schema, "", obj, old, &mut causes);
    embedded::validate(schema, "", obj, &mut causes);
    // List types ratchet as a whole: a stored object with duplicates may keep them.
    let old_lists_valid = old.is_none_or(|old| {
        let mut old_errors = Vec::new();
        listtype::validate(schema, "", old, &mut old_errors);
        old_errors.is_empty()
    });
    if old_lists_valid {
        listtype::validate(schema, "", obj, &mut causes);
    }
    if let Some(scale) = scale {
        causes.extend(scale.validate(obj));
    }
    if !has_rules(schema) {
        return causes;
    }
    if causes.iter().any(|c| BLOCKING.contains(&c.reason)) {
        causes.push(FieldError::invalid_json(
            "<nil>",
            &Value::Null,
            "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ));
    } else {
        cel::validate(schema, "", obj, old, &mut causes);
    }
    causes
}

fn has_rules(schema: &Structural) -> bool {
    !schema.validations.is_empty()
        || schema.properties.values().any(has_rules)
        || schema
            .additional_properties
            .as_deref()
            .is_some_and(has_rules)
        || schema.items.as_deref().is_some_and(has_rules)
}

#[cfg(test)]
mod tests {
    use super::integral_floats_as_integers;

    #[test]
    fn integral_floats_are_stored_as_go_encodes_them() {
        let mut v: serde_json::Value =
            serde_json::from_str(r#"{"a": 1e3, "b": [2.0, 1.5], "c": -0.0}"#).unwrap();
        integral_floats_as_integers(&mut v);
        assert_eq!(v.to_string(), r#"{"a":1000,"b":[2,1.5],"c":0}"#);
    }
}
