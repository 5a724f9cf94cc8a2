//! OpenAPI v2: `/openapi/v2`, one Swagger 2.0 document for every served kind, as JSON or as
//! gnostic protobuf (what client-go's `OpenAPISchema` asks for, see [`super::gnostic`]) by the
//! `Accept` header; a request accepting neither is 406 Not Acceptable with an empty body, as
//! kube-openapi answers a format it does not serve.

use serde_json::{Map, Value, json};

use super::{all_resources, kind_definitions, patch_paths};
use crate::resources::Registry;

/// `/openapi/v2`.
pub(crate) fn document(registry: &Registry) -> Value {
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

/// The protobuf media type clients ask for.
const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// Its spelling without `@`, which kube-openapi answers with (Go's `mime` rejects the `@`).
pub(crate) const PROTOBUF_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// A form of the v2 document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `application/json`.
    Json,
    /// gnostic's protobuf.
    Protobuf,
}

/// The form an `Accept` header asks for: the first media range that names one served
/// (`application/json`, the protobuf types, or `application/*` and `*/*` for JSON), `None` for
/// none (kube-openapi's 406; an empty header accepts nothing).
pub(crate) fn negotiate(accept: &str) -> Option<Format> {
    accept.split(',').find_map(
        |range| match range.split(';').next().unwrap_or_default().trim() {
            "application/json" | "application/*" | "*/*" => Some(Format::Json),
            PROTOBUF | PROTOBUF_CONTENT_TYPE => Some(Format::Protobuf),
            _ => None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_served_media_range_wins() {
        assert_eq!(negotiate("application/json"), Some(Format::Json));
        assert_eq!(
            negotiate("application/json;q=0.9, */*;q=0.1"),
            Some(Format::Json)
        );
        assert_eq!(negotiate("*/*"), Some(Format::Json));
        assert_eq!(negotiate(PROTOBUF), Some(Format::Protobuf));
        assert_eq!(
            negotiate(&format!("text/plain, {PROTOBUF}, application/json")),
            Some(Format::Protobuf)
        );
        assert_eq!(negotiate("application/yaml"), None);
        assert_eq!(negotiate(""), None);
    }
}
