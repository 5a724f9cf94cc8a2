//! A schema node's rules compiled, and the problems that refuse a CRD: a rule that does not
//! compile, or `oldSelf` where no old value can be correlated.

use std::sync::{Arc, LazyLock};

use cel::{Env, Program};
use serde_json::Value;

use crate::go::json;
use crate::schema::field::{self, FieldError};

/// The CEL environment of rules: the standard library with the strings, lists and math
/// extensions Kubernetes also offers.
pub(super) static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    for ext in [
        cel::extensions::strings,
        cel::extensions::lists,
        cel::extensions::math,
    ] {
        // Extensions register distinct names on a fresh environment.
        let _ = env.add_extension(ext);
    }
    Arc::new(env)
});

/// One compiled rule.
#[derive(Debug)]
pub(crate) struct Rule {
    pub(super) source: String,
    pub(super) program: Program,
    pub(super) message: Option<String>,
    pub(super) message_expression: Option<Program>,
    pub(super) reason: String,
    pub(super) field_path: Option<String>,
    pub(super) uses_old_self: bool,
    /// `optionalOldSelf`: `oldSelf` is an optional, and the rule runs without an old value too.
    pub(super) optional_old_self: bool,
}

/// Compiles the rules of one schema node; a rule that does not compile is left out (the CRD
/// that holds it is refused: [`static_errors`]).
pub(crate) fn compile_rules(rules: &Value) -> Vec<Rule> {
    let Some(rules) = rules.as_array() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for rule in rules {
        let source = rule["rule"].as_str().unwrap_or_default().to_string();
        let Ok(program) = ENV.compile(&source) else {
            continue;
        };
        let message_expression = match rule["messageExpression"].as_str() {
            Some(expr) => match ENV.compile(expr) {
                Ok(p) => Some(p),
                Err(_) => continue,
            },
            None => None,
        };
        let uses_old_self = program.references().has_variable("oldSelf");
        out.push(Rule {
            source,
            program,
            message: rule["message"]
                .as_str()
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty()),
            message_expression,
            reason: rule["reason"]
                .as_str()
                .unwrap_or("FieldValueInvalid")
                .to_string(),
            field_path: rule["fieldPath"]
                .as_str()
                .map(|p| p.trim_start_matches('.').to_string())
                .filter(|p| !p.is_empty()),
            uses_old_self,
            optional_old_self: uses_old_self && rule["optionalOldSelf"].as_bool() == Some(true),
        });
    }
    out
}

/// What compiling the rules of one node says when the CRD is written (the CEL part of
/// apiextensions' `ValidateCustomResourceDefinitionOpenAPISchema`), at `path`
/// (`...x-kubernetes-validations`): a rule or `messageExpression` that does not compile, with
/// the rule rendered as the Go struct upstream prints; `oldSelf` where it cannot be correlated
/// (under `uncorrelatable`); `optionalOldSelf` without `oldSelf`. Type checking and cost
/// estimation are not modelled.
pub(crate) fn static_errors(
    rules: &[Value],
    path: &str,
    uncorrelatable: Option<&str>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let at = field::index(path, i);
        let struct_text = go_rule_struct(rule);
        let source = rule["rule"].as_str().unwrap_or_default();
        let program = match ENV.compile(source) {
            Ok(p) => Some(p),
            Err(e) => {
                errors.push(FieldError::invalid_rendered(
                    &format!("{at}.rule"),
                    &struct_text,
                    &format!("compilation failed: {}", cel_go_error(&e.to_string())),
                ));
                None
            }
        };
        if let Some(expr) = rule["messageExpression"].as_str()
            && let Err(e) = ENV.compile(expr)
        {
            errors.push(FieldError::invalid_rendered(
                &format!("{at}.messageExpression"),
                &struct_text,
                &format!(
                    "messageExpression compilation failed: {}",
                    cel_go_error(&e.to_string())
                ),
            ));
        }
        let uses_old_self = program
            .as_ref()
            .is_some_and(|p| p.references().has_variable("oldSelf"));
        if uses_old_self {
            if let Some(within) = uncorrelatable {
                errors.push(FieldError::invalid(
                    &format!("{at}.rule"),
                    source,
                    &format!(
                        "oldSelf cannot be used on the uncorrelatable portion of the schema within {within}"
                    ),
                ));
            }
        } else if let Some(optional) = rule.get("optionalOldSelf").filter(|o| o.is_boolean()) {
            errors.push(FieldError::invalid_value(
                &format!("{at}.optionalOldSelf"),
                optional,
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }
    errors
}

/// A rule as Go's `encoding/json` writes the internal `ValidationRule` struct in an error:
/// `{"Rule":"...","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}`.
fn go_rule_struct(rule: &Value) -> String {
    let text = |k: &str| Value::String(rule[k].as_str().unwrap_or_default().to_owned());
    let pointer = |k: &str| match &rule[k] {
        v @ (Value::String(_) | Value::Bool(_)) => v.clone(),
        _ => Value::Null,
    };
    let fields = [
        ("Rule", text("rule")),
        ("Message", text("message")),
        ("MessageExpression", text("messageExpression")),
        ("Reason", pointer("reason")),
        ("FieldPath", text("fieldPath")),
        ("OptionalOldSelf", pointer("optionalOldSelf")),
    ];
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("\"{k}\":{}", json::marshal(v)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// cel-go's rendering of a compile error: the source snippet and caret lines are indented by
/// one space (` | self.a`).
fn cel_go_error(text: &str) -> String {
    text.replace("\n| ", "\n | ")
}

impl Rule {
    /// `ruleErrorString`: the message if set, else the rule.
    pub(super) fn error_string(&self) -> String {
        self.message
            .clone()
            .unwrap_or_else(|| self.source.trim().to_string())
    }
}
