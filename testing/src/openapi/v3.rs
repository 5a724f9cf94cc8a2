//! A minimal OpenAPI v3 surface: enough for `kubectl create/apply` to learn that the server
//! validates fields itself (the `fieldValidation` parameter on each kind's PATCH operation), so
//! that kubectl sends `fieldValidation=Strict` instead of downloading schemas for client-side
//! validation. No schemas are served; the emulator does not validate objects against schemas.

use serde_json::{Map, Value, json};

use crate::resources::Registry;

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: the discovery of group-version documents.
pub fn root(registry: &Registry) -> Value {
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
pub fn group_version(registry: &Registry, path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => (String::new(), v.to_string()),
        ["apis", g, v] => (g.to_string(), v.to_string()),
        _ => return None,
    };
    let infos = registry.in_group_version(&group, &version);
    if infos.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    for info in infos {
        let base = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let item = if info.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", info.plural)
        } else {
            format!("{base}/{}/{{name}}", info.plural)
        };
        let param = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        paths.insert(
            item,
            json!({
                "patch": {
                    "operationId": format!("patch{}", info.kind),
                    "parameters": [param("dryRun"), param("fieldManager"), param("fieldValidation"), param("force")],
                    "responses": {"200": {"description": "OK"}},
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": info.kind},
                }
            }),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
