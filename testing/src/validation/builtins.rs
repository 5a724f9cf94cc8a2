//! The built-in kinds' own rules (kubernetes `pkg/apis/core/validation/validation.go`
//! `ValidateConfigMap`/`ValidateSecret` and their updates, `pkg/apis/coordination/validation`
//! `ValidateLease`), their defaulting (`SetDefaults_Secret`) and conversion
//! (`Convert_v1_Secret_To_core_Secret` folding `stringData` into `data`), and the decoding of
//! their typed fields (`[]byte` as base64, `MicroTime`), whose failure is a 400 as the decoder's.
//! Each kind's strategy (`crate::kinds`) names the ones that are its.

use serde_json::{Map, Value};

use super::base64;
use super::field::{FieldError, key};
use super::names::is_config_map_key;
use crate::go::json;
use crate::go::time::{self as gotime, Layout};

/// `core.MaxSecretSize`: the bytes of a Secret's `data`, or of a ConfigMap's `data` and
/// `binaryData` together.
pub(super) const MAX_SECRET_SIZE: usize = 1024 * 1024;
const IMMUTABLE_DETAIL: &str = "field is immutable when `immutable` is set";

/// The core group's `ValidateObjectMeta` adds `validateKubeFinalizerName`: a finalizer without
/// a `/` must be one of the standard names (`kubernetes`, `orphan`, `foregroundDeletion`).
pub(crate) fn kube_finalizer_names(meta: &Value) -> Vec<FieldError> {
    meta["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, f)| {
            let name = f.as_str()?;
            let standard = matches!(name, "kubernetes" | "orphan" | "foregroundDeletion");
            (!name.contains('/') && !standard).then(|| {
                FieldError::invalid(
                    &format!("metadata.finalizers[{i}]"),
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            })
        })
        .collect()
}

fn entries<'a>(obj: &'a Value, field: &str) -> impl Iterator<Item = (&'a String, &'a Value)> {
    obj.get(field)
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(Map::iter)
}

/// A ConfigMap's `binaryData` decoded as base64.
///
/// # Errors
/// The decoder's message (`illegal base64 data at input byte 3`).
pub(crate) fn decode_config_map(obj: &mut Value) -> Result<(), String> {
    for (_, v) in entries(obj, "binaryData") {
        base64::decode(v.as_str().unwrap_or_default())?;
    }
    Ok(())
}

/// A Secret's `data` decoded as base64, its `stringData` folded into `data`, and its `type`
/// defaulted to `Opaque`.
///
/// # Errors
/// The decoder's message (`illegal base64 data at input byte 3`).
pub(crate) fn decode_secret(obj: &mut Value) -> Result<(), String> {
    for (_, v) in entries(obj, "data") {
        base64::decode(v.as_str().unwrap_or_default())?;
    }
    if let Some(Value::Object(plain)) = obj.as_object_mut().and_then(|o| o.remove("stringData")) {
        let data = obj
            .as_object_mut()
            .map(|o| o.entry("data").or_insert_with(|| Value::Object(Map::new())));
        if let Some(Value::Object(data)) = data {
            for (k, v) in plain {
                let text = v.as_str().unwrap_or_default();
                data.insert(k, Value::String(base64::encode(text.as_bytes())));
            }
        }
    }
    if obj["type"].as_str().is_none_or(str::is_empty) {
        obj["type"] = Value::String("Opaque".into());
    }
    Ok(())
}

/// A Lease's `spec`, which is a struct, not a pointer: the encoder always writes it. (Its times
/// were parsed by the typed decoder, `gotypes`.)
pub(crate) fn decode_lease(obj: &mut Value) {
    if obj["spec"].is_null() {
        obj["spec"] = Value::Object(Map::new());
    }
}

/// An Event's typed fields, decoded for a request through core/v1 (the errors name core/v1's
/// fields; both APIs' events are stored in the events.k8s.io/v1 form).
///
/// # Errors
/// The decoder's message.
pub(crate) fn decode_core_event(obj: &mut Value) -> Result<(), String> {
    decode_event(
        obj,
        &[
            ("deprecatedFirstTimestamp", "firstTimestamp", Layout::Time),
            ("deprecatedLastTimestamp", "lastTimestamp", Layout::Time),
            ("eventTime", "eventTime", Layout::MicroTime),
        ],
        ("deprecatedCount", "count"),
    )
}

/// An Event's typed fields, decoded for a request through events.k8s.io/v1.
///
/// # Errors
/// The decoder's message.
pub(crate) fn decode_native_event(obj: &mut Value) -> Result<(), String> {
    decode_event(
        obj,
        &[
            ("eventTime", "eventTime", Layout::MicroTime),
            (
                "deprecatedFirstTimestamp",
                "deprecatedFirstTimestamp",
                Layout::Time,
            ),
            (
                "deprecatedLastTimestamp",
                "deprecatedLastTimestamp",
                Layout::Time,
            ),
        ],
        ("deprecatedCount", "deprecatedCount"),
    )
}

/// The JSON decoder's type error for a field of a Go struct
/// (`json: cannot unmarshal string into Go struct field Event.count of type int32`).
fn type_error(found: &Value, go_field: &str, go_type: &str) -> String {
    json::unmarshal_field_error(json::unmarshal_type(found), go_field, go_type)
}

/// An Event's typed fields as the decoder reads them: its times (`times`: stored key, the key
/// the request's API names it by, layout; and `series.lastObservedTime`) parsed as Go parses
/// them and stored in UTC as the encoder writes them, its counts (`count`: stored key and API
/// key; `series.count`) `int32`s.
fn decode_event(
    obj: &mut Value,
    times: &[(&str, &str, Layout)],
    count: (&str, &str),
) -> Result<(), String> {
    let int32 = |v: &Value| v.as_i64().is_some_and(|n| i32::try_from(n).is_ok());
    if let Some(v) = obj.get(count.0).filter(|v| !v.is_null() && !int32(v)) {
        return Err(type_error(v, &format!("Event.{}", count.1), "int32"));
    }
    if let Some(v) = obj["series"]
        .get("count")
        .filter(|v| !v.is_null() && !int32(v))
    {
        return Err(type_error(v, "EventSeries.series.count", "int32"));
    }
    let series_time = [("lastObservedTime", "lastObservedTime", Layout::MicroTime)];
    for (parent, fields) in [(None, times), (Some("series"), &series_time[..])] {
        for (stored, named, layout) in fields {
            let holder = match parent {
                None => Some(&mut *obj),
                Some(p) => obj.get_mut(p),
            };
            let Some(value) = holder.and_then(|h| h.get_mut(*stored)) else {
                continue;
            };
            match value {
                Value::Null => {}
                Value::String(text) => *text = gotime::normalise(text, *layout)?,
                other => {
                    let go_field = match parent {
                        None => format!("Event.{named}"),
                        Some(p) => format!("EventSeries.{p}.{named}"),
                    };
                    return Err(type_error(other, &go_field, "string"));
                }
            }
        }
    }
    Ok(())
}

/// `ValidateConfigMap`, and on an update (`old`) `ValidateConfigMapUpdate`'s immutability.
pub(crate) fn config_map_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(old) = old {
        errs.extend(immutable(new, old, &["data", "binaryData"]));
    }
    errs.extend(validate_config_map(new));
    errs
}

/// `ValidateSecret`, and on an update (`old`) `ValidateSecretUpdate`'s immutability.
pub(crate) fn secret_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(old) = old {
        if new["type"] != old["type"] {
            errs.push(FieldError::invalid(
                "type",
                new["type"].as_str().unwrap_or_default(),
                "field is immutable",
            ));
        }
        errs.extend(immutable(new, old, &["data"]));
    }
    errs.extend(validate_secret(new));
    errs
}

/// The decoded size of a `[]byte` field (0 when undecodable: the decoding rejected those).
fn decoded_len(v: &Value) -> usize {
    base64::decode(v.as_str().unwrap_or_default()).map_or(0, |b| b.len())
}

/// The bytes a ConfigMap value counts toward [`MAX_SECRET_SIZE`].
type ValueSize = fn(&Value) -> usize;

/// `ValidateConfigMap` beyond object metadata.
fn validate_config_map(cm: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0;
    let text_len = |v: &Value| v.as_str().map_or(0, str::len);
    // Each bag's keys, and the other bag that must not hold them: data, then binaryData.
    let bags: [(&str, &str, ValueSize); 2] = [
        ("data", "binaryData", text_len),
        ("binaryData", "data", decoded_len),
    ];
    for (bag, other, size) in bags {
        for (k, v) in entries(cm, bag) {
            let path = key(bag, k);
            errs.extend(
                is_config_map_key(k)
                    .iter()
                    .map(|m| FieldError::invalid(&path, k, m)),
            );
            // Upstream checks the duplicate from `data`'s side only.
            if bag == "data" && cm[other].get(k).is_some() {
                let detail = format!("duplicate of key present in {other}");
                errs.push(FieldError::invalid(&path, k, &detail));
            }
            total += size(v);
        }
    }
    if total > MAX_SECRET_SIZE {
        // The whole object is too long: the path is the empty root, which prints as `[]`.
        errs.push(FieldError::too_long("[]", MAX_SECRET_SIZE));
    }
    errs
}

/// The keys a typed Secret must carry in `data` (`ValidateSecret`'s switch on `type`).
fn required_secret_keys(secret_type: &str) -> &'static [&'static str] {
    match secret_type {
        "kubernetes.io/dockercfg" => &[".dockercfg"],
        "kubernetes.io/dockerconfigjson" => &[".dockerconfigjson"],
        "kubernetes.io/ssh-auth" => &["ssh-privatekey"],
        "kubernetes.io/tls" => &["tls.crt", "tls.key"],
        _ => &[],
    }
}

/// `ValidateSecret` beyond object metadata.
fn validate_secret(secret: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0;
    for (k, v) in entries(secret, "data") {
        let path = key("data", k);
        errs.extend(
            is_config_map_key(k)
                .iter()
                .map(|m| FieldError::invalid(&path, k, m)),
        );
        total += decoded_len(v);
    }
    if total > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long("data", MAX_SECRET_SIZE));
    }
    let data = secret.get("data").and_then(Value::as_object);
    let has = |k: &str| data.is_some_and(|d| d.contains_key(k));
    let secret_type = secret["type"].as_str().unwrap_or_default();
    match secret_type {
        "kubernetes.io/service-account-token" => {
            let annotation = "kubernetes.io/service-account.name";
            if secret["metadata"]["annotations"][annotation]
                .as_str()
                .is_none_or(str::is_empty)
            {
                errs.push(FieldError::required(&key(
                    "metadata.annotations",
                    annotation,
                )));
            }
        }
        // Username or password may be empty, but one of them must be there.
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errs.push(FieldError::required(&key("data", "username")));
            errs.push(FieldError::required(&key("data", "password")));
        }
        "kubernetes.io/ssh-auth" => {
            if data
                .and_then(|d| d.get("ssh-privatekey"))
                .is_none_or(|v| decoded_len(v) == 0)
            {
                errs.push(FieldError::required(&key("data", "ssh-privatekey")));
            }
        }
        other => {
            let missing = required_secret_keys(other).iter().filter(|k| !has(k));
            errs.extend(missing.map(|k| FieldError::required(&key("data", k))));
        }
    }
    errs
}

/// `ValidateConfigMapUpdate`/`ValidateSecretUpdate`: once `immutable` is set, it and the
/// `fields` stay as they are.
fn immutable(new: &Value, old: &Value, fields: &[&str]) -> Vec<FieldError> {
    if old["immutable"].as_bool() != Some(true) {
        return Vec::new();
    }
    let mut errs = Vec::new();
    if new["immutable"].as_bool() != Some(true) {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE_DETAIL));
    }
    // A missing map and an empty one are the same Go map (nil and empty compare unequal, but
    // neither survives a round trip through the API as different values).
    let map = |obj: &Value, f: &str| {
        obj.get(f)
            .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
            .cloned()
    };
    for f in fields {
        if map(new, f) != map(old, f) {
            errs.push(FieldError::forbidden(f, IMMUTABLE_DETAIL));
        }
    }
    errs
}

/// `ValidateLease`'s `ValidateLeaseSpec`: a positive duration, non-negative transitions.
pub(crate) fn lease_rules(lease: &Value) -> Vec<FieldError> {
    let spec = &lease["spec"];
    let mut errs = Vec::new();
    if let Some(d) = spec.get("leaseDurationSeconds").and_then(Value::as_i64)
        && d <= 0
    {
        errs.push(FieldError::invalid_value(
            "spec.leaseDurationSeconds",
            &Value::from(d),
            "must be greater than 0",
        ));
    }
    if let Some(t) = spec.get("leaseTransitions").and_then(Value::as_i64)
        && t < 0
    {
        errs.push(FieldError::invalid_value(
            "spec.leaseTransitions",
            &Value::from(t),
            "must be greater than or equal to 0",
        ));
    }
    if spec["preferredHolder"]
        .as_str()
        .is_some_and(|h| !h.is_empty())
        && spec["strategy"].as_str().is_none_or(str::is_empty)
    {
        errs.push(FieldError::forbidden(
            "spec.preferredHolder",
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}
