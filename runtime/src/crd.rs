//! The declaration enforced by the cluster: CEL validation rules on `status.conditions`, derived
//! from the reconciler's condition vocabularies and added to its CustomResourceDefinition, so that
//! no writer — another controller, a script, `kubectl edit --subresource=status`, an older replica
//! — can store a reason the vocabulary does not have, a status its reason does not imply, or a
//! transition it does not declare. The controller's own writes always pass: they are checked at
//! compile time against the same declaration.
//!
//! For each declared condition type `T` (conditions of other types stay free):
//!
//! - the reason is one of `T`'s reasons, with the status its declaration fixes;
//! - a change of reason is a declared transition (a rule on the item that reads `oldSelf`: the
//!   list is `x-kubernetes-list-type: map` keyed by `type`, so the old item of the same type is
//!   correlated); from a reason outside the vocabulary (an older vocabulary's), only to a start
//!   state — as [`Vocabulary::allows`];
//! - a condition that was absent appears only at a start state: a rule on the item with
//!   `optionalOldSelf`, so it runs where no old item of the type exists — on the first write and
//!   after a removal, so removing a condition and adding it back is no way around the transition
//!   rules. (An item rule, not one on `status` over the whole list: kube-apiserver's cost
//!   estimate of a list-wide message expression exceeds its budget a hundredfold.)
//!
//! Messages use the compile error's words (`` `UpToDate` cannot go from `Applied` to
//! `Promoting` ``, and the reasons it may go to). The list and its strings are bounded
//! ([`MAX_CONDITIONS`] items and `metav1.Condition`'s own limits) so that the API server's
//! estimated CEL cost stays within its budget.
//!
//! Transition rules are not ratcheted: when a new version of the operator removes a transition,
//! apply its CRD together with its controller (one release); an old replica still running meanwhile
//! has its now-undeclared writes refused with 422 (its passes fail and retry; nothing wrong is
//! stored). Removing a reason is safe: a stored condition at a reason no longer declared may still
//! go to a start state, as the controller itself does.
//!
//! ```
//! use kubeward::conditions::ConditionStatus::*;
//! use kubeward::vocabulary::{Reason, Vocabulary};
//!
//! static READY: Vocabulary = Vocabulary {
//!     type_: "Ready",
//!     reasons: &[
//!         Reason::new("Starting", Unknown).initial().to(&["Running"]),
//!         Reason::new("Running", True).to(&["Starting"]),
//!     ],
//! };
//! let rules = kubeward::crd::condition_rules(&[&READY]);
//! assert!(rules.iter().any(|r| r.rule
//!     == "self.type != 'Ready' || oldSelf.reason != 'Starting' || self.reason in ['Starting', 'Running']"));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSON, JSONSchemaProps, JSONSchemaPropsOrArray, ValidationRule,
};

use crate::conditions::ConditionStatus;
use crate::vocabulary::Vocabulary;

/// The most conditions a status may hold: bounds the cost of the rules that iterate over them.
pub const MAX_CONDITIONS: i64 = 32;

/// Why the rules could not be added to a CRD.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CrdError {
    /// A served version's schema has no `status.conditions` list of objects to put rules on.
    #[error(
        "version {version} of {crd}: the schema has no `status.conditions` list of objects; a resource whose reconciler declares condition vocabularies keeps them in `status.conditions: Vec<Condition>`"
    )]
    NoConditions {
        /// The CRD's name.
        crd: String,
        /// The version whose schema lacks the list.
        version: String,
    },
    /// Two vocabularies declare the same condition type.
    #[error("{0}")]
    DuplicateConditionType(#[from] crate::vocabulary::DuplicateConditionType),
}

/// The CEL rules on each item of `status.conditions` that enforce `vocabularies` (see the module
/// docs), in order: per vocabulary its reasons, the status of each, the transitions from each
/// reason, from an unrecognized reason, and the start states.
pub fn condition_rules(vocabularies: &[&Vocabulary]) -> Vec<ValidationRule> {
    let mut rules = Rules(Vec::new());
    for vocabulary in vocabularies {
        rules.add(vocabulary);
    }
    rules.0
}

struct Rules(Vec<ValidationRule>);

impl Rules {
    fn add(&mut self, vocabulary: &Vocabulary) {
        let type_ = vocabulary.type_;
        let guard = format!("self.type != {}", quote(type_));
        let names: Vec<&str> = vocabulary.reasons.iter().map(|r| r.name).collect();
        let starts: Vec<&str> = vocabulary
            .reasons
            .iter()
            .filter(|r| r.initial)
            .map(|r| r.name)
            .collect();
        let all = cel_list(&names);
        self.0.push(rule(
            format!("{guard} || self.reason in {all}"),
            format!(
                "`{type_}` has no reason of that name: its reasons are {}",
                or_list(&names)
            ),
            format!(
                "'`{type_}` has no reason `' + self.reason + '`: its reasons are {}'",
                escape(&or_list(&names))
            ),
            ".reason",
        ));
        for status in [
            ConditionStatus::True,
            ConditionStatus::False,
            ConditionStatus::Unknown,
        ] {
            let of_status: Vec<&str> = vocabulary
                .reasons
                .iter()
                .filter(|r| r.status == status)
                .map(|r| r.name)
                .collect();
            if of_status.is_empty() {
                continue;
            }
            self.0.push(rule(
                format!(
                    "{guard} || !(self.reason in {}) || self.status == '{status}'",
                    cel_list(&of_status)
                ),
                format!(
                    "`{type_}` at {} has status `{status}`",
                    or_list(&of_status)
                ),
                format!(
                    "'`{type_}` at `' + self.reason + '` has status `{status}`, not `' + self.status + '`'"
                ),
                ".status",
            ));
        }
        for reason in vocabulary.reasons {
            let from = reason.name;
            let mut stays: Vec<&str> = vec![from];
            stays.extend(reason.targets.iter().filter(|t| **t != from));
            let allowed = allowed_from(type_, from, reason.targets);
            self.0.push(rule(
                format!(
                    "{guard} || oldSelf.reason != {} || self.reason in {}",
                    quote(from),
                    cel_list(&stays)
                ),
                format!("`{type_}` cannot go from `{from}` to that reason: {allowed}"),
                format!(
                    "'`{type_}` cannot go from `{from}` to `' + self.reason + '`: {}'",
                    escape(&allowed)
                ),
                ".reason",
            ));
        }
        let start_list = or_list(&starts);
        self.0.push(rule(
            format!(
                "{guard} || oldSelf.reason in {all} || self.reason == oldSelf.reason || self.reason in {}",
                cel_list(&starts)
            ),
            format!(
                "`{type_}` cannot go from an unrecognized reason to that reason: from a reason outside the vocabulary, `{type_}` may go to its start states: {start_list}"
            ),
            format!(
                "'`{type_}` cannot go from an unrecognized reason to `' + self.reason + '`: from a reason outside the vocabulary, `{type_}` may go to its start states: {}'",
                escape(&start_list)
            ),
            ".reason",
        ));
        // An item with no old item of its type (correlated by the list's key): the condition
        // appears, on a create or after it was removed. `optionalOldSelf` makes the rule run
        // there, where plain transition rules do not.
        let mut appears = rule(
            format!(
                "{guard} || oldSelf.hasValue() || self.reason in {}",
                cel_list(&starts)
            ),
            format!(
                "`{type_}` cannot start in that reason: a `{type_}` condition starts in {start_list}"
            ),
            format!(
                "'`{type_}` cannot start in `' + self.reason + '`: a `{type_}` condition starts in {}'",
                escape(&start_list)
            ),
            ".reason",
        );
        appears.optional_old_self = Some(true);
        self.0.push(appears);
    }
}

/// `crd` with the rules enforcing `vocabularies` on `status.conditions` in every version, the
/// list made `x-kubernetes-list-type: map` keyed by `type` and bounded (see the module docs).
///
/// # Errors
///
/// [`CrdError::NoConditions`] when a version's schema has no `status.conditions` list of
/// objects, [`CrdError::DuplicateConditionType`] when two vocabularies declare one type. With no
/// vocabularies the CRD is returned as it was.
pub fn with_condition_rules(
    mut crd: CustomResourceDefinition,
    vocabularies: &[&Vocabulary],
) -> Result<CustomResourceDefinition, CrdError> {
    if vocabularies.is_empty() {
        return Ok(crd);
    }
    Vocabulary::check_distinct(vocabularies)?;
    let rules = condition_rules(vocabularies);
    let crd_name = crd.metadata.name.clone().unwrap_or_default();
    for version in &mut crd.spec.versions {
        let missing = || CrdError::NoConditions {
            crd: crd_name.clone(),
            version: version.name.clone(),
        };
        let status = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .and_then(|root| property(root, "status"))
            .ok_or_else(missing)?;
        let conditions = property(status, "conditions").ok_or_else(missing)?;
        let Some(JSONSchemaPropsOrArray::Schema(item)) = conditions.items.as_mut() else {
            return Err(missing());
        };
        if item
            .properties
            .as_ref()
            .is_none_or(|p| !p.contains_key("type"))
        {
            return Err(missing());
        }
        bound_condition(item);
        extend(&mut item.x_kubernetes_validations, &rules);
        conditions.x_kubernetes_list_type = Some("map".to_owned());
        conditions.x_kubernetes_list_map_keys = Some(vec!["type".to_owned()]);
        conditions.max_items = Some(MAX_CONDITIONS);
    }
    Ok(crd)
}

/// The CRD of `R`'s resource with the rules enforcing `R`'s vocabularies
/// ([`with_condition_rules`]), and — unless `R` opted out of [kstatus](crate::kstatus) status —
/// an integer `status.observedGeneration` in every version's schema that lacks one, so that the
/// server does not prune the generation the runtime writes.
///
/// # Errors
///
/// As [`with_condition_rules`].
pub fn for_reconciler<R>() -> Result<CustomResourceDefinition, CrdError>
where
    R: crate::Reconciler,
    R::Resource: kube::CustomResourceExt,
{
    let mut crd = with_condition_rules(
        <R::Resource as kube::CustomResourceExt>::crd(),
        R::CONDITIONS,
    )?;
    if R::KSTATUS.is_some() {
        with_observed_generation(&mut crd);
    }
    Ok(crd)
}

/// Adds `status.observedGeneration` (an int64, at least 0) to every version's status schema that
/// has properties but not that one.
fn with_observed_generation(crd: &mut CustomResourceDefinition) {
    for version in &mut crd.spec.versions {
        let status = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .and_then(|root| property(root, "status"));
        let Some(properties) = status.and_then(|s| s.properties.as_mut()) else {
            continue;
        };
        properties
            .entry(crate::kstatus::OBSERVED_GENERATION.to_owned())
            .or_insert_with(|| JSONSchemaProps {
                type_: Some("integer".to_owned()),
                format: Some("int64".to_owned()),
                minimum: Some(0.0),
                description: Some(
                    "The generation the controller last worked on (kstatus).".to_owned(),
                ),
                ..JSONSchemaProps::default()
            });
    }
}

/// `metav1.Condition`'s own validation (its kubebuilder markers): bounded strings, the status
/// enum, a required `type` (the list's key).
fn bound_condition(item: &mut JSONSchemaProps) {
    let Some(properties) = item.properties.as_mut() else {
        return;
    };
    let bounds: [(&str, i64, Option<&str>); 3] = [
        (
            "type",
            316,
            Some(
                "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
            ),
        ),
        (
            "reason",
            1024,
            Some("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"),
        ),
        ("message", 32768, None),
    ];
    for (name, max_length, pattern) in bounds {
        if let Some(field) = properties.get_mut(name) {
            field.max_length = Some(max_length);
            if let Some(pattern) = pattern {
                field.pattern = Some(pattern.to_owned());
            }
        }
    }
    if let Some(status) = properties.get_mut("status") {
        status.enum_ = Some(
            ["True", "False", "Unknown"]
                .map(|s| JSON(serde_json::Value::String(s.to_owned())))
                .to_vec(),
        );
    }
    let required = item.required.get_or_insert_with(Vec::new);
    if !required.iter().any(|r| r == "type") {
        required.push("type".to_owned());
    }
}

fn property<'a>(schema: &'a mut JSONSchemaProps, name: &str) -> Option<&'a mut JSONSchemaProps> {
    schema
        .properties
        .as_mut()
        .and_then(|p: &mut BTreeMap<String, JSONSchemaProps>| p.get_mut(name))
}

/// Appends `rules` to a node's validations, leaving out any already there (applying twice is a
/// no-op).
fn extend(validations: &mut Option<Vec<ValidationRule>>, rules: &[ValidationRule]) {
    let validations = validations.get_or_insert_with(Vec::new);
    for rule in rules {
        if !validations.iter().any(|v| v.rule == rule.rule) {
            validations.push(rule.clone());
        }
    }
}

fn rule(rule: String, message: String, message_expression: String, field: &str) -> ValidationRule {
    ValidationRule {
        rule,
        message: Some(message),
        message_expression: Some(message_expression),
        field_path: Some(field.to_owned()),
        reason: Some("FieldValueInvalid".to_owned()),
        optional_old_self: None,
    }
}

/// What the compile error's note says a condition may do from `from`.
fn allowed_from(type_: &str, from: &str, targets: &[&str]) -> String {
    let targets: Vec<&str> = targets.iter().copied().filter(|t| *t != from).collect();
    if targets.is_empty() {
        format!("from `{from}`, `{type_}` may only stay `{from}`")
    } else {
        format!(
            "from `{from}`, `{type_}` may go to {} (or stay `{from}`)",
            or_list(&targets)
        )
    }
}

/// `` `A`, `B` or `C` ``, as the compile errors list names.
fn or_list(names: &[&str]) -> String {
    match names {
        [] => "no reason".to_owned(),
        [one] => format!("`{one}`"),
        [init @ .., last] => format!(
            "{} or `{last}`",
            init.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A CEL string literal.
fn quote(text: &str) -> String {
    format!("'{}'", escape(text))
}

/// `text` escaped for a single-quoted CEL string literal.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\'', "\\'")
}

fn cel_list(names: &[&str]) -> String {
    format!(
        "[{}]",
        names
            .iter()
            .map(|n| quote(n))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::ConditionStatus::*;
    use crate::vocabulary::Reason;

    static READY: Vocabulary = Vocabulary {
        type_: "Ready",
        reasons: &[
            Reason::new("Starting", Unknown).initial().to(&["Running"]),
            Reason::new("Running", True).to(&["Starting", "Crashed"]),
            Reason::new("Crashed", False),
        ],
    };

    #[test]
    fn one_rule_per_reason_status_and_source_and_one_for_starting() {
        let rules = condition_rules(&[&READY]);
        let sources: Vec<&str> = rules.iter().map(|r| r.rule.as_str()).collect();
        assert_eq!(
            sources,
            [
                "self.type != 'Ready' || self.reason in ['Starting', 'Running', 'Crashed']",
                "self.type != 'Ready' || !(self.reason in ['Running']) || self.status == 'True'",
                "self.type != 'Ready' || !(self.reason in ['Crashed']) || self.status == 'False'",
                "self.type != 'Ready' || !(self.reason in ['Starting']) || self.status == 'Unknown'",
                "self.type != 'Ready' || oldSelf.reason != 'Starting' || self.reason in ['Starting', 'Running']",
                "self.type != 'Ready' || oldSelf.reason != 'Running' || self.reason in ['Running', 'Starting', 'Crashed']",
                "self.type != 'Ready' || oldSelf.reason != 'Crashed' || self.reason in ['Crashed']",
                "self.type != 'Ready' || oldSelf.reason in ['Starting', 'Running', 'Crashed'] || self.reason == oldSelf.reason || self.reason in ['Starting']",
                "self.type != 'Ready' || oldSelf.hasValue() || self.reason in ['Starting']",
            ]
        );
        assert_eq!(
            rules[5].message.as_deref(),
            Some(
                "`Ready` cannot go from `Running` to that reason: from `Running`, `Ready` may go to `Starting` or `Crashed` (or stay `Running`)"
            )
        );
        assert_eq!(
            rules[6].message.as_deref(),
            Some(
                "`Ready` cannot go from `Crashed` to that reason: from `Crashed`, `Ready` may only stay `Crashed`"
            )
        );
        assert_eq!(rules[8].optional_old_self, Some(true));
        assert!(rules[..8].iter().all(|r| r.optional_old_self.is_none()));
    }

    #[test]
    fn a_crd_without_a_conditions_list_is_refused_with_its_name_and_version() {
        let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"plural": "things", "kind": "Thing"},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
                    }}}
                }]
            }
        }))
        .unwrap();
        let error = with_condition_rules(crd, &[&READY]).unwrap_err();
        assert_eq!(
            error,
            CrdError::NoConditions {
                crd: "things.example.com".into(),
                version: "v1".into()
            }
        );
        assert!(error.to_string().starts_with(
            "version v1 of things.example.com: the schema has no `status.conditions` list"
        ));
    }
}
