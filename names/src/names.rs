//! Validation of the strings the Kubernetes API server would reject, with apimachinery's rules and
//! messages, so that a bad name fails with a typed error before a request is sent.
//!
//! The same rules are applied at compile time by `kubeward-macros` to names written as literals.
//! Messages are apimachinery's own (`content.IsLabelKey`, `content.IsDNS1123Subdomain`,
//! `metav1validation.IsValidConditionReason`, `field.Required`, `field.TooLong`), so what the
//! compiler or a typed error says is what kube-apiserver would answer.

use std::fmt;

use crate::limits::{
    CONDITION_REASON_MAX_BYTES, CONDITION_TYPE_MAX_BYTES, DNS1123_SUBDOMAIN_MAX_BYTES,
    EVENT_ACTION_MAX_BYTES, EVENT_REASON_MAX_BYTES, QUALIFIED_NAME_PART_MAX_BYTES,
    STEP_NAME_MAX_BYTES,
};

/// What a validated string is used as; it decides the rules and names the string in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameKind {
    /// A `status.conditions[].type`: a qualified name of at most 316 bytes.
    ConditionType,
    /// A `status.conditions[].reason`: `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, at most 1024 bytes.
    ConditionReason,
    /// An events.k8s.io/v1 `reason`: non-empty, at most 128 bytes.
    EventReason,
    /// An events.k8s.io/v1 `action`: non-empty, at most 128 bytes.
    EventAction,
    /// A controller name (an event's `reportingController`): a qualified name.
    ControllerName,
    /// A finalizer: a qualified name.
    Finalizer,
    /// A step name (a metric label value): lowercase letters, digits, `_` and `-`, at most 63 bytes.
    StepName,
    /// A label or annotation key: a qualified name.
    MetadataKey,
}

impl NameKind {
    /// The name of this kind of string as error messages use it.
    pub fn describe(self) -> &'static str {
        match self {
            NameKind::ConditionType => "condition type",
            NameKind::ConditionReason => "condition reason",
            NameKind::EventReason => "event reason",
            NameKind::EventAction => "event action",
            NameKind::ControllerName => "controller name",
            NameKind::Finalizer => "finalizer",
            NameKind::StepName => "step name",
            NameKind::MetadataKey => "label or annotation key",
        }
    }

    /// Checks `value` against the rules of this kind.
    ///
    /// ```
    /// use kubeward_names::NameKind;
    /// assert!(NameKind::ConditionReason.validate("WaitingForApproval").is_ok());
    /// let err = NameKind::ConditionReason.validate("waiting for approval").unwrap_err();
    /// assert!(err.to_string().starts_with("invalid condition reason \"waiting for approval\""));
    /// ```
    pub fn validate(self, value: &str) -> Result<(), InvalidName> {
        let problem = match self {
            NameKind::ConditionType => required(value)
                .or_else(|| max_bytes(value, CONDITION_TYPE_MAX_BYTES))
                .or_else(|| qualified_name_problem(value)),
            NameKind::ConditionReason => required(value)
                .or_else(|| condition_reason_problem(value))
                .or_else(|| max_bytes(value, CONDITION_REASON_MAX_BYTES)),
            NameKind::EventReason => {
                required(value).or_else(|| event_field_max(value, EVENT_REASON_MAX_BYTES))
            }
            NameKind::EventAction => {
                required(value).or_else(|| event_field_max(value, EVENT_ACTION_MAX_BYTES))
            }
            NameKind::ControllerName | NameKind::Finalizer | NameKind::MetadataKey => {
                qualified_name_problem(value)
            }
            NameKind::StepName => {
                max_bytes(value, STEP_NAME_MAX_BYTES).or_else(|| step_name_problem(value))
            }
        };
        match problem {
            None => Ok(()),
            Some(problem) => Err(InvalidName {
                kind: self,
                value: value.to_owned(),
                problem,
            }),
        }
    }
}

/// A string that the API server (or, for step names, the metrics exposition) would reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidName {
    /// What the string was to be used as.
    pub kind: NameKind,
    /// The rejected string.
    pub value: String,
    /// What is wrong with it, in apimachinery's words where it has them.
    pub problem: String,
}

impl fmt::Display for InvalidName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {} {:?}: {}",
            self.kind.describe(),
            self.value,
            self.problem
        )
    }
}

impl std::error::Error for InvalidName {}

/// apimachinery `labelKeyErrMsg` with its examples (`RegexError`).
const QUALIFIED_NAME_FORMAT: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
     and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', \
     regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
/// apimachinery `dns1123SubdomainErrorMsg` with its example (`RegexError`).
const DNS1123_SUBDOMAIN_FORMAT: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
     alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character \
     (e.g. 'example.com', regex used for validation is \
     '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
/// apimachinery `conditionReasonErrMsg` with its examples (`IsValidConditionReason`).
const CONDITION_REASON_FORMAT: &str = "a condition reason must start with alphabetic character, \
     optionally followed by a string of alphanumeric characters or '_,:', and must end with an \
     alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or \
     'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is \
     '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";
/// kubeward's own rule: step names are metric label values.
const STEP_NAME_FORMAT: &str = "must be non-empty and consist of lowercase letters, digits, '_' or '-' (it becomes a metric label value)";

/// apimachinery `field.Required`: an empty required field.
fn required(value: &str) -> Option<String> {
    value.is_empty().then(|| "Required value".to_owned())
}

/// apimachinery `field.TooLong`.
fn max_bytes(value: &str, max: usize) -> Option<String> {
    (value.len() > max).then(|| format!("Too long: may not be more than {max} bytes"))
}

/// kube-apiserver's events validation (`ValidateEventCreate`), which words a length limit as an
/// invalid value.
fn event_field_max(value: &str, max: usize) -> Option<String> {
    (value.len() > max).then(|| format!("can have at most {max} characters"))
}

/// apimachinery `IsQualifiedName`: an optional DNS-1123 subdomain prefix and `/`, then a name part.
fn qualified_name_problem(value: &str) -> Option<String> {
    let (prefix, name) = match value.split_once('/') {
        None => (None, value),
        Some((_, rest)) if rest.contains('/') => {
            return Some(format!(
                "a valid label key {QUALIFIED_NAME_FORMAT} with an optional DNS subdomain prefix \
                 and '/' (e.g. 'example.com/MyName')"
            ));
        }
        Some((prefix, name)) => (Some(prefix), name),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Some("prefix part must be non-empty".to_owned());
        }
        if let Some(problem) = dns1123_subdomain_problem(prefix) {
            return Some(format!("prefix part {problem}"));
        }
    }
    if name.is_empty() {
        return Some("name part must be non-empty".to_owned());
    }
    if name.len() > QUALIFIED_NAME_PART_MAX_BYTES {
        return Some(format!(
            "name part must be no more than {QUALIFIED_NAME_PART_MAX_BYTES} bytes"
        ));
    }
    let bytes = name.as_bytes();
    let valid = bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    (!valid).then(|| format!("name part {QUALIFIED_NAME_FORMAT}"))
}

/// apimachinery `IsDNS1123Subdomain`.
fn dns1123_subdomain_problem(value: &str) -> Option<String> {
    if value.len() > DNS1123_SUBDOMAIN_MAX_BYTES {
        return Some(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX_BYTES} bytes"
        ));
    }
    let label_ok = |label: &str| {
        let b = label.as_bytes();
        !b.is_empty()
            && is_lower_alnum(b[0])
            && is_lower_alnum(b[b.len() - 1])
            && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
    };
    (!value.split('.').all(label_ok)).then(|| DNS1123_SUBDOMAIN_FORMAT.to_owned())
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$` (apimachinery `ValidateCondition`).
fn condition_reason_problem(value: &str) -> Option<String> {
    let b = value.as_bytes();
    let valid = b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.last()
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'));
    (!valid).then(|| CONDITION_REASON_FORMAT.to_owned())
}

fn step_name_problem(value: &str) -> Option<String> {
    let valid = !value.is_empty()
        && value
            .bytes()
            .all(|c| is_lower_alnum(c) || matches!(c, b'_' | b'-'));
    (!valid).then(|| STEP_NAME_FORMAT.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(kind: NameKind, value: &str) -> bool {
        kind.validate(value).is_ok()
    }

    #[test]
    fn qualified_names_follow_apimachinery() {
        for good in [
            "UpToDate",
            "demo.kubeward.dev/rollouts",
            "a",
            "my.name",
            "123-abc",
            "x/Y_z",
        ] {
            assert!(ok(NameKind::ControllerName, good), "{good} should be valid");
        }
        for bad in [
            "",
            "/x",
            "x/",
            "a/b/c",
            "Demo.dev/x",
            "-x",
            "x-",
            "x y",
            "ex_ample.com/x",
            &"a".repeat(64),
        ] {
            assert!(
                !ok(NameKind::ControllerName, bad),
                "{bad} should be invalid"
            );
        }
        assert_eq!(
            NameKind::Finalizer
                .validate("/cleanup")
                .unwrap_err()
                .problem,
            "prefix part must be non-empty"
        );
    }

    /// Each message as kube-apiserver words it (apimachinery `content/kube.go`, `content/dns.go`,
    /// `meta/v1/validation`, `field.TooLong`), copied from upstream rather than derived.
    #[test]
    fn messages_are_apimachinery_s_own() {
        let problem = |kind: NameKind, value: &str| kind.validate(value).unwrap_err().problem;
        assert_eq!(
            problem(NameKind::ConditionReason, "applied-ok"),
            "a condition reason must start with alphabetic character, optionally followed by a \
             string of alphanumeric characters or '_,:', and must end with an alphanumeric \
             character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  \
             or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"
        );
        assert_eq!(problem(NameKind::ConditionReason, ""), "Required value");
        assert_eq!(
            problem(NameKind::ConditionReason, &"R".repeat(1025)),
            "Too long: may not be more than 1024 bytes"
        );
        assert_eq!(
            problem(NameKind::EventReason, &"r".repeat(129)),
            "can have at most 128 characters"
        );
        assert_eq!(
            problem(NameKind::ControllerName, "x y"),
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start \
             and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', \
             regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            problem(NameKind::Finalizer, "a/b/c"),
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must \
             start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
             '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') \
             with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        );
        assert_eq!(
            problem(NameKind::Finalizer, "Demo.dev/x"),
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
             characters, '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
        assert_eq!(
            problem(NameKind::ControllerName, &"a".repeat(64)),
            "name part must be no more than 63 bytes"
        );
        assert_eq!(
            problem(NameKind::Finalizer, "x/"),
            "name part must be non-empty"
        );
    }

    #[test]
    fn condition_type_is_limited_to_316_bytes() {
        let prefix = format!(
            "{}.{}.{}.{}",
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(61)
        );
        let at_limit = format!(
            "{prefix}/{}",
            "N".repeat(CONDITION_TYPE_MAX_BYTES - prefix.len() - 1)
        );
        assert_eq!(at_limit.len(), 316);
        assert!(ok(NameKind::ConditionType, &at_limit));
        let over = format!(
            "{prefix}/{}",
            "N".repeat(CONDITION_TYPE_MAX_BYTES - prefix.len())
        );
        let err = NameKind::ConditionType.validate(&over).unwrap_err();
        assert_eq!(err.problem, "Too long: may not be more than 316 bytes");
    }

    #[test]
    fn condition_reason_matches_the_api_pattern() {
        for good in ["A", "Applied", "Waiting_For,Approval:2", "x_"] {
            assert!(ok(NameKind::ConditionReason, good), "{good}");
        }
        for bad in [
            "", "1Applied", "Applied:", "Applied,", "Appl ied", "Appl-ied", "Äpplied",
        ] {
            assert!(!ok(NameKind::ConditionReason, bad), "{bad}");
        }
        assert!(ok(NameKind::ConditionReason, &"R".repeat(1024)));
        assert!(!ok(NameKind::ConditionReason, &"R".repeat(1025)));
    }

    #[test]
    fn event_reason_and_action_are_limited_to_128_bytes() {
        assert!(ok(NameKind::EventReason, &"r".repeat(128)));
        assert!(!ok(NameKind::EventReason, &"r".repeat(129)));
        assert!(!ok(NameKind::EventAction, ""));
        assert!(!ok(NameKind::EventAction, &"é".repeat(65)));
    }

    #[test]
    fn step_names_are_metric_friendly() {
        assert!(ok(NameKind::StepName, "render_manifest-2"));
        for bad in ["", "Render", "render manifest", "render.x"] {
            assert!(!ok(NameKind::StepName, bad), "{bad}");
        }
    }
}
