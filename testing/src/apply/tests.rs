//! The field manager's behaviour, case by case and by property.

use proptest::prelude::*;

use super::schema::ListType;
use super::*;

const T0: &str = "2026-01-01T00:00:00Z";
const T1: &str = "2026-01-01T00:01:00Z";
const T2: &str = "2026-01-01T00:02:00Z";
const V: &str = "demo.kubeward.dev/v1";

fn rollout(spec: Value) -> Value {
    json!({"apiVersion": V, "kind": "Rollout", "metadata": {"name": "web", "namespace": "demo"}, "spec": spec})
}

fn entries(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn entry<'a>(obj: &'a Value, manager: &str) -> Option<&'a Value> {
    obj.pointer("/metadata/managedFields")?
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager)
}

fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApplyError> {
    server_side_apply(live, applied, manager, force, V, None, T1)
}

#[test]
fn apply_creates_and_records_an_apply_entry_in_the_real_format() {
    let obj = server_side_apply(
        None,
        &rollout(json!({"replicas": 3, "image": "web:1"})),
        "ctrl",
        false,
        V,
        None,
        T0,
    )
    .unwrap();
    assert_eq!(obj["spec"], json!({"replicas": 3, "image": "web:1"}));
    assert_eq!(
        entries(&obj),
        [json!({
            "manager": "ctrl",
            "operation": "Apply",
            "apiVersion": V,
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:image": {}, "f:replicas": {}}},
        })]
    );
}

#[test]
fn name_namespace_and_type_meta_are_not_owned() {
    let mut applied = rollout(json!({"replicas": 1}));
    applied["metadata"]["labels"] = json!({"app": "web"});
    let obj = apply(None, &applied, "ctrl", false).unwrap();
    assert_eq!(
        entry(&obj, "ctrl").unwrap()["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn changing_a_field_owned_by_another_manager_conflicts() {
    let live = apply(None, &rollout(json!({"replicas": 3})), "other", false).unwrap();
    let err = apply(Some(&live), &rollout(json!({"replicas": 5})), "ctrl", false).unwrap_err();
    assert_eq!(
        err,
        ApplyError::Conflict {
            conflicts: vec![("\"other\"".into(), ".spec.replicas".into())]
        }
    );
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"other\": .spec.replicas"
    );
    assert_eq!(
        err.status_causes(),
        [
            json!({"reason": "FieldManagerConflict", "message": "conflict with \"other\"", "field": ".spec.replicas"})
        ]
    );
}

#[test]
fn conflicts_with_update_managers_name_their_api_version() {
    let mut live = rollout(json!({"replicas": 3, "paused": false}));
    record_update(None, &mut live, "kubectl-create", V, None, T0);
    let err = apply(
        Some(&live),
        &rollout(json!({"replicas": 5, "paused": true})),
        "ctrl",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 2 conflicts: conflicts with \"kubectl-create\" using demo.kubeward.dev/v1:\n- .spec.paused\n- .spec.replicas"
    );
}

#[test]
fn force_moves_ownership() {
    let live = apply(
        None,
        &rollout(json!({"replicas": 3, "image": "a"})),
        "other",
        false,
    )
    .unwrap();
    let obj = apply(Some(&live), &rollout(json!({"replicas": 5})), "ctrl", true).unwrap();
    assert_eq!(obj["spec"], json!({"replicas": 5, "image": "a"}));
    assert_eq!(
        entry(&obj, "other").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:image": {}}})
    );
    assert_eq!(
        entry(&obj, "ctrl").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
    // now "other" conflicts when it re-applies its old value
    let err = apply(
        Some(&obj),
        &rollout(json!({"replicas": 3, "image": "a"})),
        "other",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"ctrl\": .spec.replicas"
    );
}

#[test]
fn same_value_is_shared_ownership_without_conflict() {
    let live = apply(None, &rollout(json!({"replicas": 3})), "other", false).unwrap();
    let obj = apply(Some(&live), &rollout(json!({"replicas": 3})), "ctrl", false).unwrap();
    assert_eq!(
        entry(&obj, "other").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert_eq!(
        entry(&obj, "ctrl").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
    // either one dropping the field keeps it: the other still owns it
    let mut nothing = rollout(json!({}));
    nothing.as_object_mut().unwrap().remove("spec");
    let dropped = apply(Some(&obj), &nothing, "ctrl", false).unwrap();
    assert_eq!(dropped["spec"]["replicas"], 3);
    assert!(
        entry(&dropped, "ctrl").is_none(),
        "an applier that owns nothing has no entry"
    );
}

#[test]
fn omitted_fields_are_removed_when_no_one_else_owns_them() {
    let live = apply(
        None,
        &rollout(json!({"replicas": 3, "image": "a"})),
        "ctrl",
        false,
    )
    .unwrap();
    let obj = apply(Some(&live), &rollout(json!({"image": "b"})), "ctrl", false).unwrap();
    assert_eq!(obj["spec"], json!({"image": "b"}));
    // a field someone else wrote (Update) stays, though the applier stops applying it
    let mut live = apply(None, &rollout(json!({"replicas": 3})), "ctrl", false).unwrap();
    let old = live.clone();
    live["spec"]["paused"] = json!(true);
    record_update(Some(&old), &mut live, "kubectl-edit", V, None, T1);
    let obj = apply(
        Some(&live),
        &rollout(json!({"paused": true})),
        "ctrl",
        false,
    )
    .unwrap();
    assert_eq!(obj["spec"], json!({"paused": true}));
    // fields never applied by the applier are never removed by it
    let mut unowned = rollout(json!({"replicas": 3, "extra": 1}));
    record_update(None, &mut unowned, "creator", V, None, T0);
    let obj = apply(
        Some(&unowned),
        &rollout(json!({"replicas": 3})),
        "ctrl",
        false,
    )
    .unwrap();
    let obj = apply(Some(&obj), &rollout(json!({})), "ctrl", false).unwrap();
    assert_eq!(obj["spec"], json!({"replicas": 3, "extra": 1}));
}

#[test]
fn update_takes_changed_fields_from_appliers() {
    let live = apply(
        None,
        &rollout(json!({"replicas": 3, "image": "a"})),
        "ctrl",
        false,
    )
    .unwrap();
    let mut new = live.clone();
    new["spec"]["replicas"] = json!(7);
    record_update(Some(&live), &mut new, "kubectl-edit", V, None, T2);
    assert_eq!(
        entry(&new, "ctrl").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:image": {}}})
    );
    let edit = entry(&new, "kubectl-edit").unwrap();
    assert_eq!(edit["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(edit["operation"], "Update");
    assert_eq!(edit["time"], T2);
    // entries are sorted: Apply before Update
    assert_eq!(entries(&new)[0]["operation"], "Apply");
    // the applier now conflicts with the editor
    let err = apply(
        Some(&new),
        &rollout(json!({"replicas": 3, "image": "a"})),
        "ctrl",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using demo.kubeward.dev/v1: .spec.replicas"
    );
}

#[test]
fn an_update_creating_a_custom_resource_owns_the_structs_and_sets_it_adds() {
    let schema = ApplySchema::from_openapi_v3(&json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "o": {"type": "object", "properties": {"a": {"type": "string"}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "args": {"type": "array", "items": {"type": "string"}}}}}}));
    let mut obj = json!({"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout",
        "metadata": {"name": "r", "namespace": "d"},
        "spec": {"o": {"a": "x"}, "tags": ["t"], "args": ["x"]}});
    let at = Endpoint {
        api_version: "demo.kubeward.dev/v1",
        subresource: None,
        reset_fields: &[],
        schema: &schema,
        empty_structs: EmptyStructs::Kept,
    };
    update_at(None, &mut obj, "creator", &at, T0);
    // As kube-apiserver records it: an unstructured object has no empty structs to start
    // from, so every object (and associative list) the update adds is owned itself; an
    // atomic list is one leaf.
    assert_eq!(
        entries(&obj)[0]["fieldsV1"],
        json!({"f:spec": {".": {}, "f:args": {}, "f:o": {".": {}, "f:a": {}},
                          "f:tags": {".": {}, "v:\"t\"": {}}}})
    );
}

#[test]
fn update_on_create_owns_everything_but_meta_and_maps_get_a_dot() {
    let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "d", "uid": "u", "resourceVersion": "1", "labels": {"a": "1"}},
        "data": {"k": "v"}});
    record_update(None, &mut obj, "kubectl-create", "v1", None, T0);
    assert_eq!(
        entries(&obj),
        [json!({
            "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}},
        })]
    );
}

#[test]
fn removed_fields_leave_every_set_and_an_update_that_only_removes_keeps_its_time() {
    let mut live = rollout(json!({"replicas": 3, "image": "a"}));
    record_update(None, &mut live, "creator", V, None, T0);
    let mut new = live.clone();
    new["spec"].as_object_mut().unwrap().remove("image");
    record_update(Some(&live), &mut new, "editor", V, None, T1);
    assert_eq!(
        entry(&new, "creator").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert!(entry(&new, "editor").is_none());
    assert_eq!(entry(&new, "creator").unwrap()["time"], T0);
}

#[test]
fn finalizers_are_a_set_owned_item_by_item() {
    let mut applied = rollout(json!({}));
    applied["metadata"]["finalizers"] = json!(["demo.kubeward.dev/cleanup"]);
    let obj = apply(None, &applied, "ctrl", false).unwrap();
    assert_eq!(
        entry(&obj, "ctrl").unwrap()["fieldsV1"]["f:metadata"],
        json!({"f:finalizers": {"v:\"demo.kubeward.dev/cleanup\"": {}}})
    );
    // another manager adds its own finalizer through a JSON patch (Update): both coexist
    let mut new = obj.clone();
    new["metadata"]["finalizers"] = json!(["demo.kubeward.dev/cleanup", "other/x"]);
    record_update(Some(&obj), &mut new, "other", V, None, T1);
    assert_eq!(
        entry(&new, "other").unwrap()["fieldsV1"],
        json!({"f:metadata": {"f:finalizers": {"v:\"other/x\"": {}}}})
    );
    // the applier drops its finalizer: only its own item goes
    let mut applied = rollout(json!({}));
    applied["metadata"]["finalizers"] = json!([]);
    let out = apply(Some(&new), &applied, "ctrl", false).unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["other/x"]));
}

#[test]
fn conditions_are_a_map_keyed_by_type() {
    let status = |conds: Value| json!({"apiVersion": V, "kind": "Rollout", "metadata": {"name": "web", "namespace": "demo"}, "status": {"conditions": conds}});
    let created = apply(None, &rollout(json!({"replicas": 1})), "ctrl", false).unwrap();
    let live = server_side_apply(
        Some(&created),
        &status(json!([{"type": "Ready", "status": "True"}])),
        "a",
        false,
        V,
        Some("status"),
        T0,
    )
    .unwrap();
    assert_eq!(live["spec"], json!({"replicas": 1}));
    assert_eq!(live["metadata"]["name"], "web");
    assert_eq!(
        entry(&live, "a").unwrap(),
        &json!({"manager": "a", "operation": "Apply", "apiVersion": V, "time": T0, "fieldsType": "FieldsV1", "subresource": "status",
            "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}, "f:type": {}}}}}})
    );
    // a second manager owns another condition type without conflict
    let both = server_side_apply(
        Some(&live),
        &status(json!([{"type": "Synced", "status": "False"}])),
        "b",
        false,
        V,
        Some("status"),
        T1,
    )
    .unwrap();
    assert_eq!(
        both["status"]["conditions"],
        json!([{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}])
    );
    // changing a's condition conflicts, with the key in the path and the subresource named
    let err = server_side_apply(
        Some(&both),
        &status(json!([{"type": "Ready", "status": "False"}])),
        "b",
        false,
        V,
        Some("status"),
        T1,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"a\" with subresource \"status\": .status.conditions[type=\"Ready\"].status"
    );
    // a drops its condition: it goes, b's stays
    let dropped = server_side_apply(
        Some(&both),
        &status(json!([])),
        "a",
        false,
        V,
        Some("status"),
        T2,
    )
    .unwrap();
    assert_eq!(
        dropped["status"]["conditions"],
        json!([{"type": "Synced", "status": "False"}])
    );
}

#[test]
fn status_subresource_applies_only_status() {
    let live = apply(None, &rollout(json!({"replicas": 1})), "ctrl", false).unwrap();
    let mut applied = rollout(json!({"replicas": 9}));
    applied["status"] = json!({"phase": "Ready"});
    let obj =
        server_side_apply(Some(&live), &applied, "ctrl", false, V, Some("status"), T1).unwrap();
    assert_eq!(obj["spec"], json!({"replicas": 1}));
    assert_eq!(obj["status"], json!({"phase": "Ready"}));
    let status_entry = obj["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["subresource"] == "status")
        .unwrap();
    assert_eq!(
        status_entry["fieldsV1"],
        json!({"f:status": {"f:phase": {}}})
    );
    // the main-resource Apply entry of the same manager is a different entry
    assert_eq!(entries(&obj).len(), 2);
}

#[test]
fn reset_fields_are_neither_changed_nor_owned() {
    let mut applied = rollout(json!({"replicas": 1}));
    applied["status"] = json!({"phase": "Bogus"});
    let obj = server_side_apply_with_reset(None, &applied, "ctrl", false, V, None, T0, &["status"])
        .unwrap();
    assert!(obj.get("status").is_none());
    assert_eq!(
        entry(&obj, "ctrl").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn invalid_apply_requests() {
    let err = apply(
        None,
        &json!({"apiVersion": "v1", "kind": "Rollout", "metadata": {"name": "x"}}),
        "ctrl",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Incorrect version specified in apply patch. Specified patch version: v1, expected: demo.kubeward.dev/v1"
    );
    let mut applied = rollout(json!({}));
    applied["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        apply(None, &applied, "ctrl", false).unwrap_err(),
        ApplyError::Invalid("metadata.managedFields must be nil".into())
    );
}

#[test]
fn no_op_apply_returns_the_live_object_unchanged() {
    let live = apply(None, &rollout(json!({"replicas": 3})), "ctrl", false).unwrap();
    let again = server_side_apply(
        Some(&live),
        &rollout(json!({"replicas": 3})),
        "ctrl",
        false,
        V,
        None,
        T2,
    )
    .unwrap();
    assert_eq!(again, live);
}

#[test]
fn objects_without_managed_fields_are_owned_by_before_first_apply() {
    let live = rollout(json!({"replicas": 3}));
    let err = apply(Some(&live), &rollout(json!({"replicas": 4})), "ctrl", false).unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using demo.kubeward.dev/v1: .spec.replicas"
    );
}

#[test]
fn client_supplied_managed_fields_are_honoured_and_can_be_reset() {
    let live = apply(None, &rollout(json!({"replicas": 3})), "ctrl", false).unwrap();
    let mut cleared = live.clone();
    cleared["metadata"]["managedFields"] = json!([{}]);
    record_update(Some(&live), &mut cleared, "x", V, None, T1);
    assert!(cleared["metadata"].get("managedFields").is_none());
}

#[test]
fn request_helpers_match_the_apiserver() {
    assert_eq!(
        manager_or_user_agent(None, "kubectl/v1.34.0 (linux/amd64) kubernetes/abc"),
        "kubectl"
    );
    assert_eq!(manager_or_user_agent(Some("ctrl"), "kube-rs/5"), "ctrl");
    assert_eq!(manager_or_user_agent(Some(""), "kube-rs/5"), "kube-rs");
    assert_eq!(manager_or_user_agent(None, &"x".repeat(200)).len(), 128);
    assert_eq!(
        validate_patch_options(true, "", false).unwrap_err(),
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    assert_eq!(
        validate_patch_options(false, "", true).unwrap_err(),
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
    assert!(validate_patch_options(true, "ctrl", true).is_ok());
    assert!(validate_patch_options(false, "", false).is_ok());
}

#[test]
fn a_crd_schema_decides_list_merging() {
    let status = |conds: Value| json!({"apiVersion": V, "kind": "Rollout", "metadata": {"name": "web", "namespace": "demo"}, "status": {"conditions": conds}});
    // a CRD that does not declare x-kubernetes-list-type: conditions are atomic
    let atomic = ApplySchema::from_openapi_v3(&json!({"type": "object", "properties": {
        "status": {"type": "object", "properties": {"conditions": {"type": "array", "items": {"type": "object"}}}}}}));
    let at = Endpoint {
        api_version: V,
        subresource: None,
        reset_fields: &[],
        schema: &atomic,
        empty_structs: EmptyStructs::Kept,
    };
    let live = apply_at(
        None,
        &status(json!([{"type": "Ready", "status": "True"}])),
        "a",
        false,
        &at,
        T0,
    )
    .unwrap();
    assert_eq!(
        entry(&live, "a").unwrap()["fieldsV1"],
        json!({"f:status": {"f:conditions": {}}})
    );
    let err = apply_at(
        Some(&live),
        &status(json!([{"type": "Synced", "status": "True"}])),
        "b",
        false,
        &at,
        T1,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"a\": .status.conditions"
    );
    // the same with the list declared a map: no conflict, both conditions kept
    let keyed = ApplySchema::from_openapi_v3(&json!({"type": "object", "properties": {
        "status": {"type": "object", "properties": {"conditions": {"type": "array",
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"], "items": {"type": "object"}}}}}}));
    let at = Endpoint {
        schema: &keyed,
        ..at
    };
    let live = apply_at(
        None,
        &status(json!([{"type": "Ready", "status": "True"}])),
        "a",
        false,
        &at,
        T0,
    )
    .unwrap();
    let both = apply_at(
        Some(&live),
        &status(json!([{"type": "Synced", "status": "True"}])),
        "b",
        false,
        &at,
        T1,
    )
    .unwrap();
    assert_eq!(both["status"]["conditions"].as_array().unwrap().len(), 2);
}

#[test]
fn nested_lists_and_map_entries_follow_the_schema() {
    let schema = ApplySchema::metadata_only()
        .with_list("spec.containers", ListType::Map(vec!["name".into()]))
        .with_list(
            "spec.containers[].ports",
            ListType::Map(vec!["containerPort".into()]),
        )
        .with_list("spec.tags", ListType::Set)
        .with_map("spec.selectors")
        .with_list("spec.selectors.*", ListType::Set);
    let at = Endpoint {
        api_version: V,
        subresource: None,
        reset_fields: &[],
        schema: &schema,
        empty_structs: EmptyStructs::Kept,
    };
    let first = rollout(json!({
        "containers": [{"name": "app", "image": "a:1", "ports": [{"containerPort": 80}]}],
        "tags": ["x"],
        "selectors": {"zone": ["a"]},
    }));
    let live = apply_at(None, &first, "a", false, &at, T0).unwrap();
    assert_eq!(
        entry(&live, "a").unwrap()["fieldsV1"]["f:spec"],
        json!({
            "f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {},
                "f:ports": {"k:{\"containerPort\":80}": {".": {}, "f:containerPort": {}}}}},
            "f:selectors": {"f:zone": {"v:\"a\"": {}}},
            "f:tags": {"v:\"x\"": {}},
        })
    );
    // b adds a port to the same container, a tag and a selector value: merged, no conflict
    let second = rollout(json!({
        "containers": [{"name": "app", "ports": [{"containerPort": 443}]}],
        "tags": ["y"],
        "selectors": {"zone": ["b"]},
    }));
    let merged = apply_at(Some(&live), &second, "b", false, &at, T1).unwrap();
    assert_eq!(
        merged["spec"],
        json!({
            "containers": [{"name": "app", "image": "a:1", "ports": [{"containerPort": 80}, {"containerPort": 443}]}],
            "tags": ["x", "y"],
            "selectors": {"zone": ["a", "b"]},
        })
    );
    // a changing the image b does not own is fine; b changing a's image conflicts
    let err = apply_at(
        Some(&merged),
        &rollout(json!({"containers": [{"name": "app", "image": "a:2"}]})),
        "b",
        false,
        &at,
        T2,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"a\": .spec.containers[name=\"app\"].image"
    );
}

#[test]
fn field_sets_round_trip_through_fields_v1() {
    let v = json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}}}}});
    assert_eq!(FieldSet::from_fields_v1(&v).to_fields_v1(), v);
}

fn arb_spec() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(
        "[abc]",
        prop_oneof![
            (0i64..3).prop_map(|n| json!(n)),
            "[xy]".prop_map(Value::String)
        ],
        0..4,
    )
    .prop_map(|m| Value::Object(m.into_iter().collect()))
}

proptest! {
    #[test]
    fn applying_twice_is_a_no_op(spec in arb_spec()) {
        let once = apply(None, &rollout(spec.clone()), "ctrl", false).unwrap();
        let twice = server_side_apply(Some(&once), &rollout(spec), "ctrl", false, V, None, T2).unwrap();
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn an_applier_owns_exactly_what_it_applied_and_its_fields_hold_its_values(
        first in arb_spec(), second in arb_spec(),
    ) {
        let live = apply(None, &rollout(first), "a", false).unwrap();
        let obj = apply(Some(&live), &rollout(second.clone()), "b", true).unwrap();
        for (k, v) in second.as_object().unwrap() {
            prop_assert_eq!(&obj["spec"][k], v);
        }
        let owned = entry(&obj, "b").map(|e| e["fieldsV1"]["f:spec"].clone()).unwrap_or(json!({}));
        let keys: Vec<String> = second.as_object().unwrap().keys().map(|k| format!("f:{k}")).collect();
        let owned_keys: Vec<String> = owned.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        prop_assert_eq!(owned_keys, keys);
        // no field is owned by both a and b with different views: a lost what b forced
        if let Some(a) = entry(&obj, "a") {
            for k in a["fieldsV1"]["f:spec"].as_object().unwrap().keys() {
                let name = &k[2..];
                let a_value = &live["spec"][name];
                prop_assert_eq!(&obj["spec"][name], a_value);
            }
        }
    }

    #[test]
    fn update_owner_sets_partition_changed_fields(before in arb_spec(), after in arb_spec()) {
        let mut live = rollout(before);
        record_update(None, &mut live, "one", V, None, T0);
        let mut new = rollout(after.clone());
        record_update(Some(&live), &mut new, "two", V, None, T1);
        // every spec field is owned by exactly one of the two managers
        let owners = |k: &str| ["one", "two"].iter().filter(|m| entry(&new, m).is_some_and(|e| e["fieldsV1"]["f:spec"].get(format!("f:{k}")).is_some())).count();
        for k in after.as_object().unwrap().keys() {
            prop_assert_eq!(owners(k), 1, "field {}", k);
        }
    }
}

/// `ValidatePatchOptions` for the common mistakes, with the 422 message the server returns
/// (`PatchOptions.meta.k8s.io "" is invalid: …`): an apply patch needs a field manager, and
/// `force` is only for apply patches.
pub(super) fn validate_patch_options(
    apply: bool,
    field_manager: &str,
    force: bool,
) -> Result<(), String> {
    let mut errs = Vec::new();
    if !apply && force {
        errs.push("force: Forbidden: may not be specified for non-apply patch");
    }
    if apply && field_manager.is_empty() {
        errs.push("fieldManager: Required value: is required for apply patch");
    }
    match errs.as_slice() {
        [] => Ok(()),
        [one] => Err(format!("PatchOptions.meta.k8s.io \"\" is invalid: {one}")),
        many => Err(format!(
            "PatchOptions.meta.k8s.io \"\" is invalid: [{}]",
            many.join(", ")
        )),
    }
}

/// Server-side apply of `applied` (the request body) onto `live` (`None` creates) by `manager`,
/// returning the object to store with its `managedFields`. See the module docs for the rules.
///
/// `api_version` is the version the request is served at (the applied object's `apiVersion`
/// must equal it), `subresource` the subresource the request addresses, `now` the RFC 3339
/// time written into the applier's entry when the apply changes something.
pub(super) fn server_side_apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    api_version: &str,
    subresource: Option<&str>,
    now: &str,
) -> Result<Value, ApplyError> {
    server_side_apply_with_reset(
        live,
        applied,
        manager,
        force,
        api_version,
        subresource,
        now,
        &[],
    )
}

/// [`server_side_apply`] with top-level fields the resource's strategy resets on this endpoint
/// (`GetResetFields`): pass `["status"]` for the main resource of a kind with a status
/// subresource. Reset fields keep their live value and are owned by no one through this call.
#[allow(clippy::too_many_arguments)]
pub(super) fn server_side_apply_with_reset(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    api_version: &str,
    subresource: Option<&str>,
    now: &str,
    reset: &[&str],
) -> Result<Value, ApplyError> {
    let at = Endpoint {
        api_version,
        subresource,
        reset_fields: reset,
        schema: ApplySchema::builtin_default(),
        empty_structs: EmptyStructs::Kept,
    };
    apply_at(live, applied, manager, force, &at, now)
}

/// The comparison that sees a built-in's empty structs as absent finds exactly what comparing
/// copies stripped of them finds (the field manager's view of a Go-typed object), for the
/// value structs of a kind (`At`) and for every struct (`All`).
#[test]
fn empty_structs_compare_as_absent_without_a_stripped_copy() {
    fn paths(c: &merge::Comparison) -> [Vec<Vec<String>>; 3] {
        [c.added.paths(), c.modified.paths(), c.removed.paths()]
    }
    // The copies the field manager compared before: empty objects removed, innermost first.
    fn strip(value: &Value, covered: &dyn Fn(&[&str]) -> bool) -> Value {
        fn prune(v: &mut Value, path: &mut Vec<String>, covered: &dyn Fn(&[&str]) -> bool) {
            if let Value::Object(map) = v {
                for (k, child) in map.iter_mut() {
                    path.push(k.clone());
                    prune(child, path, covered);
                    path.pop();
                }
                map.retain(|k, child| {
                    path.push(k.clone());
                    let names: Vec<&str> = path.iter().map(String::as_str).collect();
                    let empty_struct =
                        covered(&names) && child.as_object().is_some_and(Map::is_empty);
                    path.pop();
                    !empty_struct
                });
            }
        }
        let mut v = value.clone();
        prune(&mut v, &mut Vec::new(), covered);
        v
    }
    const VALUE_STRUCTS: &[&str] = &["spec", "spec.strategy", "spec.template", "status"];
    let at = |names: &[&str]| VALUE_STRUCTS.contains(&names.join(".").as_str());
    let all = |names: &[&str]| names.first() != Some(&"metadata");
    let old = json!({
        "metadata": {"name": "a", "labels": {}},
        "spec": {"replicas": 1, "strategy": {}, "template": {"spec": {"resources": {}}}},
        "status": {},
    });
    let news = [
        json!({"metadata": {"name": "a"}, "spec": {"replicas": 2, "strategy": {}, "template": {}}}),
        json!({"metadata": {"name": "a"}, "spec": {"replicas": 1, "strategy": {"rollingUpdate": {}}}, "status": {"x": {}}}),
        json!({"metadata": {"name": "a", "labels": {}}, "spec": {"template": {"spec": {}}}, "status": {"ready": 1}}),
        old.clone(),
    ];
    let sc = ApplySchema::builtin_default();
    for new in &news {
        for (voids, covered) in [
            (
                EmptyStructs::At(VALUE_STRUCTS),
                &at as &dyn Fn(&[&str]) -> bool,
            ),
            (EmptyStructs::All, &all),
        ] {
            let typed = merge::compare_typed(sc, voids, &old, new);
            let stripped = merge::compare(sc, &strip(&old, covered), &strip(new, covered));
            assert_eq!(paths(&typed), paths(&stripped), "{voids:?}: {old} -> {new}");
        }
    }
}
