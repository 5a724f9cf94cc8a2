//! YAML request bodies: `application/yaml` creates and updates, and server-side apply patches
//! (`application/apply-patch+yaml`), read into the JSON model every other body uses. JSON is
//! YAML, so JSON bodies under these types parse too.

use serde_json::Value;

/// Parses one YAML document into JSON values; `Err` is the parser's message
/// (`did not find expected key at line 2 column 1`).
pub fn decode(body: &[u8]) -> Result<Value, String> {
    serde_yaml_ng::from_slice::<Value>(body).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::decode;
    use serde_json::json;

    #[test]
    fn yaml_and_json_bodies_read_alike() {
        let yaml = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  n: \"1\"\n";
        let expected = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a"}, "data": {"n": "1"}});
        assert_eq!(decode(yaml).unwrap(), expected);
        assert_eq!(decode(expected.to_string().as_bytes()).unwrap(), expected);
        assert!(decode(b"metadata: [unclosed").is_err());
    }
}
