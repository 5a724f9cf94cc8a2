//! The body limit stage: a request body is read up to apiserver's `MaxRequestBodyBytes`; a larger
//! one is not read further and is refused 413 — after the fault stage, so that an injected fault
//! answers first.

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;

use crate::status::ApiError;

/// The largest request body read (apiserver `MaxRequestBodyBytes`, 3 MiB); larger ones are
/// answered 413 RequestEntityTooLarge.
pub(crate) const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The whole body, or `None` when it is over [`MAX_REQUEST_BODY_BYTES`].
///
/// # Errors
/// The connection's error while reading.
pub(crate) async fn read(body: Incoming) -> Result<Option<Bytes>, std::io::Error> {
    match Limited::new(body, MAX_REQUEST_BODY_BYTES).collect().await {
        Ok(b) => Ok(Some(b.to_bytes())),
        Err(e) if e.is::<LengthLimitError>() => Ok(None),
        Err(e) => Err(std::io::Error::other(e)),
    }
}

/// The answer to a body over the limit: 413 `limit is 3145728`.
pub(crate) fn too_large() -> ApiError {
    ApiError::too_large(format_args!("limit is {MAX_REQUEST_BODY_BYTES}"))
}
