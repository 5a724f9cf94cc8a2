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
//! - the declared nodes, created through the API with the body the embedded kubelet registers.
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
use super::process::Process;
use crate::ServerError;
use crate::auth::tls::Tls;
use crate::object::rfc3339;
use crate::workloads::{Workloads, node_object};

/// The annotation selector of the Nodes KWOK manages.
const KWOK_NODES: &str = "kwok.x-k8s.io/node=fake";

/// How long the `default` ServiceAccount may take to appear.
const SERVICE_ACCOUNT_TIMEOUT: Duration = Duration::from_secs(30);

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
