//! core/v1 Services and Endpoints: defaults read back (types, IP families, ports), cluster IP
//! and node port allocation (requested, conflicting, out of range, freed on delete), each rule
//! family, immutable and type-changing updates, headless and ExternalName Services, status vs
//! main writes, server-side apply of ports by their list-map key (port, protocol), strategic
//! merge patches of ports, tables and field selectors; Endpoints' subsets.
//!
//! Allocated addresses and ports are compared by their shape (`normalise_allocations`); every
//! case deletes the Services it allocated for, so that an address a later case asks for is
//! free on both servers.

use serde_json::{Value, json};

use crate::corpus::{self, APPLY, Case, SMP, Step, merged, patch, post, put, status_patch, table};

const SVCS: &str = "/api/v1/namespaces/NS/services";
const S: &str = "/api/v1/namespaces/NS/services/s";
const EPS: &str = "/api/v1/namespaces/NS/endpoints";

/// A Service `name` (selector `app: s`, port 80), with `extra` merged in.
fn named(name: &str, extra: Value) -> Value {
    merged(
        json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": {"selector": {"app": "s"}, "ports": [{"port": 80}]}}),
        extra,
    )
}

fn service(extra: Value) -> Value {
    named("s", extra)
}

/// A Service `s` with `spec` as its whole spec.
fn with_spec(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": spec})
}

fn create(body: Value) -> Step {
    post(SVCS, body)
}

fn get() -> Step {
    corpus::get(S)
}

fn delete(name: &str) -> Step {
    corpus::delete(format!("{SVCS}/{name}"))
}

fn merge_patch(body: Value) -> Step {
    corpus::merge_patch(S, body)
}

fn endpoints(extra: Value) -> Value {
    merged(
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e"}}),
        extra,
    )
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
    for (label, body) in [
        (
            "cluster ip of the kubernetes service",
            service(json!({"spec": {"clusterIP": "10.0.0.1"}})),
        ),
        (
            "cluster ip out of the network",
            service(json!({"spec": {"clusterIP": "192.168.0.10"}})),
        ),
        (
            "cluster ip network address",
            service(json!({"spec": {"clusterIP": "10.0.0.0"}})),
        ),
        (
            "cluster ip broadcast address",
            service(json!({"spec": {"clusterIP": "10.0.0.255"}})),
        ),
        (
            "cluster ip not an ip",
            service(json!({"spec": {"clusterIP": "nope"}})),
        ),
        (
            "cluster ips mismatch",
            service(json!({"spec": {"clusterIP": "10.0.0.202", "clusterIPs": ["10.0.0.203"]}})),
        ),
    ] {
        add(label, vec![create(body)]);
    }
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
            post(
                format!("{SVCS}?dryRun=All"),
                service(json!({"spec": {"clusterIP": "10.0.0.205"}})),
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
    for (label, body) in [
        (
            "headless selectorless",
            with_spec(json!({"clusterIP": "None", "ports": [{"port": 80}]})),
        ),
        (
            "headless without ports",
            with_spec(json!({"clusterIP": "None", "selector": {"app": "s"}})),
        ),
        (
            "headless node port",
            service(json!({"spec": {"clusterIP": "None", "type": "NodePort"}})),
        ),
    ] {
        add(label, vec![create(body)]);
    }
    add(
        "external name",
        vec![
            create(with_spec(
                json!({"type": "ExternalName", "externalName": "db.example.com."}),
            )),
            get(),
        ],
    );
    for (label, body) in [
        (
            "external name missing",
            with_spec(json!({"type": "ExternalName"})),
        ),
        (
            "external name with cluster ip",
            with_spec(json!({"type": "ExternalName",
            "externalName": "db.example.com", "clusterIP": "10.0.0.206"})),
        ),
        (
            "external name invalid",
            with_spec(json!({"type": "ExternalName", "externalName": "Not_A_Name"})),
        ),
    ] {
        add(label, vec![create(body)]);
    }

    // Rule families.
    for (label, body) in [
        ("no ports", with_spec(json!({"selector": {"app": "s"}}))),
        (
            "ports without names",
            service(json!({"spec": {"ports": [{"port": 80}, {"port": 443}]}})),
        ),
        (
            "duplicate port names",
            service(json!({"spec": {"ports": [
            {"name": "web", "port": 80}, {"name": "web", "port": 443}]}})),
        ),
        (
            "duplicate ports",
            service(json!({"spec": {"ports": [
            {"name": "a", "port": 80}, {"name": "b", "port": 80}]}})),
        ),
        (
            "port numbers",
            service(json!({"spec": {"ports": [
            {"name": "a", "port": 0}, {"name": "b", "port": 70000, "targetPort": 70000},
            {"name": "c", "port": 81, "targetPort": "Not_Valid"}]}})),
        ),
        (
            "port name invalid",
            service(json!({"spec": {"ports": [{"name": "Web_Port", "port": 80}]}})),
        ),
        (
            "protocol unsupported",
            service(json!({"spec": {"ports": [{"port": 80, "protocol": "HTTP"}]}})),
        ),
        (
            "selector invalid",
            service(json!({"spec": {"selector": {"-bad": "not valid!"}}})),
        ),
        (
            "session affinity unsupported",
            service(json!({"spec": {"sessionAffinity": "Sticky"}})),
        ),
        (
            "session affinity timeout",
            service(json!({"spec": {"sessionAffinity": "ClientIP",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 90000}}}})),
        ),
        (
            "type unsupported",
            service(json!({"spec": {"type": "Ingress"}})),
        ),
        (
            "external traffic policy on cluster ip",
            service(json!({"spec": {"externalTrafficPolicy": "Local"}})),
        ),
        (
            "internal traffic policy unsupported",
            service(json!({"spec": {"internalTrafficPolicy": "Nearby"}})),
        ),
    ] {
        add(label, vec![create(body)]);
    }
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
        vec![put(format!("{SVCS}/u"), named("u", json!({}))), delete("u")],
    );
    add(
        "delete collection",
        vec![
            create(named("a", json!({}))),
            corpus::delete(SVCS),
            corpus::get(SVCS),
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
            put(S, service(json!({"spec": {"ports": [{"port": 8080}]}}))),
            delete("s"),
        ],
    );
    add(
        "put without node port keeps it",
        vec![
            create(service(
                json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30085}]}}),
            )),
            put(S, service(json!({"spec": {"type": "NodePort"}}))),
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
            status_patch(
                S,
                json!({"spec": {"type": "ClusterIP"},
                       "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}}),
            ),
            status_patch(
                S,
                json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1", "ipMode": "Proxy"}, {"hostname": "lb.example.com"}]}}}),
            ),
            merge_patch(json!({"metadata": {"labels": {"a": "b"}},
                "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.9"}]}}})),
            table(SVCS),
            delete("s"),
        ],
    );
    add(
        "status invalid ingress",
        vec![
            create(service(json!({"spec": {"type": "LoadBalancer"}}))),
            status_patch(
                S,
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
            put(S, Value::String("$SVC".into())),
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
            table(SVCS),
            corpus::get(format!("{SVCS}?fieldSelector=spec.type%3DExternalName")),
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
            post(
                EPS,
                endpoints(json!({"subsets": [{
                "addresses": [{"ip": "192.0.2.1", "hostname": "a", "nodeName": "node-1"}],
                "notReadyAddresses": [{"ip": "192.0.2.2"}],
                "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]}]})),
            ),
            corpus::get(format!("{EPS}/e")),
            table(EPS),
        ],
    );
    for (label, body) in [
        ("no subsets", endpoints(json!({}))),
        (
            "subset without addresses",
            endpoints(json!({"subsets": [{"ports": [{"port": 80}]}]})),
        ),
        (
            "addresses invalid",
            endpoints(json!({"subsets": [{
            "addresses": [{"ip": "nope"}, {"ip": "127.0.0.1"}, {"ip": "169.254.1.1"}, {"ip": "0.0.0.0"},
                          {"ip": "192.0.2.1", "hostname": "Not_Valid"}]}]})),
        ),
        (
            "ports invalid",
            endpoints(json!({"subsets": [{
            "addresses": [{"ip": "192.0.2.1"}],
            "ports": [{"port": 80}, {"name": "b", "port": 0, "protocol": "HTTP"}]}]})),
        ),
    ] {
        add(label, vec![post(EPS, body)]);
    }
    add(
        "update with a bad label",
        vec![
            post(EPS, endpoints(json!({}))),
            corpus::merge_patch(
                format!("{EPS}/e"),
                json!({"metadata": {"labels": {"-bad": "x"}},
                       "subsets": [{"addresses": [{"ip": "192.0.2.1"}]}]}),
            ),
        ],
    );
    add(
        "update, put and delete",
        vec![
            put(
                format!("{EPS}/e"),
                endpoints(json!({"subsets": [{
                "addresses": [{"ip": "192.0.2.1"}], "ports": [{"port": 80}]}]})),
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
            corpus::delete(format!("{EPS}/e")),
        ],
    );
    add(
        "many addresses table",
        vec![
            post(
                EPS,
                endpoints(json!({"subsets": [{
                "addresses": [{"ip": "192.0.2.1"}, {"ip": "192.0.2.2"}, {"ip": "192.0.2.3"}, {"ip": "192.0.2.4"}],
                "ports": [{"port": 80}]}]})),
            ),
            table(EPS),
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
