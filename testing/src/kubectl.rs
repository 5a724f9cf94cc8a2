//! Running the real `kubectl` (unmodified, from `PATH`) against a test's API server.
//!
//! [`Kubectl`] is kubectl with one kubeconfig (written by [`ApiServer::write_kubeconfig`],
//! [`ApiServer::write_kubeconfig_for`] or [`Cluster::write_kubeconfig`](crate::Cluster)) and
//! a discovery cache of its own next to it, so that tests never share kubectl's cache in the
//! home directory. Every call blocks until kubectl exits: from a test on the async runtime that
//! also serves an [`ApiServer`], call it on a blocking thread
//! (`tokio::task::spawn_blocking`), or the server cannot answer.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use kubeward_testing::kubectl::Kubectl;
//! let server = kubeward_testing::ApiServer::start().await?;
//! let dir = std::env::temp_dir().join("my-test");
//! std::fs::create_dir_all(&dir)?;
//! server.write_kubeconfig(dir.join("kubeconfig"))?;
//! let kubectl = Kubectl::new(dir.join("kubeconfig"));
//! let listed = tokio::task::spawn_blocking(move || {
//!     kubectl.ok(&["create", "configmap", "settings", "--from-literal=mode=fast"]);
//!     let got = kubectl.output(&["get", "configmap", "settings", "-o", "name"]);
//!     assert!(got.success, "{}", got.stderr);
//!     // Polls until the output satisfies the check, failing the test after the timeout.
//!     kubectl.until(&["get", "configmaps", "-o", "name"], Duration::from_secs(10), |names| {
//!         names.contains("configmap/settings")
//!     })
//! })
//! .await?;
//! assert!(listed.contains("configmap/settings"));
//! # Ok(()) }
//! ```
//!
//! [`ApiServer`]: crate::ApiServer
//! [`ApiServer::write_kubeconfig`]: crate::ApiServer::write_kubeconfig
//! [`ApiServer::write_kubeconfig_for`]: crate::ApiServer::write_kubeconfig_for

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// The `kubectl` binary on `PATH`.
///
/// # Panics
/// When there is none, with how to install it: a test that needs kubectl fails saying so
/// rather than with a spawn error.
pub fn binary() -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("kubectl"))
        .find(|p| p.is_file());
    match found {
        Some(path) => path,
        None => panic!(
            "kubectl is not installed or not on PATH, and this test needs it. Install it, e.g. \
             `apt-get install -y kubernetes-client` on Debian (scripts/test does this), or \
             `curl -LO https://dl.k8s.io/release/v1.34.0/bin/linux/amd64/kubectl && \
             sudo install -m 0755 kubectl /usr/local/bin/kubectl`; see \
             https://kubernetes.io/docs/tasks/tools/"
        ),
    }
}

/// kubectl with a kubeconfig (`--kubeconfig`) and a discovery cache of its own
/// (`--cache-dir`, the kubeconfig's path with the extension `cache`).
#[derive(Debug, Clone)]
pub struct Kubectl {
    bin: PathBuf,
    kubeconfig: PathBuf,
    cache: PathBuf,
}

/// What one kubectl run printed, and whether it exited successfully.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Whether kubectl exited with status 0.
    pub success: bool,
    /// Its standard output (invalid UTF-8 replaced).
    pub stdout: String,
    /// Its standard error (invalid UTF-8 replaced).
    pub stderr: String,
}

impl Output {
    /// Standard output, then standard error: everything kubectl printed, e.g. for a failure
    /// message.
    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

impl Kubectl {
    /// kubectl with the kubeconfig at `kubeconfig` (which need not exist yet), caching
    /// discovery next to it.
    ///
    /// # Panics
    /// When kubectl is not on `PATH` (see [`binary`]).
    pub fn new(kubeconfig: impl AsRef<Path>) -> Self {
        let kubeconfig = kubeconfig.as_ref().to_owned();
        Self {
            bin: binary(),
            cache: kubeconfig.with_extension("cache"),
            kubeconfig,
        }
    }

    /// The kubeconfig it uses.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// `kubectl --kubeconfig … --cache-dir … <args>`, not started: for what the other methods
    /// do not cover (arguments that are paths, piped output of a process left running).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args);
        command
    }

    /// Runs `kubectl <args>` to its end: its output and whether it succeeded.
    ///
    /// # Panics
    /// When kubectl cannot be started.
    pub fn output(&self, args: &[&str]) -> Output {
        let out = self
            .command(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run kubectl {args:?}: {e}"));
        Output {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs `kubectl <args>`: whether it succeeded, and its stdout then its stderr
    /// ([`Output::text`]).
    pub fn run(&self, args: &[&str]) -> (bool, String) {
        let out = self.output(args);
        (out.success, out.text())
    }

    /// Runs `kubectl <args>`, which must succeed: its stdout then its stderr.
    ///
    /// # Panics
    /// When it fails, with everything it printed.
    pub fn ok(&self, args: &[&str]) -> String {
        let (ok, text) = self.run(args);
        assert!(ok, "kubectl {args:?} failed:\n{text}");
        text
    }

    /// Runs `kubectl <args>`, which must fail: its stdout then its stderr.
    ///
    /// # Panics
    /// When it succeeds, with everything it printed.
    pub fn fails(&self, args: &[&str]) -> String {
        let (ok, text) = self.run(args);
        assert!(!ok, "kubectl {args:?} succeeded:\n{text}");
        text
    }

    /// Runs `kubectl <args>` every 100 ms until it succeeds with a stdout that satisfies
    /// `done`, and returns that stdout.
    ///
    /// # Panics
    /// When no run did so within `timeout`, with the last run's output: a server that never
    /// gets there fails the test instead of hanging it.
    pub fn until(&self, args: &[&str], timeout: Duration, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let out = self.output(args);
            if out.success && done(&out.stdout) {
                return out.stdout;
            }
            assert!(
                Instant::now() < deadline,
                "kubectl {args:?} never satisfied the check; last output: {}\n{}",
                out.stdout,
                out.stderr
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts a long-running `kubectl <args>` (such as `get -w`) whose stdout is read line by
    /// line; its stderr goes to the test's. The process is killed when the returned value is
    /// dropped.
    ///
    /// # Panics
    /// When kubectl cannot be started.
    pub fn lines(&self, args: &[&str]) -> Lines {
        use std::io::BufRead;
        let mut child = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start kubectl {args:?}: {e}"));
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
        Lines { child, lines: rx }
    }
}

/// A running kubectl's stdout, line by line (see [`Kubectl::lines`]); the process is killed
/// when this is dropped, however the test ends. It is `Send`: move it to a blocking thread to
/// wait for lines, and back.
#[derive(Debug)]
pub struct Lines {
    child: Child,
    lines: Receiver<String>,
}

impl Lines {
    /// The next line kubectl prints.
    ///
    /// # Panics
    /// When it prints none within `timeout` (or has exited).
    pub fn next_line(&self, timeout: Duration) -> String {
        self.lines
            .recv_timeout(timeout)
            .unwrap_or_else(|e| panic!("kubectl printed no line within {timeout:?}: {e}"))
    }

    /// The next `n` lines kubectl prints, each within `timeout`.
    ///
    /// # Panics
    /// As [`Lines::next_line`].
    pub fn next_lines(&self, n: usize, timeout: Duration) -> Vec<String> {
        (0..n).map(|_| self.next_line(timeout)).collect()
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
