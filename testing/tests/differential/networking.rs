//! networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies, and autoscaling
//! HorizontalPodAutoscalers (v2 and v1): defaults read back, each rule family, immutable
//! fields, generation, status vs main writes, strategic merge patches and server-side apply of
//! lists with merge keys, tables and discovery; real-world manifests (an ingress-nginx chart's
//! Ingress and IngressClass, a default-deny policy, a CPU and memory HPA), and a v1 read of a
//! v2-created HPA and the reverse.

use serde_json::{Value, json};

use crate::corpus::{APPLY, Case, SMP, delete, get, merge_patch, merged, patch, post, put, table};

const INGRESSES: &str = "/apis/networking.k8s.io/v1/namespaces/NS/ingresses";
const POLICIES: &str = "/apis/networking.k8s.io/v1/namespaces/NS/networkpolicies";
const CLASSES: &str = "/apis/networking.k8s.io/v1/ingressclasses";
const HPAS_V2: &str = "/apis/autoscaling/v2/namespaces/NS/horizontalpodautoscalers";
const HPAS_V1: &str = "/apis/autoscaling/v1/namespaces/NS/horizontalpodautoscalers";

/// An Ingress `w` with one rule for `shop.example.com` to the service `web:80`, `extra`
/// merged in.
fn ingress(extra: Value) -> Value {
    merged(
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "w"},
        "spec": {"rules": [{"host": "shop.example.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix",
             "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
        extra,
    )
}

/// An Ingress `w` whose spec is `spec`.
fn ingress_spec(spec: Value) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "w"}, "spec": spec})
}

/// An Ingress `w` with one path `path` (its backend the service `web:80` unless given).
fn ingress_path(path: Value) -> Value {
    let p = merged(
        json!({"backend": {"service": {"name": "web", "port": {"number": 80}}}}),
        path,
    );
    ingress_spec(json!({"rules": [{"host": "a.example.com", "http": {"paths": [p]}}]}))
}

/// An IngressClass `name` of the controller `k8s.io/ingress-nginx`, `extra` merged in.
fn class(name: &str, extra: Value) -> Value {
    merged(
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": name}, "spec": {"controller": "k8s.io/ingress-nginx"}}),
        extra,
    )
}

/// A NetworkPolicy `w` of pods `app: w`, with `spec` merged in.
fn policy(spec: Value) -> Value {
    merged(
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "w"}, "spec": {"podSelector": {"matchLabels": {"app": "w"}}}}),
        json!({"spec": spec}),
    )
}

/// An autoscaling/`version` HPA `w` of the Deployment `web`, 1–10 replicas, `extra` merged in.
fn hpa_of(version: &str, extra: Value) -> Value {
    merged(
        json!({"apiVersion": format!("autoscaling/{version}"), "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "w"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "maxReplicas": 10}}),
        extra,
    )
}

/// An autoscaling/v2 HPA `w` ([`hpa_of`]).
fn hpa(extra: Value) -> Value {
    hpa_of("v2", extra)
}

/// An autoscaling/v1 HPA `w` ([`hpa_of`]).
fn hpa_v1(extra: Value) -> Value {
    hpa_of("v1", extra)
}

/// An HPA `w` (v2) with the metrics `metrics`.
fn hpa_metrics(metrics: Value) -> Value {
    hpa(json!({"spec": {"metrics": metrics}}))
}

fn resource_metric(name: &str, target: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": name, "target": target}})
}

/// The ingress-nginx chart's controller IngressClass and a TLS Ingress with two hosts.
fn ingress_cases() -> Vec<Case> {
    let one = format!("{INGRESSES}/w");
    let status = format!("{one}/status");
    let mut cases = vec![
        Case::new(
            "ingress: chart manifest read back",
            vec![
                post(
                    INGRESSES,
                    json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                    "metadata": {"name": "w", "labels": {"app.kubernetes.io/name": "shop"},
                                 "annotations": {"nginx.ingress.kubernetes.io/rewrite-target": "/"}},
                    "spec": {"ingressClassName": "nginx",
                             "tls": [{"hosts": ["shop.example.com", "api.example.com"], "secretName": "shop-tls"}],
                             "rules": [
                                 {"host": "shop.example.com", "http": {"paths": [
                                     {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "shop", "port": {"name": "http"}}}},
                                     {"path": "/static", "pathType": "ImplementationSpecific", "backend": {"service": {"name": "cdn", "port": {"number": 8080}}}}]}},
                                 {"host": "api.example.com", "http": {"paths": [
                                     {"path": "/v1", "pathType": "Exact", "backend": {"service": {"name": "api", "port": {"number": 443}}}}]}}]}}),
                ),
                get(one.clone()),
                table(INGRESSES),
            ],
        ),
        Case::new(
            "ingress: default backend only",
            vec![
                post(
                    INGRESSES,
                    ingress_spec(
                        json!({"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}),
                    ),
                ),
                table(INGRESSES),
            ],
        ),
        Case::new(
            "ingress: resource backend",
            vec![post(
                INGRESSES,
                ingress_spec(
                    json!({"defaultBackend": {"resource": {"apiGroup": "k8s.example.com", "kind": "StorageBucket", "name": "static-assets"}}}),
                ),
            )],
        ),
        Case::new(
            "ingress: neither rules nor default backend",
            vec![post(INGRESSES, ingress_spec(json!({})))],
        ),
        Case::new(
            "ingress: empty rules list",
            vec![post(INGRESSES, ingress_spec(json!({"rules": []})))],
        ),
        Case::new(
            "ingress: path type required",
            vec![post(INGRESSES, ingress_path(json!({"path": "/"})))],
        ),
        Case::new(
            "ingress: path type unsupported",
            vec![post(
                INGRESSES,
                ingress_path(json!({"path": "/", "pathType": "Regex"})),
            )],
        ),
        Case::new(
            "ingress: prefix paths must be absolute and clean",
            vec![post(
                INGRESSES,
                ingress_spec(json!({"rules": [{"http": {"paths": [
                {"path": "api", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "/a//b/./c/..", "pathType": "Exact", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "/x%2fy/.", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "rel", "pathType": "ImplementationSpecific", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"pathType": "ImplementationSpecific", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]})),
            )],
        ),
        Case::new(
            "ingress: backend rules",
            vec![post(
                INGRESSES,
                ingress_spec(json!({"rules": [{"http": {"paths": [
                {"path": "/a", "pathType": "Prefix", "backend": {}},
                {"path": "/b", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}, "resource": {"kind": "Bucket", "name": "b"}}},
                {"path": "/c", "pathType": "Prefix", "backend": {"service": {"name": "Web_1", "port": {"number": 70000}}}},
                {"path": "/d", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"name": "http", "number": 80}}}},
                {"path": "/e", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {}}}},
                {"path": "/f", "pathType": "Prefix", "backend": {"service": {"port": {"name": "HTTP--x"}}}},
                {"path": "/g", "pathType": "Prefix", "backend": {"resource": {"apiGroup": "Bad_Group", "kind": "a/b", "name": ""}}}]}}]})),
            )],
        ),
        Case::new(
            "ingress: hosts and wildcards",
            vec![post(
                INGRESSES,
                ingress_spec(json!({"rules": [
                {"host": "*.example.com"},
                {"host": "10.0.0.1"},
                {"host": "*.*.example.com"},
                {"host": "foo*.example.com"},
                {"host": "Shop.Example.com"},
                {"host": "a.example.com", "http": {"paths": []}}]})),
            )],
        ),
        Case::new(
            "ingress: tls hosts and secret",
            vec![post(
                INGRESSES,
                ingress(json!({"spec": {"tls": [
                {"hosts": ["*.example.com", "bad_host", "*"], "secretName": "Bad_Secret"}]}})),
            )],
        ),
        Case::new(
            "ingress: class name",
            vec![post(
                INGRESSES,
                ingress(json!({"spec": {"ingressClassName": "Nginx_Class"}})),
            )],
        ),
        Case::new(
            "ingress: class annotation deprecated",
            vec![post(
                INGRESSES,
                ingress(
                    json!({"metadata": {"annotations": {"kubernetes.io/ingress.class": "nginx"}}}),
                ),
            )],
        ),
        Case::new(
            "ingress: class annotation must match",
            vec![post(
                INGRESSES,
                ingress(
                    json!({"metadata": {"annotations": {"kubernetes.io/ingress.class": "nginx"}},
                "spec": {"ingressClassName": "traefik"}}),
                ),
            )],
        ),
        Case::new(
            "ingress: generation and status isolation",
            vec![
                post(INGRESSES, ingress(json!({}))),
                merge_patch(one.clone(), json!({"metadata": {"labels": {"a": "b"}}})),
                merge_patch(
                    one.clone(),
                    json!({"spec": {"ingressClassName": "nginx"}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}),
                ),
                merge_patch(
                    status.clone(),
                    json!({"spec": {"ingressClassName": "other"}, "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.7"}, {"hostname": "lb.example.com"}]}}}),
                ),
                get(one.clone()),
                table(INGRESSES),
            ],
        ),
        Case::new(
            "ingress: status rules",
            vec![
                post(INGRESSES, ingress(json!({}))),
                merge_patch(
                    status.clone(),
                    json!({"status": {"loadBalancer": {"ingress": [{"ip": "300.1.1.1"}, {"hostname": "1.2.3.4"}, {"hostname": "Bad_Host"}]}}}),
                ),
            ],
        ),
        Case::new(
            "ingress: status write replaced",
            vec![
                post(INGRESSES, ingress(json!({}))),
                put(
                    status.clone(),
                    ingress(
                        json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10", "ports": [{"port": 443, "protocol": "TCP"}]}]}}}),
                    ),
                ),
            ],
        ),
        Case::new(
            "ingress: update to invalid",
            vec![
                post(INGRESSES, ingress(json!({}))),
                merge_patch(
                    one.clone(),
                    json!({"spec": {"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
                ),
            ],
        ),
        Case::new(
            "ingress: strategic merge patch of rules",
            vec![
                post(INGRESSES, ingress(json!({}))),
                patch(
                    one.clone(),
                    SMP,
                    json!({"spec": {"rules": [{"host": "b.example.com", "http": {"paths": [
                    {"path": "/b", "pathType": "Prefix", "backend": {"service": {"name": "b", "port": {"number": 80}}}}]}}]}}),
                ),
            ],
        ),
        Case::new(
            "ingress: server-side apply",
            vec![
                patch(format!("{one}?fieldManager=ops"), APPLY, ingress(json!({}))),
                patch(
                    format!("{one}?fieldManager=team"),
                    APPLY,
                    json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                    "metadata": {"name": "w"}, "spec": {"tls": [{"hosts": ["shop.example.com"], "secretName": "tls"}]}}),
                ),
                get(one.clone()),
            ],
        ),
        Case::new(
            "ingress: unknown field strict",
            vec![post(
                format!("{INGRESSES}?fieldValidation=Strict"),
                ingress(
                    json!({"spec": {"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"serviceName": "web"}}]}}]}}),
                ),
            )],
        ),
    ];
    let many_hosts = ingress_spec(json!({"rules": [
        {"host": "a.example.com"}, {"host": "b.example.com"}, {"host": "c.example.com"},
        {"host": "d.example.com"}, {"host": "e.example.com"}],
        "tls": [{"hosts": ["a.example.com"]}]}));
    cases.push(Case::new(
        "ingress: field selectors",
        vec![
            post(INGRESSES, ingress(json!({}))),
            get(format!("{INGRESSES}?fieldSelector=metadata.name%3Dw")),
            get(format!("{INGRESSES}?fieldSelector=metadata.name%3Dother")),
            get(format!(
                "{INGRESSES}?fieldSelector=spec.ingressClassName%3Dnginx"
            )),
        ],
    ));
    cases.push(Case::new(
        "ingress: table of many hosts",
        vec![post(INGRESSES, many_hosts), table(INGRESSES)],
    ));
    cases
}

fn ingress_class_cases() -> Vec<Case> {
    let one = |name: &str| format!("{CLASSES}/{name}");
    vec![
        Case::new(
            "ingressclass: chart manifest read back",
            vec![
                post(
                    CLASSES,
                    class(
                        "ic-nginx",
                        json!({"metadata": {"labels": {"app.kubernetes.io/component": "controller"},
                    "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}}}),
                    ),
                ),
                get(one("ic-nginx")),
                table(one("ic-nginx")),
                delete(one("ic-nginx")),
            ],
        ),
        Case::new(
            "ingressclass: parameters scope defaulted",
            vec![
                post(
                    CLASSES,
                    class(
                        "ic-params",
                        json!({"spec": {"parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}}),
                    ),
                ),
                table(one("ic-params")),
                delete(one("ic-params")),
            ],
        ),
        Case::new(
            "ingressclass: namespaced parameters",
            vec![
                post(
                    CLASSES,
                    class(
                        "ic-ns",
                        json!({"spec": {"parameters": {"kind": "ConfigMap", "name": "lb", "scope": "Namespace", "namespace": "ingress"}}}),
                    ),
                ),
                delete(one("ic-ns")),
            ],
        ),
        Case::new(
            "ingressclass: parameters rules",
            vec![post(
                CLASSES,
                class(
                    "ic-bad",
                    json!({"spec": {"parameters": {"apiGroup": "Bad_Group", "kind": "", "name": "a/b", "scope": "Namespace"}}}),
                ),
            )],
        ),
        Case::new(
            "ingressclass: cluster scope with namespace",
            vec![post(
                CLASSES,
                class(
                    "ic-bad",
                    json!({"spec": {"parameters": {"kind": "K", "name": "n", "scope": "Cluster", "namespace": "x"}}}),
                ),
            )],
        ),
        Case::new(
            "ingressclass: scope unsupported",
            vec![post(
                CLASSES,
                class(
                    "ic-bad",
                    json!({"spec": {"parameters": {"kind": "K", "name": "n", "scope": "Global"}}}),
                ),
            )],
        ),
        Case::new(
            "ingressclass: controller required",
            vec![post(
                CLASSES,
                class("ic-bad", json!({"spec": {"controller": ""}})),
            )],
        ),
        Case::new(
            "ingressclass: controller format",
            vec![
                post(
                    CLASSES,
                    class("ic-bad", json!({"spec": {"controller": "nginx"}})),
                ),
                post(
                    CLASSES,
                    class("ic-bad", json!({"spec": {"controller": "Example.com/a b"}})),
                ),
            ],
        ),
        Case::new(
            "ingressclass: controller immutable",
            vec![
                post(CLASSES, class("ic-imm", json!({}))),
                merge_patch(
                    one("ic-imm"),
                    json!({"spec": {"controller": "example.com/other"}}),
                ),
                merge_patch(
                    one("ic-imm"),
                    json!({"metadata": {"labels": {"a": "b"}}, "spec": {"parameters": {"kind": "K", "name": "n"}}}),
                ),
                delete(one("ic-imm")),
            ],
        ),
        Case::new(
            "ingressclass: namespaced path is not found",
            vec![get(
                "/apis/networking.k8s.io/v1/namespaces/NS/ingressclasses",
            )],
        ),
    ]
}

fn network_policy_cases() -> Vec<Case> {
    let one = format!("{POLICIES}/w");
    vec![
        Case::new(
            "networkpolicy: default deny read back",
            vec![
                post(
                    POLICIES,
                    json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                    "metadata": {"name": "w"}, "spec": {"podSelector": {}}}),
                ),
                get(one.clone()),
                table(POLICIES),
            ],
        ),
        Case::new(
            "networkpolicy: real-world policy defaults",
            vec![
                post(
                    POLICIES,
                    policy(json!({
                    "ingress": [{"from": [
                        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}},
                        {"podSelector": {"matchExpressions": [{"key": "role", "operator": "In", "values": ["frontend"]}]}},
                        {"ipBlock": {"cidr": "172.17.0.0/16", "except": ["172.17.1.0/24"]}}],
                        "ports": [{"port": 8080}, {"port": "metrics", "protocol": "TCP"}, {"port": 32000, "endPort": 32768, "protocol": "UDP"}]}],
                    "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}], "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53}]}]})),
                ),
                table(POLICIES),
            ],
        ),
        Case::new(
            "networkpolicy: egress only policy types",
            vec![post(
                POLICIES,
                policy(json!({"policyTypes": ["Egress"], "egress": [{}]})),
            )],
        ),
        Case::new(
            "networkpolicy: policy types rules",
            vec![
                post(
                    POLICIES,
                    policy(json!({"policyTypes": ["Ingress", "Sideways"]})),
                ),
                post(
                    POLICIES,
                    policy(json!({"policyTypes": ["Ingress", "Egress", "Ingress"]})),
                ),
            ],
        ),
        Case::new(
            "networkpolicy: port rules",
            vec![post(
                POLICIES,
                policy(json!({"ingress": [{"ports": [
                {"port": 0},
                {"port": 80, "endPort": 79},
                {"port": 80, "endPort": 70000},
                {"port": "http", "endPort": 90},
                {"endPort": 90},
                {"port": "Bad--Name"},
                {"port": 80, "protocol": "ICMP"}]}]})),
            )],
        ),
        Case::new(
            "networkpolicy: peer rules",
            vec![post(
                POLICIES,
                policy(json!({"ingress": [{"from": [
                {},
                {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}},
                {"podSelector": {"matchLabels": {"bad key!": "v"}}},
                {"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}}]}]})),
            )],
        ),
        Case::new(
            "networkpolicy: ip block rules",
            vec![post(
                POLICIES,
                policy(json!({"egress": [{"to": [
                {"ipBlock": {"cidr": ""}},
                {"ipBlock": {"cidr": "10.0.0.0/33"}},
                {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24", "10.0.0.0/16", "10.0.1.0/24", "nope", "fd00::/64"]}},
                {"ipBlock": {"cidr": "fd00::/48", "except": ["fd00:0:0:1::/64"]}}]}]})),
            )],
        ),
        Case::new(
            "networkpolicy: pod selector rules",
            vec![post(
                POLICIES,
                policy(
                    json!({"podSelector": {"matchExpressions": [{"key": "app", "operator": "Near", "values": ["a"]}]}}),
                ),
            )],
        ),
        Case::new(
            "networkpolicy: generation",
            vec![
                post(POLICIES, policy(json!({}))),
                merge_patch(one.clone(), json!({"metadata": {"labels": {"a": "b"}}})),
                merge_patch(
                    one.clone(),
                    json!({"spec": {"ingress": [{"ports": [{"port": 443}]}]}}),
                ),
                merge_patch(one.clone(), json!({"spec": {"policyTypes": ["Ingress"]}})),
                get(one.clone()),
            ],
        ),
        Case::new(
            "networkpolicy: strategic merge patch",
            vec![
                post(
                    POLICIES,
                    policy(json!({"ingress": [{"ports": [{"port": 80}]}]})),
                ),
                patch(
                    one.clone(),
                    SMP,
                    json!({"spec": {"ingress": [{"ports": [{"port": 443}]}], "policyTypes": ["Ingress", "Egress"]}}),
                ),
            ],
        ),
        Case::new(
            "networkpolicy: server-side apply",
            vec![
                patch(
                    format!("{one}?fieldManager=ops"),
                    APPLY,
                    policy(json!({"ingress": [{"ports": [{"port": 80}]}]})),
                ),
                patch(
                    format!("{one}?fieldManager=sec"),
                    APPLY,
                    json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                    "metadata": {"name": "w"}, "spec": {"egress": [{"ports": [{"port": 53, "protocol": "UDP"}]}]}}),
                ),
                get(one.clone()),
            ],
        ),
        Case::new(
            "networkpolicy: no status subresource",
            vec![
                post(POLICIES, policy(json!({}))),
                merge_patch(
                    format!("{one}/status"),
                    json!({"metadata": {"labels": {"a": "b"}}}),
                ),
            ],
        ),
        Case::new(
            "networkpolicy: invalid cidr kept on update",
            vec![
                post(
                    POLICIES,
                    policy(json!({"ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}]})),
                ),
                merge_patch(
                    one.clone(),
                    json!({"spec": {"ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16", "11.0.0.0/16"]}}]}]}}),
                ),
            ],
        ),
    ]
}

fn hpa_cases() -> Vec<Case> {
    let one_v2 = format!("{HPAS_V2}/w");
    let one_v1 = format!("{HPAS_V1}/w");
    let conditions = json!([{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
        "reason": "ReadyForNewScale", "message": "recommended size matches current size"},
        {"type": "ScalingActive", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z",
         "reason": "ValidMetricFound", "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"}]);
    vec![
        Case::new(
            "hpa: defaults read back",
            vec![
                post(HPAS_V2, hpa(json!({}))),
                get(one_v2.clone()),
                get(one_v1.clone()),
                table(HPAS_V2),
            ],
        ),
        Case::new(
            "hpa: cpu and memory read back in both versions",
            vec![
                post(
                    HPAS_V2,
                    hpa(json!({"spec": {"minReplicas": 2, "metrics": [
                    resource_metric("cpu", json!({"type": "Utilization", "averageUtilization": 70})),
                    resource_metric("memory", json!({"type": "AverageValue", "averageValue": "1536Mi"}))]}})),
                ),
                get(one_v1.clone()),
                table(HPAS_V1),
                table(HPAS_V2),
            ],
        ),
        Case::new(
            "hpa: behavior defaults",
            vec![
                post(
                    HPAS_V2,
                    hpa(
                        json!({"spec": {"behavior": {"scaleDown": {"stabilizationWindowSeconds": 300,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}}),
                    ),
                ),
                get(one_v1.clone()),
            ],
        ),
        Case::new(
            "hpa: empty behavior defaulted",
            vec![post(HPAS_V2, hpa(json!({"spec": {"behavior": {}}})))],
        ),
        Case::new(
            "hpa: tolerance dropped",
            vec![post(
                HPAS_V2,
                hpa(json!({"spec": {"behavior": {"scaleUp": {"tolerance": "0.05"}}}})),
            )],
        ),
        Case::new(
            "hpa: v1 created read as v2",
            vec![
                post(
                    HPAS_V1,
                    hpa_v1(json!({"spec": {"targetCPUUtilizationPercentage": 60}})),
                ),
                get(one_v2.clone()),
                get(one_v1.clone()),
            ],
        ),
        Case::new(
            "hpa: v1 without target defaults to 80 percent",
            vec![
                post(HPAS_V1, hpa_v1(json!({}))),
                get(one_v2.clone()),
                table(HPAS_V1),
            ],
        ),
        Case::new(
            "hpa: v1 metrics annotation read as v2",
            vec![
                post(
                    HPAS_V1,
                    hpa_v1(json!({"metadata": {"annotations": {
                    "autoscaling.alpha.kubernetes.io/metrics": "[{\"type\":\"Resource\",\"resource\":{\"name\":\"memory\",\"targetAverageValue\":\"512Mi\"}},{\"type\":\"Pods\",\"pods\":{\"metricName\":\"requests_per_second\",\"targetAverageValue\":\"100\"}}]",
                    "team": "shop"}},
                    "spec": {"targetCPUUtilizationPercentage": 50}})),
                ),
                get(one_v2.clone()),
            ],
        ),
        Case::new(
            "hpa: v1 behavior annotation read as v2",
            vec![
                post(
                    HPAS_V1,
                    hpa_v1(json!({"metadata": {"annotations": {
                    "autoscaling.alpha.kubernetes.io/behavior": "{\"ScaleUp\":null,\"ScaleDown\":{\"StabilizationWindowSeconds\":60,\"SelectPolicy\":\"Min\",\"Policies\":[{\"Type\":\"Percent\",\"Value\":10,\"PeriodSeconds\":60}]}}"}}})),
                ),
                get(one_v2.clone()),
            ],
        ),
        Case::new(
            "hpa: v2 metrics of every type read as v1",
            vec![
                post(
                    HPAS_V2,
                    hpa_metrics(json!([
                    {"type": "Pods", "pods": {"metric": {"name": "packets-per-second", "selector": {"matchLabels": {"tier": "web"}}}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
                    {"type": "Object", "object": {"describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main-route"}, "metric": {"name": "requests-per-second"}, "target": {"type": "Value", "value": "10k"}}},
                    {"type": "External", "external": {"metric": {"name": "queue_messages_ready", "selector": {"matchExpressions": [{"key": "queue", "operator": "In", "values": ["worker_tasks"]}]}}, "target": {"type": "AverageValue", "averageValue": "30"}}},
                    {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "application", "target": {"type": "Utilization", "averageUtilization": 60}}}])),
                ),
                get(one_v1.clone()),
                table(HPAS_V2),
            ],
        ),
        Case::new(
            "hpa: status write read as v1",
            vec![
                post(HPAS_V2, hpa(json!({}))),
                merge_patch(
                    format!("{one_v2}/status"),
                    json!({"status": {"currentReplicas": 3, "desiredReplicas": 4,
                    "lastScaleTime": "2026-01-01T00:00:00Z",
                    "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 93, "averageValue": "466m"}}}],
                    "conditions": conditions}}),
                ),
                get(one_v1.clone()),
                table(HPAS_V2),
            ],
        ),
        Case::new(
            "hpa: v1 status write read as v2",
            vec![
                post(
                    HPAS_V1,
                    hpa_v1(json!({"spec": {"targetCPUUtilizationPercentage": 50}})),
                ),
                merge_patch(
                    format!("{one_v1}/status"),
                    json!({"status": {"currentReplicas": 2, "desiredReplicas": 2, "currentCPUUtilizationPercentage": 42}}),
                ),
                get(one_v2.clone()),
            ],
        ),
        Case::new(
            "hpa: status isolation",
            vec![
                post(HPAS_V2, hpa(json!({}))),
                merge_patch(
                    one_v2.clone(),
                    json!({"spec": {"maxReplicas": 5}, "status": {"desiredReplicas": 9}}),
                ),
                merge_patch(
                    format!("{one_v2}/status"),
                    json!({"spec": {"maxReplicas": 7}, "status": {"desiredReplicas": 3}}),
                ),
                get(one_v2.clone()),
            ],
        ),
        Case::new(
            "hpa: status rules",
            vec![
                post(HPAS_V2, hpa(json!({}))),
                merge_patch(
                    format!("{one_v2}/status"),
                    json!({"status": {"currentReplicas": -1, "desiredReplicas": -2}}),
                ),
            ],
        ),
        Case::new(
            "hpa: replica bounds",
            vec![
                post(
                    HPAS_V2,
                    hpa(json!({"spec": {"minReplicas": 0, "maxReplicas": 0}})),
                ),
                post(
                    HPAS_V2,
                    hpa(json!({"spec": {"minReplicas": 5, "maxReplicas": 3}})),
                ),
            ],
        ),
        Case::new(
            "hpa: scale target ref rules",
            vec![
                post(
                    HPAS_V2,
                    hpa(
                        json!({"spec": {"scaleTargetRef": {"apiVersion": "v1", "kind": "", "name": "a/b"}}}),
                    ),
                ),
                post(
                    HPAS_V2,
                    hpa(
                        json!({"spec": {"scaleTargetRef": {"apiVersion": "a/b/c", "kind": "Deployment", "name": "web"}}}),
                    ),
                ),
                post(
                    HPAS_V2,
                    hpa(
                        json!({"spec": {"scaleTargetRef": {"apiVersion": "v1", "kind": "ReplicationController", "name": "web"}}}),
                    ),
                ),
            ],
        ),
        Case::new(
            "hpa: metric type rules",
            vec![post(
                HPAS_V2,
                hpa_metrics(json!([
                {"type": ""},
                {"type": "Resource"},
                {"type": "Custom"},
                {"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}])),
            )],
        ),
        Case::new(
            "hpa: resource metric rules",
            vec![post(
                HPAS_V2,
                hpa_metrics(json!([
                    resource_metric("", json!({"type": "Utilization"})),
                    resource_metric(
                        "cpu",
                        json!({"type": "Utilization", "averageUtilization": 0, "averageValue": "-1"})
                    ),
                    resource_metric("memory", json!({"type": "Percent", "averageValue": "0"}))
                ])),
            )],
        ),
        Case::new(
            "hpa: pods object and external metric rules",
            vec![post(
                HPAS_V2,
                hpa_metrics(json!([
                {"type": "Pods", "pods": {"metric": {"name": ""}, "target": {"type": "Value", "value": "10"}}},
                {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "web"}, "metric": {"name": "a/b"}, "target": {"type": "Value"}}},
                {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1", "averageValue": "2"}}},
                {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "AverageValue"}}}])),
            )],
        ),
        Case::new(
            "hpa: container resource metric rules",
            vec![post(
                HPAS_V2,
                hpa_metrics(json!([
                {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "", "target": {"type": "Utilization"}}},
                {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "App_1", "target": {"type": "Utilization", "averageUtilization": 50}}}])),
            )],
        ),
        Case::new(
            "hpa: scale to zero needs object or external metric",
            vec![post(HPAS_V2, hpa(json!({"spec": {"minReplicas": 0}})))],
        ),
        Case::new(
            "hpa: behavior rules",
            vec![post(
                HPAS_V2,
                hpa(json!({"spec": {"behavior": {
                "scaleUp": {"stabilizationWindowSeconds": -1, "selectPolicy": "Most"},
                "scaleDown": {"stabilizationWindowSeconds": 4000, "policies": [
                    {"type": "Nodes", "value": 0, "periodSeconds": 0},
                    {"type": "Pods", "value": 1, "periodSeconds": 1801}]}}}})),
            )],
        ),
        Case::new(
            "hpa: update through v1 keeps v2 metrics",
            vec![
                post(
                    HPAS_V2,
                    hpa(json!({"spec": {"metrics": [
                    resource_metric("cpu", json!({"type": "Utilization", "averageUtilization": 70})),
                    resource_metric("memory", json!({"type": "Utilization", "averageUtilization": 80}))],
                    "behavior": {"scaleDown": {"stabilizationWindowSeconds": 120}}}})),
                ),
                merge_patch(
                    one_v1.clone(),
                    json!({"spec": {"maxReplicas": 20, "targetCPUUtilizationPercentage": 55}}),
                ),
                get(one_v2.clone()),
            ],
        ),
        Case::new(
            "hpa: strategic merge patch of metrics",
            vec![
                post(HPAS_V2, hpa(json!({}))),
                patch(
                    one_v2.clone(),
                    SMP,
                    json!({"spec": {"metrics": [resource_metric("memory", json!({"type": "Utilization", "averageUtilization": 75}))]}}),
                ),
            ],
        ),
        Case::new(
            "hpa: server-side apply",
            vec![
                patch(
                    format!("{one_v2}?fieldManager=ops"),
                    APPLY,
                    hpa(json!({"spec": {"minReplicas": 2}})),
                ),
                patch(
                    format!("{one_v2}?fieldManager=ops"),
                    APPLY,
                    hpa(json!({"spec": {"minReplicas": 3, "metrics": [
                    resource_metric("cpu", json!({"type": "Utilization", "averageUtilization": 65}))]}})),
                ),
                get(one_v2.clone()),
            ],
        ),
        Case::new(
            "hpa: discovery of both versions",
            vec![
                get("/apis/autoscaling/v1"),
                get("/apis/autoscaling/v2"),
                get("/apis/autoscaling"),
            ],
        ),
        Case::new(
            "hpa: list through v1 and v2",
            vec![
                post(
                    HPAS_V2,
                    hpa(json!({"spec": {"metrics": [
                    resource_metric("memory", json!({"type": "Utilization", "averageUtilization": 60}))]}})),
                ),
                get(HPAS_V1),
                get(HPAS_V2),
                get(format!("{HPAS_V1}?fieldSelector=metadata.name%3Dw")),
            ],
        ),
        Case::new(
            "hpa: server-side apply through v1",
            vec![
                patch(
                    format!("{one_v1}?fieldManager=ops"),
                    APPLY,
                    hpa_v1(json!({"spec": {"targetCPUUtilizationPercentage": 65}})),
                ),
                patch(
                    format!("{one_v1}?fieldManager=ops"),
                    APPLY,
                    hpa_v1(json!({"spec": {"minReplicas": 2}})),
                ),
                get(one_v2.clone()),
            ],
        ),
        Case::new(
            "hpa: put through v1",
            vec![
                post(HPAS_V2, hpa(json!({}))),
                put(
                    one_v1.clone(),
                    hpa_v1(
                        json!({"spec": {"minReplicas": 3, "targetCPUUtilizationPercentage": 75}}),
                    ),
                ),
                get(one_v2.clone()),
            ],
        ),
    ]
}

pub(crate) fn cases() -> Vec<Case> {
    let mut cases = ingress_cases();
    cases.extend(ingress_class_cases());
    cases.extend(network_policy_cases());
    cases.extend(hpa_cases());
    cases
}
