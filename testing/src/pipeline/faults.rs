//! The fault stage: what a matched [`FaultAction`] does around serving one request, and the
//! request log entry it leaves. The in-process server's pipeline and the proxy in front of a real
//! kube-apiserver both run their requests through it, so a fault means the same on either
//! backend.

use std::future::Future;

use http::Response;

use super::response::{Body, delayed, error_response};
use crate::faults::FaultAction;
use crate::requests::{RequestLog, RequestRecord};
use crate::status::ApiError;

/// Serves a request through `serve` under `fault` and logs it as `record` with the status the
/// client saw (0 when it got no answer):
/// - before `serve`: `Latency` waits, `Hang` never answers, `Status` answers that status and
///   `CloseConnection` drops the connection, the last three without serving;
/// - after `serve` (the request was served, a write committed): `CommitThenStatus` replaces the
///   answer, `CommitThenCloseConnection` and `CommitThenHang` lose it, `DelayWatchEvents`
///   delivers the body late.
///
/// # Errors
/// An error closes the client's connection without an answer (an injected close, or `serve`'s
/// own error).
pub(crate) async fn serve_with_fault(
    fault: Option<FaultAction>,
    log: &RequestLog,
    mut record: RequestRecord,
    serve: impl Future<Output = Result<Response<Body>, std::io::Error>>,
) -> Result<Response<Body>, std::io::Error> {
    match &fault {
        Some(FaultAction::Latency(delay)) => tokio::time::sleep(*delay).await,
        Some(FaultAction::Hang) => {
            log.push(record);
            return std::future::pending().await;
        }
        Some(FaultAction::Status(code)) => {
            record.status = *code;
            log.push(record);
            return Ok(error_response(&ApiError::for_code(*code)));
        }
        Some(FaultAction::CloseConnection) => {
            log.push(record);
            return Err(std::io::Error::other("injected fault: connection closed"));
        }
        Some(
            FaultAction::CommitThenStatus(_)
            | FaultAction::CommitThenCloseConnection
            | FaultAction::CommitThenHang
            | FaultAction::DelayWatchEvents(_),
        )
        | None => {}
    }
    let response = match serve.await {
        Ok(response) => response,
        Err(error) => {
            log.push(record);
            return Err(error);
        }
    };
    record.status = response.status().as_u16();
    match fault {
        Some(FaultAction::CommitThenStatus(code)) => {
            record.status = code;
            log.push(record);
            Ok(error_response(&ApiError::for_code(code)))
        }
        Some(FaultAction::CommitThenCloseConnection) => {
            record.status = 0;
            log.push(record);
            Err(std::io::Error::other(
                "injected fault: connection closed after the request was served",
            ))
        }
        Some(FaultAction::CommitThenHang) => {
            record.status = 0;
            log.push(record);
            std::future::pending().await
        }
        Some(FaultAction::DelayWatchEvents(delay)) => {
            log.push(record);
            Ok(response.map(|body| delayed(body, delay)))
        }
        Some(
            FaultAction::Latency(_)
            | FaultAction::Hang
            | FaultAction::Status(_)
            | FaultAction::CloseConnection,
        )
        | None => {
            log.push(record);
            Ok(response)
        }
    }
}
