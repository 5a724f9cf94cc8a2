//! core/v1 ResourceQuotas and LimitRanges, policy/v1 PodDisruptionBudgets (with the evictions
//! they guard) and discovery.k8s.io/v1 EndpointSlices on the in-process API server through a
//! real `kube::Client`: defaults read back, upstream's refusals, generation, status vs main
//! writes, discovery and `kubectl get` columns.

mod apiserver_support;

use apiserver_support::{raw, table};
use k8s_openapi::api::core::v1::{LimitRange, Pod, ResourceQuota, ServiceAccount};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubeward_testing::ApiServer;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

async fn create<K>(client: &Client, object: Value) -> Result<Value, kube::Error>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), "default");
    let object: K = serde_json::from_value(object).unwrap();
    let created = api.create(&PostParams::default(), &object).await?;
    Ok(serde_json::to_value(created).unwrap())
}

async fn merge<K>(
    client: &Client,
    name: &str,
    status: bool,
    body: Value,
) -> Result<Value, kube::Error>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + serde::Serialize,
{
    let api: Api<K> = Api::namespaced(client.clone(), "default");
    let params = PatchParams::default();
    let patched = if status {
        api.patch_status(name, &params, &Patch::Merge(&body))
            .await?
    } else {
        api.patch(name, &params, &Patch::Merge(&body)).await?
    };
    Ok(serde_json::to_value(patched).unwrap())
}

/// The code and message of the API error `result` must be.
fn refusal<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (u16, String) {
    match result.unwrap_err() {
        kube::Error::Api(status) => (status.code, status.message),
        other => panic!("not an API error: {other}"),
    }
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
    let created = create::<LimitRange>(
        &client,
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
    let refused = create::<LimitRange>(
        &client,
        json!({"metadata": {"name": "bad"}, "spec": {"limits": [
            {"type": "Container", "default": {"cpu": "100m"}, "defaultRequest": {"cpu": "200m"}},
            {"type": "Pod", "default": {"cpu": "1"}}]}}),
    )
    .await;
    assert_eq!(
        refusal(refused),
        (
            422,
            "LimitRange \"bad\" is invalid: [spec.limits[0].defaultRequest[cpu]: Invalid value: \"200m\": default request value 200m is greater than default limit value 100m, spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod']".to_owned()
        )
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
    let created = create::<ResourceQuota>(
        &client,
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
    let written = merge::<ResourceQuota>(&client, "compute", true, status)
        .await
        .unwrap();
    assert_eq!(written["spec"]["hard"]["pods"], "10");
    assert_eq!(written["status"]["used"]["pods"], "3");
    let main = merge::<ResourceQuota>(
        &client,
        "compute",
        false,
        json!({"spec": {"hard": {"pods": "20"}}, "status": {"used": {"pods": "0"}}}),
    )
    .await
    .unwrap();
    assert_eq!(main["spec"]["hard"]["pods"], "20");
    assert_eq!(main["status"]["used"]["pods"], "3");
    let (table, names) = table(&client, "/api/v1/namespaces/default/resourcequotas").await;
    assert_eq!(names, ["Name", "Request", "Limit", "Age"]);
    let row = first_row(&table);
    assert_eq!(row[1], "pods: 3/10, requests.cpu: 100m/500m");
    assert_eq!(row[2], "limits.memory: 1Gi/2Gi");
    let refused = create::<ResourceQuota>(
        &client,
        json!({"metadata": {"name": "bad"}, "spec": {"hard": {"pods": "1.5", "cpu": "1"},
            "scopes": ["BestEffort"]}}),
    )
    .await;
    assert_eq!(
        refusal(refused),
        (
            422,
            "ResourceQuota \"bad\" is invalid: [spec.hard[pods]: Invalid value: \"1500m\": must be an integer, spec.scopes: Invalid value: [\"BestEffort\"]: unsupported scope applied to resource]".to_owned()
        )
    );
}

#[tokio::test]
async fn a_budget_bumps_generation_on_spec_changes_and_refuses_both_bounds() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let created = create::<PodDisruptionBudget>(
        &client,
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
    let labelled = merge::<PodDisruptionBudget>(
        &client,
        "web",
        false,
        json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await
    .unwrap();
    assert_eq!(labelled["metadata"]["generation"], 1);
    let changed = merge::<PodDisruptionBudget>(
        &client,
        "web",
        false,
        json!({"spec": {"maxUnavailable": 1}}),
    )
    .await
    .unwrap();
    assert_eq!(changed["metadata"]["generation"], 2);
    let refused = create::<PodDisruptionBudget>(
        &client,
        json!({"metadata": {"name": "both"}, "spec": {"minAvailable": 1, "maxUnavailable": "150%"}}),
    )
    .await;
    assert_eq!(
        refusal(refused),
        (
            422,
            "PodDisruptionBudget.policy \"both\" is invalid: [spec: Invalid value: {\"MinAvailable\":1,\"Selector\":null,\"MaxUnavailable\":\"150%\",\"UnhealthyPodEvictionPolicy\":null}: minAvailable and maxUnavailable cannot be both set, spec.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%]".to_owned()
        )
    );
    let (table, names) = table(
        &client,
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    )
    .await;
    assert_eq!(
        names,
        [
            "Name",
            "Min Available",
            "Max Unavailable",
            "Allowed Disruptions",
            "Age"
        ]
    );
    assert_eq!(
        first_row(&table)[1..4],
        [json!("N/A"), json!("1"), json!(0)]
    );
}

#[tokio::test]
async fn an_eviction_takes_one_disruption_of_the_pods_budget_then_is_refused() {
    let server = ApiServer::start().await.unwrap();
    // kube's default retry policy would retry the 429s asserted here.
    let mut config = kube::Config::new(server.url().parse().unwrap());
    config.default_retry = false;
    let client = kube::Client::try_from(config).unwrap();
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
        create::<Pod>(
            &client,
            json!({"metadata": {"name": name, "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}),
        )
        .await
        .unwrap();
        merge::<Pod>(
            &client,
            name,
            true,
            json!({"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}]}}),
        )
        .await
        .unwrap();
    }
    create::<PodDisruptionBudget>(
        &client,
        json!({"metadata": {"name": "web"}, "spec": {"minAvailable": 1,
            "selector": {"matchLabels": {"app": "web"}}}}),
    )
    .await
    .unwrap();
    let eviction = |pod: &str| json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod}});
    let path = |pod: &str| format!("/api/v1/namespaces/default/pods/{pod}/eviction");
    // The budget's status is not yet the controller's.
    let (code, answer) = raw(
        &client,
        "POST",
        &path("a"),
        Some("application/json"),
        Some(eviction("a")),
    )
    .await;
    assert_eq!(code, 429);
    assert_eq!(
        answer["details"]["causes"],
        json!([{"reason": "DisruptionBudget", "message": "The disruption budget web is still being processed by the server."}])
    );
    assert_eq!(answer["details"]["retryAfterSeconds"], 10);
    merge::<PodDisruptionBudget>(
        &client,
        "web",
        true,
        json!({"status": {"observedGeneration": 1,
        "disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}}),
    )
    .await
    .unwrap();
    let (code, _) = raw(
        &client,
        "POST",
        &path("a"),
        Some("application/json"),
        Some(eviction("a")),
    )
    .await;
    assert_eq!(code, 201);
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    assert!(pods.get_opt("a").await.unwrap().is_none());
    let budgets: Api<PodDisruptionBudget> = Api::default_namespaced(client.clone());
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
    let (code, answer) = raw(
        &client,
        "POST",
        &path("b"),
        Some("application/json"),
        Some(eviction("b")),
    )
    .await;
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
    let created = create::<EndpointSlice>(
        &client,
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
    let relabelled = merge::<EndpointSlice>(
        &client,
        "web-abc",
        false,
        json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await
    .unwrap();
    assert_eq!(relabelled["metadata"]["generation"], 2);
    let annotated = merge::<EndpointSlice>(
        &client,
        "web-abc",
        false,
        json!({"metadata": {"annotations": {"a": "b"}}}),
    )
    .await
    .unwrap();
    assert_eq!(annotated["metadata"]["generation"], 2);
    let refused =
        merge::<EndpointSlice>(&client, "web-abc", false, json!({"addressType": "IPv6"})).await;
    assert_eq!(
        refusal(refused),
        (
            422,
            "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: addressType: Invalid value: \"IPv6\": field is immutable".to_owned()
        )
    );
    let (table, names) = table(
        &client,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
    )
    .await;
    assert_eq!(names, ["Name", "AddressType", "Ports", "Endpoints", "Age"]);
    assert_eq!(
        first_row(&table)[1..4],
        [
            json!("IPv4"),
            json!("80,443"),
            json!("10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...")
        ]
    );
}

#[tokio::test]
async fn discovery_lists_the_kinds_with_their_short_names() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let resource = |list: &Value, name: &str| {
        list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let (_, core) = raw(&client, "GET", "/api/v1", None, None).await;
    assert_eq!(
        resource(&core, "resourcequotas")["shortNames"],
        json!(["quota"])
    );
    assert_eq!(
        resource(&core, "resourcequotas/status")["kind"],
        "ResourceQuota"
    );
    assert_eq!(
        resource(&core, "limitranges")["shortNames"],
        json!(["limits"])
    );
    assert!(resource(&core, "limitranges/status").is_null());
    let (_, policy) = raw(&client, "GET", "/apis/policy/v1", None, None).await;
    assert_eq!(
        resource(&policy, "poddisruptionbudgets")["shortNames"],
        json!(["pdb"])
    );
    assert_eq!(
        resource(&policy, "poddisruptionbudgets/status")["kind"],
        "PodDisruptionBudget"
    );
    let (_, slices) = raw(&client, "GET", "/apis/discovery.k8s.io/v1", None, None).await;
    let slice = resource(&slices, "endpointslices");
    assert_eq!(slice["kind"], "EndpointSlice");
    assert!(slice.get("shortNames").is_none(), "{slice}");
}
