//! The routing stage: a request, once authorized, to the self reviews, to discovery, OpenAPI,
//! health and version, or to a resource's endpoints ([`crate::endpoints`]).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Response, header};
use http_body_util::{BodyExt, Full};
use serde_json::json;

use super::RequestContext;
use super::response::{Body, empty_response, error_response, json_response, text_response};
use crate::auth::authorizer::Identity;
use crate::auth::reviews;
use crate::routes::Route;
use crate::shared::Shared;
use crate::status::ApiError;
use crate::{discovery, openapi};

/// Serves an authorized `request` as `identity`: a self review here (it answers about the
/// requester), everything else through [`route_request`].
pub(super) fn route(
    shared: &Arc<Shared>,
    identity: &Identity,
    request: &RequestContext<'_>,
) -> Response<Body> {
    if let Route::Resource(r) = request.route
        && reviews::is_review(r)
    {
        let state = shared.lock();
        let now = crate::object::rfc3339(state.clock.now());
        let media_type = crate::endpoints::media_type(request.headers);
        let manager = crate::endpoints::field_manager(request.headers, request.query);
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
    route_request(
        shared,
        identity,
        request.method,
        request.headers,
        request.route,
        request.query,
        request.body,
    )
}

/// The answer to `route` (a resource's through [`crate::endpoints::serve`]); the warnings of a
/// refused resource request go with its error, as the apiserver's warning recorder sends them
/// whatever the status.
pub(super) fn route_request(
    shared: &Arc<Shared>,
    identity: &Identity,
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
            match crate::health::answer(endpoint, check.as_deref(), query.contains_key("verbose")) {
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
            crate::endpoints::serve(shared, identity, method, headers, r, query, body)
        }
    }
}
