//! The self reviews: what a user may do and who it is, asked of the server itself.
//!
//! - `SelfSubjectAccessReview` (`authorization.k8s.io/v1`, kubernetes
//!   `pkg/registry/authorization/selfsubjectaccessreview/rest.go`): `spec` must name exactly one
//!   of `resourceAttributes` and `nonResourceAttributes` (422 otherwise, worded as
//!   `ValidateSelfSubjectAccessReviewSpec`); the answer's `status` is the authorizer's decision
//!   for the requesting user (`allowed`, and `reason` as RBAC words it) — `kubectl auth can-i`.
//! - `SelfSubjectRulesReview` (`selfsubjectrulesreview/rest.go`): the rules that apply to the user
//!   in `spec.namespace` (400 `no namespace on request` without one), split into resource and
//!   non-resource rules, with `evaluationError` when a bound role is missing —
//!   `kubectl auth can-i --list`.
//! - `SelfSubjectReview` (`authentication.k8s.io/v1`): the user's name, uid, groups and extra —
//!   `kubectl auth whoami`.
//!
//! They are create-only (other verbs are 405), answered 201 and never stored, and are
//! authorized like any create (the default `system:basic-user` role grants them to every
//! authenticated user).

use http::Method;
use serde_json::{Map, Value, json};

use super::authorizer::{self, Identity};
use crate::rbac::RequestAttributes;
use crate::routes::ResourcePath;
use crate::status::{ApiError, Cause, Qualified};
use crate::store::Store;

/// A review resource: group, version, plural, kind, singular.
struct Review {
    group: &'static str,
    plural: &'static str,
    kind: &'static str,
}

const REVIEWS: [Review; 3] = [
    Review {
        group: "authorization.k8s.io",
        plural: "selfsubjectaccessreviews",
        kind: "SelfSubjectAccessReview",
    },
    Review {
        group: "authorization.k8s.io",
        plural: "selfsubjectrulesreviews",
        kind: "SelfSubjectRulesReview",
    },
    Review {
        group: "authentication.k8s.io",
        plural: "selfsubjectreviews",
        kind: "SelfSubjectReview",
    },
];
const VERSION: &str = "v1";

fn review(group: &str, version: &str, plural: &str) -> Option<&'static Review> {
    REVIEWS
        .iter()
        .find(|r| r.group == group && version == VERSION && r.plural == plural)
}

/// The groups serving reviews (for `/apis`), with their one version.
pub(crate) fn groups() -> [&'static str; 2] {
    ["authentication.k8s.io", "authorization.k8s.io"]
}

/// The discovery entries of the reviews served at `group/version`.
pub(crate) fn discovery_entries(group: &str, version: &str) -> Vec<Value> {
    REVIEWS
        .iter()
        .filter(|r| r.group == group && version == VERSION)
        .map(|r| {
            json!({
                "name": r.plural,
                "singularName": r.kind.to_ascii_lowercase(),
                "namespaced": false,
                "kind": r.kind,
                "verbs": ["create"],
            })
        })
        .collect()
}

/// Whether `path` addresses a review (which [`serve`] answers).
pub(crate) fn is_review(path: &ResourcePath) -> bool {
    review(&path.group, &path.version, &path.plural).is_some()
}

/// Answers a request to a review resource: the review with its status (201), or the error.
/// `media_type` is the body's (JSON or protobuf); `write` is the time (the creation timestamp
/// upstream's SelfSubjectReview carries) and the field manager of the create, which records
/// the access review's request fields in managedFields as any create does.
pub(crate) fn serve(
    store: &Store,
    identity: &Identity,
    request: (&Method, &ResourcePath),
    body: &[u8],
    media_type: Option<&str>,
    write: (&str, &str),
) -> Result<Value, ApiError> {
    let (now, manager) = write;
    let (method, path) = request;
    let Some(review) = review(&path.group, &path.version, &path.plural) else {
        return Err(ApiError::no_route());
    };
    if path.name.is_some() || path.subresource.is_some() || path.namespace.is_some() {
        return Err(ApiError::no_route());
    }
    if *method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let decoded = match media_type {
        Some("application/vnd.kubernetes.protobuf") => crate::protobuf::decode(body),
        _ => serde_json::from_slice(body).map_err(|e| e.to_string()),
    };
    let mut object = decoded
        .map_err(|e| ApiError::bad_request(format!("the object provided is unrecognized: {e}")))?;
    if !object.is_object() {
        return Err(ApiError::bad_request("the object provided is unrecognized"));
    }
    object["apiVersion"] = json!(format!("{}/{VERSION}", review.group));
    object["kind"] = json!(review.kind);
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    object["status"] = match review.kind {
        "SelfSubjectAccessReview" => {
            let status = access_review(store, identity, review, &object)?;
            let api_version = format!("{}/{VERSION}", review.group);
            crate::apply::record_update(None, &mut object, manager, &api_version, None, now);
            status
        }
        "SelfSubjectRulesReview" => rules_review(store, identity, &object)?,
        _ => {
            object["metadata"]["creationTimestamp"] = json!(now);
            // SelfSubjectReview has no spec.
            if let Value::Object(fields) = &mut object {
                fields.remove("spec");
            }
            json!({"userInfo": user_info(identity)})
        }
    };
    Ok(object)
}

fn user_info(identity: &Identity) -> Value {
    let user = &identity.user;
    let mut info = Map::new();
    info.insert("username".into(), json!(user.name));
    if !user.uid.is_empty() {
        info.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        info.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        info.insert("extra".into(), json!(user.extra));
    }
    Value::Object(info)
}

fn string(v: &Value, field: &str) -> String {
    v[field].as_str().unwrap_or_default().to_owned()
}

/// `authorizationutil.ResourceAttributesFrom` / `NonResourceAttributesFrom`.
fn attributes_from(identity: &Identity, spec: &Value) -> RequestAttributes {
    let user = identity.user.name.clone();
    if let Some(resource) = spec.get("resourceAttributes").filter(|r| r.is_object()) {
        let optional = |field: &str| Some(string(resource, field)).filter(|s| !s.is_empty());
        RequestAttributes {
            user,
            verb: string(resource, "verb"),
            api_group: string(resource, "group"),
            resource: string(resource, "resource"),
            subresource: optional("subresource"),
            namespace: optional("namespace"),
            name: optional("name"),
            path: String::new(),
            resource_request: true,
        }
    } else {
        let non_resource = &spec["nonResourceAttributes"];
        RequestAttributes {
            user,
            verb: string(non_resource, "verb"),
            path: string(non_resource, "path"),
            ..RequestAttributes::default()
        }
    }
}

fn access_review(
    store: &Store,
    identity: &Identity,
    review: &Review,
    object: &Value,
) -> Result<Value, ApiError> {
    let spec = &object["spec"];
    let given = |field: &str| spec.get(field).is_some_and(|v| !v.is_null());
    let mut causes = Vec::new();
    if given("resourceAttributes") && given("nonResourceAttributes") {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: cannot be specified in combination with resourceAttributes",
                spec["nonResourceAttributes"]
            ),
            field: "spec.nonResourceAttributes".into(),
        });
    }
    if !given("resourceAttributes") && !given("nonResourceAttributes") {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified".into(),
            field: "spec.resourceAttributes".into(),
        });
    }
    let metadata_given = object["metadata"]
        .as_object()
        .is_some_and(|m| m.iter().any(|(k, v)| k != "managedFields" && !v.is_null()));
    if metadata_given {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {}: must be empty", object["metadata"]),
            field: "metadata".into(),
        });
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            Qualified {
                group: review.group,
                name: review.kind,
            },
            "",
            causes,
        ));
    }
    let decision = authorizer::authorize(store, identity, &attributes_from(identity, spec));
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    Ok(status)
}

fn rules_review(store: &Store, identity: &Identity, object: &Value) -> Result<Value, ApiError> {
    let namespace = string(&object["spec"], "namespace");
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let (rules, errors) = authorizer::rules_for(store, identity, &namespace);
    let present = |v: &Option<Vec<String>>| v.as_ref().is_some_and(|l| !l.is_empty());
    let resource_rules: Vec<Value> = rules
        .iter()
        .filter(|r| present(&r.resources))
        .map(|r| {
            let mut rule = json!({
                "verbs": r.verbs,
                "apiGroups": r.api_groups.clone().unwrap_or_default(),
                "resources": r.resources,
            });
            if present(&r.resource_names) {
                rule["resourceNames"] = json!(r.resource_names);
            }
            rule
        })
        .collect();
    let non_resource_rules: Vec<Value> = rules
        .iter()
        .filter(|r| present(&r.non_resource_urls))
        .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}))
        .collect();
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(super::resolver::aggregate(&errors));
    }
    Ok(status)
}
