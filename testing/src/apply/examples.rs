#[test]
fn from_openapi_v3() {
    use crate::apply::ApplySchema;
    let crd_schema = serde_json::json!({"type": "object", "properties": {
        "status": {"type": "object", "properties": {"conditions": {
            "type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
            "items": {"type": "object"}}}}}});
    let schema = ApplySchema::from_openapi_v3(&crd_schema);
    assert_eq!(
        schema.list_type(&["f:status".to_owned(), "f:conditions".to_owned()]),
        crate::apply::schema::ListType::Map(vec!["type".to_owned()])
    );
}

#[test]
fn server_side_apply() {
    use crate::apply::record_update;
    use crate::apply::tests::server_side_apply;
    use serde_json::json;
    let now = "2026-01-01T00:00:00Z";
    let mut live = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "web", "namespace": "demo"}, "data": {"replicas": "1"}});
    record_update(None, &mut live, "kubectl-create", "v1", None, now);
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "web", "namespace": "demo"}, "data": {"replicas": "2"}});
    let err = server_side_apply(Some(&live), &applied, "ctrl", false, "v1", None, now).unwrap_err();
    assert_eq!(
        err.message(),
        r#"Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.replicas"#
    );
    let forced = server_side_apply(Some(&live), &applied, "ctrl", true, "v1", None, now).unwrap();
    assert_eq!(forced["data"]["replicas"], "2");
}
