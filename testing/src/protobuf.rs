//! Decoding of the Kubernetes protobuf envelope, for every built-in kind of the served groups:
//! client-go's generated clients send their bodies as protobuf (`kubectl create
//! deployment|job|cronjob|configmap|...`, `kubectl run`, any Go controller). Responses are always
//! JSON, which those clients accept too; custom resources and kinds not in the table get 415.
//!
//! The envelope is the 4-byte magic `k8s\0` followed by a `runtime.Unknown` message
//! (`typeMeta` = 1 {apiVersion = 1, kind = 2}, `raw` = 2; upstream's
//! `apimachinery/pkg/runtime/serializer/protobuf/protobuf.go`). The object is decoded by one
//! generic decoder driven by `testing/protobuf/messages.json` (written by
//! `testing/protobuf/gen.py` from `k8s.io/api`'s `generated.proto` files and the Go types), into
//! the JSON client-go would have sent for the Go object kube-apiserver decodes from the body:
//! Go's `encoding/json` rules for absent and zero fields (`omitempty`, `omitzero`, pointers,
//! nil slices and maps as `null`, structs always written) and the JSON forms of the well-known
//! types (`meta/v1` `time_proto.go`, `micro_time_proto.go`, `duration.go`, `api/resource`
//! `quantity_proto.go`, `util/intstr`, `runtime.RawExtension`, `FieldsV1`).

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::go::fmt::go_quote;

pub(crate) const MAGIC: &[u8] = b"k8s\0";

/// One field of a message: its number and its value.
pub(crate) enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// Reads one varint.
fn varint(buf: &mut &[u8]) -> Result<u64, String> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = buf.split_first().ok_or("truncated varint")?;
        *buf = rest;
        out |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(out);
        }
    }
    Err("varint too long".into())
}

/// Reads the fields of one message, in order.
pub(crate) fn fields(mut buf: &[u8]) -> Result<Vec<(u32, Field<'_>)>, String> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        let number = u32::try_from(key >> 3).map_err(|_| "field number too large")?;
        let field = match key & 7 {
            0 => Field::Varint(varint(&mut buf)?),
            2 => {
                let len = usize::try_from(varint(&mut buf)?).map_err(|_| "length too large")?;
                if len > buf.len() {
                    return Err("truncated field".into());
                }
                let (bytes, rest) = buf.split_at(len);
                buf = rest;
                Field::Bytes(bytes)
            }
            1 => {
                buf = buf.get(8..).ok_or("truncated fixed64")?;
                continue;
            }
            5 => {
                buf = buf.get(4..).ok_or("truncated fixed32")?;
                continue;
            }
            other => return Err(format!("unsupported wire type {other}")),
        };
        out.push((number, field));
    }
    Ok(out)
}

pub(crate) fn string(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string())
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The descriptor table of `testing/protobuf/messages.json` (see `testing/protobuf/gen.py`).
#[derive(Deserialize)]
struct Table {
    /// apiVersion → kind → the full name of its message.
    kinds: HashMap<String, HashMap<String, String>>,
    /// Full message name → its fields, in the Go struct's order.
    messages: HashMap<String, Vec<Desc>>,
}

/// One field of a message, with what Go's JSON encoder does with it.
#[derive(Deserialize)]
struct Desc {
    /// The field number.
    n: u32,
    /// The JSON name (empty for an inline struct).
    json: String,
    /// A scalar (`string`, `bool`, `int32`, `int64`, `bytes`), a message's full name, or a
    /// well-known type (`@time`, `@microtime`, `@duration`, `@quantity`, `@intorstring`,
    /// `@rawextension`, `@fieldsv1`, `@strings`).
    #[serde(rename = "type")]
    ty: String,
    /// `repeated`: a Go slice.
    #[serde(default)]
    rep: bool,
    /// `map<key, type>`: a Go map (the key type; always `string` in the served groups).
    #[serde(default)]
    map: Option<String>,
    /// A Go pointer: written when set, whatever its value.
    #[serde(default)]
    ptr: bool,
    #[serde(default)]
    omitempty: bool,
    #[serde(default)]
    omitzero: bool,
    /// An embedded struct (`json:",inline"`): its fields are written into the parent.
    #[serde(default)]
    inline: bool,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../protobuf/messages.json"))
        .expect("testing/protobuf/messages.json is gen.py's valid output")
});

/// Decodes one message of type `name` into the JSON object Go's encoder writes for the Go value
/// the protobuf decoder fills from `bytes`.
fn message(name: &str, bytes: &[u8]) -> Result<Map<String, Value>, String> {
    let descs = TABLE
        .messages
        .get(name)
        .ok_or_else(|| format!("no protobuf message {name}"))?;
    let wire = fields(bytes)?;
    let mut out = Map::new();
    for desc in descs {
        let values: Vec<&Field> = wire
            .iter()
            .filter(|(n, _)| *n == desc.n)
            .map(|(_, f)| f)
            .collect();
        if desc.inline {
            let inner = match values.last() {
                Some(Field::Bytes(b)) => b,
                None => &[][..],
                Some(_) => return Err(wrong_wire_type(desc)),
            };
            out.extend(message(&desc.ty, inner)?);
        } else if let Some(value) = field(desc, &values)? {
            out.insert(desc.json.clone(), value);
        }
    }
    Ok(out)
}

fn wrong_wire_type(desc: &Desc) -> String {
    format!("field {} has the wrong wire type", desc.json)
}

/// The JSON of one field from all the wire values of its number, or `None` when Go's encoder
/// leaves it out.
fn field(desc: &Desc, values: &[&Field]) -> Result<Option<Value>, String> {
    if desc.map.is_some() || desc.rep {
        if values.is_empty() {
            // A nil slice or map.
            return Ok((!desc.omitempty).then_some(Value::Null));
        }
        if desc.map.is_some() {
            let mut map = Map::new();
            for value in values {
                let Field::Bytes(entry) = value else {
                    return Err(wrong_wire_type(desc));
                };
                let (key, value) = map_entry(&desc.ty, entry)?;
                map.insert(key, value);
            }
            return Ok(Some(Value::Object(map)));
        }
        let mut items = Vec::new();
        for value in values {
            repeated(&desc.ty, value, &mut items)?;
        }
        return Ok(Some(Value::Array(items)));
    }
    match values.last() {
        // A nil pointer, `[]byte` or named `[]string`.
        None if desc.ptr || matches!(desc.ty.as_str(), "bytes" | "@strings") => {
            Ok((!desc.omitempty && !desc.omitzero).then_some(Value::Null))
        }
        None => Ok(kept(desc, zero(&desc.ty)?)),
        Some(value) => {
            let value = single(&desc.ty, value)?;
            Ok(if desc.ptr {
                Some(value)
            } else {
                kept(desc, value)
            })
        }
    }
}

/// A non-pointer field's value, or `None` when its zero value is left out (`omitzero`, or
/// `omitempty` on a scalar, a `[]byte` or a named slice; structs are never empty to Go).
fn kept(desc: &Desc, value: Value) -> Option<Value> {
    let scalar_or_slice = matches!(
        desc.ty.as_str(),
        "string" | "bool" | "int32" | "int64" | "bytes" | "@strings"
    );
    let empty = match &value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_i64() == Some(0),
        Value::Array(items) => items.is_empty(),
        Value::Object(_) => false,
    };
    let omitted = (desc.omitempty && scalar_or_slice && empty)
        || (desc.omitzero && zero(&desc.ty).is_ok_and(|z| z == value));
    (!omitted).then_some(value)
}

/// The JSON of a type's Go zero value.
fn zero(ty: &str) -> Result<Value, String> {
    Ok(match ty {
        "string" | "bytes" => json!(""),
        "bool" => json!(false),
        "int32" | "int64" => json!(0),
        _ => single(ty, &Field::Bytes(&[]))?,
    })
}

/// One value of a `repeated` field into `items`: scalars of varint types may come packed.
fn repeated(ty: &str, field: &Field, items: &mut Vec<Value>) -> Result<(), String> {
    match (ty, field) {
        ("bool" | "int32" | "int64", Field::Bytes(packed)) => {
            let mut rest = *packed;
            while !rest.is_empty() {
                items.push(single(ty, &Field::Varint(varint(&mut rest)?))?);
            }
        }
        _ => items.push(single(ty, field)?),
    }
    Ok(())
}

/// One wire value of a type as JSON.
fn single(ty: &str, field: &Field) -> Result<Value, String> {
    let bytes = match (ty, field) {
        ("bool", Field::Varint(v)) => return Ok(json!(*v != 0)),
        // Varints carry negative numbers in two's complement, sign-extended to 64 bits.
        ("int32", Field::Varint(v)) => return Ok(json!(i64::from(*v as i32))),
        ("int64", Field::Varint(v)) => return Ok(json!(*v as i64)),
        (_, Field::Bytes(b)) => *b,
        _ => return Err(format!("a {ty} has the wrong wire type")),
    };
    Ok(match ty {
        "string" => json!(string(bytes)?),
        "bytes" => json!(base64(bytes)),
        "@time" | "@microtime" => {
            timestamp(bytes, ty == "@microtime")?.map_or(Value::Null, Value::from)
        }
        "@duration" => json!(duration(bytes)?),
        "@quantity" => match last_bytes(bytes, 1)? {
            Some(text) => json!(string(text)?),
            // The zero Quantity.
            None => json!("0"),
        },
        "@intorstring" => int_or_string(bytes)?,
        // Raw JSON (`RawExtension.raw`, `FieldsV1.Raw`), embedded as is; nil is `null`.
        "@rawextension" | "@fieldsv1" => match last_bytes(bytes, 1)? {
            Some(raw) if !raw.is_empty() => {
                serde_json::from_slice(raw).map_err(|e| format!("embedded JSON of a {ty}: {e}"))?
            }
            _ => Value::Null,
        },
        "@strings" => {
            let mut items = Vec::new();
            for (n, f) in fields(bytes)? {
                if let (1, Field::Bytes(b)) = (n, f) {
                    items.push(json!(string(b)?));
                }
            }
            if items.is_empty() {
                Value::Null
            } else {
                Value::Array(items)
            }
        }
        message_name => Value::Object(message(message_name, bytes)?),
    })
}

/// The last bytes value of field `number` of a message.
fn last_bytes(bytes: &[u8], number: u32) -> Result<Option<&[u8]>, String> {
    Ok(fields(bytes)?
        .into_iter()
        .filter_map(|(n, f)| match f {
            Field::Bytes(b) if n == number => Some(b),
            _ => None,
        })
        .next_back())
}

/// A map entry (`key` = 1, `value` = 2) whose values are of type `ty`; an absent value is the
/// zero value gogo-protobuf starts from (`[]byte{}` for bytes).
fn map_entry(ty: &str, bytes: &[u8]) -> Result<(String, Value), String> {
    let mut key = String::new();
    let mut value = None;
    for (n, f) in fields(bytes)? {
        match (n, f) {
            (1, Field::Bytes(b)) => key = string(b)?,
            (2, f) => value = Some(single(ty, &f)?),
            _ => {}
        }
    }
    let value = match value {
        Some(value) => value,
        None => zero(ty)?,
    };
    Ok((key, value))
}

/// A `Timestamp` message (`seconds` = 1, `nanos` = 2) as RFC 3339 in UTC: seconds only for a
/// `Time` (its protobuf decoder drops the nanoseconds), microseconds for a `MicroTime`; `None`
/// for the empty message a zero time is written as.
fn timestamp(bytes: &[u8], micro: bool) -> Result<Option<String>, String> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let (mut seconds, mut nanos) = (0i64, 0i64);
    for (n, f) in fields(bytes)? {
        match (n, f) {
            (1, Field::Varint(v)) => seconds = v as i64,
            (2, Field::Varint(v)) => nanos = i64::from(v as i32),
            _ => {}
        }
    }
    let at = jiff::Timestamp::from_second(seconds).map_err(|e| e.to_string())?;
    let whole = at.strftime("%Y-%m-%dT%H:%M:%S");
    Ok(Some(if micro {
        format!("{whole}.{:06}Z", nanos / 1000)
    } else {
        format!("{whole}Z")
    }))
}

/// A `metav1.Duration` (`duration` = 1, nanoseconds) as Go's `time.Duration.String()` writes
/// it: `0s`, `1.5s`, `2m0s`, `1h0m0s`, `300ms`, `2µs`, `5ns`.
fn duration(bytes: &[u8]) -> Result<String, String> {
    let mut nanos = 0i64;
    for (n, f) in fields(bytes)? {
        if let (1, Field::Varint(v)) = (n, f) {
            nanos = v as i64;
        }
    }
    Ok(go_duration(nanos))
}

fn go_duration(nanos: i64) -> String {
    /// `n` divided by `unit`, the fraction's trailing zeros trimmed.
    fn fraction(n: u64, unit: u64) -> String {
        let (whole, rest) = (n / unit, n % unit);
        if rest == 0 {
            return whole.to_string();
        }
        let digits = unit.ilog10() as usize;
        let text = format!("{rest:0digits$}");
        format!("{whole}.{}", text.trim_end_matches('0'))
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    let body = match n {
        0 => return "0s".into(),
        n if n < 1_000 => format!("{n}ns"),
        n if n < 1_000_000 => format!("{}µs", fraction(n, 1_000)),
        n if n < 1_000_000_000 => format!("{}ms", fraction(n, 1_000_000)),
        n => {
            let seconds = fraction(n % 60_000_000_000, 1_000_000_000);
            let minutes = n / 60_000_000_000 % 60;
            let hours = n / 3_600_000_000_000;
            match (hours, minutes) {
                (0, 0) => format!("{seconds}s"),
                (0, m) => format!("{m}m{seconds}s"),
                (h, m) => format!("{h}h{m}m{seconds}s"),
            }
        }
    };
    format!("{sign}{body}")
}

/// An `intstr.IntOrString` message as its JSON: the number, or the string.
fn int_or_string(bytes: &[u8]) -> Result<Value, String> {
    let (mut is_string, mut int, mut text) = (false, 0i64, String::new());
    for (n, f) in fields(bytes)? {
        match (n, f) {
            (1, Field::Varint(v)) => is_string = v == 1,
            // int32 in two's complement.
            (2, Field::Varint(v)) => int = i64::from(v as i32),
            (3, Field::Bytes(b)) => text = string(b)?,
            _ => {}
        }
    }
    Ok(if is_string { json!(text) } else { json!(int) })
}

/// Why a protobuf body did not decode.
#[derive(Debug, PartialEq)]
pub(crate) enum DecodeError {
    /// The body does not start with the `k8s\0` magic.
    NoEnvelope,
    /// The envelope names a kind the table does not hold (one of no served group, a custom
    /// resource, a list).
    NotRegistered { api_version: String, kind: String },
    /// A malformed message.
    Malformed(String),
}

impl std::fmt::Display for DecodeError {
    /// The protobuf serializer's and the scheme's words (`serializer/protobuf/protobuf.go`,
    /// `runtime/scheme.go`'s `NewNotRegisteredErrForKind`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::NoEnvelope => f.write_str(
                "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
            ),
            DecodeError::NotRegistered { api_version, kind } => write!(
                f,
                "no kind {} is registered for version {} in scheme \"pkg/runtime/scheme.go:110\"",
                go_quote(kind),
                go_quote(api_version)
            ),
            DecodeError::Malformed(why) => f.write_str(why),
        }
    }
}

impl From<String> for DecodeError {
    fn from(why: String) -> Self {
        DecodeError::Malformed(why)
    }
}

/// Decodes a protobuf request body into the JSON client-go sends for the same object, for the
/// kinds of `messages.json`.
pub(crate) fn decode(body: &[u8]) -> Result<Value, DecodeError> {
    let envelope = body.strip_prefix(MAGIC).ok_or(DecodeError::NoEnvelope)?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (n, f) in fields(envelope)? {
        match (n, f) {
            (1, Field::Bytes(type_meta)) => {
                for (n, f) in fields(type_meta)? {
                    match (n, f) {
                        (1, Field::Bytes(b)) => api_version = string(b)?,
                        (2, Field::Bytes(b)) => kind = string(b)?,
                        _ => {}
                    }
                }
            }
            (2, Field::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let name = TABLE
        .kinds
        .get(&api_version)
        .and_then(|kinds| kinds.get(&kind))
        .ok_or_else(|| DecodeError::NotRegistered {
            api_version: api_version.clone(),
            kind: kind.clone(),
        })?;
    // `TypeMeta` comes first in every kind's Go struct.
    let mut out = Map::new();
    out.insert("kind".into(), json!(kind));
    out.insert("apiVersion".into(), json!(api_version));
    out.extend(message(name, raw)?);
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: u32, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![((n << 3) | 2) as u8, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn decodes_a_configmap_in_the_k8s_envelope() {
        let meta = [
            field(1, b"settings"),
            field(3, b"default"),
            field(11, &[field(1, b"app"), field(2, b"web")].concat()),
        ]
        .concat();
        let cm = [
            field(1, &meta),
            field(2, &[field(1, b"mode"), field(2, b"fast")].concat()),
            field(3, &[field(1, b"bin"), field(2, b"\x00\x01")].concat()),
        ]
        .concat();
        let unknown = [
            field(1, &[field(1, b"v1"), field(2, b"ConfigMap")].concat()),
            field(2, &cm),
        ]
        .concat();
        let body = [MAGIC, &unknown[..]].concat();
        let got = decode(&body).unwrap();
        assert_eq!(
            got,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "default", "labels": {"app": "web"}},
                "data": {"mode": "fast"}, "binaryData": {"bin": "AAE="}})
        );
    }

    fn varint_field(n: u32, v: u64) -> Vec<u8> {
        let mut out = vec![(n << 3) as u8];
        let mut v = v;
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    }

    fn envelope(api_version: &[u8], kind: &[u8], raw: &[u8]) -> Vec<u8> {
        let unknown = [
            field(1, &[field(1, api_version), field(2, kind)].concat()),
            field(2, raw),
        ]
        .concat();
        [MAGIC, &unknown[..]].concat()
    }

    #[test]
    fn empty_strings_are_the_omitted_zero_values_the_go_types_decode() {
        // gogo-protobuf writes every non-pointer string, empty or not.
        let meta = [field(1, b"robot"), field(2, b""), field(3, b"default")].concat();
        let sa = [
            field(1, &meta),
            field(3, &field(1, b"registry")),
            varint_field(4, 0),
        ]
        .concat();
        assert_eq!(
            decode(&envelope(b"v1", b"ServiceAccount", &sa)).unwrap(),
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": "robot", "namespace": "default"},
                "imagePullSecrets": [{"name": "registry"}],
                "automountServiceAccountToken": false})
        );
    }

    #[test]
    fn lease_times_are_micro_times_and_pointer_fields_keep_zero_values() {
        // 2026-01-01T00:00:00.123456789Z
        let renew = [varint_field(1, 1_767_225_600), varint_field(2, 123_456_789)].concat();
        let spec = [
            field(1, b""),
            varint_field(2, 15),
            field(4, &renew),
            varint_field(5, 0),
        ]
        .concat();
        let lease = [field(1, &field(1, b"leader")), field(2, &spec)].concat();
        assert_eq!(
            decode(&envelope(b"coordination.k8s.io/v1", b"Lease", &lease)).unwrap(),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "leader"},
                "spec": {"holderIdentity": "", "leaseDurationSeconds": 15,
                    "renewTime": "2026-01-01T00:00:00.123456Z", "leaseTransitions": 0}})
        );
    }

    #[test]
    fn core_event_times_drop_nanoseconds_and_zero_times_are_null() {
        let first = [varint_field(1, 1_767_225_600), varint_field(2, 5)].concat();
        let event = [
            field(1, &field(1, b"web.1")),
            field(2, &[field(1, b"ConfigMap"), field(3, b"web")].concat()),
            field(3, b"Synced"),
            field(6, &first),
            field(7, b""),
            varint_field(8, 2),
            field(10, b""),
        ]
        .concat();
        assert_eq!(
            decode(&envelope(b"v1", b"Event", &event)).unwrap(),
            json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1"},
                "involvedObject": {"kind": "ConfigMap", "name": "web"}, "reason": "Synced",
                "source": {}, "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": null,
                "count": 2, "eventTime": null, "reportingComponent": "", "reportingInstance": ""})
        );
    }

    #[test]
    fn base64_pads_like_the_standard_encoding() {
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn rbac_kinds_decode_their_rules_subjects_and_role_refs() {
        let subject = [
            field(1, b"ServiceAccount"),
            field(3, b"op"),
            field(4, b"demo"),
        ]
        .concat();
        let role_ref = [
            field(1, b"rbac.authorization.k8s.io"),
            field(2, b"ClusterRole"),
            field(3, b"view"),
        ]
        .concat();
        let raw = [
            field(1, &field(1, b"ops")),
            field(2, &subject),
            field(3, &role_ref),
        ]
        .concat();
        let body = envelope(b"rbac.authorization.k8s.io/v1", b"ClusterRoleBinding", &raw);
        assert_eq!(
            decode(&body).unwrap(),
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "ops"},
                "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "demo"}],
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            })
        );
        let rule = [
            field(1, b"get"),
            field(1, b"list"),
            field(2, b""),
            field(3, b"configmaps"),
        ]
        .concat();
        let raw = [field(1, &field(1, b"r")), field(2, &rule)].concat();
        let role = decode(&envelope(b"rbac.authorization.k8s.io/v1", b"Role", &raw)).unwrap();
        assert_eq!(
            role["rules"],
            json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}])
        );
    }

    #[test]
    fn services_decode_their_ports_target_ports_and_flags() {
        let target = [varint_field(1, 1), field(3, b"web")].concat();
        let port = [
            field(1, b"http"),
            field(2, b"TCP"),
            varint_field(3, 80),
            field(4, &target),
            varint_field(5, 0),
        ]
        .concat();
        let numeric = [varint_field(3, 53), field(4, &varint_field(2, 5353))].concat();
        let spec = [
            field(1, &port),
            field(1, &numeric),
            field(2, &[field(1, b"app"), field(2, b"web")].concat()),
            field(4, b"NodePort"),
            varint_field(13, 0),
        ]
        .concat();
        let svc = [field(1, &field(1, b"web")), field(2, &spec)].concat();
        assert_eq!(
            decode(&envelope(b"v1", b"Service", &svc)).unwrap(),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                   "spec": {"ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "web"},
                                      {"port": 53, "targetPort": 5353}],
                            "selector": {"app": "web"}, "type": "NodePort"},
                   "status": {"loadBalancer": {}}})
        );
    }

    #[test]
    fn garbage_and_unsupported_kinds_are_errors_not_panics() {
        assert_eq!(decode(b"nope"), Err(DecodeError::NoEnvelope));
        assert_eq!(
            DecodeError::NotRegistered {
                api_version: "example.com/v1".into(),
                kind: "Widget".into()
            }
            .to_string(),
            "no kind \"Widget\" is registered for version \"example.com/v1\" in scheme \"pkg/runtime/scheme.go:110\""
        );
        assert!(decode(b"k8s\0\x0a\xff").is_err());
        // A custom resource, a message that is no kind, a list.
        for (api_version, kind) in [
            (&b"example.com/v1"[..], &b"Widget"[..]),
            (b"v1", b"PodSpec"),
            (b"apps/v1", b"DeploymentList"),
        ] {
            let body = envelope(api_version, kind, b"");
            let why = DecodeError::NotRegistered {
                api_version: String::from_utf8_lossy(api_version).into_owned(),
                kind: String::from_utf8_lossy(kind).into_owned(),
            };
            assert_eq!(decode(&body), Err(why));
        }
        // A string field sent as a varint.
        let body = envelope(b"v1", b"Pod", &varint_field(1, 3));
        assert_eq!(
            decode(&body),
            Err(DecodeError::Malformed(
                "a k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta has the wrong wire type".into()
            ))
        );
    }

    /// Each fixture of `tests/fixtures/protobuf/` is a body client-go's protobuf serializer
    /// wrote for a Go object (`<name>.pb`) and the JSON `encoding/json` writes for the object
    /// kube-apiserver decodes from it (`<name>.json`), written by a Go program against
    /// k8s.io/api v0.34.12.
    macro_rules! fixtures {
        ($($name:literal),* $(,)?) => {
            [$((
                $name,
                &include_bytes!(concat!("../tests/fixtures/protobuf/", $name, ".pb"))[..],
                include_str!(concat!("../tests/fixtures/protobuf/", $name, ".json")),
            )),*]
        };
    }

    #[test]
    fn bodies_client_go_wrote_decode_to_the_json_it_sends_for_the_same_object() {
        let fixtures = fixtures!(
            "configmap",
            "controllerrevision",
            "cronjob",
            "daemonset",
            "deployment",
            "deployment-invalid",
            "deployment-kubectl",
            "endpointslice",
            "event",
            "hpa",
            "hpa-v1",
            "ingress",
            "ingressclass",
            "job",
            "job-kubectl",
            "lease",
            "limitrange",
            "networkpolicy",
            "node",
            "pdb",
            "pod",
            "pod-invalid",
            "pod-kubectl",
            "pv",
            "pvc",
            "replicaset",
            "resourcequota",
            "secret",
            "service",
            "statefulset",
            "storageclass",
        );
        for (name, body, expected) in fixtures {
            let expected: Value = serde_json::from_str(expected).unwrap();
            assert_eq!(decode(body).unwrap(), expected, "{name}");
        }
    }

    #[test]
    fn the_table_names_every_message_its_fields_refer_to() {
        for descs in TABLE.messages.values() {
            for desc in descs {
                if !desc.ty.starts_with('@')
                    && !matches!(
                        desc.ty.as_str(),
                        "string" | "bool" | "int32" | "int64" | "bytes"
                    )
                {
                    assert!(TABLE.messages.contains_key(&desc.ty), "{}", desc.ty);
                }
            }
        }
        assert!(TABLE.kinds["batch/v1"].contains_key("CronJob"));
    }

    #[test]
    fn durations_are_written_as_go_writes_them() {
        for (nanos, text) in [
            (0, "0s"),
            (5, "5ns"),
            (2_000, "2µs"),
            (1_500_000, "1.5ms"),
            (300_000_000, "300ms"),
            (1_500_000_000, "1.5s"),
            (120_000_000_000, "2m0s"),
            (3_600_000_000_000, "1h0m0s"),
            (-90_000_000_000, "-1m30s"),
        ] {
            assert_eq!(go_duration(nanos), text);
        }
    }
}
