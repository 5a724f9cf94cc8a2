//! `rollouts --serve` keeps the API server up with the operator running (the embedded one, or
//! the real kube-apiserver when `KUBEWARD_TEST_APISERVER=real`, as `scripts/test` runs it
//! again), and kubectl works against it: `get rollouts` lists the Rollout, `describe rollout` shows its events,
//! `explain rollouts.spec` shows the CRD's schema, `get pods -w` shows a replaced pod of its
//! Deployment going Ready on the simulated cluster, and `delete namespace` waits for the
//! operator's cleanup of the Rollouts in it. A client bearing a token that authenticates no one gets the 401
//! kube-apiserver answers, while the kubeconfig's own credentials work.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kubeward_examples::rollouts::{FINALIZER, operator};
use kubeward_testing::kubectl::Kubectl;

/// Stops the served binary when the test ends, however it ends: Ctrl-C (SIGINT) first, so that
/// it stops the operator and the API server it started (on the real backend, etcd and
/// kube-apiserver by their process ids), then SIGKILL if it has not exited within 30 s.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn kubectl_gets_and_describes_the_rollout_served_by_rollouts_serve() {
    let dir = std::env::temp_dir().join(format!("kubeward-kubectl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kubeconfig: PathBuf = dir.join("kubeconfig");
    // Fails the test at once, saying how to install it, when kubectl is not on PATH.
    let k = Kubectl::new(&kubeconfig);
    let _ = std::fs::remove_file(&kubeconfig);
    let log = dir.join("serve.log");
    let mut served = Served(
        Command::new(env!("CARGO_BIN_EXE_rollouts"))
            .arg("--serve")
            .arg("--kubeconfig-out")
            .arg(&kubeconfig)
            .stdout(std::fs::File::create(&log).expect("log file"))
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn rollouts --serve"),
    );

    // The kubeconfig is written once the scenario has run (so the events exist). The bound only
    // keeps a broken binary from hanging the test.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !kubeconfig.exists() {
        if let Ok(Some(status)) = served.0.try_wait() {
            panic!(
                "rollouts --serve exited with {status}:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        assert!(
            Instant::now() < deadline,
            "no kubeconfig from rollouts --serve"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    unknown_bearer_tokens_are_401_and_the_kubeconfigs_credentials_work(&kubeconfig);

    let got = k.output(&["get", "rollouts"]);
    let stdout = got.stdout;
    assert!(got.success, "{}", got.stderr);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("web "))
        .unwrap_or_else(|| panic!("no row for web:\n{stdout}"));
    assert!(row.contains("registry.example/web:1.1"), "{stdout}");
    // The UpToDate column is a filtered JSONPath over the conditions.
    assert!(row.contains(" Applied "), "{stdout}");

    let described = k.output(&["describe", "rollout", "web"]);
    let stdout = described.stdout;
    assert!(described.success, "{}", described.stderr);
    let events = stdout
        .split_once("Events:")
        .map(|(_, events)| events)
        .unwrap_or_else(|| panic!("no Events section:\n{stdout}"));
    for (type_, reason) in [
        ("Normal", "WaitingForApproval"),
        ("Normal", "Applied"),
        ("Warning", "FailedDeploy"),
        ("Warning", "ReconcileFailed"),
    ] {
        assert!(
            events.lines().any(|l| {
                let columns: Vec<&str> = l.split_whitespace().collect();
                columns.first() == Some(&type_) && columns.get(1) == Some(&reason)
            }),
            "no {type_} {reason} event in kubectl describe:\n{stdout}"
        );
    }
    assert!(
        events.contains("demo.kubeward.dev/rollouts"),
        "From is the reporting controller:\n{stdout}"
    );
    assert!(
        events.contains("(x"),
        "the failure series shows its count:\n{stdout}"
    );
    assert!(
        stdout.contains("Reason:                Applied"),
        "{stdout}"
    );

    // `kubectl explain` reads the Rollout's schema, the one the operator's CRD declares, from
    // the server's OpenAPI documents.
    let explained = k.output(&["explain", "rollouts.spec"]);
    let stdout = explained.stdout;
    assert!(explained.success, "{}", explained.stderr);
    assert!(
        stdout.starts_with("GROUP:      demo.kubeward.dev\nKIND:       Rollout\nVERSION:    v1\n"),
        "{stdout}"
    );
    let fields: Vec<String> = stdout
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains('<'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    for field in [
        "image <string> -required-",
        "replicas <integer>",
        "suspend <boolean>",
        "timeoutSeconds <integer>",
    ] {
        assert!(fields.iter().any(|f| f == field), "no {field}:\n{stdout}");
    }
    assert!(
        stdout.contains("The container image to roll out"),
        "the field docs come from the CRD schema:\n{stdout}"
    );

    // What `rollouts crd` prints is YAML that kubectl reads back as the CRD the operator
    // declares. (`rollouts rbac` is written by the same code: see `rbac_applies_and_binds`.)
    let printed = Command::new(env!("CARGO_BIN_EXE_rollouts"))
        .arg("crd")
        .output()
        .expect("run rollouts crd");
    assert!(printed.status.success(), "rollouts crd failed");
    let file = dir.join("crd.yaml");
    std::fs::write(&file, &printed.stdout).expect("write yaml");
    let read = k
        .command(&[
            "create",
            "--dry-run=client",
            "--validate=false",
            "-o",
            "json",
            "-f",
        ])
        .arg(&file)
        .output()
        .expect("run kubectl create");
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let parsed: serde_json::Value = serde_json::from_slice(&read.stdout).expect("kubectl json");
    let expected = serde_json::to_value(operator::crd()).expect("crd json");
    assert_eq!(
        numbers_as_f64(parsed),
        numbers_as_f64(expected),
        "rollouts crd as kubectl reads it"
    );

    rbac_applies_and_binds(&k, &dir);

    let children = k.output(&["get", "deployments,services", "-o", "name"]);
    let stdout = children.stdout;
    assert!(stdout.contains("deployment.apps/web\n"), "{stdout}");
    assert!(stdout.contains("service/web\n"), "{stdout}");

    a_replaced_pod_goes_ready_under_get_pods_watch(&k);

    get_watch_prints_updates_under_the_lists_header(&k);
    namespace_deletion_waits_for_the_operators_cleanup(&k, &dir);
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a peer client with a made-up or stale token (the official Python client, say) meets:
/// 401 `Unauthorized` with kube-apiserver's Status body, on the embedded server as on a real
/// one — not the administrator's 200. The credentials of the kubeconfig `rollouts --serve`
/// wrote (none over the embedded server's plain http, the administrator's token on the real
/// one) keep working.
fn unknown_bearer_tokens_are_401_and_the_kubeconfigs_credentials_work(kubeconfig: &Path) {
    use kube::config::{KubeConfigOptions, Kubeconfig};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        // The kubeconfig may still be being written when it first exists.
        let deadline = Instant::now() + Duration::from_secs(10);
        let read = loop {
            match Kubeconfig::read_from(kubeconfig) {
                Ok(read) if !read.clusters.is_empty() => break read,
                other => assert!(
                    Instant::now() < deadline,
                    "the kubeconfig does not read: {other:?}"
                ),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let config = kube::Config::from_custom_kubeconfig(read, &KubeConfigOptions::default())
            .await
            .expect("a client configuration from the kubeconfig");
        let get = |config: kube::Config| async move {
            let client = kube::Client::try_from(config).expect("a client");
            let request = http::Request::get("/api/v1/namespaces/default/configmaps")
                .body(kube::client::Body::from(Vec::new()))
                .expect("a request");
            let response = client.send(request).await.expect("an answer");
            let status = response.status().as_u16();
            let body = response
                .into_body()
                .collect_bytes()
                .await
                .expect("the body");
            (
                status,
                serde_json::from_slice::<serde_json::Value>(&body).unwrap_or_default(),
            )
        };
        let (status, body) = get(config.clone()).await;
        assert_eq!(status, 200, "the kubeconfig's credentials: {body}");
        assert_eq!(body["kind"], "ConfigMapList", "{body}");
        let mut bogus = config;
        bogus.auth_info.token = Some("not-a-token-anyone-issued".to_owned().into());
        let (status, body) = get(bogus).await;
        assert_eq!(
            (status, body),
            (
                401,
                serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                   "status": "Failure", "message": "Unauthorized",
                                   "reason": "Unauthorized", "code": 401})
            ),
            "a bearer token that authenticates no one"
        );
    });
}

/// `kubectl get rollouts -w` prints the list, then each change as a row of the same table:
/// the server sends watch events as Table rows with the list's columns, so kubectl prints no
/// second header (before, it printed `NAME AGE` rows of its own).
fn get_watch_prints_updates_under_the_lists_header(k: &Kubectl) {
    let watching = k.lines(&["get", "rollouts", "-w"]);
    let next = || watching.next_line(Duration::from_secs(60));
    let header: Vec<String> = next().split_whitespace().map(str::to_string).collect();
    assert_eq!(
        header,
        ["NAME", "IMAGE", "UPTODATE", "SUSPENDED", "AGE"],
        "the list's header"
    );
    let listed = next();
    let listed: Vec<&str> = listed.split_whitespace().collect();
    assert_eq!(listed[0], "web", "{listed:?}");
    let suspended = listed[3] == "true";

    let patch = |suspend: bool| {
        let out = k.output(&[
            "patch",
            "rollout",
            "web",
            "--type=merge",
            "-p",
            &format!("{{\"spec\":{{\"suspend\":{suspend}}}}}"),
        ]);
        assert!(out.success, "{}", out.stderr);
    };
    patch(!suspended);
    // Rows until the one showing the change (the operator may write status in between), each
    // a row of the list's table.
    loop {
        let line = next();
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cells.len(),
            header.len(),
            "a row of the list's table: {line}"
        );
        assert_eq!(cells[0], "web", "{line}");
        if cells[3] == (!suspended).to_string() {
            break;
        }
    }
    drop(watching);
    patch(suspended);
}

/// `kubectl get pods -w` on the served cluster: the Rollout's Deployment is ready 3/3; a pod
/// deleted is replaced by its ReplicaSet, and the watch shows the replacement created not
/// ready, then `Running` and ready (`1/1`), as the simulated kubelet reports it.
fn a_replaced_pod_goes_ready_under_get_pods_watch(k: &Kubectl) {
    let ready = "jsonpath={.status.readyReplicas}/{.spec.replicas}";
    k.until(&["get", "deployment", "web", "-o", ready], UNTIL, |s| {
        s == "3/3"
    });
    let watching = k.lines(&[
        "get",
        "pods",
        "--selector=demo.kubeward.dev/rollout=web",
        "-w",
    ]);
    let next = || watching.next_line(Duration::from_secs(60));
    let header: Vec<String> = next().split_whitespace().map(str::to_string).collect();
    assert_eq!(header, ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    let listed: Vec<String> = (0..3)
        .map(|_| {
            let line = next();
            let cells: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(cells[1..3], ["1/1", "Running"], "{line}");
            cells[0].to_owned()
        })
        .collect();
    let deleted = k.output(&["delete", "pod", &listed[0], "--wait=false"]);
    assert!(deleted.success, "{}", deleted.stderr);
    let mut unready = false;
    loop {
        let line = next();
        let cells: Vec<&str> = line.split_whitespace().collect();
        if listed.iter().any(|p| p == cells[0]) {
            continue;
        }
        if cells[1] == "0/1" {
            unready = true;
        } else if cells[1..3] == ["1/1", "Running"] {
            break;
        }
    }
    assert!(unready, "the replacement pod was never shown not ready");
}

/// A finalizer the test holds on its Rollout, so the namespace deletion is observably waiting.
const HOLD: &str = "example.com/hold";

/// How long `Kubectl::until` polls (bounded, so a broken server fails the test instead of
/// hanging it).
const UNTIL: Duration = Duration::from_secs(60);

/// `kubectl delete namespace` marks the namespace Terminating and waits: the Rollout in it gets
/// its deletionTimestamp, the operator's cleanup deletes its children and removes the operator's
/// finalizer, and the namespace goes only when the Rollout is gone.
fn namespace_deletion_waits_for_the_operators_cleanup(k: &Kubectl, dir: &Path) {
    let created = k.output(&["create", "namespace", "shop"]);
    assert!(created.success, "{}", created.stderr);
    let manifest = dir.join("shop-rollout.yaml");
    std::fs::write(
        &manifest,
        format!(
            "apiVersion: demo.kubeward.dev/v1\nkind: Rollout\nmetadata:\n  name: web\n  \
             namespace: shop\n  finalizers: [{HOLD}]\nspec:\n  image: registry.example/web:2.0\n"
        ),
    )
    .expect("write manifest");
    let applied = k.output(&["apply", "-f", manifest.to_str().expect("path")]);
    assert!(applied.success, "{}", applied.stderr);
    let finalizers = [
        "get",
        "rollout",
        "web",
        "-n",
        "shop",
        "-o",
        "jsonpath={.metadata.finalizers}",
    ];
    k.until(&finalizers, UNTIL, |f| f.contains(FINALIZER));
    k.until(
        &["get", "deployments,services", "-n", "shop", "-o", "name"],
        UNTIL,
        |names| names == "deployment.apps/web\nservice/web\n",
    );

    // kubectl waits for the namespace to be gone.
    let mut deleting = Served(
        k.command(&["delete", "namespace", "shop", "--timeout=120s"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kubectl delete namespace"),
    );
    // The operator's cleanup runs: its finalizer goes, its children with it; the test's hold
    // keeps the Rollout, and so the namespace.
    k.until(&finalizers, UNTIL, |f| f == format!("[\"{HOLD}\"]"));
    k.until(
        &["get", "deployments,services", "-n", "shop", "-o", "name"],
        UNTIL,
        |names| names.trim().is_empty(),
    );
    k.until(
        &[
            "get",
            "namespace",
            "shop",
            "-o",
            "jsonpath={.status.phase} {.status.conditions[?(@.type==\"NamespaceFinalizersRemaining\")].message}",
        ],
        UNTIL,
        |s| {
            s == format!(
                "Terminating Some content in the namespace has finalizers remaining: {HOLD} in 1 resource \
                 instances"
            )
        },
    );
    assert!(
        deleting
            .0
            .try_wait()
            .expect("kubectl delete status")
            .is_none(),
        "kubectl delete namespace returned while the namespace still had content"
    );

    let released = k.output(&[
        "patch",
        "rollout",
        "web",
        "-n",
        "shop",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    assert!(released.success, "{}", released.stderr);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = deleting.0.try_wait().expect("kubectl delete status") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "kubectl delete namespace never returned"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    use std::io::Read;
    if let Some(mut out) = deleting.0.stdout.take() {
        let _ = out.read_to_string(&mut stdout);
    }
    if let Some(mut err) = deleting.0.stderr.take() {
        let _ = err.read_to_string(&mut stderr);
    }
    assert!(
        status.success(),
        "kubectl delete namespace: {stdout}{stderr}"
    );
    assert!(stdout.contains("namespace \"shop\" deleted"), "{stdout}");
    let after = k.output(&["get", "namespace", "shop"]);
    assert!(!after.success);
    assert!(
        after.stderr.contains("namespaces \"shop\" not found"),
        "{}",
        after.stderr
    );
}

/// `rollouts rbac` applies with kubectl; bound to the operator's service account, `kubectl auth
/// can-i --as` the account answers yes for what the operator does and no for what it does not.
fn rbac_applies_and_binds(k: &Kubectl, dir: &Path) {
    let printed = Command::new(env!("CARGO_BIN_EXE_rollouts"))
        .arg("rbac")
        .output()
        .expect("run rollouts rbac");
    assert!(printed.status.success(), "rollouts rbac failed");
    let file = dir.join("rbac.yaml");
    std::fs::write(&file, &printed.stdout).expect("write yaml");
    let applied = k.output(&["apply", "-f", file.to_str().expect("path")]);
    assert!(applied.success, "{}", applied.stderr);
    let bound = k.output(&[
        "create",
        "clusterrolebinding",
        "kubeward-rollouts",
        "--clusterrole=kubeward-rollouts",
        "--serviceaccount=default:rollouts",
    ]);
    assert!(bound.success, "{}", bound.stderr);
    let as_operator = "--as=system:serviceaccount:default:rollouts";
    for (args, expected) in [
        (
            &[
                "patch",
                "rollouts.demo.kubeward.dev",
                "--subresource=status",
            ][..],
            "yes",
        ),
        (&["create", "events.events.k8s.io"][..], "yes"),
        (&["delete", "deployments.apps"][..], "yes"),
        (&["patch", "services"][..], "yes"),
        (&["watch", "pods"][..], "yes"),
        (&["delete", "pods"][..], "no"),
        (&["delete", "rollouts.demo.kubeward.dev"][..], "no"),
        (&["get", "secrets"][..], "no"),
    ] {
        let mut full = vec!["auth", "can-i"];
        full.extend(args);
        full.push(as_operator);
        let answer = k.output(&full);
        assert_eq!(
            answer.stdout.trim(),
            expected,
            "kubectl {full:?}: {}",
            answer.stderr
        );
    }
}

/// `value` with every number as an f64 (kubectl prints `0.0` back as `0`).
fn numbers_as_f64(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) => n.as_f64().map_or(Value::Null, |f| serde_json::json!(f)),
        Value::Array(items) => Value::Array(items.into_iter().map(numbers_as_f64).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, numbers_as_f64(v)))
                .collect(),
        ),
        other => other,
    }
}
