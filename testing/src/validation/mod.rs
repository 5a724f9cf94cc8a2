//! Validation like kube-apiserver's, for every kind the server stores: what the typed decoder
//! rejects (400), defaulting and conversion, then the object-metadata rules and the kind's own
//! rules (422 `Invalid` with one `details.causes[]` entry per problem, worded as upstream).
//!
//! - [`names`]: apimachinery `util/validation` — names, label keys and values, ConfigMap keys.
//! - [`field`]: `field.Error`, the unit every rule reports.
//! - [`meta`]: `api/validation/objectmeta.go` — every object's metadata.
//! - [`gotypes`]: the JSON decoder's view of built-in kinds (type errors, unknown fields).
//! - [`builtins`]: ConfigMap, Secret, Lease and Event decoding, ConfigMap, Secret and Lease rules.
//! - [`rbac`]: Role, ClusterRole, RoleBinding and ClusterRoleBinding rules and defaulting.
//! - [`crd`]: a CustomResourceDefinition's group, scope, names and versions.
//! - [`pod`]: a pod template's defaulting and rules, shared by the workloads.
//! - [`pods`]: core/v1 Pods' defaulting, QoS class and create, update and status rules.
//! - [`apps`]: Deployments' defaulting and rules, and label selectors' string form.
//! - [`workloads`]: ReplicaSets', StatefulSets', DaemonSets' and ControllerRevisions' defaulting
//!   and rules.
//! - [`service`]: core/v1 Services' and Endpoints' defaulting and rules.
//! - [`networking`]: Ingresses', IngressClasses' and NetworkPolicies' defaulting and rules.
//! - [`autoscaling`]: HorizontalPodAutoscalers' v2 defaulting, rules and v1 ↔ v2 conversion.
//! - [`batch`]: Jobs' and CronJobs' defaulting and rules; [`cron`]: a CronJob's schedule and
//!   time zone.
//! - [`node`]: core/v1 Nodes' defaulting, rules and warnings.
//! - [`storage`]: PersistentVolumeClaims', PersistentVolumes' and StorageClasses' defaulting,
//!   rules and warnings.
//! - [`quantity`]: `resource.Quantity` parsing, canonical form and comparison.
//! - [`quota`]: ResourceQuotas' and LimitRanges' defaulting and rules.
//! - [`disruption`]: PodDisruptionBudgets' rules.
//! - [`endpoint_slice`]: EndpointSlices' defaulting and rules.
//!
//! Events (`kinds::events`) and CRD schemas (`kinds::crd`, `schema`) keep their own rules; the
//! metadata rules here apply to them too. Which rules are a kind's is its strategy's to say
//! (`crate::kinds`); the registry runs them.

pub(crate) mod apps;
pub(crate) mod autoscaling;
pub(crate) mod base64;
pub(crate) mod batch;
pub(crate) mod builtins;
pub(crate) mod crd;
pub(crate) mod cron;
pub(crate) mod disruption;
pub(crate) mod endpoint_slice;
pub(crate) mod field;
pub(crate) mod gotypes;
pub(crate) mod meta;
pub(crate) mod names;
pub(crate) mod networking;
pub(crate) mod node;
pub(crate) mod pod;
pub(crate) mod pods;
pub(crate) mod quantity;
pub(crate) mod quota;
pub(crate) mod rbac;
pub(crate) mod service;
pub(crate) mod storage;
pub(crate) mod workloads;

use serde_json::Value;

pub(crate) use field::FieldError;

use crate::resources::ResourceInfo;
use crate::schema::FieldValidation;
use crate::status::{ApiError, Cause};

/// The 422 for `errs`, or `Ok` when there are none.
///
/// # Errors
/// The 422 `Invalid`, one cause per error.
pub(crate) fn invalid(
    info: &ResourceInfo,
    obj: &Value,
    errs: Vec<FieldError>,
) -> Result<(), ApiError> {
    if errs.is_empty() {
        return Ok(());
    }
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let causes = errs.into_iter().map(Cause::from).collect();
    Err(ApiError::invalid(info.qualified_kind(), name, causes))
}

/// The typed decoder's pass over a write's body as the Go type `ty`, before anything else reads
/// it ([`gotypes`]; nothing for a kind without one): a type error is the 400 `ConfigMap in version "v1" cannot be handled as a ConfigMap: json:
/// cannot unmarshal ...`; undeclared fields are dropped and, as `directive` says, warned about
/// (`unknown field "spec"`, returned) or refused (`strict decoding error: ...`). Returns whether
/// there were undeclared fields, and the warnings.
pub(crate) fn decode_typed(
    info: &ResourceInfo,
    ty: Option<&'static gotypes::Struct>,
    obj: &mut Value,
    directive: FieldValidation,
) -> Result<(bool, Vec<String>), ApiError> {
    let Some(ty) = ty else {
        return Ok((false, Vec::new()));
    };
    let unknown = gotypes::decode(ty, obj).map_err(|why| info.undecodable(&why))?;
    let problems: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field {}", crate::go::fmt::go_quote(f)))
        .collect();
    let undeclared = !unknown.is_empty();
    match directive {
        FieldValidation::Strict if undeclared => {
            Err(info.undecodable(&format!("strict decoding error: {}", problems.join(", "))))
        }
        FieldValidation::Warn => Ok((undeclared, problems)),
        _ => Ok((undeclared, Vec::new())),
    }
}

/// The fields `obj` holds that the Go type `ty` does not declare (none without a type).
pub(crate) fn undeclared_fields(ty: Option<&'static gotypes::Struct>, obj: &Value) -> Vec<String> {
    ty.and_then(|ty| gotypes::decode(ty, &mut obj.clone()).ok())
        .unwrap_or_default()
}
