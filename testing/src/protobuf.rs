//! Decoding of the Kubernetes protobuf envelope for the built-in kinds client-go based clients
//! send that way: what kubectl's typed generators create (`kubectl create
//! configmap|secret|namespace|serviceaccount|service|role|clusterrole|rolebinding|clusterrolebinding`,
//! and the Endpoints controllers write),
//! the self reviews of `kubectl auth can-i|whoami`, and the Leases and Events of leader election
//! and event recorders. Responses are always JSON, which those clients accept too; other kinds
//! sent as protobuf get 415.
//!
//! The envelope is the 4-byte magic `k8s\0` followed by a `runtime.Unknown` message
//! (`typeMeta` = 1 {apiVersion = 1, kind = 2}, `raw` = 2); field numbers of the objects are those
//! of `k8s.io/api/{core,coordination,events,rbac,authorization,authentication}/v1/generated.proto`
//! and `apimachinery/pkg/apis/meta/v1/generated.proto`.

use serde_json::{Map, Value, json};

pub(crate) const MAGIC: &[u8] = b"k8s\0";

/// One field of a message: its number and its value.
pub(crate) enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// Reads the fields of one message, in order.
pub(crate) fn fields(mut buf: &[u8]) -> Result<Vec<(u32, Field<'_>)>, String> {
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

/// How a field's wire value becomes JSON. The Go types decode protobuf's always-written zero
/// values (empty strings, `0`, empty times) into zero values that their JSON omits
/// (`omitempty`), so those are left out here too; pointer fields (`*string`, `*int32`, `*bool`)
/// are written only when set, so whatever they carry is kept.
#[derive(Clone, Copy)]
enum Type {
    /// `string` with `omitempty`: an empty one is left out.
    Str,
    /// `*string`: kept even when empty.
    OptStr,
    /// `*bool`.
    Bool,
    /// `bool` with `omitempty`: false is left out.
    Flag,
    /// `intstr.IntOrString` (`type` = 1, `intVal` = 2, `strVal` = 3): the number or the string.
    IntOrStr,
    /// `int32`/`int64` with `omitempty`: zero is left out.
    Int,
    /// `*int32`/`*int64`: kept even when zero.
    OptInt,
    /// `metav1.Time`: seconds only (the Go decoder drops the nanoseconds), RFC 3339.
    Time,
    /// `metav1.MicroTime`: RFC 3339 with microseconds.
    MicroTime,
    /// A nested message.
    Message(&'static [FieldSpec]),
    /// `repeated` of a message.
    Messages(&'static [FieldSpec]),
    /// `repeated string`.
    Strings,
    /// `map<string, string>`.
    StringMap,
    /// `map<string, bytes>`, values as base64.
    BytesMap,
}

/// A field of a message: number, JSON name, type.
type FieldSpec = (u32, &'static str, Type);

/// `metav1.OwnerReference`.
const OWNER_REFERENCE: &[FieldSpec] = &[
    (1, "kind", Type::Str),
    (3, "name", Type::Str),
    (4, "uid", Type::Str),
    (5, "apiVersion", Type::Str),
    (6, "controller", Type::Bool),
    (7, "blockOwnerDeletion", Type::Bool),
];

/// `metav1.ObjectMeta`, without what only the server sets (`selfLink`, timestamps, managed
/// fields).
const OBJECT_META: &[FieldSpec] = &[
    (1, "name", Type::Str),
    (2, "generateName", Type::Str),
    (3, "namespace", Type::Str),
    (5, "uid", Type::Str),
    (6, "resourceVersion", Type::Str),
    (7, "generation", Type::Int),
    (10, "deletionGracePeriodSeconds", Type::OptInt),
    (11, "labels", Type::StringMap),
    (12, "annotations", Type::StringMap),
    (13, "ownerReferences", Type::Messages(OWNER_REFERENCE)),
    (14, "finalizers", Type::Strings),
];

const METADATA: FieldSpec = (1, "metadata", Type::Message(OBJECT_META));

/// `core/v1.ObjectReference`.
const OBJECT_REFERENCE: &[FieldSpec] = &[
    (1, "kind", Type::Str),
    (2, "namespace", Type::Str),
    (3, "name", Type::Str),
    (4, "uid", Type::Str),
    (5, "apiVersion", Type::Str),
    (6, "resourceVersion", Type::Str),
    (7, "fieldPath", Type::Str),
];

/// `core/v1.EventSource`.
const EVENT_SOURCE: &[FieldSpec] = &[(1, "component", Type::Str), (2, "host", Type::Str)];

/// `EventSeries` of both event versions.
const EVENT_SERIES: &[FieldSpec] = &[
    (1, "count", Type::Int),
    (2, "lastObservedTime", Type::MicroTime),
];

/// `rbac/v1.PolicyRule`.
const POLICY_RULE: &[FieldSpec] = &[
    (1, "verbs", Type::Strings),
    (2, "apiGroups", Type::Strings),
    (3, "resources", Type::Strings),
    (4, "resourceNames", Type::Strings),
    (5, "nonResourceURLs", Type::Strings),
];

/// Role and ClusterRole (a ClusterRole's `aggregationRule` is not read).
const ROLE: &[FieldSpec] = &[METADATA, (2, "rules", Type::Messages(POLICY_RULE))];

/// RoleBinding and ClusterRoleBinding: `subjects` and `roleRef`.
const BINDING: &[FieldSpec] = &[
    METADATA,
    (
        2,
        "subjects",
        Type::Messages(&[
            (1, "kind", Type::Str),
            (2, "apiGroup", Type::Str),
            (3, "name", Type::Str),
            (4, "namespace", Type::Str),
        ]),
    ),
    (
        3,
        "roleRef",
        Type::Message(&[
            (1, "apiGroup", Type::Str),
            (2, "kind", Type::Str),
            (3, "name", Type::Str),
        ]),
    ),
];

/// `authorization/v1.SelfSubjectAccessReviewSpec`.
const ACCESS_REVIEW_SPEC: &[FieldSpec] = &[
    (
        1,
        "resourceAttributes",
        Type::Message(&[
            (1, "namespace", Type::Str),
            (2, "verb", Type::Str),
            (3, "group", Type::Str),
            (4, "version", Type::Str),
            (5, "resource", Type::Str),
            (6, "subresource", Type::Str),
            (7, "name", Type::Str),
        ]),
    ),
    (
        2,
        "nonResourceAttributes",
        Type::Message(&[(1, "path", Type::Str), (2, "verb", Type::Str)]),
    ),
];

/// `core/v1.ServiceSpec`.
const SERVICE_SPEC: &[FieldSpec] = &[
    (
        1,
        "ports",
        Type::Messages(&[
            (1, "name", Type::Str),
            (2, "protocol", Type::Str),
            (6, "appProtocol", Type::OptStr),
            (3, "port", Type::Int),
            (4, "targetPort", Type::IntOrStr),
            (5, "nodePort", Type::Int),
        ]),
    ),
    (2, "selector", Type::StringMap),
    (3, "clusterIP", Type::Str),
    (18, "clusterIPs", Type::Strings),
    (4, "type", Type::Str),
    (5, "externalIPs", Type::Strings),
    (7, "sessionAffinity", Type::Str),
    (8, "loadBalancerIP", Type::Str),
    (9, "loadBalancerSourceRanges", Type::Strings),
    (10, "externalName", Type::Str),
    (11, "externalTrafficPolicy", Type::Str),
    (12, "healthCheckNodePort", Type::Int),
    (13, "publishNotReadyAddresses", Type::Flag),
    (
        14,
        "sessionAffinityConfig",
        Type::Message(&[(
            1,
            "clientIP",
            Type::Message(&[(1, "timeoutSeconds", Type::OptInt)]),
        )]),
    ),
    (19, "ipFamilies", Type::Strings),
    (17, "ipFamilyPolicy", Type::OptStr),
    (20, "allocateLoadBalancerNodePorts", Type::Bool),
    (21, "loadBalancerClass", Type::OptStr),
    (22, "internalTrafficPolicy", Type::OptStr),
    (23, "trafficDistribution", Type::OptStr),
];

/// `core/v1.ServiceStatus`.
const SERVICE_STATUS: &[FieldSpec] = &[
    (
        1,
        "loadBalancer",
        Type::Message(&[(
            1,
            "ingress",
            Type::Messages(&[
                (1, "ip", Type::Str),
                (2, "hostname", Type::Str),
                (3, "ipMode", Type::OptStr),
                (
                    4,
                    "ports",
                    Type::Messages(&[
                        (1, "port", Type::Int),
                        (2, "protocol", Type::Str),
                        (3, "error", Type::OptStr),
                    ]),
                ),
            ]),
        )]),
    ),
    (
        2,
        "conditions",
        Type::Messages(&[
            (1, "type", Type::Str),
            (2, "status", Type::Str),
            (3, "observedGeneration", Type::Int),
            (4, "lastTransitionTime", Type::Time),
            (5, "reason", Type::Str),
            (6, "message", Type::Str),
        ]),
    ),
];

/// `core/v1.EndpointAddress`.
const ENDPOINT_ADDRESS: &[FieldSpec] = &[
    (1, "ip", Type::Str),
    (3, "hostname", Type::Str),
    (4, "nodeName", Type::OptStr),
    (2, "targetRef", Type::Message(OBJECT_REFERENCE)),
];

/// The kinds decoded, by apiVersion and kind, with their fields (`generated.proto`).
const KINDS: &[(&str, &str, &[FieldSpec])] = &[
    ("rbac.authorization.k8s.io/v1", "Role", ROLE),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", ROLE),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", BINDING),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        BINDING,
    ),
    (
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        &[METADATA, (2, "spec", Type::Message(ACCESS_REVIEW_SPEC))],
    ),
    (
        "authorization.k8s.io/v1",
        "SelfSubjectRulesReview",
        &[
            METADATA,
            (2, "spec", Type::Message(&[(1, "namespace", Type::Str)])),
        ],
    ),
    ("authentication.k8s.io/v1", "SelfSubjectReview", &[METADATA]),
    (
        "v1",
        "ConfigMap",
        &[
            METADATA,
            (2, "data", Type::StringMap),
            (3, "binaryData", Type::BytesMap),
            (4, "immutable", Type::Bool),
        ],
    ),
    (
        "v1",
        "Secret",
        &[
            METADATA,
            (2, "data", Type::BytesMap),
            (3, "type", Type::Str),
            (4, "stringData", Type::StringMap),
            (5, "immutable", Type::Bool),
        ],
    ),
    (
        "v1",
        "Namespace",
        &[
            METADATA,
            (
                2,
                "spec",
                Type::Message(&[(1, "finalizers", Type::Strings)]),
            ),
        ],
    ),
    (
        "v1",
        "ServiceAccount",
        &[
            METADATA,
            (2, "secrets", Type::Messages(OBJECT_REFERENCE)),
            (
                3,
                "imagePullSecrets",
                Type::Messages(&[(1, "name", Type::Str)]),
            ),
            (4, "automountServiceAccountToken", Type::Bool),
        ],
    ),
    (
        "v1",
        "Service",
        &[
            METADATA,
            (2, "spec", Type::Message(SERVICE_SPEC)),
            (3, "status", Type::Message(SERVICE_STATUS)),
        ],
    ),
    (
        "v1",
        "Endpoints",
        &[
            METADATA,
            (
                2,
                "subsets",
                Type::Messages(&[
                    (1, "addresses", Type::Messages(ENDPOINT_ADDRESS)),
                    (2, "notReadyAddresses", Type::Messages(ENDPOINT_ADDRESS)),
                    (
                        3,
                        "ports",
                        Type::Messages(&[
                            (1, "name", Type::Str),
                            (2, "port", Type::Int),
                            (3, "protocol", Type::Str),
                            (4, "appProtocol", Type::OptStr),
                        ]),
                    ),
                ]),
            ),
        ],
    ),
    (
        "coordination.k8s.io/v1",
        "Lease",
        &[
            METADATA,
            (
                2,
                "spec",
                Type::Message(&[
                    (1, "holderIdentity", Type::OptStr),
                    (2, "leaseDurationSeconds", Type::OptInt),
                    (3, "acquireTime", Type::MicroTime),
                    (4, "renewTime", Type::MicroTime),
                    (5, "leaseTransitions", Type::OptInt),
                    (6, "strategy", Type::OptStr),
                    (7, "preferredHolder", Type::OptStr),
                ]),
            ),
        ],
    ),
    (
        "v1",
        "Event",
        &[
            METADATA,
            (2, "involvedObject", Type::Message(OBJECT_REFERENCE)),
            (3, "reason", Type::Str),
            (4, "message", Type::Str),
            (5, "source", Type::Message(EVENT_SOURCE)),
            (6, "firstTimestamp", Type::Time),
            (7, "lastTimestamp", Type::Time),
            (8, "count", Type::Int),
            (9, "type", Type::Str),
            (10, "eventTime", Type::MicroTime),
            (11, "series", Type::Message(EVENT_SERIES)),
            (12, "action", Type::Str),
            (13, "related", Type::Message(OBJECT_REFERENCE)),
            (14, "reportingComponent", Type::Str),
            (15, "reportingInstance", Type::Str),
        ],
    ),
    (
        "events.k8s.io/v1",
        "Event",
        &[
            METADATA,
            (2, "eventTime", Type::MicroTime),
            (3, "series", Type::Message(EVENT_SERIES)),
            (4, "reportingController", Type::Str),
            (5, "reportingInstance", Type::Str),
            (6, "action", Type::Str),
            (7, "reason", Type::Str),
            (8, "regarding", Type::Message(OBJECT_REFERENCE)),
            (9, "related", Type::Message(OBJECT_REFERENCE)),
            (10, "note", Type::Str),
            (11, "type", Type::Str),
            (12, "deprecatedSource", Type::Message(EVENT_SOURCE)),
            (13, "deprecatedFirstTimestamp", Type::Time),
            (14, "deprecatedLastTimestamp", Type::Time),
            (15, "deprecatedCount", Type::Int),
        ],
    ),
];

/// A `map<string, string>` (or `map<string, bytes>` rendered base64) entry.
fn map_entry(bytes: &[u8], values_are_bytes: bool) -> Result<(String, Value), String> {
    let mut key = String::new();
    let mut value = Value::String(String::new());
    for (n, f) in fields(bytes)? {
        match (n, f) {
            (1, Field::Bytes(b)) => key = string(b)?,
            (2, Field::Bytes(b)) if values_are_bytes => value = Value::String(base64(b)),
            (2, Field::Bytes(b)) => value = Value::String(string(b)?),
            _ => {}
        }
    }
    Ok((key, value))
}

/// A `Timestamp` message (`seconds` = 1, `nanos` = 2) as RFC 3339 in UTC, with microseconds for
/// a `MicroTime`; `None` for the empty message a zero time is written as.
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

/// Decodes one message of the given fields into a JSON object.
fn message(bytes: &[u8], schema: &[FieldSpec]) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (n, f) in fields(bytes)? {
        let Some(&(_, name, kind)) = schema.iter().find(|(number, _, _)| *number == n) else {
            continue;
        };
        let value = match (kind, f) {
            (Type::Str, Field::Bytes([])) => continue,
            (Type::Str | Type::OptStr, Field::Bytes(b)) => json!(string(b)?),
            (Type::Bool, Field::Varint(v)) => json!(v != 0),
            (Type::Flag, Field::Varint(0)) => continue,
            (Type::Flag, Field::Varint(_)) => json!(true),
            (Type::IntOrStr, Field::Bytes(b)) => int_or_string(b)?,
            (Type::Int, Field::Varint(0)) => continue,
            // Varints carry negative numbers in two's complement.
            (Type::Int | Type::OptInt, Field::Varint(v)) => json!(v as i64),
            (Type::Time | Type::MicroTime, Field::Bytes(b)) => {
                match timestamp(b, matches!(kind, Type::MicroTime))? {
                    Some(t) => json!(t),
                    None => continue,
                }
            }
            (Type::Message(inner), Field::Bytes(b)) => Value::Object(message(b, inner)?),
            (Type::Messages(inner), Field::Bytes(b)) => {
                push(&mut out, name, Value::Object(message(b, inner)?));
                continue;
            }
            (Type::Strings, Field::Bytes(b)) => {
                push(&mut out, name, json!(string(b)?));
                continue;
            }
            (Type::StringMap | Type::BytesMap, Field::Bytes(b)) => {
                let (key, value) = map_entry(b, matches!(kind, Type::BytesMap))?;
                if let Some(map) = out.entry(name).or_insert_with(|| json!({})).as_object_mut() {
                    map.insert(key, value);
                }
                continue;
            }
            _ => return Err(format!("field {name} has the wrong wire type")),
        };
        out.insert(name.into(), value);
    }
    Ok(out)
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

/// Appends to the array at `name`.
fn push(out: &mut Map<String, Value>, name: &str, item: Value) {
    if let Some(items) = out.entry(name).or_insert_with(|| json!([])).as_array_mut() {
        items.push(item);
    }
}

/// Decodes a protobuf request body into the JSON object, for the kinds of [`KINDS`].
pub(crate) fn decode(body: &[u8]) -> Result<Value, String> {
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or("the protobuf body lacks the k8s envelope")?;
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
    let schema = KINDS
        .iter()
        .find(|(v, k, _)| *v == api_version && *k == kind)
        .map(|(_, _, schema)| *schema)
        .ok_or_else(|| format!("protobuf is not supported for {api_version}/{kind}"))?;
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!(kind));
    out.extend(message(raw, schema)?);
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
    fn core_event_times_drop_nanoseconds_and_zero_times_are_left_out() {
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
                "firstTimestamp": "2026-01-01T00:00:00Z", "count": 2})
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
                            "selector": {"app": "web"}, "type": "NodePort"}})
        );
    }

    #[test]
    fn garbage_and_unsupported_kinds_are_errors_not_panics() {
        assert!(decode(b"nope").is_err());
        assert!(decode(b"k8s\0\x0a\xff").is_err());
        let unknown = [
            field(1, &[field(1, b"v1"), field(2, b"Pod")].concat()),
            field(2, b""),
        ]
        .concat();
        assert!(decode(&[MAGIC, &unknown[..]].concat()).is_err());
    }
}
