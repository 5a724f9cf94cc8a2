//! `kubectl` (unmodified, from PATH) against the in-process API server: create a CRD and an
//! object from YAML, get it, describe it with its events, delete it.

use std::path::{Path, PathBuf};
use std::process::Command;

mod apiserver_support;

use apiserver_support::kubectl::kubectl_path;

use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubeward_testing::ApiServer;
use serde_json::json;

const CRD_YAML: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: rollouts.demo.kubeward.dev
spec:
  group: demo.kubeward.dev
  scope: Namespaced
  names:
    plural: rollouts
    singular: rollout
    kind: Rollout
    listKind: RolloutList
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
"#;

const ROLLOUT_YAML: &str = r#"apiVersion: demo.kubeward.dev/v1
kind: Rollout
metadata:
  name: web
  namespace: default
spec:
  replicas: 3
"#;

struct Kubectl {
    bin: PathBuf,
    kubeconfig: PathBuf,
    cache: PathBuf,
}

impl Kubectl {
    fn run(&self, args: &[&str], stdin_file: Option<&Path>) -> (bool, String) {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache);
        cmd.args(args);
        if let Some(f) = stdin_file {
            cmd.arg("-f").arg(f);
        }
        let out = cmd.output().expect("kubectl runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    fn ok(&self, args: &[&str], file: Option<&Path>) -> String {
        let (ok, text) = self.run(args, file);
        assert!(ok, "kubectl {args:?} failed:\n{text}");
        text
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_gets_describes_and_deletes_a_custom_resource() {
    let bin = kubectl_path();
    let server = ApiServer::start().await.unwrap();
    let dir = std::env::temp_dir().join(format!("kubeward-kubectl-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let crd = dir.join("crd.yaml");
    std::fs::write(&crd, CRD_YAML).unwrap();
    let obj = dir.join("rollout.yaml");
    std::fs::write(&obj, ROLLOUT_YAML).unwrap();
    let k = Kubectl {
        bin,
        kubeconfig,
        cache: dir.join("cache"),
    };

    let kc = k.clone_for_blocking();
    let (crd2, obj2) = (crd.clone(), obj.clone());
    let created = tokio::task::spawn_blocking(move || {
        let a = kc.ok(&["create"], Some(&crd2));
        let b = kc.ok(&["create"], Some(&obj2));
        (a, b)
    })
    .await
    .unwrap();
    assert!(
        created.0.contains(
            "customresourcedefinition.apiextensions.k8s.io/rollouts.demo.kubeward.dev created"
        ),
        "{}",
        created.0
    );
    assert!(
        created.1.contains("rollout.demo.kubeward.dev/web created"),
        "{}",
        created.1
    );

    let stored = server
        .object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
        .expect("stored");
    assert_eq!(stored["spec"]["replicas"], 3);

    let events: Api<Event> = Api::namespaced(server.client().unwrap(), "default");
    let event: Event = serde_json::from_value(json!({
        "metadata": {"name": "web.1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "demo.kubeward.dev/rollouts",
        "reportingInstance": "rollouts-0",
        "action": "Reconcile",
        "reason": "RolloutStarted",
        "type": "Normal",
        "note": "rolling out generation 1",
        "regarding": {"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "namespace": "default",
                      "name": "web", "uid": stored["metadata"]["uid"]},
    }))
    .unwrap();
    events.create(&PostParams::default(), &event).await.unwrap();

    // Both kinds of apply: client-side (a merge patch for custom resources) and server-side.
    let scaled = dir.join("rollout-4.yaml");
    std::fs::write(&scaled, ROLLOUT_YAML.replace("replicas: 3", "replicas: 4")).unwrap();
    let ssa = dir.join("rollout-5.yaml");
    std::fs::write(&ssa, ROLLOUT_YAML.replace("replicas: 3", "replicas: 5")).unwrap();
    let kc = k.clone_for_blocking();
    let applied = tokio::task::spawn_blocking(move || {
        let client_side = kc.ok(&["apply"], Some(&scaled));
        let server_side = kc.ok(&["apply", "--server-side", "--force-conflicts"], Some(&ssa));
        (client_side, server_side)
    })
    .await
    .unwrap();
    assert!(
        applied
            .0
            .contains("rollout.demo.kubeward.dev/web configured"),
        "{}",
        applied.0
    );
    assert!(
        applied
            .1
            .contains("rollout.demo.kubeward.dev/web serverside-applied"),
        "{}",
        applied.1
    );
    let stored = server
        .object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
        .expect("stored");
    assert_eq!(stored["spec"]["replicas"], 5);
    assert!(
        stored["metadata"]["managedFields"]
            .as_array()
            .is_some_and(|m| m.iter().any(|e| e["manager"] == "kubectl")),
        "kubectl's server-side apply is recorded: {}",
        stored["metadata"]["managedFields"]
    );

    let kc = k.clone_for_blocking();
    let (get, describe, deleted, after) = tokio::task::spawn_blocking(move || {
        let get = kc.ok(&["get", "rollouts", "web"], None);
        let describe = kc.ok(&["describe", "rollout", "web"], None);
        let deleted = kc.ok(&["delete", "rollout", "web"], None);
        let after = kc.run(&["get", "rollout", "web"], None);
        (get, describe, deleted, after)
    })
    .await
    .unwrap();
    assert!(
        get.lines().next().unwrap_or_default().starts_with("NAME"),
        "{get}"
    );
    assert!(
        get.lines().nth(1).unwrap_or_default().starts_with("web "),
        "{get}"
    );
    assert!(describe.contains("Name:         web"), "{describe}");
    assert!(describe.contains("Replicas:  5"), "{describe}");
    assert!(
        describe.contains("RolloutStarted"),
        "describe lists the event:\n{describe}"
    );
    assert!(describe.contains("rolling out generation 1"), "{describe}");
    assert!(
        deleted.contains("rollout.demo.kubeward.dev \"web\" deleted"),
        "{deleted}"
    );
    assert!(!after.0, "{}", after.1);
    assert!(
        after.1.contains("NotFound") || after.1.contains("not found"),
        "{}",
        after.1
    );
    assert!(
        server
            .object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
            .is_none()
    );
}

impl Kubectl {
    fn clone_for_blocking(&self) -> Self {
        Self {
            bin: self.bin.clone(),
            kubeconfig: self.kubeconfig.clone(),
            cache: self.cache.clone(),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_works_with_built_in_configmaps_and_events() {
    let bin = kubectl_path();
    let server = ApiServer::start().await.unwrap();
    let dir = std::env::temp_dir().join(format!("kubeward-kubectl-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let k = Kubectl {
        bin,
        kubeconfig,
        cache: dir.join("cache"),
    };
    let kc = k.clone_for_blocking();
    // kubectl's typed generators send protobuf.
    let created = tokio::task::spawn_blocking(move || {
        kc.ok(
            &[
                "create",
                "configmap",
                "settings",
                "--from-literal=mode=fast",
            ],
            None,
        )
    })
    .await
    .unwrap();
    assert!(created.contains("configmap/settings created"), "{created}");
    let stored = server
        .object("v1", "configmaps", Some("default"), "settings")
        .expect("stored");
    assert_eq!(stored["data"]["mode"], "fast");
    // The empty generateName of the protobuf body decodes to Go's zero value, which JSON omits.
    assert!(stored["metadata"].get("generateName").is_none(), "{stored}");

    let kc = k.clone_for_blocking();
    let created =
        tokio::task::spawn_blocking(move || kc.ok(&["create", "serviceaccount", "robot"], None))
            .await
            .unwrap();
    assert!(
        created.contains("serviceaccount/robot created"),
        "{created}"
    );
    let posted = server
        .requests()
        .into_iter()
        .find(|r| r.method == http::Method::POST && r.path.ends_with("/serviceaccounts"))
        .expect("the serviceaccount POST");
    assert_eq!(
        posted.content_type.as_deref(),
        Some("application/vnd.kubernetes.protobuf"),
        "kubectl sends protobuf"
    );
    assert!(
        server
            .object("v1", "serviceaccounts", Some("default"), "robot")
            .is_some()
    );

    let events: Api<Event> = Api::namespaced(server.client().unwrap(), "default");
    let event: Event = serde_json::from_value(json!({
        "metadata": {"name": "settings.1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "demo.kubeward.dev/config",
        "reportingInstance": "config-0",
        "action": "Validate",
        "reason": "ConfigInvalid",
        "type": "Warning",
        "note": "mode fast needs a cache",
        "regarding": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default",
                      "name": "settings", "uid": stored["metadata"]["uid"]},
    }))
    .unwrap();
    events.create(&PostParams::default(), &event).await.unwrap();

    let kc = k.clone_for_blocking();
    let (describe, listed, deleted) = tokio::task::spawn_blocking(move || {
        (
            kc.ok(&["describe", "configmap", "settings"], None),
            kc.ok(&["get", "events"], None),
            kc.ok(&["delete", "configmap", "settings"], None),
        )
    })
    .await
    .unwrap();
    assert!(describe.contains("mode:"), "{describe}");
    assert!(
        describe.contains("ConfigInvalid") && describe.contains("mode fast needs a cache"),
        "{describe}"
    );
    let header: Vec<&str> = listed
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{listed}"
    );
    assert!(
        listed.contains("Warning   ConfigInvalid   configmap/settings   mode fast needs a cache"),
        "{listed}"
    );
    assert!(
        deleted.contains("configmap \"settings\" deleted"),
        "{deleted}"
    );
    assert!(
        server
            .object("v1", "configmaps", Some("default"), "settings")
            .is_none()
    );
}

impl Kubectl {
    /// Starts a long-running kubectl (`get -w`); its stdout lines arrive on the receiver.
    fn spawn_lines(&self, args: &[&str]) -> (KilledOnDrop, std::sync::mpsc::Receiver<String>) {
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
        (KilledOnDrop(child), rx)
    }
}

/// A child process killed when the test ends, however it ends.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The next `n` lines, within a generous bound.
fn next_lines(lines: &std::sync::mpsc::Receiver<String>, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            lines
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("kubectl printed a line before the deadline")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_prints_updates_as_rows_under_the_lists_header() {
    let bin = kubectl_path();
    let server = ApiServer::start().await.unwrap();
    let dir = std::env::temp_dir().join(format!("kubeward-kubectl-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let mut crd = apiserver_support::rollout_crd_json(true);
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = json!([
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]);
    server
        .install_crd(&serde_json::from_value(crd).unwrap())
        .unwrap();
    let api = apiserver_support::rollouts(&server.client().unwrap(), "default");
    api.create(
        &PostParams::default(),
        &apiserver_support::rollout("web", json!({"replicas": 3})),
    )
    .await
    .unwrap();
    let k = Kubectl {
        bin,
        kubeconfig,
        cache: dir.join("cache"),
    };
    let (_kubectl, lines) = k.spawn_lines(&["get", "rollouts", "-w"]);
    let (lines, listed) = tokio::task::spawn_blocking(move || {
        let listed = next_lines(&lines, 2);
        (lines, listed)
    })
    .await
    .unwrap();
    let columns =
        |line: &str| -> Vec<String> { line.split_whitespace().map(str::to_string).collect() };
    assert_eq!(
        columns(&listed[0]),
        ["NAME", "REPLICAS", "AGE"],
        "{listed:?}"
    );
    assert_eq!(columns(&listed[1])[..2], ["web", "3"], "{listed:?}");

    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    api.create(
        &PostParams::default(),
        &apiserver_support::rollout("api", json!({"replicas": 1})),
    )
    .await
    .unwrap();
    let updates = tokio::task::spawn_blocking(move || next_lines(&lines, 2))
        .await
        .unwrap();
    // The updates are rows of the same table: no second header, the same three columns.
    let rows: Vec<Vec<String>> = updates.iter().map(|l| columns(l)).collect();
    assert_eq!(rows[0].len(), 3, "{updates:?}");
    assert_eq!(rows[0][..2], ["web", "4"], "{updates:?}");
    assert_eq!(rows[1][..2], ["api", "1"], "{updates:?}");
}
