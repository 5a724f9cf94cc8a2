//! core/v1 ResourceQuotas (`pkg/registry/core/resourcequota`) and LimitRanges
//! (`pkg/registry/core/limitrange`): their Go types, defaulting, rules, status isolation both
//! ways for quotas (`PrepareForUpdate` of the main and the status strategy), the quota printer's
//! columns (`printResourceQuota`) and the default table convertor's for limit ranges
//! (`rest.NewDefaultTableConvertor`: Name and Created At).

use serde_json::{Value, json};

use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::Column;
use crate::validation::quantity::Quantity;
use crate::validation::{self, FieldError, gotypes, quota};

const RESOURCE_QUOTA: &str = "io.k8s.api.core.v1.ResourceQuota";
const LIMIT_RANGE: &str = "io.k8s.api.core.v1.LimitRange";

/// The fields of the Go types that are structs rather than pointers: present in the zero
/// value the field manager compares a create with.
const QUOTA_VALUE_STRUCTS: &[&str] = &["spec", "status"];
const LIMIT_RANGE_VALUE_STRUCTS: &[&str] = &["spec"];

static QUOTA: Typed = typed!(RESOURCE_QUOTA, QUOTA_VALUE_STRUCTS);
static LIMITS: Typed = typed!(LIMIT_RANGE, LIMIT_RANGE_VALUE_STRUCTS);

/// The zero `spec` and `status` structs the Go encoder writes as `{}`.
fn zero_structs(obj: &mut Value, fields: &[&str]) {
    for field in fields {
        if !obj[*field].is_object() {
            obj[*field] = json!({});
        }
    }
}

/// ResourceQuotas' [`Strategy`].
pub(crate) struct ResourceQuotas;

impl Strategy for ResourceQuotas {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*QUOTA.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        quota::default_resource_quota(obj)?;
        zero_structs(obj, &["spec", "status"]);
        Ok(())
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        quota::resource_quota_rules(new, old)
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        _name: &str,
        new: &mut Value,
        _old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        if subresource == Some("status") {
            return validation::invalid(info, new, quota::quota_status_rules(&new["status"]));
        }
        Ok(())
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // resourcequotaStatusStrategy.PrepareForUpdate: the spec is the stored one; the rest is
        // the write's.
        crate::object::keep_stored(new, old, "spec");
        zero_structs(new, &["status"]);
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&QUOTA.apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        QUOTA_VALUE_STRUCTS
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        vec![
            Column::name(),
            Column::new("Request", "string", 0, Box::new(|o, _| json!(usage(o, false))))
                .described("Request represents a minimum amount of cpu/memory that a container may consume."),
            Column::new("Limit", "string", 0, Box::new(|o, _| json!(usage(o, true))))
                .described("Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
            Column::age(),
        ]
    }
}

/// `printResourceQuota`'s Request (or Limit) cell: `<resource>: <used>/<hard>` of each hard
/// resource (those named `limits.*` in the Limit cell), by name, joined by `, `.
fn usage(obj: &Value, limits: bool) -> String {
    let status = &obj["status"];
    let quantity =
        |v: &Value| Quantity::of_json(v).map_or_else(|| "0".to_owned(), |q| q.canonical());
    status["hard"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(name, _)| {
            let mut pieces = name.split('.');
            let is_limit = pieces.next() == Some("limits") && pieces.next().is_some();
            is_limit == limits
        })
        .map(|(name, hard)| {
            format!(
                "{name}: {}/{}",
                quantity(&status["used"][name.as_str()]),
                quantity(hard)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// LimitRanges' [`Strategy`].
pub(crate) struct LimitRanges;

impl Strategy for LimitRanges {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*LIMITS.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        quota::default_limit_range(obj)?;
        zero_structs(obj, &["spec"]);
        if obj["spec"].get("limits").is_none() {
            // `limits` has no omitempty: an absent list is written null.
            obj["spec"]["limits"] = Value::Null;
        }
        Ok(())
    }

    fn field_rules(&self, new: &Value, _old: Option<&Value>) -> Vec<FieldError> {
        quota::limit_range_rules(new)
    }

    fn creates_on_update(&self) -> bool {
        true
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&LIMITS.apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        LIMIT_RANGE_VALUE_STRUCTS
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        vec![
            Column::name(),
            Column::new(
                "Created At",
                "date",
                0,
                Box::new(|o, _| o["metadata"]["creationTimestamp"].clone()),
            )
            .described(&super::deployment::description(
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "creationTimestamp",
            )),
        ]
    }
}
