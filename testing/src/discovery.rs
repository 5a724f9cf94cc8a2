//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`.
//!
//! Only the legacy (unaggregated) documents are served, always as `application/json`: client-go
//! (and so kubectl) asks for the aggregated `apidiscovery.k8s.io/v2` form first and falls back to
//! these when the response's content type says they are the plain kinds.

use serde_json::{Value, json};

use std::collections::BTreeMap;

use super::auth::reviews;
use super::kinds;
use super::resources::{Registry, ResourceInfo};

/// `/version`: 1.34's `version.Info`, with the emulated version (the binary's own) and the
/// minimum compatibility version (one minor back) that component-base adds.
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": "34",
        "emulationMajor": "1",
        "emulationMinor": "34",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "33",
        "gitVersion": "v1.34.0-kubeward",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// `/api`.
pub(crate) fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_entry(group: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

/// The served groups with their versions: the registry's, and the self reviews' groups.
fn groups(registry: &Registry) -> BTreeMap<String, Vec<String>> {
    let mut groups = registry.groups();
    for group in reviews::groups() {
        groups
            .entry(group.to_owned())
            .or_default()
            .push("v1".to_owned());
    }
    groups
}

/// Whether `group/version` is served (the core group always is): a path under a group
/// version that is not reaches no handler at all.
pub(crate) fn serves(registry: &Registry, group: &str, version: &str) -> bool {
    group.is_empty()
        || groups(registry)
            .get(group)
            .is_some_and(|versions| versions.iter().any(|v| v == version))
}

/// `/apis`.
pub(crate) fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = groups(registry)
        .iter()
        .map(|(g, vs)| group_entry(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`, `None` if no version of it is served.
pub(crate) fn group(registry: &Registry, group: &str) -> Option<Value> {
    let groups = groups(registry);
    let versions = groups.get(group)?;
    let mut entry = group_entry(group, versions);
    entry["kind"] = json!("APIGroup");
    entry["apiVersion"] = json!("v1");
    Some(entry)
}

/// `/api/v1` or `/apis/<group>/<version>`, `None` if nothing is served there.
pub(crate) fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let infos = registry.in_group_version(group, version);
    let mut resources: Vec<Value> = infos.iter().flat_map(|i| resource_entries(i)).collect();
    resources.extend(reviews::discovery_entries(group, version));
    if resources.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources,
    }))
}

/// The verbs discovery lists for `info`.
fn verbs(info: &ResourceInfo) -> Vec<&'static str> {
    if info.custom {
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
    .filter(|v| *v != "deletecollection" || kinds::strategy(info).deletes_collections())
    .collect()
}

/// The APIResource entries of `info` (main resource and subresources).
fn resource_entries(info: &ResourceInfo) -> Vec<Value> {
    let mut main = json!({
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": verbs(info),
    });
    if !info.short_names.is_empty() {
        main["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        main["categories"] = json!(info.categories);
    }
    if let Some(hash) = &info.storage_version_hash {
        main["storageVersionHash"] = json!(hash);
    }
    let mut out = vec![main];
    out.extend(kinds::strategy(info).discovery_subresources());
    if info.status_subresource {
        out.push(json!({
            "name": format!("{}/status", info.plural),
            "singularName": "",
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": ["get", "patch", "update"],
        }));
    }
    if info.scale.is_some() {
        out.push(json!({
            "name": format!("{}/scale", info.plural),
            "singularName": "",
            "namespaced": info.namespaced,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": ["get", "patch", "update"],
        }));
    }
    if !info.custom {
        // A built-in group's resources are listed by path (`deployments/scale` before
        // `deployments/status`); a CRD's main, status, scale.
        out.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    }
    out
}
