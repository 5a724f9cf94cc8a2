//! Fault injection: make chosen requests slow, hang, fail with a status, or drop the connection,
//! before or after the write they carry has committed; or make a watch deliver its events late.
//! [`relist_with_deletes`] composes rules into a scenario: objects deleted while every watch
//! relists, so that watchers learn of the deletes only from their relist.

use std::sync::Mutex;
use std::time::Duration;

use http::Method;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams};
use kube::runtime::reflector::ObjectRef;

use crate::ServerError;
use crate::auth::user::ADMIN;

/// What an injected fault does to a matching request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultAction {
    /// Wait this long, then serve the request normally.
    Latency(Duration),
    /// Never answer (the client's timeout decides).
    Hang,
    /// Answer with this HTTP status and a `Status` body of the matching reason, without
    /// touching the store.
    ///
    /// Mind that kube clients retry 429, 503 and 504 by default (`kube::Config::default_retry`,
    /// also on [`super::ApiServer::client`]): a fault with `times(1)` of those codes is absorbed
    /// by the retry. Use another code, more `times`, or a client without retries to see it.
    Status(u16),
    /// Close the connection without answering.
    CloseConnection,
    /// Serve the request (a write commits), then answer this HTTP status with a `Status` body
    /// instead of the result, as a kube-apiserver whose etcd write outlived the request timeout
    /// answers 504. The client cannot know the write happened: it is *in doubt*. kube's client
    /// retries 429, 503 and 504, so the retried write meets its own committed twin (a create
    /// gets `409 AlreadyExists`, an update or a patch carrying a resourceVersion `409 Conflict`).
    CommitThenStatus(u16),
    /// Serve the request (a write commits), then close the connection without answering: the
    /// client sees a transport error and the write is in doubt.
    CommitThenCloseConnection,
    /// Serve the request (a write commits), then never answer: the client's timeout decides,
    /// and the write is in doubt.
    CommitThenHang,
    /// Serve a watch whose every event reaches the client this long after the server sent it, in
    /// order: a watch cache that lags behind the store, so a client's cache misses its own
    /// writes for that long. Matches watch requests only (the watch opened next — kube's watcher
    /// opens a new one after a `410` or a dropped connection); other requests pass it by.
    DelayWatchEvents(Duration),
}

/// Which requests a fault applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathMatch {
    /// Every request.
    Any,
    /// Requests whose path starts with this prefix.
    Prefix(String),
    /// Requests to a resource (any version, namespace, name or subresource) of a group
    /// (`""` for core), e.g. `("events.k8s.io", "events")`.
    Resource {
        /// API group.
        group: String,
        /// Resource plural.
        resource: String,
    },
}

/// One fault rule.
///
/// ```
/// use kubeward_testing::{Fault, FaultAction};
/// use http::Method;
/// let fault = Fault::new(FaultAction::Status(503))
///     .method(Method::POST)
///     .resource("events.k8s.io", "events")
///     .times(2);
/// assert_eq!(fault.times, Some(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The HTTP method it applies to; `None` for all.
    pub method: Option<Method>,
    /// The requests it applies to.
    pub path: PathMatch,
    /// What it does.
    pub action: FaultAction,
    /// The authenticated user it applies to (see [`super::Identity::Rules`];
    /// anonymous requests are `system:admin`); `None` for all.
    pub user: Option<String>,
    /// The authenticated user it spares (every other user's requests match); `None` for none.
    pub except_user: Option<String>,
    /// How many requests it hits before it is spent; `None` for all of them.
    pub times: Option<usize>,
}

impl Fault {
    /// A fault hitting every request, forever, until narrowed.
    pub fn new(action: FaultAction) -> Self {
        Self {
            method: None,
            path: PathMatch::Any,
            action,
            user: None,
            except_user: None,
            times: None,
        }
    }

    /// Only requests with this method.
    #[must_use]
    pub fn method(mut self, method: Method) -> Self {
        self.method = Some(method);
        self
    }

    /// Only requests to this resource of this group (`""` for core).
    #[must_use]
    pub fn resource(mut self, group: &str, resource: &str) -> Self {
        self.path = PathMatch::Resource {
            group: group.into(),
            resource: resource.into(),
        };
        self
    }

    /// Only requests whose path starts with `prefix`.
    #[must_use]
    pub fn path_prefix(mut self, prefix: &str) -> Self {
        self.path = PathMatch::Prefix(prefix.into());
        self
    }

    /// Only requests of the authenticated `user`, e.g. one replica of several.
    #[must_use]
    pub fn user(mut self, user: &str) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Every user's requests but those of `user`, e.g. the administrator a test acts as.
    #[must_use]
    pub fn except_user(mut self, user: &str) -> Self {
        self.except_user = Some(user.into());
        self
    }

    /// Only the next `n` matching requests.
    #[must_use]
    pub fn times(mut self, n: usize) -> Self {
        self.times = Some(n);
        self
    }
}

/// What a fault rule is matched against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Matched<'a> {
    pub(crate) method: &'a Method,
    pub(crate) path: &'a str,
    /// The (group, resource) of a resource request.
    pub(crate) resource: Option<(&'a str, &'a str)>,
    /// The authenticated user.
    pub(crate) user: &'a str,
    /// Whether it is a watch (`watch=true`).
    pub(crate) watch: bool,
}

/// A rule added to [`Faults`], to [`remove`](Faults::remove) it when its scenario is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FaultId(u64);

/// The faults of a server. Rules are tried in the order added; the first match applies.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Mutex<Rules>,
}

#[derive(Debug, Default)]
struct Rules {
    /// The id of the next rule added.
    next: u64,
    rules: Vec<(FaultId, Fault)>,
}

impl Faults {
    /// Adds a rule; its id removes it ([`Faults::remove`]) without touching the others.
    pub fn add(&self, fault: Fault) -> FaultId {
        let mut rules = self.lock();
        let id = FaultId(rules.next);
        rules.next += 1;
        rules.rules.push((id, fault));
        id
    }

    /// Removes the rule `id`; whether it was there (a rule with `times` is gone once spent).
    pub fn remove(&self, id: FaultId) -> bool {
        let mut rules = self.lock();
        let before = rules.rules.len();
        rules.rules.retain(|(i, _)| *i != id);
        rules.rules.len() < before
    }

    /// Removes all rules.
    pub fn clear(&self) {
        self.lock().rules.clear();
    }

    /// The action for a request, consuming one use of the matching rule.
    pub(crate) fn take(&self, request: &Matched<'_>) -> Option<FaultAction> {
        let Matched {
            method,
            path,
            resource,
            user,
            watch,
        } = *request;
        let mut guard = self.lock();
        let rules = &mut guard.rules;
        let index = rules.iter().position(|(_, f)| {
            f.method.as_ref().is_none_or(|m| m == method)
                && f.user.as_deref().is_none_or(|u| u == user)
                && f.except_user.as_deref() != Some(user)
                && f.times != Some(0)
                && (watch || !matches!(f.action, FaultAction::DelayWatchEvents(_)))
                && match &f.path {
                    PathMatch::Any => true,
                    PathMatch::Prefix(p) => path.starts_with(p.as_str()),
                    PathMatch::Resource { group, resource: r } => {
                        resource.is_some_and(|(g, res)| g == group && res == r)
                    }
                }
        })?;
        let (_, rule) = &mut rules[index];
        if let Some(n) = rule.times.as_mut() {
            *n -= 1;
        }
        let action = rule.action.clone();
        if rule.times == Some(0) {
            rules.remove(index);
        }
        Some(action)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes its rule when dropped: a scenario's rule goes when the scenario ends, also early (an
/// error, a cancelled future).
struct Lifted<'a> {
    faults: &'a Faults,
    id: FaultId,
}

impl Drop for Lifted<'_> {
    fn drop(&mut self) {
        self.faults.remove(self.id);
    }
}

/// The scenario behind [`ApiServer::relist_with_deletes`](crate::ApiServer::relist_with_deletes)
/// and [`Cluster::relist_with_deletes`](crate::Cluster::relist_with_deletes), on either backend:
/// while a rule refuses with `500` every `GET` of `K`'s resource (lists, watches — a streaming
/// list is a watch — and reads) of every user but the administrator, `compact(0)` ends every
/// open watch with `ERROR 410 Expired`, `admin` deletes `objects`, and `compact(rv)`, `rv` the
/// resourceVersion after the deletes, makes every watch from before them end with
/// `ERROR 410 Expired` too; then the rule goes, so the watchers' next relist (after their
/// backoff) succeeds and finds the objects gone.
pub(crate) async fn relist_with_deletes<K>(
    faults: &Faults,
    compact: impl Fn(u64),
    admin: kube::Client,
    objects: &[ObjectRef<K>],
) -> Result<Vec<ObjectRef<K>>, ServerError>
where
    K: kube::Resource<DynamicType = ()>,
{
    let refused = Fault::new(FaultAction::Status(500))
        .method(Method::GET)
        .resource(&K::group(&()), &K::plural(&()))
        .except_user(ADMIN);
    let _lifted = Lifted {
        faults,
        id: faults.add(refused),
    };
    compact(0);
    let resource = ApiResource::erase::<K>(&());
    let mut deleted = Vec::new();
    for object in objects {
        let api: Api<DynamicObject> = match &object.namespace {
            Some(namespace) => Api::namespaced_with(admin.clone(), namespace, &resource),
            None => Api::all_with(admin.clone(), &resource),
        };
        match api.delete(&object.name, &DeleteParams::default()).await {
            Ok(_) => deleted.push(object.clone()),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
    }
    // A watcher that was between its list and its watch must not replay the deletes either.
    let listed = Api::<DynamicObject>::all_with(admin, &resource)
        .list_metadata(&ListParams::default().limit(1))
        .await?;
    let after = listed.metadata.resource_version.unwrap_or_default();
    compact(after.parse().unwrap_or(0));
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched<'a>(
        method: &'a Method,
        path: &'a str,
        resource: Option<(&'a str, &'a str)>,
        user: &'a str,
    ) -> Matched<'a> {
        Matched {
            method,
            path,
            resource,
            user,
            watch: false,
        }
    }

    #[test]
    fn a_counted_fault_is_spent_after_its_uses_and_others_keep_matching() {
        let faults = Faults::default();
        faults.add(
            Fault::new(FaultAction::Status(500))
                .method(Method::POST)
                .times(2),
        );
        faults.add(Fault::new(FaultAction::Hang).path_prefix("/apis/x"));
        let post = |path: &str| faults.take(&matched(&Method::POST, path, None, "u"));
        assert_eq!(post("/api/v1"), Some(FaultAction::Status(500)));
        assert_eq!(post("/api/v1"), Some(FaultAction::Status(500)));
        assert_eq!(post("/api/v1"), None);
        assert_eq!(post("/apis/x/v1"), Some(FaultAction::Hang));
        assert_eq!(
            faults.take(&matched(&Method::GET, "/apis/x/v1", None, "u")),
            Some(FaultAction::Hang)
        );
        faults.clear();
        assert_eq!(post("/apis/x/v1"), None);
    }

    #[test]
    fn resource_faults_match_group_and_resource() {
        let faults = Faults::default();
        faults.add(Fault::new(FaultAction::CloseConnection).resource("events.k8s.io", "events"));
        assert_eq!(
            faults.take(&matched(
                &Method::GET,
                "/api/v1/events",
                Some(("", "events")),
                "u"
            )),
            None
        );
        assert_eq!(
            faults.take(&matched(
                &Method::GET,
                "/apis/events.k8s.io/v1/events",
                Some(("events.k8s.io", "events")),
                "u"
            )),
            Some(FaultAction::CloseConnection)
        );
    }

    #[test]
    fn user_faults_hit_only_that_users_requests() {
        let faults = Faults::default();
        faults.add(Fault::new(FaultAction::CommitThenStatus(504)).user("replica-a"));
        assert_eq!(
            faults.take(&matched(&Method::PUT, "/apis/x", None, "replica-b")),
            None
        );
        assert_eq!(
            faults.take(&matched(&Method::PUT, "/apis/x", None, "replica-a")),
            Some(FaultAction::CommitThenStatus(504))
        );
    }

    #[test]
    fn a_removed_rule_no_longer_matches_and_the_others_stay() {
        let faults = Faults::default();
        let first = faults.add(Fault::new(FaultAction::Status(500)).method(Method::GET));
        let second = faults.add(Fault::new(FaultAction::Hang).method(Method::GET));
        assert_ne!(first, second);
        let get = || faults.take(&matched(&Method::GET, "/api/v1", None, "u"));
        assert_eq!(get(), Some(FaultAction::Status(500)));
        assert!(faults.remove(first));
        assert!(!faults.remove(first), "removed once");
        assert_eq!(get(), Some(FaultAction::Hang), "the other rule stays");
        assert!(faults.remove(second));
        assert_eq!(get(), None);
    }

    #[test]
    fn an_except_user_fault_spares_that_user_only() {
        let faults = Faults::default();
        faults.add(Fault::new(FaultAction::Status(500)).except_user(ADMIN));
        let get = |user| faults.take(&matched(&Method::GET, "/api/v1", None, user));
        assert_eq!(get(ADMIN), None);
        assert_eq!(get("replica-a"), Some(FaultAction::Status(500)));
    }

    #[test]
    fn a_watch_delay_matches_watch_requests_only() {
        let faults = Faults::default();
        let delay = FaultAction::DelayWatchEvents(Duration::from_secs(3));
        faults.add(Fault::new(delay.clone()).path_prefix("/apis/x").times(1));
        let get = |watch| {
            faults.take(&Matched {
                watch,
                ..matched(&Method::GET, "/apis/x/v1/widgets", None, "u")
            })
        };
        assert_eq!(get(false), None, "a list passes it by");
        assert_eq!(get(true), Some(delay));
        assert_eq!(get(true), None, "spent");
    }
}
