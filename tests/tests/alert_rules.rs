//! The example operator's Prometheus alert rules (`examples/alerts`): promtool accepts them, their
//! unit tests pass, the PrometheusRule ships the same groups, and every guard is load-bearing —
//! with any one guard removed from any one rule, the unit tests fail in the scenario that guard
//! exists for.
//!
//! Needs `promtool` on PATH (Debian's `prometheus` package; `.ci/run` installs it). Without it these
//! tests fail, they never pass silently.

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RULES: &str = "rollouts.rules.yaml";
const TESTS: &str = "rollouts.tests.yaml";
const PROMETHEUS_RULE: &str = "prometheusrule.yaml";

/// Every guard marker (`# guard: <name>` at the end of a rule line) and the `name:` of the test
/// group in `rollouts.tests.yaml` that must fail once that guard is removed.
const GUARDS: &[(&str, &str)] = &[
    ("no-storm", "no-storm"),
    ("suspended", "suspended"),
    ("restart", "restart"),
    ("missed-scrape", "missed-scrape"),
];

const MARKER: &str = "# guard: ";

fn alerts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/alerts")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn promtool(args: &[&str], dir: &Path) -> Output {
    match Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
    {
        Ok(output) => output,
        Err(e) if e.kind() == ErrorKind::NotFound => panic!(
            "`promtool` is not on PATH: install Debian's `prometheus` package \
             (`apt-get install -y prometheus`, as .ci/run does) to run the alert rule tests"
        ),
        Err(e) => panic!("running promtool {args:?}: {e}"),
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn assert_success(args: &[&str], dir: &Path) {
    let output = promtool(args, dir);
    assert!(
        output.status.success(),
        "promtool {args:?} in {} failed:\n{}",
        dir.display(),
        text(&output)
    );
}

/// The guard named by a rule line's trailing marker, if any. Whole-line YAML comments (the file's
/// own documentation of the markers) are not rule lines.
fn guard_of(line: &str) -> Option<&str> {
    if line.trim_start().starts_with('#') {
        return None;
    }
    let at = line.rfind(MARKER)?;
    let name = line[at + MARKER.len()..].trim();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    valid.then_some(name)
}

/// Whether a line starts a rule (`- alert:` or `- record:`).
fn starts_rule(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("- alert:") || line.starts_with("- record:")
}

/// One guard in one rule: the unit a test removes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    guard: String,
    /// Index of the rule in the file (0-based, in order of appearance).
    rule: usize,
    /// The rule's `- alert: ...` line, for messages.
    rule_line: String,
    /// The rule's alert name.
    alert: String,
}

fn sites(rules: &str) -> Vec<Site> {
    let mut sites = Vec::new();
    let mut rule: Option<(usize, &str)> = None;
    for line in rules.lines() {
        if starts_rule(line) {
            rule = Some((rule.map_or(0, |(i, _)| i + 1), line.trim()));
        }
        if let Some(guard) = guard_of(line) {
            let (index, rule_line) =
                rule.unwrap_or_else(|| panic!("guard marker outside any rule: {line:?}"));
            let alert = rule_line
                .split_once("alert:")
                .map_or("", |(_, name)| name.trim());
            let site = Site {
                guard: guard.to_owned(),
                rule: index,
                rule_line: rule_line.to_owned(),
                alert: alert.to_owned(),
            };
            if !sites.contains(&site) {
                sites.push(site);
            }
        }
    }
    sites
}

/// The rule file without the lines that carry `site`'s guard in `site`'s rule.
fn without(rules: &str, site: &Site) -> String {
    let mut rule: Option<usize> = None;
    let mut kept = String::new();
    for line in rules.lines() {
        if starts_rule(line) {
            rule = Some(rule.map_or(0, |i| i + 1));
        }
        if rule == Some(site.rule) && guard_of(line) == Some(site.guard.as_str()) {
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    kept
}

/// Whether promtool's failure report has a failed check of `alert` in test group `scenario`. It
/// reports each as `name: <group>,` followed by `alertname: <alert>, time: <t>,` on the next line.
fn fails_in(output: &str, scenario: &str, alert: &str) -> bool {
    let group = format!("name: {scenario},");
    let check = format!("alertname: {alert},");
    let lines: Vec<&str> = output.lines().map(str::trim).collect();
    lines
        .windows(2)
        .any(|pair| pair[0] == group && pair[1].starts_with(&check))
}

/// A fresh scratch directory under the system temp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kubeward-alert-rules-{}-{name}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
}

/// `prometheusrule.yaml` as it must be: its own header up to `spec:`, then the rule file from
/// `groups:` on, indented under `spec`.
fn expected_prometheus_rule(rules: &str, current: &str) -> String {
    let header_end = current
        .lines()
        .position(|line| line == "spec:")
        .expect("prometheusrule.yaml has a top-level `spec:` line");
    let mut out: String = current
        .lines()
        .take(header_end + 1)
        .flat_map(|line| [line, "\n"])
        .collect();
    let groups = rules
        .lines()
        .skip_while(|line| *line != "groups:")
        .collect::<Vec<_>>();
    assert!(!groups.is_empty(), "{RULES} has a top-level `groups:` line");
    for line in groups {
        if !line.is_empty() {
            out.push_str("  ");
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[test]
fn rule_file_passes_promtool_check_and_unit_tests() {
    let dir = alerts_dir();
    assert_success(&["check", "rules", RULES], &dir);
    assert_success(&["test", "rules", TESTS], &dir);
}

#[test]
fn prometheus_rule_spec_is_the_rule_file() {
    let dir = alerts_dir();
    let rules = read(&dir.join(RULES));
    let current = read(&dir.join(PROMETHEUS_RULE));
    assert!(current.contains("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\n"));
    let expected = expected_prometheus_rule(&rules, &current);
    if current != expected && std::env::var_os("KUBEWARD_BLESS").is_some() {
        fs::write(dir.join(PROMETHEUS_RULE), &expected).expect("writing prometheusrule.yaml");
        return;
    }
    assert!(
        current == expected,
        "{PROMETHEUS_RULE}'s spec differs from {RULES}; regenerate it with \
         `KUBEWARD_BLESS=1 cargo test -p kubeward-tests --test alert_rules`"
    );
}

#[test]
fn every_guard_marker_is_known_and_every_guard_is_marked() {
    let rules = read(&alerts_dir().join(RULES));
    let marked: BTreeSet<String> = sites(&rules).into_iter().map(|s| s.guard).collect();
    let known: BTreeSet<String> = GUARDS.iter().map(|(g, _)| (*g).to_owned()).collect();
    assert_eq!(
        marked, known,
        "the guards marked in {RULES} and the guards this test knows differ"
    );
}

#[test]
fn removing_any_guard_from_any_rule_fails_its_scenario() {
    let dir = alerts_dir();
    let rules = read(&dir.join(RULES));
    let tests = read(&dir.join(TESTS));
    let sites = sites(&rules);
    assert!(sites.len() >= GUARDS.len(), "guard sites found: {sites:?}");

    let scratch = scratch("guards");
    fs::write(scratch.join(TESTS), &tests).expect("copying the unit tests");
    let mut problems = Vec::new();
    for site in &sites {
        let scenario = GUARDS
            .iter()
            .find(|(guard, _)| *guard == site.guard)
            .map(|(_, scenario)| *scenario)
            .unwrap_or_else(|| panic!("unknown guard {:?}", site.guard));
        let stripped = without(&rules, site);
        assert_ne!(stripped, rules, "{site:?} removed nothing");
        fs::write(scratch.join(RULES), &stripped).expect("writing the stripped rules");

        // Still valid PromQL and YAML: the failure below is the guard's behaviour, not a syntax error.
        let check = promtool(&["check", "rules", RULES], &scratch);
        if !check.status.success() {
            problems.push(format!(
                "without guard {:?} in `{}` the rules no longer load:\n{}",
                site.guard,
                site.rule_line,
                text(&check)
            ));
            continue;
        }
        let test = promtool(&["test", "rules", TESTS], &scratch);
        let output = text(&test);
        if test.status.success() {
            problems.push(format!(
                "without guard {:?} in `{}` the unit tests still pass: no scenario covers it",
                site.guard, site.rule_line
            ));
        } else if !fails_in(&output, scenario, &site.alert) {
            problems.push(format!(
                "without guard {:?} in `{}` the unit tests fail, but no {} check of scenario \
                 {scenario:?} does:\n{output}",
                site.guard, site.rule_line, site.alert
            ));
        }
    }
    let _ = fs::remove_dir_all(&scratch);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn stripping_removes_exactly_one_guard_of_one_rule() {
    let rules = "\
groups:
  - name: g
    rules:
      - alert: A
        expr: |
          max without (pod) (  # guard: restart
            x  # guard: other
          )  # guard: restart
      - alert: B
        expr: |
          max without (pod) (  # guard: restart
            y
          )  # guard: restart
";
    let found = sites(rules);
    assert_eq!(
        found
            .iter()
            .map(|s| (s.guard.as_str(), s.rule))
            .collect::<Vec<_>>(),
        [("restart", 0), ("other", 0), ("restart", 1)]
    );
    assert_eq!(
        without(rules, &found[0]),
        "\
groups:
  - name: g
    rules:
      - alert: A
        expr: |
            x  # guard: other
      - alert: B
        expr: |
          max without (pod) (  # guard: restart
            y
          )  # guard: restart
"
    );
}

#[test]
fn failure_report_is_matched_by_group_and_alert() {
    let report = "\
Unit Testing:  rollouts.tests.yaml
  FAILED:
    name: restart,
    alertname: KubewardRolloutInProgress, time: 40m, 
        exp:[], 
        got:[]
";
    assert!(fails_in(report, "restart", "KubewardRolloutInProgress"));
    assert!(!fails_in(report, "restart", "KubewardRolloutStuck"));
    assert!(!fails_in(
        report,
        "missed-scrape",
        "KubewardRolloutInProgress"
    ));
}
