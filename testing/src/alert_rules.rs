//! Checks generated alert rules ([`kubeward::alerts::AlertRules`]) with `promtool`: the rules
//! load, their scenarios pass, and every guard is load-bearing — with any one guard removed from
//! any one rule, the scenarios fail in the test group named after that guard.
//!
//! Needs `promtool` on PATH (Debian's `prometheus` package). Without it the check fails with a
//! message saying so; it never passes silently.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kubeward::alerts::AlertRules;

const MARKER: &str = "# guard: ";

/// Panics, listing every problem, unless `alerts`' rules pass `promtool check rules`, its
/// scenarios pass `promtool test rules`, and removing any guard from any rule makes the scenario
/// named after the guard fail.
///
/// ```no_run
/// # fn rules() -> kubeward::alerts::AlertRules { unimplemented!() }
/// // in a test of your controller:
/// kubeward_testing::assert_alert_rules(&rules());
/// ```
pub fn assert_alert_rules(alerts: &AlertRules) {
    let problems = check(
        &RuleSet {
            rules_file: alerts.rules_file_name(),
            rules: alerts.rules(),
            tests_file: alerts.tests_file_name(),
            tests: alerts.tests(),
        },
        &alerts.guards(),
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A rule file and its promtool scenarios, by file name (the scenarios load the rules by it).
pub(crate) struct RuleSet {
    pub rules_file: String,
    pub rules: String,
    pub tests_file: String,
    pub tests: String,
}

/// The problems with `set`, empty when there are none; `guards` are the guards it must carry.
pub(crate) fn check(set: &RuleSet, guards: &[&str]) -> Vec<String> {
    let scratch = Scratch::new();
    let dir = scratch.path();
    write(&dir.join(&set.tests_file), &set.tests);
    write(&dir.join(&set.rules_file), &set.rules);
    let mut problems = Vec::new();
    for args in [
        ["check", "rules", set.rules_file.as_str()],
        ["test", "rules", set.tests_file.as_str()],
    ] {
        let output = promtool(&args, dir);
        if !output.status.success() {
            problems.push(format!("promtool {args:?} failed:\n{}", text(&output)));
        }
    }
    if !problems.is_empty() {
        return problems;
    }
    let sites = sites(&set.rules);
    for guard in guards {
        if !sites.iter().any(|s| s.guard == *guard) {
            problems.push(format!("guard {guard:?} is marked on no rule line"));
        }
    }
    for site in &sites {
        if !guards.contains(&site.guard.as_str()) {
            problems.push(format!(
                "unknown guard {:?} in `{}`",
                site.guard, site.rule_line
            ));
            continue;
        }
        let stripped = without(&set.rules, site);
        write(&dir.join(&set.rules_file), &stripped);
        // Still valid PromQL and YAML: the failure below is the guard's behaviour, not a syntax error.
        let check = promtool(&["check", "rules", &set.rules_file], dir);
        if !check.status.success() {
            problems.push(format!(
                "without guard {:?} in `{}` the rules no longer load:\n{}",
                site.guard,
                site.rule_line,
                text(&check)
            ));
            continue;
        }
        let test = promtool(&["test", "rules", &set.tests_file], dir);
        let output = text(&test);
        if test.status.success() {
            problems.push(format!(
                "without guard {:?} in `{}` the unit tests still pass: no scenario covers it",
                site.guard, site.rule_line
            ));
        } else if !fails_in(&output, &site.guard, &site.alert) {
            problems.push(format!(
                "without guard {:?} in `{}` the unit tests fail, but no {} check of scenario \
                 {:?} does:\n{output}",
                site.guard, site.rule_line, site.alert, site.guard
            ));
        }
    }
    problems
}

fn write(path: &Path, contents: &str) {
    fs::write(path, contents).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
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
             (`apt-get install -y prometheus`, as scripts/test does) to check alert rules"
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

/// One guard in one rule: the unit a check removes.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// A fresh directory under the system temp dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("kubeward-alert-rules-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        Self(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_guard_no_scenario_needs_is_reported() {
        use kubeward::conditions::ConditionStatus::*;
        use kubeward::vocabulary::{Reason, Vocabulary};
        static GATED: Vocabulary = Vocabulary {
            type_: "UpToDate",
            reasons: &[
                Reason::new("Applying", Unknown).initial(),
                Reason::new("WaitingForApproval", False).gate(),
                Reason::new("FailedDeploy", False),
                Reason::new("Applied", True),
            ],
        };
        let alerts = AlertRules::new("demo.kubeward.dev/rollouts", "Rollout", &GATED);
        let mut set = RuleSet {
            rules_file: alerts.rules_file_name(),
            rules: alerts.rules(),
            tests_file: alerts.tests_file_name(),
            tests: alerts.tests(),
        };
        assert!(check(&set, &alerts.guards()).is_empty());
        // Drop the human-gate scenario: its guard is no longer needed by any test.
        let at = set.tests.find("\n  - name: human-gate\n").unwrap();
        set.tests.truncate(at);
        let problems = check(&set, &alerts.guards());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with(
                "without guard \"human-gate\" in `- alert: KubewardRolloutStuck` the unit tests still pass"
            ),
            "{problems:?}"
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
}
