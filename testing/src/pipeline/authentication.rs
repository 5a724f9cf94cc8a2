//! The authentication stage, then impersonation (apiserver's filter order): the identity a
//! request is served as. A failure is answered once faults had their say, with no user recorded
//! in the request log.

use http::{HeaderMap, Response};

use super::response::{Body, error_response, text_response};
use crate::auth::authorizer::Identity;
use crate::auth::impersonation;
use crate::auth::user::UserInfo;
use crate::shared::Shared;
use crate::status::ApiError;

/// The identity of a request with `headers` over a connection whose client certificate named
/// `client`: the authenticated user, or the user it impersonates.
///
/// # Errors
/// 401 for credentials that authenticate no one, 403 for an impersonation the user may not do,
/// 500 for an internal error of the filters.
pub(crate) fn authenticate(
    shared: &Shared,
    headers: &HeaderMap,
    client: Option<&UserInfo>,
) -> Result<Identity, ApiError> {
    let requestor = shared.authn.authenticate(headers, client)?;
    let state = shared.lock();
    impersonation::impersonate(&state.store, requestor, headers)
}

/// The answer to a request whose authentication failed with `error`. An internal error of the
/// filters is `responsewriters.InternalError`: plain text naming the request URI.
pub(crate) fn refused(error: &ApiError, path: &str, query: &str) -> Response<Body> {
    if error.code != 500 {
        return error_response(error);
    }
    let uri = match query {
        "" => path.to_owned(),
        q => format!("{path}?{q}"),
    };
    text_response(
        500,
        &format!(
            "Internal Server Error: {}: {}\n",
            crate::go::fmt::go_quote(&uri),
            error.message
        ),
    )
}
