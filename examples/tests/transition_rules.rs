//! The `UpToDate` vocabulary enforced by the API server for every writer, through the CEL rules
//! `kubeward::crd` generates into the Rollout CRD: on the API server `KUBEWARD_TEST_APISERVER`
//! picks (`scripts/test` runs it on the real kube-apiserver too). Every (from, to) pair of the
//! vocabulary is tried, none sampled: a declared transition (or staying) is stored, any other is
//! refused with 422 and the compile error's words.

use std::collections::{BTreeMap, VecDeque};

use kube::api::{Api, Patch, PatchParams, PostParams};
use kubeward::vocabulary::Vocabulary;
use kubeward::{Action, Pass, Reconciler};
use kubeward_examples::rollouts::scenario::cluster;
use kubeward_examples::rollouts::{Rollout, RolloutSpec, Rollouts, UpToDate};
use kubeward_testing::kubectl::Kubectl;
use serde_json::{Value, json};

fn vocabulary() -> &'static Vocabulary {
    Rollouts::CONDITIONS[0]
}

/// A condition of `type_` at `reason`, with `status`.
fn condition(type_: &str, reason: &str, status: &str) -> Value {
    json!({
        "type": type_,
        "status": status,
        "reason": reason,
        "message": format!("at {reason}"),
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    })
}

/// `UpToDate` at `reason`, with the status its declaration fixes.
fn up_to_date(reason: &str) -> Value {
    let status = vocabulary()
        .reason(reason)
        .map_or("Unknown", |r| r.status.as_str());
    condition("UpToDate", reason, status)
}

/// Writes `conditions` through the status subresource (a merge patch replaces the list).
async fn write(api: &Api<Rollout>, name: &str, conditions: Vec<Value>) -> Result<(), kube::Error> {
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": conditions}})),
    )
    .await
    .map(drop)
}

async fn create(api: &Api<Rollout>, name: &str) {
    let rollout = Rollout::new(
        name,
        RolloutSpec {
            image: "registry.example/web:1.0".into(),
            replicas: 1,
            strategy: Default::default(),
            timeout_seconds: 600,
            suspend: true,
        },
    );
    api.create(&PostParams::default(), &rollout)
        .await
        .expect("rollout created");
}

/// The declared path from the start state to every reason (breadth first).
fn paths() -> BTreeMap<&'static str, Vec<&'static str>> {
    let vocabulary = vocabulary();
    let mut paths = BTreeMap::new();
    let mut queue = VecDeque::new();
    for start in vocabulary.reasons.iter().filter(|r| r.initial) {
        paths.insert(start.name, vec![start.name]);
        queue.push_back(start.name);
    }
    while let Some(from) = queue.pop_front() {
        let path = paths[from].clone();
        for &to in vocabulary.reason(from).expect("declared").targets {
            paths.entry(to).or_insert_with(|| {
                queue.push_back(to);
                let mut longer = path.clone();
                longer.push(to);
                longer
            });
        }
    }
    paths
}

/// The 422's message and its causes' (field, message).
fn refusal(error: kube::Error) -> (String, Vec<(String, String)>) {
    match error {
        kube::Error::Api(status) => {
            assert_eq!(
                (status.code, status.reason.as_str()),
                (422, "Invalid"),
                "{status:?}"
            );
            let causes = status
                .details
                .map(|d| d.causes)
                .unwrap_or_default()
                .into_iter()
                .map(|c| (c.field, c.message))
                .collect();
            (status.message, causes)
        }
        other => panic!("expected a 422, got {other:?}"),
    }
}

/// The compile error's words for the undeclared `from -> to` (`targets` declared from `from`).
fn refused_transition(from: &str, targets: &[&str], to: &str) -> String {
    let targets: Vec<&str> = targets.iter().copied().filter(|t| *t != from).collect();
    let allowed = if targets.is_empty() {
        format!("from `{from}`, `UpToDate` may only stay `{from}`")
    } else {
        format!(
            "from `{from}`, `UpToDate` may go to {} (or stay `{from}`)",
            or_list(&targets)
        )
    };
    format!("`UpToDate` cannot go from `{from}` to `{to}`: {allowed}")
}

fn or_list(names: &[&str]) -> String {
    match names {
        [one] => format!("`{one}`"),
        [init @ .., last] => format!(
            "{} or `{last}`",
            init.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [] => unreachable!("every reason may at least stay"),
    }
}

#[tokio::test]
async fn every_declared_transition_is_stored_and_every_other_refused_in_the_compile_errors_words() {
    let cluster = cluster().await.expect("cluster");
    let api: Api<Rollout> = Api::namespaced(cluster.client().unwrap(), "default");
    let vocabulary = vocabulary();
    let paths = paths();
    assert_eq!(
        paths.len(),
        vocabulary.reasons.len(),
        "every reason is reachable from a start state"
    );
    let (mut stored, mut refused) = (0, 0);
    let mut objects = 0;
    for from in vocabulary.reasons {
        // An object at `from`, reached by its declared path; a fresh one after each pair that
        // moved it.
        let mut name = String::new();
        for to in vocabulary.reasons {
            if name.is_empty() {
                objects += 1;
                name = format!("rollout-{objects}");
                create(&api, &name).await;
                for step in &paths[from.name] {
                    write(&api, &name, vec![up_to_date(step)])
                        .await
                        .unwrap_or_else(|e| panic!("the declared path to {}: {e}", from.name));
                }
            }
            let result = write(&api, &name, vec![up_to_date(to.name)]).await;
            if vocabulary.allows(Some(from.name), to.name) {
                result.unwrap_or_else(|e| panic!("{} -> {}: {e}", from.name, to.name));
                stored += 1;
                if to.name != from.name {
                    name.clear();
                }
                continue;
            }
            refused += 1;
            let (message, causes) = refusal(result.expect_err("an undeclared transition"));
            assert_eq!(
                causes,
                [(
                    "status.conditions[0].reason".to_owned(),
                    format!(
                        "Invalid value: \"object\": {}",
                        refused_transition(from.name, from.targets, to.name)
                    )
                )],
                "{} -> {}: {message}",
                from.name,
                to.name
            );
            // The refused write left the condition where it was.
            let stored_reason = api
                .get_status(&name)
                .await
                .unwrap()
                .status
                .unwrap()
                .conditions[0]
                .reason
                .clone();
            assert_eq!(
                stored_reason, from.name,
                "{name} after {} -> {}",
                from.name, to.name
            );
        }
    }
    let reasons = vocabulary.reasons.len();
    assert_eq!(stored + refused, reasons * reasons, "every pair tried");
    assert!(
        refused > 0 && stored > reasons,
        "{stored} stored, {refused} refused"
    );
}

/// The message of a refused write's only cause (and that there is exactly one, on `field`).
fn only_cause(result: Result<(), kube::Error>, field: &str) -> String {
    let (message, causes) = refusal(result.expect_err("refused"));
    assert_eq!(causes.len(), 1, "{message}");
    assert_eq!(causes[0].0, field, "{message}");
    causes[0].1.clone()
}

#[tokio::test]
async fn a_condition_starts_only_at_a_start_state_also_after_a_removal() {
    let cluster = cluster().await.expect("cluster");
    let api: Api<Rollout> = Api::namespaced(cluster.client().unwrap(), "default");
    create(&api, "web").await;
    let starts_in = "a `UpToDate` condition starts in `Applying`";
    assert_eq!(
        only_cause(
            write(&api, "web", vec![up_to_date("Applied")]).await,
            "status.conditions[0].reason"
        ),
        format!("Invalid value: \"object\": `UpToDate` cannot start in `Applied`: {starts_in}")
    );
    for step in ["Applying", "ReadyToPromote", "Promoting", "Applied"] {
        write(&api, "web", vec![up_to_date(step)]).await.unwrap();
    }
    // Removed, then added back past its start state: refused like a first appearance.
    write(&api, "web", vec![]).await.unwrap();
    assert_eq!(
        only_cause(
            write(&api, "web", vec![up_to_date("Promoting")]).await,
            "status.conditions[0].reason"
        ),
        format!("Invalid value: \"object\": `UpToDate` cannot start in `Promoting`: {starts_in}")
    );
    write(&api, "web", vec![up_to_date("Applying")])
        .await
        .expect("back at its start state");
}

#[tokio::test]
async fn undeclared_reasons_and_statuses_are_refused_and_other_writers_types_stay_free() {
    let cluster = cluster().await.expect("cluster");
    let api: Api<Rollout> = Api::namespaced(cluster.client().unwrap(), "default");
    create(&api, "web").await;
    // A first appearance at a reason the vocabulary lacks breaks two rules.
    let (message, causes) = refusal(
        write(&api, "web", vec![condition("UpToDate", "Deployed", "True")])
            .await
            .expect_err("an undeclared reason"),
    );
    let causes: Vec<String> = causes.into_iter().map(|(_, m)| m).collect();
    assert_eq!(
        causes,
        [
            "Invalid value: \"object\": `UpToDate` has no reason `Deployed`: its reasons are \
             `Applying`, `WaitingForApproval`, `ReadyToPromote`, `Promoting`, `Applied`, \
             `RolloutTimeout` or `FailedDeploy`",
            "Invalid value: \"object\": `UpToDate` cannot start in `Deployed`: a `UpToDate` \
             condition starts in `Applying`",
        ],
        "{message}"
    );
    assert_eq!(
        only_cause(
            write(&api, "web", vec![condition("UpToDate", "Applying", "True")]).await,
            "status.conditions[0].status"
        ),
        "Invalid value: \"object\": `UpToDate` at `Applying` has status `Unknown`, not `True`"
    );
    // A condition type no vocabulary declares (another controller's) is not constrained.
    write(
        &api,
        "web",
        vec![
            condition("example.com/Audited", "Anything", "True"),
            up_to_date("Applying"),
        ],
    )
    .await
    .expect("another writer's condition");
    write(
        &api,
        "web",
        vec![
            condition("example.com/Audited", "SomethingElse", "False"),
            up_to_date("Applying"),
        ],
    )
    .await
    .expect("another writer's condition changes freely");
}

/// A condition stored at a reason the vocabulary does not have (an older version of the
/// operator's) may leave it only for a start state, as the controller itself does. The reason is
/// stored before the rules are installed, as an older CRD would have let it be.
#[tokio::test]
async fn from_an_unrecognized_reason_only_a_start_state_is_allowed() {
    let cluster = kubeward_testing::Cluster::start().await.expect("cluster");
    cluster
        .install_crd(&<Rollout as kube::CustomResourceExt>::crd())
        .await
        .expect("the CRD without rules");
    let api: Api<Rollout> = Api::namespaced(cluster.client().unwrap(), "default");
    create(&api, "old").await;
    write(&api, "old", vec![condition("UpToDate", "Deployed", "True")])
        .await
        .expect("no rules yet");
    // The CRD with the rules replaces it; the server takes a moment to enforce them.
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(cluster.client().unwrap());
    let mut with_rules = kubeward_examples::rollouts::operator::crd();
    with_rules.metadata.resource_version = crds
        .get("rollouts.demo.kubeward.dev")
        .await
        .unwrap()
        .metadata
        .resource_version;
    crds.replace(
        "rollouts.demo.kubeward.dev",
        &PostParams::default(),
        &with_rules,
    )
    .await
    .expect("the CRD with rules");
    let refused = "Invalid value: \"object\": `UpToDate` cannot go from an unrecognized reason to \
                   `Applied`: from a reason outside the vocabulary, `UpToDate` may go to its \
                   start states: `Applying`";
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match write(&api, "old", vec![up_to_date("Applied")]).await {
            Err(error) => {
                let (message, causes) = refusal(error);
                assert!(causes.iter().any(|(_, m)| m == refused), "{message}");
                break;
            }
            Ok(()) => {
                // The old rules still served the write: put the old reason back and retry.
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the rules were never enforced"
                );
                write(&api, "old", vec![condition("UpToDate", "Deployed", "True")])
                    .await
                    .expect("still no rules");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        }
    }
    write(&api, "old", vec![up_to_date("Applying")])
        .await
        .expect("to the start state");
}

/// What a user sees: `kubectl patch --subresource=status` with an undeclared transition fails
/// with the compile error's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_patch_of_an_undeclared_transition_fails_with_the_rules_message() {
    let cluster = cluster().await.expect("cluster");
    let api: Api<Rollout> = Api::namespaced(cluster.client().unwrap(), "default");
    create(&api, "web").await;
    write(&api, "web", vec![up_to_date("Applying")])
        .await
        .unwrap();
    let dir = std::env::temp_dir().join(format!("kubeward-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    cluster.write_kubeconfig(&kubeconfig).unwrap();
    let patch = json!({"status": {"conditions": [up_to_date("Promoting")]}}).to_string();
    let output = Kubectl::new(&kubeconfig).output(&[
        "patch",
        "rollout",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ]);
    let stderr = output.stderr;
    assert!(!output.success, "{stderr}");
    assert!(
        stderr.contains(
            "The Rollout \"web\" is invalid: status.conditions[0].reason: Invalid value: \"object\": \
             `UpToDate` cannot go from `Applying` to `Promoting`: from `Applying`, `UpToDate` may go \
             to `WaitingForApproval`, `ReadyToPromote`, `FailedDeploy` or `RolloutTimeout` (or stay \
             `Applying`)"
        ),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reconciler whose single pass walks `UpToDate` through every stage at once (typed, each
/// step a declared transition from the one before): `Applying` → `ReadyToPromote` → `Promoting`
/// → `Applied`.
struct Sprint;

#[kubeward::reconciler(
    resource = Rollout,
    controller = "test.kubeward.dev/sprint",
    conditions(UpToDate),
)]
impl Sprint {
    async fn apply(
        &self,
        _rollout: &Rollout,
        pass: &mut Pass<Rollout>,
    ) -> Result<Action, std::convert::Infallible> {
        use kubeward_examples::rollouts::condition::up_to_date::{
            Applied, Applying, Promoting, ReadyToPromote, State,
        };
        loop {
            let next = match pass.condition::<UpToDate>() {
                State::Absent(now) => now.to(Applying, "staging"),
                State::Applying(now) => now.to(ReadyToPromote, "verified"),
                State::ReadyToPromote(now) => now.to(Promoting, "promoting"),
                State::Promoting(now) => now.to(Applied, "live"),
                _ => return Ok(Action::await_change()),
            };
            pass.set(next);
        }
    }
}

/// Runs `reconciler` on a new Rollout `web` until the events about it name the reasons
/// `expected`, in order (a pass's failure events aside); asserts the stored `UpToDate` reason
/// is the last of them.
async fn walks<R: Reconciler<Resource = Rollout>>(reconciler: R, expected: &[&str]) {
    let cluster = cluster().await.expect("cluster");
    let client = cluster.client().unwrap();
    let api: Api<Rollout> = Api::namespaced(client.clone(), "default");
    let controller = kubeward::controller::Controller::new(reconciler, client.clone());
    let running = tokio::spawn(controller.run());
    create(&api, "web").await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    let reasons = |events: &[k8s_openapi::api::events::v1::Event]| -> Vec<String> {
        let mut events: Vec<_> = events
            .iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("web"))
            .filter(|e| e.reason.as_deref() != Some("ReconcileFailed"))
            .collect();
        events.sort_by_key(|e| e.event_time.clone().map(|t| t.0));
        events.iter().filter_map(|e| e.reason.clone()).collect()
    };
    let events_api: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(client.clone(), "default");
    loop {
        let events = events_api.list(&Default::default()).await.unwrap().items;
        if reasons(&events).len() >= expected.len() {
            assert_eq!(reasons(&events), expected, "one event per stored hop");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            reasons(&events)
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let stored = api.get_status("web").await.unwrap().status.unwrap();
    assert_eq!(
        Some(stored.conditions[0].reason.as_str()),
        expected.last().copied()
    );
    running.abort();
}

/// The controller's own writes never meet the rules, also when one pass makes several
/// transitions of one condition: the status is written one declared transition at a time, in
/// the same pass, every hop stored with its own event, none refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_that_makes_several_transitions_writes_them_one_declared_step_at_a_time() {
    walks(
        Sprint,
        &["Applying", "ReadyToPromote", "Promoting", "Applied"],
    )
    .await;
}

/// A deploy that can never work.
#[derive(Debug, thiserror::Error, kubeward::Terminal)]
enum Broken {
    #[terminal]
    #[error("image registry.example/web:broken not found")]
    Image,
}

/// A reconciler whose single pass walks `UpToDate` to `Promoting` and then fails terminally at
/// `FailedDeploy`.
struct Stumble;

#[kubeward::reconciler(
    resource = Rollout,
    controller = "test.kubeward.dev/stumble",
    conditions(UpToDate),
)]
impl Stumble {
    async fn apply(&self, _rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Broken> {
        use kubeward_examples::rollouts::condition::up_to_date::{
            Applying, FailedDeploy, Promoting, ReadyToPromote, State,
        };
        loop {
            let next = match pass.condition::<UpToDate>() {
                State::Absent(now) => now.to(Applying, "staging"),
                State::Applying(now) => now.to(ReadyToPromote, "verified"),
                State::ReadyToPromote(now) => now.to(Promoting, "promoting"),
                State::Promoting(now) => now.to(FailedDeploy, "image not found"),
                _ => return Err(Broken::Image),
            };
            pass.set(next);
        }
    }
}

/// A pass that walks a condition through several transitions and then fails terminally — so
/// no later pass runs — still stores its last reason and publishes the event of every hop it
/// wrote (`Applying` first: no other reason may start the condition; then `FailedDeploy`,
/// which `Applying` may go to directly).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_that_walks_a_path_and_fails_terminally_stores_the_whole_path() {
    walks(Stumble, &["Applying", "FailedDeploy"]).await;
}
