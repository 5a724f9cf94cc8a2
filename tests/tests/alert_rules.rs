//! Alert rules generated from declarations other than the example's (`examples/tests/alerts.rs`
//! covers that one): a vocabulary without a human gate, and one with a gate, a failure that is
//! `Unknown`, info fields and a custom metric prefix. For each, the rules pass `promtool check
//! rules` and their generated scenarios, and every guard is load-bearing (removing it fails the
//! scenario named after it).
//!
//! Needs `promtool` on PATH (Debian's `prometheus` package; scripts/test installs it). Without it
//! these tests fail, they never pass silently.

use kube::runtime::events::EventType;
use kubeward::alerts::AlertRules;
use kubeward::conditions::ConditionStatus::*;
use kubeward::info::InfoField;
use kubeward::vocabulary::{Reason, Vocabulary};
use kubeward_testing::assert_alert_rules;

static READY: Vocabulary = Vocabulary {
    type_: "Ready",
    reasons: &[
        Reason::new("Provisioning", Unknown)
            .initial()
            .to(&["Running", "Crashed"]),
        Reason::new("Running", True).to(&["Provisioning"]),
        Reason::new("Crashed", False).to(&["Provisioning"]),
    ],
};

static SYNCED: Vocabulary = Vocabulary {
    type_: "Synced",
    reasons: &[
        Reason::new("Syncing", Unknown)
            .initial()
            .to(&["AwaitingReview", "Retrying", "Synced"]),
        Reason::new("AwaitingReview", False).gate().to(&["Syncing"]),
        // A failure that keeps the condition Unknown: the scenario's failing object uses it.
        Reason::new("Retrying", Unknown)
            .event(EventType::Warning)
            .to(&["Syncing"]),
        Reason::new("Synced", True).to(&["Syncing"]),
    ],
};

static SYNC_INFO: [InfoField; 1] = [InfoField::new("commit", "status.lastAppliedCommit")];

#[test]
fn rules_without_a_human_gate_pass_promtool_and_need_every_guard() {
    let alerts = AlertRules::new("apps.example.com/apps", "App", &READY);
    assert_eq!(
        alerts.guards(),
        [
            "no-storm",
            "suspended",
            "restart",
            "missed-scrape",
            "terminal"
        ]
    );
    assert!(alerts.rules().contains("- alert: KubewardAppStuck"));
    assert_alert_rules(&alerts);
}

#[test]
fn rules_with_a_gate_info_and_a_prefix_pass_promtool_and_need_every_guard() {
    let alerts = AlertRules::new("git.example.com/syncs", "GitSync", &SYNCED)
        .with_info(&SYNC_INFO)
        .with_prefix("acme");
    assert_eq!(alerts.guards().last(), Some(&"human-gate"));
    let rules = alerts.rules();
    assert!(rules.contains("acme_object_condition_reason{controller=\"git.example.com/syncs\", type=\"Synced\", class=\"waiting\"}"));
    assert!(!rules.contains("kubeward_object"));
    let tests = alerts.tests();
    assert!(tests.contains("reason=\"Retrying\",class=\"failed\""));
    assert!(tests.contains("(generation 2, commit v2)"));
    assert_alert_rules(&alerts);
}
