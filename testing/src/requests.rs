//! The request log: what clients asked and what the server answered, for assertions.

use std::sync::Mutex;

use http::Method;

/// One served request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// HTTP method.
    pub method: Method,
    /// URL path.
    pub path: String,
    /// Raw query string (empty if none).
    pub query: String,
    /// `Content-Type` of the request, if any.
    pub content_type: Option<String>,
    /// The user the request acted as (the impersonated one, if any); empty when it was refused
    /// before (401, or an impersonation that was not allowed).
    pub user: String,
    /// HTTP status answered (for a watch: 200, sent before the stream), or 0 when the
    /// connection was closed without an answer.
    pub status: u16,
}

impl RequestRecord {
    /// Whether this was a watch (`watch=true` or `watch=1`).
    pub fn is_watch(&self) -> bool {
        self.query
            .split('&')
            .any(|kv| kv == "watch=true" || kv == "watch=1")
    }
}

/// The log of a server.
#[derive(Debug, Default)]
pub struct RequestLog {
    records: Mutex<Vec<RequestRecord>>,
}

impl RequestLog {
    pub(crate) fn push(&self, record: RequestRecord) {
        self.lock().push(record);
    }

    /// Every request so far, oldest first.
    pub fn all(&self) -> Vec<RequestRecord> {
        self.lock().clone()
    }

    /// Forgets the log.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RequestRecord>> {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }
}
