//! Request paths and query strings, parsed as the apiserver's `RequestInfoFactory` reads them.

use std::collections::HashMap;

/// The parsed request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    Root,
    Version,
    /// `/healthz`, `/livez`, `/readyz`, with the check asked for (`/healthz/ping`).
    Health {
        endpoint: String,
        check: Option<String>,
    },
    CoreVersions,
    Groups,
    Group(String),
    GroupVersion(String, String),
    OpenApi(String),
    /// `/openapi/v2`.
    OpenApiV2,
    Resource(ResourcePath),
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) plural: String,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

pub(crate) fn parse_route(path: &str) -> Route {
    let segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let (group, version, rest) = match s.as_slice() {
        [] => return Route::Root,
        ["version"] => return Route::Version,
        [endpoint @ ("healthz" | "readyz" | "livez"), rest @ ..] => {
            return Route::Health {
                endpoint: (*endpoint).to_owned(),
                check: (!rest.is_empty()).then(|| rest.join("/")),
            };
        }
        ["openapi", "v3"] => return Route::OpenApi(String::new()),
        ["openapi", "v3", rest @ ..] => return Route::OpenApi(rest.join("/")),
        ["openapi", "v2"] => return Route::OpenApiV2,
        ["openapi", ..] => return Route::Unknown,
        ["api"] => return Route::CoreVersions,
        ["api", v] => return Route::GroupVersion(String::new(), v.to_string()),
        ["apis"] => return Route::Groups,
        ["apis", g] => return Route::Group(g.to_string()),
        ["apis", g, v] => return Route::GroupVersion(g.to_string(), v.to_string()),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Route::Unknown,
    };
    let namespaced = rest.len() >= 3
        && rest[0] == "namespaces"
        && !(rest.len() == 3 && matches!(rest[2], "status" | "finalize"));
    let (namespace, rest) = if namespaced {
        (Some(rest[1].to_string()), &rest[2..])
    } else {
        (None, rest)
    };
    if rest.is_empty() || rest.len() > 3 {
        return Route::Unknown;
    }
    Route::Resource(ResourcePath {
        group: group.into(),
        version: version.into(),
        namespace,
        plural: rest[0].into(),
        name: rest.get(1).map(|s| s.to_string()),
        subresource: rest.get(2).map(|s| s.to_string()),
    })
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn parse_query(query: &str) -> HashMap<String, String> {
    let mut params = HashMap::new();
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        // The query parameter conversion reads a repeated parameter's first value.
        params
            .entry(percent_decode(&k.replace('+', " ")))
            .or_insert_with(|| percent_decode(&v.replace('+', " ")));
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(
        group: &str,
        ns: Option<&str>,
        plural: &str,
        name: Option<&str>,
        sub: Option<&str>,
    ) -> Route {
        Route::Resource(ResourcePath {
            group: group.into(),
            version: "v1".into(),
            namespace: ns.map(Into::into),
            plural: plural.into(),
            name: name.map(Into::into),
            subresource: sub.map(Into::into),
        })
    }

    #[test]
    fn paths_route_like_the_apiserver_request_info_factory() {
        assert_eq!(
            parse_route("/api/v1/namespaces"),
            resource("", None, "namespaces", None, None)
        );
        assert_eq!(
            parse_route("/api/v1/namespaces/default"),
            resource("", None, "namespaces", Some("default"), None)
        );
        assert_eq!(
            parse_route("/api/v1/namespaces/team/status"),
            resource("", None, "namespaces", Some("team"), Some("status"))
        );
        assert_eq!(
            parse_route("/api/v1/namespaces/default/configmaps/a"),
            resource("", Some("default"), "configmaps", Some("a"), None)
        );
        assert_eq!(
            parse_route("/apis/demo.kubeward.dev/v1/namespaces/default/rollouts/web/status"),
            resource(
                "demo.kubeward.dev",
                Some("default"),
                "rollouts",
                Some("web"),
                Some("status")
            )
        );
        assert_eq!(
            parse_route("/apis/demo.kubeward.dev/v1/rollouts"),
            resource("demo.kubeward.dev", None, "rollouts", None, None)
        );
        assert_eq!(
            parse_route("/apis/g/v1"),
            Route::GroupVersion("g".into(), "v1".into())
        );
        assert_eq!(parse_route("/version"), Route::Version);
        assert_eq!(parse_route("/nonsense/path"), Route::Unknown);
    }

    #[test]
    fn query_values_are_percent_decoded() {
        let q =
            parse_query("labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1&bad=%zz&trailing=%4");
        assert_eq!(q["labelSelector"], "app=web,tier in (a)");
        assert_eq!(q["watch"], "1");
        assert_eq!(q["bad"], "%zz");
        assert_eq!(q["trailing"], "%4");
    }
}
