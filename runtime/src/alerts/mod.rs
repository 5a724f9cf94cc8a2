//! Prometheus alert rules and their `promtool test rules` scenarios, generated from a
//! controller's declaration: its name, its resource kind, the vocabulary of the condition that
//! says whether an object is up to date, and its info fields. No hand-written PromQL.
//!
//! | alert | severity | fires while |
//! |---|---|---|
//! | `Kubeward<Kind>InProgress` | info, no `for:` | an object's spec is not fully applied: its firing is the "rollout started" notice, its resolution the "rollout completed" one (`send_resolved: true`) |
//! | `Kubeward<Kind>Stuck` | warning | in progress for over 30 minutes counted from when the rollout started, or at once when its last pass failed with a [terminal](crate::Terminal) error, except while parked in a human gate; the summary names the current reason and its class |
//! | `KubewardReconcileFailing` | warning | passes fail (other than terminally) and none completes, for 10 minutes |
//! | `KubewardExporterAbsent` | warning | the controller's metrics are missing (once per controller, not per object), or its condition series are |
//!
//! The rules carry their guards, each marked on its lines by a PromQL comment `# guard: <name>`,
//! and the scenarios hold one test group per guard, named after it, that fails when the guard's
//! lines are removed ([`AlertRules::guards`]):
//!
//! - `no-storm`: a missing condition metric must not make every object alert forever;
//! - `suspended`: a suspended object must not hold a rollout open;
//! - `restart`: a new controller pod must not resolve and refire every alert;
//! - `missed-scrape`: a failed scrape must not resolve every alert (a false "completed");
//! - `terminal`: an object whose pass failed terminally (no retry will fix it) is stuck at once,
//!   and its one failure is no controller whose passes keep failing;
//! - `human-gate` (when the vocabulary declares a [gate](Reason::gate), a
//!   [`ReasonClass::Waiting`]): an object waiting for a human is in progress but never stuck.
//!
//! They read the metrics of [`ObjectMetrics`](crate::metrics::ObjectMetrics) and
//! [`Metrics`](crate::metrics::Metrics): generation, condition status, reason class,
//! observedGeneration, lastTransitionTime, suspended, terminal and info, read at scrape time, and
//! the failed passes by reason.
//!
//! ```
//! use kube::runtime::events::EventType;
//! use kubeward::alerts::AlertRules;
//! use kubeward::conditions::ConditionStatus::*;
//! use kubeward::vocabulary::{Reason, Vocabulary};
//!
//! static READY: Vocabulary = Vocabulary {
//!     type_: "Ready",
//!     reasons: &[
//!         Reason::new("Provisioning", Unknown).initial().to(&["Running", "AwaitingQuota"]),
//!         Reason::new("AwaitingQuota", False).gate().to(&["Provisioning"]),
//!         Reason::new("Running", True),
//!     ],
//! };
//! let alerts = AlertRules::new("db.example.com/databases", "Database", &READY);
//! assert_eq!(alerts.rules_file_name(), "databases.rules.yaml");
//! assert!(alerts.rules().contains("- alert: KubewardDatabaseStuck"));
//! assert!(alerts.tests().contains("- name: human-gate"));
//! assert_eq!(alerts.guards(), ["no-storm", "suspended", "restart", "missed-scrape", "terminal", "human-gate"]);
//! ```

mod template;

use crate::info::InfoField;
use crate::vocabulary::{Reason, ReasonClass, Vocabulary};

const RULES_TEMPLATE: &str = include_str!("rules.yaml");
const TESTS_TEMPLATE: &str = include_str!("tests.yaml");

/// The guards every rule set has; `human-gate` follows when the vocabulary has a waiting reason.
const GUARDS: [&str; 5] = [
    "no-storm",
    "suspended",
    "restart",
    "missed-scrape",
    "terminal",
];
const HUMAN_GATE: &str = "human-gate";

/// Why alert rules cannot be generated for a controller.
#[derive(Debug, thiserror::Error)]
pub enum AlertsError {
    /// The controller declares no condition, so nothing says whether an object is up to date.
    #[error(
        "controller {0} declares no condition: the alert rules need one that is True when an \
         object is up to date (`#[reconciler(conditions(..))]`)"
    )]
    NoCondition(String),
}

/// The alert rules of one controller; see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct AlertRules {
    controller: String,
    kind: String,
    vocabulary: &'static Vocabulary,
    info: &'static [InfoField],
    prefix: String,
}

impl AlertRules {
    /// The rules for `controller` (its name, the `controller` metric label), whose objects are
    /// of `kind` and up to date when their condition of `vocabulary` is True.
    pub fn new(
        controller: impl Into<String>,
        kind: impl Into<String>,
        vocabulary: &'static Vocabulary,
    ) -> Self {
        Self {
            controller: controller.into(),
            kind: kind.into(),
            vocabulary,
            info: &[],
            prefix: crate::metrics::DEFAULT_PREFIX.to_owned(),
        }
    }

    /// The rules for a [`Reconciler`](crate::controller::Reconciler)'s declaration: its name, its
    /// resource kind, its first condition and its info fields.
    ///
    /// # Errors
    /// When it declares no condition.
    pub fn for_reconciler<R: crate::controller::Reconciler>() -> Result<Self, AlertsError> {
        use kube::Resource as _;
        let controller = crate::controller::default_name::<R>();
        let vocabulary = R::CONDITIONS
            .first()
            .ok_or_else(|| AlertsError::NoCondition(controller.clone()))?;
        Ok(Self::new(controller, R::Resource::kind(&()), vocabulary).with_info(R::INFO))
    }

    /// Names the info fields in the in-progress alert's summary (the `kubeward_object_info`
    /// labels, such as the revision rolling out).
    #[must_use]
    pub fn with_info(mut self, info: &'static [InfoField]) -> Self {
        self.info = info;
        self
    }

    /// Reads metrics named `<prefix>_*` (the [`MetricsBuilder::prefix`](crate::metrics::MetricsBuilder::prefix)
    /// and the prefix given to `Controller::object_metrics`) instead of `kubeward_*`.
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The stem of the file names and of the rule group: the last segment of the controller's
    /// name (`demo.kubeward.dev/rollouts` → `rollouts`), dots made dashes.
    pub fn stem(&self) -> String {
        let last = self.controller.rsplit('/').next().unwrap_or_default();
        last.replace('.', "-").to_ascii_lowercase()
    }

    /// `<stem>.rules.yaml`.
    pub fn rules_file_name(&self) -> String {
        format!("{}.rules.yaml", self.stem())
    }

    /// `<stem>.tests.yaml`.
    pub fn tests_file_name(&self) -> String {
        format!("{}.tests.yaml", self.stem())
    }

    /// `<stem>.prometheusrule.yaml`.
    pub fn prometheus_rule_file_name(&self) -> String {
        format!("{}.prometheusrule.yaml", self.stem())
    }

    /// Every generated file as (file name, contents): the rule file, the PrometheusRule and the
    /// promtool scenarios. Written to one directory, `promtool test rules <stem>.tests.yaml` runs
    /// there.
    pub fn files(&self) -> [(String, String); 3] {
        [
            (self.rules_file_name(), self.rules()),
            (self.prometheus_rule_file_name(), self.prometheus_rule()),
            (self.tests_file_name(), self.tests()),
        ]
    }

    /// The guards the rules carry, each also the name of the scenario that needs it.
    pub fn guards(&self) -> Vec<&'static str> {
        let mut guards = GUARDS.to_vec();
        if self.waiting().next().is_some() {
            guards.push(HUMAN_GATE);
        }
        guards
    }

    /// The Prometheus rule file (`groups:`), for `rule_files:` in prometheus.yml.
    pub fn rules(&self) -> String {
        self.render(RULES_TEMPLATE)
    }

    /// The same groups as a Prometheus Operator `PrometheusRule` named `kubeward-<stem>`. Its
    /// `metadata.labels` must match the Prometheus object's `ruleSelector` (kube-prometheus-stack:
    /// `release: <helm release>`); add them before applying.
    pub fn prometheus_rule(&self) -> String {
        let group = format!("kubeward-{}", self.stem());
        let mut out = format!(
            "# The alert rules of {controller} as a Prometheus Operator PrometheusRule:\n\
             #   kubectl apply -f <this file>\n\
             # GENERATED by `kubeward::alerts` with {rules}: regenerate, do not edit. Its `spec` is\n\
             # exactly the `groups:` of {rules}. The labels below must match your Prometheus\n\
             # object's `ruleSelector` (kube-prometheus-stack: `release: <helm release name>`).\n\
             apiVersion: monitoring.coreos.com/v1\n\
             kind: PrometheusRule\n\
             metadata:\n  name: {group}\n  labels:\n    app.kubernetes.io/name: {group}\n    \
             app.kubernetes.io/component: alert-rules\n\
             spec:\n",
            controller = self.controller,
            rules = self.rules_file_name(),
        );
        let rules = self.rules();
        let groups = rules.lines().skip_while(|line| *line != "groups:");
        for line in groups {
            if !line.is_empty() {
                out.push_str("  ");
                out.push_str(line);
            }
            out.push('\n');
        }
        out
    }

    /// The `promtool test rules` scenarios of [`rules`](Self::rules), which they load as
    /// [`rules_file_name`](Self::rules_file_name) from the same directory.
    pub fn tests(&self) -> String {
        self.render(TESTS_TEMPLATE)
    }

    fn waiting(&self) -> impl Iterator<Item = &'static Reason> {
        self.vocabulary
            .reasons
            .iter()
            .filter(|r| r.class() == ReasonClass::Waiting)
    }

    fn failed(&self) -> impl Iterator<Item = &'static Reason> {
        self.vocabulary
            .reasons
            .iter()
            .filter(|r| r.class() == ReasonClass::Failed)
    }

    /// A failed reason that makes the object in progress (not an abnormal True): the scenario's
    /// failing object.
    fn failed_not_true(&self) -> Option<&'static Reason> {
        self.failed()
            .find(|r| r.status != crate::conditions::ConditionStatus::True)
    }

    fn render(&self, template: &str) -> String {
        use crate::conditions::ConditionStatus;
        let waiting: Vec<&str> = self.waiting().map(|r| r.name).collect();
        let failed: Vec<&str> = self.failed().map(|r| r.name).collect();
        let failed_sentence = match failed.as_slice() {
            [] => String::new(),
            [one] => format!("{one} is a failure, "),
            many => format!("{} are failures, ", and_list(many)),
        };
        let waiting_sentence = match waiting.as_slice() {
            [] => String::new(),
            gates => format!(
                " An object waiting in {} (a human gate) does not raise this alert.",
                or_list(gates)
            ),
        };
        let scenario = self.failed_not_true();
        let (failed_status, other_status) = match scenario.map(|r| r.status) {
            Some(ConditionStatus::Unknown) => ("Unknown", "False"),
            _ => ("False", "Unknown"),
        };
        let info = |version: &str| {
            self.info
                .iter()
                .map(|f| format!("{}=\"{version}\"", f.label))
                .collect::<Vec<_>>()
                .join(",")
        };
        let info_summary = if self.info.is_empty() {
            String::new()
        } else {
            let fields: String = self
                .info
                .iter()
                .map(|f| format!(", {0} {{{{ . | first | label `{0}` }}}}", f.label))
                .collect();
            format!(
                "{{{{ with printf `{}_object_info{{controller=%q,namespace=%q,name=%q}}` \
                 $labels.controller $labels.namespace $labels.name | query }}}}{fields}{{{{ end }}}}",
                self.prefix
            )
        };
        let info_v2: String = self
            .info
            .iter()
            .map(|f| format!(", {} v2", f.label))
            .collect();
        let values = [
            ("PREFIX", self.prefix.clone()),
            ("CONTROLLER", self.controller.clone()),
            ("KIND", self.kind.clone()),
            ("RESOURCE", self.kind.to_ascii_lowercase()),
            ("ALERT", format!("Kubeward{}", self.kind)),
            ("GROUP", format!("kubeward-{}", self.stem())),
            ("RULES_FILE", self.rules_file_name()),
            ("TESTS_FILE", self.tests_file_name()),
            ("TYPE", self.vocabulary.type_.to_owned()),
            ("WAITING_REASONS", and_list(&waiting)),
            (
                "WAITING_REASON",
                waiting.first().copied().unwrap_or_default().to_owned(),
            ),
            ("WAITING_SENTENCE", waiting_sentence),
            ("FAILED_SENTENCE", failed_sentence),
            (
                "FAILED_REASON",
                scenario.map(|r| r.name).unwrap_or_default().to_owned(),
            ),
            ("FAILED_STATUS", failed_status.to_owned()),
            ("FAILED_OTHER_STATUS", other_status.to_owned()),
            ("INFO_SUMMARY", info_summary),
            ("INFO_V1", info("v1")),
            ("INFO_V2", info("v2")),
            ("INFO_SUMMARY_V2", info_v2),
        ];
        let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let flag = |name: &str| match name {
            "human-gate" => !waiting.is_empty(),
            "failed-reason" => scenario.is_some(),
            "info" => !self.info.is_empty(),
            other => panic!("unknown template flag {other:?}"),
        };
        template::render(template, flag, &values)
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    join_last(items, " and ")
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    join_last(items, " or ")
}

fn join_last(items: &[&str], last: &str) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., tail] => format!("{}{last}{tail}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::ConditionStatus::*;
    use kube::runtime::events::EventType;

    static PLAIN: Vocabulary = Vocabulary {
        type_: "Ready",
        reasons: &[
            Reason::new("Starting", Unknown).initial().to(&["Running"]),
            Reason::new("Running", True),
        ],
    };

    static GATED: Vocabulary = Vocabulary {
        type_: "UpToDate",
        reasons: &[
            Reason::new("Applying", Unknown).initial(),
            Reason::new("WaitingForApproval", False).gate(),
            Reason::new("Paused", False).gate(),
            Reason::new("FailedDeploy", False),
            Reason::new("Stalled", True).event(EventType::Warning),
            Reason::new("Applied", True),
        ],
    };

    #[test]
    fn without_a_waiting_reason_there_is_no_human_gate_guard_or_scenario() {
        let alerts = AlertRules::new("apps.example.com", "App", &PLAIN);
        assert_eq!(alerts.stem(), "apps-example-com");
        assert_eq!(alerts.guards(), GUARDS);
        assert!(!alerts.rules().contains("human-gate"));
        assert!(!alerts.rules().contains(r#"class="waiting""#));
        assert!(!alerts.tests().contains("human-gate"));
        assert!(!alerts.rules().contains("is a failure"));
    }

    #[test]
    fn the_healthy_false_of_a_negative_condition_is_no_human_gate() {
        static STALLED: Vocabulary = Vocabulary {
            type_: "Stalled",
            reasons: &[
                Reason::new("NotStalled", False)
                    .event(EventType::Normal)
                    .initial()
                    .to(&["RetriesExhausted"]),
                Reason::new("RetriesExhausted", True)
                    .event(EventType::Warning)
                    .to(&["NotStalled"]),
            ],
        };
        let alerts = AlertRules::new("apps.example.com", "App", &STALLED);
        assert_eq!(alerts.guards(), GUARDS);
        assert!(!alerts.rules().contains(r#"class="waiting""#));
        assert!(!alerts.tests().contains("human-gate"));
    }

    #[test]
    fn a_terminal_failure_is_stuck_at_once_and_no_failing_controller() {
        let rules = AlertRules::new("demo.kubeward.dev/rollouts", "Rollout", &GATED).rules();
        assert!(rules.contains(
            r#"max without (instance, pod) (last_over_time(kubeward_object_terminal{controller="demo.kubeward.dev/rollouts"}[10m])) == 1  # guard: terminal"#
        ));
        assert!(rules.contains(
            r#"kubeward_reconcile_errors_total{reason="terminal"}                      # guard: terminal"#
        ));
        assert!(
            !rules.contains(r#"outcome="failed""#),
            "failures are counted by reason"
        );
    }

    #[test]
    fn reasons_are_named_by_class_in_the_stuck_description() {
        let rules = AlertRules::new("demo.kubeward.dev/rollouts", "Rollout", &GATED).rules();
        assert!(rules.contains(
            "shows where it is: FailedDeploy and Stalled are failures, no UpToDate condition"
        ));
        assert!(rules.contains(
            "An object waiting in WaitingForApproval or Paused (a human gate) does not raise this alert."
        ));
        assert!(rules.contains(r#"class="waiting"}  # guard: human-gate"#));
    }

    #[test]
    fn info_fields_are_named_in_the_in_progress_summary() {
        static INFO: [InfoField; 2] = [
            InfoField::new("revision", "status.revision"),
            InfoField::new("image", "spec.image"),
        ];
        let alerts = AlertRules::new("demo.kubeward.dev/rollouts", "Rollout", &GATED)
            .with_info(&INFO)
            .with_prefix("acme");
        let rules = alerts.rules();
        assert!(rules.contains(
            "(generation {{ $value }}{{ with printf `acme_object_info{controller=%q,namespace=%q,name=%q}` \
             $labels.controller $labels.namespace $labels.name | query }}, revision {{ . | first | label `revision` }}, \
             image {{ . | first | label `image` }}{{ end }})"
        ));
        assert!(!rules.contains("kubeward_"));
        assert!(
            alerts
                .tests()
                .contains(r#"name="web",revision="v2",image="v2","#)
        );
        assert!(
            alerts
                .tests()
                .contains("(generation 2, revision v2, image v2)")
        );
    }

    #[test]
    fn the_prometheus_rule_spec_is_the_rule_file_groups() {
        let alerts = AlertRules::new("demo.kubeward.dev/rollouts", "Rollout", &GATED);
        let rule = alerts.prometheus_rule();
        let spec = &rule[rule.find("spec:\n").unwrap() + "spec:\n".len()..];
        let rules = alerts.rules();
        let groups = &rules[rules.find("\ngroups:\n").unwrap() + 1..];
        let unindented: String = spec
            .lines()
            .map(|l| format!("{}\n", l.strip_prefix("  ").unwrap_or(l)))
            .collect();
        assert_eq!(unindented, groups);
        assert!(rule.contains("  name: kubeward-rollouts\n"));
    }
}
