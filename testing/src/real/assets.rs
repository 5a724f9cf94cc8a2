//! Where the real control plane's binaries are: the envtest convention, a directory named by
//! `KUBEBUILDER_ASSETS` holding `kube-apiserver` and `etcd` (and, from `scripts/kube-assets`,
//! `kube-controller-manager`, `kube-scheduler` and `kwok`).

use std::path::{Path, PathBuf};

use crate::ServerError;

/// The environment variable naming the binaries' directory (as envtest reads it).
pub const ASSETS_VARIABLE: &str = "KUBEBUILDER_ASSETS";

/// The binaries of a real control plane.
#[derive(Debug, Clone)]
pub(crate) struct Assets {
    pub(crate) etcd: PathBuf,
    pub(crate) kube_apiserver: PathBuf,
    /// Absent from plain envtest assets: then nothing collects garbage and a namespace deletion
    /// never completes, as on envtest.
    pub(crate) kube_controller_manager: Option<PathBuf>,
    /// Needed for a simulated cluster only ([`crate::ClusterBuilder::workloads`]).
    pub(crate) kube_scheduler: Option<PathBuf>,
    /// KWOK, the simulated cluster's kubelets.
    pub(crate) kwok: Option<PathBuf>,
}

impl Assets {
    /// The binaries in `$KUBEBUILDER_ASSETS`.
    ///
    /// # Errors
    /// When the variable is unset or a required binary is missing from the directory, with a
    /// message that says how to get them.
    pub(crate) fn from_env() -> Result<Self, ServerError> {
        let dir = std::env::var_os(ASSETS_VARIABLE).ok_or_else(|| {
            ServerError::ControlPlane(format!(
                "{ASSETS_VARIABLE} is not set: run scripts/kube-assets (it builds kube-apiserver, \
                 etcd and kube-controller-manager and prints KUBEBUILDER_ASSETS=<dir>) and export \
                 what it prints, or point it at envtest binaries (setup-envtest use -p path)"
            ))
        })?;
        Self::in_dir(Path::new(&dir))
    }

    /// The binaries in `dir`.
    pub(crate) fn in_dir(dir: &Path) -> Result<Self, ServerError> {
        let required = |name: &str| {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(ServerError::ControlPlane(format!(
                    "{ASSETS_VARIABLE}={} holds no {name}",
                    dir.display()
                )))
            }
        };
        let optional = |name: &str| Some(dir.join(name)).filter(|path| path.is_file());
        Ok(Self {
            etcd: required("etcd")?,
            kube_apiserver: required("kube-apiserver")?,
            kube_controller_manager: optional("kube-controller-manager"),
            kube_scheduler: optional("kube-scheduler"),
            kwok: optional("kwok"),
        })
    }
}
