//! The self reviews: what a user may do and who it is, asked of the server itself.
//!
//! - `SubjectAccessReview` and `LocalSubjectAccessReview` (namespaced): the same question about
//!   the user and groups the spec names (`kubectl auth can-i --as`, webhooks); a local review's
//!   resource attributes must name its own namespace.
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

/// A review resource: group, plural, kind, whether it is namespaced.
struct Review {
    group: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
}

/// The reviews, in discovery's order (by name within a group).
const REVIEWS: [Review; 5] = [
    Review {
        group: "authorization.k8s.io",
        plural: "localsubjectaccessreviews",
        kind: "LocalSubjectAccessReview",
        namespaced: true,
    },
    Review {
        group: "authorization.k8s.io",
        plural: "selfsubjectaccessreviews",
        kind: "SelfSubjectAccessReview",
        namespaced: false,
    },
    Review {
        group: "authorization.k8s.io",
        plural: "selfsubjectrulesreviews",
        kind: "SelfSubjectRulesReview",
        namespaced: false,
    },
    Review {
        group: "authorization.k8s.io",
        plural: "subjectaccessreviews",
        kind: "SubjectAccessReview",
        namespaced: false,
    },
    Review {
        group: "authentication.k8s.io",
        plural: "selfsubjectreviews",
        kind: "SelfSubjectReview",
        namespaced: false,
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
                "namespaced": r.namespaced,
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
    if path.name.is_some()
        || path.subresource.is_some()
        || path.namespace.is_some() != review.namespaced
    {
        return Err(ApiError::no_route());
    }
    if *method != Method::POST {
        return Err(ApiError::method_not_allowed());
    }
    let decoded = match media_type {
        Some("application/vnd.kubernetes.protobuf") => {
            crate::protobuf::decode(body).map_err(|e| e.to_string())
        }
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
    if let Some(namespace) = &path.namespace {
        object["metadata"]["namespace"] = json!(namespace);
    }
    let api_version = format!("{}/{VERSION}", review.group);
    object["status"] = match review.kind {
        "SelfSubjectAccessReview" | "SubjectAccessReview" | "LocalSubjectAccessReview" => {
            let status = access_review(store, identity, review, &object)?;
            crate::apply::record_update(None, &mut object, manager, &api_version, None, now);
            status
        }
        "SelfSubjectRulesReview" => {
            // Upstream's REST answers a new review holding only the status
            // (selfsubjectrulesreview/rest.go): no spec, no metadata, no managedFields.
            let status = rules_review(store, identity, &object)?;
            object["metadata"] = json!({});
            object["spec"] = json!({});
            status
        }
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

/// The access reviews (`SelfSubjectAccessReview`, `SubjectAccessReview`,
/// `LocalSubjectAccessReview`): validated as `ValidateSubjectAccessReviewSpec` and the kind's
/// metadata rules word it (the 422 names no kind: `.authorization.k8s.io "" is invalid`), then
/// the authorizer's decision for the requesting user or, for the others, the user and groups
/// the spec names.
fn access_review(
    store: &Store,
    identity: &Identity,
    review: &Review,
    object: &Value,
) -> Result<Value, ApiError> {
    let spec = &object["spec"];
    let given = |field: &str| spec.get(field).is_some_and(|v| !v.is_null());
    let mut causes = Vec::new();
    let invalid = |field: &str, value: String, detail: &str| Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value}: {detail}"),
        field: field.into(),
    };
    // The internal NonResourceAttributes struct, printed with its Go field names.
    let non_resource = || {
        let attrs = &spec["nonResourceAttributes"];
        json!({"Path": string(attrs, "path"), "Verb": string(attrs, "verb")}).to_string()
    };
    if given("resourceAttributes") && given("nonResourceAttributes") {
        causes.push(invalid(
            "spec.nonResourceAttributes",
            non_resource(),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if !given("resourceAttributes") && !given("nonResourceAttributes") {
        causes.push(invalid(
            "spec.resourceAttributes",
            "null".into(),
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    let self_review = review.kind == "SelfSubjectAccessReview";
    let groups: Vec<String> = spec["groups"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|g| g.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if !self_review && string(spec, "user").is_empty() && groups.is_empty() {
        causes.push(invalid(
            "spec.user",
            "\"\"".into(),
            "at least one of user or group must be specified",
        ));
    }
    let local = review.kind == "LocalSubjectAccessReview";
    let metadata_given = object["metadata"].as_object().is_some_and(|m| {
        m.iter()
            .any(|(k, v)| k != "managedFields" && !(local && k == "namespace") && !v.is_null())
    });
    if metadata_given {
        let detail = if local {
            "must be empty except for namespace"
        } else {
            "must be empty"
        };
        causes.push(invalid("metadata", object["metadata"].to_string(), detail));
    }
    if local && given("nonResourceAttributes") {
        causes.push(invalid(
            "spec.nonResourceAttributes",
            non_resource(),
            "disallowed on this kind of request",
        ));
    }
    if causes.is_empty()
        && local
        && let Some(resource) = spec.get("resourceAttributes").filter(|r| r.is_object())
        && resource["namespace"] != object["metadata"]["namespace"]
    {
        causes.push(invalid(
            "spec.resourceAttributes.namespace",
            crate::go::fmt::go_quote(&string(resource, "namespace")),
            "must match metadata.namespace",
        ));
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(
            Qualified {
                group: review.group,
                name: "",
            },
            "",
            causes,
        ));
    }
    let subject;
    let asked_about = if self_review {
        identity
    } else {
        let mut user = identity.user.clone();
        user.name = string(spec, "user");
        user.uid = string(spec, "uid");
        user.groups = groups;
        user.extra = serde_json::from_value(spec["extra"].clone()).unwrap_or_default();
        subject = Identity::rbac(user);
        &subject
    };
    let decision = authorizer::authorize(store, asked_about, &attributes_from(asked_about, spec));
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
