//! networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies
//! (`pkg/registry/networking/{ingress,ingressclass,networkpolicy}`): their Go types,
//! defaulting, rules, generation (bumped by a change of the spec), an Ingress's status
//! isolation both ways and its class annotation warning, and the printers' columns
//! (`pkg/printers/internalversion/printers.go`). The rules are [`crate::validation::networking`].

use serde_json::{Value, json};

use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::Column;
use crate::validation::{self, FieldError, apps, gotypes, networking};

/// The strategy of one of the kinds.
pub(crate) enum Networking {
    /// `ingresses`.
    Ingresses,
    /// `ingressclasses` (cluster-scoped).
    IngressClasses,
    /// `networkpolicies`.
    NetworkPolicies,
}

/// The fields of the Go types that are structs rather than pointers (see
/// [`Strategy::value_structs`]).
const INGRESS_STRUCTS: &[&str] = &["spec", "status", "status.loadBalancer"];
const INGRESS_CLASS_STRUCTS: &[&str] = &["spec"];
const NETWORK_POLICY_STRUCTS: &[&str] = &["spec", "spec.podSelector"];

static INGRESS: Typed = typed!("io.k8s.api.networking.v1.Ingress", INGRESS_STRUCTS);
static INGRESS_CLASS: Typed = typed!(
    "io.k8s.api.networking.v1.IngressClass",
    INGRESS_CLASS_STRUCTS
);
static NETWORK_POLICY: Typed = typed!(
    "io.k8s.api.networking.v1.NetworkPolicy",
    NETWORK_POLICY_STRUCTS
);

/// The columns' descriptions, as the printers write them.
mod described {
    pub(super) const CLASS: &str =
        "The name of the IngressClass resource that should be used for additional configuration";
    pub(super) const HOSTS: &str =
        "Hosts that incoming requests are matched against before the ingress rule";
    pub(super) const ADDRESS: &str =
        "Address is a list containing ingress points for the load-balancer";
    pub(super) const PORTS: &str = "Ports of TLS configurations that open";
    pub(super) const CONTROLLER: &str = "Controller that is responsible for handling this class";
    pub(super) const PARAMETERS: &str = "A reference to a resource with additional parameters";
    /// extensions/v1beta1's `NetworkPolicySpec{}.SwaggerDoc()["podSelector"]`.
    pub(super) const POD_SELECTOR: &str = "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.";
}

fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `formatHosts`: the first three hosts, `*` when none.
fn hosts(obj: &Value) -> Value {
    const MAX: usize = 3;
    let rules = items(&obj["spec"]["rules"]);
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        if !more && let Some(host) = rule["host"].as_str().filter(|h| !h.is_empty()) {
            list.push(host);
        }
    }
    if list.is_empty() {
        return json!("*");
    }
    if more {
        json!(format!(
            "{} + {} more...",
            list.join(","),
            rules.len() - MAX
        ))
    } else {
        json!(list.join(","))
    }
}

/// `ingressLoadBalancerStatusStringer`: the sorted, deduplicated IPs (or hostnames); the
/// server prints them wide (unclipped).
fn address(obj: &Value) -> Value {
    let mut all: Vec<&str> = items(&obj["status"]["loadBalancer"]["ingress"])
        .iter()
        .filter_map(|i| {
            i["ip"]
                .as_str()
                .filter(|ip| !ip.is_empty())
                .or_else(|| i["hostname"].as_str().filter(|h| !h.is_empty()))
        })
        .collect();
    all.sort_unstable();
    all.dedup();
    json!(all.join(","))
}

/// `printIngressClass`'s Parameters cell: `<kind>[.<group>]/<name>`.
fn parameters(obj: &Value) -> Value {
    let p = &obj["spec"]["parameters"];
    if !p.is_object() {
        return json!("<none>");
    }
    let mut out = p["kind"].as_str().unwrap_or_default().to_owned();
    if let Some(group) = p["apiGroup"].as_str() {
        out = format!("{out}.{group}");
    }
    json!(format!("{out}/{}", p["name"].as_str().unwrap_or_default()))
}

impl Networking {
    fn typed(&self) -> &'static Typed {
        match self {
            Networking::Ingresses => &INGRESS,
            Networking::IngressClasses => &INGRESS_CLASS,
            Networking::NetworkPolicies => &NETWORK_POLICY,
        }
    }

    /// The kind's `SetDefaults_*` on `obj`.
    fn default(&self, obj: &mut Value) {
        match self {
            Networking::Ingresses => {}
            Networking::IngressClasses => networking::default_ingress_class(obj),
            Networking::NetworkPolicies => networking::default_network_policy(obj),
        }
    }

    /// `obj` defaulted (a clone): what the spec compares as after decoding.
    fn defaulted(&self, obj: &Value) -> Value {
        let mut obj = obj.clone();
        self.default(&mut obj);
        obj
    }
}

impl Strategy for Networking {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*self.typed().go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        self.default(obj);
        Ok(())
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        match self {
            Networking::Ingresses => networking::ingress_rules(new, old),
            Networking::IngressClasses => networking::ingress_class_rules(new, old),
            Networking::NetworkPolicies => networking::network_policy_rules(new, old),
        }
    }

    /// `ValidateIngressClassUpdate` runs `ValidateIngressClass` (its metadata included) again,
    /// as NetworkPolicies' `ValidateUpdate` runs `ValidateNetworkPolicy` before the update's.
    fn update_revalidates_metadata(&self) -> bool {
        matches!(
            self,
            Networking::IngressClasses | Networking::NetworkPolicies
        )
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        _name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        Ok(match self {
            Networking::Ingresses => networking::ingress_warnings(obj),
            _ => Vec::new(),
        })
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        _name: &str,
        new: &mut Value,
        old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        if matches!(self, Networking::Ingresses) && subresource == Some("status") {
            let errs = networking::ingress_status_rules(new, old);
            return validation::invalid(info, new, errs);
        }
        Ok(())
    }

    fn prepare_for_update(&self, _old: &Value, new: &mut Value, _subresource: Option<&str>) {
        self.default(new);
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // ingressStatusStrategy.PrepareForUpdate: the spec is the stored one; the metadata and
        // the status are the write's.
        crate::object::keep_stored(new, old, "spec");
        if new.get("status").is_none_or(Value::is_null) {
            new["status"] = json!({"loadBalancer": {}});
        }
    }

    fn bumps_generation(
        &self,
        old: &Value,
        new: &Value,
        subresource: Option<&str>,
    ) -> Option<bool> {
        super::spec_changed(|o| self.defaulted(o), old, new, subresource)
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&self.typed().apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        match self {
            Networking::Ingresses => INGRESS_STRUCTS,
            Networking::IngressClasses => INGRESS_CLASS_STRUCTS,
            Networking::NetworkPolicies => NETWORK_POLICY_STRUCTS,
        }
    }

    fn stored_form(&self, obj: &mut Value) {
        // The encoder writes an Ingress's status struct (and its load balancer) and a
        // NetworkPolicy's pod selector, which are values, not pointers.
        match self {
            Networking::Ingresses => {
                if !obj["status"].is_object() {
                    obj["status"] = json!({});
                }
                if !obj["status"]["loadBalancer"].is_object() {
                    obj["status"]["loadBalancer"] = json!({});
                }
            }
            Networking::NetworkPolicies => {
                if !obj["spec"]["podSelector"].is_object() {
                    obj["spec"]["podSelector"] = json!({});
                }
            }
            Networking::IngressClasses => {
                if !obj["spec"].is_object() {
                    obj["spec"] = json!({});
                }
            }
        }
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        use described::*;
        let mut columns = vec![Column::name()];
        match self {
            Networking::Ingresses => columns.extend([
                Column::new(
                    "Class",
                    "string",
                    0,
                    Box::new(|o, _| {
                        json!(o["spec"]["ingressClassName"].as_str().unwrap_or("<none>"))
                    }),
                )
                .described(CLASS),
                Column::new("Hosts", "string", 0, Box::new(|o, _| hosts(o))).described(HOSTS),
                Column::new("Address", "string", 0, Box::new(|o, _| address(o))).described(ADDRESS),
                Column::new(
                    "Ports",
                    "string",
                    0,
                    Box::new(|o, _| {
                        json!(if items(&o["spec"]["tls"]).is_empty() {
                            "80"
                        } else {
                            "80, 443"
                        })
                    }),
                )
                .described(PORTS),
            ]),
            Networking::IngressClasses => columns.extend([
                Column::new(
                    "Controller",
                    "string",
                    0,
                    Box::new(|o, _| json!(o["spec"]["controller"].as_str().unwrap_or_default())),
                )
                .described(CONTROLLER),
                Column::new("Parameters", "string", 0, Box::new(|o, _| parameters(o)))
                    .described(PARAMETERS),
            ]),
            Networking::NetworkPolicies => columns.push(
                Column::new(
                    "Pod-Selector",
                    "string",
                    0,
                    Box::new(|o, _| {
                        let selector = apps::selector_string(&o["spec"]["podSelector"]);
                        json!(if selector.is_empty() {
                            "<none>".to_owned()
                        } else {
                            selector
                        })
                    }),
                )
                .described(POD_SELECTOR),
            ),
        }
        columns.push(Column::age());
        columns
    }
}
