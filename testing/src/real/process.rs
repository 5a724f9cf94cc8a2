//! One child process of the control plane: its output in a log file, stopped by its own pid.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::ServerError;

/// A running binary of the control plane. Dropping it kills it (SIGKILL: its data is thrown
/// away) and reaps it.
#[derive(Debug)]
pub(crate) struct Process {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Process {
    /// Starts `program` with `args`, stdout and stderr into `<dir>/<name>.log`.
    pub(crate) fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        dir: &Path,
    ) -> Result<Self, ServerError> {
        let log = dir.join(format!("{name}.log"));
        let io = |e: std::io::Error| {
            ServerError::ControlPlane(format!("cannot start {}: {e}", program.display()))
        };
        let out = File::create(&log).map_err(io)?;
        let err = out.try_clone().map_err(io)?;
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(io)?;
        Ok(Self { name, child, log })
    }

    /// The component's name (`etcd`, `kube-apiserver`, `kube-controller-manager`).
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// An error if the process has exited: its status and the end of its log.
    pub(crate) fn check_running(&mut self) -> Result<(), ServerError> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(ServerError::ControlPlane(format!(
                "{} exited ({status}); the end of its log ({}):\n{}",
                self.name,
                self.log.display(),
                self.log_tail(40)
            ))),
            Err(e) => Err(ServerError::ControlPlane(format!(
                "cannot watch {}: {e}",
                self.name
            ))),
        }
    }

    /// The last `lines` lines of the log.
    pub(crate) fn log_tail(&self, lines: usize) -> String {
        let mut text = String::new();
        if let Ok(mut file) = File::open(&self.log) {
            let length = file.metadata().map(|m| m.len()).unwrap_or(0);
            let _ = file.seek(SeekFrom::Start(length.saturating_sub(64 * 1024)));
            let mut bytes = Vec::new();
            let _ = file.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
