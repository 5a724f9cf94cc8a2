//! Decoding of the Kubernetes protobuf envelope for the few built-in kinds kubectl's typed
//! generators send that way (`kubectl create configmap|secret|namespace`). Responses are always
//! JSON, which those clients accept too; other kinds sent as protobuf get 415.
//!
//! The envelope is the 4-byte magic `k8s\0` followed by a `runtime.Unknown` message
//! (`typeMeta` = 1 {apiVersion = 1, kind = 2}, `raw` = 2); field numbers of the objects are those
//! of `k8s.io/api/core/v1/generated.proto` and `apimachinery/pkg/apis/meta/v1/generated.proto`.

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

fn insert_entry(obj: &mut Map<String, Value>, field: &str, entry: (String, Value)) {
    let map = obj.entry(field).or_insert_with(|| json!({}));
    if let Some(m) = map.as_object_mut() {
        m.insert(entry.0, entry.1);
    }
}

fn owner_reference(bytes: &[u8]) -> Result<Value, String> {
    let mut out = Map::new();
    for (n, f) in fields(bytes)? {
        match (n, f) {
            (1, Field::Bytes(b)) => drop(out.insert("kind".into(), json!(string(b)?))),
            (3, Field::Bytes(b)) => drop(out.insert("name".into(), json!(string(b)?))),
            (4, Field::Bytes(b)) => drop(out.insert("uid".into(), json!(string(b)?))),
            (5, Field::Bytes(b)) => drop(out.insert("apiVersion".into(), json!(string(b)?))),
            (6, Field::Varint(v)) => drop(out.insert("controller".into(), json!(v != 0))),
            (7, Field::Varint(v)) => drop(out.insert("blockOwnerDeletion".into(), json!(v != 0))),
            _ => {}
        }
    }
    Ok(Value::Object(out))
}

pub(crate) fn object_meta(bytes: &[u8]) -> Result<Value, String> {
    let mut out = Map::new();
    for (n, f) in fields(bytes)? {
        match (n, f) {
            (1, Field::Bytes(b)) => drop(out.insert("name".into(), json!(string(b)?))),
            (2, Field::Bytes(b)) => drop(out.insert("generateName".into(), json!(string(b)?))),
            (3, Field::Bytes(b)) => drop(out.insert("namespace".into(), json!(string(b)?))),
            (6, Field::Bytes(b)) => drop(out.insert("resourceVersion".into(), json!(string(b)?))),
            (11, Field::Bytes(b)) => insert_entry(&mut out, "labels", map_entry(b, false)?),
            (12, Field::Bytes(b)) => insert_entry(&mut out, "annotations", map_entry(b, false)?),
            (13, Field::Bytes(b)) => {
                let refs = out.entry("ownerReferences").or_insert_with(|| json!([]));
                if let Some(a) = refs.as_array_mut() {
                    a.push(owner_reference(b)?);
                }
            }
            (14, Field::Bytes(b)) => {
                let list = out.entry("finalizers").or_insert_with(|| json!([]));
                if let Some(a) = list.as_array_mut() {
                    a.push(json!(string(b)?));
                }
            }
            _ => {}
        }
    }
    Ok(Value::Object(out))
}

/// Decodes a protobuf request body into the JSON object, for the kinds listed in the module docs.
pub fn decode(body: &[u8]) -> Result<Value, String> {
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
    if let Some(decoded) = super::auth::proto::decode(&api_version, &kind, raw) {
        return decoded;
    }
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!(kind));
    let fields = fields(raw)?;
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "ConfigMap") => {
            for (n, f) in fields {
                match (n, f) {
                    (1, Field::Bytes(b)) => drop(out.insert("metadata".into(), object_meta(b)?)),
                    (2, Field::Bytes(b)) => insert_entry(&mut out, "data", map_entry(b, false)?),
                    (3, Field::Bytes(b)) => {
                        insert_entry(&mut out, "binaryData", map_entry(b, true)?)
                    }
                    (4, Field::Varint(v)) => drop(out.insert("immutable".into(), json!(v != 0))),
                    _ => {}
                }
            }
        }
        ("v1", "Secret") => {
            for (n, f) in fields {
                match (n, f) {
                    (1, Field::Bytes(b)) => drop(out.insert("metadata".into(), object_meta(b)?)),
                    (2, Field::Bytes(b)) => insert_entry(&mut out, "data", map_entry(b, true)?),
                    (3, Field::Bytes(b)) => drop(out.insert("type".into(), json!(string(b)?))),
                    (4, Field::Bytes(b)) => {
                        insert_entry(&mut out, "stringData", map_entry(b, false)?)
                    }
                    (5, Field::Varint(v)) => drop(out.insert("immutable".into(), json!(v != 0))),
                    _ => {}
                }
            }
        }
        ("v1", "Namespace") => {
            for (n, f) in fields {
                match (n, f) {
                    (1, Field::Bytes(b)) => drop(out.insert("metadata".into(), object_meta(b)?)),
                    (2, Field::Bytes(spec)) => {
                        let mut finalizers = Vec::new();
                        for (n, f) in self::fields(spec)? {
                            if let (1, Field::Bytes(b)) = (n, f) {
                                finalizers.push(json!(string(b)?));
                            }
                        }
                        out.insert("spec".into(), json!({"finalizers": finalizers}));
                    }
                    _ => {}
                }
            }
        }
        _ => {
            return Err(format!(
                "protobuf is not supported for {api_version}/{kind}"
            ));
        }
    }
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

    #[test]
    fn base64_pads_like_the_standard_encoding() {
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
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
