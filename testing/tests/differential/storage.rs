//! core/v1 PersistentVolumeClaims, PersistentVolumes and Nodes, storage.k8s.io/v1
//! StorageClasses: real-world objects (a chart's claim, NFS, CSI and local volumes, a kubelet's
//! node registration and status updates, a cloud's storage class), defaults read back, each
//! rule family, immutable fields, status vs main writes, the admission plugins' finalizers and
//! taint, server-side apply and strategic merge patches, tables and field selectors.
//!
//! Volumes, nodes and classes are cluster-scoped: each case names its own `NS`.

use serde_json::{Value, json};

use crate::corpus::{
    APPLY, Case, SMP, Step, delete, get, merge_patch, merged, patch, post, put, status_patch, table,
};

const CLAIMS: &str = "/api/v1/namespaces/NS/persistentvolumeclaims";
const CLAIM: &str = "/api/v1/namespaces/NS/persistentvolumeclaims/c";
const VOLUMES: &str = "/api/v1/persistentvolumes";
const VOLUME: &str = "/api/v1/persistentvolumes/NS";
const NODES: &str = "/api/v1/nodes";
const NODE: &str = "/api/v1/nodes/NS";
const CLASSES: &str = "/apis/storage.k8s.io/v1/storageclasses";
const CLASS: &str = "/apis/storage.k8s.io/v1/storageclasses/NS";

/// A claim `c` of 1Gi, ReadWriteOnce, with `extra` merged in.
fn claim(extra: Value) -> Value {
    merged(
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
        extra,
    )
}

/// A hostPath volume `NS` of 5Gi, with `extra` merged in.
fn volume(extra: Value) -> Value {
    merged(
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "NS"},
        "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/data/NS"}}}),
        extra,
    )
}

/// A node `NS` without status, with `extra` merged in.
fn node(extra: Value) -> Value {
    merged(
        json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "NS", "labels": {"kubernetes.io/hostname": "NS"}}}),
        extra,
    )
}

/// A storage class `NS`, with `extra` merged in.
fn class(extra: Value) -> Value {
    merged(
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "NS"}, "provisioner": "example.com/csi"}),
        extra,
    )
}

/// The status a kubelet reports when it registers its node.
fn kubelet_status() -> Value {
    json!({
        "capacity": {"cpu": "4", "memory": "16374624Ki", "pods": "110",
                     "ephemeral-storage": "101430960Ki", "hugepages-2Mi": "0"},
        "allocatable": {"cpu": "3800m", "memory": "15223648Ki", "pods": "110",
                        "ephemeral-storage": "93478772582", "hugepages-2Mi": "0"},
        "conditions": [
            {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
             "message": "kubelet has sufficient memory available",
             "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
             "message": "container runtime network not ready",
             "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"}
        ],
        "addresses": [{"type": "InternalIP", "address": "10.128.0.7"},
                      {"type": "Hostname", "address": "NS"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"machineID": "ec2a6f0d", "systemUUID": "ec2a6f0d-1", "bootID": "b1",
                     "kernelVersion": "6.8.0-1015-gcp", "osImage": "Ubuntu 24.04.1 LTS",
                     "containerRuntimeVersion": "containerd://1.7.22", "kubeletVersion": "v1.34.12",
                     "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}
    })
}

fn claim_cases(add: &mut impl FnMut(&str, Vec<Step>)) {
    add(
        "pvc: create and read back defaults",
        vec![post(CLAIMS, claim(json!({}))), get(CLAIM)],
    );
    for (label, body) in [
        (
            "pvc: chart claim",
            claim(
                json!({"metadata": {"labels": {"app.kubernetes.io/name": "gitea"},
                "annotations": {"helm.sh/resource-policy": "keep"}},
                "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "nfs-client",
                         "volumeMode": "Filesystem",
                         "selector": {"matchLabels": {"tier": "shared"}},
                         "resources": {"requests": {"storage": "10Gi"}, "limits": {"storage": "20Gi"}}}}),
            ),
        ),
        (
            "pvc: access modes required",
            claim(json!({"spec": {"accessModes": []}})),
        ),
        (
            "pvc: unsupported access mode",
            claim(json!({"spec": {"accessModes": ["ReadWriteSometimes"]}})),
        ),
        (
            "pvc: ReadWriteOncePod with another mode",
            claim(json!({"spec": {"accessModes": ["ReadWriteOncePod", "ReadOnlyMany"]}})),
        ),
        (
            "pvc: storage request required",
            claim(json!({"spec": {"resources": {"requests": null}}})),
        ),
        (
            "pvc: storage request zero",
            claim(json!({"spec": {"resources": {"requests": {"storage": "0"}}}})),
        ),
        (
            "pvc: invalid class and volume mode",
            claim(json!({"spec": {"storageClassName": "Fast_SSD", "volumeMode": "Raw"}})),
        ),
        (
            "pvc: selector with an invalid label",
            claim(json!({"spec": {"selector": {"matchLabels": {"tier": "-bad-"}}}})),
        ),
        (
            "pvc: clone of a claim",
            claim(
                json!({"spec": {"dataSource": {"kind": "PersistentVolumeClaim", "name": "src"}}}),
            ),
        ),
        (
            "pvc: restore from a snapshot",
            claim(
                json!({"spec": {"dataSourceRef": {"apiGroup": "snapshot.storage.k8s.io",
                "kind": "VolumeSnapshot", "name": "nightly", "namespace": "other"}}}),
            ),
        ),
        (
            "pvc: data source of another kind dropped",
            claim(
                json!({"spec": {"dataSource": {"apiGroup": "example.com", "kind": "Seed", "name": "s"}}}),
            ),
        ),
    ] {
        add(label, vec![post(CLAIMS, body)]);
    }
    add(
        "pvc: data source rules",
        vec![
            post(
                CLAIMS,
                claim(
                    json!({"spec": {"dataSourceRef": {"apiGroup": "Bad_Group", "kind": "", "name": ""}}}),
                ),
            ),
            post(
                CLAIMS,
                claim(json!({"spec": {"dataSourceRef": {"kind": "Seed", "name": "s"}}})),
            ),
            post(
                CLAIMS,
                claim(
                    json!({"spec": {"dataSource": {"kind": "PersistentVolumeClaim", "name": "a"},
                    "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "b"}}}),
                ),
            ),
        ],
    );
    add(
        "pvc: fractional request warns",
        vec![post(
            CLAIMS,
            claim(json!({"spec": {"resources": {"requests": {"storage": "1.5"}}}})),
        )],
    );
    add(
        "pvc: beta class annotation warns",
        vec![post(
            CLAIMS,
            claim(
                json!({"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "slow"}}}),
            ),
        )],
    );
    add(
        "pvc: update of a claim with the beta annotation warns",
        vec![
            post(
                CLAIMS,
                claim(
                    json!({"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "slow"}}}),
                ),
            ),
            merge_patch(CLAIM, json!({"metadata": {"labels": {"a": "b"}}})),
            status_patch(CLAIM, json!({"status": {"phase": "Lost"}})),
        ],
    );
    for (label, body) in [
        (
            "pvc: spec immutable",
            json!({"spec": {"accessModes": ["ReadWriteMany"]}}),
        ),
        (
            "pvc: unbound request increase refused",
            json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}}),
        ),
        (
            "pvc: volume mode immutable",
            json!({"spec": {"volumeMode": "Block"}}),
        ),
    ] {
        add(
            label,
            vec![post(CLAIMS, claim(json!({}))), merge_patch(CLAIM, body)],
        );
    }
    add(
        "pvc: volume name and class set once",
        vec![
            post(CLAIMS, claim(json!({}))),
            merge_patch(
                CLAIM,
                json!({"spec": {"volumeName": "pv-1", "storageClassName": "standard"}}),
            ),
            merge_patch(CLAIM, json!({"spec": {"storageClassName": "fast"}})),
        ],
    );
    add(
        "pvc: status write keeps spec",
        vec![
            post(CLAIMS, claim(json!({}))),
            status_patch(
                CLAIM,
                json!({"spec": {"accessModes": ["ReadWriteMany"]},
                       "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                  "capacity": {"storage": "1Gi"}}}),
            ),
        ],
    );
    add(
        "pvc: main write keeps status",
        vec![
            post(CLAIMS, claim(json!({}))),
            merge_patch(
                CLAIM,
                json!({"metadata": {"labels": {"a": "b"}}, "status": {"phase": "Lost"}}),
            ),
        ],
    );
    add(
        "pvc: bound claim shrinks below capacity",
        vec![
            post(
                CLAIMS,
                claim(json!({"spec": {"resources": {"requests": {"storage": "10Gi"}}}})),
            ),
            status_patch(
                CLAIM,
                json!({"status": {"phase": "Bound", "capacity": {"storage": "10Gi"}}}),
            ),
            merge_patch(
                CLAIM,
                json!({"spec": {"resources": {"requests": {"storage": "5Gi"}}}}),
            ),
        ],
    );
    add(
        "pvc: status capacity negative",
        vec![
            post(CLAIMS, claim(json!({}))),
            status_patch(CLAIM, json!({"status": {"capacity": {"storage": "-1"}}})),
        ],
    );
    add(
        "pvc: table of a bound claim",
        vec![
            post(
                CLAIMS,
                claim(json!({"spec": {"volumeName": "pv-9", "storageClassName": "standard"}})),
            ),
            status_patch(
                CLAIM,
                json!({"status": {"phase": "Bound", "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                                  "capacity": {"storage": "8Gi"}}}),
            ),
            table(CLAIMS),
        ],
    );
    add(
        "pvc: table of a pending claim",
        vec![post(CLAIMS, claim(json!({}))), table(CLAIM)],
    );
    add(
        "pvc: delete leaves it terminating",
        vec![post(CLAIMS, claim(json!({}))), delete(CLAIM), table(CLAIM)],
    );
    add(
        "pvc: field selectors",
        vec![
            post(CLAIMS, claim(json!({}))),
            get(format!("{CLAIMS}?fieldSelector=metadata.name%3Dc")),
            get(format!("{CLAIMS}?fieldSelector=spec.volumeName%3Dx")),
        ],
    );
    add(
        "pvc: server-side apply",
        vec![
            patch(
                format!("{CLAIM}?fieldManager=helm"),
                APPLY,
                claim(json!({"metadata": {"labels": {"app": "db"}}})),
            ),
            patch(
                format!("{CLAIM}?fieldManager=ops"),
                APPLY,
                json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": {"name": "c", "labels": {"team": "data"}}}),
            ),
        ],
    );
    add(
        "pvc: strategic merge of labels and finalizers",
        vec![
            post(CLAIMS, claim(json!({}))),
            patch(
                CLAIM,
                SMP,
                json!({"metadata": {"labels": {"a": "b"}, "finalizers": ["example.com/keep"]}}),
            ),
        ],
    );
}

fn volume_cases(add: &mut impl FnMut(&str, Vec<Step>)) {
    add(
        "pv: hostPath defaults",
        vec![post(VOLUMES, volume(json!({}))), get(VOLUME)],
    );
    for (label, body) in [
        (
            "pv: nfs volume",
            volume(
                json!({"spec": {"hostPath": null, "nfs": {"server": "nfs.example.com", "path": "/exports/NS"},
                "mountOptions": ["nfsvers=4.1", "hard"], "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": "nfs", "accessModes": ["ReadWriteMany"],
                "claimRef": {"namespace": "NS", "name": "data"}}}),
            ),
        ),
        (
            "pv: csi volume",
            volume(
                json!({"spec": {"hostPath": null, "csi": {"driver": "ebs.csi.aws.com",
                "volumeHandle": "vol-0a1b2c3d4e5f", "fsType": "ext4",
                "volumeAttributes": {"storage.kubernetes.io/csiProvisionerIdentity": "1700000000000-8081-ebs.csi.aws.com"}},
                "storageClassName": "gp3", "volumeMode": "Block"}}),
            ),
        ),
        (
            "pv: local volume with node affinity",
            volume(
                json!({"spec": {"hostPath": null, "local": {"path": "/mnt/disks/ssd1"},
                "storageClassName": "local-storage",
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}}}),
            ),
        ),
        (
            "pv: local volume without node affinity",
            volume(json!({"spec": {"hostPath": null, "local": {"path": "/mnt/disks/ssd1"}}})),
        ),
        (
            "pv: node affinity rules",
            volume(
                json!({"spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]},
                                      {"key": "rack", "operator": "Exists", "values": ["x"]}],
                 "matchFields": [{"key": "spec.nodeName", "operator": "In", "values": ["n"]}]}]}}}}),
            ),
        ),
        (
            "pv: no volume source",
            volume(json!({"spec": {"hostPath": null}})),
        ),
        (
            "pv: two volume sources",
            volume(json!({"spec": {"nfs": {"server": "s", "path": "/x"}}})),
        ),
    ] {
        add(label, vec![post(VOLUMES, body)]);
    }
    add(
        "pv: capacity rules",
        vec![
            post(VOLUMES, volume(json!({"spec": {"capacity": null}}))),
            post(
                VOLUMES,
                volume(json!({"spec": {"capacity": {"storage": "0", "cpu": "1"}}})),
            ),
        ],
    );
    add(
        "pv: access modes and reclaim policy",
        vec![post(
            VOLUMES,
            volume(
                json!({"spec": {"accessModes": ["ReadWriteOnce", "ReadWriteOncePod", "Shared"],
                "persistentVolumeReclaimPolicy": "Keep"}}),
            ),
        )],
    );
    add(
        "pv: source rules",
        vec![
            post(
                VOLUMES,
                volume(
                    json!({"spec": {"hostPath": null, "nfs": {"server": "", "path": "exports"}}}),
                ),
            ),
            post(
                VOLUMES,
                volume(
                    json!({"spec": {"hostPath": null, "csi": {"driver": "", "volumeHandle": ""}}}),
                ),
            ),
            post(
                VOLUMES,
                volume(json!({"spec": {"hostPath": {"path": "/a/../b", "type": "Pipe"}}})),
            ),
        ],
    );
    add(
        "pv: recycle warns",
        vec![post(
            VOLUMES,
            volume(json!({"spec": {"persistentVolumeReclaimPolicy": "Recycle"}})),
        )],
    );
    for (label, body) in [
        (
            "pv: source immutable",
            json!({"spec": {"hostPath": {"path": "/data/other"}}}),
        ),
        (
            "pv: volume mode immutable",
            json!({"spec": {"volumeMode": "Block"}}),
        ),
        (
            "pv: policy and claim updates",
            json!({"spec": {"persistentVolumeReclaimPolicy": "Delete",
                    "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "NS", "name": "data"}}}),
        ),
    ] {
        add(
            label,
            vec![post(VOLUMES, volume(json!({}))), merge_patch(VOLUME, body)],
        );
    }
    add(
        "pv: status write keeps spec",
        vec![
            post(VOLUMES, volume(json!({}))),
            status_patch(
                VOLUME,
                json!({"spec": {"accessModes": ["ReadWriteMany"]},
                       "status": {"phase": "Available", "message": "ready"}}),
            ),
        ],
    );
    add(
        "pv: update of a recycled volume warns",
        vec![
            post(
                VOLUMES,
                volume(json!({"spec": {"persistentVolumeReclaimPolicy": "Recycle"}})),
            ),
            merge_patch(VOLUME, json!({"metadata": {"labels": {"a": "b"}}})),
        ],
    );
    add(
        "pv: main write keeps status",
        vec![
            post(VOLUMES, volume(json!({}))),
            merge_patch(
                VOLUME,
                json!({"metadata": {"labels": {"a": "b"}}, "status": {"phase": "Failed"}}),
            ),
        ],
    );
    add(
        "pv: table",
        vec![
            post(
                VOLUMES,
                volume(
                    json!({"spec": {"storageClassName": "manual", "accessModes": ["ReadWriteMany", "ReadOnlyMany"],
                    "claimRef": {"namespace": "NS", "name": "data"}}}),
                ),
            ),
            status_patch(
                VOLUME,
                json!({"status": {"phase": "Released", "reason": "ClaimDeleted"}}),
            ),
            table(VOLUME),
        ],
    );
    add(
        "pv: field selectors",
        vec![
            post(VOLUMES, volume(json!({}))),
            get(format!("{VOLUMES}?fieldSelector=metadata.name%3DNS")),
            get(format!("{VOLUMES}?fieldSelector=metadata.namespace%3DNS")),
        ],
    );
    add(
        "pv: delete leaves it terminating",
        vec![
            post(VOLUMES, volume(json!({}))),
            delete(VOLUME),
            table(VOLUME),
        ],
    );
    add(
        "pv: server-side apply",
        vec![patch(
            format!("{VOLUME}?fieldManager=provisioner"),
            APPLY,
            volume(json!({"metadata": {"labels": {"topology.kubernetes.io/zone": "us-east-1a"}}})),
        )],
    );
}

fn node_cases(add: &mut impl FnMut(&str, Vec<Step>)) {
    add(
        "node: create adds the not-ready taint",
        vec![post(NODES, node(json!({}))), get(NODE)],
    );
    add(
        "node: kubelet registration",
        vec![post(
            NODES,
            node(
                json!({"metadata": {"labels": {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": "e2-standard-4"},
                "annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
                "spec": {"providerID": "gce://proj/us-central1-a/NS"},
                "status": kubelet_status()}),
            ),
        )],
    );
    add(
        "node: allocatable defaults to capacity",
        vec![post(
            NODES,
            node(json!({"status": {"capacity": {"cpu": "2", "memory": "4096Mi", "pods": "110"}}})),
        )],
    );
    add(
        "node: kubelet status patch",
        vec![
            post(NODES, node(json!({"status": kubelet_status()}))),
            patch(
                format!("{NODE}/status"),
                SMP,
                json!({"status": {"$setElementOrder/conditions": [{"type": "MemoryPressure"}, {"type": "Ready"}],
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "kubelet is posting ready status",
                        "lastHeartbeatTime": "2026-01-01T00:01:00Z", "lastTransitionTime": "2026-01-01T00:01:00Z"}]}}),
            )
            .header("User-Agent", "kubelet/v1.34.12 (linux/amd64) kubernetes/abcdef"),
        ],
    );
    add(
        "node: main write keeps status",
        vec![
            post(NODES, node(json!({"status": kubelet_status()}))),
            merge_patch(
                NODE,
                json!({"spec": {"unschedulable": true}, "status": {"phase": "Running"}}),
            ),
        ],
    );
    add(
        "node: status write keeps spec",
        vec![
            post(NODES, node(json!({}))),
            status_patch(
                NODE,
                json!({"spec": {"unschedulable": true},
                       "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.9"}]}}),
            ),
        ],
    );
    add(
        "node: taint rules",
        vec![post(
            NODES,
            node(json!({"spec": {"taints": [
                {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                {"key": "bad key", "effect": "NoExecute"},
                {"key": "x", "value": "-v-", "effect": ""},
                {"key": "y", "effect": "Never"},
                {"key": "dedicated", "value": "other", "effect": "NoSchedule"}]}})),
        )],
    );
    add(
        "node: taints on update reported twice",
        vec![
            post(NODES, node(json!({}))),
            merge_patch(
                NODE,
                json!({"spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}}),
            ),
        ],
    );
    add(
        "node: cordon and taint",
        vec![
            post(NODES, node(json!({}))),
            patch(
                NODE,
                SMP,
                json!({"spec": {"unschedulable": true, "taints": [
                    {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                     "timeAdded": "2026-01-01T00:00:00Z"}]}}),
            ),
        ],
    );
    add(
        "node: pod CIDRs",
        vec![
            post(
                NODES,
                node(
                    json!({"spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24", "fd00:10:244:1::/64"]}}),
                ),
            ),
            merge_patch(
                NODE,
                json!({"spec": {"podCIDR": "10.244.2.0/24", "podCIDRs": ["10.244.2.0/24", "fd00:10:244:1::/64"]}}),
            ),
        ],
    );
    add(
        "node: invalid pod CIDRs",
        vec![
            post(
                NODES,
                node(json!({"spec": {"podCIDRs": ["10.244.1.0/33"]}})),
            ),
            post(
                NODES,
                node(json!({"spec": {"podCIDRs": ["10.244.1.0/24", "10.244.2.0/24"]}})),
            ),
        ],
    );
    add(
        "node: provider ID set once",
        vec![
            post(NODES, node(json!({}))),
            merge_patch(
                NODE,
                json!({"spec": {"providerID": "aws:///us-east-1a/i-1"}}),
            ),
            merge_patch(
                NODE,
                json!({"spec": {"providerID": "aws:///us-east-1a/i-2"}}),
            ),
        ],
    );
    add(
        "node: external ID warns and is immutable",
        vec![
            post(NODES, node(json!({"spec": {"externalID": "i-1"}}))),
            merge_patch(NODE, json!({"metadata": {"labels": {"a": "b"}}})),
            status_patch(NODE, json!({"status": {"phase": "Running"}})),
            merge_patch(NODE, json!({"spec": {"externalID": "i-2"}})),
        ],
    );
    add(
        "node: resource quantities",
        // One bad quantity per list: upstream walks the lists in Go's random map order.
        vec![
            post(
                NODES,
                node(json!({"status": {"capacity": {"cpu": "-1", "memory": "1Gi"}}})),
            ),
            post(
                NODES,
                node(json!({"status": {"capacity": {"pods": "1500m"}}})),
            ),
        ],
    );
    add(
        "node: duplicate addresses",
        vec![
            post(NODES, node(json!({}))),
            status_patch(
                NODE,
                json!({"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"},
                                                {"type": "InternalIP", "address": "10.0.0.1"}]}}),
            ),
        ],
    );
    add(
        "node: table",
        vec![
            post(
                NODES,
                node(
                    json!({"metadata": {"labels": {"node-role.kubernetes.io/control-plane": "",
                    "node-role.kubernetes.io/worker": "", "kubernetes.io/role": "infra"}},
                    "spec": {"unschedulable": true}, "status": kubelet_status()}),
                ),
            ),
            table(NODE),
        ],
    );
    add(
        "node: table of a bare node",
        vec![post(NODES, node(json!({}))), table(NODE)],
    );
    add(
        "node: field selectors",
        vec![
            post(NODES, node(json!({"spec": {"unschedulable": true}}))),
            get(format!(
                "{NODES}?fieldSelector=metadata.name%3DNS,spec.unschedulable%3Dtrue"
            )),
            get(format!(
                "{NODES}?fieldSelector=metadata.name%3DNS,spec.unschedulable%3Dfalse"
            )),
            get(format!("{NODES}?fieldSelector=metadata.namespace%3DNS")),
            get(format!("{NODES}?fieldSelector=status.phase%3DRunning")),
        ],
    );
    add(
        "node: server-side apply",
        vec![
            patch(
                format!("{NODE}?fieldManager=kubelet"),
                APPLY,
                node(json!({"metadata": {"labels": {"kubernetes.io/os": "linux"}}})),
            ),
            patch(
                format!("{NODE}?fieldManager=kubectl"),
                APPLY,
                json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "NS"},
                       "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}}),
            ),
        ],
    );
    add(
        "node: kubelet status put",
        vec![
            post(NODES, node(json!({}))).remember("$RV", "/metadata/resourceVersion"),
            put(
                format!("{NODE}/status"),
                node(
                    json!({"metadata": {"resourceVersion": "$RV"}, "spec": {"unschedulable": true},
                    "status": kubelet_status()}),
                ),
            ),
            get(NODE),
        ],
    );
    add(
        "node: status server-side apply",
        vec![
            post(NODES, node(json!({}))),
            patch(
                format!("{NODE}/status?fieldManager=kubelet&force=true"),
                APPLY,
                json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "NS"},
                       "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                           "message": "kubelet is posting ready status",
                           "lastHeartbeatTime": "2026-01-01T00:01:00Z",
                           "lastTransitionTime": "2026-01-01T00:01:00Z"}],
                           "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}),
            ),
        ],
    );
    add(
        "node: label selector list",
        vec![
            post(NODES, node(json!({"metadata": {"labels": {"pool": "NS"}}}))),
            get(format!("{NODES}?labelSelector=pool%3DNS")),
            table(format!("{NODES}?labelSelector=pool%3DNS")),
        ],
    );
    add(
        "node: delete",
        vec![post(NODES, node(json!({}))), delete(NODE), get(NODE)],
    );
    add(
        "node: put replaces spec",
        vec![
            post(NODES, node(json!({"status": kubelet_status()}))),
            put(NODE, node(json!({"spec": {"unschedulable": true}}))),
        ],
    );
}

fn class_cases(add: &mut impl FnMut(&str, Vec<Step>)) {
    add(
        "storageclass: create and read back defaults",
        vec![post(CLASSES, class(json!({}))), get(CLASS)],
    );
    for (label, body) in [
        (
            "storageclass: cloud class",
            class(json!({"provisioner": "ebs.csi.aws.com",
                "parameters": {"type": "gp3", "iops": "3000", "encrypted": "true",
                               "csi.storage.k8s.io/fstype": "ext4"},
                "reclaimPolicy": "Retain", "allowVolumeExpansion": true,
                "volumeBindingMode": "WaitForFirstConsumer", "mountOptions": ["debug"],
                "allowedTopologies": [{"matchLabelExpressions": [
                    {"key": "topology.ebs.csi.aws.com/zone", "values": ["us-east-1a"]}]}]})),
        ),
        (
            "storageclass: provisioner required",
            class(json!({"provisioner": null})),
        ),
        (
            "storageclass: invalid provisioner",
            class(json!({"provisioner": "not a/valid/name"})),
        ),
        (
            "storageclass: unsupported policies",
            class(json!({"reclaimPolicy": "Recycle", "volumeBindingMode": "Later"})),
        ),
        (
            "storageclass: empty parameter key",
            class(json!({"parameters": {"": "x"}})),
        ),
        (
            "storageclass: invalid name",
            class(json!({"metadata": {"name": "Fast_SSD"}})),
        ),
    ] {
        add(label, vec![post(CLASSES, body)]);
    }
    add(
        "storageclass: immutable fields",
        vec![
            post(CLASSES, class(json!({"parameters": {"type": "gp2"}}))),
            merge_patch(
                CLASS,
                json!({"provisioner": "other.example.com", "parameters": {"type": "gp3"},
                       "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"}),
            ),
        ],
    );
    add(
        "storageclass: expansion and labels may change",
        vec![
            post(CLASSES, class(json!({}))),
            merge_patch(
                CLASS,
                json!({"allowVolumeExpansion": true, "metadata": {"labels": {"tier": "fast"}}}),
            ),
            table(CLASS),
        ],
    );
    add(
        "storageclass: server-side apply",
        vec![patch(
            format!("{CLASS}?fieldManager=helm"),
            APPLY,
            class(json!({"parameters": {"type": "pd-ssd"}, "mountOptions": ["discard"]})),
        )],
    );
    add(
        "storageclass: default class table and claims",
        vec![
            post(
                CLASSES,
                class(
                    json!({"metadata": {"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                    "volumeBindingMode": "WaitForFirstConsumer"}),
                ),
            ),
            table(CLASS),
            // DefaultStorageClass gives a claim without a class the default one.
            post(CLAIMS, claim(json!({}))),
            post(
                CLAIMS,
                claim(json!({"metadata": {"name": "none"}, "spec": {"storageClassName": ""}})),
            ),
            delete(CLASS),
        ],
    );
}

/// The cases.
pub(crate) fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |name: &str, steps: Vec<Step>| cases.push(Case::new(name, steps));
    claim_cases(&mut add);
    volume_cases(&mut add);
    node_cases(&mut add);
    class_cases(&mut add);
    cases
}
