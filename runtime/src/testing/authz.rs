//! Authorization of requests from [`super::ApiServer::client_with_rules`] clients, through
//! [`super::rbac`].

use std::collections::HashMap;

use http::Method;
use k8s_openapi::api::rbac::v1::PolicyRule;

use super::rbac::{RequestAttributes, authorize as rbac_authorize, verb_for};
use super::routes::ResourcePath;

/// Checks a resource request against the user's rules; `Err` carries the 403 message.
///
/// Non-resource requests (discovery, `/version`) are not checked: every authenticated user may
/// make them on a real cluster too (the `system:discovery` and `system:public-info-viewer`
/// bindings).
pub(crate) fn authorize(
    user: &str,
    rules: &[PolicyRule],
    method: &Method,
    path: &ResourcePath,
    raw_path: &str,
    query: &HashMap<String, String>,
) -> Result<(), String> {
    let watch = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    let mut name = path.name.clone();
    if name.is_none() && method == Method::GET {
        // RequestInfoFactory takes a list/watch's name from a `metadata.name=` field selector.
        name = query.get("fieldSelector").and_then(|s| {
            s.split(',')
                .filter_map(|t| t.strip_prefix("metadata.name="))
                .next()
                .map(str::to_string)
        });
    }
    let attrs = RequestAttributes {
        user: user.to_string(),
        verb: verb_for(method.as_str(), path.name.is_some(), watch),
        api_group: path.group.clone(),
        resource: path.plural.clone(),
        subresource: path.subresource.clone(),
        namespace: path.namespace.clone(),
        name,
        path: raw_path.to_string(),
        resource_request: true,
    };
    rbac_authorize(rules, &attrs)
}
