//! The paths a CRD version's `subresources.scale` names, read from and written to a custom
//! resource, and the validation they add to it (`ValidateScaleSpec`, `ValidateScaleStatus`).

use serde_json::{Map, Value, json};

use crate::go::fmt::{fmt_v, type_name};
use crate::schema::field::FieldError;
use crate::status::ApiError;

/// A CRD version's `subresources.scale`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScalePaths {
    /// `specReplicasPath` (`.spec.replicas`).
    pub spec_replicas: String,
    /// `statusReplicasPath` (`.status.replicas`).
    pub status_replicas: String,
    /// `labelSelectorPath`, if any.
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// The scale subresource of a CRD version, if it has one.
    pub(crate) fn of_version(version: &Value) -> Option<Self> {
        let scale = version["subresources"]["scale"].as_object()?;
        let path = |key: &str| scale.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Self {
            spec_replicas: path("specReplicasPath").unwrap_or_default(),
            status_replicas: path("statusReplicasPath").unwrap_or_default(),
            label_selector: path("labelSelectorPath").filter(|p| !p.is_empty()),
        })
    }

    /// What the scale paths add to a custom resource's validation: an integer (or nothing)
    /// where each replicas path points, between 0 and 2^31-1, and a string at the label
    /// selector's path.
    pub(crate) fn validate(&self, object: &Value) -> Vec<FieldError> {
        let mut errors = Vec::new();
        for path in [&self.spec_replicas, &self.status_replicas] {
            match nested_int64(object, path) {
                Err(why) => errors.push(FieldError::invalid_json(path, &json!(0), &why)),
                Ok(Some(n)) if n < 0 => errors.push(FieldError::invalid_json(
                    path,
                    &json!(n),
                    "should be a non-negative integer",
                )),
                Ok(Some(n)) if n > i64::from(i32::MAX) => errors.push(FieldError::invalid_json(
                    path,
                    &json!(n),
                    &format!("should be less than or equal to {}", i32::MAX),
                )),
                Ok(_) => {}
            }
        }
        if let Some(path) = &self.label_selector
            && let Err(why) = nested(object, path, "string", Value::is_string)
        {
            errors.push(FieldError::invalid_json(path, &json!(""), &why));
        }
        errors
    }

    /// The `Scale` of `object` (`scaleFromCustomResource`).
    pub(super) fn scale_of(&self, object: &Value) -> Result<Value, ApiError> {
        let replicas = |path: &str| {
            nested_int64(object, path)
                .map(Option::unwrap_or_default)
                .map_err(ApiError::internal)
        };
        let (spec, status) = (
            replicas(&self.spec_replicas)?,
            replicas(&self.status_replicas)?,
        );
        let meta = &object["metadata"];
        let mut metadata = Map::new();
        for key in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
        ] {
            if let Some(v) = meta.get(key).filter(|v| !v.is_null()) {
                metadata.insert(key.to_owned(), v.clone());
            }
        }
        let mut scale = json!({
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": metadata,
            "spec": {},
            "status": {"replicas": status},
        });
        if spec != 0 {
            scale["spec"]["replicas"] = json!(spec);
        }
        if let Some(path) = &self.label_selector
            && let Ok(Some(selector)) = nested(object, path, "string", Value::is_string)
            && selector.as_str().is_some_and(|s| !s.is_empty())
        {
            scale["status"]["selector"] = selector.clone();
        }
        Ok(scale)
    }
}

/// The fields of a `.a.b` path.
pub(super) fn fields(path: &str) -> impl Iterator<Item = &str> {
    path.trim_start_matches('.').split('.')
}

/// The value at `path`, if there is one and `is` holds for it; else the accessor's error
/// (`unstructured.NestedFieldNoCopy` and its type check): `.spec.replicas accessor error: x is
/// of the type string, expected map[string]interface{}`.
pub(super) fn nested<'a>(
    object: &'a Value,
    path: &str,
    expected: &str,
    is: impl Fn(&Value) -> bool,
) -> Result<Option<&'a Value>, String> {
    let mut at = object;
    let mut walked = String::new();
    for field in fields(path) {
        walked.push('.');
        walked.push_str(field);
        match at {
            Value::Object(map) => match map.get(field) {
                Some(next) => at = next,
                None => return Ok(None),
            },
            other => {
                return Err(format!(
                    "{walked} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    fmt_v(other),
                    type_name(other)
                ));
            }
        }
    }
    if at.is_null() {
        return Ok(None);
    }
    if is(at) {
        Ok(Some(at))
    } else {
        Err(format!(
            "{walked} accessor error: {} is of the type {}, expected {expected}",
            fmt_v(at),
            type_name(at)
        ))
    }
}

/// `unstructured.NestedInt64`.
pub(super) fn nested_int64(object: &Value, path: &str) -> Result<Option<i64>, String> {
    nested(object, path, "int64", |v| v.as_i64().is_some())
        .map(|found| found.and_then(Value::as_i64))
}
