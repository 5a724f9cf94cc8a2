//! The simulated endpoints and EndpointSlice controllers: a Service's Endpoints and slice
//! follow the pods it selects.

mod workloads_support;

use std::sync::Arc;
use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams};
use kubeward_names::clock::ManualClock;
use kubeward_testing::{ApiServer, Workloads};
use serde_json::{Value, json};
use workloads_support::{api, create, get, pod, until};

/// A service `web` selecting `app: web`, port 80 to the container port named `http`.
fn service() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "labels": {"tier": "front"}},
        "spec": {"selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    })
}

/// A pod `name` labelled `app: web`, serving `http` on 8080, ready 30 s after it starts.
fn web_pod(name: &str) -> Value {
    let mut p = pod(name, "nginx:1.27");
    p["metadata"]["labels"] = json!({"app": "web"});
    p["spec"]["containers"][0]["ports"] =
        json!([{"name": "http", "containerPort": 8080, "protocol": "TCP"}]);
    p["spec"]["containers"][0]["readinessProbe"] =
        json!({"tcpSocket": {"port": 8080}, "initialDelaySeconds": 30});
    p
}

/// The EndpointSlices of `web` managed by the controller.
async fn slices_of_web(slices: &kube::Api<kube::api::DynamicObject>) -> Vec<Value> {
    let list = slices
        .list(&kube::api::ListParams::default().labels("kubernetes.io/service-name=web"))
        .await
        .expect("list works");
    list.items
        .into_iter()
        .map(|s| serde_json::to_value(s).expect("json"))
        .collect()
}

#[tokio::test]
async fn a_services_slice_and_endpoints_follow_its_pods() {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let server = ApiServer::builder()
        .clock(Arc::new(clock.clone()))
        .workloads(Workloads::with_nodes(1))
        .start()
        .await
        .expect("server starts");
    let client = server.client().expect("client");
    let services = api(&client, "v1", "Service", "services", "default");
    let endpoints = api(&client, "v1", "Endpoints", "endpoints", "default");
    let slices = api(
        &client,
        "discovery.k8s.io/v1",
        "EndpointSlice",
        "endpointslices",
        "default",
    );
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&services, service()).await;

    // No pods yet: an empty Endpoints and one placeholder slice.
    let placeholder = until("a placeholder slice", || async {
        match slices_of_web(&slices).await.as_slice() {
            [one] => Ok(one.clone()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let name = placeholder["metadata"]["name"].as_str().unwrap();
    assert!(
        name.starts_with("web-") && name.len() == "web-".len() + 5,
        "{name}"
    );
    assert_eq!(
        placeholder["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"],
        "endpointslice-controller.k8s.io"
    );
    assert_eq!(placeholder["metadata"]["labels"]["tier"], "front");
    assert_eq!(placeholder["addressType"], "IPv4");
    assert_eq!(
        placeholder["metadata"]["ownerReferences"][0]["kind"],
        "Service"
    );
    let empty = until("the Endpoints", || async {
        let e = get(&endpoints, "web").await;
        if e.is_null() {
            Err(e.to_string())
        } else {
            Ok(e)
        }
    })
    .await;
    assert!(empty["subsets"].as_array().is_none_or(Vec::is_empty));
    assert_eq!(
        empty["metadata"]["labels"]["endpoints.kubernetes.io/managed-by"],
        "endpoint-controller"
    );
    assert_eq!(
        empty["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"],
        empty["metadata"]["creationTimestamp"]
    );

    // A running pod not ready yet: a not-ready address, on the named port's number.
    create(&pods, web_pod("web-1")).await;
    let not_ready = until("web-1 as a not-ready address", || async {
        let e = get(&endpoints, "web").await;
        match e["subsets"][0]["notReadyAddresses"][0]["targetRef"]["name"].as_str() {
            Some("web-1") => Ok(e),
            _ => Err(e.to_string()),
        }
    })
    .await;
    let subset = &not_ready["subsets"][0];
    assert!(subset["addresses"].is_null(), "{subset}");
    assert_eq!(
        subset["ports"],
        json!([{"name": "http", "port": 8080, "protocol": "TCP"}])
    );
    assert_eq!(subset["notReadyAddresses"][0]["nodeName"], "worker-1");
    let slice = until("web-1 in the slice", || async {
        match slices_of_web(&slices).await.as_slice() {
            [one] if one["endpoints"][0]["targetRef"]["name"] == "web-1" => Ok(one.clone()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    // The placeholder was turned into the pod's slice.
    assert_eq!(slice["metadata"]["name"], placeholder["metadata"]["name"]);
    let endpoint = &slice["endpoints"][0];
    assert_eq!(
        endpoint["conditions"],
        json!({"ready": false, "serving": false, "terminating": false})
    );
    assert_eq!(endpoint["nodeName"], "worker-1");
    assert_eq!(
        slice["ports"],
        json!([{"name": "http", "port": 8080, "protocol": "TCP"}])
    );
    let pod_ip = get(&pods, "web-1").await["status"]["podIP"].clone();
    assert_eq!(endpoint["addresses"], json!([pod_ip]));

    // Its readiness probe passes: a ready address, in the same slice.
    clock.advance(Duration::from_secs(30));
    until("web-1 as a ready address", || async {
        let e = get(&endpoints, "web").await;
        match e["subsets"][0]["addresses"][0]["ip"] == pod_ip {
            true if e["subsets"][0]["notReadyAddresses"].is_null() => Ok(()),
            _ => Err(e.to_string()),
        }
    })
    .await;
    until("web-1 ready in the slice", || async {
        match slices_of_web(&slices).await.as_slice() {
            [one] if one["endpoints"][0]["conditions"]["ready"] == true => {
                assert_eq!(one["metadata"]["name"], slice["metadata"]["name"]);
                Ok(())
            }
            other => Err(format!("{other:?}")),
        }
    })
    .await;

    // A pod change that moves no address rewrites neither (a Service created after it is
    // synced after it).
    let endpoints_rv = get(&endpoints, "web").await["metadata"]["resourceVersion"].clone();
    let slice_rv = slices_of_web(&slices).await[0]["metadata"]["resourceVersion"].clone();
    let note = json!({"metadata": {"annotations": {"note": "unrelated"}}});
    pods.patch("web-1", &PatchParams::default(), &Patch::Merge(note))
        .await
        .expect("patch works");
    let mut later = service();
    later["metadata"]["name"] = json!("later");
    create(&services, later).await;
    until("later's Endpoints", || async {
        let e = get(&endpoints, "later").await;
        if e.is_null() {
            Err(e.to_string())
        } else {
            Ok(())
        }
    })
    .await;
    assert_eq!(
        get(&endpoints, "web").await["metadata"]["resourceVersion"],
        endpoints_rv
    );
    assert_eq!(
        slices_of_web(&slices).await[0]["metadata"]["resourceVersion"],
        slice_rv
    );

    // The pod goes: the address goes.
    pods.delete("web-1", &DeleteParams::default())
        .await
        .expect("delete works");
    until("no address left", || async {
        let e = get(&endpoints, "web").await;
        let s = slices_of_web(&slices).await;
        let empty_slice =
            matches!(s.as_slice(), [one] if one["endpoints"].as_array().is_none_or(Vec::is_empty));
        if e["subsets"].as_array().is_none_or(Vec::is_empty) && empty_slice {
            Ok(())
        } else {
            Err(format!("{e} {s:?}"))
        }
    })
    .await;

    // The Service goes: its Endpoints go.
    services
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete works");
    until("the Endpoints to go", || async {
        let e = get(&endpoints, "web").await;
        if e.is_null() {
            Ok(())
        } else {
            Err(e.to_string())
        }
    })
    .await;
}

#[tokio::test]
async fn a_service_without_selector_keeps_the_endpoints_its_user_writes() {
    let (_server, client) = workloads_support::server(Workloads::with_nodes(1)).await;
    let services = api(&client, "v1", "Service", "services", "default");
    let endpoints = api(&client, "v1", "Endpoints", "endpoints", "default");
    let mut external = service();
    external["metadata"]["name"] = json!("db");
    external["spec"] = json!({"ports": [{"port": 5432}]});
    create(&services, external).await;
    create(
        &endpoints,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "db"},
               "subsets": [{"addresses": [{"ip": "192.168.1.10"}], "ports": [{"port": 5432}]}]}),
    )
    .await;
    // A selected Service synced after it shows the controller has seen both.
    create(&services, service()).await;
    until("web's Endpoints", || async {
        let e = get(&endpoints, "web").await;
        if e.is_null() {
            Err(e.to_string())
        } else {
            Ok(())
        }
    })
    .await;
    let db = get(&endpoints, "db").await;
    assert_eq!(db["subsets"][0]["addresses"][0]["ip"], "192.168.1.10");
    assert!(db["metadata"]["labels"].is_null(), "{db}");
}
