//! OpenAPI v3: `/openapi/v3` lists a document per group-version, `/openapi/v3/api/v1` and
//! `/openapi/v3/apis/<group>/<version>` are those documents (`components.schemas` with
//! `#/components/schemas/` references).

use serde_json::{Map, Value, json};

use super::{kind_definitions, patch_paths, with_ref_prefix};
use crate::resources::Registry;

const V3_REF_PREFIX: &str = "#/components/schemas/";

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: the discovery of group-version documents.
pub(crate) fn root(registry: &Registry) -> Value {
    let mut paths = Map::new();
    let mut gvs: Vec<(String, String)> = vec![(String::new(), "v1".into())];
    for (group, versions) in registry.groups() {
        for v in versions {
            gvs.push((group.clone(), v));
        }
    }
    for (g, v) in gvs {
        let p = gv_path(&g, &v);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}")}),
        );
    }
    json!({"paths": paths})
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/<group>/<version>`, `None` if not served.
pub(crate) fn group_version(registry: &Registry, path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => (String::new(), v.to_string()),
        ["apis", g, v] => (g.to_string(), v.to_string()),
        _ => return None,
    };
    let infos = registry.in_group_version(&group, &version);
    if infos.is_empty() {
        return None;
    }
    let param = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
    let paths = patch_paths(&infos, param);
    let schemas: Map<String, Value> = kind_definitions(&infos, false)
        .into_iter()
        .map(|(name, def)| (name, with_ref_prefix(def, V3_REF_PREFIX)))
        .collect();
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}
