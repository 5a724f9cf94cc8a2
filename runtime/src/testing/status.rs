//! `metav1.Status` bodies of the real API server's shape, and the error type the handlers return.
//!
//! Every message here is copied from k8s.io/apimachinery `pkg/api/errors/errors.go`, so that a
//! client matching on `reason`, `code` or even the message text sees what a real cluster sends.

use serde_json::{Value, json};

/// A failed request: the HTTP status code and the `Status` body the server answers with.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code, also `Status.code`.
    pub code: u16,
    /// `Status.reason`, e.g. `NotFound`.
    pub reason: &'static str,
    /// `Status.message`.
    pub message: String,
    /// `Status.details`, when the real server fills them.
    pub details: Option<Value>,
}

/// The resource an error is about: its group and plural (`rollouts.demo.kubeward.dev`) or kind.
#[derive(Debug, Clone, Copy)]
pub struct Qualified<'a> {
    /// API group, empty for the core group.
    pub group: &'a str,
    /// Resource plural (for most errors) or kind (for `Invalid`).
    pub name: &'a str,
}

impl Qualified<'_> {
    /// `plural.group`, or `plural` for the core group (apimachinery `GroupResource.String`).
    fn display(&self) -> String {
        if self.group.is_empty() {
            self.name.to_string()
        } else {
            format!("{}.{}", self.name, self.group)
        }
    }
}

/// One cause of an `Invalid` error (`metav1.StatusCause`).
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// The `field.ErrorType` as a reason, e.g. `FieldValueRequired`.
    pub reason: String,
    /// The error body without the field path, e.g. `Required value`.
    pub message: String,
    /// The JSON path of the field, e.g. `metadata.name`.
    pub field: String,
}

impl ApiError {
    /// 404 NotFound: `rollouts.demo.kubeward.dev "web" not found`.
    pub fn not_found(resource: Qualified<'_>, name: &str) -> Self {
        Self {
            code: 404,
            reason: "NotFound",
            message: format!("{} \"{name}\" not found", resource.display()),
            details: Some(details(resource, name)),
        }
    }

    /// 409 AlreadyExists: `configmaps "x" already exists`.
    pub fn already_exists(resource: Qualified<'_>, name: &str) -> Self {
        Self {
            code: 409,
            reason: "AlreadyExists",
            message: format!("{} \"{name}\" already exists", resource.display()),
            details: Some(details(resource, name)),
        }
    }

    /// 409 Conflict with the given explanation after the colon.
    pub fn conflict(resource: Qualified<'_>, name: &str, why: &str) -> Self {
        Self {
            code: 409,
            reason: "Conflict",
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                resource.display()
            ),
            details: Some(details(resource, name)),
        }
    }

    /// The optimistic-concurrency conflict of a stale `resourceVersion`.
    pub fn modified(resource: Qualified<'_>, name: &str) -> Self {
        Self::conflict(
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 Invalid: `Kind.group "name" is invalid: <causes>` with `details.causes`.
    pub fn invalid(kind: Qualified<'_>, name: &str, causes: Vec<Cause>) -> Self {
        let rendered: Vec<String> = causes
            .iter()
            .map(|c| {
                if c.field.is_empty() {
                    c.message.clone()
                } else {
                    format!("{}: {}", c.field, c.message)
                }
            })
            .collect();
        // utilerrors.NewAggregate: one error prints bare, several as `[a, b]`.
        let joined = if rendered.len() == 1 {
            rendered[0].clone()
        } else {
            format!("[{}]", rendered.join(", "))
        };
        let mut d = details(kind, name);
        d["causes"] = Value::Array(
            causes
                .iter()
                .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                .collect(),
        );
        Self {
            code: 422,
            reason: "Invalid",
            message: format!("{} \"{name}\" is invalid: {joined}", kind.display()),
            details: Some(d),
        }
    }

    /// 400 BadRequest with a free message.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            code: 400,
            reason: "BadRequest",
            message: message.into(),
            details: None,
        }
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> Self {
        Self {
            code: 405,
            reason: "MethodNotAllowed",
            message: "the server does not allow this method on the requested resource".into(),
            details: None,
        }
    }

    /// 415 UnsupportedMediaType listing the accepted patch types.
    pub fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Self {
        let _ = content_type;
        Self {
            code: 415,
            reason: "UnsupportedMediaType",
            message: format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
            details: None,
        }
    }

    /// 404 for a path that names no resource (`the server could not find the requested resource`).
    pub fn no_route() -> Self {
        Self {
            code: 404,
            reason: "NotFound",
            message: "the server could not find the requested resource".into(),
            details: Some(json!({})),
        }
    }

    /// 403 Forbidden with the authorizer's message.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self {
            code: 403,
            reason: "Forbidden",
            message: message.into(),
            details: None,
        }
    }

    /// 410 Expired, sent only inside a watch stream as an `ERROR` event.
    pub fn expired(message: impl Into<String>) -> Self {
        Self {
            code: 410,
            reason: "Expired",
            message: message.into(),
            details: None,
        }
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            code: 500,
            reason: "InternalError",
            message: message.into(),
            details: None,
        }
    }

    /// A generic error for an injected status code (reason from the code like `StatusReasonForCode`).
    pub fn for_code(code: u16) -> Self {
        let reason = match code {
            400 => "BadRequest",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "NotFound",
            405 => "MethodNotAllowed",
            409 => "Conflict",
            410 => "Gone",
            415 => "UnsupportedMediaType",
            422 => "Invalid",
            429 => "TooManyRequests",
            500 => "InternalError",
            503 => "ServiceUnavailable",
            504 => "Timeout",
            _ => "Unknown",
        };
        Self {
            code,
            reason,
            message: format!("injected fault: {code} {reason}"),
            details: None,
        }
    }

    /// The `Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            status["details"] = d.clone();
        }
        status
    }
}

fn details(resource: Qualified<'_>, name: &str) -> Value {
    let mut d = json!({ "name": name, "kind": resource.name });
    if !resource.group.is_empty() {
        d["group"] = Value::String(resource.group.to_string());
    }
    d
}

/// The `Status` a DELETE of an object without finalizers answers for resources that do not
/// return the deleted object (apiserver `finalizeDelete`).
pub fn delete_success(resource: Qualified<'_>, name: &str, uid: &str) -> Value {
    let mut d = details(resource, name);
    d["uid"] = Value::String(uid.to_string());
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": d,
    })
}
