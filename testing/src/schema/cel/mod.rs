//! `x-kubernetes-validations`: CEL rules evaluated with the `cel` crate
//! (apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`).
//!
//! A rule is evaluated at the node that declares it with `self` bound to the node's value. A
//! transition rule (one that mentions `oldSelf`) is evaluated only on updates where the node has a
//! correlated old value: through object properties and map values by name, and through
//! `x-kubernetes-list-type: map` lists by their keys, never through other lists. A false rule
//! answers `messageExpression` (when it evaluates to a string), else `message`, else
//! `failed rule: <rule>`; `reason` and `fieldPath` choose the error type and field. A rule with
//! `optionalOldSelf: true` is evaluated on creates and uncorrelated updates too, with `oldSelf`
//! a CEL optional (`optional.none()` where there is no old value, else `optional.of(old)`).

mod rules;

use std::sync::Arc;

use cel::Context;
use cel::objects::OptionalValue;
use serde_json::Value;

use self::rules::ENV;
pub(crate) use self::rules::{Rule, compile_rules, static_errors};
use super::field::{self, FieldError};
use super::ratcheting;
use super::structural::Structural;

/// Evaluates every rule inside `value` (with `old` the stored object on an update).
pub(crate) fn validate(
    schema: &Structural,
    path: &str,
    value: &Value,
    old: Option<&Value>,
    errors: &mut Vec<FieldError>,
) {
    if !schema.validations.is_empty() {
        evaluate_rules(schema, path, value, old, errors);
    }
    match value {
        Value::Object(map) => {
            for (name, v) in map {
                if let Some(child) = schema.child(name) {
                    let old_v = ratcheting::child(old, name);
                    validate(child, &field::child(path, name), v, old_v, errors);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = &schema.items else {
                return;
            };
            for (i, item) in items.iter().enumerate() {
                let old_item = ratcheting::map_item(schema, item, old);
                validate(item_schema, &field::index(path, i), item, old_item, errors);
            }
        }
        _ => {}
    }
}

fn evaluate_rules(
    schema: &Structural,
    path: &str,
    value: &Value,
    old: Option<&Value>,
    errors: &mut Vec<FieldError>,
) {
    let mut context = Context::with_env(ENV.clone());
    context.add_variable_from_value("self", to_cel(value));
    if let Some(old) = old {
        context.add_variable_from_value("oldSelf", to_cel(old));
    }
    let mut optional_context = Context::with_env(ENV.clone());
    optional_context.add_variable_from_value("self", to_cel(value));
    let optional = match old {
        Some(old) => OptionalValue::of(to_cel(old)),
        None => OptionalValue::none(),
    };
    optional_context.add_variable_from_value("oldSelf", cel::Value::Opaque(Arc::new(optional)));
    let type_name = if schema.type_.is_empty() {
        "object"
    } else {
        schema.type_.as_str()
    };
    for rule in &schema.validations {
        if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
            continue;
        }
        let context = if rule.optional_old_self {
            &optional_context
        } else {
            &context
        };
        // Ratcheting: a rule that does not compare with oldSelf is not re-checked on an
        // unchanged value (upstream turns its failure into a warning).
        if !rule.uses_old_self && ratcheting::unchanged(value, old) {
            continue;
        }
        let at = match &rule.field_path {
            Some(p) => field::child(path, p),
            None => path.to_string(),
        };
        match rule.program.execute(context) {
            Ok(cel::Value::Bool(true)) => continue,
            Ok(cel::Value::Bool(false)) => {}
            Ok(other) => {
                errors.push(FieldError::invalid(
                    &at,
                    type_name,
                    &format!(
                        "rule returned a non-boolean value {other:?} evaluating rule: {}",
                        rule.error_string()
                    ),
                ));
                continue;
            }
            Err(e) => {
                errors.push(FieldError::invalid(
                    &at,
                    type_name,
                    &format!("{} evaluating rule: {}", go_error(&e), rule.error_string()),
                ));
                continue;
            }
        }
        let detail = rule
            .message_expression
            .as_ref()
            .and_then(|m| match m.execute(context) {
                Ok(cel::Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
                _ => None,
            })
            .unwrap_or_else(|| match &rule.message {
                Some(m) => m.clone(),
                None => format!("failed rule: {}", rule.source.trim()),
            });
        // `fieldErrorForReason(path, sts.Type, ...)`: the value shown is the type of the node
        // that declares the rule (`Invalid value: "object": ...`), never the value itself, for
        // `message` and `messageExpression` alike, whatever `fieldPath` points at.
        errors.push(match rule.reason.as_str() {
            "FieldValueForbidden" => FieldError::forbidden(&at, &detail),
            "FieldValueRequired" => FieldError::required_because(&at, &detail),
            "FieldValueDuplicate" => FieldError::duplicate(&at, &Value::String(type_name.into())),
            _ => FieldError::invalid(&at, type_name, &detail),
        });
    }
}

/// cel-go's wording of an evaluation error the `cel` crate words its own way
/// (`interpreter/errors`, `common/types/err.go`: "division by zero", "no such key: s").
fn go_error(e: &cel::ExecutionError) -> String {
    let text = e.to_string();
    if text.starts_with("Division by zero") {
        return "division by zero".into();
    }
    if text.starts_with("Remainder by zero") {
        return "modulus by zero".into();
    }
    if let Some(key) = text.strip_prefix("No such key: ") {
        return format!("no such key: {key}");
    }
    text
}

/// A decoded JSON value as CEL sees it: integers as `int`, other numbers as `double`.
fn to_cel(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => cel::Value::Int(i),
            None => match n.as_u64() {
                Some(u) => cel::Value::UInt(u),
                None => cel::Value::Float(n.as_f64().unwrap_or(0.0)),
            },
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => {
            let entries: std::collections::HashMap<String, cel::Value> =
                map.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::Map(entries.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The errors of `rule` on `value` (with `old` for transition rules).
    fn check(rule: &str, value: Value, old: Option<Value>) -> Vec<String> {
        let schema = Structural::from_json(
            &json!({"type": "object", "x-kubernetes-validations": [{"rule": rule}]}),
        );
        let mut errors = Vec::new();
        validate(&schema, "spec", &value, old.as_ref(), &mut errors);
        errors.into_iter().map(|e| e.message).collect()
    }

    #[test]
    fn rules_written_for_kubernetes_evaluate() {
        let spec = json!({"name": "web-1", "replicas": 3, "ratio": 0.5,
                          "tags": ["a", "b"], "labels": {"app": "web"}});
        for rule in [
            "self.replicas > 0 && self.ratio < 1.0",
            "has(self.name) && !has(self.missing)",
            "self.name.matches('^[a-z0-9-]+$') && self.name.startsWith('web')",
            "self.tags.all(t, t.size() == 1) && self.tags.exists(t, t == 'b')",
            "size(self.tags) <= 2 && self.labels['app'] == 'web'",
            "'app' in self.labels && self.tags.map(t, t + '!').size() == 2",
            "self.name.lowerAscii() == 'web-1'",
        ] {
            assert_eq!(
                check(rule, spec.clone(), None),
                Vec::<String>::new(),
                "{rule}"
            );
        }
        assert_eq!(
            check("self.replicas < 3", spec.clone(), None),
            vec!["Invalid value: \"object\": failed rule: self.replicas < 3".to_string()]
        );
    }

    #[test]
    fn a_rule_that_errors_reports_the_error_and_the_rule() {
        let errors = check("self.missing > 1", json!({"a": 1}), None);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].starts_with("Invalid value: \"object\": ")
                && errors[0].ends_with(" evaluating rule: self.missing > 1"),
            "{errors:?}"
        );
    }

    /// The errors of a rule with `optionalOldSelf: true`.
    fn check_optional(rule: &str, value: Value, old: Option<Value>) -> Vec<String> {
        let schema = Structural::from_json(
            &json!({"type": "object", "x-kubernetes-validations": [{"rule": rule, "optionalOldSelf": true}]}),
        );
        let mut errors = Vec::new();
        validate(&schema, "spec", &value, old.as_ref(), &mut errors);
        errors.into_iter().map(|e| e.message).collect()
    }

    #[test]
    fn an_optional_old_self_rule_runs_without_an_old_value_too() {
        let rule =
            "!oldSelf.hasValue() ? self.replicas == 1 : self.replicas >= oldSelf.value().replicas";
        assert!(check_optional(rule, json!({"replicas": 1}), None).is_empty());
        assert_eq!(
            check_optional(rule, json!({"replicas": 2}), None),
            vec![format!("Invalid value: \"object\": failed rule: {rule}")],
            "evaluated on create, with oldSelf absent"
        );
        assert!(
            check_optional(rule, json!({"replicas": 3}), Some(json!({"replicas": 2}))).is_empty()
        );
        assert_eq!(
            check_optional(rule, json!({"replicas": 1}), Some(json!({"replicas": 2}))).len(),
            1
        );
    }

    #[test]
    fn transition_rules_need_an_old_value() {
        let rule = "self.replicas >= oldSelf.replicas";
        assert!(check(rule, json!({"replicas": 1}), None).is_empty());
        assert_eq!(
            check(rule, json!({"replicas": 1}), Some(json!({"replicas": 2}))),
            vec![format!("Invalid value: \"object\": failed rule: {rule}")]
        );
    }
}
