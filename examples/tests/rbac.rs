//! The ClusterRole that `rollouts rbac` prints is sufficient and minimal: the scenario completes
//! with a client restricted to exactly its rules, and fails — with a 403 seen by the API
//! server — when any single verb of any rule is taken away.

use std::time::Duration;

use k8s_openapi::api::rbac::v1::PolicyRule;
use kubeward_examples::rollouts::operator::LeaseOptions;
use kubeward_examples::rollouts::rbac;
use kubeward_examples::rollouts::scenario::{
    RunningOperator, ScenarioError, ScenarioOptions, drive, embedded_server,
};
use kubeward_testing::ApiServer;

const USER: &str = "system:serviceaccount:default:rollouts";

/// Runs the scenario with the operator restricted to `rules`; the result and whether the
/// server answered the operator with a 403.
async fn scenario_with(
    rules: Vec<PolicyRule>,
    stage_timeout: Duration,
    leader_election: Option<LeaseOptions>,
) -> (Result<(), ScenarioError>, bool, String) {
    let server: ApiServer = embedded_server().await.expect("server");
    let admin = server.client().expect("admin client");
    let restricted = server
        .client_with_rules(USER, rules)
        .expect("restricted client");
    let options = ScenarioOptions {
        stage_timeout,
        leader_election,
        ..ScenarioOptions::default()
    };
    let operator = RunningOperator::start(restricted, &options.operator()).expect("operator");
    let mut output = Vec::new();
    let result = drive(&admin, &operator, &options, &mut output)
        .await
        .map(|_| ());
    let _ = operator.stop().await;
    let forbidden = server
        .requests()
        .iter()
        .any(|r| r.user == USER && r.status == 403);
    (
        result,
        forbidden,
        String::from_utf8_lossy(&output).into_owned(),
    )
}

fn describe(rule: &PolicyRule) -> String {
    format!(
        "{:?} {:?}",
        rule.api_groups.as_deref().unwrap_or_default(),
        rule.resources.as_deref().unwrap_or_default()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_role_is_sufficient_and_every_verb_of_it_is_needed() {
    let rules = rbac::rules(false);
    let (result, forbidden, output) =
        scenario_with(rules.clone(), Duration::from_secs(30), None).await;
    if let Err(error) = result {
        panic!("the scenario fails with the printed role: {error}\n{output}");
    }
    assert!(
        !forbidden,
        "the operator was refused something with the printed role"
    );

    // Take away one verb at a time; the runs are independent, so they run at once. A stage
    // that cannot complete fails after the (short) stage timeout.
    let mut removals = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        for verb in &rule.verbs {
            let mut reduced = rules.clone();
            reduced[index].verbs.retain(|v| v != verb);
            if reduced[index].verbs.is_empty() {
                reduced.remove(index);
            }
            let what = format!("{verb} on {}", describe(rule));
            removals.push(async move {
                let (result, forbidden, _) =
                    scenario_with(reduced, Duration::from_secs(5), None).await;
                (what, result.is_err(), forbidden)
            });
        }
    }
    let outcomes = futures::future::join_all(removals).await;
    let unneeded: Vec<&String> = outcomes
        .iter()
        .filter(|(_, failed, forbidden)| !(*failed && *forbidden))
        .map(|(what, _, _)| what)
        .collect();
    assert!(
        unneeded.is_empty(),
        "the scenario completes (or fails without a 403) without: {unneeded:#?}"
    );
}

/// Timings short enough that a lost lease shows within the scenario: renewals every 200 ms,
/// leadership lost after 1.5 s without one.
fn fast_lease() -> LeaseOptions {
    LeaseOptions {
        namespace: "default".into(),
        timings: (
            Duration::from_secs(2),
            Duration::from_millis(1500),
            Duration::from_millis(200),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_leader_election_the_lease_rule_is_sufficient_and_each_of_its_verbs_is_needed() {
    let rules = rbac::rules(true);
    let (result, forbidden, output) =
        scenario_with(rules.clone(), Duration::from_secs(30), Some(fast_lease())).await;
    if let Err(error) = result {
        panic!("the scenario fails with the printed role and leader election: {error}\n{output}");
    }
    assert!(
        !forbidden,
        "the operator was refused something with the printed role"
    );

    let (index, lease) = rules
        .iter()
        .enumerate()
        .find(|(_, r)| r.resources.as_deref() == Some(&["leases".to_owned()][..]))
        .expect("a Lease rule with --leader-election");
    let removals = lease.verbs.iter().map(|verb| {
        let mut reduced = rules.clone();
        reduced[index].verbs.retain(|v| v != verb);
        let verb = verb.clone();
        async move {
            let (result, forbidden, _) =
                scenario_with(reduced, Duration::from_secs(5), Some(fast_lease())).await;
            (verb, result.is_err(), forbidden)
        }
    });
    let outcomes = futures::future::join_all(removals).await;
    let unneeded: Vec<&String> = outcomes
        .iter()
        .filter(|(_, failed, forbidden)| !(*failed && *forbidden))
        .map(|(verb, _, _)| verb)
        .collect();
    assert!(
        unneeded.is_empty(),
        "the scenario completes without the lease verbs {unneeded:?}"
    );
}
