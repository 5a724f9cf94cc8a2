//! The registry of served resource types: built-ins and those defined by CustomResourceDefinitions.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::schema::Structural;
use super::status::{ApiError, Qualified};
use super::store::StorageKey;
use crate::apply::ApplySchema;

/// How a resource's objects are presented relative to their stored form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// Stored as served (apiVersion rewritten to the requested version).
    Native,
    /// core/v1 events, stored as events.k8s.io/v1 and mapped both ways.
    CoreEvent,
}

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
    /// The storage version hash discovery shows ([`storage_version_hash_of`] the kind's storage
    /// version: a CRD's storage version; events.k8s.io Events are stored as core v1 Events).
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
    /// What the field manager reads of `schema`, read once when the CRD is.
    pub apply: Option<Arc<ApplySchema>>,
    /// The same schema read for validation, defaulting and pruning (CRDs).
    pub structural: Option<Arc<Structural>>,
}

impl ResourceInfo {
    /// Whether this resource presents its objects as stored: the native view in the store's
    /// own group.
    pub(crate) fn is_own_view(&self) -> bool {
        self.view == View::Native && self.group == self.storage.group
    }

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

/// apimachinery `version.CompareKubeAwareVersionStrings`, highest priority first: GA before
/// beta before alpha, then the higher major and minor numbers (`v2`, `v1`, `v2beta1`,
/// `v1alpha1`); names not of that form last, in lexical order. Discovery lists a group's
/// versions in this order, the first preferred (autoscaling: `v2`, then `v1`).
fn kube_aware_order(a: &str, b: &str) -> std::cmp::Ordering {
    /// (stability: 2 GA, 1 beta, 0 alpha; major; minor), `None` for other names.
    fn parse(v: &str) -> Option<(u8, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let major: u64 = rest[..digits].parse().ok()?;
        let (stability, minor) = match &rest[digits..] {
            "" => (2, 0),
            tail => {
                let (stability, number) = if let Some(n) = tail.strip_prefix("beta") {
                    (1, n)
                } else {
                    (0, tail.strip_prefix("alpha")?)
                };
                (stability, number.parse().ok()?)
            }
        };
        Some((stability, major, minor))
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
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
                storage_version_hash: Some(storage_version_hash_of(group, version, kind)),
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
                apply: None,
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
        let core_ev_hash = core_ev.storage_version_hash.clone();
        r.insert(core_ev);
        let mut ev = b("events.k8s.io", "v1", "Event", "events", true);
        ev.short_names = vec!["ev".into()];
        ev.storage_version_hash = core_ev_hash;
        r.insert(ev);
        r.insert(b("coordination.k8s.io", "v1", "Lease", "leases", true));
        let mut svc = b("", "v1", "Service", "services", true);
        svc.status_subresource = true;
        svc.short_names = vec!["svc".into()];
        svc.categories = vec!["all".into()];
        r.insert(svc);
        let mut ep = b("", "v1", "Endpoints", "endpoints", true);
        ep.singular = "endpoints".into();
        ep.short_names = vec!["ep".into()];
        r.insert(ep);
        let mut deploy = b("apps", "v1", "Deployment", "deployments", true);
        deploy.status_subresource = true;
        deploy.tracks_generation = true;
        deploy.short_names = vec!["deploy".into()];
        deploy.categories = vec!["all".into()];
        deploy.scale = Some(crate::scale::ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: None,
        });
        r.insert(deploy);
        for (kind, plural, short, scale) in [
            ("ReplicaSet", "replicasets", "rs", true),
            ("StatefulSet", "statefulsets", "sts", true),
            ("DaemonSet", "daemonsets", "ds", false),
        ] {
            let mut workload = b("apps", "v1", kind, plural, true);
            workload.status_subresource = true;
            workload.tracks_generation = true;
            workload.short_names = vec![short.into()];
            workload.categories = vec!["all".into()];
            workload.scale = scale.then(|| crate::scale::ScalePaths {
                spec_replicas: ".spec.replicas".into(),
                status_replicas: ".status.replicas".into(),
                label_selector: None,
            });
            r.insert(workload);
        }
        r.insert(b(
            "apps",
            "v1",
            "ControllerRevision",
            "controllerrevisions",
            true,
        ));
        let networking = "networking.k8s.io";
        let mut ingress = b(networking, "v1", "Ingress", "ingresses", true);
        ingress.status_subresource = true;
        ingress.tracks_generation = true;
        ingress.short_names = vec!["ing".into()];
        r.insert(ingress);
        let mut ingress_class = b(networking, "v1", "IngressClass", "ingressclasses", false);
        ingress_class.tracks_generation = true;
        r.insert(ingress_class);
        let mut netpol = b(networking, "v1", "NetworkPolicy", "networkpolicies", true);
        netpol.tracks_generation = true;
        netpol.short_names = vec!["netpol".into()];
        r.insert(netpol);
        // HorizontalPodAutoscalers are stored as autoscaling/v2 and served as v1 too (a view
        // its strategy converts); discovery's hash is the storage version's.
        let hpa_hash = storage_version_hash_of("autoscaling", "v2", "HorizontalPodAutoscaler");
        for version in ["v2", "v1"] {
            let mut hpa = b(
                "autoscaling",
                version,
                "HorizontalPodAutoscaler",
                "horizontalpodautoscalers",
                true,
            );
            hpa.status_subresource = true;
            hpa.short_names = vec!["hpa".into()];
            hpa.categories = vec!["all".into()];
            hpa.storage_version_hash = Some(hpa_hash.clone());
            r.insert(hpa);
        }
        let mut pods = b("", "v1", "Pod", "pods", true);
        pods.status_subresource = true;
        pods.tracks_generation = true;
        pods.short_names = vec!["po".into()];
        pods.categories = vec!["all".into()];
        r.insert(pods);
        // ResourceQuotas, LimitRanges, PodDisruptionBudgets and EndpointSlices.
        let mut quota = b("", "v1", "ResourceQuota", "resourcequotas", true);
        quota.status_subresource = true;
        quota.short_names = vec!["quota".into()];
        r.insert(quota);
        let mut limits = b("", "v1", "LimitRange", "limitranges", true);
        limits.short_names = vec!["limits".into()];
        r.insert(limits);
        let mut pdb = b(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
        );
        pdb.status_subresource = true;
        pdb.tracks_generation = true;
        pdb.short_names = vec!["pdb".into()];
        r.insert(pdb);
        let mut slices = b(
            "discovery.k8s.io",
            "v1",
            "EndpointSlice",
            "endpointslices",
            true,
        );
        slices.tracks_generation = true;
        r.insert(slices);
        // batch/v1 Jobs and CronJobs.
        for (kind, plural, short) in [("Job", "jobs", None), ("CronJob", "cronjobs", Some("cj"))] {
            let mut batch = b("batch", "v1", kind, plural, true);
            batch.status_subresource = true;
            batch.tracks_generation = true;
            batch.short_names = short.into_iter().map(Into::into).collect();
            batch.categories = vec!["all".into()];
            r.insert(batch);
        }
        for (kind, plural, short, namespaced) in [
            (
                "PersistentVolumeClaim",
                "persistentvolumeclaims",
                "pvc",
                true,
            ),
            ("PersistentVolume", "persistentvolumes", "pv", false),
            ("Node", "nodes", "no", false),
        ] {
            let mut storage = b("", "v1", kind, plural, namespaced);
            storage.status_subresource = true;
            storage.short_names = vec![short.into()];
            r.insert(storage);
        }
        let mut sc = b(
            "storage.k8s.io",
            "v1",
            "StorageClass",
            "storageclasses",
            false,
        );
        sc.short_names = vec!["sc".into()];
        r.insert(sc);
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
        for versions in out.values_mut() {
            versions.sort_by(|a, b| kube_aware_order(a, b));
        }
        out
    }

    /// One served resource per store, presenting objects as stored (the view in the store's own
    /// group; for custom resources, any served version): what controllers that walk every
    /// object (namespace deletion, garbage collection) read and delete through.
    pub(crate) fn per_storage(&self) -> Vec<Arc<ResourceInfo>> {
        let mut out: BTreeMap<&StorageKey, Arc<ResourceInfo>> = BTreeMap::new();
        for info in self.resources.values().filter(|i| i.is_own_view()) {
            out.entry(&info.storage).or_insert_with(|| info.clone());
        }
        out.into_values().collect()
    }

    /// [`Registry::per_storage`]'s resource of one store, found without building the list (the
    /// garbage collector asks it per dependent).
    pub(crate) fn of_storage(&self, storage: &StorageKey) -> Option<Arc<ResourceInfo>> {
        self.resources
            .values()
            .find(|i| i.storage == *storage && i.is_own_view())
            .cloned()
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

#[cfg(test)]
mod tests {
    use super::Registry;

    /// The hashes kube-apiserver v1.34's discovery shows for the built-ins served here.
    #[test]
    fn built_ins_show_the_storage_version_hashes_of_kube_apiserver() {
        let registry = Registry::builtin();
        let hash = |group: &str, plural: &str| {
            registry
                .get(group, "v1", plural)
                .and_then(|info| info.storage_version_hash.clone())
                .unwrap_or_default()
        };
        let rbac = "rbac.authorization.k8s.io";
        for (group, plural, expected) in [
            ("", "namespaces", "Q3oi5N2YM8M="),
            ("", "configmaps", "qFsyl6wFWjQ="),
            ("", "secrets", "S6u1pOWzb84="),
            ("", "serviceaccounts", "pbx9ZvyFpBE="),
            ("", "services", "0/CO1lhkEBI="),
            ("", "endpoints", "fWeeMqaN/OA="),
            ("", "events", "r2yiGXH7wu8="),
            ("", "pods", "xPOwRZ+Yhw8="),
            ("events.k8s.io", "events", "r2yiGXH7wu8="),
            ("coordination.k8s.io", "leases", "gqkMMb/YqFM="),
            (rbac, "roles", "7FuwZcIIItM="),
            (rbac, "rolebindings", "eGsCzGH6b1g="),
            (rbac, "clusterroles", "bYE5ZWDrJ44="),
            (rbac, "clusterrolebindings", "48tpQ8gZHFc="),
            (
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                "M5uH+AlWATY=",
            ),
        ] {
            assert_eq!(hash(group, plural), expected, "{group}/{plural}");
        }
    }
}
