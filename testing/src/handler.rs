//! The request pipeline: faults, authentication and authorization, the request log, routing
//! to discovery or a resource, content negotiation, and the verbs' dispatch to [`super::api`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Frame, Incoming};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::api::{ListParams, PatchType, State, WriteOptions};
use super::apply::manager_or_user_agent;
use super::auth::authorizer::{self, Identity};
use super::auth::user::UserInfo;
use super::auth::{impersonation, reviews};
use super::fault_stage::serve_with_fault;
use super::lifecycle::namespace;
use super::negotiation::{self, Representation};
use super::params::{go_duration, option_flag, unparsable_resource_version};
use super::requests::RequestRecord;
use super::routes::{ResourcePath, Route, parse_query, parse_route};
use super::schema::duplicates::duplicate_fields;
use super::schema::{Decoding, FieldValidation};
use super::shared::Shared;
use super::status::{ApiError, Qualified};
use super::validation::rbac::RbacKind;
use super::watch::{self, WatchRequest};
use super::{authz, discovery, openapi, protobuf, table};

pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// The largest request body read (apiserver `MaxRequestBodyBytes`, 3 MiB); larger ones are
/// answered 413 RequestEntityTooLarge.
const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// A response body fed by a channel (watch streams).
struct ChannelBody(mpsc::Receiver<Bytes>);

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

/// `body` with each of its frames delivered `delay` after it was produced, in order (a lagging
/// watch cache). Ends when `body` ends (or fails) or the client goes away. The fault proxy in
/// front of a real kube-apiserver delays its watches with this too.
pub(crate) fn delayed<B>(mut body: B, delay: Duration) -> Body
where
    B: hyper::body::Body<Data = Bytes> + Send + Unpin + 'static,
{
    let (due_tx, mut due_rx) = mpsc::unbounded_channel::<(tokio::time::Instant, Bytes)>();
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    tokio::spawn(async move {
        let produce = async move {
            while let Some(Ok(frame)) = body.frame().await {
                if let Ok(data) = frame.into_data()
                    && due_tx
                        .send((tokio::time::Instant::now() + delay, data))
                        .is_err()
                {
                    return;
                }
            }
        };
        let deliver = async {
            while let Some((due, data)) = due_rx.recv().await {
                tokio::time::sleep_until(due).await;
                if tx.send(data).await.is_err() {
                    return;
                }
            }
        };
        // The producer ends with the body (dropping `due_tx`), then the deliverer drains what is
        // due; the client going away ends both.
        tokio::select! {
            ((), ()) = async { tokio::join!(produce, deliver) } => {}
            () = tx.closed() => {}
        }
    });
    ChannelBody(rx).boxed_unsync()
}

/// `body` (a JSON watch stream) ended with `ERROR 410 Expired` when `expirations` changes, as
/// kube-apiserver ends its watches once etcd compacted the history they read from: what
/// [`crate::Cluster::expire_watches`] does to the real backend's watches, through the proxy.
pub(crate) fn expiring<B>(mut body: B, mut expirations: tokio::sync::watch::Receiver<u64>) -> Body
where
    B: hyper::body::Body<Data = Bytes, Error = Infallible> + Send + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    expirations.mark_unchanged();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                frame = body.frame() => match frame.map(|f| f.map(Frame::into_data)) {
                    Some(Ok(Ok(data))) => {
                        if tx.send(data).await.is_err() {
                            return;
                        }
                    }
                    Some(_) => {}
                    None => return,
                },
                changed = expirations.changed() => {
                    if changed.is_ok() {
                        let status = crate::status::ApiError::expired(
                            "too old resource version: the watch history was compacted".to_owned(),
                        );
                        let event = json!({"type": "ERROR", "object": status.to_status()});
                        let mut line = serde_json::to_vec(&event).unwrap_or_default();
                        line.push(b'\n');
                        let _ = tx.send(Bytes::from(line)).await;
                    }
                    return;
                }
                () = tx.closed() => return,
            }
        }
    });
    ChannelBody(rx).boxed_unsync()
}

pub(crate) fn json_response(status: u16, body: &Value) -> Response<Body> {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(bytes)).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

/// A response with no body (kube-openapi's 406 for a format it does not serve).
fn empty_response(status: u16) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .body(Full::new(Bytes::new()).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

/// A plain-text answer as Go's `http.Error` writes it.
fn text_response(status: u16, text: &str) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(Full::new(Bytes::from(text.to_owned())).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

pub(crate) fn error_response(err: &ApiError) -> Response<Body> {
    json_response(err.code, &err.to_status())
}

pub(crate) async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
    client: Option<&UserInfo>,
) -> Result<Response<Body>, std::io::Error> {
    let (parts, body) = req.into_parts();
    // A body over the limit is not read further; it is refused below, once faults had their say.
    let body = match Limited::new(body, MAX_REQUEST_BODY_BYTES).collect().await {
        Ok(b) => Some(b.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => None,
        Err(e) => return Err(std::io::Error::other(e)),
    };
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or_default().to_string();
    let route = parse_route(&path);
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // Authentication, then impersonation (apiserver's filter order); a failure is answered once
    // faults had their say, with no user recorded.
    let identity = shared
        .authn
        .authenticate(&parts.headers, client)
        .and_then(|requestor| {
            let state = shared.lock();
            impersonation::impersonate(&state.store, requestor, &parts.headers)
        });
    let user = identity
        .as_ref()
        .map(|i| i.user.name.clone())
        .unwrap_or_default();
    let record = RequestRecord {
        method: parts.method.clone(),
        path: path.clone(),
        query: query.clone(),
        content_type: content_type.clone(),
        user: user.clone(),
        status: 0,
    };
    let resource = match &route {
        Route::Resource(r) => Some((r.group.as_str(), r.plural.as_str())),
        _ => None,
    };
    let query_map = parse_query(&query);
    let fault = shared.faults.take(&super::faults::Matched {
        method: &parts.method,
        path: &path,
        resource,
        user: &user,
        watch: is_watch(&query_map),
    });
    let serve = async {
        let Some(body) = body else {
            let err = ApiError::too_large(format_args!("limit is {MAX_REQUEST_BODY_BYTES}"));
            return Ok(error_response(&err));
        };
        Ok(match identity {
            // An internal error of the filters is `responsewriters.InternalError`: plain text
            // naming the request URI.
            Err(e) if e.code == 500 => {
                let uri = match query.as_str() {
                    "" => path.clone(),
                    q => format!("{path}?{q}"),
                };
                text_response(
                    500,
                    &format!(
                        "Internal Server Error: {}: {}\n",
                        super::validation::names::go_quote(&uri),
                        e.message
                    ),
                )
            }
            Err(e) => error_response(&e),
            Ok(identity) => {
                let request = Served {
                    method: &parts.method,
                    headers: &parts.headers,
                    route: &route,
                    path: &path,
                    query: &query_map,
                    body: &body,
                };
                serve_as(&shared, &identity, &request).await
            }
        })
    };
    serve_with_fault(fault, &shared.requests, record, serve).await
}

/// A request as the pipeline sees it once its identity is known.
struct Served<'a> {
    method: &'a Method,
    headers: &'a HeaderMap,
    route: &'a Route,
    path: &'a str,
    query: &'a HashMap<String, String>,
    body: &'a Bytes,
}

/// Authorizes the request for `identity` (and admits its owner references), then serves it:
/// the self reviews here, everything else through [`route_request`].
async fn serve_as(
    shared: &Arc<Shared>,
    identity: &Identity,
    request: &Served<'_>,
) -> Response<Body> {
    let user = &identity.user.name;
    let authorized = {
        let state = shared.lock();
        match request.route {
            Route::Resource(r) => {
                let attrs = authz::resource_attributes(
                    user,
                    request.method,
                    r,
                    request.path,
                    request.query,
                );
                authorizer::check(&state.store, identity, &attrs).and_then(|()| {
                    apply_create_authorization(&state, identity, request, r)?;
                    if identity.user.is_privileged() {
                        return Ok(()); // every check below allows system:masters
                    }
                    owner_references_admission(&state, identity, request, r)
                })
            }
            // Rule-limited clients make non-resource requests unchecked, as if bound to
            // `system:discovery` and `system:public-info-viewer`.
            _ if identity.rules.is_some() => Ok(()),
            _ => {
                let attrs = authz::non_resource_attributes(user, request.method, request.path);
                authorizer::check(&state.store, identity, &attrs)
            }
        }
    };
    if let Err(forbidden) = authorized {
        return error_response(&forbidden);
    }
    if let Route::Resource(r) = request.route
        && reviews::is_review(r)
    {
        let state = shared.lock();
        let now = super::api::rfc3339(state.clock.now());
        let media_type = media_type(request.headers);
        let manager = write_options(request.headers, request.query, request.body).manager;
        let review = reviews::serve(
            &state.store,
            identity,
            (request.method, r),
            request.body,
            media_type.as_deref(),
            (&now, &manager),
        );
        return match review {
            Ok(review) => json_response(201, &review),
            Err(e) => error_response(&e),
        };
    }
    if let Err(refused) = escalation_check(shared, identity, request).await {
        return refused;
    }
    route_request(
        shared,
        request.method,
        request.headers,
        request.route,
        request.query,
        request.body,
    )
}

/// [`super::auth::escalation::check`] for a write of a role or binding by a user outside
/// `system:masters`, on the object the write would store: the request is first served as a dry
/// run, whose answer (an error such as 422, or the would-be object) tells what to check. `Err` is
/// the response to send instead of serving the request.
async fn escalation_check(
    shared: &Arc<Shared>,
    identity: &Identity,
    request: &Served<'_>,
) -> Result<(), Response<Body>> {
    let Route::Resource(r) = request.route else {
        return Ok(());
    };
    let writes = matches!(*request.method, Method::POST | Method::PUT | Method::PATCH);
    let Some(kind) = RbacKind::of(&r.group, &r.plural).filter(|_| writes) else {
        return Ok(());
    };
    if identity.user.is_privileged() || r.subresource.is_some() {
        return Ok(());
    }
    let mut dry_run = request.query.clone();
    dry_run.insert("dryRun".into(), "All".into());
    let answer = route_request(
        shared,
        request.method,
        request.headers,
        request.route,
        &dry_run,
        request.body,
    );
    if !answer.status().is_success() {
        return Err(answer);
    }
    let bytes = answer
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let object: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let namespace = r.namespace.as_deref().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let state = shared.lock();
    super::auth::escalation::check(
        &state.store,
        identity,
        kind,
        &r.plural,
        namespace,
        name,
        &object,
    )
    .map_err(|e| error_response(&e))
}

/// A server-side apply that creates its object is authorised as a create as well as a patch
/// (patch.go's `createValidation`: `withAuthorization(.., createAuthorizerAttributes)`): without
/// `create`, 403 `errors.NewForbidden(resource, name, reason)` — `configmaps "web" is forbidden: `
/// and the authorizer's reason, empty for an RBAC denial.
fn apply_create_authorization(
    state: &State,
    identity: &Identity,
    request: &Served<'_>,
    path: &ResourcePath,
) -> Result<(), ApiError> {
    let apply = media_type(request.headers).as_deref() == Some("application/apply-patch+yaml");
    if *request.method != Method::PATCH || !apply || path.subresource.is_some() {
        return Ok(());
    }
    let (Some(name), Some(info)) = (
        &path.name,
        state.resource(&path.group, &path.version, &path.plural),
    ) else {
        return Ok(());
    };
    if state.get(&info, path.namespace.as_deref(), name).is_ok() {
        return Ok(());
    }
    let mut attrs = authz::resource_attributes(
        &identity.user.name,
        &Method::POST,
        path,
        request.path,
        request.query,
    );
    attrs.name = Some(name.clone());
    authorizer::check(&state.store, identity, &attrs)
}

/// [`super::authz::owner_references_admission`] for a request, with what can be known before the
/// write: the body of a create, update, merge patch or server-side apply, and the stored object.
fn owner_references_admission(
    state: &State,
    identity: &Identity,
    request: &Served<'_>,
    path: &ResourcePath,
) -> Result<(), ApiError> {
    let method = request.method;
    let media = media_type(request.headers);
    let merge_patch = media.as_deref() == Some("application/merge-patch+json");
    let strategic = media.as_deref() == Some("application/strategic-merge-patch+json");
    let apply = media.as_deref() == Some("application/apply-patch+yaml");
    let checked = *method == Method::POST
        || *method == Method::PUT
        || (*method == Method::PATCH && (merge_patch || strategic || apply));
    if !checked || path.subresource.is_some() {
        return Ok(());
    }
    let Ok(mut new) = serde_json::from_slice::<Value>(request.body) else {
        return Ok(()); // protobuf or YAML bodies: not checked
    };
    let info = state.resource(&path.group, &path.version, &path.plural);
    let old = match (&path.name, &info) {
        (Some(name), Some(info)) if *method != Method::POST => {
            state.get(info, path.namespace.as_deref(), name).ok()
        }
        _ => None,
    };
    if *method == Method::PATCH && strategic {
        // The owner references the strategic merge produces; a patch that does not apply is
        // answered by the patch itself.
        let (Some(info), Some(old), Value::Object(patch)) = (&info, &old, new) else {
            return Ok(());
        };
        let Ok(patched) = super::strategic::patch_object(info, old, patch) else {
            return Ok(());
        };
        new = patched;
    } else if *method == Method::PATCH {
        // A merge patch or an apply (in JSON) without owner references leaves them as they are;
        // with them, an apply by the manager that owns the references sets them as written.
        let Some(refs) = new["metadata"].get("ownerReferences").cloned() else {
            return Ok(());
        };
        new = old.clone().unwrap_or_else(|| json!({}));
        new["metadata"]["ownerReferences"] = refs;
    }
    let name = new["metadata"]["name"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| path.name.clone())
        .unwrap_or_default();
    authz::owner_references_admission(
        &identity.user.name,
        |attrs| authorizer::authorize(&state.store, identity, attrs).allowed,
        path,
        &new,
        old.as_ref(),
        |api_version, kind| state.plural_of_kind(api_version, kind),
    )
    .map_err(|message| {
        let resource = Qualified {
            group: &path.group,
            name: &path.plural,
        };
        ApiError::forbidden_resource(resource, &name, message)
    })
}

fn route_request(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    route: &Route,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> Response<Body> {
    let state = || shared.lock();
    match route {
        Route::Root => json_response(
            200,
            &json!({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2", "/openapi/v3", "/readyz", "/version"]}),
        ),
        Route::Version => json_response(200, &discovery::version()),
        Route::Health { endpoint, check } => {
            match super::health::answer(endpoint, check.as_deref(), query.contains_key("verbose")) {
                Some(text) => text_response(200, &text),
                None => text_response(404, "404 page not found\n"),
            }
        }
        Route::CoreVersions => json_response(
            200,
            &discovery::core_versions(
                shared
                    .url
                    .split_once("://")
                    .map_or(shared.url.as_str(), |(_, address)| address),
            ),
        ),
        Route::Groups => json_response(200, &discovery::group_list(&state().registry)),
        Route::Group(g) => match discovery::group(&state().registry, g) {
            Some(v) => json_response(200, &v),
            None => error_response(&ApiError::no_route()),
        },
        Route::GroupVersion(g, v) => match discovery::resource_list(&state().registry, g, v) {
            Some(v) => json_response(200, &v),
            None => error_response(&ApiError::no_route()),
        },
        Route::OpenApi(p) if p.is_empty() => json_response(200, &openapi::root(&state().registry)),
        Route::OpenApi(p) => match openapi::group_version(&state().registry, p) {
            Some(v) => json_response(200, &v),
            None => error_response(&ApiError::no_route()),
        },
        Route::OpenApiV2 => {
            let accept = headers
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let doc = || openapi::v2_document(&state().registry);
            match openapi::v2_format(accept) {
                Some(openapi::V2Format::Json) => json_response(200, &doc()),
                Some(openapi::V2Format::Protobuf) => Response::builder()
                    .header(header::CONTENT_TYPE, openapi::V2_PROTOBUF)
                    .body(Full::new(Bytes::from(openapi::v2_protobuf(&doc()))).boxed_unsync())
                    .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync())),
                None => empty_response(406),
            }
        }
        Route::Unknown => error_response(&ApiError::no_route()),
        // No handler is registered under a group version that is not served: the
        // aggregator's NotFound handler answers in plain text.
        Route::Resource(r) if !discovery::serves(&state().registry, &r.group, &r.version) => {
            text_response(404, "404 page not found\n")
        }
        Route::Resource(r) => {
            let result = resource_request(shared, method, headers, r, query, body);
            // The dry-run flag lives only as long as the request that set it; the warnings of
            // a refused request go with its error, as the apiserver's warning recorder sends them
            // whatever the status.
            let warnings = {
                let mut state = shared.lock();
                state.dry_run = false;
                std::mem::take(&mut state.warnings)
            };
            match result {
                Ok(resp) => resp,
                Err(e) => with_warnings(error_response(&e), warnings),
            }
        }
    }
}

fn write_options(
    headers: &HeaderMap,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> WriteOptions {
    let given = query.get("fieldManager").filter(|m| !m.is_empty());
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mut manager = manager_or_user_agent(given.map(String::as_str), user_agent);
    if manager.is_empty() {
        // managedfields `buildManagerInfo`: a write without a manager or User-Agent is
        // recorded as `unknown`.
        manager = "unknown".into();
    }
    WriteOptions {
        manager,
        manager_given: given.is_some(),
        force: query.get("force").map(|f| f == "true"),
        decoding: Decoding {
            // An invalid directive was answered 422 before the write began.
            directive: FieldValidation::parse(query.get("fieldValidation").map(String::as_str))
                .unwrap_or_default(),
            duplicate_fields: match media_type(headers).as_deref() {
                Some("application/json-patch+json" | "application/yaml") => Vec::new(),
                _ => duplicate_fields(body),
            },
            yaml_duplicates: match media_type(headers).as_deref() {
                Some("application/yaml") => super::yaml::decode_with_duplicates(body)
                    .map(|decoded| decoded.duplicates)
                    .unwrap_or_default(),
                _ => Vec::new(),
            },
        },
    }
}

/// apimachinery's `ValidateListOptions` (`validateWatchOptions` for watches): on a watch,
/// A list's `limit` (0: no limit). kube-apiserver serves `resourceVersion=0` from its watch
/// cache, which ignores the limit: every item, no `continue`.
fn list_limit(query: &HashMap<String, String>) -> Result<usize, ApiError> {
    let limit = usize::try_from(int_parameter(query, "limit")?.unwrap_or(0)).unwrap_or(0);
    let from_cache = query.get("resourceVersion").is_some_and(|rv| rv == "0");
    Ok(if from_cache { 0 } else { limit })
}

/// `resourceVersionMatch` only with `sendInitialEvents` and only `NotOlderThan`; on a list, only
/// with a `resourceVersion`, not with `continue`, `Exact` or `NotOlderThan` (and `Exact` not at
/// `0`), and no `sendInitialEvents`.
fn validate_list_options(query: &HashMap<String, String>, watching: bool) -> Result<(), ApiError> {
    let send_initial = query.get("sendInitialEvents").is_some();
    let version_match = query
        .get("resourceVersionMatch")
        .map(String::as_str)
        .filter(|m| !m.is_empty());
    let resource_version = query
        .get("resourceVersion")
        .map(String::as_str)
        .unwrap_or("");
    let continuing = query.get("continue").is_some_and(|c| !c.is_empty());
    let mut causes = Vec::new();
    let mut cause = |reason: &str, field: &str, message: String| {
        causes.push(super::status::Cause {
            reason: reason.into(),
            message,
            field: field.into(),
        })
    };
    let forbidden = |text: &str| format!("Forbidden: {text}");
    if watching {
        if send_initial && version_match != Some("NotOlderThan") {
            cause(
                "FieldValueForbidden",
                "resourceVersionMatch",
                forbidden(
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ),
            );
        }
        if let Some(m) = version_match {
            if !send_initial {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden(
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    ),
                );
            }
            if m != "NotOlderThan" {
                cause(
                    "FieldValueNotSupported",
                    "resourceVersionMatch",
                    format!("Unsupported value: {m:?}: supported values: \"NotOlderThan\""),
                );
            }
            if continuing {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden("resourceVersionMatch is forbidden when continue is provided"),
                );
            }
        }
    } else {
        if let Some(m) = version_match {
            if resource_version.is_empty() {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden(
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    ),
                );
            }
            if continuing {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden("resourceVersionMatch is forbidden when continue is provided"),
                );
            }
            if m != "Exact" && m != "NotOlderThan" {
                cause(
                    "FieldValueNotSupported",
                    "resourceVersionMatch",
                    format!(
                        "Unsupported value: {m:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
                    ),
                );
            }
            if m == "Exact" && resource_version == "0" {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden(
                        "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                    ),
                );
            }
        }
        if send_initial {
            cause(
                "FieldValueForbidden",
                "sendInitialEvents",
                forbidden("sendInitialEvents is forbidden for list"),
            );
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            super::status::Qualified {
                group: "meta.k8s.io",
                name: "ListOptions",
            },
            "",
            causes,
        ))
    }
}

/// A boolean query parameter as the parameter codec reads it (`strconv.ParseBool`: `1`, `t`,
/// `T`, `TRUE`, `true`, `True` and their false counterparts); anything else is `None`.
pub(crate) fn bool_parameter(query: &HashMap<String, String>, name: &str) -> Option<bool> {
    match query.get(name)?.as_str() {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Whether a collection GET is a watch (`watch=true`, `watch=1`, `watch=maybe`).
pub(crate) fn is_watch(query: &HashMap<String, String>) -> bool {
    option_flag(query, "watch")
}

/// An integer query parameter decoded as the parameter codec does (`strconv.ParseInt`), 400
/// with its error when it is not one.
fn int_parameter(query: &HashMap<String, String>, name: &str) -> Result<Option<i64>, ApiError> {
    let Some(text) = query.get(name) else {
        return Ok(None);
    };
    text.parse::<i64>().map(Some).map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing \"{text}\": {why}"))
    })
}

/// A response object (an object, or with `items` a list) in the negotiated representation.
fn represent(
    info: &super::resources::ResourceInfo,
    value: &Value,
    items: Option<&[Value]>,
    representation: Representation,
    now: jiff::Timestamp,
) -> Result<Value, ApiError> {
    Ok(match (representation, items) {
        // kube-apiserver encodes a list of a built-in kind from its Go types, whose items carry
        // no apiVersion and kind; items of custom resources keep theirs.
        (Representation::Object, Some(_)) if !info.custom => {
            let mut list = value.clone();
            for item in list["items"].as_array_mut().into_iter().flatten() {
                if let Some(item) = item.as_object_mut() {
                    item.remove("apiVersion");
                    item.remove("kind");
                }
            }
            list
        }
        (Representation::Object, _) => value.clone(),
        (Representation::PartialObjectMetadata { list: false }, None) => table::partial(value),
        (Representation::PartialObjectMetadata { list: true }, Some(_)) => {
            table::partial_list(value)
        }
        (Representation::PartialObjectMetadata { list }, items) => {
            return Err(partial_mismatch(info, list, items.is_some()));
        }
        (Representation::Table(include), None) => {
            table::table(info, std::slice::from_ref(value), None, include, true, now)
        }
        (Representation::Table(include), Some(items)) => {
            table::table(info, items, Some(&value["metadata"]), include, true, now)
        }
    })
}

/// A Table or PartialObjectMetadata(List) asked for as `meta.k8s.io/v1beta1`: the same content
/// with that `apiVersion` (its items' too).
fn as_meta_version(mut value: Value, v1beta1: bool) -> Value {
    if v1beta1 {
        let relabel = |v: &mut Value| {
            if v["apiVersion"] == "meta.k8s.io/v1" {
                v["apiVersion"] = json!("meta.k8s.io/v1beta1");
            }
        };
        relabel(&mut value);
        value
            .get_mut("items")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .for_each(relabel);
        // A Table's rows carry their objects as PartialObjectMetadata of the same version.
        value
            .get_mut("rows")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(|row| row.get_mut("object"))
            .for_each(relabel);
    }
    value
}

/// The 406 of a `PartialObjectMetadata` asked for a list or a `PartialObjectMetadataList` asked
/// for one object (the transformer names the internal Go type it got: `*core.ConfigMapList`).
fn partial_mismatch(
    info: &super::resources::ResourceInfo,
    asked_list: bool,
    is_list: bool,
) -> ApiError {
    let package = match info.group.as_str() {
        _ if info.custom => "unstructured",
        "" | "events.k8s.io" => "core",
        "coordination.k8s.io" => "coordination",
        "rbac.authorization.k8s.io" => "rbac",
        "apiextensions.k8s.io" => "apiextensions",
        other => other.split('.').next().unwrap_or(other),
    };
    let kind = if info.custom {
        "Unstructured"
    } else {
        &info.kind
    };
    let list = if is_list { "List" } else { "" };
    let (asked, what) = if asked_list {
        ("PartialObjectMetadataList", "is not a list")
    } else {
        ("PartialObjectMetadata", "is a list")
    };
    ApiError::not_acceptable(format!(
        "you requested {asked}, but the requested object {what} (*{package}.{kind}{list})"
    ))
}

fn media_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| {
            ct.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
}

/// apiserver's `transformDecodeError` of a body that did not decode as a `kind`: `the object
/// provided is unrecognized (must be of type Kind): <why> (<the body's first 30 bytes>)`.
fn unrecognized(kind: &str, why: &str, body: &[u8]) -> ApiError {
    const SUMMARY: usize = 30;
    let summary = match body {
        [] => "<empty>".to_owned(),
        [b'{', ..] if body.len() > SUMMARY => {
            format!("{} ...", String::from_utf8_lossy(&body[..SUMMARY]))
        }
        [b'{', ..] => String::from_utf8_lossy(body).into_owned(),
        _ => {
            let hex: String = body
                .iter()
                .take(SUMMARY)
                .map(|b| format!("{b:02x}"))
                .collect();
            if body.len() > SUMMARY {
                format!("{hex} ...")
            } else {
                hex
            }
        }
    };
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {why} ({summary})"
    ))
}

/// The JSON (or YAML, or protobuf) body of a write of a `kind` object. A custom resource's body
/// must name its kind (the unstructured decoder has no type to default it from).
fn decode_object(
    headers: &HeaderMap,
    body: &Bytes,
    info: &super::resources::ResourceInfo,
) -> Result<Value, ApiError> {
    let object = decode_body(headers, body, &info.kind)?;
    if info.custom && object.is_object() && object["kind"].as_str().is_none_or(str::is_empty) {
        let why = format!(
            "Object 'Kind' is missing in '{}'",
            String::from_utf8_lossy(body)
        );
        return Err(unrecognized(&info.kind, &why, body));
    }
    Ok(object)
}

fn decode_body(headers: &HeaderMap, body: &Bytes, kind: &str) -> Result<Value, ApiError> {
    match media_type(headers).as_deref() {
        None | Some("application/json") | Some("*/*") => {}
        Some("application/yaml") => {
            return super::yaml::decode(body).map_err(|e| unrecognized(kind, &e, body));
        }
        Some("application/vnd.kubernetes.protobuf") => {
            return protobuf::decode(body).map_err(|e| {
                ApiError::unsupported_media_type(
                    &e,
                    &[
                        "application/json",
                        "application/yaml",
                        "application/vnd.kubernetes.protobuf",
                    ],
                )
            });
        }
        Some(other) => {
            return Err(ApiError::unsupported_media_type(
                other,
                &[
                    "application/json",
                    "application/yaml",
                    "application/vnd.kubernetes.protobuf",
                ],
            ));
        }
    }
    // The serializer reads the body's apiVersion and kind first (`couldn't get version/kind`):
    // a syntax error is Go's encoding/json's.
    let parse_error = |why: String| {
        unrecognized(
            kind,
            &format!("couldn't get version/kind; json parse error: {why}"),
            body,
        )
    };
    if let Some(why) = super::go_json::syntax_error(body) {
        return Err(parse_error(why));
    }
    serde_json::from_slice(body).map_err(|e| parse_error(e.to_string()))
}

/// The `DeleteOptions` of a DELETE: the body (which may carry `dryRun` too), or without one
/// the query's `propagationPolicy` and `orphanDependents`.
fn delete_options(body: &Bytes, query: &HashMap<String, String>) -> Result<Value, ApiError> {
    if !body.is_empty() {
        return serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")));
    }
    let mut options = json!({});
    if let Some(grace) = query.get("gracePeriodSeconds") {
        let seconds = grace.parse::<i64>().map_err(|_| {
            ApiError::bad_request(format!(
                "strconv.ParseInt: parsing {grace:?}: invalid syntax"
            ))
        })?;
        options["gracePeriodSeconds"] = json!(seconds);
    }
    if let Some(policy) = query.get("propagationPolicy") {
        options["propagationPolicy"] = json!(policy);
    }
    if let Some(orphan) = query.get("orphanDependents") {
        options["orphanDependents"] = json!(orphan == "true");
    }
    Ok(options)
}

fn resource_request(
    shared: &Arc<Shared>,
    method: &Method,
    headers: &HeaderMap,
    r: &ResourcePath,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> Result<Response<Body>, ApiError> {
    // The request deadline filter reads `timeout` on every request that is not a watch.
    if !is_watch(query)
        && let Some(timeout) = query.get("timeout")
        && let Err(e) = go_duration(timeout)
    {
        return Err(ApiError::bad_request(format!(
            "invalid timeout specified in the request URL - {e}"
        )));
    }
    let mut state = shared.lock();
    state.expire_events();
    state.dry_run = false;
    state.warnings.clear();
    // The options object a write's query parameters are validated as.
    let options = super::status::Qualified {
        group: "meta.k8s.io",
        name: match *method {
            Method::POST => "CreateOptions",
            Method::PUT => "UpdateOptions",
            Method::DELETE => "DeleteOptions",
            _ => "PatchOptions",
        },
    };
    if let Some(dry_run) = query.get("dryRun") {
        if dry_run != "All" {
            // ValidateDryRun.
            return Err(ApiError::invalid(
                options,
                "",
                vec![super::status::Cause {
                    reason: "FieldValueNotSupported".into(),
                    // The value is the query's list (`["Some"]`).
                    message: format!(
                        "Unsupported value: {}: supported values: \"All\"",
                        json!([dry_run])
                    ),
                    field: "dryRun".into(),
                }],
            ));
        }
        state.dry_run = true;
    }
    if matches!(*method, Method::POST | Method::PUT | Method::PATCH)
        && let Err(e) = FieldValidation::parse(query.get("fieldValidation").map(String::as_str))
    {
        return Err(ApiError::invalid(options, "", vec![e.into()]));
    }
    // `ValidateCreateOptions` / `ValidateUpdateOptions`: `ValidateFieldManager` (patches check
    // it with their other options).
    if matches!(*method, Method::POST | Method::PUT)
        && query
            .get("fieldManager")
            .is_some_and(|m| m.len() > super::apply::FIELD_MANAGER_MAX_LENGTH)
    {
        return Err(ApiError::invalid(
            options,
            "",
            vec![super::status::Cause {
                reason: "FieldValueTooLong".into(),
                message: format!(
                    "Too long: {}",
                    super::validation::field::too_long_message(
                        super::apply::FIELD_MANAGER_MAX_LENGTH
                    )
                ),
                field: "fieldManager".into(),
            }],
        ));
    }
    let info = state
        .resource(&r.group, &r.version, &r.plural)
        .ok_or_else(ApiError::no_route)?;
    match r.subresource.as_deref() {
        None => {}
        Some("status") if info.status_subresource => {}
        Some("scale") if info.scale.is_some() => {}
        // Namespaces' spec finalizers are written through `/finalize`, by PUT only.
        Some("finalize") if namespace::is_namespaces(&info) && *method == Method::PUT => {}
        // The CRD handler serves a custom resource's `/status` path even without the
        // subresource, answering that the object is not found there.
        Some("status") if info.custom => {
            return Err(ApiError::not_found(
                info.qualified_resource(),
                r.name.as_deref().unwrap_or_default(),
            ));
        }
        Some(_) => return Err(ApiError::no_route()),
    }
    let ns = r.namespace.as_deref();
    if info.namespaced && ns.is_none() {
        // The all-namespaces collection path serves only list and watch.
        match (method, &r.name) {
            (&Method::GET, None) => {}
            (_, None) => return Err(ApiError::method_not_allowed()),
            (_, Some(_)) => return Err(ApiError::no_route()),
        }
    }
    if let Some(name) = r.name.as_deref() {
        super::validation::names::check_name_parameter(name)?;
    }
    let watching = *method == Method::GET && r.name.is_none() && is_watch(query);
    let negotiation::Negotiated {
        representation,
        v1beta1,
        yaml,
    } = negotiation::negotiate_versioned(
        headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()),
        query,
        negotiation::Endpoint {
            custom: info.custom,
            watch: watching,
        },
    )?;
    let list_params = ListParams {
        label_selector: query.get("labelSelector").map(String::as_str),
        field_selector: query.get("fieldSelector").map(String::as_str),
        limit: list_limit(query)?,
        continue_token: query.get("continue").map(String::as_str),
        exact: query
            .get("resourceVersionMatch")
            .filter(|m| *m == "Exact")
            .and_then(|_| query.get("resourceVersion"))
            .and_then(|rv| rv.parse().ok()),
    };
    if r.subresource.as_deref() == Some("scale")
        && let Some(name) = r.name.as_deref()
    {
        let scale = scale_request(&mut state, &info, ns, name, method, headers, query, body)?;
        let warnings = std::mem::take(&mut state.warnings);
        drop(state);
        return Ok(with_warnings(json_response(200, &scale), warnings));
    }
    let (code, value) = match (method, r.name.as_deref()) {
        (&Method::GET, Some(name)) => {
            let obj = state.get(&info, ns, name)?;
            (
                200,
                as_meta_version(
                    represent(&info, &obj, None, representation, state.clock.now())?,
                    v1beta1,
                ),
            )
        }
        (&Method::GET, None) if watching => {
            let filter = super::api::Filter::parse(
                &info,
                list_params.label_selector,
                list_params.field_selector,
            )?;
            if ns.is_some() && !info.namespaced {
                return Err(ApiError::no_route());
            }
            let clock = state.clock.clone();
            drop(state);
            validate_list_options(query, true)?;
            if let Some(problem) = unparsable_resource_version(query) {
                // The watch cache's error, returned unconverted.
                return Err(ApiError::unconverted(problem));
            }
            let request = WatchRequest {
                info: info.clone(),
                namespace: r.namespace.clone(),
                resource_version: query.get("resourceVersion").cloned(),
                send_initial_events: bool_parameter(query, "sendInitialEvents"),
                bookmarks: option_flag(query, "allowWatchBookmarks"),
                timeout: int_parameter(query, "timeoutSeconds")?
                    .and_then(|t| u64::try_from(t).ok())
                    .map(Duration::from_secs),
                filter,
                representation,
                clock,
            };
            let rx = watch::start(
                &shared.state,
                request,
                shared.watch_config,
                shared.compactions.subscribe(),
            );
            let response = Response::builder()
                .status(200)
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::CACHE_CONTROL, "no-cache, private")
                .body(ChannelBody(rx).boxed_unsync())
                .map_err(|e| ApiError::internal(e.to_string()))?;
            return Ok(response);
        }
        (&Method::GET, None) => {
            validate_list_options(query, false)?;
            if let Some(problem) = unparsable_resource_version(query) {
                return Err(ApiError::bad_request(format!(
                    "invalid resource version: {problem}"
                )));
            }
            let list = state.list(&info, ns, &list_params)?;
            let now = state.clock.now();
            let items = list["items"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            (
                200,
                as_meta_version(
                    represent(&info, &list, Some(items), representation, now)?,
                    v1beta1,
                ),
            )
        }
        (&Method::POST, None) if r.subresource.is_none() => {
            let obj = decode_object(headers, body, &info)?;
            (
                201,
                state.create(&info, ns, obj, &write_options(headers, query, body))?,
            )
        }
        (&Method::PUT, Some(name)) => {
            let obj = decode_object(headers, body, &info)?;
            let (out, created) = state.update(
                &info,
                ns,
                name,
                r.subresource.as_deref(),
                obj,
                &write_options(headers, query, body),
            )?;
            (if created { 201 } else { 200 }, out)
        }
        (&Method::PATCH, Some(name)) => {
            let patch_type = match media_type(headers).as_deref() {
                Some("application/json-patch+json") => PatchType::Json,
                Some("application/merge-patch+json") => PatchType::Merge,
                Some("application/apply-patch+yaml") => PatchType::Apply,
                Some("application/strategic-merge-patch+json") => PatchType::Strategic,
                // Also for custom resources: a PATCH route consumes only the patch types.
                _ => return Err(ApiError::route_unsupported_media_type()),
            };
            let (out, created) = state.patch(
                &info,
                ns,
                name,
                r.subresource.as_deref(),
                patch_type,
                body,
                &write_options(headers, query, body),
            )?;
            // An apply that created the object answers 201 like a POST.
            (if created { 201 } else { 200 }, out)
        }
        (&Method::DELETE, Some(name)) if r.subresource.is_none() => {
            let options = delete_options(body, query)?;
            if options["dryRun"]
                .as_array()
                .is_some_and(|d| d.iter().any(|v| v == "All"))
            {
                state.dry_run = true;
            }
            let deleted = state.delete(&info, ns, name, &options)?;
            // apiserver's delete handler: 202 Accepted for `orphanDependents: false` when the
            // object was not deleted at once (it waits for finalizers).
            let waits = state.get(&info, ns, name).is_ok();
            let code = if options["orphanDependents"] == false && waits {
                202
            } else {
                200
            };
            (code, deleted)
        }
        (&Method::DELETE, None) if info.deletes_collections() => {
            let options = delete_options(body, query)?;
            (
                200,
                state.delete_collection(&info, ns, &list_params, &options)?,
            )
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    let warnings = std::mem::take(&mut state.warnings);
    // Serialize outside the lock: other requests need not wait for a large list's bytes.
    drop(state);
    let response = if yaml {
        yaml_response(code, &value)
    } else {
        json_response(code, &value)
    };
    Ok(with_warnings(response, warnings))
}

/// A response of `body` in YAML, as sigs.k8s.io/yaml writes it ([`super::yaml::encode`]).
fn yaml_response(status: u16, body: &Value) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/yaml")
        .body(Full::new(Bytes::from(super::yaml::encode(body))).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

/// A request to a custom resource's `/scale`: GET, PUT of a `Scale`, or a JSON or merge
/// patch of it.
#[allow(clippy::too_many_arguments)]
fn scale_request(
    state: &mut super::api::State,
    info: &super::resources::ResourceInfo,
    ns: Option<&str>,
    name: &str,
    method: &Method,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> Result<Value, ApiError> {
    use super::scale::ScaleWrite;
    let opts = write_options(headers, query, body);
    match *method {
        Method::GET => state.get_scale(info, ns, name),
        Method::PUT => {
            let scale = decode_body(headers, body, "Scale")?;
            state.write_scale(info, ns, name, ScaleWrite::Replace(scale), &opts)
        }
        Method::PATCH => {
            let patch: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            let write = match media_type(headers).as_deref() {
                Some("application/merge-patch+json") => ScaleWrite::Merge(&patch),
                Some("application/json-patch+json") => ScaleWrite::Json(&patch),
                _ => return Err(ApiError::route_unsupported_media_type()),
            };
            state.write_scale(info, ns, name, write, &opts)
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// `response` with a `Warning` header for each of `warnings`: `299 - "text"`, as the
/// apiserver's warning recorder writes it.
fn with_warnings(mut response: Response<Body>, warnings: Vec<String>) -> Response<Body> {
    for warning in warnings {
        let text = format!("299 - {}", super::schema::field::quote(&warning));
        if let Ok(v) = http::HeaderValue::from_str(&text) {
            response.headers_mut().append(header::WARNING, v);
        }
    }
    response
}
