//! A simulated cluster behind the embedded server: kube-controller-manager's workload
//! controllers, a scheduler and a kubelet, on the server's clock, so that the Deployments, Jobs
//! and Services an operator owns behave as a cluster would make them behave.
//!
//! Turned on with [`ApiServerBuilder::workloads`](crate::ApiServerBuilder::workloads) (or
//! [`ClusterBuilder::workloads`](crate::ClusterBuilder::workloads), which on the real tier
//! starts kube-controller-manager with all its controllers, kube-scheduler and KWOK instead):
//!
//! ```no_run
//! # async fn f() -> Result<(), kubeward_testing::ServerError> {
//! use kubeward_testing::{ApiServer, PodFault, WorkerNode, Workloads};
//!
//! let server = ApiServer::builder()
//!     .workloads(
//!         Workloads::new()
//!             .node(WorkerNode::new("worker-1").cpu("4").memory("16Gi"))
//!             .node(WorkerNode::new("worker-2").label("disk", "ssd"))
//!             .fault(PodFault::image_pull("registry.example/broken:*")),
//!     )
//!     .start()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! Every part runs in one background task of the server that follows the store's changes, as
//! the controllers follow their informers, and wakes at the times their rules name (a readiness
//! probe's initial delay, a progress deadline, a back-off, a CronJob's schedule) on the server's
//! [`Clock`](kubeward_names::clock::Clock): with a
//! [`ManualClock`](kubeward_names::clock::ManualClock), a test moves time past a deadline
//! instead of waiting for it (the task looks at the clock every 20 ms while a timer is pending).
//! Their writes go through the registry (validation, `managedFields` under
//! `kube-controller-manager`, `kube-scheduler` and `kubelet`), so watches see what a cluster
//! sends. Each part brings one object at a time to its desired state from what is stored, as
//! kube-controller-manager's controllers do; their modules cite the upstream files they port.
//!
//! | part | upstream | what it does here |
//! |---|---|---|
//! | deployment, replicaset | `pkg/controller/deployment`, `replicaset` | a ReplicaSet per pod-template hash, rolling update (`maxSurge`/`maxUnavailable`), `Recreate`, pause, progress deadline, revision history, the `Available`/`Progressing` reasons |
//! | statefulset, daemonset | `statefulset`, `daemon`, `history` | ordinals in order or in parallel, claims from templates, partitions, `OnDelete`; a pod per fitting node; ControllerRevisions |
//! | job, cronjob, ttl-after-finished | `job`, `cronjob`, `ttlafterfinished` | completions, parallelism, indexes, back-off limit, deadlines, suspend, the 1.34 conditions; schedules on the clock; finished Jobs deleted |
//! | endpoints, endpointslice | `endpoint`, `endpointslice` | ready and not-ready addresses from the pods a Service selects, named target ports |
//! | volumes | `volume/persistentvolume`, `pvcprotection`, `pvprotection` | claims bound to fitting volumes or provisioned for their class (`Immediate` and `WaitForFirstConsumer`), reclaim, protection finalizers |
//! | service accounts, node lifecycle, taint eviction, pod GC | `serviceaccount`, `nodelifecycle`, `tainteviction`, `podgc` | `default` accounts; condition taints; pods evicted after their toleration; orphaned and out-of-service pods removed |
//! | scheduler | `pkg/scheduler/framework/plugins` | node name, unschedulable, taints, node selector and affinity, resources, `VolumeBinding`'s claims; least allocated |
//! | kubelet | `pkg/kubelet` | node registration; pods through `ContainerCreating`, `Running`, readiness after the probe's delay, `Succeeded`; init containers, readiness gates; the [`PodFault`]s; [`ApiServer::set_node_ready`](crate::ApiServer::set_node_ready) |
//!
//! What is not simulated: pod-template hashes and ControllerRevision names are FNV hashes of
//! the JSON (upstream hashes a dump of the Go struct, so names differ from a cluster's); the
//! controllers see their own writes at once (no informer lag, no expectations); a container
//! runtime that takes no time (pulls, starts and kills are instant, back-offs exact); no node
//! heartbeats or Leases; selectors that overlap across controllers; each module lists its own
//! omissions.

mod context;
mod cron_job;
mod daemon_set;
mod deployment;
mod endpoint_slice;
mod endpoints;
mod history;
mod job;
mod kubelet;
mod node_lifecycle;
mod pod_gc;
mod provisioner;
mod replica_set;
mod run;
mod scheduler;
mod service_accounts;
mod stateful_set;
mod taint_eviction;
mod ttl_after_finished;
mod volume_protection;
mod volumes;

use std::collections::BTreeMap;

pub(crate) use context::Ctx;
/// The `Node` a kubelet registers (also created for the real tier's KWOK nodes).
pub(crate) use kubelet::{node_conditions, node_object, pull_error};
pub(crate) use run::{Controller, Keys, Simulation, start};

/// Every control loop of the simulated cluster, in the order a batch syncs them: the
/// controllers that create objects before those that place and run them.
fn controllers() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(service_accounts::ServiceAccounts),
        Box::new(kubelet::NodeStatus),
        Box::new(node_lifecycle::NodeLifecycle),
        Box::new(taint_eviction::TaintEviction::default()),
        Box::new(pod_gc::PodGc::default()),
        Box::new(deployment::Deployments),
        Box::new(replica_set::ReplicaSets),
        Box::new(endpoints::Endpoints::default()),
        Box::new(endpoint_slice::EndpointSlices::default()),
        Box::new(volumes::ClaimBinder),
        Box::new(volumes::VolumeBinder),
        Box::new(provisioner::Provisioner),
        Box::new(volume_protection::ClaimProtection),
        Box::new(volume_protection::VolumeProtection),
        Box::new(stateful_set::StatefulSets),
        Box::new(daemon_set::DaemonSets),
        Box::new(cron_job::CronJobs),
        Box::new(job::JobController::default()),
        Box::new(ttl_after_finished::TtlAfterFinished),
        Box::new(scheduler::Scheduler::default()),
        Box::new(kubelet::Kubelets::default()),
    ]
}

/// The simulated cluster's declaration: its nodes and the faults its kubelet plays.
#[derive(Debug, Clone, Default)]
pub struct Workloads {
    pub(crate) nodes: Vec<WorkerNode>,
    pub(crate) faults: Vec<PodFault>,
    /// Which kubelets are stopped (fresh for each server, see [`run::start`]).
    pub(crate) kubelets: kubelet::KubeletSwitch,
}

impl Workloads {
    /// A cluster with no nodes yet (pods stay `Pending`, `Unschedulable`, until one is
    /// declared).
    pub fn new() -> Self {
        Self::default()
    }

    /// A cluster of `count` nodes `worker-1` … `worker-<count>`, each [`WorkerNode::new`]'s
    /// defaults.
    pub fn with_nodes(count: usize) -> Self {
        (1..=count).fold(Self::new(), |w, i| {
            w.node(WorkerNode::new(format!("worker-{i}")))
        })
    }

    /// Declares a node: its kubelet registers it (a `Node` with its capacity, labels, taints and
    /// `Ready` condition) when the server starts.
    #[must_use]
    pub fn node(mut self, node: WorkerNode) -> Self {
        self.nodes.push(node);
        self
    }

    /// A fault the kubelet plays for the containers whose image matches.
    #[must_use]
    pub fn fault(mut self, fault: PodFault) -> Self {
        self.faults.push(fault);
        self
    }

    /// The fault of the first declared pattern that matches `image`.
    pub(crate) fn fault_for(&self, image: &str) -> Option<&PodFault> {
        self.faults.iter().find(|f| glob_match(&f.image, image))
    }
}

/// A node of the simulated cluster, as its kubelet registers it.
#[derive(Debug, Clone)]
pub struct WorkerNode {
    pub(crate) name: String,
    pub(crate) cpu: String,
    pub(crate) memory: String,
    pub(crate) pods: u32,
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) taints: Vec<serde_json::Value>,
    pub(crate) ready: bool,
}

impl WorkerNode {
    /// A `Ready` node of 4 CPUs, 16 GiB and 110 pods (a kind node's defaults), labelled
    /// `kubernetes.io/hostname`, `kubernetes.io/os: linux` and `kubernetes.io/arch: amd64`.
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        let labels = BTreeMap::from([
            ("kubernetes.io/arch".to_string(), "amd64".to_string()),
            ("kubernetes.io/hostname".to_string(), name.clone()),
            ("kubernetes.io/os".to_string(), "linux".to_string()),
        ]);
        Self {
            name,
            cpu: "4".into(),
            memory: "16Gi".into(),
            pods: 110,
            labels,
            taints: Vec::new(),
            ready: true,
        }
    }

    /// The CPU capacity, a quantity (`"4"`, `"3500m"`).
    #[must_use]
    pub fn cpu(mut self, quantity: impl Into<String>) -> Self {
        self.cpu = quantity.into();
        self
    }

    /// The memory capacity, a quantity (`"16Gi"`).
    #[must_use]
    pub fn memory(mut self, quantity: impl Into<String>) -> Self {
        self.memory = quantity.into();
        self
    }

    /// How many pods fit.
    #[must_use]
    pub fn pods(mut self, count: u32) -> Self {
        self.pods = count;
        self
    }

    /// A label (for `nodeSelector` and node affinity).
    #[must_use]
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// A taint; `effect` is `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    #[must_use]
    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        let mut taint = serde_json::json!({"key": key, "effect": effect});
        if !value.is_empty() {
            taint["value"] = value.into();
        }
        self.taints.push(taint);
        self
    }

    /// Registers the node `NotReady` (its kubelet posts no ready status).
    #[must_use]
    pub fn not_ready(mut self) -> Self {
        self.ready = false;
        self
    }
}

/// What the kubelet does wrong for containers whose image matches a pattern (`*` matches any
/// run of characters: `"registry.example/broken:*"`). Every kind plays on both backends; on
/// the real tier (KWOK) the image must be exact, no `*`.
#[derive(Debug, Clone)]
pub struct PodFault {
    pub(crate) image: String,
    pub(crate) kind: FaultKind,
}

/// The faults a kubelet plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FaultKind {
    /// The image does not pull: `ErrImagePull`, then `ImagePullBackOff`.
    ImagePull,
    /// The container exits 1 each time it starts: `Error`, then `CrashLoopBackOff`, its
    /// restart count growing (for `restartPolicy: Never` the pod fails).
    CrashLoop,
    /// The container runs but its readiness probe never passes.
    NeverReady,
    /// The container is killed for memory: `OOMKilled`, exit code 137.
    OomKilled,
}

impl PodFault {
    /// The image does not pull (`ErrImagePull` → `ImagePullBackOff`).
    pub fn image_pull(image: impl Into<String>) -> Self {
        Self::new(image, FaultKind::ImagePull)
    }

    /// The container exits with code 1 whenever it starts (`CrashLoopBackOff`).
    pub fn crash_loop(image: impl Into<String>) -> Self {
        Self::new(image, FaultKind::CrashLoop)
    }

    /// The container runs but never becomes ready.
    pub fn never_ready(image: impl Into<String>) -> Self {
        Self::new(image, FaultKind::NeverReady)
    }

    /// The container is `OOMKilled` (exit code 137) whenever it starts.
    pub fn oom_killed(image: impl Into<String>) -> Self {
        Self::new(image, FaultKind::OomKilled)
    }

    fn new(image: impl Into<String>, kind: FaultKind) -> Self {
        Self {
            image: image.into(),
            kind,
        }
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_patterns_match_as_globs() {
        assert!(glob_match("nginx:1.27", "nginx:1.27"));
        assert!(!glob_match("nginx:1.27", "nginx:1.28"));
        assert!(glob_match(
            "registry.example/broken:*",
            "registry.example/broken:v2"
        ));
        assert!(!glob_match(
            "registry.example/broken:*",
            "registry.example/ok:v2"
        ));
        assert!(glob_match("*", ""));
        assert!(glob_match("*:bad", "nginx:bad"));
        assert!(!glob_match("*:bad", "nginx:bad2"));
        assert!(glob_match("a*b*c", "a-b-c"));
        assert!(!glob_match("a*b*c", "a-c-b"));
        assert!(!glob_match("ab*ba", "aba"));
    }

    #[test]
    fn declared_nodes_and_faults_are_kept_in_order() {
        let w = Workloads::with_nodes(2)
            .fault(PodFault::crash_loop("app:*"))
            .fault(PodFault::image_pull("*"));
        let names: Vec<_> = w.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["worker-1", "worker-2"]);
        assert_eq!(
            w.fault_for("app:v1").map(|f| f.kind),
            Some(FaultKind::CrashLoop)
        );
        assert_eq!(
            w.fault_for("other").map(|f| f.kind),
            Some(FaultKind::ImagePull)
        );
    }
}
