//! policy/v1 PodDisruptionBudgets (`pkg/registry/policy/poddisruptionbudget`): their Go type,
//! rules, generation (bumped by a change of the spec through the main resource), status
//! isolation both ways (`PrepareForUpdate` of the main and the status strategy) and the
//! printer's columns (`printPodDisruptionBudget`). What evictions do with them is the pod
//! registry's (`crate::registry`).

use serde_json::{Value, json};

use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::Column;
use crate::validation::{self, FieldError, disruption, gotypes};

const DEFINITION: &str = "io.k8s.api.policy.v1.PodDisruptionBudget";

/// The fields of the Go type that are structs rather than pointers.
const VALUE_STRUCTS: &[&str] = &["spec", "status"];

/// The status counts the Go type writes even when zero (no `omitempty`).
const STATUS_COUNTS: &[&str] = &[
    "disruptionsAllowed",
    "currentHealthy",
    "desiredHealthy",
    "expectedPods",
];

static TYPED: Typed = typed!(DEFINITION, VALUE_STRUCTS);

/// The zero spec and status, as the Go encoder writes them.
fn zero_structs(obj: &mut Value) {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    for count in STATUS_COUNTS {
        if obj["status"][*count].is_null() {
            obj["status"][*count] = json!(0);
        }
    }
}

/// An `*intstr.IntOrString` cell: its `String()`, `N/A` when absent.
fn int_or_string(value: &Value) -> Value {
    match value {
        Value::Null => json!("N/A"),
        Value::String(s) => json!(s),
        other => json!(other.to_string()),
    }
}

/// PodDisruptionBudgets' [`Strategy`].
pub(crate) struct PodDisruptionBudgets;

impl Strategy for PodDisruptionBudgets {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*TYPED.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        zero_structs(obj);
        Ok(())
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        disruption::pdb_rules(new, old)
    }

    fn allows_unconditional_update(&self) -> bool {
        false
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
            return validation::invalid(info, new, disruption::pdb_status_rules(new));
        }
        Ok(())
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // podDisruptionBudgetStatusStrategy.PrepareForUpdate: the spec is the stored one.
        crate::object::keep_stored(new, old, "spec");
        zero_structs(new);
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&TYPED.apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        VALUE_STRUCTS
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        vec![
            Column::name(),
            Column::new(
                "Min Available",
                "string",
                0,
                Box::new(|o, _| int_or_string(&o["spec"]["minAvailable"])),
            )
            .described("The minimum number of pods that must be available."),
            Column::new(
                "Max Unavailable",
                "string",
                0,
                Box::new(|o, _| int_or_string(&o["spec"]["maxUnavailable"])),
            )
            .described("The maximum number of pods that may be unavailable."),
            Column::new(
                "Allowed Disruptions",
                "integer",
                0,
                Box::new(|o, _| json!(o["status"]["disruptionsAllowed"].as_i64().unwrap_or(0))),
            )
            .described("Calculated number of pods that may be disrupted at this time."),
            Column::age(),
        ]
    }
}
