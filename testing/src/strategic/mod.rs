//! Strategic merge patch (`application/strategic-merge-patch+json`) of built-in kinds, as
//! kube-apiserver applies it (apimachinery `pkg/util/strategicpatch`, called from the patch
//! handler's `applyPatchToObject`).
//!
//! It is a JSON merge patch whose lists follow their field's patch strategy, read from the
//! kind's OpenAPI definition (the same data the server publishes at `/openapi/v2` and `/openapi/v3`,
//! see [`crate::openapi::definitions`]):
//!
//! - a list with `x-kubernetes-patch-strategy: merge` merges: objects by their
//!   `x-kubernetes-patch-merge-key` (`metadata.ownerReferences` by `uid`), scalars as a union
//!   (`metadata.finalizers`: another controller's finalizer is kept); any other list, and
//!   a map whose strategy is `replace`, is replaced;
//! - the directives: `$patch: replace` (the map or list as given), `$patch: delete` (a map
//!   emptied; a list item removed by merge key), `$deleteFromPrimitiveList/<field>`,
//!   `$setElementOrder/<field>` (the merged list's order), `$retainKeys` (fields not listed are
//!   cleared); `$patch: merge` inside a list is refused as upstream refuses it;
//! - `null` deletes a field.
//!
//! Errors answer as the handler's `interpretStrategicMergePatchError` maps them: malformed
//! directives are 400 BadRequest, lists of lists 422, anything else (a missing merge key, an
//! unknown `$patch`) a 500 carrying apimachinery's message. Custom resources are refused before
//! this (415), as their Go type is `Unstructured`.

mod merge;
mod meta;

use serde_json::{Map, Value};

use crate::openapi::definitions::Definitions;
use crate::resources::ResourceInfo;
use crate::status::ApiError;

use self::meta::PatchSchema;

/// Why a strategic merge patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmpError {
    /// A malformed directive (`mergepatch.ErrBadPatchFormat*`): 400 BadRequest.
    BadRequest(&'static str),
    /// `mergepatch.ErrNoListOfLists`: 422 with the generic message.
    Invalid(&'static str),
    /// Any other error apimachinery returns unconverted: 500 with no reason.
    Other(String),
}

impl SmpError {
    const BAD_PRIMITIVE_LIST: &'static str = "invalid patch format of primitive list";
    const BAD_RETAIN_KEYS: &'static str = "invalid patch format of retainKeys";
    const BAD_SET_ELEMENT_ORDER: &'static str = "invalid patch format of setElementOrder list";
    const NO_LIST_OF_LISTS: &'static str = "lists of lists are not supported";
}

impl From<SmpError> for ApiError {
    fn from(err: SmpError) -> Self {
        match err {
            SmpError::BadRequest(m) => ApiError::bad_request(m),
            SmpError::Invalid(m) => ApiError::generic_unprocessable(m),
            SmpError::Other(m) => ApiError::unconverted(m),
        }
    }
}

/// Applies `patch` to `original`, an object of the built-in resource `info` as served, found
/// by its kind's OpenAPI definition; errors as the server answers them.
pub(crate) fn patch_object(
    info: &ResourceInfo,
    original: &Value,
    patch: Map<String, Value>,
) -> Result<Value, ApiError> {
    let definition = Definitions::builtin()
        .name_of_kind(&info.group, &info.version, &info.kind)
        .ok_or_else(|| {
            ApiError::internal(format!(
                "no OpenAPI definition of {} {} for strategic merge patch",
                info.api_version(),
                info.kind
            ))
        })?;
    let original = original.as_object().cloned().unwrap_or_default();
    Ok(Value::Object(apply(original, patch, definition)?))
}

/// Applies `patch` to `original`, an object of the built-in kind whose OpenAPI definition is
/// `definition` (e.g. `io.k8s.api.core.v1.ConfigMap`).
fn apply(
    original: Map<String, Value>,
    patch: Map<String, Value>,
    definition: &str,
) -> Result<Map<String, Value>, SmpError> {
    let defs = Definitions::builtin();
    let schema = PatchSchema::definition(defs, definition)
        .ok_or_else(|| SmpError::Other(format!("no OpenAPI definition {definition}")))?;
    merge::merge_map(original, patch, schema)
}

#[cfg(test)]
mod tests;
