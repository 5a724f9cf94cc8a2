//! apps/v1 ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions: defaults read back
//! (each kind's and its pod template's, a StatefulSet's claim templates'), validation of each
//! rule family, immutable fields, generation (and a DaemonSet's template generation), status vs
//! main writes, the scale subresource, strategic merge patches and server-side apply of
//! containers, tables and discovery; real-world manifests (a PostgreSQL StatefulSet with
//! volumeClaimTemplates, a log collector DaemonSet).

use serde_json::{Value, json};

use crate::corpus::{
    Case, JSON_PATCH, Resource, SMP, Step, delete, get, merge, merge_patch, patch, post, put, table,
};

/// One of the kinds: its resource and a valid object `w` of it.
#[derive(Clone, Copy)]
struct Kind {
    /// The case label's prefix.
    label: &'static str,
    kind: &'static str,
    plural: &'static str,
}

const RS: Kind = Kind {
    label: "replicaset",
    kind: "ReplicaSet",
    plural: "replicasets",
};
const STS: Kind = Kind {
    label: "statefulset",
    kind: "StatefulSet",
    plural: "statefulsets",
};
const DS: Kind = Kind {
    label: "daemonset",
    kind: "DaemonSet",
    plural: "daemonsets",
};
const CR: Kind = Kind {
    label: "controllerrevision",
    kind: "ControllerRevision",
    plural: "controllerrevisions",
};

impl Resource for Kind {
    fn collection(self) -> String {
        format!("/apis/apps/v1/namespaces/NS/{}", self.plural)
    }

    /// A valid object `w` (one container `web`, selector `app: w`), with `extra` merged in.
    fn object(self, extra: Value) -> Value {
        let mut object = if self.kind == "ControllerRevision" {
            json!({"apiVersion": "apps/v1", "kind": self.kind, "metadata": {"name": "w"},
                   "revision": 1, "data": {"spec": {"template": {"metadata": {"labels": {"app": "w"}}}}}})
        } else {
            json!({"apiVersion": "apps/v1", "kind": self.kind, "metadata": {"name": "w"},
                "spec": {"selector": {"matchLabels": {"app": "w"}},
                         "template": {"metadata": {"labels": {"app": "w"}},
                                      "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}})
        };
        if self.kind == "StatefulSet" {
            object["spec"]["serviceName"] = json!("w");
        }
        merge(&mut object, extra);
        object
    }
}

impl Kind {
    /// `object` with its pod spec's fields `extra` merged in.
    fn with_pod(self, extra: Value) -> Value {
        self.object(json!({"spec": {"template": {"spec": extra}}}))
    }
}

/// A PostgreSQL StatefulSet as a chart renders it: a headless service's name, claim
/// templates for data and WAL, probes, env from a secret, resources.
fn postgres() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "w", "labels": {"app.kubernetes.io/name": "postgresql"}},
        "spec": {
            "serviceName": "w-hl",
            "replicas": 3,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app.kubernetes.io/name": "postgresql"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "postgresql"}},
                "spec": {
                    "securityContext": {"fsGroup": 1001},
                    "containers": [{
                        "name": "postgresql", "image": "docker.io/bitnami/postgresql:16.3.0",
                        "ports": [{"name": "tcp-postgresql", "containerPort": 5432}],
                        "env": [{"name": "POSTGRES_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "w", "key": "password"}}},
                                {"name": "PGDATA", "value": "/bitnami/postgresql/data"}],
                        "livenessProbe": {"exec": {"command": ["/bin/sh", "-c", "pg_isready -U postgres"]},
                                          "initialDelaySeconds": 30, "periodSeconds": 10},
                        "readinessProbe": {"tcpSocket": {"port": "tcp-postgresql"}},
                        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                                      "limits": {"memory": "1Gi"}},
                        "volumeMounts": [{"name": "data", "mountPath": "/bitnami/postgresql"},
                                         {"name": "wal", "mountPath": "/bitnami/wal"},
                                         {"name": "dshm", "mountPath": "/dev/shm"}]}],
                    "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}},
            "volumeClaimTemplates": [
                {"metadata": {"name": "data", "labels": {"app.kubernetes.io/name": "postgresql"}},
                 "spec": {"accessModes": ["ReadWriteOnce"],
                          "resources": {"requests": {"storage": "8Gi"}}}},
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": "wal"},
                 "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                          "resources": {"requests": {"storage": "2048Mi"}}}}]}})
}

/// A log collector DaemonSet (fluent-bit's chart): host paths, tolerations for every node,
/// a node selector, the downward API.
fn log_collector() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "w", "labels": {"app.kubernetes.io/name": "fluent-bit"}},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": "fluent-bit"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "fluent-bit"},
                             "annotations": {"checksum/config": "abc"}},
                "spec": {
                    "serviceAccountName": "fluent-bit",
                    "hostNetwork": false,
                    "dnsPolicy": "ClusterFirst",
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{
                        "name": "fluent-bit", "image": "cr.fluentbit.io/fluent/fluent-bit:3.1.4",
                        "imagePullPolicy": "IfNotPresent",
                        "ports": [{"name": "http", "containerPort": 2020}],
                        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                        "livenessProbe": {"httpGet": {"path": "/", "port": "http"}},
                        "volumeMounts": [{"name": "varlog", "mountPath": "/var/log"},
                                         {"name": "config", "mountPath": "/fluent-bit/etc/conf"}]}],
                    "volumes": [{"name": "varlog", "hostPath": {"path": "/var/log"}},
                                {"name": "config", "configMap": {"name": "fluent-bit"}}]}}}})
}

/// The cases every workload kind with a pod template shares.
fn template_cases(k: Kind, add: &mut dyn FnMut(String, Vec<Step>)) {
    let l = k.label;
    add(format!("{l}: minimal"), vec![k.created(), k.get()]);
    let invalid: Vec<(&str, Value)> = vec![
        ("no selector", k.object(json!({"spec": {"selector": null}}))),
        (
            "empty selector",
            k.object(json!({"spec": {"selector": {"matchLabels": null}}})),
        ),
        (
            "selector not matching",
            k.object(json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}})),
        ),
        (
            "selector bad operator",
            k.object(json!({"spec": {"selector": {"matchExpressions": [
                {"key": "app", "operator": "Near", "values": ["w"]}]}}})),
        ),
        (
            "restartPolicy Never",
            k.with_pod(json!({"restartPolicy": "Never"})),
        ),
        (
            "activeDeadlineSeconds",
            k.with_pod(json!({"activeDeadlineSeconds": 30})),
        ),
        (
            "minReadySeconds negative",
            k.object(json!({"spec": {"minReadySeconds": -1}})),
        ),
        (
            "container without image",
            k.with_pod(json!({"containers": [{"name": "web"}]})),
        ),
        (
            "container name uppercase and ports",
            k.with_pod(json!({"containers": [{"name": "Web", "image": "nginx",
                "ports": [{"containerPort": 0}, {"containerPort": 80, "protocol": "ICMP"}]}]})),
        ),
        (
            "template label value invalid",
            k.object(json!({"spec": {"template": {"metadata": {"labels": {"tier": "-x"}}}}})),
        ),
    ];
    for (label, body) in invalid {
        add(format!("{l}: {label}"), vec![k.create(body)]);
    }
    add(
        format!("{l}: create drops status"),
        vec![k.create(k.object(json!({"status": {"observedGeneration": 3}})))],
    );
    add(
        format!("{l}: label change keeps generation"),
        vec![
            k.created(),
            k.merge_patch(json!({"metadata": {"labels": {"tier": "web"}}})),
        ],
    );
    add(
        format!("{l}: annotation change keeps generation"),
        vec![
            k.created(),
            k.merge_patch(json!({"metadata": {"annotations": {"note": "x"}}})),
        ],
    );
    add(
        format!("{l}: template change bumps generation"),
        vec![
            k.created(),
            k.put(k.with_pod(json!({"containers": [{"name": "web", "image": "nginx:1.27"}]}))),
            k.get(),
        ],
    );
    add(
        format!("{l}: defaults written back are no change"),
        vec![
            k.created(),
            k.put(k.with_pod(json!({"restartPolicy": "Always", "dnsPolicy": "ClusterFirst"}))),
        ],
    );
    add(
        format!("{l}: main write keeps status"),
        vec![
            k.created(),
            k.status(json!({"status": {"observedGeneration": 1}})),
            k.put(k.object(json!({"status": {"observedGeneration": 9}}))),
        ],
    );
    add(
        format!("{l}: status write keeps spec"),
        vec![
            k.created(),
            put(
                format!("{}/status", k.one()),
                k.object(json!({
                    "metadata": {"labels": {"kept": "yes"}},
                    "spec": {"minReadySeconds": 7},
                    "status": {"observedGeneration": 1}})),
            ),
            k.get(),
        ],
    );
    add(
        format!("{l}: status negative"),
        vec![
            k.created(),
            k.status(json!({"status": {"observedGeneration": -1}})),
        ],
    );
    add(
        format!("{l}: smp container image by name"),
        vec![
            k.create(k.with_pod(json!({"containers": [
                {"name": "web", "image": "nginx:1.25"}, {"name": "side", "image": "busybox"}]}))),
            patch(
                k.one(),
                SMP,
                json!({"spec": {"template": {"spec": {"containers": [
                    {"name": "side", "image": "busybox:1.36"}]}}}}),
            ),
        ],
    );
    add(
        format!("{l}: apply containers merged by name"),
        vec![
            k.apply("a", k.object(json!({}))),
            k.apply(
                "b",
                k.with_pod(json!({"containers": [{"name": "side", "image": "busybox"}]})),
            ),
            k.get(),
        ],
    );
    add(format!("{l}: table"), vec![k.created(), k.table()]);
    add(
        format!("{l}: field selector unsupported"),
        vec![get(format!(
            "{}?fieldSelector=status.replicas%3D0",
            k.collection()
        ))],
    );
}

/// Cases of the kinds with a scale subresource.
fn scale_cases(k: Kind, add: &mut dyn FnMut(String, Vec<Step>)) {
    let l = k.label;
    let scale = format!("{}/scale", k.one());
    add(
        format!("{l}: scale get"),
        vec![k.created(), get(scale.clone())],
    );
    add(
        format!("{l}: scale put"),
        vec![
            k.created(),
            put(
                scale.clone(),
                json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                    "metadata": {"name": "w"}, "spec": {"replicas": 5}}),
            ),
            k.get(),
        ],
    );
    add(
        format!("{l}: scale json patch"),
        vec![
            k.created(),
            patch(
                scale.clone(),
                JSON_PATCH,
                json!([{"op": "replace", "path": "/spec/replicas", "value": 2}]),
            ),
        ],
    );
    add(
        format!("{l}: scale negative"),
        vec![
            k.created(),
            merge_patch(scale, json!({"spec": {"replicas": -1}})),
        ],
    );
}

fn replica_set_cases(add: &mut dyn FnMut(String, Vec<Step>)) {
    let k = RS;
    for (label, body) in [
        (
            "replicaset: replicas zero and probes",
            k.object(
                json!({"spec": {"replicas": 0, "template": {"spec": {"containers": [
                {"name": "web", "image": "nginx", "readinessProbe": {"httpGet": {"port": 80}},
                 "resources": {"requests": {"cpu": "0.5"}}}]}}}}),
            ),
        ),
        (
            "replicaset: replicas negative",
            k.object(json!({"spec": {"replicas": -1}})),
        ),
        (
            "replicaset: name not a DNS label",
            k.object(json!({"metadata": {"name": "w.v1"}})),
        ),
    ] {
        add(label.into(), vec![k.create(body)]);
    }
    add(
        "replicaset: selector immutable".into(),
        vec![
            k.created(),
            k.put(k.object(
                json!({"spec": {"selector": {"matchLabels": {"app": "w", "t": "x"}},
                "template": {"metadata": {"labels": {"app": "w", "t": "x"}}}}}),
            )),
        ],
    );
    add(
        "replicaset: replicas change bumps generation".into(),
        vec![k.created(), k.merge_patch(json!({"spec": {"replicas": 3}}))],
    );
    add(
        "replicaset: status counts inconsistent".into(),
        vec![
            k.created(),
            k.status(json!({"status": {"replicas": 1, "fullyLabeledReplicas": 2,
                "readyReplicas": 2, "availableReplicas": 3}})),
        ],
    );
    add(
        "replicaset: status write with counts".into(),
        vec![
            k.created(),
            k.status(json!({"status": {"replicas": 1, "fullyLabeledReplicas": 1,
                "readyReplicas": 1, "availableReplicas": 1, "observedGeneration": 1}})),
            k.table(),
        ],
    );
}

fn stateful_set_cases(add: &mut dyn FnMut(String, Vec<Step>)) {
    let k = STS;
    add(
        "statefulset: postgres with volumeClaimTemplates".into(),
        vec![k.create(postgres()), k.get()],
    );
    add(
        "statefulset: apply postgres".into(),
        vec![k.apply("helm", postgres()), k.table()],
    );
    for (label, body) in [
        (
            "statefulset: OnDelete and Parallel",
            k.object(json!({"spec": {"podManagementPolicy": "Parallel",
            "updateStrategy": {"type": "OnDelete"}}})),
        ),
        (
            "statefulset: rolling update given",
            k.object(json!({"spec": {
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
            "ordinals": {"start": 1}}})),
        ),
        (
            "statefulset: rolling update type without parameters",
            k.object(json!({"spec": {
            "updateStrategy": {"type": "RollingUpdate"}}})),
        ),
    ] {
        add(label.into(), vec![k.create(body)]);
    }
    add(
        "statefulset: maxUnavailable dropped".into(),
        vec![
            k.create(k.object(json!({"spec": {
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}}))),
            k.get(),
        ],
    );
    let invalid: Vec<(&str, Value)> = vec![
        (
            "podManagementPolicy unknown",
            k.object(json!({"spec": {"podManagementPolicy": "Random"}})),
        ),
        (
            "updateStrategy unknown",
            k.object(json!({"spec": {"updateStrategy": {"type": "BlueGreen"}}})),
        ),
        (
            "OnDelete with rollingUpdate",
            k.object(json!({"spec": {"updateStrategy": {"type": "OnDelete",
                "rollingUpdate": {"partition": 1}}}})),
        ),
        (
            "partition negative",
            k.object(json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": -1}}}})),
        ),
        (
            "retention policy unknown",
            k.object(json!({"spec": {"persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": "Archive", "whenScaled": "Keep"}}})),
        ),
        (
            "ordinals start negative",
            k.object(json!({"spec": {"ordinals": {"start": -1}}})),
        ),
        (
            "serviceName invalid",
            k.object(json!({"spec": {"serviceName": "Web_Service"}})),
        ),
        (
            "name not a DNS label",
            k.object(json!({"metadata": {"name": "w.v1"}})),
        ),
        (
            "claim template without access modes or storage",
            k.object(json!({"spec": {"volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {}}]}})),
        ),
        (
            "claim template modes and volume mode",
            k.object(json!({"spec": {"volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {
                    "accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "WriteOnly"],
                    "volumeMode": "Raw",
                    "resources": {"requests": {"storage": "0"}}}}]}})),
        ),
        (
            "mount of an unknown volume",
            k.with_pod(json!({"containers": [{"name": "web", "image": "nginx",
                "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]})),
        ),
        (
            "replicas negative",
            k.object(json!({"spec": {"replicas": -1}})),
        ),
    ];
    for (label, body) in invalid {
        add(format!("statefulset: {label}"), vec![k.create(body)]);
    }
    add(
        "statefulset: revisionHistoryLimit negative warns".into(),
        vec![k.create(k.object(json!({"spec": {"revisionHistoryLimit": -1}})))],
    );
    add(
        "statefulset: serviceName immutable".into(),
        vec![
            k.created(),
            k.merge_patch(json!({"spec": {"serviceName": "other"}})),
        ],
    );
    add(
        "statefulset: volumeClaimTemplates immutable".into(),
        vec![
            k.create(postgres()),
            patch(
                k.one(),
                JSON_PATCH,
                json!([{"op": "replace", "path": "/spec/volumeClaimTemplates/0/spec/resources/requests/storage", "value": "16Gi"}]),
            ),
        ],
    );
    add(
        "statefulset: podManagementPolicy and selector immutable".into(),
        vec![
            k.created(),
            k.put(k.object(json!({"spec": {"podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": "w", "t": "x"}},
                "template": {"metadata": {"labels": {"app": "w", "t": "x"}}}}}))),
        ],
    );
    add(
        "statefulset: mutable fields updated".into(),
        vec![
            k.created(),
            k.merge_patch(json!({"spec": {"replicas": 4, "minReadySeconds": 5,
                "updateStrategy": {"rollingUpdate": {"partition": 1}},
                "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete"},
                "ordinals": {"start": 2}}})),
        ],
    );
    add(
        "statefulset: status counts inconsistent".into(),
        vec![
            k.created(),
            k.status(json!({"status": {"replicas": 1, "currentReplicas": 2,
                "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 2}})),
        ],
    );
    add(
        "statefulset: collisionCount decremented".into(),
        vec![
            k.created(),
            k.status(json!({"status": {"collisionCount": 2}})),
            k.status(json!({"status": {"collisionCount": 1}})),
        ],
    );
}

fn daemon_set_cases(add: &mut dyn FnMut(String, Vec<Step>)) {
    let k = DS;
    add(
        "daemonset: log collector".into(),
        vec![k.create(log_collector()), k.get()],
    );
    add(
        "daemonset: OnDelete".into(),
        vec![k.create(k.object(json!({"spec": {"updateStrategy": {"type": "OnDelete"}}})))],
    );
    add(
        "daemonset: surge instead of unavailable".into(),
        vec![k.create(k.object(json!({"spec": {"updateStrategy": {
            "rollingUpdate": {"maxSurge": "10%", "maxUnavailable": 0}}}})))],
    );
    let invalid: Vec<(&str, Value)> = vec![
        (
            "surge and unavailable zero",
            k.object(json!({"spec": {"updateStrategy": {"rollingUpdate": {
                "maxSurge": 0, "maxUnavailable": 0}}}})),
        ),
        (
            "surge and unavailable both set",
            k.object(json!({"spec": {"updateStrategy": {"rollingUpdate": {
                "maxSurge": 1, "maxUnavailable": "20%"}}}})),
        ),
        (
            "maxUnavailable over 100%",
            k.object(json!({"spec": {"updateStrategy": {"rollingUpdate": {
                "maxUnavailable": "150%"}}}})),
        ),
        (
            "maxSurge bad percent",
            k.object(json!({"spec": {"updateStrategy": {"rollingUpdate": {
                "maxSurge": "x%", "maxUnavailable": 0}}}})),
        ),
        (
            "updateStrategy unknown",
            k.object(json!({"spec": {"updateStrategy": {"type": "Canary"}}})),
        ),
        (
            "revisionHistoryLimit negative",
            k.object(json!({"spec": {"revisionHistoryLimit": -1}})),
        ),
    ];
    for (label, body) in invalid {
        add(format!("daemonset: {label}"), vec![k.create(body)]);
    }
    add(
        "daemonset: template generation given".into(),
        vec![k.create(k.object(json!({"metadata": {"annotations": {
            "deprecated.daemonset.template.generation": "5"}}})))],
    );
    add(
        "daemonset: selector immutable".into(),
        vec![
            k.created(),
            k.merge_patch(json!({"spec": {"selector": {"matchLabels": {"app": "x"}},
                "template": {"metadata": {"labels": {"app": "x"}}}}})),
        ],
    );
    add(
        "daemonset: template change bumps template generation".into(),
        vec![
            k.created(),
            patch(
                k.one(),
                SMP,
                json!({"spec": {"template": {"spec": {"containers": [
                    {"name": "web", "image": "nginx:1.27"}]}}}}),
            ),
            k.get(),
        ],
    );
    add(
        "daemonset: spec change keeps template generation".into(),
        vec![
            k.created(),
            k.merge_patch(json!({"spec": {"minReadySeconds": 10}})),
        ],
    );
    add(
        "daemonset: status counts".into(),
        vec![
            k.created(),
            k.status(
                json!({"status": {"currentNumberScheduled": 2, "desiredNumberScheduled": 3,
                "numberMisscheduled": 0, "numberReady": 1, "updatedNumberScheduled": 2,
                "numberAvailable": 1, "numberUnavailable": 2, "observedGeneration": 1}}),
            ),
            k.get(),
        ],
    );
    add(
        "daemonset: status count negative".into(),
        vec![
            k.created(),
            k.status(json!({"status": {"numberReady": -1, "numberUnavailable": -2}})),
        ],
    );
    add(
        "daemonset: no scale subresource".into(),
        vec![k.created(), get(format!("{}/scale", k.one()))],
    );
}

fn controller_revision_cases(add: &mut dyn FnMut(String, Vec<Step>)) {
    let k = CR;
    let l = k.label;
    add(format!("{l}: create"), vec![k.created(), k.get()]);
    add(
        format!("{l}: owned by a statefulset"),
        vec![
            STS.created().remember("sts-uid", "/metadata/uid"),
            k.create(k.object(json!({"metadata": {"name": "w", "labels": {"controller-revision-hash": "abc"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "w",
                    "uid": "sts-uid", "controller": true, "blockOwnerDeletion": true}]},
                "data": {"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"app": "w"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}}))),
            k.table(),
        ],
    );
    add(
        format!("{l}: owner not a controller"),
        vec![
            post(
                "/api/v1/namespaces/NS/configmaps",
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
            )
            .remember("cm-uid", "/metadata/uid"),
            k.create(
                k.object(json!({"metadata": {"ownerReferences": [{"apiVersion": "v1",
                "kind": "ConfigMap", "name": "c", "uid": "cm-uid"}]}})),
            ),
            k.table(),
        ],
    );
    let invalid: Vec<(&str, Value)> = vec![
        ("no data", k.object(json!({"data": null}))),
        ("data a string", k.object(json!({"data": "x"}))),
        ("data a list", k.object(json!({"data": [1, 2]}))),
        ("revision negative", k.object(json!({"revision": -1}))),
        (
            "name invalid",
            k.object(json!({"metadata": {"name": "W_1"}})),
        ),
    ];
    for (label, body) in invalid {
        add(format!("{l}: {label}"), vec![k.create(body)]);
    }
    add(
        format!("{l}: revision missing"),
        vec![k.create(
            json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "w"}, "data": {"a": 1}}),
        )],
    );
    add(
        format!("{l}: data immutable"),
        vec![
            k.created(),
            k.merge_patch(json!({"data": {"spec": {"replicas": 2}}})),
        ],
    );
    add(
        format!("{l}: data replaced by put"),
        vec![k.created(), k.put(k.object(json!({"data": {"b": true}})))],
    );
    add(
        format!("{l}: revision updated"),
        vec![
            k.created(),
            k.merge_patch(json!({"revision": 2, "metadata": {"labels": {"x": "y"}}})),
            k.get(),
        ],
    );
    add(
        format!("{l}: json patch revision"),
        vec![
            k.created(),
            patch(
                k.one(),
                JSON_PATCH,
                json!([{"op": "replace", "path": "/revision", "value": 7}]),
            ),
        ],
    );
    add(
        format!("{l}: no status subresource"),
        vec![k.created(), get(format!("{}/status", k.one()))],
    );
    add(
        format!("{l}: unknown field strict"),
        vec![post(
            format!("{}?fieldValidation=Strict", k.collection()),
            k.object(json!({"spec": {"replicas": 1}})),
        )],
    );
    add(
        format!("{l}: apply"),
        vec![k.apply("a", k.object(json!({}))), k.get()],
    );
    add(
        format!("{l}: put without revision"),
        vec![
            k.created(),
            k.put(json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": "w"}, "data": {"spec": {"template": {"metadata": {"labels": {"app": "w"}}}}}})),
        ],
    );
    add(
        format!("{l}: strategic merge patch of data"),
        vec![
            k.created(),
            patch(k.one(), SMP, json!({"data": {"spec": {"replicas": 2}}})),
        ],
    );
    add(
        format!("{l}: labels patched keep data"),
        vec![
            k.created(),
            patch(
                k.one(),
                SMP,
                json!({"metadata": {"labels": {"controller-revision-hash": "7d4b9c"}}}),
            ),
            k.get(),
        ],
    );
    add(
        format!("{l}: data with lists and nulls"),
        vec![
            k.create(k.object(json!({"data": {"spec": {"template": {"spec": {
                "containers": [{"name": "a", "image": "b", "args": null}], "volumes": []}}}}}))),
            k.get(),
        ],
    );
    add(
        format!("{l}: generateName"),
        vec![k.create(
            json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"generateName": "w-"}, "revision": 3, "data": {}}),
        )],
    );
    add(
        format!("{l}: table of one"),
        vec![k.created(), table(k.one())],
    );
    add(
        format!("{l}: field selector name"),
        vec![
            k.created(),
            get(format!(
                "{}?fieldSelector=metadata.name%3Dw",
                k.collection()
            )),
        ],
    );
    add(
        format!("{l}: list and delete"),
        vec![k.created(), get(k.collection()), delete(k.one())],
    );
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |label: String, steps: Vec<Step>| cases.push(Case::new(label, steps));
    for k in [RS, STS, DS] {
        template_cases(k, &mut add);
    }
    for k in [RS, STS] {
        scale_cases(k, &mut add);
    }
    replica_set_cases(&mut add);
    stateful_set_cases(&mut add);
    daemon_set_cases(&mut add);
    controller_revision_cases(&mut add);
    add(
        "apps: discovery of apps/v1".into(),
        vec![get("/apis/apps/v1")],
    );
    cases
}
