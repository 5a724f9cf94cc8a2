//! What a kind adds to the generic registry ([`crate::registry`]): a [`Strategy`] a kind, looked
//! up from the resource ([`strategy`]), as kube-apiserver gives each resource's generic store a
//! strategy of its own. The registry calls them and they never call back: each hook is given the
//! objects it decides on and answers what the registry is to do.
//!
//! - [`crd`]: the resources a CustomResourceDefinition serves, and the warnings its schemas earn;
//! - [`events`]: Events' validation and the events.k8s.io/v1 ↔ core/v1 mapping;
//! - [`namespace`]: namespaces' strategy and `NamespaceLifecycle` admission.
//!
//! The built-in kinds' field rules are [`crate::validation`]'s, for every kind alike.

pub(crate) mod crd;
pub(crate) mod events;
pub(crate) mod namespace;

use http::Method;
use serde_json::Value;

use crate::lifecycle::propagation::Propagation;
use crate::resources::{ResourceInfo, View};
use crate::status::ApiError;

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

/// A kind's part in each step of a write. Every hook defaults to what the generic registry does
/// alone; a kind overrides the steps it changes.
pub(crate) trait Strategy: Sync {
    /// Defaulting at decoding (`SetDefaults_<Kind>`) of a create's object named `name`, before
    /// any validation.
    fn default_create(&self, _obj: &mut Value, _name: &str) {}

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

    /// The parts of `PrepareForCreate` that run after the field manager recorded the request,
    /// so that what they set is owned by no one.
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// `PrepareForUpdate` of a write through the main resource or `subresource` (status excepted:
    /// the status strategy keeps everything but the status).
    fn prepare_for_update(&self, _old: &Value, _new: &mut Value, _subresource: Option<&str>) {}

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

    /// Whether nothing but its metadata finalizers keeps `obj` once it is deleting
    /// (`ShouldDeleteDuringUpdate`).
    fn finalized(&self, _obj: &Value) -> bool {
        true
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

    /// Whether a DELETE that removes the object answers it rather than a `Status`
    /// (`ReturnDeletedObject`).
    fn returns_deleted_object(&self) -> bool {
        false
    }

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

    /// Whether the kind serves `subresource` (beyond `status` and `scale`, which every kind
    /// declaring them serves) to `method`.
    fn serves(&self, _subresource: &str, _method: &Method) -> bool {
        false
    }
}

/// The generic registry, unchanged.
struct Generic;

impl Strategy for Generic {}

/// ServiceAccounts: the generic registry, answering a DELETE with the deleted object.
struct ServiceAccounts;

impl Strategy for ServiceAccounts {
    fn returns_deleted_object(&self) -> bool {
        true
    }
}

/// The strategy of `info`'s kind.
pub(crate) fn strategy(info: &ResourceInfo) -> &'static dyn Strategy {
    match (info.group.as_str(), info.plural.as_str(), info.view) {
        ("", "namespaces", _) => &namespace::Namespaces,
        ("apiextensions.k8s.io", "customresourcedefinitions", _) => &crd::Definitions,
        ("events.k8s.io", "events", View::Native) => &events::Events::Native,
        ("", "events", _) => &events::Events::Core,
        ("", "serviceaccounts", _) => &ServiceAccounts,
        _ => &Generic,
    }
}
