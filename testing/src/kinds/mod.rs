//! What a kind adds to the generic registry ([`crate::registry`]): a [`Strategy`] a kind, looked
//! up from the resource ([`strategy`]), as kube-apiserver gives each resource's generic store a
//! strategy of its own. The registry calls them and they never call back: each hook is given the
//! objects it decides on and answers what the registry is to do.
//!
//! - [`crd`]: the resources a CustomResourceDefinition serves, and the warnings its schemas earn;
//! - [`custom`]: the objects those definitions serve;
//! - [`events`]: Events' validation, columns, field labels and the events.k8s.io/v1 ↔ core/v1
//!   mapping;
//! - [`namespace`]: namespaces' strategy and `NamespaceLifecycle` admission;
//! - [`deployment`]: apps/v1 Deployments, with their scale subresource;
//! - [`pod`]: core/v1 Pods (their `binding` and `eviction` subresources are the registry's);
//! - [`workloads`]: apps/v1 ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions;
//! - [`service`]: core/v1 Services (cluster IPs and node ports allocated) and Endpoints;
//! - [`quota`]: core/v1 ResourceQuotas and LimitRanges; [`disruption`]: policy/v1
//!   PodDisruptionBudgets; [`endpoint_slice`]: discovery.k8s.io/v1 EndpointSlices;
//! - [`networking`]: networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies;
//! - [`autoscaling`]: HorizontalPodAutoscalers, stored as autoscaling/v2 and served as v1 too;
//! - [`batch`]: batch/v1 Jobs (their generated selector) and CronJobs;
//! - [`node`]: core/v1 Nodes (status kept on create, the not-ready taint);
//! - [`storage`]: core/v1 PersistentVolumeClaims and PersistentVolumes, storage.k8s.io/v1
//!   StorageClasses;
//! - `config_map`, `secret`, `lease`, `service_account`, `rbac`: the other built-ins.
//!
//! A strategy names its kind's rules; the rules themselves are written once in
//! [`crate::validation`] (as upstream's `pkg/apis/*/validation`, which the registries' strategies
//! call), and the table columns are made of [`crate::table::column`]s.

pub(crate) mod autoscaling;
mod batch;
mod config_map;
pub(crate) mod crd;
mod custom;
pub(crate) mod deployment;
mod disruption;
mod endpoint_slice;
pub(crate) mod events;
mod lease;
pub(crate) mod namespace;
mod networking;
mod node;
pub(crate) mod pod;
mod quota;
mod rbac;
mod secret;
pub(crate) mod service;
mod service_account;
pub(crate) mod storage;
pub(crate) mod workloads;

use std::borrow::Cow;

use http::Method;
use serde_json::Value;

use crate::apply::ApplySchema;
use crate::lifecycle::propagation::Propagation;
use crate::resources::{ResourceInfo, View};
use crate::status::ApiError;
use crate::table::column::{self, Column};
use crate::validation::names::NameRule;
use crate::validation::rbac::RbacKind;
use crate::validation::{FieldError, gotypes};

/// What a built-in kind's Go type and apply schema are read from (its OpenAPI definition),
/// each once, on first use.
pub(crate) struct Typed {
    pub(crate) go_type: std::sync::LazyLock<&'static gotypes::Struct>,
    pub(crate) apply: std::sync::LazyLock<ApplySchema>,
}

/// The [`Typed`] of the definition `$definition`, whose Go type's value structs are `$structs`
/// (see [`Strategy::value_structs`]).
macro_rules! typed {
    ($definition:expr, $structs:expr) => {
        $crate::kinds::Typed {
            go_type: ::std::sync::LazyLock::new(|| {
                $crate::validation::gotypes::from_definition($definition)
            }),
            apply: ::std::sync::LazyLock::new(|| {
                $crate::apply::ApplySchema::from_definitions($definition, $structs)
            }),
        }
    };
}
pub(crate) use typed;

/// What the registry does with a DELETE, once the kind had its say.
#[derive(Debug)]
pub(crate) enum Deletion {
    /// Store this object in place of the stored one and answer it (a namespace's first DELETE
    /// marks it `Terminating`).
    Replace(Value),
    /// Answer the stored object unchanged.
    Unchanged,
    /// The generic deletion: metadata finalizers, then removal.
    Generic,
}

/// What the registry keeps up to date once a kind's object is stored or removed.
#[derive(Debug)]
pub(crate) enum Upkeep {
    /// Nothing.
    None,
    /// The object expires a TTL after its last write (Events).
    Expires,
    /// The object defines these served resources, in place of those it defined before (a
    /// valid CRD).
    Serves(Vec<ResourceInfo>),
    /// The resource `plural` of `group` is no longer served, and its objects are gone (a
    /// deleted CRD).
    StopsServing {
        /// Its API group.
        group: String,
        /// Its plural name.
        plural: String,
    },
}

/// A kind's part in each step of a request, grouped in the order a write takes them (its form,
/// decoding, validation, preparation for storage, what follows the write), then the reads and
/// the deletes. Every hook defaults to what the generic registry does alone; a kind overrides
/// the steps it changes.
pub(crate) trait Strategy: Sync {
    // Conversion between the served and the stored form.

    /// The stored object `stored` as `info` serves it: `stored` itself when it is served in
    /// its stored form.
    fn to_served<'a>(&self, info: &ResourceInfo, stored: &'a Value) -> Cow<'a, Value> {
        served_as_ref(info, stored)
    }

    /// An object written through `info`, as the request gave it (before decoding), in its
    /// stored form.
    fn to_stored(&self, info: &ResourceInfo, served: Value) -> Value {
        served_as(info, served)
    }

    // Decoding.

    /// The Go type the typed decoder reads the kind's objects as (type errors, undeclared
    /// fields); `None` for kinds it reads without one.
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        None
    }

    /// The rest of decoding, after the typed decoder: the typed fields' values (`[]byte` as
    /// base64, times), the kind's defaulting (`SetDefaults_<Kind>`) and conversion to the
    /// internal form.
    ///
    /// # Errors
    /// The decoder's message (`illegal base64 data at input byte 3`), answered as a 400.
    fn decode(&self, _obj: &mut Value) -> Result<(), String> {
        Ok(())
    }

    /// Defaulting at decoding (`SetDefaults_<Kind>`) of a create's object named `name`, before
    /// any validation.
    fn default_create(&self, _obj: &mut Value, _name: &str) {}

    // Validation.

    /// How the kind's objects are named.
    fn name_rule(&self) -> NameRule {
        NameRule::DnsSubdomain
    }

    /// The kind's field rules on `new` (and on an update, against `old`), reported with the
    /// metadata's in one 422 (`ValidateConfigMap`, `ValidateSecretUpdate`, ...).
    fn field_rules(&self, _new: &Value, _old: Option<&Value>) -> Vec<FieldError> {
        Vec::new()
    }

    /// Whether the kind's update validation runs `ValidateObjectMetaUpdate` and its whole create
    /// validation (`ValidateObjectMeta` included) again, reporting the metadata's problems more
    /// than once as kube-apiserver does.
    fn update_revalidates_metadata(&self) -> bool {
        false
    }

    /// The kind's validation of a create's object (and the parts of `PrepareForCreate` that
    /// precede the field manager), after the generic checks; the warnings it earns.
    ///
    /// # Errors
    /// The 422 (or other refusal) to answer.
    fn validate_create(
        &self,
        _info: &ResourceInfo,
        _name: &str,
        _obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        Ok(Vec::new())
    }

    /// The kind's validation of an update of `old` to `new` (through `subresource`), after the
    /// generic checks.
    ///
    /// # Errors
    /// The 422 to answer.
    fn validate_update(
        &self,
        _info: &ResourceInfo,
        _name: &str,
        _new: &mut Value,
        _old: &Value,
        _subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// The warnings an update of `new` (through `subresource`) earns (`WarningsOnUpdate`), once
    /// it is valid.
    fn warnings_on_update(&self, _new: &Value, _subresource: Option<&str>) -> Vec<String> {
        Vec::new()
    }

    /// Whether a PUT may leave out the resourceVersion it replaces (`AllowUnconditionalUpdate`).
    fn allows_unconditional_update(&self) -> bool {
        true
    }

    /// Whether a PUT of a missing object creates it (`AllowCreateOnUpdate`).
    fn creates_on_update(&self) -> bool {
        false
    }

    // Preparation for storage.

    /// Whether a create keeps the status it was given (a Node's `PrepareForCreate` does not
    /// reset it, where every other kind with a status subresource does).
    fn keeps_status_on_create(&self) -> bool {
        false
    }

    /// The parts of `PrepareForCreate` that run after the field manager recorded the request,
    /// so that what they set is owned by no one.
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// `PrepareForUpdate` of a write through the main resource or `subresource` (status excepted:
    /// the status strategy keeps everything but the status).
    fn prepare_for_update(&self, _old: &Value, _new: &mut Value, _subresource: Option<&str>) {}

    /// `PrepareForUpdate` of a write through `/status`: by default (the CRD status strategy's)
    /// everything but the status (and the request's managedFields) is the stored object's; a
    /// body without status clears it.
    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        let status = new.get("status").cloned();
        let managed = new["metadata"]["managedFields"].clone();
        let mut merged = old.clone();
        match status {
            Some(s) => merged["status"] = s,
            None => {
                if let Some(m) = merged.as_object_mut() {
                    m.remove("status");
                }
            }
        }
        if !managed.is_null() {
            merged["metadata"]["managedFields"] = managed;
        }
        *new = merged;
    }

    /// Whether an update of `old` to `new` through `subresource` bumps `metadata.generation`
    /// (of a kind that tracks it); `None`: the generic rule, any change outside metadata (and
    /// status, under a status subresource).
    fn bumps_generation(
        &self,
        _old: &Value,
        _new: &Value,
        _subresource: Option<&str>,
    ) -> Option<bool> {
        None
    }

    /// The list and map types the field manager and server-side apply read for the kind
    /// (from its OpenAPI definition); `None`: the generic built-in rules
    /// ([`ApplySchema::default`]).
    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        None
    }

    /// The paths of the kind's Go type that are structs rather than pointers (present and
    /// empty in its zero value), for a kind with an [`Strategy::apply_schema`]: the field
    /// manager does not own them when empty, nor as `.` when it finds them added.
    fn value_structs(&self) -> &'static [&'static str] {
        &[]
    }

    /// The `status.selector` of the kind's `Scale` (a built-in workload's selector in its
    /// string form); `None`: the CRD's label selector path.
    fn scale_selector(&self, _obj: &Value) -> Option<String> {
        None
    }

    /// `obj` as storage gives it back (an RBAC role's empty rules come back null).
    fn stored_form(&self, _obj: &mut Value) {}

    // What follows a write.

    /// What the registry keeps up to date once `stored` is written.
    fn after_write(&self, _stored: &Value) -> Upkeep {
        Upkeep::None
    }

    /// What the registry keeps up to date once `gone` is removed.
    fn after_delete(&self, _gone: &Value) -> Upkeep {
        Upkeep::None
    }

    /// Whether the kind is established by a controller's write right after its create (a CRD's
    /// names accepted and its `Established` condition).
    fn established_after_create(&self) -> bool {
        false
    }

    // Reads.

    /// The field labels a field selector may use beyond `metadata.name` and
    /// `metadata.namespace`.
    fn field_labels(&self) -> &'static [&'static str] {
        &[]
    }

    /// The message of the kind's own field-label conversion for a label it does not support;
    /// `None`: the kind has none, and apimachinery's `DefaultMetaV1FieldSelectorConversion`
    /// words it.
    fn unsupported_field_label(&self, _field: &str) -> Option<String> {
        None
    }

    /// How the kind reads a field label's value from an object (in its served view), where it
    /// is not the value at the label's path (`ToSelectableFields` of pods); `None`: the path's.
    fn field_values(&self) -> Option<fn(&Value, &str) -> Option<String>> {
        None
    }

    /// Discovery's entries for the kind's own subresources (beyond `status` and `scale`), listed
    /// before `status`.
    fn discovery_subresources(&self) -> Vec<Value> {
        Vec::new()
    }

    /// The columns of the kind's tables (`kubectl get`): its printers', or the generic ones.
    fn columns(&self, info: &ResourceInfo) -> Vec<Column> {
        column::printer_columns(info)
    }

    /// Whether the kind serves `subresource` (beyond `status` and `scale`, which every kind
    /// declaring them serves) to `method`.
    fn serves(&self, _subresource: &str, _method: &Method) -> bool {
        false
    }

    // Deletes.

    /// Whether a collection DELETE is served.
    fn deletes_collections(&self) -> bool {
        true
    }

    /// Whether nothing but its metadata finalizers keeps `obj` once it is deleting
    /// (`ShouldDeleteDuringUpdate`).
    fn finalized(&self, _obj: &Value) -> bool {
        true
    }

    /// The warnings a DELETE (of one object or a collection) with these `DeleteOptions` earns
    /// from the kind's REST storage, before anything is deleted.
    fn delete_warnings(&self, _options: &Value) -> Vec<String> {
        Vec::new()
    }

    /// The kind's part of a DELETE of `old` with `policy`, at `now`.
    ///
    /// # Errors
    /// A refusal (a namespace that may not be deleted).
    fn before_delete(
        &self,
        _old: &Value,
        _policy: Option<Propagation>,
        _now: &str,
    ) -> Result<Deletion, ApiError> {
        Ok(Deletion::Generic)
    }

    /// The grace period of a DELETE of `obj` that asked for `requested` seconds, for a kind that
    /// deletes gracefully (`RESTGracefulDeleteStrategy.CheckGracefulDelete`); `None`: deleted
    /// at once.
    fn grace_period(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// Whether a DELETE that removes the object answers it rather than a `Status`
    /// (`ReturnDeletedObject`).
    fn returns_deleted_object(&self) -> bool {
        false
    }
}

/// `stored` with the `apiVersion` and `kind` `info` serves: borrowed when it has them.
fn served_as_ref<'a>(info: &ResourceInfo, stored: &'a Value) -> Cow<'a, Value> {
    let served_version = match stored["apiVersion"].as_str() {
        Some(version) if info.group.is_empty() => version == info.version,
        Some(version) => version
            .strip_prefix(info.group.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|v| v == info.version),
        None => false,
    };
    if served_version && stored["kind"].as_str() == Some(info.kind.as_str()) {
        Cow::Borrowed(stored)
    } else {
        Cow::Owned(served_as(info, stored.clone()))
    }
}

/// `obj` with the apiVersion and kind `info` serves: the generic registry's objects are stored
/// as served.
fn served_as(info: &ResourceInfo, mut obj: Value) -> Value {
    obj["apiVersion"] = Value::String(info.api_version());
    obj["kind"] = Value::String(info.kind.clone());
    obj
}

/// `PrepareForUpdate`'s generation rule of most built-in kinds: a write of the main resource
/// whose spec, both sides `defaulted`, differs.
fn spec_changed(
    defaulted: impl Fn(&Value) -> Value,
    old: &Value,
    new: &Value,
    subresource: Option<&str>,
) -> Option<bool> {
    Some(subresource != Some("status") && defaulted(new)["spec"] != defaulted(old)["spec"])
}

/// The refusal of core/v1's field-label conversions (and custom resources'):
/// `field label not supported: x`.
fn core_field_label_error(field: &str) -> Option<String> {
    Some(format!("field label not supported: {field}"))
}

/// The generic registry, unchanged.
struct Generic;

impl Strategy for Generic {}

/// The strategy of `info`'s kind.
pub(crate) fn strategy(info: &ResourceInfo) -> &'static dyn Strategy {
    if info.custom {
        return &custom::CustomResources;
    }
    if let Some(kind) = RbacKind::of(&info.group, &info.plural) {
        return rbac::strategy(kind);
    }
    match (info.group.as_str(), info.plural.as_str(), info.view) {
        ("", "namespaces", _) => &namespace::Namespaces,
        ("apiextensions.k8s.io", "customresourcedefinitions", _) => &crd::Definitions,
        ("events.k8s.io", "events", View::Native) => &events::Events::Native,
        ("", "events", _) => &events::Events::Core,
        ("", "configmaps", _) => &config_map::ConfigMaps,
        ("", "secrets", _) => &secret::Secrets,
        ("", "serviceaccounts", _) => &service_account::ServiceAccounts,
        ("coordination.k8s.io", "leases", _) => &lease::Leases,
        ("apps", "deployments", _) => &deployment::Deployments,
        ("", "pods", _) => &pod::Pods,
        ("", "services", _) => &service::Services,
        ("", "endpoints", _) => &service::Endpoints,
        ("apps", "replicasets", _) => &workloads::Workloads::ReplicaSets,
        ("apps", "statefulsets", _) => &workloads::Workloads::StatefulSets,
        ("apps", "daemonsets", _) => &workloads::Workloads::DaemonSets,
        ("apps", "controllerrevisions", _) => &workloads::Workloads::ControllerRevisions,
        ("", "resourcequotas", _) => &quota::ResourceQuotas,
        ("", "limitranges", _) => &quota::LimitRanges,
        ("policy", "poddisruptionbudgets", _) => &disruption::PodDisruptionBudgets,
        ("discovery.k8s.io", "endpointslices", _) => &endpoint_slice::EndpointSlices,
        ("networking.k8s.io", "ingresses", _) => &networking::Networking::Ingresses,
        ("networking.k8s.io", "ingressclasses", _) => &networking::Networking::IngressClasses,
        ("networking.k8s.io", "networkpolicies", _) => &networking::Networking::NetworkPolicies,
        ("autoscaling", "horizontalpodautoscalers", _) if info.version == "v1" => {
            &autoscaling::Autoscalers::V1
        }
        ("autoscaling", "horizontalpodautoscalers", _) => &autoscaling::Autoscalers::V2,
        ("batch", "jobs", _) => &batch::Batch::Jobs,
        ("batch", "cronjobs", _) => &batch::Batch::CronJobs,
        ("", "nodes", _) => &node::Nodes,
        ("", "persistentvolumeclaims", _) => &storage::Storage::Claims,
        ("", "persistentvolumes", _) => &storage::Storage::Volumes,
        ("storage.k8s.io", "storageclasses", _) => &storage::Storage::Classes,
        _ => &Generic,
    }
}
