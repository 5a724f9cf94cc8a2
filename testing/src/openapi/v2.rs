//! OpenAPI v2: `/openapi/v2`, one Swagger 2.0 document for every served kind.
//!
//! kube-openapi serves it as JSON or as gnostic protobuf by the `Accept` header; only JSON is
//! served here, and a request that does not accept JSON is 406 Not Acceptable with an empty body,
//! as kube-openapi answers a format it does not serve. (client-go's `OpenAPISchema` asks for
//! protobuf only: on the 406 it falls back to the legacy path, which is 404, and callers such as
//! `kubectl explain --output plaintext-openapiv2` report that the server has no OpenAPI v2.)

use serde_json::{Map, Value, json};

use super::{all_resources, kind_definitions, patch_paths};
use crate::resources::Registry;

/// `/openapi/v2`.
pub fn document(registry: &Registry) -> Value {
    let infos = all_resources(registry);
    let param =
        |name: &str| json!({"name": name, "in": "query", "type": "string", "uniqueItems": true});
    let paths = patch_paths(&infos, param);
    // The definitions are in v2 form already.
    let definitions: Map<String, Value> = kind_definitions(&infos, true).into_iter().collect();
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "definitions": definitions,
    })
}

/// Whether an `Accept` header admits the JSON document: a media range of `application/json`,
/// `application/*` or `*/*` (kube-openapi negotiates with goautoneg; an empty header accepts
/// nothing).
pub fn accepts_json(accept: &str) -> bool {
    accept.split(',').any(|range| {
        let media = range.split(';').next().unwrap_or_default().trim();
        matches!(media, "application/json" | "application/*" | "*/*")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_served_only_when_accepted() {
        assert!(accepts_json("application/json"));
        assert!(accepts_json("application/json;q=0.9, */*;q=0.1"));
        assert!(accepts_json("*/*"));
        assert!(!accepts_json(
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
        ));
        assert!(!accepts_json(""));
    }
}
