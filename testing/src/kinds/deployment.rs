//! apps/v1 Deployments (`pkg/registry/apps/deployment`): their Go type, defaulting, rules,
//! generation (bumped by a change of the spec or the annotations through the main resource or
//! `/scale`), status isolation both ways (`PrepareForUpdate` of the main and the status
//! strategy), the scale subresource's selector and the printer's columns.

use serde_json::{Value, json};

use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::Column;
use crate::validation::{FieldError, apps, gotypes};

/// The OpenAPI definition of the kind.
const DEFINITION: &str = "io.k8s.api.apps.v1.Deployment";

/// Deployments' [`Strategy`].
pub(crate) struct Deployments;

static TYPED: Typed = typed!(DEFINITION, VALUE_STRUCTS);

/// The fields of the Go type that are structs rather than pointers, or lists without
/// `omitempty`: present in the zero value the field manager compares a create with.
const VALUE_STRUCTS: &[&str] = &[
    "spec",
    "spec.template.spec.containers",
    "spec.strategy",
    "spec.template",
    "spec.template.metadata",
    "spec.template.spec",
    "status",
];

/// The description of `field` of the definition `name`, as the printers take it from
/// `SwaggerDoc()`.
pub(super) fn description(name: &str, field: &str) -> String {
    crate::openapi::definitions::Definitions::builtin()
        .get(name)
        .and_then(|d| d["properties"][field]["description"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The names (or images) of the template's containers, joined by commas.
pub(super) fn containers(obj: &Value, field: &str) -> Value {
    let list: Vec<&str> = obj["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect();
    json!(list.join(","))
}

/// The `Ready` column of Deployments and StatefulSets: ready replicas of those wanted.
pub(super) fn ready_column() -> Column {
    Column::new(
        "Ready",
        "string",
        0,
        Box::new(|o, _| {
            json!(format!(
                "{}/{}",
                o["status"]["readyReplicas"].as_i64().unwrap_or(0),
                o["spec"]["replicas"].as_i64().unwrap_or(0)
            ))
        }),
    )
    .described("Number of the pod with ready state")
}

impl Strategy for Deployments {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*TYPED.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        apps::default_deployment(obj)
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        apps::deployment_rules(new, old)
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        name: &str,
        _obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        Ok(apps::name_warning(name).into_iter().collect())
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value, subresource: Option<&str>) {
        if subresource.is_none() || subresource == Some("scale") {
            // Decoding defaults the spec before the strategy compares it.
            let _ = apps::default_deployment(new);
        }
        let _ = old;
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // deploymentStatusStrategy.PrepareForUpdate: the spec and the labels are the stored
        // ones; the rest of the metadata is the write's.
        crate::object::keep_stored(new, old, "spec");
        match old["metadata"].get("labels") {
            Some(labels) => new["metadata"]["labels"] = labels.clone(),
            None => {
                if let Some(meta) = new["metadata"].as_object_mut() {
                    meta.remove("labels");
                }
            }
        }
        if new.get("status").is_none_or(Value::is_null) {
            new["status"] = json!({});
        }
    }

    fn bumps_generation(
        &self,
        old: &Value,
        new: &Value,
        subresource: Option<&str>,
    ) -> Option<bool> {
        // The stored `old` was defaulted when it was written; defaulting reads only the spec.
        let spec_changed = || {
            if new["spec"] == old["spec"] {
                return false;
            }
            let mut spec_only = json!({ "spec": new["spec"].clone() });
            let _ = apps::default_deployment(&mut spec_only);
            spec_only["spec"] != old["spec"]
        };
        Some(
            subresource != Some("status")
                && (new["metadata"]["annotations"] != old["metadata"]["annotations"]
                    || spec_changed()),
        )
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&TYPED.apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        VALUE_STRUCTS
    }

    fn scale_selector(&self, obj: &Value) -> Option<String> {
        Some(apps::selector_string(&obj["spec"]["selector"]))
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        let status = "io.k8s.api.apps.v1.DeploymentStatus";
        vec![
            Column::name(),
            ready_column(),
            Column::new(
                "Up-to-date",
                "string",
                0,
                Box::new(|o, _| json!(o["status"]["updatedReplicas"].as_i64().unwrap_or(0))),
            )
            .described(&description(status, "updatedReplicas")),
            Column::new(
                "Available",
                "string",
                0,
                Box::new(|o, _| json!(o["status"]["availableReplicas"].as_i64().unwrap_or(0))),
            )
            .described(&description(status, "availableReplicas")),
            Column::age(),
            Column::new("Containers", "string", 1, Box::new(|o, _| containers(o, "name")))
                .described("Names of each container in the template."),
            Column::new("Images", "string", 1, Box::new(|o, _| containers(o, "image")))
                .described("Images referenced by each container in the template."),
            Column::new(
                "Selector",
                "string",
                1,
                Box::new(|o, _| json!(apps::selector_string(&o["spec"]["selector"]))),
            )
            // extensions/v1beta1's DeploymentSpec doc, which the printer still takes.
            .described("Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."),
        ]
    }
}
