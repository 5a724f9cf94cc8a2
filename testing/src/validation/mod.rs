//! Validation like kube-apiserver's, for every kind the server stores: what the typed decoder
//! rejects (400), defaulting and conversion, then the object-metadata rules and the kind's own
//! rules (422 `Invalid` with one `details.causes[]` entry per problem, worded as upstream).
//!
//! - [`names`]: apimachinery `util/validation` — names, label keys and values, ConfigMap keys.
//! - [`field`]: `field.Error`, the unit every rule reports.
//! - `meta`: `api/validation/objectmeta.go` — every object's metadata.
//! - `gotypes`: the JSON decoder's view of built-in kinds (type errors, unknown fields).
//! - `builtins`: ConfigMap, Secret, Lease and Namespace rules and defaulting.
//! - [`rbac`]: Role, ClusterRole, RoleBinding and ClusterRoleBinding rules and defaulting.
//! - [`crd`]: a CustomResourceDefinition's group, scope, names and versions.
//!
//! Events (`kinds::events`) and CRD schemas (`kinds::crd`, `schema`) keep their own rules; the
//! metadata rules here apply to them too. The write paths call [`admit_create`] after name
//! generation and [`admit_update`] after the update strategy ran.

pub(crate) mod base64;
mod builtins;
pub(crate) mod crd;
pub(crate) mod field;
mod gotime;
mod gotypes;
mod meta;
pub(crate) mod names;
pub(crate) mod rbac;

use serde_json::{Value, json};

pub(crate) use field::FieldError;

use crate::resources::ResourceInfo;
use crate::status::{ApiError, Cause};

/// The 422 for `errs`, or `Ok` when there are none.
fn invalid(info: &ResourceInfo, obj: &Value, errs: Vec<FieldError>) -> Result<(), ApiError> {
    if errs.is_empty() {
        return Ok(());
    }
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let causes = errs.into_iter().map(Cause::from).collect();
    Err(ApiError::invalid(info.qualified_kind(), name, causes))
}

/// The typed decoder's pass over a write's body, before anything else reads it ([`gotypes`]):
/// a type error is the 400 `ConfigMap in version "v1" cannot be handled as a ConfigMap: json:
/// cannot unmarshal ...`; undeclared fields are dropped and, as `directive` says, warned about
/// (`unknown field "spec"`, returned) or refused (`strict decoding error: ...`).
pub(crate) fn decode_typed(
    info: &ResourceInfo,
    obj: &mut Value,
    directive: crate::schema::FieldValidation,
) -> Result<Vec<String>, ApiError> {
    use crate::schema::FieldValidation;
    let unknown = gotypes::decode(info, obj).map_err(|why| info.undecodable(&why))?;
    let problems: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field {}", names::go_quote(f)))
        .collect();
    match directive {
        FieldValidation::Strict if !problems.is_empty() => {
            Err(info.undecodable(&format!("strict decoding error: {}", problems.join(", "))))
        }
        FieldValidation::Warn => Ok(problems),
        _ => Ok(Vec::new()),
    }
}

/// The fields `obj` holds that its (described) built-in kind does not declare.
pub(crate) fn undeclared_fields(info: &ResourceInfo, obj: &Value) -> Vec<String> {
    gotypes::decode(info, &mut obj.clone()).unwrap_or_default()
}

pub(crate) use builtins::stored_form;

/// Admission of a create, on the object as it will be stored (name generated, namespace set):
/// decoding, defaulting, then `ValidateObjectMeta` and the kind's rules.
pub(crate) fn admit_create(info: &ResourceInfo, obj: &mut Value) -> Result<(), ApiError> {
    builtins::decode(info, obj).map_err(|why| info.undecodable(&why))?;
    let mut errs = meta::validate_create(obj, builtins::name_rule(info));
    errs.extend(builtins::validate(info, obj, None));
    invalid(info, obj, errs)
}

/// Admission of an update of `old` to `new` (server-owned metadata already carried over):
/// decoding, defaulting, the metadata rules every update re-checks (`validateCommonFields`),
/// and the kind's update rules.
pub(crate) fn admit_update(
    info: &ResourceInfo,
    new: &mut Value,
    old: &Value,
) -> Result<(), ApiError> {
    builtins::decode(info, new).map_err(|why| info.undecodable(&why))?;
    let common = meta::validate_common(&new["metadata"]);
    let mut errs = common.clone();
    if builtins::update_validates_meta_again(info) {
        // The generic registry's `ValidateObjectMetaAccessorUpdate`, the kind's
        // `ValidateObjectMetaUpdate`, and its `ValidateObjectMeta` of the new object: the same
        // problems reported again, as kube-apiserver lists them.
        let update = meta::validate_update(&new["metadata"]);
        errs.extend(update.iter().cloned());
        errs.extend(update);
        errs.extend(common);
    }
    errs.extend(builtins::validate(info, new, Some(old)));
    invalid(info, new, errs)
}

/// A PUT must name the resourceVersion it replaces unless the kind's strategy allows
/// unconditional updates (`AllowUnconditionalUpdate`): built-ins do, custom resources (and their
/// status) do not. The error is the generic store's, which names the resource, not the kind:
/// `rollouts.demo.kubeward.dev "web" is invalid: metadata.resourceVersion: Invalid value: 0: must
/// be specified for an update`.
pub(crate) fn require_resource_version(
    info: &ResourceInfo,
    name: &str,
    body: &Value,
) -> Result<(), ApiError> {
    let given = body["metadata"]["resourceVersion"]
        .as_str()
        .is_some_and(|rv| !rv.is_empty());
    if given || !info.custom {
        return Ok(());
    }
    let cause = FieldError::invalid_value(
        "metadata.resourceVersion",
        &json!(0),
        "must be specified for an update",
    );
    Err(ApiError::invalid(
        info.qualified_resource(),
        name,
        vec![cause.into()],
    ))
}

/// Whether a PUT of a missing object creates it (`AllowCreateOnUpdate`): only events do.
pub(crate) fn creates_on_update(info: &ResourceInfo) -> bool {
    info.storage.group == "events.k8s.io" && info.storage.resource == "events"
}
