//! The OpenAPI documents `kubectl explain` (and client-side tooling) reads: `/openapi/v2` and
//! `/openapi/v3` with one document per group-version, holding the real schemas of the served
//! kinds. Built-in kinds come from upstream's definitions ([`definitions`], which strategic
//! merge patch reads too); kinds served from CRDs from their versions' schemas ([`crd`]), so the
//! documents change as CRDs are installed, updated and deleted.
//!
//! Each document holds the definitions of its kinds and their lists and every definition they
//! reference, and one path per kind (the item path's `patch` operation, which carries the
//! `x-kubernetes-group-version-kind` kubectl finds the kind by, and the `fieldValidation`
//! parameter that tells kubectl the server validates fields itself). The other operations,
//! parameters and response schemas upstream lists are not published.

mod crd;
pub(crate) mod definitions;
mod gnostic;
mod v2;
mod v3;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use self::definitions::{Definitions, V2_REF_PREFIX, collect_refs};
use crate::resources::{Registry, ResourceInfo};

pub(crate) use gnostic::encode as v2_protobuf;
pub(crate) use v2::{
    Format as V2Format, PROTOBUF_CONTENT_TYPE as V2_PROTOBUF, document as v2_document,
    negotiate as v2_format,
};
pub(crate) use v3::{group_version, root};

/// The kinds' and their lists' definitions, and every built-in definition they reference,
/// with references in v2 form.
fn kind_definitions(infos: &[Arc<ResourceInfo>], v2: bool) -> BTreeMap<String, Value> {
    let builtin = Definitions::builtin();
    let mut out = BTreeMap::new();
    for info in infos {
        if info.custom {
            out.extend(crd::definitions(info, v2));
            continue;
        }
        for kind in [&info.kind, &info.list_kind] {
            if let Some(name) = builtin.name_of_kind(&info.group, &info.version, kind) {
                out.insert(
                    name.to_owned(),
                    builtin.get(name).cloned().unwrap_or_default(),
                );
            }
        }
    }
    let mut refs = Vec::new();
    out.values().for_each(|d| collect_refs(d, &mut refs));
    let referenced: Vec<String> = refs.into_iter().map(str::to_owned).collect();
    for name in builtin.closure(referenced) {
        out.entry(name.to_owned())
            .or_insert_with(|| builtin.get(name).cloned().unwrap_or_default());
    }
    out
}

/// Every served resource.
fn all_resources(registry: &Registry) -> Vec<Arc<ResourceInfo>> {
    let mut infos = registry.in_group_version("", "v1");
    for (group, versions) in registry.groups() {
        for version in versions {
            infos.extend(registry.in_group_version(&group, &version));
        }
    }
    infos
}

/// The item path of a resource (`/api/v1/namespaces/{namespace}/configmaps/{name}`).
fn item_path(info: &ResourceInfo) -> String {
    let base = if info.group.is_empty() {
        format!("/api/{}", info.version)
    } else {
        format!("/apis/{}/{}", info.group, info.version)
    };
    if info.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}/{{name}}", info.plural)
    } else {
        format!("{base}/{}/{{name}}", info.plural)
    }
}

/// Each resource's item path with its `patch` operation, the query parameters built by `param`.
fn patch_paths(infos: &[Arc<ResourceInfo>], param: impl Fn(&str) -> Value) -> Map<String, Value> {
    infos
        .iter()
        .map(|info| {
            (
                item_path(info),
                patch_operation(info, patch_parameters(&param)),
            )
        })
        .collect()
}

/// The item path's `patch` operation, with the query parameters given.
fn patch_operation(info: &ResourceInfo, parameters: Vec<Value>) -> Value {
    json!({
        "patch": {
            "operationId": format!("patch{}", info.kind),
            "parameters": parameters,
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": info.group, "version": info.version, "kind": info.kind},
        }
    })
}

/// The query parameters of a patch (`dryRun`, `fieldManager`, `fieldValidation`, `force`), each
/// built by `param` from its name.
fn patch_parameters(param: impl Fn(&str) -> Value) -> Vec<Value> {
    ["dryRun", "fieldManager", "fieldValidation", "force"]
        .into_iter()
        .map(param)
        .collect()
}

/// A definition with its references rewritten from v2's `#/definitions/` to `prefix`.
fn with_ref_prefix(mut schema: Value, prefix: &str) -> Value {
    rewrite_refs(&mut schema, prefix);
    schema
}

fn rewrite_refs(node: &mut Value, prefix: &str) {
    match node {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(name) = r.strip_prefix(V2_REF_PREFIX)
            {
                *r = format!("{prefix}{name}");
            }
            map.values_mut().for_each(|v| rewrite_refs(v, prefix));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, prefix)),
        _ => {}
    }
}
