//! The registry of served resource types: built-ins and those defined by CustomResourceDefinitions.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::schema::Structural;
use super::status::{ApiError, Qualified};
use super::store::StorageKey;

/// How a resource's objects are presented relative to their stored form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// Stored as served (apiVersion rewritten to the requested version).
    Native,
    /// core/v1 events, stored as events.k8s.io/v1 and mapped both ways.
    CoreEvent,
}

/// The field labels a core/v1 Event list accepts in `?fieldSelector=` (`EventToSelectableFields`
/// in kubernetes `pkg/registry/core/event/strategy.go`); `kubectl describe` lists an object's
/// events with `involvedObject.name`, `involvedObject.namespace`, `involvedObject.kind` and
/// `involvedObject.uid`.
pub(crate) const EVENT_FIELD_LABELS: [&str; 13] = [
    "metadata.name",
    "metadata.namespace",
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// One served resource at one group/version.
#[derive(Debug, Clone)]
pub(crate) struct ResourceInfo {
    /// API group (empty for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// The kind of its lists (`spec.names.listKind` of a CRD; `<Kind>List` otherwise).
    pub list_kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Singular resource name.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether the `/status` subresource is enabled.
    pub status_subresource: bool,
    /// The storage version hash discovery shows for a custom resource (its CRD's storage
    /// version; built-ins' are in [`storage_version_hash`]).
    pub storage_version_hash: Option<String>,
    /// The `/scale` subresource (CRDs that declare one).
    pub scale: Option<crate::scale::ScalePaths>,
    /// Whether `metadata.generation` is maintained.
    pub tracks_generation: bool,
    /// Served from a CustomResourceDefinition (415 on strategic merge, deleted objects returned).
    pub custom: bool,
    /// Short names for discovery.
    pub short_names: Vec<String>,
    /// Categories for discovery (`all`).
    pub categories: Vec<String>,
    /// Where the objects are stored.
    pub storage: StorageKey,
    /// How stored objects are presented.
    pub view: View,
    /// Additional printer columns (CRDs) for table output.
    pub printer_columns: Vec<Value>,
    /// The OpenAPI v3 schema (CRDs), which tells server-side apply the list and map types.
    pub schema: Option<Value>,
    /// The same schema read for validation, defaulting and pruning (CRDs).
    pub structural: Option<Arc<Structural>>,
}

impl ResourceInfo {
    /// The decoder's 400: `Secret in version "v1" cannot be handled as a Secret: <why>`
    /// (apiserver `transformDecodeError`).
    pub(crate) fn undecodable(&self, why: &str) -> ApiError {
        ApiError::bad_request(format!(
            "{kind} in version \"{}\" cannot be handled as a {kind}: {why}",
            self.version,
            kind = self.kind
        ))
    }

    /// `group/version`, or `version` for core.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group-qualified resource for error messages.
    pub(crate) fn qualified_resource(&self) -> Qualified<'_> {
        Qualified {
            group: &self.group,
            name: &self.plural,
        }
    }

    /// The group-qualified kind for `Invalid` messages.
    pub(crate) fn qualified_kind(&self) -> Qualified<'_> {
        // events.k8s.io/v1 is served by the core event registry: its errors name the
        // internal core kind (`Event "e" is invalid`).
        let group = match (self.group.as_str(), self.plural.as_str()) {
            ("events.k8s.io", "events") => "",
            (group, _) => group,
        };
        Qualified {
            group,
            name: &self.kind,
        }
    }

    /// The 400 message for a field selector naming `field`, which the kind does not support:
    /// kinds with a field-label conversion of their own (core Events, Secrets, Namespaces,
    /// events.k8s.io Events) and custom resources say `field label not supported: x`; the
    /// others use apimachinery's `DefaultMetaV1FieldSelectorConversion`.
    pub(crate) fn unsupported_field_label(&self, field: &str) -> String {
        let own_conversion = self.custom
            || matches!(
                (self.group.as_str(), self.plural.as_str()),
                ("", "events" | "secrets" | "namespaces") | ("events.k8s.io", "events")
            );
        if own_conversion {
            format!("field label not supported: {field}")
        } else {
            format!(
                "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )
        }
    }

    /// The field labels a field selector may use on this resource.
    pub(crate) fn selectable_fields(&self) -> Vec<&'static str> {
        let mut fields = vec!["metadata.name"];
        if self.namespaced {
            fields.push("metadata.namespace");
        }
        match (self.group.as_str(), self.plural.as_str()) {
            // The core view's labels beyond metadata.name and metadata.namespace, pushed above.
            ("", "events") => fields.extend(&EVENT_FIELD_LABELS[2..]),
            ("events.k8s.io", "events") => fields.extend([
                "regarding.kind",
                "regarding.namespace",
                "regarding.name",
                "regarding.uid",
                "regarding.apiVersion",
                "regarding.resourceVersion",
                "regarding.fieldPath",
                "reason",
                "reportingController",
                "type",
            ]),
            ("", "secrets") => fields.push("type"),
            ("", "namespaces") => fields.push("status.phase"),
            _ => {}
        }
        fields
    }

    /// Whether a collection DELETE is served: not for namespaces, whose storage (upstream
    /// `pkg/registry/core/namespace/storage`) has no `DeleteCollection`.
    pub(crate) fn deletes_collections(&self) -> bool {
        !(self.group.is_empty() && self.plural == "namespaces")
    }

    /// The verbs discovery lists for the resource.
    fn verbs(&self) -> Vec<&'static str> {
        if self.custom {
            // The CRD handler's order.
            return vec![
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "create",
                "update",
                "watch",
            ];
        }
        [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
        .into_iter()
        .filter(|v| *v != "deletecollection" || self.deletes_collections())
        .collect()
    }

    /// The APIResource entries (main resource and subresources) for discovery.
    pub(crate) fn discovery_entries(&self) -> Vec<Value> {
        let mut main = json!({
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": self.verbs(),
        });
        if !self.short_names.is_empty() {
            main["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            main["categories"] = json!(self.categories);
        }
        if let Some(hash) = &self.storage_version_hash {
            main["storageVersionHash"] = json!(hash);
        } else if !self.custom
            && let Some(hash) = storage_version_hash(&self.group, &self.kind)
        {
            main["storageVersionHash"] = json!(hash);
        }
        let mut out = vec![main];
        if self.status_subresource {
            out.push(json!({
                "name": format!("{}/status", self.plural),
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if self.scale.is_some() {
            out.push(json!({
                "name": format!("{}/scale", self.plural),
                "singularName": "",
                "namespaced": self.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        out
    }
}

/// apiserver's `discovery.StorageVersionHash`: the first 8 bytes of the SHA-256 of
/// `<group>/<version>/<kind>` of the storage version, in standard base64.
pub(crate) fn storage_version_hash_of(group: &str, version: &str, kind: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    crate::validation::base64::encode(&digest.as_ref()[..8])
}

/// The `storageVersionHash` of a built-in kind served in `group` ([`storage_version_hash_of`]
/// its storage version; events.k8s.io Events are stored as core v1 Events): a table of the
/// kinds served here, each computed from that formula.
pub(crate) fn storage_version_hash(group: &str, kind: &str) -> Option<&'static str> {
    Some(match (group, kind) {
        ("", "Namespace") => "Q3oi5N2YM8M=",
        ("", "ConfigMap") => "qFsyl6wFWjQ=",
        ("", "Secret") => "S6u1pOWzb84=",
        ("", "ServiceAccount") => "pbx9ZvyFpBE=",
        ("" | "events.k8s.io", "Event") => "r2yiGXH7wu8=",
        ("coordination.k8s.io", "Lease") => "gqkMMb/YqFM=",
        ("rbac.authorization.k8s.io", "Role") => "7FuwZcIIItM=",
        ("rbac.authorization.k8s.io", "RoleBinding") => "eGsCzGH6b1g=",
        ("rbac.authorization.k8s.io", "ClusterRole") => "bYE5ZWDrJ44=",
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => "48tpQ8gZHFc=",
        ("apiextensions.k8s.io", "CustomResourceDefinition") => "M5uH+AlWATY=",
        _ => return None,
    })
}

/// All served resources, keyed by (group, version, plural).
#[derive(Debug, Clone, Default)]
pub(crate) struct Registry {
    resources: BTreeMap<(String, String, String), Arc<ResourceInfo>>,
}

impl Registry {
    /// The built-in resources of a fresh server.
    pub(crate) fn builtin() -> Self {
        let mut r = Self::default();
        let b =
            |group: &str, version: &str, kind: &str, plural: &str, namespaced: bool| ResourceInfo {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
                list_kind: format!("{kind}List"),
                plural: plural.into(),
                singular: kind.to_lowercase(),
                namespaced,
                status_subresource: false,
                storage_version_hash: None,
                scale: None,
                tracks_generation: false,
                custom: false,
                short_names: vec![],
                categories: vec![],
                storage: StorageKey {
                    group: group.into(),
                    resource: plural.into(),
                },
                view: View::Native,
                printer_columns: vec![],
                schema: None,
                structural: None,
            };
        let mut ns = b("", "v1", "Namespace", "namespaces", false);
        ns.status_subresource = true;
        ns.short_names = vec!["ns".into()];
        r.insert(ns);
        let mut cm = b("", "v1", "ConfigMap", "configmaps", true);
        cm.short_names = vec!["cm".into()];
        r.insert(cm);
        r.insert(b("", "v1", "Secret", "secrets", true));
        let mut sa = b("", "v1", "ServiceAccount", "serviceaccounts", true);
        sa.short_names = vec!["sa".into()];
        r.insert(sa);
        let mut core_ev = b("", "v1", "Event", "events", true);
        core_ev.short_names = vec!["ev".into()];
        core_ev.storage = StorageKey {
            group: "events.k8s.io".into(),
            resource: "events".into(),
        };
        core_ev.view = View::CoreEvent;
        r.insert(core_ev);
        let mut ev = b("events.k8s.io", "v1", "Event", "events", true);
        ev.short_names = vec!["ev".into()];
        r.insert(ev);
        r.insert(b("coordination.k8s.io", "v1", "Lease", "leases", true));
        let rbac = "rbac.authorization.k8s.io";
        r.insert(b(rbac, "v1", "Role", "roles", true));
        r.insert(b(rbac, "v1", "ClusterRole", "clusterroles", false));
        r.insert(b(rbac, "v1", "RoleBinding", "rolebindings", true));
        r.insert(b(
            rbac,
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
        ));
        let mut crd = b(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        );
        crd.status_subresource = true;
        crd.tracks_generation = true;
        crd.short_names = vec!["crd".into(), "crds".into()];
        r.insert(crd);
        r
    }

    /// Adds or replaces a resource.
    pub(crate) fn insert(&mut self, info: ResourceInfo) {
        self.resources.insert(
            (
                info.group.clone(),
                info.version.clone(),
                info.plural.clone(),
            ),
            Arc::new(info),
        );
    }

    /// Removes every version of a group's resource (a deleted CRD).
    pub(crate) fn remove(&mut self, group: &str, plural: &str) {
        self.resources
            .retain(|(g, _, p), _| !(g == group && p == plural));
    }

    /// The resource at `group/version/plural`.
    pub(crate) fn get(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceInfo>> {
        self.resources
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Groups with their versions (in registration order of a BTreeMap: sorted), core excluded.
    pub(crate) fn groups(&self) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (g, v, _) in self.resources.keys() {
            if g.is_empty() {
                continue;
            }
            let versions = out.entry(g.clone()).or_default();
            if !versions.contains(v) {
                versions.push(v.clone());
            }
        }
        out
    }

    /// One served resource per store, presenting objects as stored (the view in the store's own
    /// group; for custom resources, any served version): what controllers that walk every
    /// object (namespace deletion, garbage collection) read and delete through.
    pub(crate) fn per_storage(&self) -> Vec<Arc<ResourceInfo>> {
        let mut out: BTreeMap<&StorageKey, Arc<ResourceInfo>> = BTreeMap::new();
        for info in self.resources.values() {
            let own_view = info.view == View::Native && info.group == info.storage.group;
            if own_view {
                out.entry(&info.storage).or_insert_with(|| info.clone());
            }
        }
        out.into_values().collect()
    }

    /// The resource of `kind` served at `api_version` (`v1`, `group/version`), as an owner
    /// reference names it.
    pub(crate) fn by_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        self.resources
            .iter()
            .find(|((g, v, _), i)| g == group && v == version && i.kind == kind)
            .map(|(_, i)| i.clone())
    }

    /// The resources served at `group/version`.
    pub(crate) fn in_group_version(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        self.resources
            .iter()
            .filter(|((g, v, _), _)| g == group && v == version)
            .map(|(_, i)| i.clone())
            .collect()
    }
}
