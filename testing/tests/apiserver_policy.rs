//! core/v1 ResourceQuotas and LimitRanges, policy/v1 PodDisruptionBudgets (with the evictions
//! they guard) and discovery.k8s.io/v1 EndpointSlices on the in-process API server through a
//! real `kube::Client`: defaults read back, upstream's refusals, generation, status vs main
//! writes, discovery and `kubectl get` columns.

mod apiserver_support;

use apiserver_support::{
    assert_invalid, assert_table, create, discovered, merge, merge_status, raw, table,
};
use k8s_openapi::api::core::v1::{LimitRange, Pod, ResourceQuota, ServiceAccount};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, PostParams};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

/// POSTs an Eviction of the pod `pod` of `default`: the status and the body.
async fn evict(client: &kube::Client, pod: &str) -> (u16, Value) {
    raw(
        client,
        "POST",
        &format!("/api/v1/namespaces/default/pods/{pod}/eviction"),
        Some("application/json"),
        Some(json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod}})),
    )
    .await
}

/// The cells of a table's first row.
fn first_row(table: &Value) -> Vec<Value> {
    table["rows"][0]["cells"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn a_limit_range_defaults_container_limits_from_its_bounds() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let limits: Api<LimitRange> = Api::namespaced(client.clone(), "default");
    let created = create(
        &limits,
        json!({"metadata": {"name": "limits"}, "spec": {"limits": [
            {"type": "Container", "max": {"cpu": "2", "memory": "1024Mi"}, "min": {"cpu": "0.1"}},
            {"type": "Pod", "max": {"cpu": "4"}}]}}),
    )
    .await
    .unwrap();
    assert_eq!(
        created["spec"]["limits"][0],
        json!({"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "100m"},
            "default": {"cpu": "2", "memory": "1Gi"},
            "defaultRequest": {"cpu": "2", "memory": "1Gi"}})
    );
    assert_eq!(
        created["spec"]["limits"][1],
        json!({"type": "Pod", "max": {"cpu": "4"}})
    );
    let refused = create(
        &limits,
        json!({"metadata": {"name": "bad"}, "spec": {"limits": [
            {"type": "Container", "default": {"cpu": "100m"}, "defaultRequest": {"cpu": "200m"}},
            {"type": "Pod", "default": {"cpu": "1"}}]}}),
    )
    .await;
    assert_invalid(
        refused,
        "LimitRange \"bad\" is invalid: [spec.limits[0].defaultRequest[cpu]: Invalid value: \"200m\": default request value 200m is greater than default limit value 100m, spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod']",
    );
    let (table, names) = table(&client, "/api/v1/namespaces/default/limitranges").await;
    assert_eq!(names, ["Name", "Created At"]);
    assert_eq!(table["columnDefinitions"][1]["type"], "date");
    assert_eq!(
        first_row(&table)[1],
        created["metadata"]["creationTimestamp"]
    );
}

#[tokio::test]
async fn a_quota_keeps_its_spec_and_status_apart_and_shows_usage() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "default");
    let created = create(
        &quotas,
        json!({"metadata": {"name": "compute"}, "spec": {"hard": {
            "requests.cpu": "0.5", "limits.memory": "2048Mi", "pods": "10"}},
            "status": {"used": {"pods": "3"}}}),
    )
    .await
    .unwrap();
    assert_eq!(
        created["spec"]["hard"],
        json!({"requests.cpu": "500m", "limits.memory": "2Gi", "pods": "10"})
    );
    assert_eq!(created["status"], json!({}));
    assert!(created["metadata"].get("generation").is_none());
    let status = json!({"status": {"hard": {"requests.cpu": "500m", "limits.memory": "2Gi", "pods": "10"},
        "used": {"requests.cpu": "100m", "limits.memory": "1Gi", "pods": "3"}},
        "spec": {"hard": {"pods": "99"}}});
    let written = merge_status(&quotas, "compute", status).await.unwrap();
    assert_eq!(written["spec"]["hard"]["pods"], "10");
    assert_eq!(written["status"]["used"]["pods"], "3");
    let main = merge(
        &quotas,
        "compute",
        json!({"spec": {"hard": {"pods": "20"}}, "status": {"used": {"pods": "0"}}}),
    )
    .await
    .unwrap();
    assert_eq!(main["spec"]["hard"]["pods"], "20");
    assert_eq!(main["status"]["used"]["pods"], "3");
    assert_table(
        &client,
        "/api/v1/namespaces/default/resourcequotas",
        "Name, Request, Limit, Age",
        &[
            (1, json!("pods: 3/10, requests.cpu: 100m/500m")),
            (2, json!("limits.memory: 1Gi/2Gi")),
        ],
    )
    .await;
    let refused = create(
        &quotas,
        json!({"metadata": {"name": "bad"}, "spec": {"hard": {"pods": "1.5", "cpu": "1"},
            "scopes": ["BestEffort"]}}),
    )
    .await;
    assert_invalid(
        refused,
        "ResourceQuota \"bad\" is invalid: [spec.hard[pods]: Invalid value: \"1500m\": must be an integer, spec.scopes: Invalid value: [\"BestEffort\"]: unsupported scope applied to resource]",
    );
}

#[tokio::test]
async fn a_budget_bumps_generation_on_spec_changes_and_refuses_both_bounds() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    let created = create(
        &budgets,
        json!({"metadata": {"name": "web"}, "spec": {"maxUnavailable": "25%",
            "selector": {"matchLabels": {"app": "web"}}}}),
    )
    .await
    .unwrap();
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(
        created["status"],
        json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0})
    );
    for (patch, generation) in [
        (json!({"metadata": {"labels": {"a": "b"}}}), 1),
        (json!({"spec": {"maxUnavailable": 1}}), 2),
    ] {
        let patched = merge(&budgets, "web", patch.clone()).await.unwrap();
        assert_eq!(patched["metadata"]["generation"], generation, "{patch}");
    }
    let refused = create(
        &budgets,
        json!({"metadata": {"name": "both"}, "spec": {"minAvailable": 1, "maxUnavailable": "150%"}}),
    )
    .await;
    assert_invalid(
        refused,
        "PodDisruptionBudget.policy \"both\" is invalid: [spec: Invalid value: {\"MinAvailable\":1,\"Selector\":null,\"MaxUnavailable\":\"150%\",\"UnhealthyPodEvictionPolicy\":null}: minAvailable and maxUnavailable cannot be both set, spec.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%]",
    );
    assert_table(
        &client,
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        "Name, Min Available, Max Unavailable, Allowed Disruptions, Age",
        &[(1, json!("N/A")), (2, json!("1")), (3, json!(0))],
    )
    .await;
}

#[tokio::test]
async fn an_eviction_takes_one_disruption_of_the_pods_budget_then_is_refused() {
    let server = ApiServer::start().await.unwrap();
    // kube's default retry policy would retry the 429s asserted here.
    let mut config = kube::Config::new(server.url().parse().unwrap());
    config.default_retry = false;
    let client = kube::Client::try_from(config).unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    // No service-account controller runs: the pods' account is made by hand.
    let accounts: Api<ServiceAccount> = Api::default_namespaced(client.clone());
    let account = json!({"metadata": {"name": "default"}, "automountServiceAccountToken": false});
    accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(account).unwrap(),
        )
        .await
        .unwrap();
    for name in ["a", "b"] {
        create(
            &pods,
            json!({"metadata": {"name": name, "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}),
        )
        .await
        .unwrap();
        merge_status(
            &pods,
            name,
            json!({"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}]}}),
        )
        .await
        .unwrap();
    }
    create(
        &budgets,
        json!({"metadata": {"name": "web"}, "spec": {"minAvailable": 1,
            "selector": {"matchLabels": {"app": "web"}}}}),
    )
    .await
    .unwrap();
    // The budget's status is not yet the controller's.
    let (code, answer) = evict(&client, "a").await;
    assert_eq!(code, 429);
    assert_eq!(
        answer["details"]["causes"],
        json!([{"reason": "DisruptionBudget", "message": "The disruption budget web is still being processed by the server."}])
    );
    assert_eq!(answer["details"]["retryAfterSeconds"], 10);
    merge_status(
        &budgets,
        "web",
        json!({"status": {"observedGeneration": 1,
        "disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}}),
    )
    .await
    .unwrap();
    let (code, _) = evict(&client, "a").await;
    assert_eq!(code, 201);
    assert!(pods.get_opt("a").await.unwrap().is_none());
    let budget = serde_json::to_value(budgets.get("web").await.unwrap()).unwrap();
    assert_eq!(budget["status"]["disruptionsAllowed"], 0);
    assert!(
        budget["status"]["disruptedPods"]["a"].is_string(),
        "{budget}"
    );
    assert_eq!(
        budget["status"]["conditions"][0]["reason"],
        "InsufficientPods"
    );
    let (code, answer) = evict(&client, "b").await;
    assert_eq!(
        (code, answer["message"].as_str()),
        (
            429,
            Some("Cannot evict pod as it would violate the pod's disruption budget.")
        )
    );
    assert_eq!(
        answer["details"]["causes"][0]["message"],
        "The disruption budget web needs 1 healthy pods and has 2 currently"
    );
    assert!(pods.get_opt("b").await.unwrap().is_some());
}

#[tokio::test]
async fn a_slice_defaults_its_ports_and_keeps_its_address_type() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), "default");
    let created = create(
        &slices,
        json!({"metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": "IPv4", "ports": [{"port": 80}, {"name": "https", "port": 443}],
            "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]},
                {"addresses": ["10.0.0.3", "10.0.0.4"]}]}),
    )
    .await
    .unwrap();
    assert_eq!(
        created["ports"],
        json!([{"name": "", "port": 80, "protocol": "TCP"},
            {"name": "https", "port": 443, "protocol": "TCP"}])
    );
    assert_eq!(created["metadata"]["generation"], 1);
    // A slice's metadata changes count as generations.
    for (metadata, generation) in [
        (json!({"labels": {"a": "b"}}), 2),
        (json!({"annotations": {"a": "b"}}), 2),
    ] {
        let patched = merge(&slices, "web-abc", json!({"metadata": metadata}))
            .await
            .unwrap();
        assert_eq!(patched["metadata"]["generation"], generation, "{metadata}");
    }
    let refused = merge(&slices, "web-abc", json!({"addressType": "IPv6"})).await;
    assert_invalid(
        refused,
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: addressType: Invalid value: \"IPv6\": field is immutable",
    );
    assert_table(
        &client,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
        "Name, AddressType, Ports, Endpoints, Age",
        &[
            (1, json!("IPv4")),
            (2, json!("80,443")),
            (3, json!("10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...")),
        ],
    )
    .await;
}

#[tokio::test]
async fn discovery_lists_the_kinds_with_their_short_names() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let resource = |list: &Value, name: &str| discovered(list, name).unwrap_or(Value::Null);
    let (_, core) = raw(&client, "GET", "/api/v1", None, None).await;
    let (_, policy) = raw(&client, "GET", "/apis/policy/v1", None, None).await;
    let (_, slices) = raw(&client, "GET", "/apis/discovery.k8s.io/v1", None, None).await;
    for (list, name, field, value) in [
        (&core, "resourcequotas", "shortNames", json!(["quota"])),
        (
            &core,
            "resourcequotas/status",
            "kind",
            json!("ResourceQuota"),
        ),
        (&core, "limitranges", "shortNames", json!(["limits"])),
        (
            &policy,
            "poddisruptionbudgets",
            "shortNames",
            json!(["pdb"]),
        ),
        (
            &policy,
            "poddisruptionbudgets/status",
            "kind",
            json!("PodDisruptionBudget"),
        ),
        (&slices, "endpointslices", "kind", json!("EndpointSlice")),
    ] {
        assert_eq!(resource(list, name)[field], value, "{name}'s {field}");
    }
    assert!(resource(&core, "limitranges/status").is_null());
    let slice = resource(&slices, "endpointslices");
    assert!(slice.get("shortNames").is_none(), "{slice}");
}
