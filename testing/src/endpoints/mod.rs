//! A resource's endpoints (apiserver `endpoints/handlers`): a request to a resource path has its
//! options, subresource, scope and name checked, its representation negotiated, its body decoded,
//! and is dispatched by verb to the registry ([`crate::registry::State`]).

mod decode;
mod represent;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Response, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use self::decode::{decode_body, decode_object, delete_options};
pub(crate) use self::decode::{field_manager, media_type, write_options};
use self::represent::{RepresentedList, as_meta_version, represent, represent_list};
use crate::auth::authorizer::Identity;
use crate::kinds;
use crate::negotiation;
use crate::params::{
    go_duration, int_parameter, is_watch, list_limit, query_bool, unparsable_resource_version,
    validate_list_options,
};
use crate::pipeline::response::{
    Body, ChannelBody, error_response, json_response, with_warnings, yaml_response,
};
use crate::registry::{ListParams, PatchType, WriteOptions};
use crate::routes::ResourcePath;
use crate::schema::FieldValidation;
use crate::shared::Shared;
use crate::status::ApiError;
use crate::watch::{self, WatchRequest};

/// Serves `identity`'s request to the resource at `r`: its answer, or its refusal as
/// kube-apiserver answers it. The warnings the request collected go with either, as the
/// apiserver's warning recorder sends them whatever the status.
pub(crate) fn serve(
    shared: &Arc<Shared>,
    identity: &Identity,
    method: &Method,
    headers: &HeaderMap,
    r: &ResourcePath,
    query: &HashMap<String, String>,
    body: &Bytes,
) -> Response<Body> {
    let opts = write_options(headers, query, body, Some(identity));
    // The deprecated built-in APIs (`+k8s:prerelease-lifecycle-gen:deprecated`): every request
    // to them is warned, first.
    if let Some(warning) = crate::kinds::service::deprecation(r) {
        opts.warnings.extend([warning.to_owned()]);
    }
    let request = Request {
        method,
        headers,
        r,
        query,
        body,
    };
    match answer(shared, &request, &opts) {
        Ok(response) => with_warnings(response, opts.warnings.take()),
        Err(e) => with_warnings(error_response(&e), opts.warnings.take()),
    }
}

/// A request to a resource's path.
struct Request<'a> {
    method: &'a Method,
    headers: &'a HeaderMap,
    r: &'a ResourcePath,
    query: &'a HashMap<String, String>,
    body: &'a Bytes,
}

/// The answer to `request`, written with `opts`.
fn answer(
    shared: &Arc<Shared>,
    request: &Request<'_>,
    opts: &WriteOptions,
) -> Result<Response<Body>, ApiError> {
    let Request {
        method,
        headers,
        r,
        query,
        body,
    } = *request;
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
    // The options object a write's query parameters are validated as.
    let options = crate::status::Qualified {
        group: "meta.k8s.io",
        name: match *method {
            Method::POST => "CreateOptions",
            Method::PUT => "UpdateOptions",
            Method::DELETE => "DeleteOptions",
            _ => "PatchOptions",
        },
    };
    if let Some(dry_run) = query.get("dryRun")
        && dry_run != "All"
    {
        // ValidateDryRun.
        return Err(ApiError::invalid(
            options,
            "",
            vec![crate::status::Cause {
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
            .is_some_and(|m| m.len() > crate::apply::FIELD_MANAGER_MAX_LENGTH)
    {
        return Err(ApiError::invalid(
            options,
            "",
            vec![crate::status::Cause {
                reason: "FieldValueTooLong".into(),
                message: format!(
                    "Too long: {}",
                    crate::validation::field::too_long_message(
                        crate::apply::FIELD_MANAGER_MAX_LENGTH
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
        // A kind's own subresources (namespaces' `/finalize`).
        Some(sub) if kinds::strategy(&info).serves(sub, method) => {}
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
        crate::validation::names::check_name_parameter(name)?;
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
        let scale = scale_request(&mut state, &info, ns, name, method, headers, body, opts)?;
        drop(state);
        return Ok(json_response(200, &scale));
    }
    let (code, value) = match (method, r.name.as_deref()) {
        // The object itself: the stored one, shared.
        (&Method::GET, Some(name))
            if matches!(representation, negotiation::Representation::Object) =>
        {
            (200, state.get_shared(&info, ns, name)?)
        }
        (&Method::GET, Some(name)) => {
            let obj = state.get(&info, ns, name)?;
            let now = state.clock.now();
            let represented = represent(&info, obj, false, representation, now)?;
            (200, Arc::new(as_meta_version(represented, v1beta1)))
        }
        (&Method::GET, None) if watching => {
            let filter = crate::registry::Filter::parse(
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
                send_initial_events: query_bool(query, "sendInitialEvents"),
                bookmarks: query_bool(query, "allowWatchBookmarks").unwrap_or(false),
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
            // Represented and written outside the lock.
            drop(state);
            let value = match represent_list(&info, list, representation, now)? {
                RepresentedList::Objects(list) if !yaml => return Ok(json_response(200, &list)),
                RepresentedList::Objects(list) => list.into_value(),
                RepresentedList::Other(value) => as_meta_version(value, v1beta1),
            };
            return Ok(if yaml {
                yaml_response(200, &value)
            } else {
                json_response(200, &value)
            });
        }
        (&Method::POST, None) if r.subresource.is_none() => {
            let obj = decode_object(headers, body, &info)?;
            (201, state.create(&info, ns, obj, opts)?)
        }
        // A pod's `binding` and `eviction` (the only subresources created by POST).
        (&Method::POST, Some(name))
            if r.subresource.is_some() && info.group.is_empty() && info.plural == "pods" =>
        {
            let sub = r.subresource.as_deref().unwrap_or_default();
            let ns = ns.unwrap_or_default();
            let kind = if sub == "binding" {
                "Binding"
            } else {
                "Eviction"
            };
            let obj = decode_body(headers, body, kind)?;
            let answer = if sub == "binding" {
                state.bind_pod(ns, name, &obj, opts.dry_run)?
            } else {
                state.evict_pod(ns, name, &obj, opts.dry_run)?
            };
            (201, Arc::new(answer))
        }
        (&Method::PUT, Some(name)) => {
            let obj = decode_object(headers, body, &info)?;
            let (out, created) =
                state.update(&info, ns, name, r.subresource.as_deref(), obj, opts)?;
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
                opts,
            )?;
            // An apply that created the object answers 201 like a POST.
            (if created { 201 } else { 200 }, out)
        }
        (&Method::DELETE, Some(name)) if r.subresource.is_none() => {
            let options = delete_options(body, query, opts.dry_run)?;
            opts.warnings
                .extend(kinds::strategy(&info).delete_warnings(&options));
            let deleted = state.delete(&info, ns, name, &options)?;
            // apiserver's delete handler: 202 Accepted for `orphanDependents: false` when the
            // object was not deleted at once (it waits for finalizers).
            let waits = state.get_shared(&info, ns, name).is_ok();
            let code = if options["orphanDependents"] == false && waits {
                202
            } else {
                200
            };
            (code, Arc::new(deleted))
        }
        (&Method::DELETE, None) if kinds::strategy(&info).deletes_collections() => {
            let options = delete_options(body, query, opts.dry_run)?;
            opts.warnings
                .extend(kinds::strategy(&info).delete_warnings(&options));
            (
                200,
                Arc::new(state.delete_collection(&info, ns, &list_params, &options)?),
            )
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    // Serialize outside the lock: other requests need not wait for a large object's bytes.
    drop(state);
    Ok(if yaml {
        yaml_response(code, &value)
    } else {
        json_response(code, value.as_ref())
    })
}

/// A request to a custom resource's `/scale`: GET, PUT of a `Scale`, or a JSON or merge
/// patch of it.
#[allow(clippy::too_many_arguments)]
fn scale_request(
    state: &mut crate::registry::State,
    info: &crate::resources::ResourceInfo,
    ns: Option<&str>,
    name: &str,
    method: &Method,
    headers: &HeaderMap,
    body: &Bytes,
    opts: &WriteOptions,
) -> Result<Value, ApiError> {
    use crate::scale::ScaleWrite;
    match *method {
        Method::GET => state.get_scale(info, ns, name),
        Method::PUT => {
            let scale = decode_body(headers, body, "Scale")?;
            state.write_scale(info, ns, name, ScaleWrite::Replace(scale), opts)
        }
        Method::PATCH => {
            let patch: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            let write = match media_type(headers).as_deref() {
                Some("application/merge-patch+json") => ScaleWrite::Merge(&patch),
                // A Scale has no lists: a strategic merge patch of it merges as a merge patch.
                Some("application/strategic-merge-patch+json") if !info.custom => {
                    ScaleWrite::Merge(&patch)
                }
                Some("application/json-patch+json") => ScaleWrite::Json(&patch),
                _ => return Err(ApiError::route_unsupported_media_type()),
            };
            state.write_scale(info, ns, name, write, opts)
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}
