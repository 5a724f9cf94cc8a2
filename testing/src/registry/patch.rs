//! Patch (`endpoints/handlers/patch.go`): JSON, merge, strategic merge and server-side apply
//! patches applied to the stored object, then committed as an update.

use std::sync::Arc;

use serde_json::{Value, json};

use super::update::{apply_schema, reset_fields};
use super::{PatchType, State, WriteOptions, reject_resource_version, validate};
use crate::apply::{ApplyError, EmptyStructs, Endpoint, FIELD_MANAGER_MAX_LENGTH, apply_at};
use crate::kinds;
use crate::object::{meta_mut, meta_str, rfc3339};
use crate::patch::{MAX_JSON_PATCH_OPERATIONS, PatchError, apply_json_patch, apply_merge_patch};
use crate::resources::ResourceInfo;
use crate::schema::{self, FieldValidation};
use crate::status::{ApiError, Cause, Qualified};
use crate::strategic;
use crate::validation;

pub(crate) fn patch_error(err: PatchError) -> ApiError {
    match err {
        PatchError::Malformed(m) => ApiError::bad_request(m),
        // errors.NewGenericServerResponse(422, ...) in the patch handler.
        PatchError::Failed(_) => ApiError::patch_not_applied(),
    }
}

pub(crate) fn apply_error(err: ApplyError) -> ApiError {
    let message = err.message();
    match err {
        // NewConflictError in the field manager: causes only, no name/group/kind.
        ApplyError::Conflict { .. } => ApiError {
            code: 409,
            reason: "Conflict",
            message,
            details: Some(json!({"causes": err.status_causes()})),
        },
        ApplyError::Invalid(_) => ApiError::bad_request(message),
    }
}

/// The patcher's 422 for a strict patch whose result has `unknown` fields: on the field
/// `patch`, quoting `quoted`, with no kind or name (`errors.NewInvalid(schema.GroupKind{}, "",
/// …)`).
pub(crate) fn strict_patch_error(quoted: &str, unknown: &[String]) -> ApiError {
    let problems: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field {}", crate::go::fmt::go_quote(f)))
        .collect();
    ApiError::invalid(
        Qualified {
            group: "",
            name: "",
        },
        "",
        vec![Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: strict decoding error: {}",
                crate::go::fmt::go_quote(quoted),
                problems.join(", ")
            ),
            field: "patch".into(),
        }],
    )
}

/// What the apply patcher checks of the applied object before merging: its kind and version
/// are the resource's (`invalid object type: <group>/<version>, Kind=<kind>` otherwise) and its
/// name, if any, is the URL's.
pub(crate) fn check_applied_object(
    info: &ResourceInfo,
    name: &str,
    applied: &Value,
) -> Result<(), ApiError> {
    let api_version = applied["apiVersion"].as_str().unwrap_or_default();
    let kind = applied["kind"].as_str().unwrap_or_default();
    if api_version != info.api_version() || kind != info.kind {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group}/{version}, Kind={kind}"
        )));
    }
    match meta_str(applied, "name") {
        Some(n) if !n.is_empty() && n != name => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        ))),
        _ => Ok(()),
    }
}

pub(crate) fn patch_options_invalid(field: &str, reason: &str, message: &str) -> ApiError {
    ApiError::invalid(
        Qualified {
            group: "meta.k8s.io",
            name: "PatchOptions",
        },
        "",
        vec![Cause {
            reason: reason.into(),
            message: message.into(),
            field: field.into(),
        }],
    )
}

impl State {
    /// PATCH in any supported format. Apply patches create missing objects.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn patch(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        patch_type: PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<(Arc<Value>, bool), ApiError> {
        let ns = Self::check_scope(info, namespace)?;
        if patch_type == PatchType::Strategic && info.custom {
            return Err(ApiError::unsupported_media_type(
                "application/strategic-merge-patch+json",
                &[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/apply-patch+yaml",
                ],
            ));
        }
        // ValidatePatchOptions (apimachinery meta/v1/validation): a 422 on PatchOptions.
        if patch_type == PatchType::Apply && !opts.manager_given {
            return Err(patch_options_invalid(
                "fieldManager",
                "FieldValueRequired",
                "Required value: is required for apply patch",
            ));
        }
        // `ValidateFieldManager`: at most 128 bytes.
        if opts.manager_given && opts.manager.len() > FIELD_MANAGER_MAX_LENGTH {
            return Err(patch_options_invalid(
                "fieldManager",
                "FieldValueTooLong",
                &format!(
                    "Too long: {}",
                    validation::field::too_long_message(FIELD_MANAGER_MAX_LENGTH)
                ),
            ));
        }
        if patch_type != PatchType::Apply && opts.force.is_some() {
            return Err(patch_options_invalid(
                "force",
                "FieldValueForbidden",
                "Forbidden: may not be specified for non-apply patch",
            ));
        }
        let patch: Value = match patch_type {
            PatchType::Apply => crate::yaml::decode(body).map_err(|e| {
                ApiError::bad_request(format!(
                    "error decoding YAML: error converting YAML to JSON: {e}"
                ))
            })?,
            _ => serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?,
        };
        if patch_type == PatchType::Apply {
            check_applied_object(info, name, &patch)?;
            // The typed patch of a built-in cannot hold a field its type does not declare: the
            // field manager's error, unconverted.
            if let Some(field) =
                validation::undeclared_fields(kinds::strategy(info).go_type(), &patch).first()
            {
                let gv = match info.group.as_str() {
                    "" => format!("/{}", info.version),
                    group => format!("{group}/{}", info.version),
                };
                return Err(ApiError::unconverted(format!(
                    "failed to create typed patch object ({}/{}; {gv}, Kind={}): .{field}: field not declared in schema",
                    meta_str(&patch, "namespace").unwrap_or_default(),
                    meta_str(&patch, "name").unwrap_or_default(),
                    info.kind
                )));
            }
        }
        if patch_type == PatchType::Apply
            && let Some(structural) = info.structural.as_deref()
            && let Some(error) = schema::typed::conversion_error(structural, &patch)
        {
            return Err(ApiError::unconverted(format!(
                "failed to create typed patch object ({}/{}; {}, Kind={}): {error}",
                meta_str(&patch, "namespace").unwrap_or_default(),
                meta_str(&patch, "name").unwrap_or_default(),
                info.api_version(),
                info.kind
            )));
        }
        let old = self.store.get_shared(&info.storage, &ns, name);
        let now = rfc3339(self.now());
        let api_version = info.api_version();
        let schema = apply_schema(info);
        let endpoint = Endpoint {
            api_version: &api_version,
            subresource,
            reset_fields: reset_fields(info, subresource),
            schema,
            empty_structs: EmptyStructs::Kept,
        };
        let Some(old) = old else {
            if patch_type != PatchType::Apply {
                return Err(ApiError::not_found(info.qualified_resource(), name));
            }
            if subresource.is_some() {
                return Err(ApiError::not_found(info.qualified_resource(), name));
            }
            reject_resource_version(&patch)?;
            let mut obj = apply_at(
                None,
                &patch,
                &opts.manager,
                opts.force.unwrap_or(false),
                &endpoint,
                &now,
            )
            .map_err(apply_error)?;
            let meta = meta_mut(&mut obj);
            meta.insert("name".into(), json!(name));
            let mut obj = Self::from_view(info, obj);
            validate::decode_typed(info, &mut obj, opts)?;
            self.prepare_create(info, &ns, &mut obj, opts)?;
            validate::admit_schema(info, &mut obj, None, opts)?;
            kinds::strategy(info).prepare_for_create(&mut obj);
            return self
                .commit_create(info, obj, opts)
                .map(|o| (Self::served(info, &o), true));
        };
        let old_view = kinds::strategy(info).to_served(info, &old);
        let new_view = match patch_type {
            PatchType::Json => {
                if let Some(ops) = patch
                    .as_array()
                    .filter(|ops| ops.len() > MAX_JSON_PATCH_OPERATIONS)
                {
                    return Err(ApiError::too_large(format_args!(
                        "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                        ops.len()
                    )));
                }
                let mut v = Value::clone(&old_view);
                apply_json_patch(&mut v, &patch).map_err(patch_error)?;
                v
            }
            PatchType::Merge | PatchType::Strategic => {
                let Value::Object(patch) = patch else {
                    return Err(ApiError::bad_request(
                        "json: cannot unmarshal array into Go value of type map[string]interface {}",
                    ));
                };
                // A strict patch of a built-in is decoded as the patcher decodes it; its unknown
                // fields are a 422 on the patch, quoting the patched document (a merge patch)
                // or the patch (a strategic one).
                let strict = !info.custom && opts.decoding.directive == FieldValidation::Strict;
                let patch = Value::Object(patch);
                let patched = if patch_type == PatchType::Strategic {
                    strategic::patch_object(
                        info,
                        &old_view,
                        patch.as_object().cloned().unwrap_or_default(),
                    )?
                } else {
                    let mut v = Value::clone(&old_view);
                    apply_merge_patch(&mut v, &patch);
                    v
                };
                if strict {
                    let unknown =
                        validation::undeclared_fields(kinds::strategy(info).go_type(), &patched);
                    if !unknown.is_empty() {
                        let quoted = if patch_type == PatchType::Strategic {
                            crate::go::fmt::fmt_plus_v(&patch)
                        } else {
                            crate::go::fmt::merge_patched(&old_view, &patch, &patched)
                        };
                        return Err(strict_patch_error(&quoted, &unknown));
                    }
                }
                patched
            }
            PatchType::Apply => apply_at(
                Some(&old_view),
                &patch,
                &opts.manager,
                opts.force.unwrap_or(false),
                &endpoint,
                &now,
            )
            .map_err(apply_error)?,
        };
        if !new_view.is_object() {
            return Err(ApiError::bad_request(
                "Object 'Kind' is missing in the patched object",
            ));
        }
        // A patch conflicts only when it carries a resourceVersion of its own.
        if meta_str(&new_view, "resourceVersion") != meta_str(&old_view, "resourceVersion") {
            return Err(ApiError::modified(info.qualified_resource(), name));
        }
        if meta_str(&new_view, "name") != Some(name) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                meta_str(&new_view, "name").unwrap_or_default()
            )));
        }
        let mut new = Self::from_view(info, new_view);
        let mut track = patch_type != PatchType::Apply;
        // The patched object is decoded here; the field manager cannot type one that held
        // fields its kind does not declare, and `UpdateNoErrors` then clears managedFields.
        let undeclared = validate::decode_typed_undeclared(info, &mut new, opts)?;
        if track && undeclared {
            if let Some(meta) = new["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
            track = false;
        }
        self.commit_update(info, &old, new, subresource, opts, track)
            .map(|o| (o, false))
    }
}
