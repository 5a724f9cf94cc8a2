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
        let mut rendered: Vec<String> = Vec::new();
        for c in &causes {
            let text = if c.field.is_empty() {
                c.message.clone()
            } else {
                format!("{}: {}", c.field, c.message)
            };
            // utilerrors.NewAggregate prints identical messages once.
            if !rendered.contains(&text) {
                rendered.push(text);
            }
        }
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

    /// 413 RequestEntityTooLarge, as `errors.NewRequestEntityTooLargeError` words it.
    pub fn too_large(message: impl std::fmt::Display) -> Self {
        Self {
            code: 413,
            reason: "RequestEntityTooLarge",
            message: format!("Request entity too large: {message}"),
            details: None,
        }
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> Self {
        Self {
            code: 405,
            reason: "MethodNotAllowed",
            message: "the server does not allow this method on the requested resource".into(),
            details: Some(json!({})),
        }
    }

    /// 406 NotAcceptable (`negotiation.errNotAcceptable`: no `details`).
    pub fn not_acceptable(message: String) -> Self {
        Self {
            code: 406,
            reason: "NotAcceptable",
            message,
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

    /// 415 as go-restful answers a request whose Content-Type no route of the path consumes
    /// (a PATCH of a built-in that is not one of the patch types): `415: Unsupported Media
    /// Type`, empty details.
    pub fn route_unsupported_media_type() -> Self {
        Self {
            code: 415,
            reason: "UnsupportedMediaType",
            message: "415: Unsupported Media Type".into(),
            details: Some(json!({})),
        }
    }

    /// 406 as go-restful answers an `Accept` header none of the route's media types matches:
    /// `406: Not Acceptable` and the route's `Produces`, empty details.
    pub fn route_not_acceptable(available: &[String]) -> Self {
        Self {
            code: 406,
            reason: "NotAcceptable",
            message: format!(
                "406: Not Acceptable\n\nAvailable representations: {}",
                available.join(", ")
            ),
            details: Some(json!({})),
        }
    }

    /// 422 for a JSON patch that does not apply (`errors.NewGenericServerResponse` as the
    /// patcher wraps json-patch's error): the generic message and empty details.
    pub fn patch_not_applied() -> Self {
        Self {
            code: 422,
            reason: "Invalid",
            message: "the server rejected our request due to an error in our request".into(),
            details: Some(json!({})),
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

    /// 403 Forbidden as `errors.NewForbidden` answers for a resource (`resource` without its
    /// subresource; `name` empty for collections): `details` carry the group, the resource as
    /// `kind` and the name; a non-resource request has empty details.
    pub fn forbidden_resource(
        resource: Qualified<'_>,
        name: &str,
        message: impl Into<String>,
    ) -> Self {
        Self {
            code: 403,
            reason: "Forbidden",
            message: message.into(),
            details: Some(if resource.name.is_empty() {
                json!({})
            } else {
                details(resource, name)
            }),
        }
    }

    /// 403 Forbidden about one object, as admission plugins answer (`errors.NewForbidden`):
    /// `namespaces "default" is forbidden: this namespace may not be deleted`.
    pub fn forbidden_object(resource: Qualified<'_>, name: &str, why: &str) -> Self {
        Self {
            code: 403,
            reason: "Forbidden",
            message: format!("{} \"{name}\" is forbidden: {why}", resource.display()),
            details: Some(details(resource, name)),
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

    /// 422 with the generic message `errors.NewGenericServerResponse(422, "", ...)` sends for an
    /// error it does not know: the cause keeps the original text.
    pub fn generic_unprocessable(cause: impl Into<String>) -> Self {
        Self {
            code: 422,
            reason: "Invalid",
            message: "the server rejected our request due to an error in our request".into(),
            details: Some(
                json!({"causes": [{"reason": "UnexpectedServerResponse", "message": cause.into()}]}),
            ),
        }
    }

    /// 500 with no reason: an error a handler returns without converting it to a Status
    /// (`ErrorToAPIStatus` keeps its text as the message).
    pub fn unconverted(message: impl Into<String>) -> Self {
        Self {
            code: 500,
            reason: "",
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

    /// 500 with no reason: the storage layer's refusal to create an object that carries a
    /// resourceVersion (etcd3 `store.Create`, passed through `ToAPIStatus` unconverted).
    pub fn resource_version_on_create() -> Self {
        Self::unconverted("resourceVersion should not be set on objects to be created")
    }

    /// The `Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "code": self.code,
        });
        if !self.reason.is_empty() {
            status["reason"] = Value::String(self.reason.to_string());
        }
        if let Some(d) = &self.details {
            status["details"] = d.clone();
        }
        status
    }
}

/// `StatusDetails`, whose `name` (like every field) is `omitempty`.
fn details(resource: Qualified<'_>, name: &str) -> Value {
    // StatusDetails' fields are omitempty.
    let mut d = json!({});
    if !resource.name.is_empty() {
        d["kind"] = Value::String(resource.name.to_owned());
    }
    if !name.is_empty() {
        d["name"] = Value::String(name.to_owned());
    }
    if !resource.group.is_empty() {
        d["group"] = Value::String(resource.group.to_string());
    }
    d
}

/// The `Status` a DELETE of an object without finalizers answers for resources that do not
/// return the deleted object (apiserver `finalizeDelete`).
pub(crate) fn delete_success(resource: Qualified<'_>, name: &str, uid: &str) -> Value {
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

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUTS: Qualified<'static> = Qualified {
        group: "demo.kubeward.dev",
        name: "rollouts",
    };

    #[test]
    fn conflict_message_and_details_match_apimachinery() {
        let status = ApiError::modified(ROLLOUTS, "web").to_status();
        assert_eq!(
            status["message"],
            "Operation cannot be fulfilled on rollouts.demo.kubeward.dev \"web\": the object has been modified; please apply your changes to the latest version and try again"
        );
        assert_eq!(
            status["details"],
            json!({"name": "web", "group": "demo.kubeward.dev", "kind": "rollouts"})
        );
        assert_eq!(status["code"], 409);
    }

    #[test]
    fn invalid_aggregates_several_causes_in_brackets_and_deduplicates() {
        let cause = |f: &str| Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: f.into(),
        };
        let kind = Qualified {
            group: "events.k8s.io",
            name: "Event",
        };
        let one = ApiError::invalid(kind, "e", vec![cause("note")]);
        assert_eq!(
            one.message,
            "Event.events.k8s.io \"e\" is invalid: note: Required value"
        );
        let two = ApiError::invalid(kind, "e", vec![cause("a"), cause("b"), cause("a")]);
        assert_eq!(
            two.message,
            "Event.events.k8s.io \"e\" is invalid: [a: Required value, b: Required value]"
        );
        assert_eq!(
            two.to_status()["details"]["causes"]
                .as_array()
                .map(Vec::len),
            Some(3)
        );
    }

    #[test]
    fn core_group_resources_are_not_dotted() {
        let err = ApiError::not_found(
            Qualified {
                group: "",
                name: "configmaps",
            },
            "a",
        );
        assert_eq!(err.message, "configmaps \"a\" not found");
        assert!(err.to_status()["details"].get("group").is_none());
    }
}
