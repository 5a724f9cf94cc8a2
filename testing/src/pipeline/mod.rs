//! The request pipeline of the in-process server: each request passes these stages, in this
//! order (kube-apiserver's filter chain, `DefaultBuildHandlerChain`, read inside out):
//!
//! 1. [`body_limit`]: the body is read up to 3 MiB;
//! 2. [`authentication`]: the requester, then the user it impersonates (the fault stage matches
//!    on the user, and the request log records it);
//! 3. [`faults`]: an injected [`FaultAction`](crate::FaultAction) acts around everything below,
//!    and the request is logged with the status its client saw (the same stage runs in the proxy
//!    in front of a real kube-apiserver);
//! 4. refusals of the stages above: a body over the limit (413), a failed authentication;
//! 5. [`authorization`]: the authorizer's decision, and on the create of a server-side apply;
//! 6. [`routing`]: the self reviews, discovery, OpenAPI, health, and a resource's
//!    [`endpoints`](crate::endpoints), which dispatch to the registry ([`crate::registry`]), where
//!    what a write stores is admitted (owner references, RBAC escalation) with the requester's
//!    identity. Each request is served once.
//!
//! Responses are built by [`response`].

mod authentication;
mod authorization;
mod body_limit;
mod faults;
pub(crate) mod response;
mod routing;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, Response, header};
use hyper::body::Incoming;

pub(crate) use self::faults::serve_with_fault;
use self::response::{Body, error_response};
use crate::auth::user::UserInfo;
use crate::faults::Matched;
use crate::requests::RequestRecord;
use crate::routes::{Route, parse_query, parse_route};
use crate::shared::Shared;

/// A request as the stages after authentication see it.
pub(crate) struct RequestContext<'a> {
    pub(crate) method: &'a Method,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) route: &'a Route,
    /// The URL's path.
    pub(crate) path: &'a str,
    pub(crate) query: &'a HashMap<String, String>,
    pub(crate) body: &'a Bytes,
}

/// Serves `req`, made over a connection whose client certificate named `client`, through the
/// stages in their order.
///
/// # Errors
/// An error closes the connection without an answer (an injected fault, or the connection's
/// own error while the body was read).
pub(crate) async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
    client: Option<&UserInfo>,
) -> Result<Response<Body>, std::io::Error> {
    let (parts, body) = req.into_parts();
    let body = body_limit::read(body).await?;
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or_default().to_string();
    let route = parse_route(&path);
    let identity = authentication::authenticate(&shared, &parts.headers, client);
    let user = identity
        .as_ref()
        .map(|i| i.user.name.clone())
        .unwrap_or_default();
    let record = RequestRecord {
        method: parts.method.clone(),
        path: path.clone(),
        query: query.clone(),
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        user: user.clone(),
        status: 0,
    };
    let query_map = parse_query(&query);
    let fault = shared.faults.take(&Matched {
        method: &parts.method,
        path: &path,
        resource: match &route {
            Route::Resource(r) => Some((r.group.as_str(), r.plural.as_str())),
            _ => None,
        },
        user: &user,
        watch: crate::params::is_watch(&query_map),
    });
    let serve = async {
        let Some(body) = body else {
            return Ok(error_response(&body_limit::too_large()));
        };
        let identity = match identity {
            Ok(identity) => identity,
            Err(e) => return Ok(authentication::refused(&e, &path, &query)),
        };
        let request = RequestContext {
            method: &parts.method,
            headers: &parts.headers,
            route: &route,
            path: &path,
            query: &query_map,
            body: &body,
        };
        if let Err(forbidden) = authorization::authorize(&shared, &identity, &request) {
            return Ok(error_response(&forbidden));
        }
        Ok(routing::route(&shared, &identity, &request))
    };
    serve_with_fault(fault, &shared.requests, record, serve).await
}
