//! The semantics of the API: what each verb does to the store, following the apiserver's generic
//! registry (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`) and the custom resource
//! strategy (`apiextensions-apiserver/pkg/registry/customresource/strategy.go`).

mod admission;
mod create;
mod delete;
mod disruption;
mod list;
mod patch;
mod pods;
mod update;
mod validate;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kubeward_names::clock::SharedClock;
use serde_json::{Map, Value, json};

use self::delete::Expiries;
pub(crate) use self::list::{Filter, ListParams, ObjectList, field_value};
pub(crate) use self::patch::patch_error;
use crate::auth::authorizer::Identity;
use crate::kinds::{self, Upkeep};
use crate::object::meta_str;
use crate::resources::{Registry, ResourceInfo, View};
use crate::schema::{Decoding, FieldValidation};
use crate::status::{ApiError, Cause, Qualified};
use crate::store::{ObjectKey, StorageKey, Store};

/// The patch formats the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
    /// `application/strategic-merge-patch+json`.
    Strategic,
}

/// Per-request options of a write.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteOptions {
    /// The field manager (query parameter, or derived from the User-Agent).
    pub manager: String,
    /// Whether the `fieldManager` query parameter was given.
    pub manager_given: bool,
    /// `force` for apply.
    pub force: Option<bool>,
    /// `fieldValidation` and the body's duplicate fields, for schema admission.
    pub decoding: Decoding,
    /// Who makes the write, for the admission checks ([`admission`]); `None` for the server's
    /// own controllers, which are not admitted.
    pub(crate) requester: Option<Identity>,
    /// `dryRun=All`: the write is computed and answered but not stored.
    pub(crate) dry_run: bool,
    /// The `Warning` headers the write collects (unknown and duplicate fields, deprecated
    /// versions), sent with its answer whatever its status.
    pub(crate) warnings: Warnings,
}

/// The warnings one request collects on its way through the registry.
#[derive(Debug, Clone, Default)]
pub(crate) struct Warnings(RefCell<Vec<String>>);

impl Warnings {
    /// Adds `warnings`, after those already collected.
    pub(crate) fn extend(&self, warnings: impl IntoIterator<Item = String>) {
        self.0.borrow_mut().extend(warnings);
    }

    /// The warnings collected so far, leaving none.
    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

/// Everything the server keeps between requests.
pub(crate) struct State {
    /// Served resources.
    pub registry: Registry,
    /// Stored objects and history.
    pub store: Store,
    /// How long an event lives after its last write.
    pub event_ttl: Duration,
    /// Time source for timestamps and TTLs.
    pub clock: SharedClock,
    /// The service CIDR and node port range Services are allocated from.
    pub(crate) service_network: kinds::service::ServiceNetwork,
    expiries: Expiries,
}

fn events_key() -> StorageKey {
    StorageKey {
        group: "events.k8s.io".into(),
        resource: "events".into(),
    }
}

/// Where namespaces are stored.
pub(crate) fn namespaces_key() -> StorageKey {
    StorageKey {
        group: String::new(),
        resource: "namespaces".into(),
    }
}

fn crd_key() -> StorageKey {
    StorageKey {
        group: "apiextensions.k8s.io".into(),
        resource: "customresourcedefinitions".into(),
    }
}

/// What decoding a custom resource's body of another apiVersion warns before the version is
/// refused: its schema there is unknown, so every top-level field but apiVersion, kind and
/// metadata is pruned as unknown (`unknown field "spec"`), under `fieldValidation=Warn`.
fn unserved_version_warnings(
    info: &ResourceInfo,
    body: &Value,
    decoding: &Decoding,
) -> Vec<String> {
    let wrong_version = body["apiVersion"]
        .as_str()
        .is_some_and(|v| v != info.api_version());
    if !info.custom || !wrong_version || decoding.directive != FieldValidation::Warn {
        return Vec::new();
    }
    let mut unknown: Vec<String> = body
        .as_object()
        .into_iter()
        .flat_map(Map::keys)
        .filter(|k| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
        .map(|k| format!("unknown field {}", crate::go::fmt::go_quote(k)))
        .collect();
    unknown.sort();
    unknown
}

/// Creates must not carry a resourceVersion (one that parses as a non-zero number, as etcd3's
/// versioner reads it).
fn reject_resource_version(body: &Value) -> Result<(), ApiError> {
    match meta_str(body, "resourceVersion").map(str::parse::<u64>) {
        Some(Ok(rv)) if rv != 0 => Err(ApiError::resource_version_on_create()),
        _ => Ok(()),
    }
}

impl State {
    /// A fresh state with the built-in resources and the `default`, `kube-system`, `kube-public`
    /// and `kube-node-lease` namespaces.
    pub(crate) fn new(history_limit: usize, event_ttl: Duration, clock: SharedClock) -> Self {
        let mut state = Self {
            registry: Registry::builtin(),
            store: Store::new(history_limit),
            event_ttl,
            clock,
            service_network: kinds::service::ServiceNetwork::default(),
            expiries: Expiries::default(),
        };
        let ns_info = state
            .registry
            .get("", "v1", "namespaces")
            .expect("namespaces are built in");
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            // Creating built-in namespaces in an empty store cannot fail.
            let _ = state.create(&ns_info, None, body, &WriteOptions::default());
        }
        // kube-apiserver's watch caches start at the resourceVersion of their first list, after
        // its bootstrap objects: a watch from before it is `too old`, however few writes came
        // since.
        state.store.start_history();
        state
    }

    pub(crate) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The stored object presented as `info` serves it (its kind's
    /// [`to_served`](kinds::Strategy::to_served)).
    pub(crate) fn to_view(info: &ResourceInfo, stored: &Value) -> Value {
        kinds::strategy(info).to_served(info, stored).into_owned()
    }

    /// The stored object `stored` as `info` serves it, shared with the store when it is served
    /// in its stored form (no copy).
    pub(crate) fn served(info: &ResourceInfo, stored: &Arc<Value>) -> Arc<Value> {
        match kinds::strategy(info).to_served(info, stored) {
            Cow::Borrowed(_) => Arc::clone(stored),
            Cow::Owned(view) => Arc::new(view),
        }
    }

    /// An object that is not (or no longer) stored — a dry run's, a deleted one — as `info`
    /// serves it.
    pub(crate) fn served_owned(info: &ResourceInfo, obj: Value) -> Arc<Value> {
        let view = match kinds::strategy(info).to_served(info, &obj) {
            Cow::Borrowed(_) => None,
            Cow::Owned(view) => Some(view),
        };
        Arc::new(view.unwrap_or(obj))
    }

    /// An object written through `info`, in its stored form.
    fn from_view(info: &ResourceInfo, view: Value) -> Value {
        kinds::strategy(info).to_stored(info, view)
    }

    /// The checks every create or update body passes first: an object, of this resource's kind
    /// and version, in a namespace this resource's scope allows. Returns the namespace.
    fn check_write_body(
        info: &ResourceInfo,
        namespace: Option<&str>,
        body: &Value,
    ) -> Result<String, ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "Object 'Kind' is missing in the request body",
            ));
        }
        Self::check_body_identity(info, body)?;
        Self::check_scope(info, namespace)
    }

    /// A write's body naming a namespace other than the request's is 400.
    fn check_body_namespace(info: &ResourceInfo, body: &Value, ns: &str) -> Result<(), ApiError> {
        match meta_str(body, "namespace") {
            Some(body_ns) if info.namespaced && !body_ns.is_empty() && body_ns != ns => {
                Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ))
            }
            _ => Ok(()),
        }
    }

    fn check_scope(info: &ResourceInfo, namespace: Option<&str>) -> Result<String, ApiError> {
        match (info.namespaced, namespace) {
            (true, Some(ns)) => Ok(ns.to_string()),
            (false, None) => Ok(String::new()),
            _ => Err(ApiError::no_route()),
        }
    }

    fn require_namespace(&self, ns: &str) -> Result<(), ApiError> {
        if ns.is_empty() || self.store.get(&namespaces_key(), "", ns).is_some() {
            Ok(())
        } else {
            Err(ApiError::not_found(
                Qualified {
                    group: "",
                    name: "namespaces",
                },
                ns,
            ))
        }
    }

    fn check_body_identity(info: &ResourceInfo, body: &Value) -> Result<(), ApiError> {
        if let Some(av) = body["apiVersion"].as_str()
            && av != info.api_version()
            && info.view == View::Native
        {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({})",
                info.api_version()
            )));
        }
        if let Some(kind) = body["kind"].as_str()
            && kind != info.kind
            && info.custom
        {
            // apiextensions' validator: a 422 about the object as the kind it claims to be.
            return Err(ApiError::invalid(
                super::status::Qualified {
                    group: &info.group,
                    name: kind,
                },
                meta_str(body, "name").unwrap_or_default(),
                vec![Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {}: must be {}",
                        crate::go::fmt::go_quote(kind),
                        info.kind
                    ),
                    field: "kind".into(),
                }],
            ));
        }
        if let Some(kind) = body["kind"].as_str()
            && kind != info.kind
            && info.view == View::Native
        {
            // The decoder reads the body as the kind it names and cannot convert it to this
            // resource's internal type.
            return Err(unknown_conversion(info, &info.version, kind));
        }
        if let Some(kind) = body["kind"].as_str()
            && kind != info.kind
        {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({})",
                info.kind
            )));
        }
        Ok(())
    }

    /// Keeps up what `stored`, just written, asks of the registry ([`kinds::Strategy::after_write`]).
    fn after_write(&mut self, stored: &Value, info: &ResourceInfo) {
        let upkeep = kinds::strategy(info).after_write(stored);
        self.keep_up(upkeep, stored, true);
    }

    /// Keeps up what `gone`, just removed, asks of the registry ([`kinds::Strategy::after_delete`]).
    fn after_delete(&mut self, gone: &Value, info: &ResourceInfo) {
        let upkeep = kinds::strategy(info).after_delete(gone);
        self.keep_up(upkeep, gone, false);
    }

    /// Carries out `upkeep` for `object`, written (`stored`) or removed.
    fn keep_up(&mut self, upkeep: Upkeep, object: &Value, stored: bool) {
        match upkeep {
            Upkeep::None => {}
            Upkeep::Expires if stored => {
                let at = self
                    .now()
                    .checked_add(self.event_ttl)
                    .unwrap_or(Timestamp::MAX);
                self.expiries.arm(super::store::object_key(object), at);
            }
            Upkeep::Expires => self.expiries.disarm(&super::store::object_key(object)),
            Upkeep::Serves(infos) => {
                if let Some(first) = infos.first() {
                    self.registry.remove(&first.group, &first.plural);
                }
                for i in infos {
                    self.registry.insert(i);
                }
            }
            Upkeep::StopsServing { group, plural } => {
                let storage = StorageKey {
                    group: group.clone(),
                    resource: plural.clone(),
                };
                let doomed: Vec<ObjectKey> = self
                    .store
                    .list(&storage, None)
                    .map(super::store::object_key)
                    .collect();
                for (ns, name) in doomed {
                    self.store.remove(&storage, &ns, &name);
                }
                self.registry.remove(&group, &plural);
            }
        }
    }

    /// Registers a CRD object directly (as if POSTed), returning it.
    pub(crate) fn install_crd(&mut self, crd: Value) -> Result<Value, ApiError> {
        let info = self
            .registry
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .ok_or_else(|| ApiError::internal("CRDs are not served"))?;
        self.create(&info, None, crd, &WriteOptions::default())
            .map(Arc::unwrap_or_clone)
    }

    /// The plural of the served resource of `kind` at `api_version` (`v1`, `group/version`).
    pub(crate) fn plural_of_kind(&self, api_version: &str, kind: &str) -> Option<String> {
        self.registry
            .by_kind(api_version, kind)
            .map(|info| info.plural.clone())
    }

    /// The served resource at `group/version/plural`.
    pub(crate) fn resource(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceInfo>> {
        self.registry.get(group, version, plural)
    }
}

/// The codec's refusal of a body the decoder read as `kind` of `version` (another kind than the
/// resource's): it has no conversion to the resource's internal type.
pub(crate) fn unknown_conversion(info: &ResourceInfo, version: &str, kind: &str) -> ApiError {
    let internal = match info.group.as_str() {
        "" | "events.k8s.io" => "core",
        "coordination.k8s.io" => "coordination",
        "rbac.authorization.k8s.io" => "rbac",
        "apiextensions.k8s.io" => "apiextensions",
        group => group.split('.').next().unwrap_or(group),
    };
    ApiError::bad_request(format!(
        "{kind} in version {version:?} cannot be handled as a {}: converting ({version}.{kind}) to ({internal}.{}): unknown conversion",
        info.kind, info.kind
    ))
}
