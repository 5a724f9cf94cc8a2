//! core/v1 ResourceQuotas and LimitRanges, policy/v1 PodDisruptionBudgets (and what evictions
//! do with them) and discovery.k8s.io/v1 EndpointSlices: defaults read back (quantities'
//! canonical form, a limit range's defaults from its bounds, a slice's port protocol), each
//! rule family, immutable fields, generation, status vs main writes, server-side apply and
//! strategic merge patches, tables, field selectors and discovery; real-world manifests (a
//! namespace's compute quota, a team's limit range, a chart's budget, a controller's slice).
//!
//! Eviction cases first create the namespace's `default` ServiceAccount without token
//! automount (no service-account controller runs on either tier). Evictions a budget refuses
//! (429) are not in the corpus: the corpus's client retries a 429 (kube's default retry
//! policy, after kube-apiserver's `Retry-After` of 10 s) for minutes; `apiserver_policy.rs`
//! asserts them with a client that does not retry.

use serde_json::{Value, json};

use crate::corpus::{
    Case, SMP, Step, apply_as, get, merge, merge_patch, merged, patch, post, put, service_account,
    status_patch, table,
};

/// One of the kinds: where its objects are, and a valid object `x` of it.
#[derive(Clone, Copy)]
struct Kind {
    label: &'static str,
    collection: &'static str,
    api_version: &'static str,
    kind: &'static str,
}

const QUOTA: Kind = Kind {
    label: "resourcequota",
    collection: "/api/v1/namespaces/NS/resourcequotas",
    api_version: "v1",
    kind: "ResourceQuota",
};
const LIMITS: Kind = Kind {
    label: "limitrange",
    collection: "/api/v1/namespaces/NS/limitranges",
    api_version: "v1",
    kind: "LimitRange",
};
const PDB: Kind = Kind {
    label: "pdb",
    collection: "/apis/policy/v1/namespaces/NS/poddisruptionbudgets",
    api_version: "policy/v1",
    kind: "PodDisruptionBudget",
};
const SLICE: Kind = Kind {
    label: "endpointslice",
    collection: "/apis/discovery.k8s.io/v1/namespaces/NS/endpointslices",
    api_version: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
};

impl Kind {
    fn one(self) -> String {
        format!("{}/x", self.collection)
    }

    /// An object `x` with `extra` merged in.
    fn object(self, extra: Value) -> Value {
        merged(
            json!({"apiVersion": self.api_version, "kind": self.kind,
            "metadata": {"name": "x"}}),
            extra,
        )
    }

    fn create(self, extra: Value) -> Step {
        post(self.collection, self.object(extra))
    }

    fn get(self) -> Step {
        get(self.one())
    }

    fn put(self, extra: Value) -> Step {
        put(self.one(), self.object(extra))
    }

    fn merge_patch(self, body: Value) -> Step {
        merge_patch(self.one(), body)
    }

    fn status(self, status: Value) -> Step {
        status_patch(&self.one(), json!({"status": status}))
    }

    fn apply(self, manager: &str, extra: Value) -> Step {
        apply_as(&self.one(), manager, self.object(extra))
    }

    fn table(self) -> Step {
        table(self.collection)
    }
}

fn quota_cases(add: &mut dyn FnMut(Kind, &str, Vec<Step>)) {
    let k = QUOTA;
    let hard = |hard: Value| json!({"spec": {"hard": hard}});
    add(
        k,
        "minimal",
        vec![k.create(hard(json!({"pods": "10", "cpu": "0.5"}))), k.get()],
    );
    add(
        k,
        "compute quota",
        vec![
            k.create(
                json!({"metadata": {"labels": {"team": "a"}}, "spec": {"hard": {
                "requests.cpu": "4", "requests.memory": "8Gi", "limits.cpu": "8",
                "limits.memory": "16384Mi", "pods": "20", "count/deployments.apps": "5",
                "requests.storage": "100Gi", "persistentvolumeclaims": "10",
                "requests.nvidia.com/gpu": "2"}}}),
            ),
            k.get(),
        ],
    );
    for (label, body) in [
        ("unknown resource", hard(json!({"foo": "1"}))),
        ("negative quantity", hard(json!({"cpu": "-1"}))),
        ("fractional pods", hard(json!({"pods": "1500m"}))),
        ("bad resource name", hard(json!({"a b": "1"}))),
        (
            "unsupported scope",
            json!({"spec": {"hard": {"pods": "1"}, "scopes": ["Bogus"]}}),
        ),
        (
            "scope not for resource",
            json!({"spec": {"hard": {"cpu": "1"}, "scopes": ["BestEffort"]}}),
        ),
        (
            "conflicting scopes",
            json!({"spec": {"hard": {"pods": "1"}, "scopes": ["Terminating", "NotTerminating"]}}),
        ),
        (
            "scope selector operator",
            json!({"spec": {"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
                {"scopeName": "Terminating", "operator": "In", "values": ["x"]}]}}}),
        ),
        (
            "scope selector without values",
            json!({"spec": {"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
                {"scopeName": "PriorityClass", "operator": "In"}]}}}),
        ),
        (
            "scope selector with values",
            json!({"spec": {"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
                {"scopeName": "BestEffort", "operator": "Exists", "values": ["x"]}]}}}),
        ),
        (
            "scope selector for resource",
            json!({"spec": {"hard": {"cpu": "1"}, "scopeSelector": {"matchExpressions": [
                {"scopeName": "BestEffort", "operator": "Exists"}]}}}),
        ),
        ("not a quantity", hard(json!({"cpu": "lots"}))),
    ] {
        add(k, label, vec![k.create(body)]);
    }
    add(
        k,
        "priority class scope",
        vec![
            k.create(json!({"spec": {"hard": {"pods": "5", "requests.cpu": "2"},
                "scopeSelector": {"matchExpressions": [
                    {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}})),
            k.get(),
        ],
    );
    add(
        k,
        "scopes immutable",
        vec![
            k.create(json!({"spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"]}})),
            k.merge_patch(json!({"spec": {"scopes": ["NotBestEffort"]}})),
        ],
    );
    add(
        k,
        "create drops status",
        vec![
            k.create(json!({"spec": {"hard": {"pods": "1"}},
                "status": {"hard": {"pods": "1"}, "used": {"pods": "1"}}})),
            k.get(),
        ],
    );
    add(
        k,
        "status write keeps spec",
        vec![
            k.create(hard(json!({"pods": "10", "limits.memory": "1Gi"}))),
            k.status(json!({"hard": {"pods": "10", "limits.memory": "1Gi"},
                "used": {"pods": "3", "limits.memory": "512Mi"}})),
            merge_patch(
                format!("{}/status", k.one()),
                json!({"spec": {"hard": {"pods": "99"}}}),
            ),
            k.get(),
            k.table(),
        ],
    );
    add(
        k,
        "main write keeps status",
        vec![
            k.create(hard(json!({"pods": "10"}))),
            k.status(json!({"hard": {"pods": "10"}, "used": {"pods": "1"}})),
            k.merge_patch(json!({"spec": {"hard": {"pods": "20"}},
                "status": {"used": {"pods": "7"}}})),
        ],
    );
    add(
        k,
        "invalid status",
        vec![
            k.create(hard(json!({"pods": "10"}))),
            k.status(json!({"used": {"pods": "-1"}})),
        ],
    );
    add(
        k,
        "strategic merge patch",
        vec![
            k.create(hard(json!({"pods": "10", "cpu": "1"}))),
            patch(
                k.one(),
                SMP,
                json!({"spec": {"hard": {"cpu": null, "memory": "1G"}}}),
            ),
        ],
    );
    add(
        k,
        "apply",
        vec![
            k.apply("a", hard(json!({"pods": "10"}))),
            k.apply("b", hard(json!({"services": "2"}))),
        ],
    );
    add(k, "empty table", vec![k.create(json!({})), k.table()]);
}

fn limit_range_cases(add: &mut dyn FnMut(Kind, &str, Vec<Step>)) {
    let k = LIMITS;
    let limits = |limits: Value| json!({"spec": {"limits": limits}});
    add(
        k,
        "defaults from bounds",
        vec![
            k.create(limits(json!([{"type": "Container",
                "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "0.1", "memory": "64Mi"}}]))),
            k.get(),
        ],
    );
    add(
        k,
        "team limits",
        vec![
            k.create(limits(json!([
                {"type": "Container", "default": {"cpu": "500m", "memory": "512Mi"},
                 "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
                 "max": {"cpu": "4", "memory": "8Gi"}, "min": {"cpu": "10m", "memory": "16Mi"},
                 "maxLimitRequestRatio": {"cpu": "10"}},
                {"type": "Pod", "max": {"cpu": "8", "memory": "16Gi"}},
                {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"},
                 "max": {"storage": "100Gi"}}]))),
            k.get(),
        ],
    );
    add(k, "empty spec", vec![k.create(json!({})), k.get()]);
    for (label, items) in [
        (
            "pod default",
            json!([{"type": "Pod", "default": {"cpu": "1"}, "max": {"cpu": "2"}}]),
        ),
        (
            "min over max",
            json!([{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"},
                "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"}}]),
        ),
        (
            "default over max",
            json!([{"type": "Container", "max": {"memory": "1Gi"}, "default": {"memory": "2Gi"},
                "defaultRequest": {"memory": "1Gi"}}]),
        ),
        (
            "request over default",
            json!([{"type": "Container", "default": {"cpu": "100m"},
                "defaultRequest": {"cpu": "200m"}}]),
        ),
        (
            "min over request",
            json!([{"type": "Container", "min": {"cpu": "300m"}, "default": {"cpu": "500m"},
                "defaultRequest": {"cpu": "200m"}}]),
        ),
        (
            "ratio under one",
            json!([{"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}}]),
        ),
        (
            "duplicate type",
            json!([{"type": "Pod", "max": {"cpu": "1"}}, {"type": "Pod", "max": {"cpu": "2"}}]),
        ),
        (
            "unknown type",
            json!([{"type": "Bogus", "max": {"cpu": "1"}}]),
        ),
        (
            "claim without storage",
            json!([{"type": "PersistentVolumeClaim", "max": {"cpu": "1"}}]),
        ),
        (
            "container storage",
            json!([{"type": "Container", "max": {"storage": "1Gi"}}]),
        ),
        (
            "extended resource over default",
            json!([{"type": "Container", "default": {"example.com/gpu": "2"},
                "defaultRequest": {"example.com/gpu": "1"}}]),
        ),
    ] {
        add(k, label, vec![k.create(limits(items))]);
    }
    add(
        k,
        "put creates",
        vec![
            k.put(limits(json!([{"type": "Container", "max": {"cpu": "1"}}]))),
            k.put(limits(json!([{"type": "Container", "max": {"cpu": "2"}}]))),
        ],
    );
    add(
        k,
        "table",
        vec![
            k.create(limits(json!([{"type": "Container", "max": {"cpu": "1"}}]))),
            k.table(),
        ],
    );
    add(
        k,
        "apply",
        vec![
            k.apply(
                "a",
                limits(json!([{"type": "Container", "max": {"cpu": "1"}}])),
            ),
            k.get(),
        ],
    );
}

/// A running, ready pod `p` labelled `app: p`, and its creation steps.
fn running_pod(ready: bool) -> Vec<Step> {
    let pods = "/api/v1/namespaces/NS/pods";
    vec![
        post(
            pods,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "p"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}),
        ),
        merge_patch(
            format!("{pods}/p/status"),
            json!({"status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": if ready { "True" } else { "False" }}]}}),
        ),
    ]
}

fn eviction(dry_run: bool) -> Step {
    let path = if dry_run {
        "/api/v1/namespaces/NS/pods/p/eviction?dryRun=All"
    } else {
        "/api/v1/namespaces/NS/pods/p/eviction"
    };
    post(
        path,
        json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}}),
    )
}

fn get_pod() -> Step {
    get("/api/v1/namespaces/NS/pods/p")
}

/// Adds an eviction case: its label, and whether its pod is ready with the case's steps.
type Evict<'a> = dyn FnMut(&str, (bool, Vec<Step>)) + 'a;

/// A budget `name` over `app: p` with `spec` merged in.
fn budget(name: &str, spec: Value) -> Step {
    let mut object = PDB.object(json!({"metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "p"}}}}));
    merge(&mut object, json!({"spec": spec}));
    post(PDB.collection, object)
}

/// The status a disruption controller would write for `x`.
fn budget_status(observed: i64, allowed: i64, current: i64, desired: i64) -> Step {
    PDB.status(
        json!({"observedGeneration": observed, "disruptionsAllowed": allowed,
        "currentHealthy": current, "desiredHealthy": desired, "expectedPods": 2}),
    )
}

fn pdb_cases(add: &mut dyn FnMut(Kind, &str, Vec<Step>), evict: &mut Evict<'_>) {
    let k = PDB;
    let spec = |spec: Value| json!({"spec": spec});
    let selector = json!({"matchLabels": {"app": "p"}});
    add(
        k,
        "min available",
        vec![
            k.create(spec(json!({"minAvailable": 1, "selector": selector}))),
            k.get(),
        ],
    );
    add(
        k,
        "chart budget",
        vec![
            k.create(json!({"metadata": {"labels": {"app.kubernetes.io/name": "web"}},
                "spec": {"maxUnavailable": "25%", "unhealthyPodEvictionPolicy": "AlwaysAllow",
                    "selector": {"matchLabels": {"app.kubernetes.io/name": "web"},
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}}})),
            k.get(),
        ],
    );
    add(
        k,
        "no selector",
        vec![k.create(spec(json!({"minAvailable": "50%"}))), k.get()],
    );
    for (label, body) in [
        (
            "both bounds",
            spec(json!({"minAvailable": 1, "maxUnavailable": 1, "selector": selector})),
        ),
        ("negative min", spec(json!({"minAvailable": -1}))),
        ("over 100 percent", spec(json!({"maxUnavailable": "150%"}))),
        ("bad percent", spec(json!({"minAvailable": "half"}))),
        (
            "bad selector",
            spec(
                json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "-x-"},
                "matchExpressions": [{"key": "tier", "operator": "In"}]}}),
            ),
        ),
        (
            "bad eviction policy",
            spec(json!({"minAvailable": 1, "unhealthyPodEvictionPolicy": "Sometimes"})),
        ),
    ] {
        add(k, label, vec![k.create(body)]);
    }
    add(
        k,
        "generation",
        vec![
            k.create(spec(json!({"minAvailable": 1, "selector": selector}))),
            k.merge_patch(json!({"metadata": {"labels": {"a": "b"}}})),
            k.merge_patch(json!({"spec": {"minAvailable": 2}})),
        ],
    );
    add(
        k,
        "put without resourceVersion",
        vec![
            k.create(spec(json!({"minAvailable": 1}))),
            k.put(spec(json!({"minAvailable": 2}))),
        ],
    );
    add(
        k,
        "status write keeps spec",
        vec![
            k.create(spec(json!({"minAvailable": 1, "selector": selector}))),
            merge_patch(
                format!("{}/status", k.one()),
                json!({"spec": {"minAvailable": 5}, "status": {"observedGeneration": 1,
                    "disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1,
                    "expectedPods": 2, "conditions": [{"type": "DisruptionAllowed",
                        "status": "True", "reason": "SufficientPods", "message": "",
                        "lastTransitionTime": "2024-01-01T00:00:00Z", "observedGeneration": 1}]}}),
            ),
            k.table(),
        ],
    );
    add(
        k,
        "main write keeps status",
        vec![
            k.create(spec(json!({"minAvailable": 1}))),
            budget_status(1, 1, 2, 1),
            k.merge_patch(
                json!({"spec": {"minAvailable": 2}, "status": {"disruptionsAllowed": 9}}),
            ),
        ],
    );
    add(
        k,
        "invalid status",
        vec![
            k.create(spec(json!({"minAvailable": 1}))),
            k.status(json!({"disruptionsAllowed": -1, "conditions": [
                {"type": "DisruptionAllowed", "status": "Maybe", "reason": "1bad"}]})),
        ],
    );
    add(
        k,
        "apply",
        vec![
            k.apply("a", spec(json!({"minAvailable": 1, "selector": selector}))),
            k.apply(
                "b",
                spec(json!({"unhealthyPodEvictionPolicy": "IfHealthyBudget"})),
            ),
        ],
    );
    add(
        k,
        "field selector",
        vec![
            budget("a", json!({"minAvailable": 1})),
            budget("b", json!({"minAvailable": 1})),
            get(format!("{}?fieldSelector=metadata.name%3Db", k.collection)),
        ],
    );
    add(k, "discovery", vec![get("/apis/policy/v1")]);

    // Evictions.
    evict(
        "running pod without budget",
        (true, vec![eviction(false), get_pod()]),
    );
    evict(
        "budget allows one",
        (
            true,
            vec![
                budget("x", json!({"minAvailable": 1})),
                budget_status(1, 1, 2, 1),
                eviction(false),
                get_pod(),
                PDB.get(),
            ],
        ),
    );
    evict(
        "dry run keeps the budget",
        (
            true,
            vec![
                budget("x", json!({"minAvailable": 1})),
                budget_status(1, 1, 2, 1),
                eviction(true),
                PDB.get(),
            ],
        ),
    );
    evict(
        "two budgets",
        (
            true,
            vec![
                budget("x", json!({"minAvailable": 1})),
                budget("y", json!({"maxUnavailable": 1})),
                eviction(false),
            ],
        ),
    );
    evict(
        "unready pod, always allow",
        (
            false,
            vec![
                budget(
                    "x",
                    json!({"minAvailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"}),
                ),
                budget_status(1, 0, 1, 1),
                eviction(false),
                get_pod(),
                PDB.get(),
            ],
        ),
    );
    evict(
        "unready pod, healthy budget",
        (
            false,
            vec![
                budget("x", json!({"minAvailable": 1})),
                budget_status(1, 0, 2, 2),
                eviction(false),
                get_pod(),
            ],
        ),
    );
    evict(
        "budget of other pods",
        (
            true,
            vec![
                post(
                    PDB.collection,
                    PDB.object(json!({"spec": {"minAvailable": 1,
                        "selector": {"matchLabels": {"app": "other"}}}})),
                ),
                eviction(false),
            ],
        ),
    );
}

fn slice_cases(add: &mut dyn FnMut(Kind, &str, Vec<Step>)) {
    let k = SLICE;
    let v4 = |extra: Value| {
        merged(
            json!({"addressType": "IPv4",
            "ports": [{"name": "http", "port": 80}],
            "endpoints": [{"addresses": ["10.1.2.3"]}]}),
            extra,
        )
    };
    add(k, "minimal", vec![k.create(v4(json!({}))), k.get()]);
    add(
        k,
        "controller slice",
        vec![
            k.create(json!({
                "metadata": {"labels": {"kubernetes.io/service-name": "web",
                    "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
                "addressType": "IPv4",
                "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "appProtocol": "http"},
                          {"name": "metrics", "port": 9090}],
                "endpoints": [
                    {"addresses": ["10.244.1.5"], "conditions": {"ready": true, "serving": true, "terminating": false},
                     "nodeName": "node-1", "zone": "us-east-1a", "hostname": "web-0",
                     "targetRef": {"kind": "Pod", "namespace": "NS", "name": "web-0",
                        "uid": "0f0b3f0e-1111-4a4a-8b8b-222233334444"},
                     "hints": {"forZones": [{"name": "us-east-1a"}]}},
                    {"addresses": ["10.244.2.7"], "conditions": {"ready": false}}]})),
            k.get(),
            k.table(),
        ],
    );
    add(
        k,
        "fqdn",
        vec![
            k.create(
                json!({"addressType": "FQDN", "endpoints": [{"addresses": ["db.example.com"]}]}),
            ),
            k.get(),
        ],
    );
    add(
        k,
        "ipv6",
        vec![
            k.create(json!({"addressType": "IPv6", "endpoints": [{"addresses": ["2001:db8::1"]}]})),
        ],
    );
    add(
        k,
        "no endpoints",
        vec![k.create(json!({"addressType": "IPv4"})), k.get()],
    );
    for (label, body) in [
        ("no address type", json!({"endpoints": []})),
        ("unknown address type", json!({"addressType": "IPX"})),
        (
            "invalid address",
            v4(json!({"endpoints": [{"addresses": ["10.1.2"]}]})),
        ),
        (
            "ipv6 in ipv4 slice",
            v4(json!({"endpoints": [{"addresses": ["2001:db8::1"]}]})),
        ),
        (
            "loopback address",
            v4(json!({"endpoints": [{"addresses": ["127.0.0.1"]}]})),
        ),
        (
            "endpoint without addresses",
            v4(json!({"endpoints": [{"addresses": []}]})),
        ),
        (
            "bad fqdn",
            json!({"addressType": "FQDN", "endpoints": [{"addresses": ["localhost"]}]}),
        ),
        (
            "duplicate port names",
            v4(json!({"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]})),
        ),
        (
            "unsupported protocol",
            v4(json!({"ports": [{"name": "a", "port": 1, "protocol": "ICMP"}]})),
        ),
        (
            "bad port name",
            v4(json!({"ports": [{"name": "Web_Port", "port": 1}]})),
        ),
        (
            "bad app protocol",
            v4(json!({"ports": [{"name": "a", "port": 1, "appProtocol": "a b"}]})),
        ),
        (
            "bad hostname",
            v4(json!({"endpoints": [{"addresses": ["10.1.2.3"], "hostname": "web.0"}]})),
        ),
        (
            "bad node name",
            v4(json!({"endpoints": [{"addresses": ["10.1.2.3"], "nodeName": "Node_1"}]})),
        ),
        (
            "duplicate zone hints",
            v4(
                json!({"endpoints": [{"addresses": ["10.1.2.3"], "hints": {"forZones": [{"name": "a"}, {"name": "a"}]}}]}),
            ),
        ),
    ] {
        add(k, label, vec![k.create(body)]);
    }
    add(
        k,
        "address type immutable",
        vec![
            k.create(v4(json!({}))),
            k.merge_patch(json!({"addressType": "IPv6"})),
        ],
    );
    add(
        k,
        "generation",
        vec![
            k.create(v4(json!({}))),
            k.merge_patch(json!({"metadata": {"annotations": {"a": "b"}}})),
            k.merge_patch(json!({"metadata": {"labels": {"a": "b"}}})),
            k.merge_patch(json!({"endpoints": [{"addresses": ["10.1.2.4"]}]})),
        ],
    );
    add(
        k,
        "deprecated topology dropped",
        vec![
            k.create(v4(json!({"endpoints": [{"addresses": ["10.1.2.3"],
                "deprecatedTopology": {"kubernetes.io/hostname": "node-1"}}]}))),
            k.get(),
        ],
    );
    add(
        k,
        "strategic merge patch",
        vec![
            k.create(v4(json!({}))),
            patch(
                k.one(),
                SMP,
                json!({"ports": [{"name": "https", "port": 443}],
                    "endpoints": [{"addresses": ["10.1.2.9"], "conditions": {"ready": true}}]}),
            ),
        ],
    );
    add(
        k,
        "apply",
        vec![
            k.apply("a", v4(json!({}))),
            k.apply(
                "a",
                v4(json!({"endpoints": [{"addresses": ["10.1.2.3", "10.1.2.4"]}]})),
            ),
        ],
    );
    add(
        k,
        "table with more",
        vec![
            k.create(json!({"addressType": "IPv4",
                "ports": [{"port": 1}, {"name": "b"}, {}, {"name": "d", "port": 4}],
                "endpoints": [{"addresses": ["10.0.0.1", "10.0.0.2"]},
                    {"addresses": ["10.0.0.3", "10.0.0.4"]}]})),
            k.table(),
        ],
    );
    add(k, "discovery", vec![get("/apis/discovery.k8s.io/v1")]);
}

pub(crate) fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut evictions = Vec::new();
    {
        let mut add = |k: Kind, label: &str, steps: Vec<Step>| {
            cases.push(Case::new(format!("{}: {label}", k.label), steps));
        };
        quota_cases(&mut add);
        limit_range_cases(&mut add);
        // The pod's own writes are set up, not compared: the field manager's record of a pod
        // condition's zero times differs (see accepted.txt's `pod: status write`).
        let mut evict = |label: &str, (ready, steps): (bool, Vec<Step>)| {
            let mut setup = vec![service_account()];
            setup.extend(running_pod(ready));
            evictions.push(Case::new(format!("pdb: eviction, {label}"), steps).after(setup));
        };
        pdb_cases(&mut add, &mut evict);
        slice_cases(&mut add);
    }
    cases.extend(evictions);
    cases
}
