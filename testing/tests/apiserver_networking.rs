//! networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies and autoscaling
//! HorizontalPodAutoscalers (v2 and v1) on the in-process API server through a real
//! `kube::Client`: defaults read back, upstream's refusals, generation, status vs main writes,
//! the v1 ↔ v2 conversion of an HPA with its annotations, discovery and `kubectl get` columns.

mod apiserver_support;

use apiserver_support::{assert_table, causes, discovered, raw, raw_merge, table, with_spec};
use k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler as HpaV1;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler as HpaV2;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use kube::api::{Api, PostParams};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

const INGRESSES: &str = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
const POLICIES: &str = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies";
const CLASSES: &str = "/apis/networking.k8s.io/v1/ingressclasses";
const HPAS_V2: &str = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
const HPAS_V1: &str = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";

fn ingress(spec: Value) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "shop"}, "spec": spec})
}

fn shop_rules() -> Value {
    json!([{"host": "shop.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
        "backend": {"service": {"name": "shop", "port": {"number": 80}}}}]}}])
}

fn hpa_v2(spec: Value) -> Value {
    with_spec(
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "maxReplicas": 10}}),
        spec,
    )
}

#[tokio::test]
async fn an_ingress_is_served_with_its_rules_status_and_columns() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let typed: Ingress = serde_json::from_value(ingress(json!({"ingressClassName": "nginx",
        "rules": shop_rules(), "tls": [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}]})))
    .unwrap();
    let created = Api::<Ingress>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &typed)
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    let one = format!("{INGRESSES}/shop");
    // A main write keeps the status; a status write keeps the spec.
    let (code, body) = raw_merge(
        &client,
        &one,
        json!({
        "spec": {"ingressClassName": "traefik"},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}}),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["metadata"]["generation"], 2);
    assert_eq!(body["status"], json!({"loadBalancer": {}}));
    let (code, body) = raw_merge(
        &client,
        &format!("{one}/status"),
        json!({
        "spec": {"ingressClassName": "other"},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}}),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["ingressClassName"], "traefik");
    assert_eq!(body["metadata"]["generation"], 2);
    assert_table(
        &client,
        INGRESSES,
        "Name, Class, Hosts, Address, Ports, Age",
        &[
            (0, json!("shop")),
            (1, json!("traefik")),
            (2, json!("shop.example.com")),
            (3, json!("192.0.2.1")),
            (4, json!("80, 443")),
        ],
    )
    .await;
}

#[tokio::test]
async fn an_ingress_is_refused_with_upstreams_messages() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let (code, body) = raw(&client, "POST", INGRESSES, None, Some(ingress(json!({})))).await;
    assert_eq!(code, 422);
    assert_eq!(
        causes(&body),
        ["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"]
    );
    let (code, body) = raw(&client, "POST", INGRESSES, None, Some(ingress(json!({"rules": [
        {"host": "*.*.example.com", "http": {"paths": [
            {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
            {"path": "/a//b", "pathType": "Exact",
             "backend": {"service": {"name": "web", "port": {"name": "http", "number": 80}}}}]}}]})))).await;
    assert_eq!(code, 422);
    assert_eq!(
        causes(&body),
        [
            "spec.rules[0].host: Invalid value: \"*.*.example.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
            "spec.rules[0].http.paths[1].path: Invalid value: \"/a//b\": must not contain '//'",
            "spec.rules[0].http.paths[1].backend: Invalid value: \"\": cannot set both port name & port number",
        ]
    );
}

#[tokio::test]
async fn an_ingress_class_is_cluster_scoped_with_an_immutable_controller() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let (code, body) = raw(
        &client,
        "POST",
        CLASSES,
        None,
        Some(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
        "spec": {"controller": "k8s.io/ingress-nginx",
                 "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "lb"}}})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["spec"]["parameters"]["scope"], "Cluster");
    assert!(body["metadata"].get("namespace").is_none());
    let (code, body) = raw_merge(
        &client,
        &format!("{CLASSES}/nginx"),
        json!({"spec": {"controller": "example.com/other"}}),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        causes(&body),
        ["spec.controller: Invalid value: \"example.com/other\": field is immutable"]
    );
    assert_table(
        &client,
        CLASSES,
        "Name, Controller, Parameters, Age",
        &[(2, json!("Params.k8s.example.com/lb"))],
    )
    .await;
}

#[tokio::test]
async fn a_network_policy_reads_back_its_defaults_and_refuses_bad_peers() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let typed: NetworkPolicy = serde_json::from_value(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "db"},
        "spec": {"podSelector": {"matchLabels": {"app": "db"}},
                 "egress": [{"ports": [{"port": 5432}]}]}}))
    .unwrap();
    let created = Api::<NetworkPolicy>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &typed)
        .await
        .unwrap();
    let spec = created.spec.unwrap();
    assert_eq!(
        spec.policy_types,
        Some(vec!["Ingress".to_owned(), "Egress".to_owned()])
    );
    let port = &spec.egress.unwrap()[0].ports.clone().unwrap()[0];
    assert_eq!(port.protocol.as_deref(), Some("TCP"));
    let (_, names) = table(&client, POLICIES).await;
    assert_eq!(names, ["Name", "Pod-Selector", "Age"]);
    let (code, body) = raw(
        &client,
        "POST",
        POLICIES,
        None,
        Some(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "bad"},
        "spec": {"podSelector": {}, "ingress": [{"from": [
            {}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}}],
            "ports": [{"port": 80, "endPort": 79}]}]}})),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        causes(&body),
        [
            "spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`",
            "spec.ingress[0].from[0]: Required value: must specify a peer",
            "spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`",
        ]
    );
}

#[tokio::test]
async fn an_hpa_is_served_in_v2_and_v1_with_upstreams_conversion() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let typed: HpaV2 = serde_json::from_value(hpa_v2(json!({"metrics": [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
        {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1536Mi"}}}],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}}}))).unwrap();
    let created = Api::<HpaV2>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &typed)
        .await
        .unwrap();
    let spec = created.spec.unwrap();
    assert_eq!(spec.min_replicas, Some(1));
    let behavior = serde_json::to_value(spec.behavior.unwrap()).unwrap();
    assert_eq!(
        behavior,
        json!({
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]}})
    );
    let v1 = Api::<HpaV1>::namespaced(client.clone(), "default")
        .get("web")
        .await
        .unwrap();
    assert_eq!(
        v1.spec.as_ref().unwrap().target_cpu_utilization_percentage,
        Some(70)
    );
    let annotations = v1.metadata.annotations.unwrap();
    assert_eq!(
        annotations["autoscaling.alpha.kubernetes.io/metrics"],
        r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1536Mi"}}]"#
    );
    assert_eq!(
        annotations["autoscaling.alpha.kubernetes.io/behavior"],
        r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}"#
    );
    assert_table(
        &client,
        HPAS_V2,
        "Name, Reference, Targets, MinPods, MaxPods, Replicas, Age",
        &[
            (0, json!("web")),
            (1, json!("Deployment/web")),
            (2, json!("cpu: <unknown>/70%, memory: <unknown>/1536Mi")),
            (3, json!("1")),
            (4, json!(10)),
            (5, json!(0)),
        ],
    )
    .await;
}

#[tokio::test]
async fn a_v1_hpa_defaults_to_80_percent_cpu_and_keeps_its_status_apart() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let (code, body) = raw(&client, "POST", HPAS_V1, None, Some(json!({
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "maxReplicas": 4}}))).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["spec"]["minReplicas"], 1);
    assert_eq!(body["spec"]["targetCPUUtilizationPercentage"], 80);
    assert_eq!(
        body["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
    let one_v2 = format!("{HPAS_V2}/web");
    let (_, v2) = raw(&client, "GET", &one_v2, None, None).await;
    assert_eq!(
        v2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert_eq!(
        v2["status"],
        json!({"desiredReplicas": 0, "currentMetrics": null})
    );
    let (code, body) = raw_merge(
        &client,
        &format!("{one_v2}/status"),
        json!({
        "spec": {"maxReplicas": 9}, "status": {"currentReplicas": 2, "desiredReplicas": 3}}),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["maxReplicas"], 4);
    assert_eq!(body["status"]["desiredReplicas"], 3);
    let (code, body) = raw_merge(
        &client,
        &one_v2,
        json!({
        "spec": {"minReplicas": 5, "maxReplicas": 3}}),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        causes(&body),
        ["spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"]
    );
}

#[tokio::test]
async fn discovery_lists_the_kinds_with_their_short_names() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let (_, networking) = raw(&client, "GET", "/apis/networking.k8s.io/v1", None, None).await;
    let find = |list: &Value, name: &str| discovered(list, name).unwrap();
    assert_eq!(find(&networking, "ingresses")["shortNames"], json!(["ing"]));
    assert_eq!(
        find(&networking, "networkpolicies")["shortNames"],
        json!(["netpol"])
    );
    assert_eq!(find(&networking, "ingressclasses")["namespaced"], false);
    assert!(
        networking["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "ingresses/status")
    );
    for version in ["v1", "v2"] {
        let (_, autoscaling) = raw(
            &client,
            "GET",
            &format!("/apis/autoscaling/{version}"),
            None,
            None,
        )
        .await;
        let hpa = find(&autoscaling, "horizontalpodautoscalers");
        assert_eq!(hpa["shortNames"], json!(["hpa"]));
        assert_eq!(hpa["categories"], json!(["all"]));
    }
}
