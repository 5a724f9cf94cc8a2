//! Authorization of requests made with [`super::ApiServer::client_with_rules`] clients.

use std::collections::HashMap;

use http::Method;
use serde_json::Value;

use super::server::ResourcePath;

/// The RBAC verb of a request (apiserver `RequestInfoFactory`).
pub(crate) fn verb(
    method: &Method,
    path: &ResourcePath,
    query: &HashMap<String, String>,
) -> &'static str {
    let watch = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    match (method.as_str(), path.name.is_some()) {
        ("GET" | "HEAD", true) => "get",
        ("GET" | "HEAD", false) if watch => "watch",
        ("GET" | "HEAD", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "",
    }
}

/// Checks a request against the user's rules; `Err` carries the 403 message.
pub(crate) fn authorize(
    user: &str,
    rules: &[Value],
    method: &Method,
    path: &ResourcePath,
    _raw_path: &str,
    query: &HashMap<String, String>,
) -> Result<(), String> {
    let verb = verb(method, path, query);
    let allowed = rules.iter().any(|rule| {
        let has = |field: &str, want: &str| {
            rule[field]
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v == "*" || v == want))
        };
        let resource = match &path.subresource {
            Some(sub) => format!("{}/{sub}", path.plural),
            None => path.plural.clone(),
        };
        has("verbs", verb)
            && has("apiGroups", &path.group)
            && has("resources", &resource)
            && (rule["resourceNames"]
                .as_array()
                .is_none_or(|a| a.is_empty())
                || path
                    .name
                    .as_deref()
                    .is_some_and(|n| has("resourceNames", n)))
    });
    if allowed {
        return Ok(());
    }
    let resource = match &path.subresource {
        Some(sub) => format!("{}/{sub}", path.plural),
        None => path.plural.clone(),
    };
    let scope = match &path.namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_string(),
    };
    Err(format!(
        "{} is forbidden: User \"{user}\" cannot {verb} resource \"{resource}\" in API group \"{}\" {scope}",
        if path.group.is_empty() {
            path.plural.clone()
        } else {
            format!("{}.{}", path.plural, path.group)
        } + &path
            .name
            .as_ref()
            .map(|n| format!(" \"{n}\""))
            .unwrap_or_default(),
        path.group
    ))
}
