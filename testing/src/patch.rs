//! JSON patch (RFC 6902) and JSON merge patch (RFC 7386) exactly as kube-apiserver applies them.
//!
//! kube-apiserver applies both with `gopkg.in/evanphx/json-patch.v4`
//! (`apiserver/pkg/endpoints/handlers/patch.go`, `jsonPatcher.applyJSPatch`), whose behaviour
//! differs from the RFCs — and from the `json-patch` Rust crate — in ways clients rely on:
//!
//! - `test` of a missing path against `null` passes (`Patch.test`: a missing key and a `null`
//!   value are both a nil node). kube-runtime's finalizer helper adds the first finalizer with
//!   `test /metadata/finalizers == null` followed by `add`.
//! - `replace` of a missing *object* key adds it (`partialDoc.get` never fails); `replace` of an
//!   out-of-range array index fails.
//! - Negative array indices count from the end (`SupportNegativeIndices`); `-` appends on `add`.
//! - Objects compare by keys and values, arrays element-wise, scalars by their JSON text (so
//!   `1` and `1.0` differ).
//! - The first segment of a path that does not start with `/` is ignored (`findObject` splits
//!   on `/` and drops the first element).
//!
//! A JSON patch is atomic: on error the document is left unchanged. Error texts are Go's
//! (`errors.Wrapf` chains, `msg: cause`).

use serde_json::{Map, Value};
use std::fmt;

use crate::go::json::unmarshal_type;

/// Why a JSON patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PatchError {
    /// The patch document is not a list of operation objects (`jsonpatch.DecodePatch` failed):
    /// the server answers 400 BadRequest with this message.
    Malformed(String),
    /// An operation failed (`Patch.Apply` failed): the server answers 422. The text is
    /// json-patch's error; the Status the server sends carries a generic message instead (see
    /// [`PatchError::status_message`]).
    Failed(String),
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchError::Malformed(m) | PatchError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for PatchError {}

/// `maxJSONPatchOperations` of the apiserver's patch handler: a JSON patch with more operations
/// is refused with 413 RequestEntityTooLarge, `The allowed maximum operations in a JSON patch is
/// 10000, got N`.
pub(crate) const MAX_JSON_PATCH_OPERATIONS: usize = 10000;

const ERR_MISSING: &str = "missing value";
const ERR_TEST_FAILED: &str = "test failed";
const ERR_INVALID_INDEX: &str = "invalid index referenced";

/// `Operation.Path()` / `Operation.From()`: the string field, or Go's error text.
fn string_field(op: &Map<String, Value>, field: &str) -> Result<String, String> {
    match op.get(field) {
        None | Some(Value::Null) => Err(if field == "path" {
            format!("operation missing path field: {ERR_MISSING}")
        } else {
            format!("operation, missing from field: {ERR_MISSING}")
        }),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go value of type string",
            unmarshal_type(other)
        )),
    }
}

/// `rfc6901Decoder`: `~1` -> `/`, then `~0` -> `~`, left to right without overlap.
fn decode_patch_key(k: &str) -> String {
    let mut out = String::with_capacity(k.len());
    let mut rest = k;
    while let Some(i) = rest.find('~') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('1') {
            out.push('/');
            rest = r;
        } else if let Some(r) = after.strip_prefix('0') {
            out.push('~');
            rest = r;
        } else {
            out.push('~');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Go's `strconv.Atoi` with its error text.
fn atoi(key: &str) -> Result<i64, String> {
    let digits = key.strip_prefix(['+', '-']).unwrap_or(key);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {key:?}: invalid syntax"));
    }
    key.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {key:?}: value out of range"))
}

fn invalid_index(idx: i64) -> String {
    format!("Unable to access invalid index: {idx}: {ERR_INVALID_INDEX}")
}

/// `partialArray.get`/`set`/`remove` index resolution: negative counts from the end.
fn resolve_index(idx: i64, len: usize) -> Result<usize, String> {
    let len = len as i64;
    let resolved = if idx < 0 {
        if idx < -len {
            return Err(invalid_index(idx));
        }
        idx + len
    } else {
        idx
    };
    if resolved >= len {
        // Go reports the index after adding the length for negative ones only when in range,
        // and the original index otherwise; both are `idx` here for the out-of-range case.
        return Err(invalid_index(idx));
    }
    Ok(resolved as usize)
}

/// A container a path's last segment is looked up in (`container` in Go).
enum Container<'a> {
    Doc(&'a mut Map<String, Value>),
    Ary(&'a mut Vec<Value>),
}

impl Container<'_> {
    /// `container.get`: `Ok(None)` for a missing object key or a `null` value (a nil node).
    fn get(&self, key: &str) -> Result<Option<Value>, String> {
        match self {
            Container::Doc(map) => Ok(map.get(key).filter(|v| !v.is_null()).cloned()),
            Container::Ary(ary) => {
                let idx = resolve_index(atoi(key)?, ary.len())?;
                Ok(Some(&ary[idx]).filter(|v| !v.is_null()).cloned())
            }
        }
    }

    /// `container.set` (used by replace only, after a successful get).
    fn set(&mut self, key: &str, val: Value) -> Result<(), String> {
        match self {
            Container::Doc(map) => {
                map.insert(key.to_owned(), val);
                Ok(())
            }
            Container::Ary(ary) => {
                let idx = resolve_index(atoi(key)?, ary.len())?;
                ary[idx] = val;
                Ok(())
            }
        }
    }

    /// `container.add`.
    fn add(&mut self, key: &str, val: Value) -> Result<(), String> {
        match self {
            Container::Doc(map) => {
                map.insert(key.to_owned(), val);
                Ok(())
            }
            Container::Ary(ary) => {
                if key == "-" {
                    ary.push(val);
                    return Ok(());
                }
                let idx = atoi(key)
                    .map_err(|e| format!("value was not a proper array index: '{key}': {e}"))?;
                let size = ary.len() as i64 + 1;
                if idx >= size || idx < -size {
                    return Err(invalid_index(idx));
                }
                let idx = if idx < 0 { idx + size } else { idx };
                ary.insert(idx as usize, val);
                Ok(())
            }
        }
    }

    /// `container.remove`.
    fn remove(&mut self, key: &str) -> Result<(), String> {
        match self {
            Container::Doc(map) => map
                .remove(key)
                .map(|_| ())
                .ok_or_else(|| format!("Unable to remove nonexistent key: {key}: {ERR_MISSING}")),
            Container::Ary(ary) => {
                let idx = resolve_index(atoi(key)?, ary.len())?;
                ary.remove(idx);
                Ok(())
            }
        }
    }
}

/// `findObject`: the container holding the path's last segment, and that segment decoded.
fn find_object<'a>(doc: &'a mut Value, path: &str) -> Option<(Container<'a>, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let key = decode_patch_key(split[split.len() - 1]);
    let mut cur = doc;
    for part in &split[1..split.len() - 1] {
        let part = decode_patch_key(part);
        let next = match cur {
            Value::Object(map) => map.get_mut(&part)?,
            Value::Array(ary) => {
                let idx = resolve_index(atoi(&part).ok()?, ary.len()).ok()?;
                &mut ary[idx]
            }
            _ => return None,
        };
        if !(next.is_object() || next.is_array()) {
            return None;
        }
        cur = next;
    }
    match cur {
        Value::Object(map) => Some((Container::Doc(map), key)),
        Value::Array(ary) => Some((Container::Ary(ary), key)),
        _ => None,
    }
}

/// `lazyNode.equal`: objects by keys and values, arrays element-wise, scalars by JSON text.
fn go_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| go_equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| go_equal(v, w))
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => false,
        // Scalars: compacted raw bytes; serde_json's Number equality distinguishes 1 and 1.0
        // as Go's byte comparison does.
        _ => a == b,
    }
}

/// Applies an RFC 6902 JSON patch to `doc` as kube-apiserver does (see the module docs).
/// On error `doc` is unchanged.
pub(crate) fn apply_json_patch(doc: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let ops = decode_patch(patch)?;
    let mut work = doc.clone();
    for op in ops {
        apply_op(&mut work, op).map_err(PatchError::Failed)?;
    }
    *doc = work;
    Ok(())
}

/// `jsonpatch.DecodePatch`: a JSON array of objects.
fn decode_patch(patch: &Value) -> Result<Vec<&Map<String, Value>>, PatchError> {
    let Value::Array(items) = patch else {
        return Err(PatchError::Malformed(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
            unmarshal_type(patch)
        )));
    };
    items
        .iter()
        .map(|item| match item {
            Value::Object(op) => Ok(op),
            // `null` decodes to a nil Operation map, whose kind is "unknown".
            Value::Null => Ok(empty_op()),
            other => Err(PatchError::Malformed(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
                unmarshal_type(other)
            ))),
        })
        .collect()
}

fn empty_op() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// `Operation.value()`: a missing or `null` value is a nil node, i.e. JSON `null`.
fn op_value(op: &Map<String, Value>) -> Value {
    op.get("value").cloned().unwrap_or(Value::Null)
}

fn apply_op(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let kind = match op.get("op") {
        Some(Value::String(s)) => s.as_str(),
        _ => "unknown",
    };
    match kind {
        "add" => {
            let path = string_field(op, "path")
                .map_err(|_| format!("add operation failed to decode path: {ERR_MISSING}"))?;
            let (mut con, key) = find_object(doc, &path).ok_or_else(|| {
                format!(
                    "add operation does not apply: doc is missing path: \"{path}\": {ERR_MISSING}"
                )
            })?;
            con.add(&key, op_value(op))
                .map_err(|e| format!("error in add for path: '{path}': {e}"))
        }
        "remove" => {
            let path = string_field(op, "path")
                .map_err(|_| format!("remove operation failed to decode path: {ERR_MISSING}"))?;
            let (mut con, key) = find_object(doc, &path).ok_or_else(|| {
                format!(
                    "remove operation does not apply: doc is missing path: \"{path}\": {ERR_MISSING}"
                )
            })?;
            con.remove(&key)
                .map_err(|e| format!("error in remove for path: '{path}': {e}"))
        }
        "replace" => {
            let path = string_field(op, "path")
                .map_err(|e| format!("replace operation failed to decode path: {e}"))?;
            if path.is_empty() {
                // Replacing the root takes an object or array; anything else is silently
                // ignored (Go wraps a nil error, which yields nil).
                let val = op_value(op);
                if val.is_object() || val.is_array() {
                    *doc = val;
                }
                return Ok(());
            }
            let (mut con, key) = find_object(doc, &path).ok_or_else(|| {
                format!(
                    "replace operation does not apply: doc is missing path: {path}: {ERR_MISSING}"
                )
            })?;
            if con.get(&key).is_err() {
                return Err(format!(
                    "replace operation does not apply: doc is missing key: {path}: {ERR_MISSING}"
                ));
            }
            con.set(&key, op_value(op))
                .map_err(|e| format!("error in remove for path: '{path}': {e}"))
        }
        "move" => {
            let from = string_field(op, "from")
                .map_err(|e| format!("move operation failed to decode from: {e}"))?;
            let (mut con, key) = find_object(doc, &from).ok_or_else(|| {
                format!(
                    "move operation does not apply: doc is missing from path: {from}: {ERR_MISSING}"
                )
            })?;
            let val = con
                .get(&key)
                .map_err(|e| format!("error in move for path: '{key}': {e}"))?;
            con.remove(&key)
                .map_err(|e| format!("error in move for path: '{key}': {e}"))?;
            let path = string_field(op, "path")
                .map_err(|e| format!("move operation failed to decode path: {e}"))?;
            let (mut con, key) = find_object(doc, &path).ok_or_else(|| {
                format!(
                    "move operation does not apply: doc is missing destination path: {path}: {ERR_MISSING}"
                )
            })?;
            con.add(&key, val.unwrap_or(Value::Null))
                .map_err(|e| format!("error in move for path: '{path}': {e}"))
        }
        "test" => {
            let path = string_field(op, "path")
                .map_err(|e| format!("test operation failed to decode path: {e}"))?;
            let failed = || format!("testing value {path} failed: {ERR_TEST_FAILED}");
            let want = op_value(op);
            if path.is_empty() {
                return if go_equal(doc, &want) {
                    Ok(())
                } else {
                    Err(failed())
                };
            }
            let (con, key) = find_object(doc, &path).ok_or_else(|| {
                format!("test operation does not apply: is missing path: {path}: {ERR_MISSING}")
            })?;
            let have = con
                .get(&key)
                .map_err(|e| format!("error in test for path: '{path}': {e}"))?;
            match have {
                // A missing key and a null value are both a nil node: equal to a null value.
                None if want.is_null() => Ok(()),
                None => Err(failed()),
                Some(_) if want.is_null() => Err(failed()),
                Some(have) if go_equal(&have, &want) => Ok(()),
                Some(_) => Err(failed()),
            }
        }
        "copy" => {
            let from = string_field(op, "from")
                .map_err(|e| format!("copy operation failed to decode from: {e}"))?;
            let (con, key) = find_object(doc, &from).ok_or_else(|| {
                format!(
                    "copy operation does not apply: doc is missing from path: {from}: {ERR_MISSING}"
                )
            })?;
            let val = con
                .get(&key)
                .map_err(|e| format!("error in copy for from: '{from}': {e}"))?;
            let path = string_field(op, "path")
                .map_err(|_| format!("copy operation failed to decode path: {ERR_MISSING}"))?;
            let (mut con, key) = find_object(doc, &path).ok_or_else(|| {
                format!(
                    "copy operation does not apply: doc is missing destination path: {path}: {ERR_MISSING}"
                )
            })?;
            con.add(&key, val.unwrap_or(Value::Null))
                .map_err(|e| format!("error while adding value during copy: {e}"))
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

/// Applies an RFC 7386 merge patch to `doc` as evanphx `jsonpatch.MergePatch` does: `null`
/// deletes a key, objects merge recursively, anything else replaces; `null`s are pruned from
/// inserted objects, including objects nested in arrays. A patch that is not an object replaces
/// the whole document.
pub(crate) fn apply_merge_patch(doc: &mut Value, patch: &Value) {
    match (doc.as_object_mut(), patch) {
        (Some(doc), Value::Object(patch)) => merge_docs(doc, patch),
        (None, Value::Object(patch)) => {
            let mut patch = patch.clone();
            prune_doc_nulls(&mut patch);
            *doc = Value::Object(patch);
        }
        (_, other) => {
            let mut other = other.clone();
            prune_nulls(&mut other);
            *doc = other;
        }
    }
}

/// evanphx `mergeDocs`.
fn merge_docs(doc: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (k, v) in patch {
        if v.is_null() {
            doc.remove(k);
            continue;
        }
        match doc.get_mut(k) {
            Some(cur) if !cur.is_null() => merge(cur, v),
            _ => {
                let mut v = v.clone();
                prune_nulls(&mut v);
                doc.insert(k.clone(), v);
            }
        }
    }
}

/// evanphx `merge`: an object merges into an object; otherwise the patch value replaces
/// (pruned of nulls only when the current value is not an object — Go's quirk).
fn merge(cur: &mut Value, patch: &Value) {
    match (cur.as_object_mut(), patch) {
        (Some(cur), Value::Object(patch)) => merge_docs(cur, patch),
        (Some(_), _) => *cur = patch.clone(),
        (None, _) => {
            let mut patch = patch.clone();
            prune_nulls(&mut patch);
            *cur = patch;
        }
    }
}

fn prune_nulls(v: &mut Value) {
    match v {
        Value::Object(map) => prune_doc_nulls(map),
        Value::Array(ary) => ary.iter_mut().for_each(prune_nulls),
        _ => {}
    }
}

fn prune_doc_nulls(map: &mut Map<String, Value>) {
    map.retain(|_, v| !v.is_null());
    map.values_mut().for_each(prune_nulls);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    impl PatchError {
        /// The HTTP status of the response: 400 for a malformed patch, 422 for a failed one.
        fn status_code(&self) -> u16 {
            match self {
                PatchError::Malformed(_) => 400,
                PatchError::Failed(_) => 422,
            }
        }

        /// The Status `reason`: `BadRequest` or `Invalid`.
        fn status_reason(&self) -> &'static str {
            match self {
                PatchError::Malformed(_) => "BadRequest",
                PatchError::Failed(_) => "Invalid",
            }
        }

        /// The Status `message` kube-apiserver sends. A malformed patch's message is the decode
        /// error (`errors.NewBadRequest(err.Error())`); a failed patch goes through
        /// `errors.NewGenericServerResponse(422, "", schema.GroupResource{}, "", err.Error(), 0,
        /// false)`, which drops the json-patch error and says only `the server rejected our request
        /// due to an error in our request` (with empty `details: {}` and no causes).
        fn status_message(&self) -> String {
            match self {
                PatchError::Malformed(m) => m.clone(),
                PatchError::Failed(_) => {
                    "the server rejected our request due to an error in our request".to_owned()
                }
            }
        }
    }

    fn failed(doc: &Value, patch: Value) -> String {
        let mut d = doc.clone();
        match apply_json_patch(&mut d, &patch) {
            Err(PatchError::Failed(m)) => {
                assert_eq!(&d, doc, "a failed patch leaves the document unchanged");
                m
            }
            other => panic!("expected Failed, got {other:?}"),
        }
    }

    fn patched(doc: &Value, patch: Value) -> Value {
        let mut d = doc.clone();
        apply_json_patch(&mut d, &patch).unwrap();
        d
    }

    fn cm() -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "demo"}, "data": {"a": "1"}})
    }

    /// The exact patches kube-runtime 5's `finalizer()` sends (kube-runtime/src/finalizer.rs).
    #[test]
    fn kube_runtime_finalizer_patches_replay() {
        let name = "demo.kubeward.dev/cleanup";
        // 1. first finalizer: test null then add the list.
        let add_first = json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": [name]},
        ]);
        let obj = patched(&cm(), add_first.clone());
        assert_eq!(obj["metadata"]["finalizers"], json!([name]));
        // replaying it now that finalizers exist fails the test (someone else raced us)
        assert_eq!(
            failed(&obj, add_first),
            "testing value /metadata/finalizers failed: test failed"
        );
        // 2. another finalizer present: test the whole list, then append with "-".
        let mut other = cm();
        other["metadata"]["finalizers"] = json!(["other/x"]);
        let add_more = json!([
            {"op": "test", "path": "/metadata/finalizers", "value": ["other/x"]},
            {"op": "add", "path": "/metadata/finalizers/-", "value": name},
        ]);
        let obj = patched(&other, add_more.clone());
        assert_eq!(obj["metadata"]["finalizers"], json!(["other/x", name]));
        assert!(matches!(
            apply_json_patch(&mut obj.clone(), &add_more),
            Err(PatchError::Failed(_))
        ));
        // 3. removal by index, guarded by a test of that index.
        let remove = json!([
            {"op": "test", "path": "/metadata/finalizers/1", "value": name},
            {"op": "remove", "path": "/metadata/finalizers/1"},
        ]);
        let removed = patched(&obj, remove.clone());
        assert_eq!(removed["metadata"]["finalizers"], json!(["other/x"]));
        // the index now points past the end: the test fails before anything is removed
        assert_eq!(
            failed(&removed, remove),
            "error in test for path: '/metadata/finalizers/1': Unable to access invalid index: 1: invalid index referenced"
        );
    }

    #[test]
    fn test_op_null_matches_missing_and_null_only() {
        let doc = json!({"a": null, "b": 0, "c": ""});
        for p in ["/a", "/missing"] {
            patched(&doc, json!([{"op": "test", "path": p, "value": null}]));
        }
        for p in ["/b", "/c"] {
            failed(&doc, json!([{"op": "test", "path": p, "value": null}]));
        }
        assert_eq!(
            failed(
                &doc,
                json!([{"op": "test", "path": "/missing", "value": 1}])
            ),
            "testing value /missing failed: test failed"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "test", "path": "/x/y", "value": null}])),
            "test operation does not apply: is missing path: /x/y: missing value"
        );
    }

    #[test]
    fn test_op_compares_structurally() {
        let doc = json!({"o": {"x": 1, "y": [1, {"z": true}]}, "n": 1});
        patched(
            &doc,
            json!([{"op": "test", "path": "/o", "value": {"y": [1, {"z": true}], "x": 1}}]),
        );
        failed(
            &doc,
            json!([{"op": "test", "path": "/o", "value": {"x": 1}}]),
        );
        failed(
            &doc,
            json!([{"op": "test", "path": "/o", "value": {"x": 1, "y": [1, {"z": true}], "w": 2}}]),
        );
        failed(&doc, json!([{"op": "test", "path": "/n", "value": 1.0}]));
        failed(&doc, json!([{"op": "test", "path": "/n", "value": "1"}]));
        patched(
            &doc,
            json!([{"op": "test", "path": "", "value": doc.clone()}]),
        );
    }

    #[test]
    fn add_remove_replace_on_objects_and_arrays() {
        let doc = json!({"l": [1, 2, 3], "o": {}});
        assert_eq!(
            patched(&doc, json!([{"op": "add", "path": "/l/0", "value": 0}]))["l"],
            json!([0, 1, 2, 3])
        );
        assert_eq!(
            patched(&doc, json!([{"op": "add", "path": "/l/3", "value": 4}]))["l"],
            json!([1, 2, 3, 4])
        );
        assert_eq!(
            patched(&doc, json!([{"op": "add", "path": "/l/-", "value": 4}]))["l"],
            json!([1, 2, 3, 4])
        );
        assert_eq!(
            patched(&doc, json!([{"op": "add", "path": "/l/-1", "value": 9}]))["l"],
            json!([1, 2, 3, 9])
        );
        assert_eq!(
            patched(&doc, json!([{"op": "remove", "path": "/l/-1"}]))["l"],
            json!([1, 2])
        );
        assert_eq!(
            patched(&doc, json!([{"op": "replace", "path": "/l/1", "value": 7}]))["l"],
            json!([1, 7, 3])
        );
        assert_eq!(
            patched(
                &doc,
                json!([{"op": "add", "path": "/o/k", "value": {"x": 1}}])
            )["o"],
            json!({"k": {"x": 1}})
        );
        // replace of a missing object key adds it (partialDoc.get never fails)
        assert_eq!(
            patched(&doc, json!([{"op": "replace", "path": "/o/k", "value": 1}]))["o"],
            json!({"k": 1})
        );
        // add without a value adds null
        assert_eq!(
            patched(&doc, json!([{"op": "add", "path": "/o/k"}]))["o"],
            json!({"k": null})
        );
        assert_eq!(
            failed(&doc, json!([{"op": "add", "path": "/l/5", "value": 0}])),
            "error in add for path: '/l/5': Unable to access invalid index: 5: invalid index referenced"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "add", "path": "/l/x", "value": 0}])),
            "error in add for path: '/l/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "remove", "path": "/o/k"}])),
            "error in remove for path: '/o/k': Unable to remove nonexistent key: k: missing value"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "remove", "path": "/l/-"}])),
            "error in remove for path: '/l/-': strconv.Atoi: parsing \"-\": invalid syntax"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "replace", "path": "/l/3", "value": 0}])),
            "replace operation does not apply: doc is missing key: /l/3: missing value"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "add", "path": "/x/y", "value": 0}])),
            "add operation does not apply: doc is missing path: \"/x/y\": missing value"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "add", "path": "/l/0/y", "value": 0}])),
            "add operation does not apply: doc is missing path: \"/l/0/y\": missing value"
        );
    }

    #[test]
    fn escapes_decode_tilde_one_then_tilde_zero() {
        let doc = json!({"metadata": {"annotations": {"a/b": "1", "c~d": "2", "~1": "3"}}});
        patched(
            &doc,
            json!([{"op": "test", "path": "/metadata/annotations/a~1b", "value": "1"}]),
        );
        patched(
            &doc,
            json!([{"op": "test", "path": "/metadata/annotations/c~0d", "value": "2"}]),
        );
        patched(
            &doc,
            json!([{"op": "test", "path": "/metadata/annotations/~01", "value": "3"}]),
        );
        let out = patched(
            &doc,
            json!([{"op": "add", "path": "/metadata/annotations/example.com~1x", "value": "v"}]),
        );
        assert_eq!(out["metadata"]["annotations"]["example.com/x"], "v");
    }

    #[test]
    fn move_and_copy() {
        let doc = json!({"a": {"x": 1}, "l": [1, 2]});
        assert_eq!(
            patched(&doc, json!([{"op": "move", "from": "/a/x", "path": "/b"}])),
            json!({"a": {}, "l": [1, 2], "b": 1})
        );
        assert_eq!(
            patched(&doc, json!([{"op": "copy", "from": "/l", "path": "/a/l"}]))["a"],
            json!({"x": 1, "l": [1, 2]})
        );
        assert_eq!(
            patched(
                &doc,
                json!([{"op": "move", "from": "/l/0", "path": "/l/-"}])
            )["l"],
            json!([2, 1])
        );
        assert_eq!(
            failed(&doc, json!([{"op": "move", "from": "/a/y", "path": "/b"}])),
            "error in move for path: 'y': Unable to remove nonexistent key: y: missing value"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "copy", "path": "/b"}])),
            "copy operation failed to decode from: operation, missing from field: missing value"
        );
    }

    #[test]
    fn malformed_and_unknown_operations() {
        let doc = cm();
        assert_eq!(
            apply_json_patch(&mut doc.clone(), &json!({"op": "add"})),
            Err(PatchError::Malformed(
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch".into()
            ))
        );
        assert_eq!(
            apply_json_patch(&mut doc.clone(), &json!(["add"])),
            Err(PatchError::Malformed(
                "json: cannot unmarshal string into Go value of type jsonpatch.Operation".into()
            ))
        );
        assert_eq!(
            failed(&doc, json!([{"op": "frobnicate", "path": "/a"}])),
            "Unexpected kind: frobnicate"
        );
        assert_eq!(
            failed(&doc, json!([{"path": "/a"}])),
            "Unexpected kind: unknown"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "add", "value": 1}])),
            "add operation failed to decode path: missing value"
        );
        assert_eq!(
            failed(&doc, json!([{"op": "replace", "path": 5}])),
            "replace operation failed to decode path: json: cannot unmarshal number into Go value of type string"
        );
        patched(&doc, json!([]));
    }

    #[test]
    fn status_of_patch_errors_is_the_apiservers() {
        let failed = PatchError::Failed("testing value /a failed: test failed".into());
        assert_eq!(
            (failed.status_code(), failed.status_reason()),
            (422, "Invalid")
        );
        assert_eq!(
            failed.status_message(),
            "the server rejected our request due to an error in our request"
        );
        let malformed = PatchError::Malformed(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch".into(),
        );
        assert_eq!(
            (malformed.status_code(), malformed.status_reason()),
            (400, "BadRequest")
        );
        assert_eq!(malformed.status_message(), malformed.to_string());
    }

    #[test]
    fn patch_is_atomic() {
        let doc = cm();
        let msg = failed(
            &doc,
            json!([
                {"op": "add", "path": "/data/b", "value": "2"},
                {"op": "test", "path": "/data/a", "value": "nope"},
            ]),
        );
        assert_eq!(msg, "testing value /data/a failed: test failed");
    }

    #[test]
    fn merge_patch_rfc7386_cases() {
        // RFC 7386 appendix A examples
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (
                json!({"a": "b", "b": "c"}),
                json!({"a": null}),
                json!({"b": "c"}),
            ),
            (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
            (json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]})),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (
                json!({"a": [{"b": "c"}]}),
                json!({"a": [1]}),
                json!({"a": [1]}),
            ),
            (
                json!({"e": null}),
                json!({"a": 1}),
                json!({"e": null, "a": 1}),
            ),
            (
                json!({}),
                json!({"a": {"bb": {"ccc": null}}}),
                json!({"a": {"bb": {}}}),
            ),
        ];
        for (doc, patch, want) in cases {
            let mut d = doc.clone();
            apply_merge_patch(&mut d, &patch);
            assert_eq!(d, want, "{doc} + {patch}");
        }
        let mut d = json!({"a": 1});
        apply_merge_patch(&mut d, &json!([1, null]));
        assert_eq!(d, json!([1, null]));
        // evanphx prunes nulls from objects inside inserted arrays
        let mut d = json!({});
        apply_merge_patch(&mut d, &json!({"l": [{"a": null, "b": 1}]}));
        assert_eq!(d, json!({"l": [{"b": 1}]}));
    }

    fn has_null_in_array(value: &Value, in_array: bool) -> bool {
        match value {
            Value::Null => in_array,
            Value::Array(items) => items.iter().any(|v| has_null_in_array(v, true)),
            Value::Object(map) => map.values().any(|v| has_null_in_array(v, in_array)),
            _ => false,
        }
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (0i64..5).prop_map(|n| json!(n)),
            "[ab]{0,2}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[abc]", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn failed_patches_leave_the_document_unchanged(
            doc in proptest::collection::btree_map("[abc]", arb_json(), 0..4),
            path in "(/[abc0-9-]{1,2}){1,3}",
            value in arb_json(),
            op in prop_oneof![Just("add"), Just("remove"), Just("replace"), Just("test")],
        ) {
            let doc = Value::Object(doc.into_iter().collect());
            let mut d = doc.clone();
            let patch = json!([{"op": op, "path": path, "value": value}]);
            if apply_json_patch(&mut d, &patch).is_err() {
                prop_assert_eq!(d, doc);
            }
        }

        #[test]
        fn add_then_test_passes_and_remove_restores(
            doc in proptest::collection::btree_map("[abc]", arb_json(), 0..4),
            key in "[d-f]",
            value in arb_json(),
        ) {
            let doc = Value::Object(doc.into_iter().collect());
            let mut d = doc.clone();
            let path = format!("/{key}");
            apply_json_patch(&mut d, &json!([
                {"op": "add", "path": path, "value": value},
                {"op": "test", "path": path, "value": value},
                {"op": "remove", "path": path},
            ])).unwrap();
            prop_assert_eq!(d, doc);
        }

        /// Idempotent for patches without nulls inside arrays: evanphx prunes those nulls only
        /// when the array lands on a key the document lacks, so Go's merge patch is not
        /// idempotent for them either (see the pruning case above).
        #[test]
        fn merge_patch_with_itself_is_idempotent(
            doc in arb_json(),
            patch in proptest::collection::btree_map("[abc]", arb_json(), 0..4),
        ) {
            let patch = Value::Object(patch.into_iter().collect());
            prop_assume!(!has_null_in_array(&patch, false));
            let mut once = doc.clone();
            apply_merge_patch(&mut once, &patch);
            let mut twice = once.clone();
            apply_merge_patch(&mut twice, &patch);
            prop_assert_eq!(once, twice);
        }
    }
}

/// The usage examples of this module's items (the module is private to the crate).
#[cfg(test)]
mod examples {
    #[test]
    fn apply_json_patch() {
        use crate::patch::apply_json_patch;
        let mut doc = serde_json::json!({"metadata": {"name": "web"}});
        // kube-runtime's finalizer helper: the first finalizer is added after testing for null.
        let patch = serde_json::json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["demo/cleanup"]},
        ]);
        apply_json_patch(&mut doc, &patch).unwrap();
        assert_eq!(doc["metadata"]["finalizers"][0], "demo/cleanup");
    }

    #[test]
    fn apply_merge_patch() {
        use crate::patch::apply_merge_patch;
        let mut doc = serde_json::json!({"spec": {"replicas": 1, "paused": true}});
        apply_merge_patch(
            &mut doc,
            &serde_json::json!({"spec": {"replicas": 3, "paused": null}}),
        );
        assert_eq!(doc, serde_json::json!({"spec": {"replicas": 3}}));
    }
}
