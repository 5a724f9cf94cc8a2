//! discovery.k8s.io/v1 EndpointSlices (`pkg/registry/discovery/endpointslice`): their Go type,
//! defaulting, rules, generation (bumped by any change but the metadata's, or by the labels'),
//! the deprecation warning of FQDN slices, the `deprecatedTopology` v1 writes drop, and the
//! printer's columns (`printEndpointSlice`).

use serde_json::{Value, json};

use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::Column;
use crate::validation::{FieldError, endpoint_slice, gotypes};

const DEFINITION: &str = "io.k8s.api.discovery.v1.EndpointSlice";

static TYPED: Typed = typed!(DEFINITION, &[]);

/// The descriptions the printer takes from discovery/v1beta1's `SwaggerDoc()`.
mod described {
    pub(super) const ADDRESS_TYPE: &str = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.";
    pub(super) const PORTS: &str = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.";
    pub(super) const ENDPOINTS: &str = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.";
}

/// `obj` defaulted (a clone): what an update compares as after decoding.
fn defaulted(obj: &Value) -> Value {
    let mut obj = obj.clone();
    endpoint_slice::default_endpoint_slice(&mut obj);
    obj
}

/// `obj` without its metadata.
fn without_metadata(mut obj: Value) -> Value {
    if let Some(m) = obj.as_object_mut() {
        m.remove("metadata");
    }
    obj
}

/// `listWithMoreString`: the first three, and how many more; `<unset>` when empty.
fn first_three(list: Vec<String>) -> String {
    match list.len() {
        0 => "<unset>".to_owned(),
        n if n > 3 => format!("{} + {} more...", list[..3].join(","), n - 3),
        _ => list.join(","),
    }
}

/// `formatDiscoveryPorts`: each port's number, else its name, else `*`.
fn ports(o: &Value) -> String {
    let list = o["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| match (&p["port"], p["name"].as_str()) {
            (Value::Number(n), _) => n.to_string(),
            (_, Some(name)) => name.to_owned(),
            _ => "*".to_owned(),
        })
        .collect();
    first_three(list)
}

/// `formatDiscoveryEndpoints`: every endpoint's addresses.
fn endpoints(o: &Value) -> String {
    let list = o["endpoints"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|e| e["addresses"].as_array().cloned().unwrap_or_default())
        .map(|a| a.as_str().unwrap_or_default().to_owned())
        .collect();
    first_three(list)
}

/// EndpointSlices' [`Strategy`].
pub(crate) struct EndpointSlices;

impl Strategy for EndpointSlices {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*TYPED.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        endpoint_slice::default_endpoint_slice(obj);
        // As the Go encoder writes them: `endpoints` and `ports` (no omitempty) null when
        // absent, each endpoint's `conditions` struct `{}`.
        for list in ["endpoints", "ports"] {
            if obj.get(list).is_none() {
                obj[list] = Value::Null;
            }
        }
        for e in obj["endpoints"].as_array_mut().into_iter().flatten() {
            if e.is_object() && !e["conditions"].is_object() {
                e["conditions"] = json!({});
            }
        }
        Ok(())
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        endpoint_slice::endpoint_slice_rules(new, old)
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        _name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        Ok(endpoint_slice::address_type_warning(obj)
            .into_iter()
            .collect())
    }

    fn bumps_generation(
        &self,
        old: &Value,
        new: &Value,
        _subresource: Option<&str>,
    ) -> Option<bool> {
        // PrepareForUpdate: anything but the metadata, or the labels.
        Some(
            without_metadata(defaulted(new)) != without_metadata(defaulted(old))
                || new["metadata"]["labels"] != old["metadata"]["labels"],
        )
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&TYPED.apply)
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        vec![
            Column::name(),
            Column::new(
                "AddressType",
                "string",
                0,
                Box::new(|o, _| json!(o["addressType"].as_str().unwrap_or_default())),
            )
            .described(described::ADDRESS_TYPE),
            Column::new("Ports", "string", 0, Box::new(|o, _| json!(ports(o))))
                .described(described::PORTS),
            Column::new(
                "Endpoints",
                "string",
                0,
                Box::new(|o, _| json!(endpoints(o))),
            )
            .described(described::ENDPOINTS),
            Column::age(),
        ]
    }
}
