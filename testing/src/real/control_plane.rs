//! A real control plane started as envtest starts one: etcd, kube-apiserver and (when its binary
//! is there) kube-controller-manager running only its garbage collector and namespace
//! controller, on free loopback ports, with credentials minted at start. The flags are the ones
//! `scripts/kube-assets.d/NOTES.md` measured. For a simulated cluster, kube-controller-manager
//! runs all its controllers instead, beside kube-scheduler and KWOK (`simulated.rs`).

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rcgen::KeyPair;

use super::assets::Assets;
use super::process::Process;
use crate::ServerError;
use crate::auth::tls::Tls;
use crate::kubeconfig::{self, Credentials};
use crate::workloads::Workloads;

/// How long each component gets to become ready (etcd takes about 1 s, kube-apiserver 3 s).
const START_TIMEOUT: Duration = Duration::from_secs(90);

/// The user of the administrator's token.
pub(crate) const ADMIN_USER: &str = "system:admin";

/// A running control plane. Dropping it kills its processes, newest first, and removes its
/// directory — unless the thread is panicking (a failing test): then the end of each log is
/// printed and the directory kept.
pub(crate) struct ControlPlane {
    /// In start order; stopped in reverse.
    pub(super) processes: Vec<Process>,
    /// kube-apiserver's address (TLS, certificate issued by the caller's CA).
    pub(crate) api: SocketAddr,
    /// kube-apiserver's `gitVersion`.
    pub(crate) version: String,
    /// Whether kube-controller-manager runs (garbage collection, namespace deletion).
    pub(crate) controllers: bool,
    etcd_url: String,
    pub(super) dir: PathBuf,
}

impl std::fmt::Debug for ControlPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlane")
            .field("api", &self.api)
            .field("version", &self.version)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

pub(super) fn io_error(what: &str) -> impl Fn(std::io::Error) -> ServerError + '_ {
    move |e| ServerError::ControlPlane(format!("{what}: {e}"))
}

/// How many times [`ControlPlane::start`] starts the processes when a port it chose was taken.
const START_ATTEMPTS: u32 = 3;

/// A free loopback port (bound, read back, released: the process started next binds it).
pub(super) fn free_port() -> Result<u16, ServerError> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(io_error("no free port"))?;
    Ok(listener
        .local_addr()
        .map_err(io_error("no free port"))?
        .port())
}

pub(super) fn write(dir: &Path, name: &str, contents: &str) -> Result<PathBuf, ServerError> {
    let path = dir.join(name);
    std::fs::write(&path, contents).map_err(io_error("cannot write the control plane's files"))?;
    Ok(path)
}

pub(super) fn arg(name: &str, value: impl std::fmt::Display) -> String {
    format!("--{name}={value}")
}

impl ControlPlane {
    /// Starts etcd, kube-apiserver (serving a certificate of `tls`'s CA, accepting
    /// `admin_token` as the administrator) and kube-controller-manager, each waited for; with
    /// `workloads`, the simulated cluster (see `simulated.rs`). A port taken between
    /// [`free_port`] releasing it and a process binding it (by any process on the machine)
    /// starts everything again on new ports, up to [`START_ATTEMPTS`] times.
    pub(crate) async fn start(
        assets: &Assets,
        tls: &Tls,
        admin_token: &str,
        workloads: Option<&Workloads>,
    ) -> Result<Self, ServerError> {
        // What KWOK cannot play is refused before anything starts.
        let simulation = match workloads {
            Some(workloads) => Some((workloads, super::kwok::stages(workloads)?)),
            None => None,
        };
        let mut attempt = 1;
        loop {
            let simulation = simulation.as_ref().map(|(w, stages)| (*w, stages.as_str()));
            match Self::start_once(assets, tls, admin_token, simulation).await {
                Err(ServerError::ControlPlane(why))
                    if why.contains("address already in use") && attempt < START_ATTEMPTS =>
                {
                    tracing::warn!(
                        attempt,
                        "a control plane's port was taken; starting again: {why}"
                    );
                    attempt += 1;
                }
                started => return started,
            }
        }
    }

    /// [`start`](Self::start), once.
    async fn start_once(
        assets: &Assets,
        tls: &Tls,
        admin_token: &str,
        simulation: Option<(&Workloads, &str)>,
    ) -> Result<Self, ServerError> {
        let dir = std::env::temp_dir().join(format!(
            "kubeward-control-plane-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).map_err(io_error("cannot create its directory"))?;
        let mut plane = Self {
            processes: Vec::new(),
            api: SocketAddr::from(([127, 0, 0, 1], free_port()?)),
            version: String::new(),
            controllers: false,
            etcd_url: String::new(),
            dir,
        };
        plane.start_etcd(assets).await?;
        plane.start_apiserver(assets, tls, admin_token).await?;
        if let Some((workloads, stages)) = simulation {
            plane
                .start_simulation(assets, tls, admin_token, workloads, stages)
                .await?;
        } else if let Some(manager) = &assets.kube_controller_manager {
            let only = vec![arg("controllers", "garbagecollector,namespace")];
            plane
                .start_controller_manager(manager, tls, admin_token, only)
                .await?;
        }
        Ok(plane)
    }

    async fn start_etcd(&mut self, assets: &Assets) -> Result<(), ServerError> {
        let client = format!("http://127.0.0.1:{}", free_port()?);
        let peer = format!("http://127.0.0.1:{}", free_port()?);
        let args = vec![
            arg("name", "kubeward"),
            arg("data-dir", self.dir.join("etcd").display()),
            arg("listen-client-urls", &client),
            arg("advertise-client-urls", &client),
            arg("listen-peer-urls", &peer),
            arg("initial-advertise-peer-urls", &peer),
            arg("initial-cluster", format!("kubeward={peer}")),
            // The data is thrown away: fsync would only slow the tests.
            "--unsafe-no-fsync".to_owned(),
            arg("log-level", "warn"),
        ];
        self.processes
            .push(Process::spawn("etcd", &assets.etcd, &args, &self.dir)?);
        let probe = probe_client(&client, None, None)?;
        self.etcd_url = client;
        self.wait_ready("/health", &probe).await
    }

    async fn start_apiserver(
        &mut self,
        assets: &Assets,
        tls: &Tls,
        admin_token: &str,
    ) -> Result<(), ServerError> {
        let serving = tls.issue_serving().map_err(ServerError::Tls)?;
        let sa_key = KeyPair::generate().map_err(|e| ServerError::Tls(e.to_string()))?;
        let dir = self.dir.clone();
        let url = format!("https://{}", self.api);
        let args = vec![
            arg("etcd-servers", &self.etcd_url),
            arg("bind-address", "127.0.0.1"),
            arg("advertise-address", "127.0.0.1"),
            arg("secure-port", self.api.port()),
            arg(
                "tls-cert-file",
                write(&dir, "serving.crt", &serving.cert_pem)?.display(),
            ),
            arg(
                "tls-private-key-file",
                write(&dir, "serving.key", &serving.key_pem)?.display(),
            ),
            arg("authorization-mode", "RBAC"),
            // On top of the default plugins, as OpenShift and hardened clusters run (and the
            // embedded server always): blocking an owner's deletion needs `update` on its
            // `finalizers`, so an operator's RBAC that lacks it fails here too.
            arg(
                "enable-admission-plugins",
                "OwnerReferencesPermissionEnforcement",
            ),
            arg(
                "token-auth-file",
                write(
                    &dir,
                    "tokens.csv",
                    &format!("{admin_token},{ADMIN_USER},{ADMIN_USER},\"system:masters\"\n"),
                )?
                .display(),
            ),
            arg("service-account-issuer", &url),
            arg(
                "service-account-key-file",
                write(&dir, "sa.pub", &sa_key.public_key_pem())?.display(),
            ),
            arg(
                "service-account-signing-key-file",
                write(&dir, "sa.key", &sa_key.serialize_pem())?.display(),
            ),
            arg("service-cluster-ip-range", "10.0.0.0/24"),
            // The default reconciler would write loopback Endpoints for `kubernetes`, which
            // validation refuses every 10 s.
            arg("endpoint-reconciler-type", "none"),
        ];
        self.processes.push(Process::spawn(
            "kube-apiserver",
            &assets.kube_apiserver,
            &args,
            &self.dir,
        )?);
        let probe = probe_client(&url, Some(tls), Some(admin_token))?;
        self.wait_ready("/readyz", &probe).await?;
        let version: serde_json::Value = probe
            .request(
                http::Request::get("/version")
                    .body(Vec::new())
                    .map_err(|e| ServerError::ControlPlane(e.to_string()))?,
            )
            .await?;
        self.version = version["gitVersion"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned();
        Ok(())
    }

    /// The administrator's kubeconfig for the components, written into the run directory.
    pub(super) fn kubeconfig(&self, tls: &Tls, admin_token: &str) -> Result<PathBuf, ServerError> {
        let config = kubeconfig::render(
            &format!("https://{}", self.api),
            Some(&tls.ca_pem()),
            Some(Credentials::Token(admin_token)),
        );
        write(&self.dir, "kubeconfig", &config)
    }

    /// Starts kube-controller-manager with `controllers` (its `--controllers` and what they
    /// need), waited for.
    pub(super) async fn start_controller_manager(
        &mut self,
        binary: &Path,
        tls: &Tls,
        admin_token: &str,
        controllers: Vec<String>,
    ) -> Result<(), ServerError> {
        let port = free_port()?;
        let mut args = vec![
            arg("kubeconfig", self.kubeconfig(tls, admin_token)?.display()),
            // A lease in kube-system would make a second one wait for the first's to expire.
            arg("leader-elect", false),
            arg("bind-address", "127.0.0.1"),
            arg("secure-port", port),
        ];
        args.extend(controllers);
        self.processes.push(Process::spawn(
            "kube-controller-manager",
            binary,
            &args,
            &self.dir,
        )?);
        self.wait_ready("/healthz", &self_signed_probe(port)?)
            .await?;
        self.controllers = true;
        Ok(())
    }

    /// Polls `path` of the newest process until it answers 2xx, failing at once when the
    /// process exits and after [`START_TIMEOUT`].
    pub(super) async fn wait_ready(
        &mut self,
        path: &str,
        probe: &kube::Client,
    ) -> Result<(), ServerError> {
        let started = Instant::now();
        let deadline = started + START_TIMEOUT;
        let process = self.processes.last_mut().expect("a process was started");
        loop {
            process.check_running()?;
            let request = http::Request::get(path)
                .body(Vec::new())
                .map_err(|e| ServerError::ControlPlane(e.to_string()))?;
            let last = match probe.request_text(request).await {
                Ok(_) => {
                    let after = started.elapsed();
                    tracing::debug!(component = process.name(), ?after, "ready");
                    return Ok(());
                }
                Err(error) => error.to_string(),
            };
            if Instant::now() > deadline {
                return Err(ServerError::ControlPlane(format!(
                    "{} not ready after {START_TIMEOUT:?} (GET {path}: {last}); the end of its log:\n{}",
                    process.name(),
                    process.log_tail(40)
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A client for the health endpoint of a component on `port` that serves under a self-signed
/// certificate made in memory (kube-controller-manager, kube-scheduler).
pub(super) fn self_signed_probe(port: u16) -> Result<kube::Client, ServerError> {
    let mut probe = kube::Config::new(
        format!("https://127.0.0.1:{port}")
            .parse()
            .expect("loopback URL parses"),
    );
    probe.accept_invalid_certs = true;
    Ok(kube::Client::try_from(probe)?)
}

/// A client for a component's health endpoint, trusting `tls`'s CA, bearing `token`.
pub(super) fn probe_client(
    url: &str,
    tls: Option<&Tls>,
    token: Option<&str>,
) -> Result<kube::Client, ServerError> {
    let mut config = kube::Config::new(url.parse().expect("loopback URL parses"));
    config.connect_timeout = Some(Duration::from_secs(2));
    config.read_timeout = Some(Duration::from_secs(5));
    if let Some(tls) = tls {
        config.root_cert = Some(vec![tls.ca_der()]);
    }
    if let Some(token) = token {
        config.auth_info.token = Some(token.to_owned().into());
    }
    Ok(kube::Client::try_from(config)?)
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        let failing = std::thread::panicking();
        while let Some(process) = self.processes.pop() {
            if failing {
                eprintln!(
                    "--- the end of {}'s log ---\n{}",
                    process.name(),
                    process.log_tail(30)
                );
            }
            drop(process);
        }
        if failing {
            eprintln!(
                "--- the control plane's logs are kept in {}",
                self.dir.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
