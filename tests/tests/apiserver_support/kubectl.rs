//! Running `kubectl` (unmodified, from PATH) against a test server.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The kubectl binary on PATH; panics with how to install it when there is none.
pub fn kubectl_path() -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("kubectl"))
        .find(|p| p.is_file());
    match found {
        Some(p) => p,
        None => panic!(
            "kubectl is not installed, and this test needs it. Install it, e.g.: \
             curl -LO https://dl.k8s.io/release/v1.34.0/bin/linux/amd64/kubectl && \
             sudo install -m 0755 kubectl /usr/local/bin/kubectl"
        ),
    }
}

/// kubectl with a kubeconfig and its own cache directory.
#[derive(Debug, Clone)]
pub struct Kubectl {
    /// The binary.
    pub bin: PathBuf,
    /// `--kubeconfig`.
    pub kubeconfig: PathBuf,
    /// `--cache-dir`.
    pub cache: PathBuf,
}

impl Kubectl {
    /// kubectl with `kubeconfig`, caching discovery next to it.
    pub fn new(kubeconfig: &Path) -> Self {
        Kubectl {
            bin: kubectl_path(),
            kubeconfig: kubeconfig.to_owned(),
            cache: kubeconfig.with_extension("cache"),
        }
    }

    /// Runs `kubectl <args>`: whether it succeeded, and stdout then stderr.
    pub fn run(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new(&self.bin)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args)
            .output()
            .expect("kubectl runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// Runs `kubectl <args>`, which must succeed; its output.
    pub fn ok(&self, args: &[&str]) -> String {
        let (ok, text) = self.run(args);
        assert!(ok, "kubectl {args:?} failed:\n{text}");
        text
    }

    /// Runs `kubectl <args>`, which must fail; its output.
    pub fn fails(&self, args: &[&str]) -> String {
        let (ok, text) = self.run(args);
        assert!(!ok, "kubectl {args:?} succeeded:\n{text}");
        text
    }
}
