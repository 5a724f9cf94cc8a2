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

impl Kubectl {
    /// kubectl for `server`: a kubeconfig (and cache) in a directory of the server's own, which
    /// is returned for the test's files.
    pub fn for_server(server: &kubeward_testing::ApiServer) -> (Self, PathBuf) {
        let dir = std::env::temp_dir().join(format!("kubeward-kubectl-{}", server.addr().port()));
        std::fs::create_dir_all(&dir).expect("kubectl's directory");
        let kubeconfig = dir.join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        (Self::new(&kubeconfig), dir)
    }

    /// Starts a long-running kubectl (`get -w`): the process, killed when dropped, and its
    /// stdout lines as they are printed.
    pub fn spawn_lines(&self, args: &[&str]) -> (Running, std::sync::mpsc::Receiver<String>) {
        use std::io::BufRead;
        let mut child = Command::new(&self.bin)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("kubectl starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        (Running(child), rx)
    }
}

/// A kubectl process killed when the test ends, however it ends.
pub struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The next `n` lines a running kubectl prints, within a generous bound.
pub fn next_lines(lines: &std::sync::mpsc::Receiver<String>, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            lines
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("kubectl printed a line before the deadline")
        })
        .collect()
}
