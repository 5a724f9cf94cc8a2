//! core/v1 Services and Endpoints: defaults read back (types, IP families, ports), cluster IP
//! and node port allocation (requested, conflicting, out of range, freed on delete), each rule
//! family, immutable and type-changing updates, headless and ExternalName Services, status vs
//! main writes, server-side apply of ports by their list-map key (port, protocol), strategic
//! merge patches of ports, tables and field selectors; Endpoints' subsets.
//!
//! Allocated addresses and ports are compared by their shape (`normalise_allocations`); every
//! case deletes the Services it allocated for, so that an address a later case asks for is
//! free on both servers.

use http::Method;
use serde_json::{Value, json};

use crate::corpus::{Case, Step, merge, patch, step};

const SVCS: &str = "/api/v1/namespaces/NS/services";
const S: &str = "/api/v1/namespaces/NS/services/s";
const EPS: &str = "/api/v1/namespaces/NS/endpoints";
const APPLY: &str = "application/apply-patch+yaml";
const SMP: &str = "application/strategic-merge-patch+json";
const MERGE: &str = "application/merge-patch+json";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// A Service `name` (selector `app: s`, port 80), with `extra` merged in.
fn named(name: &str, extra: Value) -> Value {
    let mut object = json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": {"selector": {"app": "s"}, "ports": [{"port": 80}]}});
    merge(&mut object, extra);
    object
}

fn service(extra: Value) -> Value {
    named("s", extra)
}

/// A Service `s` with `spec` as its whole spec.
fn with_spec(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": spec})
}

fn create(body: Value) -> Step {
    step(Method::POST, SVCS, Some(body))
}

fn get() -> Step {
    step(Method::GET, S, None)
}

fn delete(name: &str) -> Step {
    step(Method::DELETE, format!("{SVCS}/{name}"), None)
}

fn merge_patch(body: Value) -> Step {
    patch(S, MERGE, body)
}

fn endpoints(extra: Value) -> Value {
    let mut object = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"}});
    merge(&mut object, extra);
    object
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |label: &str, steps: Vec<Step>| {
        cases.push(Case::new(format!("service: {label}"), steps));
    };

    // Defaults read back.
    add(
        "minimal",
        vec![create(service(json!({}))), get(), delete("s")],
    );
    add(
        "named ports",
        vec![
            create(service(json!({"spec": {"ports": [
                {"name": "http", "port": 80, "targetPort": "web"},
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 5353},
                {"name": "grpc", "port": 9090, "appProtocol": "kubernetes.io/h2c"}]}}))),
            delete("s"),
        ],
    );
    add(
        "client ip affinity",
        vec![
            create(service(json!({"spec": {"sessionAffinity": "ClientIP"}}))),
            delete("s"),
        ],
    );
    add(
        "external ips",
        vec![
            create(service(json!({"spec": {"externalIPs": ["192.0.2.10"]}}))),
            delete("s"),
        ],
    );

    // Node ports.
    add(
        "node port allocated",
        vec![
            create(service(json!({"spec": {"type": "NodePort"}}))),
            delete("s"),
        ],
    );
    add(
        "node port requested",
        vec![
            create(service(
                json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}),
            )),
            get(),
            delete("s"),
        ],
    );
    add(
        "node port out of range",
        vec![create(service(
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 20000}]}}),
        ))],
    );
    add(
        "node port already allocated",
        vec![
            create(named(
                "a",
                json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30081}]}}),
            )),
            create(named(
                "b",
                json!({"spec": {"type": "NodePort", "ports": [{"port": 81, "nodePort": 30081}]}}),
            )),
            delete("a"),
        ],
    );
    add(
        "node port duplicate",
        vec![create(service(
            json!({"spec": {"type": "NodePort", "ports": [
            {"name": "a", "port": 80, "nodePort": 30082},
            {"name": "b", "port": 81, "nodePort": 30082}]}}),
        ))],
    );
    add(
        "node port on cluster ip",
        vec![create(service(
            json!({"spec": {"ports": [{"port": 80, "nodePort": 30083}]}}),
        ))],
    );
    add(
        "node port freed on delete",
        vec![
            create(service(
                json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30084}]}}),
            )),
            delete("s"),
            create(named(
                "t",
                json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30084}]}}),
            )),
            delete("t"),
        ],
    );

    // LoadBalancer.
    add(
        "load balancer",
        vec![
            create(service(json!({"spec": {"type": "LoadBalancer"}}))),
            delete("s"),
        ],
    );
    add(
        "load balancer without node ports",
        vec![
            create(service(
                json!({"spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false}}),
            )),
            delete("s"),
        ],
    );
    add(
        "load balancer local traffic",
        vec![
            create(service(
                json!({"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local"}}),
            )),
            delete("s"),
        ],
    );
    add(
        "load balancer class on cluster ip",
        vec![create(service(
            json!({"spec": {"loadBalancerClass": "example.com/lb"}}),
        ))],
    );

    // Cluster IPs.
    add(
        "cluster ip requested",
        vec![
            create(service(json!({"spec": {"clusterIP": "10.0.0.200"}}))),
            get(),
            delete("s"),
        ],
    );
    add(
        "cluster ip already allocated",
        vec![
            create(named("a", json!({"spec": {"clusterIP": "10.0.0.201"}}))),
            create(named("b", json!({"spec": {"clusterIP": "10.0.0.201"}}))),
            delete("a"),
        ],
    );
    add(
        "cluster ip of the kubernetes service",
        vec![create(service(json!({"spec": {"clusterIP": "10.0.0.1"}})))],
    );
    add(
        "cluster ip out of the network",
        vec![create(service(
            json!({"spec": {"clusterIP": "192.168.0.10"}}),
        ))],
    );
    add(
        "cluster ip network address",
        vec![create(service(json!({"spec": {"clusterIP": "10.0.0.0"}})))],
    );
    add(
        "cluster ip broadcast address",
        vec![create(service(
            json!({"spec": {"clusterIP": "10.0.0.255"}}),
        ))],
    );
    add(
        "cluster ip not an ip",
        vec![create(service(json!({"spec": {"clusterIP": "nope"}})))],
    );
    add(
        "cluster ips mismatch",
        vec![create(service(
            json!({"spec": {"clusterIP": "10.0.0.202", "clusterIPs": ["10.0.0.203"]}}),
        ))],
    );
    add(
        "cluster ip freed on delete",
        vec![
            create(service(json!({"spec": {"clusterIP": "10.0.0.204"}}))),
            delete("s"),
            create(named("t", json!({"spec": {"clusterIP": "10.0.0.204"}}))),
            delete("t"),
        ],
    );
    add(
        "cluster ip dry run holds nothing",
        vec![
            step(
                Method::POST,
                format!("{SVCS}?dryRun=All"),
                Some(service(json!({"spec": {"clusterIP": "10.0.0.205"}}))),
            ),
            create(named("t", json!({"spec": {"clusterIP": "10.0.0.205"}}))),
            delete("t"),
        ],
    );
    add(
        "ipv6 family",
        vec![create(service(json!({"spec": {"ipFamilies": ["IPv6"]}})))],
    );
    add(
        "require dual stack",
        vec![create(service(
            json!({"spec": {"ipFamilyPolicy": "RequireDualStack"}}),
        ))],
    );
    add(
        "prefer dual stack",
        vec![
            create(service(
                json!({"spec": {"ipFamilyPolicy": "PreferDualStack"}}),
            )),
            delete("s"),
        ],
    );
    add(
        "ip family policy unsupported",
        vec![create(service(json!({"spec": {"ipFamilyPolicy": "Both"}})))],
    );

    // Headless and ExternalName.
    add(
        "headless",
        vec![
            create(service(json!({"spec": {"clusterIP": "None"}}))),
            get(),
        ],
    );
    add(
        "headless selectorless",
        vec![create(with_spec(
            json!({"clusterIP": "None", "ports": [{"port": 80}]}),
        ))],
    );
    add(
        "headless without ports",
        vec![create(with_spec(
            json!({"clusterIP": "None", "selector": {"app": "s"}}),
        ))],
    );
    add(
        "headless node port",
        vec![create(service(
            json!({"spec": {"clusterIP": "None", "type": "NodePort"}}),
        ))],
    );
    add(
        "external name",
        vec![
            create(with_spec(
                json!({"type": "ExternalName", "externalName": "db.example.com."}),
            )),
            get(),
        ],
    );
    add(
        "external name missing",
        vec![create(with_spec(json!({"type": "ExternalName"})))],
    );
    add(
        "external name with cluster ip",
        vec![create(with_spec(json!({"type": "ExternalName",
            "externalName": "db.example.com", "clusterIP": "10.0.0.206"})))],
    );
    add(
        "external name invalid",
        vec![create(with_spec(
            json!({"type": "ExternalName", "externalName": "Not_A_Name"}),
        ))],
    );

    // Rule families.
    add(
        "no ports",
        vec![create(with_spec(json!({"selector": {"app": "s"}})))],
    );
    add(
        "ports without names",
        vec![create(service(
            json!({"spec": {"ports": [{"port": 80}, {"port": 443}]}}),
        ))],
    );
    add(
        "duplicate port names",
        vec![create(service(json!({"spec": {"ports": [
            {"name": "web", "port": 80}, {"name": "web", "port": 443}]}})))],
    );
    add(
        "duplicate ports",
        vec![create(service(json!({"spec": {"ports": [
            {"name": "a", "port": 80}, {"name": "b", "port": 80}]}})))],
    );
    add(
        "port numbers",
        vec![create(service(json!({"spec": {"ports": [
            {"name": "a", "port": 0}, {"name": "b", "port": 70000, "targetPort": 70000},
            {"name": "c", "port": 81, "targetPort": "Not_Valid"}]}})))],
    );
    add(
        "port name invalid",
        vec![create(service(
            json!({"spec": {"ports": [{"name": "Web_Port", "port": 80}]}}),
        ))],
    );
    add(
        "protocol unsupported",
        vec![create(service(
            json!({"spec": {"ports": [{"port": 80, "protocol": "HTTP"}]}}),
        ))],
    );
    add(
        "selector invalid",
        vec![create(service(
            json!({"spec": {"selector": {"-bad": "not valid!"}}}),
        ))],
    );
    add(
        "session affinity unsupported",
        vec![create(service(
            json!({"spec": {"sessionAffinity": "Sticky"}}),
        ))],
    );
    add(
        "session affinity timeout",
        vec![create(service(
            json!({"spec": {"sessionAffinity": "ClientIP",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 90000}}}}),
        ))],
    );
    add(
        "type unsupported",
        vec![create(service(json!({"spec": {"type": "Ingress"}})))],
    );
    add(
        "external traffic policy on cluster ip",
        vec![create(service(
            json!({"spec": {"externalTrafficPolicy": "Local"}}),
        ))],
    );
    add(
        "internal traffic policy unsupported",
        vec![create(service(
            json!({"spec": {"internalTrafficPolicy": "Nearby"}}),
        ))],
    );
    add(
        "update with a bad label",
        vec![
            create(service(json!({}))),
            merge_patch(json!({"metadata": {"labels": {"-bad": "x"}}})),
            delete("s"),
        ],
    );
    add(
        "put creates",
        vec![
            step(
                Method::PUT,
                format!("{SVCS}/u"),
                Some(named("u", json!({}))),
            ),
            delete("u"),
        ],
    );
    add(
        "delete collection",
        vec![
            create(named("a", json!({}))),
            step(Method::DELETE, SVCS, None),
            step(Method::GET, SVCS, None),
        ],
    );
    add(
        "name not a dns-1035 label",
        vec![create(named("1svc", json!({})))],
    );
    add(
        "external name ignored warning",
        vec![
            create(service(json!({"spec": {"externalName": "db.example.com"}}))),
            delete("s"),
        ],
    );

    // Updates.
    add(
        "cluster ip immutable",
        vec![
            create(service(json!({"spec": {"clusterIP": "10.0.0.207"}}))),
            merge_patch(json!({"spec": {"clusterIP": "10.0.0.208"}})),
            delete("s"),
        ],
    );
    add(
        "put without cluster ip keeps it",
        vec![
            create(service(json!({"spec": {"clusterIP": "10.0.0.209"}}))),
            step(
                Method::PUT,
                S,
                Some(service(json!({"spec": {"ports": [{"port": 8080}]}}))),
            ),
            delete("s"),
        ],
    );
    add(
        "put without node port keeps it",
        vec![
            create(service(
                json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30085}]}}),
            )),
            step(
                Method::PUT,
                S,
                Some(service(json!({"spec": {"type": "NodePort"}}))),
            ),
            delete("s"),
        ],
    );
    add(
        "to external name",
        vec![
            create(service(json!({"spec": {"clusterIP": "10.0.0.210"}}))),
            merge_patch(
                json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}}),
            ),
            delete("s"),
        ],
    );
    add(
        "from external name",
        vec![
            create(with_spec(
                json!({"type": "ExternalName", "externalName": "db.example.com"}),
            )),
            merge_patch(json!({"spec": {"type": "ClusterIP", "externalName": null,
                "ports": [{"port": 80}]}})),
            delete("s"),
        ],
    );
    add(
        "to node port and back",
        vec![
            create(service(json!({}))),
            merge_patch(json!({"spec": {"type": "NodePort"}})),
            merge_patch(json!({"spec": {"type": "ClusterIP"}})),
            delete("s"),
        ],
    );
    add(
        "ip families immutable",
        vec![
            create(service(json!({"spec": {"clusterIP": "10.0.0.211"}}))),
            merge_patch(json!({"spec": {"ipFamilies": ["IPv6"]}})),
            delete("s"),
        ],
    );

    // Status.
    add(
        "create drops status",
        vec![
            create(service(json!({"spec": {"type": "LoadBalancer"},
                "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}}))),
            delete("s"),
        ],
    );
    add(
        "status write",
        vec![
            create(service(json!({"spec": {"type": "LoadBalancer"}}))),
            patch(
                format!("{S}/status"),
                MERGE,
                json!({"spec": {"type": "ClusterIP"},
                       "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}}),
            ),
            patch(
                format!("{S}/status"),
                MERGE,
                json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1", "ipMode": "Proxy"}, {"hostname": "lb.example.com"}]}}}),
            ),
            merge_patch(json!({"metadata": {"labels": {"a": "b"}},
                "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.9"}]}}})),
            step(Method::GET, SVCS, None).header("Accept", TABLE),
            delete("s"),
        ],
    );
    add(
        "status invalid ingress",
        vec![
            create(service(json!({"spec": {"type": "LoadBalancer"}}))),
            patch(
                format!("{S}/status"),
                MERGE,
                json!({"status": {"loadBalancer": {"ingress": [{"ip": "nope"}]}}}),
            ),
            delete("s"),
        ],
    );

    // Server-side apply and strategic merge patches of ports.
    add(
        "apply ports by port and protocol",
        vec![
            patch(
                format!("{S}?fieldManager=a"),
                APPLY,
                service(
                    json!({"spec": {"ports": [{"name": "dns", "port": 53, "protocol": "UDP"}]}}),
                ),
            ),
            patch(
                format!("{S}?fieldManager=b"),
                APPLY,
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                       "spec": {"ports": [{"name": "dns-tcp", "port": 53, "protocol": "TCP"}]}}),
            ),
            delete("s"),
        ],
    );
    add(
        "apply conflict on a port",
        vec![
            patch(
                format!("{S}?fieldManager=a"),
                APPLY,
                service(json!({"spec": {"ports": [{"port": 80, "targetPort": 8080}]}})),
            ),
            patch(
                format!("{S}?fieldManager=b"),
                APPLY,
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                       "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 9090}]}}),
            ),
            delete("s"),
        ],
    );
    add(
        "strategic merge patch of ports",
        vec![
            create(service(
                json!({"spec": {"ports": [{"name": "http", "port": 80}]}}),
            )),
            patch(
                S,
                SMP,
                json!({"spec": {"ports": [{"name": "https", "port": 443}, {"port": 80, "targetPort": 8080}]}}),
            ),
            patch(
                S,
                SMP,
                json!({"spec": {"ports": [{"$patch": "delete", "port": 443}]}}),
            ),
            delete("s"),
        ],
    );

    add(
        "apply twice",
        vec![
            patch(
                format!("{S}?fieldManager=op"),
                APPLY,
                service(json!({"spec": {"type": "NodePort"}})),
            ),
            patch(
                format!("{S}?fieldManager=op"),
                APPLY,
                service(json!({"spec": {"type": "NodePort"}})),
            ),
            patch(
                format!("{S}?fieldManager=op"),
                APPLY,
                service(
                    json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"name": "b", "port": 81}]}}),
                ),
            ),
            delete("s"),
        ],
    );
    add(
        "apply adds a node port",
        vec![
            patch(
                format!("{S}?fieldManager=op"),
                APPLY,
                service(
                    json!({"spec": {"type": "NodePort", "ports": [{"name": "a", "port": 80}]}}),
                ),
            ),
            patch(
                format!("{S}?fieldManager=op"),
                APPLY,
                service(json!({"spec": {"type": "NodePort",
                    "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81}]}})),
            ),
            get(),
            delete("s"),
        ],
    );
    add(
        "get then put unchanged",
        vec![
            create(service(json!({"spec": {"type": "NodePort"}}))).remember("$SVC", ""),
            step(Method::PUT, S, Some(Value::String("$SVC".into()))),
            delete("s"),
        ],
    );
    add(
        "node port to load balancer",
        vec![
            create(service(
                json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30087}]}}),
            )),
            merge_patch(json!({"spec": {"type": "LoadBalancer"}})),
            delete("s"),
        ],
    );
    add(
        "load balancer fields on cluster ip",
        vec![create(service(json!({"spec": {
            "loadBalancerSourceRanges": ["10.0.0.0/8"], "allocateLoadBalancerNodePorts": true,
            "healthCheckNodePort": 30088}})))],
    );
    add(
        "load balancer source ranges",
        vec![
            create(service(json!({"spec": {"type": "LoadBalancer",
                "loadBalancerSourceRanges": [" 10.0.0.0/8 ", "nope", "10.1.0.0/33"]}}))),
            create(named(
                "a",
                json!({"metadata": {"annotations": {
                "service.beta.kubernetes.io/load-balancer-source-ranges": "10.0.0.0/8, bad"}}}),
            )),
        ],
    );
    add(
        "health check node port requested",
        vec![
            create(service(json!({"spec": {"type": "LoadBalancer",
                "externalTrafficPolicy": "Local", "healthCheckNodePort": 30089}}))),
            merge_patch(json!({"spec": {"healthCheckNodePort": 30090}})),
            delete("s"),
        ],
    );
    add(
        "headless warnings",
        vec![create(service(json!({"spec": {"clusterIP": "None",
            "sessionAffinity": "ClientIP", "externalIPs": ["192.0.2.7"]}})))],
    );

    // Reads.
    add(
        "table",
        vec![
            create(service(json!({"spec": {"type": "NodePort", "ports": [
                {"name": "a", "port": 80, "nodePort": 30086}, {"name": "b", "port": 53, "protocol": "UDP"}]}}))),
            create(
                with_spec(json!({"type": "ExternalName", "externalName": "db.example.com"}))
                    .pipe_name("x"),
            ),
            step(Method::GET, SVCS, None).header("Accept", TABLE),
            step(
                Method::GET,
                format!("{SVCS}?fieldSelector=spec.type%3DExternalName"),
                None,
            ),
            delete("s"),
        ],
    );

    // Endpoints.
    let mut add = |label: &str, steps: Vec<Step>| {
        cases.push(Case::new(format!("endpoints: {label}"), steps));
    };
    add(
        "minimal",
        vec![
            step(
                Method::POST,
                EPS,
                Some(endpoints(json!({"subsets": [{
                "addresses": [{"ip": "192.0.2.1", "hostname": "a", "nodeName": "node-1"}],
                "notReadyAddresses": [{"ip": "192.0.2.2"}],
                "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]}]}))),
            ),
            step(Method::GET, format!("{EPS}/e"), None),
            step(Method::GET, EPS, None).header("Accept", TABLE),
        ],
    );
    add(
        "no subsets",
        vec![step(Method::POST, EPS, Some(endpoints(json!({}))))],
    );
    add(
        "subset without addresses",
        vec![step(
            Method::POST,
            EPS,
            Some(endpoints(json!({"subsets": [{"ports": [{"port": 80}]}]}))),
        )],
    );
    add(
        "addresses invalid",
        vec![step(
            Method::POST,
            EPS,
            Some(endpoints(json!({"subsets": [{
            "addresses": [{"ip": "nope"}, {"ip": "127.0.0.1"}, {"ip": "169.254.1.1"}, {"ip": "0.0.0.0"},
                          {"ip": "192.0.2.1", "hostname": "Not_Valid"}]}]}))),
        )],
    );
    add(
        "ports invalid",
        vec![step(
            Method::POST,
            EPS,
            Some(endpoints(json!({"subsets": [{
            "addresses": [{"ip": "192.0.2.1"}],
            "ports": [{"port": 80}, {"name": "b", "port": 0, "protocol": "HTTP"}]}]}))),
        )],
    );
    add(
        "update with a bad label",
        vec![
            step(Method::POST, EPS, Some(endpoints(json!({})))),
            patch(
                format!("{EPS}/e"),
                MERGE,
                json!({"metadata": {"labels": {"-bad": "x"}},
                       "subsets": [{"addresses": [{"ip": "192.0.2.1"}]}]}),
            ),
        ],
    );
    add(
        "update, put and delete",
        vec![
            step(
                Method::PUT,
                format!("{EPS}/e"),
                Some(endpoints(json!({"subsets": [{
                "addresses": [{"ip": "192.0.2.1"}], "ports": [{"port": 80}]}]}))),
            ),
            patch(
                format!("{EPS}/e"),
                "application/strategic-merge-patch+json",
                json!({"subsets": [{"addresses": [{"ip": "192.0.2.2"}], "ports": [{"port": 8080}]}]}),
            ),
            patch(
                format!("{EPS}/e?fieldManager=op"),
                APPLY,
                endpoints(
                    json!({"subsets": [{"addresses": [{"ip": "192.0.2.3", "targetRef": {"kind": "Pod", "name": "p"}}]}]}),
                ),
            ),
            step(Method::DELETE, format!("{EPS}/e"), None),
        ],
    );
    add(
        "many addresses table",
        vec![
            step(
                Method::POST,
                EPS,
                Some(endpoints(json!({"subsets": [{
                "addresses": [{"ip": "192.0.2.1"}, {"ip": "192.0.2.2"}, {"ip": "192.0.2.3"}, {"ip": "192.0.2.4"}],
                "ports": [{"port": 80}]}]}))),
            ),
            step(Method::GET, EPS, None).header("Accept", TABLE),
        ],
    );
    cases
}

/// A body with another name.
trait PipeName {
    fn pipe_name(self, name: &str) -> Value;
}

impl PipeName for Value {
    fn pipe_name(mut self, name: &str) -> Value {
        self["metadata"]["name"] = json!(name);
        self
    }
}
