//! The example operator's alert rules: `examples/alerts` holds exactly what its declaration
//! generates (`rollouts alerts --out examples/alerts`), and they pass promtool with every guard
//! load-bearing. Needs `promtool` on PATH (Debian's `prometheus` package); fails without it.

use std::path::Path;

use kubeward_examples::rollouts::operator::alert_rules;

const REFRESH: &str =
    "cargo run -p kubeward-examples --bin rollouts -- alerts --out examples/alerts";

#[test]
fn checked_in_alert_files_are_the_generated_ones() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("alerts");
    let mut stale = Vec::new();
    for (name, generated) in alert_rules()
        .expect("the operator declares a condition")
        .files()
    {
        let path = dir.join(&name);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current != generated {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "examples/alerts/{{{}}} differ from what the operator's declaration generates: \
         they are generated output, refresh them with `{REFRESH}`",
        stale.join(",")
    );
}

#[test]
fn generated_rules_pass_promtool_and_need_every_guard() {
    let alerts = alert_rules().expect("the operator declares a condition");
    assert_eq!(
        alerts.guards(),
        [
            "no-storm",
            "suspended",
            "restart",
            "missed-scrape",
            "terminal",
            "human-gate"
        ]
    );
    kubeward_testing::assert_alert_rules(&alerts);
}
