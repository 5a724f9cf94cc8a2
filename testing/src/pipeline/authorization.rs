//! The authorization stage: what a request asks to be allowed (apiserver `RequestInfoFactory`)
//! and the authorizer's decision on it ([`crate::auth::authorizer`]), and on the create a
//! server-side apply may make.

use std::collections::HashMap;

use http::Method;

use super::RequestContext;
use crate::auth::authorizer::{self, Identity};
use crate::rbac::{RequestAttributes, verb_for};
use crate::registry::State;
use crate::routes::{ResourcePath, Route};
use crate::shared::Shared;
use crate::status::ApiError;

/// The authorization stage: whether `identity` may make `request` — the authorizer's decision
/// on the request's attributes, and on the create a server-side apply may make. What the write
/// stores is admitted by the registry ([`crate::registry`]'s admission).
///
/// # Errors
/// The 403 to answer.
pub(super) fn authorize(
    shared: &Shared,
    identity: &Identity,
    request: &RequestContext<'_>,
) -> Result<(), ApiError> {
    let user = &identity.user.name;
    let state = shared.lock();
    match request.route {
        Route::Resource(r) => {
            let attrs = resource_attributes(user, request.method, r, request.path, request.query);
            authorizer::check(&state.store, identity, &attrs)?;
            apply_create_authorization(&state, identity, request, r)
        }
        // Rule-limited clients make non-resource requests unchecked, as if bound to
        // `system:discovery` and `system:public-info-viewer`.
        _ if identity.rules.is_some() => Ok(()),
        _ => {
            let attrs = non_resource_attributes(user, request.method, request.path);
            authorizer::check(&state.store, identity, &attrs)
        }
    }
}

/// A server-side apply that creates its object is authorised as a create as well as a patch
/// (patch.go's `createValidation`: `withAuthorization(.., createAuthorizerAttributes)`): without
/// `create`, 403 `errors.NewForbidden(resource, name, reason)` — `configmaps "web" is forbidden: `
/// and the authorizer's reason, empty for an RBAC denial.
fn apply_create_authorization(
    state: &State,
    identity: &Identity,
    request: &RequestContext<'_>,
    path: &ResourcePath,
) -> Result<(), ApiError> {
    let apply = crate::endpoints::media_type(request.headers).as_deref()
        == Some("application/apply-patch+yaml");
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
    let mut attrs = resource_attributes(
        &identity.user.name,
        &Method::POST,
        path,
        request.path,
        request.query,
    );
    attrs.name = Some(name.clone());
    authorizer::check(&state.store, identity, &attrs)
}

/// The attributes of a non-resource request (discovery, `/version`, `/healthz`): the path and
/// the lowercased HTTP method as the verb.
pub(crate) fn non_resource_attributes(
    user: &str,
    method: &Method,
    raw_path: &str,
) -> RequestAttributes {
    RequestAttributes {
        user: user.to_owned(),
        verb: method.as_str().to_ascii_lowercase(),
        path: raw_path.to_owned(),
        ..RequestAttributes::default()
    }
}

/// The attributes of a resource request.
pub(crate) fn resource_attributes(
    user: &str,
    method: &Method,
    path: &ResourcePath,
    raw_path: &str,
    query: &HashMap<String, String>,
) -> RequestAttributes {
    let watch = crate::params::is_watch(query);
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
    RequestAttributes {
        user: user.to_string(),
        verb: verb_for(method.as_str(), path.name.is_some(), watch),
        api_group: path.group.clone(),
        resource: path.plural.clone(),
        subresource: path.subresource.clone(),
        // RequestInfoFactory: `/api/v1/namespaces/{name}[/status|/finalize]` is in that namespace.
        namespace: match (&path.namespace, path.group.as_str(), path.plural.as_str()) {
            (None, "", "namespaces") => path.name.clone(),
            (namespace, ..) => namespace.clone(),
        },
        name,
        path: raw_path.to_string(),
        resource_request: true,
    }
}
