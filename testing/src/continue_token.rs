//! The `continue` token of a paged list, as kube-apiserver writes and reads it
//! (`k8s.io/apiserver/pkg/storage/continue.go`): unpadded URL-safe base64 of
//! `{"v":"meta.k8s.io/v1","rv":<list resourceVersion>,"start":"<key after the page>\u0000"}`, the
//! start key relative to the list's key prefix (`name` in a namespace, `namespace/name` across
//! namespaces). A token that does not decode is refused with upstream's words: `invalid continue
//! token: continue key is not valid: <why>`, the why being Go's base64 or JSON error.

use serde_json::Value;

use crate::go::scanner;
use crate::validation::base64::RAW_URL;

/// The `v` every token carries.
const VERSION: &str = "meta.k8s.io/v1";

/// The token that continues a list at resourceVersion `rv` after the object `(namespace, name)`;
/// `in_namespace` is the namespace the list was confined to, if any.
pub(crate) fn encode(rv: u64, after: &(String, String), in_namespace: Option<&str>) -> String {
    let (namespace, name) = after;
    let start = match in_namespace {
        None if !namespace.is_empty() => format!("{namespace}/{name}\u{0}"),
        _ => format!("{name}\u{0}"),
    };
    // In the field order of upstream's Go struct, so the token is byte for byte upstream's.
    let start = Value::String(start).to_string();
    let token = format!(r#"{{"v":"{VERSION}","rv":{rv},"start":{start}}}"#);
    RAW_URL.encode(token.as_bytes())
}

/// The resourceVersion and the object after which a list continues, from `token` of a list
/// confined to `in_namespace` (if any); or the message of the 400 kube-apiserver answers.
pub(crate) fn decode(
    token: &str,
    in_namespace: Option<&str>,
) -> Result<(u64, (String, String)), String> {
    let invalid = |why: String| format!("invalid continue token: continue key is not valid: {why}");
    let bytes = RAW_URL.decode(token).map_err(invalid)?;
    let value: Value = parse_json(&bytes).map_err(invalid)?;
    let version_error =
        || invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into());
    if value["v"].as_str() != Some(VERSION) {
        return Err(version_error());
    }
    let rv = value["rv"]
        .as_u64()
        .filter(|rv| *rv > 0)
        .ok_or_else(version_error)?;
    let start = value["start"].as_str().unwrap_or_default();
    if start.is_empty() {
        return Err(invalid("encoded start key empty".into()));
    }
    // Upstream refuses a key that path.Clean would change (no climbing out of the prefix).
    if start
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(invalid(start.to_owned()));
    }
    let start = start.strip_suffix('\u{0}').unwrap_or(start);
    let key = match (in_namespace, start.split_once('/')) {
        (Some(namespace), _) => (namespace.to_owned(), start.to_owned()),
        (None, Some((namespace, name))) => (namespace.to_owned(), name.to_owned()),
        (None, None) => (String::new(), start.to_owned()),
    };
    Ok((rv, key))
}

/// `bytes` parsed as JSON, or the error Go's `encoding/json` reports for them.
fn parse_json(bytes: &[u8]) -> Result<Value, String> {
    if let Some(error) = scanner::syntax_error(bytes) {
        return Err(error);
    }
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_round_trips_in_and_across_namespaces() {
        let after = ("team-a".to_owned(), "web".to_owned());
        let in_ns = encode(7, &after, Some("team-a"));
        assert_eq!(decode(&in_ns, Some("team-a")), Ok((7, after.clone())));
        let across = encode(7, &after, None);
        assert_eq!(decode(&across, None), Ok((7, after)));
        let cluster = encode(9, &(String::new(), "node-1".into()), None);
        assert_eq!(
            decode(&cluster, None),
            Ok((9, (String::new(), "node-1".into())))
        );
    }

    #[test]
    fn the_encoding_is_upstreams() {
        // base64.RawURLEncoding.EncodeToString of the continueToken JSON, as Go writes it.
        assert_eq!(
            encode(12, &("ns".into(), "a".into()), Some("ns")),
            "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIsInN0YXJ0IjoiYVx1MDAwMCJ9"
        );
    }

    #[test]
    fn garbage_is_refused_with_gos_words() {
        // "garbage" is valid unpadded base64: its first byte is 0x81.
        assert_eq!(
            decode("garbage", None).unwrap_err(),
            "invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value"
        );
        assert_eq!(
            decode("abc=", None).unwrap_err(),
            "invalid continue token: continue key is not valid: illegal base64 data at input byte 3"
        );
        assert_eq!(
            decode("", None).unwrap_err(),
            "invalid continue token: continue key is not valid: unexpected end of JSON input"
        );
        let old_version = RAW_URL.encode(br#"{"v":"v0","rv":1,"start":"a\u0000"}"#);
        assert_eq!(
            decode(&old_version, None).unwrap_err(),
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        );
        let climbing = RAW_URL.encode(br#"{"v":"meta.k8s.io/v1","rv":1,"start":"../x"}"#);
        assert_eq!(
            decode(&climbing, None).unwrap_err(),
            "invalid continue token: continue key is not valid: ../x"
        );
    }
}
