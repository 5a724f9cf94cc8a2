//! The protobuf form of the OpenAPI v2 document, which client-go's `OpenAPISchema` asks for
//! (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): gnostic's
//! `openapi_v2.Document` (`openapiv2/OpenAPIv2.proto` of google/gnostic-models), encoded from
//! the JSON document as kube-openapi does (`ParseDocument`, then `proto.Marshal`).
//!
//! Only what the published JSON holds is encoded: `swagger`, `info`, the `paths` with their
//! `patch` operations (query parameters, responses, vendor extensions) and the `definitions`
//! with every Schema keyword. Vendor extensions, `default`, `enum` and `example` values are
//! gnostic `Any`s carrying the value as YAML text (JSON is YAML).

use serde_json::{Map, Value};

/// A protobuf message being written.
#[derive(Default)]
struct Message(Vec<u8>);

impl Message {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint(u64::from(field) << 3 | u64::from(wire));
    }

    fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, 2);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    fn message(&mut self, field: u32, message: Message) {
        self.bytes(field, &message.0);
    }

    /// A string field; proto3 leaves empty strings out.
    fn string(&mut self, field: u32, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }

    fn bool(&mut self, field: u32, b: bool) {
        if b {
            self.key(field, 0);
            self.varint(1);
        }
    }

    fn int64(&mut self, field: u32, n: i64) {
        self.key(field, 0);
        self.varint(n as u64);
    }

    fn double(&mut self, field: u32, f: f64) {
        self.key(field, 1);
        self.0.extend_from_slice(&f.to_le_bytes());
    }
}

/// gnostic's `Any`: the value as YAML text.
fn any(value: &Value) -> Message {
    let mut m = Message::default();
    m.string(2, &value.to_string());
    m
}

/// `repeated NamedAny vendor_extension = field`: the `x-` keys of `object`.
fn vendor_extensions(m: &mut Message, field: u32, object: &Map<String, Value>) {
    for (name, value) in object.iter().filter(|(k, _)| k.starts_with("x-")) {
        let mut named = Message::default();
        named.string(1, name);
        named.message(2, any(value));
        m.message(field, named);
    }
}

/// `openapi_v2.Schema`.
fn schema(value: &Value) -> Message {
    let mut m = Message::default();
    let Value::Object(s) = value else {
        return m;
    };
    for (key, v) in s {
        match key.as_str() {
            "$ref" => m.string(1, v.as_str().unwrap_or_default()),
            "format" => m.string(2, v.as_str().unwrap_or_default()),
            "title" => m.string(3, v.as_str().unwrap_or_default()),
            "description" => m.string(4, v.as_str().unwrap_or_default()),
            "default" => m.message(5, any(v)),
            "multipleOf" => m.double(6, v.as_f64().unwrap_or_default()),
            "maximum" => m.double(7, v.as_f64().unwrap_or_default()),
            "exclusiveMaximum" => m.bool(8, v.as_bool().unwrap_or_default()),
            "minimum" => m.double(9, v.as_f64().unwrap_or_default()),
            "exclusiveMinimum" => m.bool(10, v.as_bool().unwrap_or_default()),
            "maxLength" => m.int64(11, v.as_i64().unwrap_or_default()),
            "minLength" => m.int64(12, v.as_i64().unwrap_or_default()),
            "pattern" => m.string(13, v.as_str().unwrap_or_default()),
            "maxItems" => m.int64(14, v.as_i64().unwrap_or_default()),
            "minItems" => m.int64(15, v.as_i64().unwrap_or_default()),
            "uniqueItems" => m.bool(16, v.as_bool().unwrap_or_default()),
            "maxProperties" => m.int64(17, v.as_i64().unwrap_or_default()),
            "minProperties" => m.int64(18, v.as_i64().unwrap_or_default()),
            "required" => strings(v).for_each(|r| m.bytes(19, r.as_bytes())),
            "enum" => v
                .as_array()
                .into_iter()
                .flatten()
                .for_each(|e| m.message(20, any(e))),
            "additionalProperties" => {
                // AdditionalPropertiesItem: oneof schema = 1, boolean = 2.
                let mut item = Message::default();
                match v {
                    Value::Bool(b) => {
                        item.key(2, 0);
                        item.varint(u64::from(*b));
                    }
                    other => item.message(1, schema(other)),
                }
                m.message(21, item);
            }
            "type" => {
                let mut item = Message::default();
                strings(v).for_each(|t| item.bytes(1, t.as_bytes()));
                m.message(22, item);
            }
            "items" => {
                let mut item = Message::default();
                match v {
                    Value::Array(all) => all.iter().for_each(|s| item.message(1, schema(s))),
                    one => item.message(1, schema(one)),
                }
                m.message(23, item);
            }
            "allOf" => v
                .as_array()
                .into_iter()
                .flatten()
                .for_each(|s| m.message(24, schema(s))),
            "properties" => m.message(25, named_schemas(v)),
            "discriminator" => m.string(26, v.as_str().unwrap_or_default()),
            "readOnly" => m.bool(27, v.as_bool().unwrap_or_default()),
            "example" => m.message(30, any(v)),
            _ => {}
        }
    }
    vendor_extensions(&mut m, 31, s);
    m
}

/// A string or an array of strings, as its strings.
fn strings(v: &Value) -> impl Iterator<Item = &str> {
    let many = v.as_array().map(|a| a.iter().filter_map(Value::as_str));
    let one = v.as_str();
    many.into_iter().flatten().chain(one)
}

/// `Properties` / `Definitions`: `repeated NamedSchema additional_properties = 1`.
fn named_schemas(v: &Value) -> Message {
    let mut m = Message::default();
    for (name, s) in v.as_object().into_iter().flatten() {
        let mut named = Message::default();
        named.string(1, name);
        named.message(2, schema(s));
        m.message(1, named);
    }
    m
}

/// `Operation`, with query parameters and responses.
fn operation(op: &Map<String, Value>) -> Message {
    let mut m = Message::default();
    m.string(5, op["operationId"].as_str().unwrap_or_default());
    for p in op
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        // ParametersItem{parameter} > Parameter{non_body_parameter} >
        // NonBodyParameter{query_parameter_sub_schema} > QueryParameterSubSchema.
        let mut query = Message::default();
        query.string(2, p["in"].as_str().unwrap_or_default());
        query.string(4, p["name"].as_str().unwrap_or_default());
        query.string(6, p["type"].as_str().unwrap_or_default());
        query.bool(20, p["uniqueItems"].as_bool().unwrap_or_default());
        let mut non_body = Message::default();
        non_body.message(3, query);
        let mut parameter = Message::default();
        parameter.message(2, non_body);
        let mut item = Message::default();
        item.message(1, parameter);
        m.message(8, item);
    }
    let mut responses = Message::default();
    for (code, r) in op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let mut response = Message::default();
        response.string(1, r["description"].as_str().unwrap_or_default());
        let mut value = Message::default();
        value.message(1, response);
        let mut named = Message::default();
        named.string(1, code);
        named.message(2, value);
        responses.message(1, named);
    }
    m.message(9, responses);
    vendor_extensions(&mut m, 13, op);
    m
}

/// `openapi_v2.Document` of the JSON v2 document.
pub(crate) fn encode(doc: &Value) -> Vec<u8> {
    let mut m = Message::default();
    m.string(1, doc["swagger"].as_str().unwrap_or_default());
    let mut info = Message::default();
    info.string(1, doc["info"]["title"].as_str().unwrap_or_default());
    info.string(2, doc["info"]["version"].as_str().unwrap_or_default());
    m.message(2, info);
    let mut paths = Message::default();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        let mut path_item = Message::default();
        for (method, field) in [
            ("get", 2),
            ("put", 3),
            ("post", 4),
            ("delete", 5),
            ("patch", 8),
        ] {
            if let Some(op) = item.get(method).and_then(Value::as_object) {
                path_item.message(field, operation(op));
            }
        }
        let mut named = Message::default();
        named.string(1, path);
        named.message(2, path_item);
        paths.message(2, named);
    }
    m.message(8, paths);
    m.message(9, named_schemas(&doc["definitions"]));
    m.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protobuf::{Field, fields, string};
    use serde_json::json;

    fn message_fields(bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
        fields(bytes)
            .unwrap()
            .into_iter()
            .map(|(n, f)| match f {
                Field::Bytes(b) => (n, b.to_vec()),
                Field::Varint(v) => (n, v.to_le_bytes().to_vec()),
            })
            .collect()
    }

    #[test]
    fn definitions_encode_as_named_schemas_with_extensions_as_yaml() {
        let doc = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": "v1.34.0"},
            "paths": {},
            "definitions": {"a.B": {
                "type": "object",
                "properties": {"l": {"type": "array", "items": {"type": "string"},
                                     "x-kubernetes-patch-strategy": "merge"}},
            }},
        });
        let top = message_fields(&encode(&doc));
        assert_eq!(top[0], (1, b"2.0".to_vec()));
        let (_, definitions) = top.iter().find(|(n, _)| *n == 9).unwrap();
        let named = message_fields(&message_fields(definitions)[0].1);
        assert_eq!(string(&named[0].1).unwrap(), "a.B");
        let schema = message_fields(&named[1].1);
        let (_, props) = schema.iter().find(|(n, _)| *n == 25).unwrap();
        let prop = message_fields(&message_fields(props)[0].1);
        let l = message_fields(&prop[1].1);
        let (_, ext) = l.iter().find(|(n, _)| *n == 31).unwrap();
        let ext = message_fields(ext);
        assert_eq!(string(&ext[0].1).unwrap(), "x-kubernetes-patch-strategy");
        let yaml = message_fields(&ext[1].1);
        assert_eq!(yaml, [(2, b"\"merge\"".to_vec())]);
    }
}
