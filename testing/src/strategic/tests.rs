//! Strategic merge patch of built-in kinds against their real OpenAPI definitions; expected
//! results follow apimachinery's `patch_test.go` cases for the same shapes.

use serde_json::{Value, json};

use super::{SmpError, apply};

const CONFIG_MAP: &str = "io.k8s.api.core.v1.ConfigMap";
const SERVICE_ACCOUNT: &str = "io.k8s.api.core.v1.ServiceAccount";
const NAMESPACE: &str = "io.k8s.api.core.v1.Namespace";

fn obj(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn patched(definition: &str, original: Value, patch: Value) -> Value {
    Value::Object(apply(obj(original), obj(patch), definition).expect("patch applies"))
}

fn failed(definition: &str, original: Value, patch: Value) -> SmpError {
    apply(obj(original), obj(patch), definition).expect_err("patch fails")
}

#[test]
fn finalizers_are_a_union_and_keep_other_controllers_entries() {
    let cm = json!({"metadata": {"name": "a", "finalizers": ["x.io/a", "y.io/b"]}});
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"metadata": {"finalizers": ["z.io/c"]}}),
    );
    // The patch's items first when the live list does not order them (mergeSortedSlice).
    assert_eq!(
        out["metadata"]["finalizers"],
        json!(["z.io/c", "x.io/a", "y.io/b"])
    );
    // An item already present is not duplicated, and keeps its place relative to the others.
    let out = patched(
        CONFIG_MAP,
        cm,
        json!({"metadata": {"finalizers": ["y.io/b", "z.io/c"]}}),
    );
    assert_eq!(
        out["metadata"]["finalizers"],
        json!(["x.io/a", "y.io/b", "z.io/c"])
    );
}

#[test]
fn delete_from_primitive_list_and_set_element_order() {
    // apimachinery "add and delete items in lists of scalars".
    let cm = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"metadata": {
            "$setElementOrder/finalizers": ["a", "b", "d"],
            "$deleteFromPrimitiveList/finalizers": ["c"],
            "finalizers": ["d"],
        }}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "b", "d"]));
    assert!(
        out["metadata"]
            .get("$deleteFromPrimitiveList/finalizers")
            .is_none()
    );
    // $setElementOrder alone reorders the live list.
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
    // A deletion list for a missing list changes nothing; a null one deletes the list.
    let out = patched(
        CONFIG_MAP,
        json!({"metadata": {"name": "n"}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["c"]}}),
    );
    assert_eq!(out, json!({"metadata": {"name": "n"}}));
    let out = patched(
        CONFIG_MAP,
        cm,
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": null}}),
    );
    assert_eq!(out, json!({"metadata": {}}));
}

fn owner(uid: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid})
}

#[test]
fn owner_references_merge_by_uid() {
    let cm = json!({"metadata": {"ownerReferences": [owner("1", "one"), owner("2", "two")]}});
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"metadata": {"ownerReferences": [
            {"uid": "2", "controller": true},
            owner("3", "three"),
        ]}}),
    );
    let mut two = owner("2", "two");
    two["controller"] = json!(true);
    assert_eq!(
        out["metadata"]["ownerReferences"],
        json!([owner("1", "one"), two, owner("3", "three")])
    );
    // $patch: delete removes the item with that merge key.
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"metadata": {"ownerReferences": [{"uid": "1", "$patch": "delete"}]}}),
    );
    assert_eq!(
        out["metadata"]["ownerReferences"],
        json!([owner("2", "two")])
    );
    // $patch: replace makes the patch's items the whole list.
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"metadata": {"ownerReferences": [owner("3", "three"), {"$patch": "replace"}]}}),
    );
    assert_eq!(
        out["metadata"]["ownerReferences"],
        json!([owner("3", "three")])
    );
    // An item without the merge key is upstream's error, a 500 with its message.
    let err = failed(
        CONFIG_MAP,
        cm.clone(),
        json!({"metadata": {"ownerReferences": [{"name": "x"}]}}),
    );
    assert_eq!(
        err,
        SmpError::Other("map: map[name:x] does not contain declared merge key: uid".into())
    );
    assert_eq!(
        failed(
            CONFIG_MAP,
            cm,
            json!({"metadata": {"ownerReferences": [{"uid": "1", "$patch": "merge"}]}}),
        ),
        SmpError::Other("merging lists cannot yet be specified in the patch".into())
    );
}

#[test]
fn lists_without_merge_strategy_are_replaced() {
    // ServiceAccount.imagePullSecrets has no patch strategy; secrets merge by name.
    let sa = json!({
        "imagePullSecrets": [{"name": "a"}, {"name": "b"}],
        "secrets": [{"name": "s1", "namespace": "x"}],
    });
    let out = patched(
        SERVICE_ACCOUNT,
        sa,
        json!({
            "imagePullSecrets": [{"name": "c"}],
            "secrets": [{"name": "s1", "namespace": null, "uid": "u"}, {"name": "s2"}],
        }),
    );
    assert_eq!(out["imagePullSecrets"], json!([{"name": "c"}]));
    assert_eq!(
        out["secrets"],
        json!([{"name": "s1", "uid": "u"}, {"name": "s2"}])
    );
}

#[test]
fn nested_merge_by_key_in_status_conditions() {
    let ns = json!({"status": {"phase": "Active", "conditions": [
        {"type": "A", "status": "True", "reason": "x"},
        {"type": "B", "status": "False"},
    ]}});
    let out = patched(
        NAMESPACE,
        ns,
        json!({"status": {"conditions": [{"type": "A", "reason": null, "status": "False"}]}}),
    );
    assert_eq!(
        out["status"]["conditions"],
        json!([{"type": "A", "status": "False"}, {"type": "B", "status": "False"}])
    );
}

#[test]
fn map_directives_and_nulls() {
    let cm = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "data": {"k": "v", "l": "w"}});
    // null deletes a key; maps merge.
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"data": {"k": null, "m": "x"}}),
    );
    assert_eq!(out["data"], json!({"l": "w", "m": "x"}));
    // $patch: replace replaces the map, $patch: delete empties it.
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"metadata": {"labels": {"c": "3", "$patch": "replace"}}}),
    );
    assert_eq!(out["metadata"]["labels"], json!({"c": "3"}));
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"data": {"$patch": "delete"}}),
    );
    assert_eq!(out["data"], json!({}));
    // A directive map where the original has nothing is dropped, not stored.
    let out = patched(
        CONFIG_MAP,
        json!({"metadata": {}}),
        json!({"binaryData": {"$patch": "delete"}, "immutable": true}),
    );
    assert_eq!(out, json!({"metadata": {}, "immutable": true}));
    // $retainKeys clears the fields it does not list, and must list the patch's.
    let out = patched(
        CONFIG_MAP,
        cm.clone(),
        json!({"data": {"$retainKeys": ["l", "n"], "n": "y"}}),
    );
    assert_eq!(out["data"], json!({"l": "w", "n": "y"}));
    assert_eq!(
        failed(
            CONFIG_MAP,
            cm.clone(),
            json!({"data": {"$retainKeys": ["l"], "n": "y"}}),
        ),
        SmpError::BadRequest("invalid patch format of retainKeys")
    );
    assert_eq!(
        failed(CONFIG_MAP, cm.clone(), json!({"data": {"$patch": "merge"}}),),
        SmpError::Other("unknown patch type: merge in map: map[$patch:merge]".into())
    );
    assert_eq!(
        failed(
            CONFIG_MAP,
            cm,
            json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}),
        ),
        SmpError::BadRequest("invalid patch format of primitive list")
    );
}

#[test]
fn errors_name_the_go_types() {
    // Lookups happen where both sides hold objects: a field the type lacks, a key of a map.
    assert_eq!(
        failed(
            CONFIG_MAP,
            json!({"metadata": {"foo": {"a": 1}}}),
            json!({"metadata": {"foo": {"b": 2}}}),
        ),
        SmpError::Other(
            "unable to find api field in struct ObjectMeta for the json field \"foo\"".into()
        )
    );
    assert_eq!(
        failed(
            CONFIG_MAP,
            json!({"data": {"k": {"a": 1}}}),
            json!({"data": {"k": {"b": 2}}}),
        ),
        SmpError::Other(
            "merging an object in json but data type is not struct, instead is: map".into()
        )
    );
    // Lists of lists are 422 (when a list is the first item seen; after a string the types
    // differ, as below).
    assert_eq!(
        failed(
            CONFIG_MAP,
            json!({"metadata": {"finalizers": []}}),
            json!({"metadata": {"finalizers": [["b"]]}}),
        ),
        SmpError::Invalid("lists of lists are not supported")
    );
    // Mixed element types.
    assert_eq!(
        failed(
            CONFIG_MAP,
            json!({"metadata": {"finalizers": ["a"]}}),
            json!({"metadata": {"finalizers": [1, ["b"]]}}),
        ),
        SmpError::Other("list element types are not identical: [[a] [1 [b]]]".into())
    );
}
