//! A simulated cluster on the real tier: what [`crate::workloads`] plays on the embedded server,
//! played by Kubernetes' own components.
//!
//! - kube-controller-manager with `--controllers=*` (every controller on by default: the
//!   Deployment, ReplicaSet, Job, endpoints, service-account, node lifecycle controllers ...),
//!   each controller acting as its own service account (`--use-service-account-credentials`),
//!   with the keys and CA those need;
//! - kube-scheduler;
//! - KWOK as the kubelets of the declared [`WorkerNode`](crate::WorkerNode)s: it manages the
//!   Nodes annotated `kwok.x-k8s.io/node: fake` (the annotation the embedded kubelet's `Node`
//!   carries) and plays the Stages of [`super::kwok`] for them and their pods;
//! - the declared nodes, created through the API with the body the embedded kubelet registers;
//! - a node's kubelet stopped and started again ([`set_kubelet_running`]) through its Lease.
//!
//! Each is a [`Process`] of the control plane, waited for (kube-scheduler's `/healthz` on its
//! secure port, KWOK's `/healthz` on its server address). Start-up ends when the `default`
//! ServiceAccount of the `default` namespace exists, so that a test's first pod is admitted.

use std::path::Path;
use std::time::{Duration, Instant};

use super::assets::Assets;
use super::control_plane::{
    ControlPlane, arg, free_port, io_error, probe_client, self_signed_probe, write,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use super::process::Process;
use crate::ServerError;
use crate::auth::tls::Tls;
use crate::object::rfc3339;
use crate::workloads::{WorkerNode, Workloads, node_conditions, node_object};

/// The annotation selector of the Nodes KWOK manages.
const KWOK_NODES: &str = "kwok.x-k8s.io/node=fake";

/// How long the `default` ServiceAccount may take to appear.
const SERVICE_ACCOUNT_TIMEOUT: Duration = Duration::from_secs(30);

/// The holder of a stopped kubelet's node Lease: not KWOK, so KWOK leaves the node alone.
const STOPPED_KUBELET: &str = "kubeward-stopped-kubelet";

/// The annotation of a node whose kubelet is stopped: `testing/kwok/stages.yaml`'s heartbeat
/// stage selects only nodes without it.
const STOPPED_ANNOTATION: &str = "kubeward.dev/kubelet";

/// How long a stopped kubelet's Lease stays taken (KWOK takes an expired Lease back).
const STOPPED_FOR_SECONDS: i32 = 7 * 24 * 3600;

fn missing(binary: &str) -> ServerError {
    ServerError::ControlPlane(format!(
        "a simulated cluster (ClusterBuilder::workloads) needs {binary} in {}: run \
         scripts/kube-assets again (it builds kube-scheduler and kwok beside the control plane)",
        super::ASSETS_VARIABLE
    ))
}

impl ControlPlane {
    /// Starts the simulated cluster of `workloads` on the running kube-apiserver, KWOK
    /// playing `stages` ([`super::kwok::stages`]).
    pub(super) async fn start_simulation(
        &mut self,
        assets: &Assets,
        tls: &Tls,
        admin_token: &str,
        workloads: &Workloads,
        stages: &str,
    ) -> Result<(), ServerError> {
        let manager = assets
            .kube_controller_manager
            .as_ref()
            .ok_or_else(|| missing("kube-controller-manager"))?;
        let scheduler = assets
            .kube_scheduler
            .as_ref()
            .ok_or_else(|| missing("kube-scheduler"))?;
        let kwok = assets.kwok.as_ref().ok_or_else(|| missing("kwok"))?;
        let all = vec![
            arg("controllers", "*"),
            arg(
                "service-account-private-key-file",
                self.dir.join("sa.key").display(),
            ),
            arg(
                "root-ca-file",
                write(&self.dir, "ca.crt", &tls.ca_pem())?.display(),
            ),
            arg("use-service-account-credentials", true),
            // Each controller's client is built at start (its ServiceAccount, a token): about
            // a hundred requests, which the default 20 QPS stretches to 4-5 s before the
            // informers start.
            arg("kube-api-qps", 500),
            arg("kube-api-burst", 1000),
        ];
        self.start_controller_manager(manager, tls, admin_token, all)
            .await?;
        let kubeconfig = self.kubeconfig(tls, admin_token)?;

        self.start_scheduler(scheduler, &kubeconfig).await?;
        self.start_kwok(kwok, &kubeconfig, stages).await?;

        let admin = probe_client(
            &format!("https://{}", self.api),
            Some(tls),
            Some(admin_token),
        )?;
        self.register_nodes(&admin, workloads).await?;
        self.wait_for_default_service_account(&admin).await
    }

    /// Starts kube-scheduler, waited for (`/healthz` on its secure port).
    async fn start_scheduler(
        &mut self,
        binary: &Path,
        kubeconfig: &Path,
    ) -> Result<(), ServerError> {
        let port = free_port()?;
        let args = vec![
            arg("kubeconfig", kubeconfig.display()),
            arg("leader-elect", false),
            arg("bind-address", "127.0.0.1"),
            arg("secure-port", port),
        ];
        self.processes
            .push(Process::spawn("kube-scheduler", binary, &args, &self.dir)?);
        self.wait_ready("/healthz", &self_signed_probe(port)?).await
    }

    /// Starts KWOK playing `stages` for the annotated nodes, waited for (`/healthz` on its
    /// server address).
    async fn start_kwok(
        &mut self,
        binary: &Path,
        kubeconfig: &Path,
        stages: &str,
    ) -> Result<(), ServerError> {
        let server = format!("127.0.0.1:{}", free_port()?);
        let args = vec![
            arg("kubeconfig", kubeconfig.display()),
            arg("manage-all-nodes", false),
            arg("manage-nodes-with-annotation-selector", KWOK_NODES),
            arg("config", write(&self.dir, "stages.yaml", stages)?.display()),
            arg("server-address", &server),
            // Renews each node's Lease, as a kubelet does (the node lifecycle controller
            // reads it).
            arg("node-lease-duration-seconds", 40),
        ];
        self.processes
            .push(Process::spawn("kwok", binary, &args, &self.dir)?);
        let probe = probe_client(&format!("http://{server}"), None, None)?;
        self.wait_ready("/healthz", &probe).await
    }

    /// Creates the declared nodes as their kubelets register them.
    async fn register_nodes(
        &self,
        admin: &kube::Client,
        workloads: &Workloads,
    ) -> Result<(), ServerError> {
        let now = rfc3339(jiff::Timestamp::now());
        for (index, node) in workloads.nodes.iter().enumerate() {
            let body = serde_json::to_vec(&node_object(node, index, &now))
                .map_err(|e| ServerError::ControlPlane(format!("a Node body: {e}")))?;
            let request = http::Request::post("/api/v1/nodes")
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(body)
                .map_err(|e| ServerError::ControlPlane(e.to_string()))?;
            admin
                .request::<serde_json::Value>(request)
                .await
                .map_err(|e| {
                    ServerError::ControlPlane(format!("cannot create Node {}: {e}", node.name))
                })?;
        }
        Ok(())
    }

    /// Waits until the ServiceAccount controller created `default/default`.
    async fn wait_for_default_service_account(
        &mut self,
        admin: &kube::Client,
    ) -> Result<(), ServerError> {
        let deadline = Instant::now() + SERVICE_ACCOUNT_TIMEOUT;
        loop {
            let request = http::Request::get("/api/v1/namespaces/default/serviceaccounts/default")
                .body(Vec::new())
                .map_err(|e| ServerError::ControlPlane(e.to_string()))?;
            let last = match admin.request_text(request).await {
                Ok(_) => return Ok(()),
                Err(error) => error.to_string(),
            };
            for process in &mut self.processes {
                process.check_running()?;
            }
            if Instant::now() > deadline {
                return Err(io_error("the default ServiceAccount never appeared")(
                    std::io::Error::other(last),
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Stops (`running == false`) or starts again the kubelet KWOK plays for `node`, as
/// [`crate::Cluster::set_node_ready`] describes.
///
/// KWOK plays a node's pods only while it holds the node's Lease (`kube-node-lease/<node>`,
/// which it renews as a kubelet does; `readOnlyFunc` in `pkg/kwok/controllers/controller.go`),
/// and the heartbeat Stage, which plays itself again after each play, only for a node without
/// the annotation `kubeward.dev/kubelet`. Stopped: the Lease passes to another holder, renewed
/// once now and then never again, and the node is annotated `kubeward.dev/kubelet: stopped`:
/// KWOK stops playing the node and its pods (a heartbeat already due may still land), and
/// kube-controller-manager's node lifecycle controller, seeing neither the Lease nor the node's
/// status renewed, marks the node after its grace period. Started: the node's conditions are
/// posted as its kubelet posts them, the annotation goes and the Lease is released; KWOK takes
/// the Lease again at its next try (its renew interval, 10 s) and plays the node and its pods
/// again (a pod being deleted is removed).
///
/// # Errors
/// A write the API server refused.
pub(crate) async fn set_kubelet_running(
    admin: &kube::Client,
    node: &WorkerNode,
    running: bool,
) -> Result<(), ServerError> {
    let failed = |what: &str, e: kube::Error| {
        ServerError::ControlPlane(format!("cannot {what} of node {}: {e}", node.name))
    };
    let leases: Api<Lease> = Api::namespaced(admin.clone(), "kube-node-lease");
    let nodes: Api<Node> = Api::all(admin.clone());
    let params = PatchParams::default();
    let annotate = |value: serde_json::Value| {
        Patch::Merge(json!({"metadata": {"annotations": {STOPPED_ANNOTATION: value}}}))
    };
    if running {
        let now = rfc3339(jiff::Timestamp::now());
        let status = json!({"status": {"conditions": node_conditions(true, &now)}});
        nodes
            .patch_status(&node.name, &params, &Patch::Strategic(status))
            .await
            .map_err(|e| failed("post the status", e))?;
        nodes
            .patch(&node.name, &params, &annotate(serde_json::Value::Null))
            .await
            .map_err(|e| failed("remove the annotation", e))?;
        let release = json!({"spec": {"holderIdentity": null}});
        leases
            .patch(&node.name, &params, &Patch::Merge(release))
            .await
            .map_err(|e| failed("release the Lease", e))?;
    } else {
        let take = json!({"spec": {
            "holderIdentity": STOPPED_KUBELET,
            "leaseDurationSeconds": STOPPED_FOR_SECONDS,
            "renewTime": format!("{:.6}", jiff::Timestamp::now()),
        }});
        leases
            .patch(&node.name, &params, &Patch::Merge(take))
            .await
            .map_err(|e| failed("take the Lease", e))?;
        nodes
            .patch(&node.name, &params, &annotate(json!("stopped")))
            .await
            .map_err(|e| failed("annotate", e))?;
    }
    Ok(())
}
