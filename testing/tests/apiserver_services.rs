//! core/v1 Services and Endpoints on the in-process API server through a real `kube::Client`:
//! defaults read back, cluster IPs and node ports allocated (lowest first, from the configured
//! ranges), requested ones honoured or refused with kube-apiserver's messages, freed on delete,
//! the immutable cluster IP, type changes, status vs main writes, server-side apply of ports by
//! (port, protocol), tables, Endpoints' rules and deprecation warning.

mod apiserver_support;

use apiserver_support::{api_error, kubectl_for, with_spec};
use k8s_openapi::api::core::v1::{Endpoints, Service};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

async fn services(server: &ApiServer) -> Api<Service> {
    Api::namespaced(server.client().unwrap(), "default")
}

fn service(name: &str, spec: Value) -> Service {
    let body = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}});
    serde_json::from_value(with_spec(body, spec)).unwrap()
}

async fn create(api: &Api<Service>, name: &str, spec: Value) -> Result<Value, kube::Error> {
    api.create(&PostParams::default(), &service(name, spec))
        .await
        .map(|s| serde_json::to_value(s).unwrap())
}

/// `code message` of the API error `err`.
fn message(err: kube::Error) -> String {
    let (code, message) = api_error(err);
    format!("{code} {message}")
}

#[tokio::test]
async fn a_created_service_reads_back_with_upstreams_defaults_and_an_allocated_ip() {
    let server = ApiServer::start().await.unwrap();
    let api = services(&server).await;
    let s = create(&api, "web", json!({})).await.unwrap();
    let spec = &s["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(
        spec["ports"],
        json!([{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}])
    );
    // 10.0.0.1 is the `kubernetes` Service's.
    assert_eq!(spec["clusterIP"], "10.0.0.2");
    assert_eq!(spec["clusterIPs"], json!(["10.0.0.2"]));
    assert_eq!(s["status"], json!({"loadBalancer": {}}));
    // What was allocated is owned by no field manager.
    let owned = s["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].clone();
    assert!(owned.get("f:clusterIP").is_none() && owned.get("f:ipFamilies").is_none());
    let next = create(&api, "api", json!({})).await.unwrap();
    assert_eq!(next["spec"]["clusterIP"], "10.0.0.3");
}

#[tokio::test]
async fn requested_cluster_ips_are_honoured_refused_and_freed_on_delete() {
    let server = ApiServer::start().await.unwrap();
    let api = services(&server).await;
    let s = create(&api, "a", json!({"clusterIP": "10.0.0.50"}))
        .await
        .unwrap();
    assert_eq!(s["spec"]["clusterIPs"], json!(["10.0.0.50"]));
    let taken = create(&api, "b", json!({"clusterIP": "10.0.0.50"}))
        .await
        .unwrap_err();
    assert_eq!(
        message(taken),
        "422 Service \"b\" is invalid: spec.clusterIPs: Invalid value: [\"10.0.0.50\"]: failed to allocate IP 10.0.0.50: provided IP is already allocated"
    );
    let outside = create(&api, "c", json!({"clusterIP": "192.168.0.1"}))
        .await
        .unwrap_err();
    assert!(message(outside).ends_with(
        "failed to allocate IP 192.168.0.1: the provided network does not match the current range"
    ));
    api.delete("a", &DeleteParams::default()).await.unwrap();
    create(&api, "b", json!({"clusterIP": "10.0.0.50"}))
        .await
        .unwrap();
    let headless = create(&api, "h", json!({"clusterIP": "None"}))
        .await
        .unwrap();
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
}

#[tokio::test]
async fn node_ports_come_from_the_configured_range() {
    let server = ApiServer::builder()
        .service_cluster_ip_range("10.96.0.0/16")
        .service_node_port_range(31000..=31001)
        .start()
        .await
        .unwrap();
    let api = services(&server).await;
    let s = create(&api, "np", json!({"type": "NodePort"}))
        .await
        .unwrap();
    assert_eq!(s["spec"]["clusterIP"], "10.96.0.2");
    assert_eq!(s["spec"]["ports"][0]["nodePort"], 31000);
    assert_eq!(s["spec"]["externalTrafficPolicy"], "Cluster");
    let out = create(
        &api,
        "out",
        json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30000}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        message(out),
        "422 Service \"out\" is invalid: spec.ports[0].nodePort: Invalid value: 30000: provided port is not in the valid range. The range of valid ports is 31000-31001"
    );
    let taken = create(
        &api,
        "taken",
        json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 31000}]}),
    )
    .await
    .unwrap_err();
    assert!(message(taken).ends_with("provided port is already allocated"));
    let lb = create(&api, "lb", json!({"type": "LoadBalancer"}))
        .await
        .unwrap();
    assert_eq!(lb["spec"]["ports"][0]["nodePort"], 31001);
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
    let full = create(&api, "full", json!({"type": "NodePort"}))
        .await
        .unwrap_err();
    assert_eq!(
        message(full),
        "500 Internal error occurred: failed to allocate a nodePort: range is full"
    );
    // Back to ClusterIP: the node port is dropped and freed.
    api.patch(
        "np",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"type": "ClusterIP"}})),
    )
    .await
    .unwrap();
    let again = create(&api, "again", json!({"type": "NodePort"}))
        .await
        .unwrap();
    assert_eq!(again["spec"]["ports"][0]["nodePort"], 31000);
}

#[tokio::test]
async fn the_cluster_ip_is_immutable_and_a_put_without_it_keeps_it() {
    let server = ApiServer::start().await.unwrap();
    let api = services(&server).await;
    create(&api, "web", json!({})).await.unwrap();
    let err = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"clusterIP": "10.0.0.99"}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        message(err),
        "422 Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.0.0.99\"]: may not change once set"
    );
    let mut replaced = service("web", json!({"ports": [{"port": 8080}]}));
    replaced.metadata.resource_version = None;
    let put = api
        .replace("web", &PostParams::default(), &replaced)
        .await
        .unwrap();
    assert_eq!(put.spec.unwrap().cluster_ip.as_deref(), Some("10.0.0.2"));
    // To ExternalName: the cluster IP goes.
    let external = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}}),
            ),
        )
        .await
        .unwrap();
    let spec = serde_json::to_value(external.spec).unwrap();
    assert!(spec.get("clusterIP").is_none() && spec.get("ipFamilies").is_none());
}

#[tokio::test]
async fn rules_are_reported_with_upstreams_messages() {
    let server = ApiServer::start().await.unwrap();
    let api = services(&server).await;
    let err = create(
        &api,
        "web",
        json!({"ports": [{"port": 80}, {"port": 80, "protocol": "HTTP"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        message(err),
        "422 Service \"web\" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Required value, spec.ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"]"
    );
    let err = create(&api, "1web", json!({})).await.unwrap_err();
    assert!(
        message(err)
            .contains("a DNS-1035 label must consist of lower case alphanumeric characters")
    );
}

#[tokio::test]
async fn status_is_written_through_its_subresource_only() {
    let server = ApiServer::start().await.unwrap();
    let api = services(&server).await;
    create(&api, "lb", json!({"type": "LoadBalancer"}))
        .await
        .unwrap();
    let ingress = json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}});
    let main = api
        .patch("lb", &PatchParams::default(), &Patch::Merge(&ingress))
        .await
        .unwrap();
    assert!(
        main.status
            .unwrap()
            .load_balancer
            .unwrap()
            .ingress
            .is_none()
    );
    let status = api
        .patch_status("lb", &PatchParams::default(), &Patch::Merge(&ingress))
        .await
        .unwrap();
    let ingress = serde_json::to_value(status.status.unwrap().load_balancer).unwrap();
    assert_eq!(
        ingress,
        json!({"ingress": [{"ip": "192.0.2.1", "ipMode": "VIP"}]})
    );
}

#[tokio::test]
async fn server_side_apply_merges_ports_by_port_and_protocol() {
    let server = ApiServer::start().await.unwrap();
    let api = services(&server).await;
    let apply = |ports: Value| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dns"},
               "spec": {"selector": {"app": "dns"}, "ports": ports}})
    };
    api.patch(
        "dns",
        &PatchParams::apply("udp"),
        &Patch::Apply(apply(
            json!([{"name": "dns", "port": 53, "protocol": "UDP"}]),
        )),
    )
    .await
    .unwrap();
    let both = api
        .patch(
            "dns",
            &PatchParams::apply("tcp"),
            &Patch::Apply(apply(
                json!([{"name": "dns-tcp", "port": 53, "protocol": "TCP"}]),
            )),
        )
        .await
        .unwrap();
    let ports: Vec<(i32, String)> = both
        .spec
        .unwrap()
        .ports
        .unwrap()
        .into_iter()
        .map(|p| (p.port, p.protocol.unwrap()))
        .collect();
    assert_eq!(ports, vec![(53, "UDP".into()), (53, "TCP".into())]);
}

#[tokio::test]
async fn endpoints_are_validated_and_warned_deprecated() {
    let server = ApiServer::start().await.unwrap();
    let api: Api<Endpoints> = Api::namespaced(server.client().unwrap(), "default");
    let ep: Endpoints = serde_json::from_value(json!({"metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "192.0.2.1"}], "ports": [{"port": 80}]}]}))
    .unwrap();
    let created = api.create(&PostParams::default(), &ep).await.unwrap();
    let subsets = created.subsets.unwrap();
    let port = &subsets[0].ports.as_ref().unwrap()[0];
    assert_eq!(port.protocol.as_deref(), Some("TCP"));
    let bad: Endpoints = serde_json::from_value(json!({"metadata": {"name": "bad"},
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}]}]}))
    .unwrap();
    let err = api.create(&PostParams::default(), &bad).await.unwrap_err();
    assert_eq!(
        message(err),
        "422 Endpoints \"bad\" is invalid: subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"
    );
    let response = reqwest_like_get(&server, "/api/v1/namespaces/default/endpoints").await;
    assert_eq!(
        response,
        vec![
            "299 - \"v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\""
                .to_owned()
        ]
    );
}

/// The `Warning` headers of a GET of `path`.
async fn reqwest_like_get(server: &ApiServer, path: &str) -> Vec<String> {
    let client = server.client().unwrap();
    let request = http::Request::get(path).body(Vec::new()).unwrap();
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .unwrap();
    response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn tables_show_kubectls_columns() {
    let server = ApiServer::start().await.unwrap();
    let api = services(&server).await;
    create(
        &api,
        "web",
        json!({"type": "NodePort", "ports": [{"name": "http", "port": 80, "nodePort": 30080}]}),
    )
    .await
    .unwrap();
    let client = server.client().unwrap();
    apiserver_support::assert_table(
        &client,
        "/api/v1/namespaces/default/services",
        "Name, Type, Cluster-IP, External-IP, Port(s), Age, Selector",
        &[
            (0, json!("web")),
            (1, json!("NodePort")),
            (2, json!("10.0.0.2")),
            (3, json!("<none>")),
            (4, json!("80:30080/TCP")),
            (6, json!("app=web")),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_and_lists_services() {
    let server = ApiServer::start().await.unwrap();
    let (k, _dir) = kubectl_for(&server);
    let (created, listed) = tokio::task::spawn_blocking(move || {
        // `kubectl create service` sends its Service as protobuf.
        let created = k.ok(&["create", "service", "nodeport", "web", "--tcp=80:8080"]);
        let listed = k.ok(&["get", "svc", "-o", "wide"]);
        let described = k.ok(&["describe", "svc", "web"]);
        assert!(
            described.contains("NodePort:                 80-8080  30000/TCP"),
            "{described}"
        );
        (created, listed)
    })
    .await
    .unwrap();
    assert_eq!(created.trim(), "service/web created");
    let post = server
        .requests()
        .into_iter()
        .find(|r| r.method == http::Method::POST && r.path.ends_with("/services"))
        .unwrap();
    assert_eq!(
        post.content_type.as_deref(),
        Some("application/vnd.kubernetes.protobuf")
    );
    let row = listed.lines().nth(1).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[..5],
        ["web", "NodePort", "10.0.0.2", "<none>", "80:30000/TCP"]
    );
    assert_eq!(cells[6], "app=web");
    let svc: Service = services(&server).await.get("web").await.unwrap();
    let port = &svc.spec.unwrap().ports.unwrap()[0];
    assert_eq!(port.name.as_deref(), Some("80-8080"));
    assert_eq!(
        port.target_port,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(8080))
    );
}
