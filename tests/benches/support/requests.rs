//! The server's request log tallied by verb and resource, as kube-apiserver's audit log and
//! `apiserver_request_total` name them (`list`, `watch`, `get`, `create`, `patch`, `delete`;
//! `workloads/status` for a subresource), with failed requests counted apart by their code.

use std::collections::BTreeMap;
use std::fmt;

use http::Method;
use kubeward_testing::RequestRecord;

/// Requests counted by `"<verb> <resource>"` (`"<verb> <resource> -> <code>"` when refused).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally(pub BTreeMap<String, usize>);

/// The resource of a request path (`workloads`, `workloads/status`, `events`), and whether it
/// names one object; `None` for non-resource paths (discovery).
fn resource(path: &str) -> Option<(String, bool)> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest = match segments.as_slice() {
        ["api", _version, rest @ ..] => rest,
        ["apis", _group, _version, rest @ ..] => rest,
        _ => return None,
    };
    let rest = match rest {
        ["namespaces", _namespace, rest @ ..] if !rest.is_empty() => rest,
        rest => rest,
    };
    match rest {
        [plural] => Some(((*plural).to_owned(), false)),
        [plural, _name] => Some(((*plural).to_owned(), true)),
        [plural, _name, sub] => Some((format!("{plural}/{sub}"), true)),
        _ => None,
    }
}

/// The verb and resource of `record`, e.g. `patch workloads/status`.
pub fn verb_and_resource(record: &RequestRecord) -> String {
    let Some((resource, named)) = resource(&record.path) else {
        return format!("{} {}", record.method, record.path);
    };
    let verb = match (&record.method, named) {
        (&Method::GET, _) if record.is_watch() => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, false) => "deletecollection",
        (&Method::DELETE, true) => "delete",
        _ => record.method.as_str(),
    };
    match record.status {
        400.. => format!("{verb} {resource} -> {}", record.status),
        _ => format!("{verb} {resource}"),
    }
}

impl Tally {
    /// The requests of `records` not made by `excluded_user` (the benchmark's driver).
    pub fn of(records: &[RequestRecord], excluded_user: &str) -> Self {
        let mut tally = BTreeMap::new();
        for record in records.iter().filter(|r| r.user != excluded_user) {
            *tally.entry(verb_and_resource(record)).or_default() += 1;
        }
        Self(tally)
    }

    /// All requests.
    pub fn total(&self) -> usize {
        self.0.values().sum()
    }

    /// The requests that write (anything but get, list and watch).
    pub fn writes(&self) -> usize {
        self.0
            .iter()
            .filter(|(key, _)| {
                !["get ", "list ", "watch "]
                    .iter()
                    .any(|v| key.starts_with(v))
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// The count of one key.
    pub fn get(&self, key: &str) -> usize {
        self.0.get(key).copied().unwrap_or_default()
    }

    /// The requests made per object, except the watches' own (list and watch of each watched
    /// resource, which do not grow with the number of objects).
    pub fn per_object(&self, watched: &[&str]) -> Self {
        let own: Vec<String> = watched
            .iter()
            .flat_map(|w| [format!("list {w}"), format!("watch {w}")])
            .collect();
        Self(
            self.0
                .iter()
                .filter(|(key, _)| !own.contains(key))
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
        )
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        write!(f, "{} [{}]", self.total(), shown.join(", "))
    }
}
