//! core/v1 Nodes (`pkg/registry/core/node/strategy.go`): their Go type, defaulting, the
//! `TaintNodesByCondition` admission's not-ready taint on a create, rules and warnings, status
//! isolation both ways (a create keeps the status it is given, as the kubelet registers a node
//! with its status; a main write keeps the stored status; a status write keeps the stored
//! spec), the `spec.unschedulable` field label (`NodeToSelectableFields`) and the printer's
//! columns (`pkg/printers/internalversion/printers.go`: `printNode`). Nodes keep no generation.

use serde_json::{Value, json};

use super::deployment::description;
use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::Column;
use crate::validation::{FieldError, gotypes, invalid, node};

/// The OpenAPI definition of the kind.
const DEFINITION: &str = "io.k8s.api.core.v1.Node";

/// Nodes' [`Strategy`].
pub(crate) struct Nodes;

static TYPED: Typed = typed!(DEFINITION, VALUE_STRUCTS);

/// The fields of the Go type that are structs rather than pointers.
const VALUE_STRUCTS: &[&str] = &[
    "spec",
    "status",
    "status.daemonEndpoints",
    "status.daemonEndpoints.kubeletEndpoint",
    "status.nodeInfo",
];

/// `NodeSystemInfo`'s fields the encoder always writes (no `omitempty`).
const NODE_INFO: &[&str] = &[
    "machineID",
    "systemUUID",
    "bootID",
    "kernelVersion",
    "osImage",
    "containerRuntimeVersion",
    "kubeletVersion",
    "kubeProxyVersion",
    "operatingSystem",
    "architecture",
];

/// The label prefix of a node's roles (`labelNodeRolePrefix`) and the older role label
/// (`nodeLabelRole`).
const ROLE_PREFIX: &str = "node-role.kubernetes.io/";
const ROLE_LABEL: &str = "kubernetes.io/role";

/// The zero values the v1 encoder writes of a node's value structs: `spec: {}`, the daemon
/// endpoint's `Port`, the system info's strings.
fn zero_values(obj: &mut Value) {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    let status = &mut obj["status"];
    if !status["daemonEndpoints"].is_object() {
        status["daemonEndpoints"] = json!({});
    }
    let endpoint = &mut status["daemonEndpoints"]["kubeletEndpoint"];
    if !endpoint.is_object() {
        *endpoint = json!({});
    }
    if endpoint["Port"].is_null() {
        endpoint["Port"] = json!(0);
    }
    if !status["nodeInfo"].is_object() {
        status["nodeInfo"] = json!({});
    }
    for key in NODE_INFO {
        if status["nodeInfo"][*key].is_null() {
            status["nodeInfo"][*key] = json!("");
        }
    }
}

/// `NodeToSelectableFields`: the name and `spec.unschedulable` (`fmt.Sprint` of the bool).
fn field_value(obj: &Value, field: &str) -> Option<String> {
    match field {
        "metadata.name" => obj["metadata"]["name"].as_str().map(str::to_owned),
        "spec.unschedulable" => Some(
            obj["spec"]["unschedulable"]
                .as_bool()
                .unwrap_or(false)
                .to_string(),
        ),
        _ => None,
    }
}

/// `printNode`'s Status cell: `Ready`/`NotReady` from the Ready condition (`Unknown` without
/// one), then `SchedulingDisabled` for an unschedulable node.
fn status_cell(obj: &Value) -> Value {
    let ready = obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|c| c["type"] == "Ready");
    let mut status = vec![match ready {
        Some(c) if c["status"] == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if obj["spec"]["unschedulable"] == true {
        status.push("SchedulingDisabled");
    }
    json!(status.join(","))
}

/// `findNodeRoles`, sorted and joined; `<none>` without any.
fn roles_cell(obj: &Value) -> Value {
    let mut roles: Vec<&str> = obj["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix(ROLE_PREFIX) {
            Some(role) => Some(role).filter(|r| !r.is_empty()),
            None if k == ROLE_LABEL => v.as_str().filter(|v| !v.is_empty()),
            None => None,
        })
        .collect();
    roles.sort_unstable();
    roles.dedup();
    json!(if roles.is_empty() {
        "<none>".to_owned()
    } else {
        roles.join(",")
    })
}

/// The first address of `kind`, `<none>` without one.
fn address_cell(obj: &Value, kind: &str) -> Value {
    obj["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["type"] == kind)
        .map_or(json!("<none>"), |a| a["address"].clone())
}

/// A system info cell, `<unknown>` when empty.
fn info_cell(obj: &Value, key: &str) -> Value {
    match obj["status"]["nodeInfo"][key].as_str() {
        Some(v) if !v.is_empty() => json!(v),
        _ => json!("<unknown>"),
    }
}

impl Strategy for Nodes {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*TYPED.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        node::default_node(obj)
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        match old {
            None => node::node_rules(new),
            // An update's rules depend on the endpoint: `validate_update`.
            Some(_) => Vec::new(),
        }
    }

    fn update_revalidates_metadata(&self) -> bool {
        true
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        _name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        Ok(node::node_warnings(obj))
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        _name: &str,
        new: &mut Value,
        old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        // The main strategy runs `ValidateNode` and `ValidateNodeUpdate`; the status strategy
        // only the latter.
        let mut errs = match subresource {
            Some("status") => Vec::new(),
            _ => node::node_rules(new),
        };
        errs.extend(node::node_update_rules(new, old));
        invalid(info, new, errs)
    }

    fn warnings_on_update(&self, new: &Value, subresource: Option<&str>) -> Vec<String> {
        // The status strategy gives none.
        match subresource {
            Some("status") => Vec::new(),
            _ => node::node_warnings(new),
        }
    }

    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        // TaintNodesByCondition, a mutating admission: after the field manager.
        node::add_not_ready_taint(obj);
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // nodeStatusStrategy.PrepareForUpdate: the spec is the stored one.
        crate::object::keep_stored(new, old, "spec");
        if old["status"]["config"].is_null()
            && let Some(status) = new["status"].as_object_mut()
        {
            status.remove("config");
        }
    }

    fn stored_form(&self, obj: &mut Value) {
        zero_values(obj);
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&TYPED.apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        VALUE_STRUCTS
    }

    fn field_labels(&self) -> &'static [&'static str] {
        &["spec.unschedulable"]
    }

    fn unsupported_field_label(&self, field: &str) -> Option<String> {
        super::core_field_label_error(field)
    }

    fn field_values(&self) -> Option<fn(&Value, &str) -> Option<String>> {
        Some(field_value)
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        let info = "io.k8s.api.core.v1.NodeSystemInfo";
        let addresses = description("io.k8s.api.core.v1.NodeStatus", "addresses");
        let info_column = |name: &str, key: &'static str| {
            Column::new(name, "string", 1, Box::new(move |o, _| info_cell(o, key)))
                .described(&description(info, key))
        };
        vec![
            Column::name(),
            Column::new("Status", "string", 0, Box::new(|o, _| status_cell(o)))
                .described("The status of the node"),
            Column::new("Roles", "string", 0, Box::new(|o, _| roles_cell(o)))
                .described("The roles of the node"),
            Column::age(),
            Column::new(
                "Version",
                "string",
                0,
                Box::new(|o, _| {
                    json!(
                        o["status"]["nodeInfo"]["kubeletVersion"]
                            .as_str()
                            .unwrap_or_default()
                    )
                }),
            )
            .described(&description(info, "kubeletVersion")),
            Column::new(
                "Internal-IP",
                "string",
                1,
                Box::new(|o, _| address_cell(o, "InternalIP")),
            )
            .described(&addresses),
            Column::new(
                "External-IP",
                "string",
                1,
                Box::new(|o, _| address_cell(o, "ExternalIP")),
            )
            .described(&addresses),
            info_column("OS-Image", "osImage"),
            info_column("Kernel-Version", "kernelVersion"),
            info_column("Container-Runtime", "containerRuntimeVersion"),
        ]
    }
}
