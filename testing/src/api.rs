//! The semantics of the API: what each verb does to the store, following the apiserver's generic
//! registry (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`) and the custom resource
//! strategy (`apiextensions-apiserver/pkg/registry/customresource/strategy.go`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use rand::Rng;
use serde_json::{Map, Value, json};

use super::apply::{
    ApplyError, ApplySchema, Endpoint, FIELD_MANAGER_MAX_LENGTH, apply_at, update_at,
};
use super::continue_token;
use super::events_api::{
    from_core_v1, to_core_v1, validate_core_v1_event, validate_event_create, validate_event_update,
};
use super::lifecycle::namespace;
use super::lifecycle::propagation::{Propagation, deletion_finalizers};
use super::patch::{MAX_JSON_PATCH_OPERATIONS, PatchError, apply_json_patch, apply_merge_patch};
use super::resources::{Registry, ResourceInfo, StorageKey, View, infos_from_crd};
use super::schema::{self, Decoding, FieldValidation};
use super::selector::{FieldSelector, LabelSelector, labels_of};
use super::status::{ApiError, Cause, Qualified, delete_success};
use super::store::{ObjectKey, Store};
use super::strategic;
use super::validation;
use kubeward::clock::SharedClock;

/// Characters of generated name suffixes (apimachinery `util/rand`: no vowels, no confusables).
const NAME_SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the random suffix appended to `generateName` (apiserver `names.SimpleNameGenerator`).
const NAME_SUFFIX_LEN: usize = 5;
/// The longest prefix of `generateName` kept (63 - 5; `maxGeneratedNameLength`).
const MAX_GENERATE_NAME_PREFIX: usize = 58;

/// The patch formats the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
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
pub struct WriteOptions {
    /// The field manager (query parameter, or derived from the User-Agent).
    pub manager: String,
    /// Whether the `fieldManager` query parameter was given.
    pub manager_given: bool,
    /// `force` for apply.
    pub force: Option<bool>,
    /// `fieldValidation` and the body's duplicate fields, for schema admission.
    pub decoding: Decoding,
}

/// Expiry times of events, indexed both ways so that a sweep costs only what is due.
#[derive(Debug, Default)]
struct Expiries {
    at: BTreeMap<ObjectKey, Timestamp>,
    queue: BTreeSet<(Timestamp, ObjectKey)>,
}

impl Expiries {
    fn arm(&mut self, key: ObjectKey, at: Timestamp) {
        self.disarm(&key);
        self.queue.insert((at, key.clone()));
        self.at.insert(key, at);
    }

    fn disarm(&mut self, key: &ObjectKey) {
        if let Some(at) = self.at.remove(key) {
            self.queue.remove(&(at, key.clone()));
        }
    }

    /// Removes and returns every key due at `now`.
    fn due(&mut self, now: Timestamp) -> Vec<ObjectKey> {
        let mut out = Vec::new();
        while let Some((at, _)) = self.queue.first()
            && *at <= now
        {
            if let Some((_, key)) = self.queue.pop_first() {
                self.at.remove(&key);
                out.push(key);
            }
        }
        out
    }
}

/// Everything the server keeps between requests.
pub struct State {
    /// Served resources.
    pub registry: Registry,
    /// Stored objects and history.
    pub store: Store,
    /// How long an event lives after its last write.
    pub event_ttl: Duration,
    /// Time source for timestamps and TTLs.
    pub clock: SharedClock,
    expiries: Expiries,
    /// Set for the duration of a `dryRun=All` request: writes are computed and answered but
    /// not stored.
    pub dry_run: bool,
    /// The `Warning` headers of the current request (unknown and duplicate fields).
    pub warnings: Vec<String>,
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

/// RFC 3339 with whole seconds, the wire form of `metav1.Time`.
pub fn rfc3339(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj["metadata"][field].as_str()
}

/// The strings of a JSON list (none if it is not one).
pub(crate) fn string_list(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The `metadata.finalizers` of an object.
pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    string_list(&obj["metadata"]["finalizers"])
}

/// `metadata` as a map, made one if it is not.
pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata was just made an object")
}

/// What `metadata.generation` is computed over: everything but metadata (and status when the
/// status subresource owns it).
fn generation_relevant(obj: &Value, status_subresource: bool) -> Value {
    let mut c = obj.clone();
    if let Some(m) = c.as_object_mut() {
        m.remove("metadata");
        m.remove("apiVersion");
        m.remove("kind");
        if status_subresource {
            m.remove("status");
        }
    }
    c
}

fn field_causes(errors: Vec<validation::FieldError>) -> Vec<Cause> {
    errors.into_iter().map(Cause::from).collect()
}

pub(crate) fn patch_error(err: PatchError) -> ApiError {
    match err {
        PatchError::Malformed(m) => ApiError::bad_request(m),
        // errors.NewGenericServerResponse(422, ...) in the patch handler.
        PatchError::Failed(_) => ApiError::patch_not_applied(),
    }
}

fn apply_error(err: ApplyError) -> ApiError {
    let message = err.message();
    match err {
        // NewConflictError in the field manager: causes only, no name/group/kind.
        ApplyError::Conflict { .. } => ApiError {
            code: 409,
            reason: "Conflict",
            message,
            details: Some(json!({"causes": err.status_causes()})),
        },
        ApplyError::Invalid(_) => ApiError::bad_request(message),
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
        .map(|k| format!("unknown field {}", super::validation::names::go_quote(k)))
        .collect();
    unknown.sort();
    unknown
}

/// Top-level fields the strategy resets on an endpoint (`GetResetFields`): status on the main
/// resource of a kind with a status subresource.
fn reset_fields(info: &ResourceInfo, subresource: Option<&str>) -> &'static [&'static str] {
    if subresource.is_none() && info.status_subresource {
        &["status"]
    } else {
        &[]
    }
}

/// The list and map types server-side apply merges by: from a CRD's schema, or the defaults.
fn apply_schema(info: &ResourceInfo) -> ApplySchema {
    info.schema
        .as_ref()
        .map(ApplySchema::from_openapi_v3)
        .unwrap_or_default()
}

/// Records a non-apply write by `manager` in `new`'s managedFields.
fn track_update(
    info: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    now: &str,
) {
    let api_version = info.api_version();
    let schema = apply_schema(info);
    let at = Endpoint {
        api_version: &api_version,
        subresource,
        reset_fields: reset_fields(info, subresource),
        schema: &schema,
    };
    if info.view == View::CoreEvent {
        // A core/v1 Event's fields are owned as the request's version names them (stored in
        // the events.k8s.io form here): compared in the core form, from the Go type's zero
        // values (which the comparison does not see as set).
        let core = |event: &Value| without_zero_values(to_core_v1(event));
        let old_core = old.map(core);
        let mut new_core = core(new);
        update_at(old_core.as_ref(), &mut new_core, manager, &at, now);
        new["metadata"]["managedFields"] = new_core["metadata"]["managedFields"].take();
        return;
    }
    if !info.custom {
        // A built-in is typed from its Go struct: a struct without any field set (a Lease's
        // `spec: {}`) holds no leaf, so no field is owned for it.
        let old_typed = old.map(|o| without_empty_structs(o.clone()));
        let mut new_typed = without_empty_structs(new.clone());
        update_at(old_typed.as_ref(), &mut new_typed, manager, &at, now);
        match new_typed["metadata"]
            .get_mut("managedFields")
            .map(Value::take)
        {
            Some(entries) => new["metadata"]["managedFields"] = entries,
            None => {
                if let Some(meta) = new["metadata"].as_object_mut() {
                    meta.remove("managedFields");
                }
            }
        }
        return;
    }
    update_at(old, new, manager, &at, now);
}

/// `value` without the empty objects outside `metadata` (see [`track_update`]).
fn without_empty_structs(mut value: Value) -> Value {
    fn prune(value: &mut Value) {
        if let Value::Object(map) = value {
            map.values_mut().for_each(prune);
            map.retain(|_, v| v.as_object().is_none_or(|m| !m.is_empty()));
        }
    }
    if let Value::Object(map) = &mut value {
        for (key, v) in map.iter_mut() {
            if key != "metadata" {
                prune(v);
            }
        }
        map.retain(|key, v| key == "metadata" || v.as_object().is_none_or(|m| !m.is_empty()));
    }
    value
}

/// `value` without the nulls, empty strings and empty objects a Go type's zero values encode
/// to (metadata kept whole).
fn without_zero_values(mut value: Value) -> Value {
    fn prune(value: &mut Value) {
        if let Value::Object(map) = value {
            map.values_mut().for_each(prune);
            map.retain(|_, v| match v {
                Value::Null => false,
                Value::String(s) => !s.is_empty(),
                Value::Object(m) => !m.is_empty(),
                _ => true,
            });
        }
    }
    if let Value::Object(map) = &mut value {
        for (key, v) in map.iter_mut() {
            if key != "metadata" {
                prune(v);
            }
        }
        map.retain(|key, v| key == "metadata" || !(v.is_null() || v == "" || v == &json!({})));
    }
    value
}

/// Parsed list/watch filters.
#[derive(Debug, Default)]
pub struct Filter {
    labels: Option<LabelSelector>,
    fields: Option<FieldSelector>,
}

impl Filter {
    /// Parses `labelSelector` and `fieldSelector`, checking the fields against what `info` supports.
    pub fn parse(
        info: &ResourceInfo,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Self, ApiError> {
        let labels = match label_selector.filter(|s| !s.is_empty()) {
            Some(s) => Some(LabelSelector::parse(s).map_err(|e| ApiError::bad_request(e.message))?),
            None => None,
        };
        let fields = match field_selector.filter(|s| !s.is_empty()) {
            Some(s) => {
                let sel = FieldSelector::parse(s).map_err(|e| ApiError::bad_request(e.message))?;
                let allowed = info.selectable_fields();
                if let Some(bad) = sel.fields().into_iter().find(|f| !allowed.contains(f)) {
                    return Err(ApiError::bad_request(info.unsupported_field_label(bad)));
                }
                Some(sel)
            }
            None => None,
        };
        Ok(Self { labels, fields })
    }

    /// Whether the filter lets everything through.
    pub fn is_empty(&self) -> bool {
        self.labels.is_none() && self.fields.is_none()
    }

    /// Whether an object (in the served view) passes the filter.
    pub fn matches(&self, view: &Value) -> bool {
        if let Some(l) = &self.labels
            && !l.matches(&labels_of(view))
        {
            return false;
        }
        if let Some(f) = &self.fields {
            return f.matches(|field| field_value(view, field));
        }
        true
    }
}

fn field_value(view: &Value, field: &str) -> Option<String> {
    if field == "source" {
        return view["source"]["component"].as_str().map(str::to_string);
    }
    let mut cur = view;
    for part in field.split('.') {
        cur = cur.get(part)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// List parameters.
#[derive(Debug, Default)]
pub struct ListParams<'a> {
    /// `labelSelector`.
    pub label_selector: Option<&'a str>,
    /// `fieldSelector`.
    pub field_selector: Option<&'a str>,
    /// `limit` (0 = none).
    pub limit: usize,
    /// `continue`.
    pub continue_token: Option<&'a str>,
    /// `resourceVersion` with `resourceVersionMatch=Exact`: the state to list.
    pub exact: Option<u64>,
}

impl State {
    /// A fresh state with the built-in resources and the `default`, `kube-system`, `kube-public`
    /// and `kube-node-lease` namespaces.
    pub fn new(history_limit: usize, event_ttl: Duration, clock: SharedClock) -> Self {
        let mut state = Self {
            registry: Registry::builtin(),
            store: Store::new(history_limit),
            event_ttl,
            clock,
            expiries: Expiries::default(),
            dry_run: false,
            warnings: Vec::new(),
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
        state
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The stored object presented as `info` serves it.
    pub fn to_view(info: &ResourceInfo, stored: &Value) -> Value {
        match info.view {
            View::CoreEvent => to_core_v1(stored),
            // Through the Go types and back: the keys the events.k8s.io/v1 encoder writes
            // (`deprecatedSource: {}`, null timestamps), unknown fields gone.
            View::Native if info.storage == events_key() => from_core_v1(&to_core_v1(stored)),
            View::Native => {
                let mut v = stored.clone();
                v["apiVersion"] = Value::String(info.api_version());
                v["kind"] = Value::String(info.kind.clone());
                // Defaults added to a CRD after an object was stored show on read, as the
                // storage decoder defaults.
                schema::default_on_read(info, &mut v);
                v
            }
        }
    }

    fn from_view(info: &ResourceInfo, mut view: Value) -> Value {
        match info.view {
            View::CoreEvent => from_core_v1(&view),
            View::Native => {
                view["apiVersion"] = Value::String(info.api_version());
                view["kind"] = Value::String(info.kind.clone());
                view
            }
        }
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

    fn check_scope(info: &ResourceInfo, namespace: Option<&str>) -> Result<String, ApiError> {
        match (info.namespaced, namespace) {
            (true, Some(ns)) => Ok(ns.to_string()),
            (false, None) => Ok(String::new()),
            _ => Err(ApiError::no_route()),
        }
    }

    /// Removes events whose TTL ran out, as etcd leases would.
    pub fn expire_events(&mut self) {
        let now = self.now();
        for key in self.expiries.due(now) {
            self.store.remove(&events_key(), &key.0, &key.1);
        }
    }

    /// GET of one object.
    pub fn get(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let ns = Self::check_scope(info, namespace)?;
        self.store
            .get(&info.storage, &ns, name)
            .map(|o| Self::to_view(info, o))
            .ok_or_else(|| ApiError::not_found(info.qualified_resource(), name))
    }

    /// LIST.
    pub fn list(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        params: &ListParams<'_>,
    ) -> Result<Value, ApiError> {
        if namespace.is_some() && !info.namespaced {
            return Err(ApiError::no_route());
        }
        let filter = Filter::parse(info, params.label_selector, params.field_selector)?;
        let (list_rv, after) = match params.continue_token.filter(|t| !t.is_empty()) {
            Some(token) => {
                let (rv, key) =
                    continue_token::decode(token, namespace).map_err(ApiError::bad_request)?;
                if self.store.is_compacted(rv) {
                    return Err(ApiError::expired(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue value from the response to start a new list with a continue parameter.",
                    ));
                }
                (rv, Some(key))
            }
            None => (params.exact.unwrap_or(self.store.current_rv()), None),
        };
        // A list continued, or asked at an exact resourceVersion, shows the state at it.
        let snapshot = self
            .store
            .list_at(&info.storage, namespace, after.as_ref(), list_rv);
        let objects: Box<dyn Iterator<Item = (&ObjectKey, &Value)>> = match &snapshot {
            Some(objects) => Box::new(objects.iter().map(|(k, v)| (k, v))),
            None => Box::new(
                self.store
                    .list_after(&info.storage, namespace, after.as_ref()),
            ),
        };
        let mut items = Vec::new();
        let mut next = None;
        let mut remaining = 0usize;
        // Only the core/v1 view of events differs from the stored form in selectable fields;
        // others are matched without building the view.
        let needs_view = info.view != View::Native;
        let selective = !filter.is_empty();
        for (key, stored) in objects {
            if params.limit > 0 && items.len() == params.limit {
                // The apiserver counts the rest only for lists without selectors.
                if selective {
                    remaining = 1;
                    break;
                }
                remaining += 1;
                continue;
            }
            let view = if needs_view {
                let view = Self::to_view(info, stored);
                if !filter.matches(&view) {
                    continue;
                }
                view
            } else {
                if !filter.matches(stored) {
                    continue;
                }
                Self::to_view(info, stored)
            };
            if params.limit > 0 && items.len() + 1 == params.limit {
                next = Some(key.clone());
            }
            items.push(view);
        }
        let mut metadata = json!({"resourceVersion": list_rv.to_string()});
        if info.custom {
            // An unstructured list keeps its empty `continue` (`UnstructuredList` metadata is a
            // map, not ListMeta with `omitempty`).
            metadata["continue"] = json!("");
        }
        if remaining > 0
            && let Some(key) = next
        {
            metadata["continue"] = Value::String(continue_token::encode(list_rv, &key, namespace));
            if !selective {
                metadata["remainingItemCount"] = json!(remaining);
            }
        }
        Ok(json!({
            "kind": format!("{}List", info.kind),
            "apiVersion": info.api_version(),
            "metadata": metadata,
            "items": items,
        }))
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
                        super::validation::names::go_quote(kind),
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
            let internal = match info.group.as_str() {
                "" | "events.k8s.io" => "core",
                "coordination.k8s.io" => "coordination",
                "rbac.authorization.k8s.io" => "rbac",
                "apiextensions.k8s.io" => "apiextensions",
                group => group.split('.').next().unwrap_or(group),
            };
            return Err(ApiError::bad_request(format!(
                "{kind} in version {:?} cannot be handled as a {}: converting ({}.{kind}) to ({internal}.{}): unknown conversion",
                info.version, info.kind, info.version, info.kind
            )));
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

    /// POST (create).
    pub fn create(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        body: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        self.warnings
            .extend(unserved_version_warnings(info, &body, &opts.decoding));
        let ns = Self::check_write_body(info, namespace, &body)?;
        if let Some(body_ns) = meta_str(&body, "namespace")
            && info.namespaced
            && !body_ns.is_empty()
            && body_ns != ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        reject_resource_version(&body)?;
        self.create_from_view(info, &ns, body, opts)
    }

    /// The create strategy, managedFields and storage of a create's (or a PUT's that creates)
    /// body.
    fn create_from_view(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        body: Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let mut obj = Self::from_view(info, body);
        self.decode_typed(info, &mut obj, &opts.decoding)?;
        self.prepare_create(info, ns, &mut obj)?;
        self.admit_schema(info, &mut obj, None, &opts.decoding)?;
        let now = rfc3339(self.now());
        track_update(info, None, &mut obj, &opts.manager, None, &now);
        strategy_prepare_for_create(info, &mut obj);
        self.commit_create(info, obj)
    }

    /// Fills server-owned metadata and applies the create strategy. Assigns a generated name.
    fn prepare_create(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        obj: &mut Value,
    ) -> Result<(), ApiError> {
        let now = self.now();
        let generate = meta_str(obj, "generateName").map(str::to_string);
        let name = match meta_str(obj, "name").filter(|n| !n.is_empty()) {
            Some(n) => n.to_string(),
            None => match generate.filter(|g| !g.is_empty()) {
                Some(prefix) => generate_name(&prefix),
                None => {
                    return Err(ApiError::invalid(
                        info.qualified_kind(),
                        "",
                        vec![Cause {
                            reason: "FieldValueRequired".into(),
                            message: "Required value: name or generateName is required".into(),
                            field: "metadata.name".into(),
                        }],
                    ));
                }
            },
        };
        self.require_namespace(ns)?;
        namespace::admit_create(self, info, ns, obj)?;
        let meta = meta_mut(obj);
        meta.insert("name".into(), json!(name));
        if info.namespaced {
            meta.insert("namespace".into(), json!(ns));
        } else {
            meta.remove("namespace");
        }
        meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta.insert("creationTimestamp".into(), json!(rfc3339(now)));
        for server_owned in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
            "resourceVersion",
        ] {
            meta.remove(server_owned);
        }
        if info.tracks_generation {
            meta.insert("generation".into(), json!(1));
        } else {
            meta.remove("generation");
        }
        if info.status_subresource
            && let Some(m) = obj.as_object_mut()
        {
            m.remove("status");
        }
        if info.group.is_empty() && info.plural == "namespaces" {
            // Defaulting (`SetDefaults_Namespace`) at decoding, so validated as any label (a
            // name too long for a label value is refused twice); the strategy's
            // `PrepareForCreate` runs after the field manager (`strategy_prepare_for_create`).
            let labels = meta_mut(obj).entry("labels").or_insert_with(|| json!({}));
            labels["kubernetes.io/metadata.name"] = json!(name);
        }
        validation::admit_create(info, obj)?;
        match (info.group.as_str(), info.plural.as_str()) {
            ("apiextensions.k8s.io", "customresourcedefinitions") => {
                validation::crd::set_defaults(obj);
                let infos = crd_infos(info, &name, obj)?;
                self.warnings.extend(crd_format_warnings(obj));
                let storage = obj["spec"]["versions"]
                    .as_array()
                    .and_then(|vs| vs.iter().find(|v| v["storage"].as_bool() == Some(true)))
                    .and_then(|v| v["name"].as_str())
                    .or_else(|| infos.first().map(|i| i.version.as_str()))
                    .unwrap_or_default()
                    .to_string();
                // The strategy's `PrepareForCreate`: a fresh status naming the storage version;
                // the names are accepted and the CRD established by controllers, in writes of
                // their own (`establish`).
                obj["status"] = json!({
                    "acceptedNames": {"plural": "", "kind": ""},
                    "conditions": null,
                    "storedVersions": [storage],
                });
            }
            ("events.k8s.io", "events") if info.view == View::Native => {
                validate_event_create(obj).map_err(|e| {
                    ApiError::invalid(info.qualified_kind(), &name, field_causes(e))
                })?;
            }
            ("", "events") => {
                validate_core_v1_event(&to_core_v1(obj)).map_err(|e| {
                    ApiError::invalid(info.qualified_kind(), &name, field_causes(e))
                })?;
            }
            _ => {}
        }
        Ok(())
    }

    /// [`validation::decode_typed`], keeping its warnings for the response.
    fn decode_typed(
        &mut self,
        info: &ResourceInfo,
        obj: &mut Value,
        decoding: &Decoding,
    ) -> Result<(), ApiError> {
        let warnings = validation::decode_typed(info, obj, decoding.directive)?;
        self.warnings.extend(warnings);
        Ok(())
    }

    /// [`schema::admit`], keeping its warnings for the response.
    fn admit_schema(
        &mut self,
        info: &ResourceInfo,
        obj: &mut Value,
        old: Option<&Value>,
        decoding: &Decoding,
    ) -> Result<(), ApiError> {
        schema::admit(info, obj, old, decoding, &mut self.warnings)
    }

    fn commit_create(&mut self, info: &ResourceInfo, mut obj: Value) -> Result<Value, ApiError> {
        validation::stored_form(info, &mut obj);
        let (ns, name) = super::store::object_key(&obj);
        if self.store.get(&info.storage, &ns, &name).is_some() {
            return Err(ApiError::already_exists(info.qualified_resource(), &name));
        }
        if self.dry_run {
            return Ok(Self::to_view(info, &obj));
        }
        let stored = self.store.put(&info.storage, obj);
        self.after_write(&stored, info);
        if info.storage == crd_key() {
            self.establish(&stored);
        }
        Ok(Self::to_view(info, &stored))
    }

    /// What apiextensions-apiserver's naming and establishing controllers write after a CRD is
    /// created: its names accepted and the `NamesAccepted` and `Established` conditions. Here
    /// at once, in one write after the create (whose answer still shows the fresh status).
    fn establish(&mut self, crd: &Value) {
        let ts = rfc3339(self.now());
        let mut established = crd.clone();
        established["status"]["acceptedNames"] = crd["spec"]["names"].clone();
        established["status"]["conditions"] = json!([
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": ts},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": ts},
        ]);
        self.store.put(&crd_key(), established);
    }

    fn after_write(&mut self, stored: &Value, info: &ResourceInfo) {
        if info.storage == events_key() {
            let at = self
                .now()
                .checked_add(self.event_ttl)
                .unwrap_or(Timestamp::MAX);
            self.expiries.arm(super::store::object_key(stored), at);
        }
        if info.storage == crd_key()
            && let Ok(infos) = infos_from_crd(stored)
        {
            if let Some(first) = infos.first() {
                self.registry.remove(&first.group, &first.plural);
            }
            for i in infos {
                self.registry.insert(i);
            }
        }
    }

    fn after_delete(&mut self, stored: &Value, info: &ResourceInfo) {
        let key = super::store::object_key(stored);
        if info.storage == events_key() {
            self.expiries.disarm(&key);
        }
        if info.storage == crd_key() {
            let group = stored["spec"]["group"].as_str().unwrap_or_default();
            let plural = stored["spec"]["names"]["plural"]
                .as_str()
                .unwrap_or_default();
            let storage = StorageKey {
                group: group.into(),
                resource: plural.into(),
            };
            let doomed: Vec<ObjectKey> = self
                .store
                .list(&storage, None)
                .map(super::store::object_key)
                .collect();
            for (ns, name) in doomed {
                self.store.remove(&storage, &ns, &name);
            }
            self.registry.remove(group, plural);
        }
    }

    /// PUT (update), on the main resource or the status subresource. Returns the object and
    /// whether the PUT created it (events only: `AllowCreateOnUpdate`).
    pub fn update(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        body: Value,
        opts: &WriteOptions,
    ) -> Result<(Value, bool), ApiError> {
        self.warnings
            .extend(unserved_version_warnings(info, &body, &opts.decoding));
        let ns = Self::check_write_body(info, namespace, &body)?;
        match meta_str(&body, "name") {
            Some(n) if n == name => {}
            Some(n) if !n.is_empty() => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            _ => {}
        }
        if let Some(body_ns) = meta_str(&body, "namespace")
            && info.namespaced
            && !body_ns.is_empty()
            && body_ns != ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let Some(old) = self.store.get(&info.storage, &ns, name).cloned() else {
            if subresource.is_some() || !validation::creates_on_update(info) {
                return Err(ApiError::not_found(info.qualified_resource(), name));
            }
            // Storage ignores the resourceVersion of an object created through an update.
            let mut body = body;
            let meta = meta_mut(&mut body);
            meta.insert("name".into(), json!(name));
            meta.remove("resourceVersion");
            return self
                .create_from_view(info, &ns, body, opts)
                .map(|o| (o, true));
        };
        validation::require_resource_version(info, name, &body)?;
        if let Some(rv) = meta_str(&body, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta_str(&old, "resourceVersion")
        {
            return Err(ApiError::modified(info.qualified_resource(), name));
        }
        let new = Self::from_view(info, body);
        self.commit_update(info, &old, new, subresource, opts, true)
            .map(|o| (o, false))
    }

    /// PATCH in any supported format. Apply patches create missing objects.
    #[allow(clippy::too_many_arguments)]
    pub fn patch(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        patch_type: PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<(Value, bool), ApiError> {
        let ns = Self::check_scope(info, namespace)?;
        if patch_type == PatchType::Strategic && info.custom {
            return Err(ApiError::unsupported_media_type(
                "application/strategic-merge-patch+json",
                &[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/apply-patch+yaml",
                ],
            ));
        }
        // ValidatePatchOptions (apimachinery meta/v1/validation): a 422 on PatchOptions.
        if patch_type == PatchType::Apply && !opts.manager_given {
            return Err(patch_options_invalid(
                "fieldManager",
                "FieldValueRequired",
                "Required value: is required for apply patch",
            ));
        }
        // `ValidateFieldManager`: at most 128 bytes.
        if opts.manager_given && opts.manager.len() > FIELD_MANAGER_MAX_LENGTH {
            return Err(patch_options_invalid(
                "fieldManager",
                "FieldValueTooLong",
                &format!(
                    "Too long: {}",
                    validation::field::too_long_message(FIELD_MANAGER_MAX_LENGTH)
                ),
            ));
        }
        if patch_type != PatchType::Apply && opts.force.is_some() {
            return Err(patch_options_invalid(
                "force",
                "FieldValueForbidden",
                "Forbidden: may not be specified for non-apply patch",
            ));
        }
        let patch: Value = match patch_type {
            PatchType::Apply => super::yaml::decode(body).map_err(|e| {
                ApiError::bad_request(format!(
                    "error decoding YAML: error converting YAML to JSON: {e}"
                ))
            })?,
            _ => serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?,
        };
        if patch_type == PatchType::Apply {
            check_applied_object(info, name, &patch)?;
            // The typed patch of a built-in cannot hold a field its type does not declare: the
            // field manager's error, unconverted.
            if let Some(field) = validation::undeclared_fields(info, &patch).first() {
                let gv = match info.group.as_str() {
                    "" => format!("/{}", info.version),
                    group => format!("{group}/{}", info.version),
                };
                return Err(ApiError::unconverted(format!(
                    "failed to create typed patch object ({}/{}; {gv}, Kind={}): .{field}: field not declared in schema",
                    meta_str(&patch, "namespace").unwrap_or_default(),
                    meta_str(&patch, "name").unwrap_or_default(),
                    info.kind
                )));
            }
        }
        if patch_type == PatchType::Apply
            && let Some(structural) = info.structural.as_deref()
            && let Some(error) = schema::typed::conversion_error(structural, &patch)
        {
            return Err(ApiError::unconverted(format!(
                "failed to create typed patch object ({}/{}; {}, Kind={}): {error}",
                meta_str(&patch, "namespace").unwrap_or_default(),
                meta_str(&patch, "name").unwrap_or_default(),
                info.api_version(),
                info.kind
            )));
        }
        let old = self.store.get(&info.storage, &ns, name).cloned();
        let now = rfc3339(self.now());
        let api_version = info.api_version();
        let schema = apply_schema(info);
        let endpoint = Endpoint {
            api_version: &api_version,
            subresource,
            reset_fields: reset_fields(info, subresource),
            schema: &schema,
        };
        let Some(old) = old else {
            if patch_type != PatchType::Apply {
                return Err(ApiError::not_found(info.qualified_resource(), name));
            }
            if subresource.is_some() {
                return Err(ApiError::not_found(info.qualified_resource(), name));
            }
            reject_resource_version(&patch)?;
            let mut obj = apply_at(
                None,
                &patch,
                &opts.manager,
                opts.force.unwrap_or(false),
                &endpoint,
                &now,
            )
            .map_err(apply_error)?;
            let meta = meta_mut(&mut obj);
            meta.insert("name".into(), json!(name));
            let mut obj = Self::from_view(info, obj);
            self.decode_typed(info, &mut obj, &opts.decoding)?;
            self.prepare_create(info, &ns, &mut obj)?;
            self.admit_schema(info, &mut obj, None, &opts.decoding)?;
            strategy_prepare_for_create(info, &mut obj);
            return self.commit_create(info, obj).map(|o| (o, true));
        };
        let old_view = Self::to_view(info, &old);
        let new_view = match patch_type {
            PatchType::Json => {
                if let Some(ops) = patch
                    .as_array()
                    .filter(|ops| ops.len() > MAX_JSON_PATCH_OPERATIONS)
                {
                    return Err(ApiError::too_large(format_args!(
                        "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                        ops.len()
                    )));
                }
                let mut v = old_view.clone();
                apply_json_patch(&mut v, &patch).map_err(patch_error)?;
                v
            }
            PatchType::Merge | PatchType::Strategic => {
                let Value::Object(patch) = patch else {
                    return Err(ApiError::bad_request(
                        "json: cannot unmarshal array into Go value of type map[string]interface {}",
                    ));
                };
                // A strict patch of a built-in is decoded as the patcher decodes it; its unknown
                // fields are a 422 on the patch, quoting the patched document (a merge patch)
                // or the patch (a strategic one).
                let strict = !info.custom && opts.decoding.directive == FieldValidation::Strict;
                let patch = Value::Object(patch);
                let patched = if patch_type == PatchType::Strategic {
                    strategic::patch_object(
                        info,
                        &old_view,
                        patch.as_object().cloned().unwrap_or_default(),
                    )?
                } else {
                    let mut v = old_view.clone();
                    apply_merge_patch(&mut v, &patch);
                    v
                };
                if strict {
                    let unknown = validation::undeclared_fields(info, &patched);
                    if !unknown.is_empty() {
                        let quoted = if patch_type == PatchType::Strategic {
                            super::go_text::fmt_plus_v(&patch)
                        } else {
                            super::go_text::merge_patched(&old_view, &patch, &patched)
                        };
                        return Err(strict_patch_error(&quoted, &unknown));
                    }
                }
                patched
            }
            PatchType::Apply => apply_at(
                Some(&old_view),
                &patch,
                &opts.manager,
                opts.force.unwrap_or(false),
                &endpoint,
                &now,
            )
            .map_err(apply_error)?,
        };
        if !new_view.is_object() {
            return Err(ApiError::bad_request(
                "Object 'Kind' is missing in the patched object",
            ));
        }
        // A patch conflicts only when it carries a resourceVersion of its own.
        if meta_str(&new_view, "resourceVersion") != meta_str(&old_view, "resourceVersion") {
            return Err(ApiError::modified(info.qualified_resource(), name));
        }
        if meta_str(&new_view, "name") != Some(name) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                meta_str(&new_view, "name").unwrap_or_default()
            )));
        }
        let mut new = Self::from_view(info, new_view);
        let mut track = patch_type != PatchType::Apply;
        // The patched object is decoded here; the field manager cannot type one that held
        // fields its kind does not declare, and `UpdateNoErrors` then clears managedFields.
        let undeclared = !validation::undeclared_fields(info, &new).is_empty();
        self.decode_typed(info, &mut new, &opts.decoding)?;
        if track && undeclared {
            if let Some(meta) = new["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
            track = false;
        }
        self.commit_update(info, &old, new, subresource, opts, track)
            .map(|o| (o, false))
    }

    /// The shared tail of PUT and PATCH (and of the controllers' writes): strategy, validation,
    /// no-op detection, finalization. `track` is false when managedFields were already
    /// maintained (apply).
    pub(crate) fn commit_update(
        &mut self,
        info: &ResourceInfo,
        old: &Value,
        mut new: Value,
        subresource: Option<&str>,
        opts: &WriteOptions,
        track: bool,
    ) -> Result<Value, ApiError> {
        let name = meta_str(old, "name").unwrap_or_default().to_string();
        self.decode_typed(info, &mut new, &opts.decoding)?;
        // What a status write asked of metadata: the field manager sees it (it runs before the
        // strategy), though the strategy drops it.
        let mut status_write_metadata = None;
        if subresource == Some("status") {
            // statusStrategy.PrepareForUpdate: everything but status (and managedFields) comes
            // from the stored object; a body without status clears it.
            status_write_metadata = Some(new["metadata"].clone());
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
            new = merged;
        } else if info.status_subresource {
            namespace::prepare_for_update(info, old, &mut new, subresource);
            match old.get("status") {
                Some(s) => new["status"] = s.clone(),
                None => {
                    if let Some(m) = new.as_object_mut() {
                        m.remove("status");
                    }
                }
            }
        }
        // Server-owned metadata is immutable through writes.
        {
            let old_meta = &old["metadata"];
            let meta = meta_mut(&mut new);
            for field in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "resourceVersion",
            ] {
                match old_meta.get(field) {
                    Some(v) => meta.insert(field.into(), v.clone()),
                    None => meta.remove(field),
                };
            }
            meta.remove("selfLink");
            if meta.get("generateName").is_none()
                && let Some(g) = old_meta.get("generateName")
            {
                meta.insert("generateName".into(), g.clone());
            }
        }
        if !old["metadata"]["deletionTimestamp"].is_null() {
            let before: BTreeSet<String> = finalizers(old).into_iter().collect();
            let added: Vec<String> = finalizers(&new)
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            if !added.is_empty() {
                let list = added
                    .iter()
                    .map(|f| format!("{f:?}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let cause = Cause {
                    reason: "FieldValueForbidden".into(),
                    message: format!(
                        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{list}}}"
                    ),
                    field: "metadata.finalizers".into(),
                };
                // Reported by the generic registry's and the kind's metadata update checks.
                return Err(ApiError::invalid(
                    info.qualified_kind(),
                    &name,
                    vec![cause.clone(), cause],
                ));
            }
        }
        self.admit_schema(info, &mut new, Some(old), &opts.decoding)?;
        if info.tracks_generation
            && generation_relevant(&new, info.status_subresource)
                != generation_relevant(old, info.status_subresource)
        {
            let g = old["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            new["metadata"]["generation"] = json!(g);
        }
        validation::admit_update(info, &mut new, old)?;
        if info.storage == events_key() {
            let checked = match info.view {
                View::Native => validate_event_update(&new, old),
                View::CoreEvent => validate_core_v1_event(&to_core_v1(&new)),
            };
            checked
                .map_err(|e| ApiError::invalid(info.qualified_kind(), &name, field_causes(e)))?;
        }
        if info.storage == crd_key() && subresource.is_none() {
            validation::crd::set_defaults(&mut new);
            crd_infos(info, &name, &new)?;
        }
        if track {
            let now = rfc3339(self.now());
            match status_write_metadata {
                Some(asked) => {
                    let mut seen = new.clone();
                    seen["metadata"] = asked;
                    seen["metadata"]["managedFields"] = new["metadata"]["managedFields"].clone();
                    track_update(info, Some(old), &mut seen, &opts.manager, subresource, &now);
                    match seen["metadata"].get_mut("managedFields").map(Value::take) {
                        Some(entries) => new["metadata"]["managedFields"] = entries,
                        None => {
                            meta_mut(&mut new).remove("managedFields");
                        }
                    }
                }
                None => track_update(info, Some(old), &mut new, &opts.manager, subresource, &now),
            }
        }
        validation::stored_form(info, &mut new);
        // A write that changes nothing is not a write: no new resourceVersion, no watch event.
        // managedFields count: an apply that only shares ownership is stored, as etcd sees
        // different bytes; the field manager leaves them untouched when nothing was taken.
        if new == *old {
            return Ok(Self::to_view(info, old));
        }
        if self.dry_run {
            return Ok(Self::to_view(info, &new));
        }
        let ns = meta_str(old, "namespace").unwrap_or_default().to_string();
        if !old["metadata"]["deletionTimestamp"].is_null()
            && finalizers(&new).is_empty()
            && namespace::spec_finalized(info, &new)
        {
            // ShouldDeleteDuringUpdate: the update is not stored; the object is deleted as it
            // was, so watchers see only DELETED (with the last stored finalizers). The writer
            // gets its updated object back (`deleteWithoutFinalizers`).
            let gone = self
                .store
                .remove(&info.storage, &ns, &name)
                .ok_or_else(|| ApiError::internal("object vanished during finalization"))?;
            self.after_delete(&gone, info);
            return Ok(Self::to_view(info, &new));
        }
        let stored = self.store.put(&info.storage, new);
        self.after_write(&stored, info);
        Ok(Self::to_view(info, &stored))
    }

    /// Writes `new`, the view of the stored `old_view` changed through `subresource` (`scale`),
    /// as an update of it by `opts`' manager; returns the stored object's view.
    pub(crate) fn update_from_subresource(
        &mut self,
        info: &ResourceInfo,
        old_view: &Value,
        new: Value,
        subresource: &str,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let ns = meta_str(old_view, "namespace")
            .unwrap_or_default()
            .to_owned();
        let name = meta_str(old_view, "name").unwrap_or_default().to_owned();
        let old = self
            .store
            .get(&info.storage, &ns, &name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(info.qualified_resource(), &name))?;
        let new = Self::from_view(info, new);
        self.commit_update(info, &old, new, Some(subresource), opts, true)
    }

    /// DELETE of one object. Returns the object (CRDs, namespaces and service accounts, or while
    /// finalizers remain) or a success `Status`, exactly as the generic registry does. The
    /// propagation policy adds or removes the garbage collector's finalizers first.
    pub fn delete(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError> {
        let policy = Propagation::from_options(options)?;
        let ns = Self::check_scope(info, namespace)?;
        let old = self
            .store
            .get(&info.storage, &ns, name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(info.qualified_resource(), name))?;
        // apiserver's rest.BeforeDelete checks the preconditions first, naming the kind (not
        // the resource) in its conflict.
        let pre = &options["preconditions"];
        if let Some(uid) = pre["uid"].as_str() {
            let actual = meta_str(&old, "uid").unwrap_or_default();
            if uid != actual {
                return Err(ApiError::conflict(
                    info.qualified_kind(),
                    name,
                    &format!(
                        "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                    ),
                ));
            }
        }
        if let Some(rv) = pre["resourceVersion"].as_str() {
            let actual = meta_str(&old, "resourceVersion").unwrap_or_default();
            if rv != actual {
                return Err(ApiError::conflict(
                    info.qualified_kind(),
                    name,
                    &format!(
                        "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                    ),
                ));
            }
        }
        if namespace::is_namespaces(info)
            && let Some(answer) = namespace::before_delete(self, info, &old, policy)?
        {
            return Ok(answer);
        }
        let current = finalizers(&old);
        let pending = deletion_finalizers(&current, policy).unwrap_or(current);
        if !pending.is_empty() {
            // updateForGracefulDeletionAndFinalizers + markAsDeleting: a no-op when the object
            // is already deleting with these finalizers.
            let mut new = old.clone();
            let deleting = !old["metadata"]["deletionTimestamp"].is_null();
            let now = rfc3339(self.now());
            let meta = meta_mut(&mut new);
            meta.insert("finalizers".into(), json!(pending));
            if !deleting {
                meta.insert("deletionTimestamp".into(), json!(now));
                if let Some(g) = meta
                    .get("generation")
                    .and_then(Value::as_i64)
                    .filter(|g| *g > 0)
                {
                    meta.insert("generation".into(), json!(g + 1));
                }
            }
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            if new == old {
                return Ok(Self::to_view(info, &old));
            }
            if self.dry_run {
                return Ok(Self::to_view(info, &new));
            }
            let stored = self.store.put(&info.storage, new);
            self.after_write(&stored, info);
            return Ok(Self::to_view(info, &stored));
        }
        let gone = if self.dry_run {
            old
        } else {
            let gone = self
                .store
                .remove(&info.storage, &ns, name)
                .ok_or_else(|| ApiError::internal("object vanished during deletion"))?;
            self.after_delete(&gone, info);
            gone
        };
        // The registries that set `ReturnDeletedObject`: CRDs, namespaces and service accounts
        // answer the object; the others, custom resources among them, a Status (dry runs
        // alike).
        let returns_object = info.storage == crd_key()
            || namespace::is_namespaces(info)
            || (info.group.is_empty() && info.plural == "serviceaccounts");
        if returns_object {
            Ok(Self::to_view(info, &gone))
        } else {
            Ok(delete_success(
                info.qualified_resource(),
                name,
                meta_str(&gone, "uid").unwrap_or_default(),
            ))
        }
    }

    /// DELETE of a collection (the registry's `DeleteCollection`): the page the list options
    /// select (`limit` and `continue` included) is deleted object by object as by
    /// [`State::delete`], with the same options; the answer is that page as it was listed
    /// before the deletions.
    pub fn delete_collection(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        params: &ListParams<'_>,
        options: &Value,
    ) -> Result<Value, ApiError> {
        // ValidateDeleteOptions runs before anything is listed.
        Propagation::from_options(options)?;
        let mut list = self.list(info, namespace, params)?;
        for item in list["items"].as_array_mut().into_iter().flatten() {
            if let Value::Object(fields) = item {
                fields.remove("apiVersion");
                fields.remove("kind");
            }
        }
        for item in list["items"].as_array().cloned().unwrap_or_default() {
            let ns = meta_str(&item, "namespace").map(str::to_string);
            let name = meta_str(&item, "name").unwrap_or_default().to_string();
            match self.delete(info, ns.as_deref(), &name, options) {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(list)
    }

    /// Registers a CRD object directly (as if POSTed), returning it.
    pub fn install_crd(&mut self, crd: Value) -> Result<Value, ApiError> {
        let info = self
            .registry
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .ok_or_else(|| ApiError::internal("CRDs are not served"))?;
        self.create(&info, None, crd, &WriteOptions::default())
    }

    /// The plural of the served resource of `kind` at `api_version` (`v1`, `group/version`).
    pub fn plural_of_kind(&self, api_version: &str, kind: &str) -> Option<String> {
        self.registry
            .by_kind(api_version, kind)
            .map(|info| info.plural.clone())
    }

    /// The served resource at `group/version/plural`.
    pub fn resource(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.registry.get(group, version, plural)
    }
}

/// The strategy's `WarningsOnCreate`: `unrecognized format "colour"` for each format of a
/// string the schemas use that apiextensions does not validate (a schema the versions share
/// is read once, as upstream reads it hoisted to `spec.validation`).
fn crd_format_warnings(crd: &Value) -> Vec<String> {
    let schemas: Vec<&Value> = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| &v["schema"]["openAPIV3Schema"])
        .collect();
    let shared = schemas.len() > 1 && schemas.iter().all(|s| *s == schemas[0]);
    let distinct = if shared { &schemas[..1] } else { &schemas[..] };
    distinct
        .iter()
        .flat_map(|s| crate::schema::structural::unrecognized_formats(s))
        .map(|f| format!("unrecognized format {}", crate::schema::field::quote(&f)))
        .collect()
}

/// The resources a CRD object serves, or the 422 Invalid its declaration earns.
fn crd_infos(info: &ResourceInfo, name: &str, crd: &Value) -> Result<Vec<ResourceInfo>, ApiError> {
    infos_from_crd(crd).map_err(|errs| {
        let causes = errs
            .into_iter()
            .map(|e| Cause {
                reason: e.reason.into(),
                message: e.message,
                field: e.field,
            })
            .collect();
        ApiError::invalid(info.qualified_kind(), name, causes)
    })
}

/// Creates must not carry a resourceVersion (one that parses as a non-zero number, as etcd3's
/// versioner reads it).
fn reject_resource_version(body: &Value) -> Result<(), ApiError> {
    match meta_str(body, "resourceVersion").map(str::parse::<u64>) {
        Some(Ok(rv)) if rv != 0 => Err(ApiError::resource_version_on_create()),
        _ => Ok(()),
    }
}

/// The parts of a kind's `PrepareForCreate` that run after the field manager recorded the
/// request (the handler records managedFields before the registry's strategy), so what they
/// set is owned by no one: a namespace's `kubernetes` finalizer and `Active` phase.
fn strategy_prepare_for_create(info: &ResourceInfo, obj: &mut Value) {
    if namespace::is_namespaces(info) {
        namespace::prepare_for_create(obj);
    }
}

/// The patcher's 422 for a strict patch whose result has `unknown` fields: on the field
/// `patch`, quoting `quoted`, with no kind or name (`errors.NewInvalid(schema.GroupKind{}, "",
/// …)`).
fn strict_patch_error(quoted: &str, unknown: &[String]) -> ApiError {
    let problems: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field {}", validation::names::go_quote(f)))
        .collect();
    ApiError::invalid(
        Qualified {
            group: "",
            name: "",
        },
        "",
        vec![Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: strict decoding error: {}",
                validation::names::go_quote(quoted),
                problems.join(", ")
            ),
            field: "patch".into(),
        }],
    )
}

/// What the apply patcher checks of the applied object before merging: its kind and version
/// are the resource's (`invalid object type: <group>/<version>, Kind=<kind>` otherwise) and its
/// name, if any, is the URL's.
fn check_applied_object(info: &ResourceInfo, name: &str, applied: &Value) -> Result<(), ApiError> {
    let api_version = applied["apiVersion"].as_str().unwrap_or_default();
    let kind = applied["kind"].as_str().unwrap_or_default();
    if api_version != info.api_version() || kind != info.kind {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group}/{version}, Kind={kind}"
        )));
    }
    match meta_str(applied, "name") {
        Some(n) if !n.is_empty() && n != name => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        ))),
        _ => Ok(()),
    }
}

fn patch_options_invalid(field: &str, reason: &str, message: &str) -> ApiError {
    ApiError::invalid(
        Qualified {
            group: "meta.k8s.io",
            name: "PatchOptions",
        },
        "",
        vec![Cause {
            reason: reason.into(),
            message: message.into(),
            field: field.into(),
        }],
    )
}

/// `prefix` (cut to 58 bytes) plus 5 random characters, like `names.SimpleNameGenerator`.
pub fn generate_name(prefix: &str) -> String {
    let mut cut = prefix.len().min(MAX_GENERATE_NAME_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut rng = rand::rng();
    let suffix: String = (0..NAME_SUFFIX_LEN)
        .map(|_| NAME_SUFFIX_ALPHABET[rng.random_range(0..NAME_SUFFIX_ALPHABET.len())] as char)
        .collect();
    format!("{}{suffix}", &prefix[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_are_prefix_plus_five_safe_characters() {
        let name = generate_name("web-");
        assert_eq!(name.len(), 9);
        assert!(name[4..].bytes().all(|b| NAME_SUFFIX_ALPHABET.contains(&b)));
        let long = generate_name(&"x".repeat(80));
        assert_eq!(long.len(), MAX_GENERATE_NAME_PREFIX + NAME_SUFFIX_LEN);
    }

    #[test]
    fn expiries_return_only_what_is_due_and_rearming_moves_the_deadline() {
        let t = |s: i64| Timestamp::from_second(s).expect("valid");
        let key = |n: &str| ("default".to_string(), n.to_string());
        let mut e = Expiries::default();
        e.arm(key("a"), t(10));
        e.arm(key("b"), t(20));
        e.arm(key("a"), t(30));
        assert_eq!(e.due(t(15)), Vec::<ObjectKey>::new());
        assert_eq!(e.due(t(25)), vec![key("b")]);
        e.disarm(&key("a"));
        assert_eq!(e.due(t(100)), Vec::<ObjectKey>::new());
    }
}
