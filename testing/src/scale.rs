//! The `/scale` subresource of custom resources (apiextensions-apiserver's `ScaleREST`): an
//! `autoscaling/v1` `Scale` read from and written to the paths the CRD version's
//! `subresources.scale` names, and the custom resource validation those paths add
//! (`ValidateScaleSpec`, `ValidateScaleStatus`).

use serde_json::{Map, Value, json};

use super::patch::{apply_json_patch, apply_merge_patch};
use super::resources::ResourceInfo;
use super::schema::field::FieldError;
use super::status::ApiError;
use crate::registry::{State, WriteOptions, patch_error};

/// A CRD version's `subresources.scale`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// `specReplicasPath` (`.spec.replicas`).
    pub spec_replicas: String,
    /// `statusReplicasPath` (`.status.replicas`).
    pub status_replicas: String,
    /// `labelSelectorPath`, if any.
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// The scale subresource of a CRD version, if it has one.
    pub fn of_version(version: &Value) -> Option<Self> {
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
    pub fn validate(&self, object: &Value) -> Vec<FieldError> {
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
    fn scale_of(&self, object: &Value) -> Result<Value, ApiError> {
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

/// How a write of `/scale` gives the new `Scale`.
pub enum ScaleWrite<'a> {
    /// PUT: the body.
    Replace(Value),
    /// PATCH: a JSON merge patch of the current `Scale`.
    Merge(&'a Value),
    /// PATCH: a JSON patch of the current `Scale`.
    Json(&'a Value),
}

impl State {
    /// GET `/scale` of the custom resource `name`.
    pub(crate) fn get_scale(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let paths = scale_paths(info)?;
        paths.scale_of(&self.get(info, namespace, name)?)
    }

    /// PUT or PATCH `/scale` of the custom resource `name`: the new `Scale` (validated, its
    /// resourceVersion a precondition when given) sets the replicas at the spec's path, written
    /// as an update of the resource through the `scale` subresource; answers the new `Scale`.
    pub(crate) fn write_scale(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        write: ScaleWrite<'_>,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let paths = scale_paths(info)?;
        let old = self.get(info, namespace, name)?;
        let current = paths.scale_of(&old)?;
        let scale = match write {
            ScaleWrite::Replace(body) => body,
            ScaleWrite::Merge(patch) => {
                let mut scale = current.clone();
                apply_merge_patch(&mut scale, patch);
                scale
            }
            ScaleWrite::Json(patch) => {
                let mut scale = current.clone();
                apply_json_patch(&mut scale, patch).map_err(patch_error)?;
                scale
            }
        };
        // The Scale is not validated itself: the replicas it sets are, by the resource's own
        // validation (`should be a non-negative integer`).
        let replicas = scale["spec"]["replicas"].clone();
        let replicas = if replicas.is_null() {
            json!(0)
        } else {
            replicas
        };
        if let Some(version) = scale["metadata"]["resourceVersion"].as_str()
            && Some(version) != old["metadata"]["resourceVersion"].as_str()
        {
            return Err(ApiError::conflict(
                info.qualified_resource(),
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        let mut new = old.clone();
        set_nested(&mut new, &paths.spec_replicas, replicas);
        let stored = self.update_from_subresource(info, &old, new, "scale", opts)?;
        paths.scale_of(&stored)
    }
}

fn scale_paths(info: &ResourceInfo) -> Result<&ScalePaths, ApiError> {
    info.scale.as_ref().ok_or_else(ApiError::no_route)
}

/// The fields of a `.a.b` path.
fn fields(path: &str) -> impl Iterator<Item = &str> {
    path.trim_start_matches('.').split('.')
}

/// The value at `path`, if there is one and `is` holds for it; else the accessor's error
/// (`unstructured.NestedFieldNoCopy` and its type check): `.spec.replicas accessor error: x is
/// of the type string, expected map[string]interface{}`.
fn nested<'a>(
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
                    go_value(other),
                    go_type(other)
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
            go_value(at),
            go_type(at)
        ))
    }
}

/// `unstructured.NestedInt64`.
fn nested_int64(object: &Value, path: &str) -> Result<Option<i64>, String> {
    nested(object, path, "int64", |v| v.as_i64().is_some())
        .map(|found| found.and_then(Value::as_i64))
}

/// Sets the value at `path`, creating the objects on the way.
fn set_nested(object: &mut Value, path: &str, value: Value) {
    let names: Vec<&str> = fields(path).collect();
    let Some((last, parents)) = names.split_last() else {
        return;
    };
    let mut at = object;
    for name in parents {
        if !at[*name].is_object() {
            at[*name] = json!({});
        }
        at = &mut at[*name];
    }
    at[*last] = value;
}

/// A value as Go's `%v` prints it, for the JSON kinds a custom resource holds.
fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value's Go type (`%T`) decoded into `interface{}`.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ScalePaths {
        ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        }
    }

    #[test]
    fn a_path_through_a_non_object_is_an_accessor_error() {
        let errors = paths().validate(&json!({"spec": "x"}));
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, ".spec.replicas");
        assert_eq!(
            errors[0].message,
            "Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected map[string]interface{}"
        );
        let negative = paths().validate(&json!({"spec": {"replicas": -1}}));
        assert_eq!(
            negative[0].message,
            "Invalid value: -1: should be a non-negative integer"
        );
        assert!(
            paths()
                .validate(&json!({"spec": {"replicas": 3}}))
                .is_empty()
        );
    }

    #[test]
    fn the_scale_of_an_object_reads_its_paths() {
        let object = json!({"metadata": {"name": "s", "namespace": "d", "uid": "u",
            "resourceVersion": "7", "creationTimestamp": "t", "labels": {"a": "b"}},
            "spec": {"replicas": 2}, "status": {"selector": "app=web"}});
        assert_eq!(
            paths().scale_of(&object).unwrap(),
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {"name": "s", "namespace": "d", "uid": "u", "resourceVersion": "7",
                    "creationTimestamp": "t"},
                "spec": {"replicas": 2}, "status": {"replicas": 0, "selector": "app=web"}})
        );
    }
}
