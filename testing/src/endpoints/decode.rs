//! A request's body and options as the endpoints decode them: the object of a write (JSON, YAML
//! or protobuf), `DeleteOptions`, and the options of a write (field manager, force, field
//! validation).

use std::collections::HashMap;

use bytes::Bytes;
use http::{HeaderMap, header};
use serde_json::{Value, json};

use crate::apply::manager_or_user_agent;
use crate::auth::authorizer::Identity;
use crate::protobuf;
use crate::registry::{Warnings, WriteOptions};
use crate::schema::duplicates::duplicate_fields;
use crate::schema::{Decoding, FieldValidation};
use crate::status::ApiError;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The media types a write's body may have.
const MEDIA_TYPES: &[&str] = &["application/json", "application/yaml", PROTOBUF];

pub(crate) fn media_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| {
            ct.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
}

/// apiserver's `transformDecodeError` of a body that did not decode as a `kind`: `the object
/// provided is unrecognized (must be of type Kind): <why> (<the body's first 30 bytes>)`.
pub(super) fn unrecognized(kind: &str, why: &str, body: &[u8]) -> ApiError {
    const SUMMARY: usize = 30;
    let summary = match body {
        [] => "<empty>".to_owned(),
        [b'{', ..] if body.len() > SUMMARY => {
            format!("{} ...", String::from_utf8_lossy(&body[..SUMMARY]))
        }
        [b'{', ..] => String::from_utf8_lossy(body).into_owned(),
        _ => {
            let hex: String = body
                .iter()
                .take(SUMMARY)
                .map(|b| format!("{b:02x}"))
                .collect();
            if body.len() > SUMMARY {
                format!("{hex} ...")
            } else {
                hex
            }
        }
    };
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {why} ({summary})"
    ))
}

/// The JSON (or YAML, or protobuf) body of a write of a `kind` object. A custom resource's body
/// must name its kind (the unstructured decoder has no type to default it from).
pub(super) fn decode_object(
    headers: &HeaderMap,
    body: &Bytes,
    info: &crate::resources::ResourceInfo,
) -> Result<Value, ApiError> {
    let protobuf = media_type(headers).as_deref() == Some(PROTOBUF);
    if protobuf && info.custom {
        // Custom resources are served as JSON and YAML only.
        return Err(ApiError::unsupported_media_type(PROTOBUF, MEDIA_TYPES));
    }
    let object = decode_body(headers, body, &info.kind)?;
    if protobuf && object["kind"].as_str() != Some(info.kind.as_str()) {
        let version = object["apiVersion"]
            .as_str()
            .and_then(|v| v.rsplit('/').next())
            .unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        return Err(crate::registry::unknown_conversion(info, version, kind));
    }
    if info.custom && object.is_object() && object["kind"].as_str().is_none_or(str::is_empty) {
        let why = format!(
            "Object 'Kind' is missing in '{}'",
            String::from_utf8_lossy(body)
        );
        return Err(unrecognized(&info.kind, &why, body));
    }
    Ok(object)
}

pub(super) fn decode_body(
    headers: &HeaderMap,
    body: &Bytes,
    kind: &str,
) -> Result<Value, ApiError> {
    match media_type(headers).as_deref() {
        None | Some("application/json") | Some("*/*") => {}
        Some("application/yaml") => {
            return crate::yaml::decode(body).map_err(|e| unrecognized(kind, &e, body));
        }
        Some(PROTOBUF) => {
            return protobuf::decode(body).map_err(|e| match &e {
                protobuf::DecodeError::NotRegistered {
                    api_version,
                    kind: theirs,
                } => {
                    let version = api_version.rsplit('/').next().unwrap_or_default();
                    ApiError::bad_request(format!(
                        "{theirs} in version {} cannot be handled as a {kind}: {e}",
                        crate::go::fmt::go_quote(version)
                    ))
                }
                _ => unrecognized(kind, &e.to_string(), body),
            });
        }
        Some(other) => {
            return Err(ApiError::unsupported_media_type(other, MEDIA_TYPES));
        }
    }
    // The serializer reads the body's apiVersion and kind first (`couldn't get version/kind`):
    // a syntax error is Go's encoding/json's.
    let parse_error = |why: String| {
        unrecognized(
            kind,
            &format!("couldn't get version/kind; json parse error: {why}"),
            body,
        )
    };
    if let Some(why) = crate::go::scanner::syntax_error(body) {
        return Err(parse_error(why));
    }
    serde_json::from_slice(body).map_err(|e| parse_error(e.to_string()))
}

/// The `DeleteOptions` of a DELETE: the body (which may carry `dryRun` too), or without one
/// the query's `gracePeriodSeconds`, `propagationPolicy` and `orphanDependents`; `dryRun: ["All"]`
/// when the query's `dryRun=All` made it a `dry_run`.
pub(super) fn delete_options(
    body: &Bytes,
    query: &HashMap<String, String>,
    dry_run: bool,
) -> Result<Value, ApiError> {
    let mut options = if body.is_empty() {
        query_delete_options(query)?
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?
    };
    if dry_run && options.is_object() {
        options["dryRun"] = json!(["All"]);
    }
    Ok(options)
}

/// The `DeleteOptions` a DELETE without a body gives in its query.
fn query_delete_options(query: &HashMap<String, String>) -> Result<Value, ApiError> {
    let mut options = json!({});
    if let Some(grace) = query.get("gracePeriodSeconds") {
        let seconds = grace.parse::<i64>().map_err(|_| {
            ApiError::bad_request(format!(
                "strconv.ParseInt: parsing {grace:?}: invalid syntax"
            ))
        })?;
        options["gracePeriodSeconds"] = json!(seconds);
    }
    if let Some(policy) = query.get("propagationPolicy") {
        options["propagationPolicy"] = json!(policy);
    }
    if let Some(orphan) = crate::params::query_bool(query, "orphanDependents") {
        options["orphanDependents"] = json!(orphan);
    }
    Ok(options)
}

/// The options of a write by `requester` with `headers`, `query` and `body`: its field manager
/// (`fieldManager`, else from the User-Agent, else `unknown`), `force`, and how its body is
/// decoded (`fieldValidation`, the body's duplicate fields).
pub(crate) fn write_options(
    headers: &HeaderMap,
    query: &HashMap<String, String>,
    body: &Bytes,
    requester: Option<&Identity>,
) -> WriteOptions {
    WriteOptions {
        manager: field_manager(headers, query),
        manager_given: query.get("fieldManager").is_some_and(|m| !m.is_empty()),
        requester: requester.cloned(),
        // A `dryRun` other than `All` was answered 422 before the write began.
        dry_run: query.get("dryRun").is_some_and(|d| d == "All"),
        warnings: Warnings::default(),
        force: crate::params::query_bool(query, "force"),
        decoding: Decoding {
            // An invalid directive was answered 422 before the write began.
            directive: FieldValidation::parse(query.get("fieldValidation").map(String::as_str))
                .unwrap_or_default(),
            duplicate_fields: match media_type(headers).as_deref() {
                Some("application/json-patch+json" | "application/yaml") => Vec::new(),
                _ => duplicate_fields(body),
            },
            yaml_duplicates: match media_type(headers).as_deref() {
                Some("application/yaml") => crate::yaml::decode_with_duplicates(body)
                    .map(|decoded| decoded.duplicates)
                    .unwrap_or_default(),
                _ => Vec::new(),
            },
        },
    }
}

/// The field manager of a write with `headers` and `query`: `fieldManager`, else the User-Agent
/// up to its first `/`, else `unknown` (managedfields `buildManagerInfo`).
pub(crate) fn field_manager(headers: &HeaderMap, query: &HashMap<String, String>) -> String {
    let given = query.get("fieldManager").map(String::as_str);
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    match manager_or_user_agent(given, user_agent) {
        manager if manager.is_empty() => "unknown".into(),
        manager => manager,
    }
}
