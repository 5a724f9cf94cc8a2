//! The `/scale` subresource of custom resources (apiextensions-apiserver's `ScaleREST`): an
//! `autoscaling/v1` `Scale` read from and written to the paths the CRD version's
//! `subresources.scale` names, and the custom resource validation those paths add
//! (`ValidateScaleSpec`, `ValidateScaleStatus`).

mod paths;

use serde_json::{Value, json};

pub(crate) use self::paths::ScalePaths;
use self::paths::fields;
use crate::patch::{apply_json_patch, apply_merge_patch};
use crate::registry::{State, WriteOptions, patch_error};
use crate::resources::ResourceInfo;
use crate::status::ApiError;

/// How a write of `/scale` gives the new `Scale`.
pub(crate) enum ScaleWrite<'a> {
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
        scale_of(info, paths, &self.get(info, namespace, name)?)
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
        let current = scale_of(info, paths, &old)?;
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
        // A custom resource's Scale is not validated itself: the replicas it sets are, by the
        // resource's own validation (`should be a non-negative integer`). A built-in's is
        // (`ValidateScale`), as a Scale.
        let replicas = scale["spec"]["replicas"].clone();
        if !info.custom && replicas.as_i64().is_some_and(|r| r < 0) {
            let cause = crate::validation::FieldError::invalid_value(
                "spec.replicas",
                &replicas,
                "must be greater than or equal to 0",
            );
            return Err(ApiError::invalid(
                crate::status::Qualified {
                    group: "autoscaling",
                    name: "Scale",
                },
                name,
                vec![cause.into()],
            ));
        }
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
        scale_of(info, paths, &stored)
    }
}

/// The `Scale` of `object`: its paths', with the selector a built-in workload reports
/// (`scaleFromDeployment`).
fn scale_of(info: &ResourceInfo, paths: &ScalePaths, object: &Value) -> Result<Value, ApiError> {
    let mut scale = paths.scale_of(object)?;
    if let Some(selector) = crate::kinds::strategy(info).scale_selector(object)
        && !selector.is_empty()
    {
        scale["status"]["selector"] = json!(selector);
    }
    Ok(scale)
}

fn scale_paths(info: &ResourceInfo) -> Result<&ScalePaths, ApiError> {
    info.scale.as_ref().ok_or_else(ApiError::no_route)
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
