//! The registry's validation of a write, as the generic store runs a kind's strategy: the typed
//! decoder and a custom resource's schema, the kind's decoding and defaulting, then the
//! object-metadata rules and the kind's field rules in one 422 (`rest.BeforeCreate`,
//! `rest.BeforeUpdate`), and the generic store's resourceVersion precondition.

use serde_json::{Value, json};

use super::WriteOptions;
use crate::kinds::{self, Strategy};
use crate::resources::ResourceInfo;
use crate::schema;
use crate::status::ApiError;
use crate::validation::{self, FieldError, builtins, meta};

/// The typed decoder's pass over a write's body as its kind's Go type
/// ([`validation::decode_typed`]), keeping its warnings for the response.
///
/// # Errors
/// The decoder's 400.
pub(super) fn decode_typed(
    info: &ResourceInfo,
    obj: &mut Value,
    opts: &WriteOptions,
) -> Result<(), ApiError> {
    decode_typed_undeclared(info, obj, opts).map(drop)
}

/// [`decode_typed`], telling whether `obj` held fields its Go type does not declare (which it
/// no longer does).
pub(super) fn decode_typed_undeclared(
    info: &ResourceInfo,
    obj: &mut Value,
    opts: &WriteOptions,
) -> Result<bool, ApiError> {
    let ty = kinds::strategy(info).go_type();
    let (undeclared, warnings) = validation::decode_typed(info, ty, obj, opts.decoding.directive)?;
    opts.warnings.extend(warnings);
    Ok(undeclared)
}

/// A custom resource's schema: pruning, defaulting and validation ([`schema::admit`]),
/// keeping its warnings for the response.
///
/// # Errors
/// The schema's 422.
pub(super) fn admit_schema(
    info: &ResourceInfo,
    obj: &mut Value,
    old: Option<&Value>,
    opts: &WriteOptions,
) -> Result<(), ApiError> {
    let mut warnings = Vec::new();
    let admitted = schema::admit(info, obj, old, &opts.decoding, &mut warnings);
    opts.warnings.extend(warnings);
    admitted
}

/// The core group's `ValidateObjectMeta` adds `validateKubeFinalizerName` to every kind of it.
fn group_rules(info: &ResourceInfo, obj: &Value) -> Vec<FieldError> {
    if info.group.is_empty() {
        builtins::kube_finalizer_names(&obj["metadata"])
    } else {
        Vec::new()
    }
}

/// A create of `obj` (name generated, namespace set): the kind's decoding and defaulting,
/// then `ValidateObjectMeta` and the kind's rules.
///
/// # Errors
/// The decoder's 400, or the 422 listing every problem.
pub(super) fn validate_create(
    info: &ResourceInfo,
    strategy: &dyn Strategy,
    obj: &mut Value,
) -> Result<(), ApiError> {
    strategy.decode(obj).map_err(|why| info.undecodable(&why))?;
    let mut errs = meta::validate_create(obj, strategy.name_rule());
    errs.extend(group_rules(info, obj));
    errs.extend(strategy.field_rules(obj, None));
    validation::invalid(info, obj, errs)
}

/// An update of `old` to `new` (server-owned metadata already carried over): the kind's
/// decoding and defaulting, the metadata rules every update re-checks (`validateCommonFields`),
/// and the kind's update rules.
///
/// # Errors
/// The decoder's 400, or the 422 listing every problem.
pub(super) fn validate_update(
    info: &ResourceInfo,
    strategy: &dyn Strategy,
    new: &mut Value,
    old: &Value,
) -> Result<(), ApiError> {
    strategy.decode(new).map_err(|why| info.undecodable(&why))?;
    let common = meta::validate_common(&new["metadata"]);
    let mut errs = common.clone();
    if strategy.update_revalidates_metadata() {
        // The generic registry's `ValidateObjectMetaAccessorUpdate`, the kind's
        // `ValidateObjectMetaUpdate`, and its `ValidateObjectMeta` of the new object: the same
        // problems reported again, as kube-apiserver lists them.
        let update = meta::validate_update(&new["metadata"]);
        errs.extend(update.iter().cloned());
        errs.extend(update);
        errs.extend(common);
    }
    errs.extend(group_rules(info, new));
    errs.extend(strategy.field_rules(new, Some(old)));
    validation::invalid(info, new, errs)
}

/// The resourceVersion a PUT's `body` names as its precondition: none when it is empty or `0`,
/// which `APIObjectVersioner.ParseResourceVersion` both reads as 0, "unset" (the update is then
/// unconditional where the kind allows it).
pub(super) fn precondition(body: &Value) -> Option<&str> {
    body["metadata"]["resourceVersion"]
        .as_str()
        .filter(|rv| !rv.is_empty() && *rv != "0")
}

/// A PUT must name the resourceVersion it replaces unless the kind's strategy allows
/// unconditional updates (custom resources and CustomResourceDefinitions, and their status, do
/// not). The error is the generic store's (apiserver `registry/generic/registry/store.go`,
/// `Update`), which names the resource, not the kind: `rollouts.demo.kubeward.dev "web" is
/// invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`. The
/// value is the parsed resourceVersion, a `uint64`, which `field.Error` renders as JSON since
/// apimachinery 0.34 (`0`; kube-apiserver 1.33 and older printed it with `%#v`, `0x0`).
///
/// # Errors
/// That 422.
pub(super) fn require_resource_version(
    info: &ResourceInfo,
    strategy: &dyn Strategy,
    name: &str,
    body: &Value,
) -> Result<(), ApiError> {
    if precondition(body).is_some() || strategy.allows_unconditional_update() {
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
