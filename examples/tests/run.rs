//! `rollouts run` is the long-running controller for a real cluster: pointed at an API server by
//! `--kubeconfig`, it reconciles Rollouts and serves `/metrics` (both collectors), `/healthz` and
//! `/readyz` on `--metrics-addr`, and stops gracefully on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kube::api::{Api, PostParams};
use kubeward_examples::rollouts::scenario::cluster;
use kubeward_examples::rollouts::{Rollout, RolloutSpec, Strategy};

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET path` on `addr`: status code and body.
fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return (0, String::new());
    };
    let _ = write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    );
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// A directory of this process named after `name`, holding a kubeconfig for `server`: the
/// directory and the kubeconfig's path.
fn kubeconfig_in(
    server: &kubeward_testing::Cluster,
    name: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    (dir, kubeconfig)
}

/// `rollouts run` with `kubeconfig`, serving on a free port: the process and that address.
fn start_run(kubeconfig: &std::path::Path) -> (Running, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rollouts"))
        .args(["run", "--metrics-addr", "127.0.0.1:0", "--kubeconfig"])
        .arg(kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rollouts run");
    let stderr = child.stderr.take().expect("stderr");
    let running = Running(child);
    let mut lines = BufReader::new(stderr).lines();
    let addr: SocketAddr = loop {
        let line = lines
            .next()
            .expect("rollouts run printed the metrics address")
            .expect("stderr line");
        if let Some(Ok(addr)) = line.rsplit_once(" on ").map(|(_, a)| a.trim().parse()) {
            break addr;
        }
    };
    // Keep draining stderr so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (running, addr)
}

/// Sends SIGTERM to `running`, as the kubelet does to a terminating pod.
fn sigterm(running: &Running) {
    let pid = running.0.id().to_string();
    let sent = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// How `running` exited; bounded only so that a broken binary fails the test instead of
/// hanging it.
async fn exit_status(running: &mut Running, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = running.0.try_wait().expect("wait") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "rollouts run did not exit: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn rollout(name: &str) -> Rollout {
    let mut rollout = Rollout::new(
        name,
        RolloutSpec {
            image: "registry.example/api:2.0".into(),
            replicas: 2,
            strategy: Strategy::Automatic,
            timeout_seconds: 600,
            suspend: false,
        },
    );
    rollout.metadata.namespace = Some("default".into());
    rollout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollouts_run_reconciles_through_a_kubeconfig_and_serves_metrics_and_health() {
    let server = cluster().await.expect("cluster");
    let (dir, kubeconfig) = kubeconfig_in(&server, "kubeward-run");
    let (mut running, addr) = start_run(&kubeconfig);

    assert_eq!(get(addr, "/healthz"), (200, "ok\n".to_owned()));

    let client = server.client().expect("client");
    let rollouts: Api<Rollout> = Api::namespaced(client, "default");
    rollouts
        .create(&PostParams::default(), &rollout("api"))
        .await
        .expect("create");

    // Bounded only so that a broken binary fails the test instead of hanging it.
    let deadline = Instant::now() + Duration::from_secs(60);
    let applied = r#"kubeward_object_condition{controller="demo.kubeward.dev/rollouts",name="api",namespace="default",status="True",type="UpToDate"} 1"#;
    loop {
        let (_, metrics) = get(addr, "/metrics");
        if metrics.contains(applied) {
            assert!(metrics.contains(
                r#"kubeward_reconcile_passes_total{controller="demo.kubeward.dev/rollouts",outcome="completed",phase="init"} 1"#
            ));
            assert!(metrics.contains("kubeward_reconcile_step_duration_seconds_count"));
            // The reason and the class its declaration gives it, and the declared info field.
            assert!(metrics.contains(
                r#"kubeward_object_condition_reason{class="done",controller="demo.kubeward.dev/rollouts",name="api",namespace="default",reason="Applied",type="UpToDate"} 1"#
            ), "{metrics}");
            assert!(metrics.contains(
                r#"kubeward_object_condition_reason{class="waiting",controller="demo.kubeward.dev/rollouts",name="api",namespace="default",reason="WaitingForApproval",type="UpToDate"} 0"#
            ), "{metrics}");
            assert!(metrics.contains(
                r#"kubeward_object_info{controller="demo.kubeward.dev/rollouts",image="registry.example/api:2.0",name="api",namespace="default"} 1"#
            ), "{metrics}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never applied; last /metrics:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(get(addr, "/readyz").0, 200);
    let stored = rollouts.get("api").await.expect("get");
    assert_eq!(
        stored.up_to_date().map(|c| c.reason.as_str()),
        Some("Applied")
    );

    // SIGTERM, as the kubelet sends a terminating pod: the controller shuts down gracefully
    // (in-flight passes finish, event series are flushed) and exits with success.
    sigterm(&running);
    let status = exit_status(&mut running, "on SIGTERM").await;
    assert!(
        status.success(),
        "rollouts run exited with {status} on SIGTERM"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigterm_during_a_hung_shutdown_exits_at_once() {
    use kubeward_testing::{Fault, FaultAction};
    let server = cluster().await.expect("cluster");
    let (dir, kubeconfig) = kubeconfig_in(&server, "kubeward-run-twice");
    let (mut running, addr) = start_run(&kubeconfig);
    assert_eq!(get(addr, "/healthz").0, 200);
    // Every status write hangs: the first pass never finishes, so a graceful shutdown takes its
    // whole budget (25 s).
    let status_path = "/apis/demo.kubeward.dev/v1/namespaces/default/rollouts/stuck/status";
    server.faults().add(
        Fault::new(FaultAction::Hang)
            .method(http::Method::PATCH)
            .path_prefix(status_path),
    );
    let client = server.client().expect("client");
    Api::<Rollout>::namespaced(client, "default")
        .create(&PostParams::default(), &rollout("stuck"))
        .await
        .expect("create");
    // Wait for the hung write itself (logged unanswered as it hangs), not merely for a pass in
    // flight: on a slower server the first pass may still be in an earlier write, which finishes.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !server.requests().iter().any(|r| {
        r.method == http::Method::PATCH && r.path.starts_with(status_path) && r.status == 0
    }) {
        assert!(
            Instant::now() < deadline,
            "no pass got stuck in its status write"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let in_flight =
        r#"kubeward_reconcile_passes_in_flight{controller="demo.kubeward.dev/rollouts"} 1"#;
    assert!(get(addr, "/metrics").1.contains(in_flight));
    sigterm(&running);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        running.0.try_wait().expect("wait").is_none(),
        "exited within 300 ms of the first SIGTERM although its status write hung"
    );
    sigterm(&running);
    let status = exit_status(&mut running, "on a second SIGTERM").await;
    assert_eq!(
        status.code(),
        Some(1),
        "forced out by the second signal, not a graceful exit: {status}"
    );
    server.faults().clear();
    let _ = std::fs::remove_dir_all(&dir);
}
