//! apimachinery `util/validation`: the syntax of names, label keys and
//! values, ConfigMap keys, with their exact messages (each check returns the list of problems,
//! empty when the value is valid); values are shown `%q`-quoted ([`go_quote`]).
//!
//! Which rule names a kind's objects is [`NameRule`] (`ValidateNameFunc` in
//! apimachinery `api/validation/generic.go`).

use crate::go::fmt::go_quote;

const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
const LABEL_VALUE_MAX_LENGTH: usize = 63;
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
const QUALIFIED_NAME_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

/// apimachinery `validation.RegexError`: the message, examples and the regex.
pub(crate) fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = msg.to_owned();
    if examples.is_empty() {
        return format!("{out} (regex used for validation is '{fmt}')");
    }
    out.push_str(" (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(example);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?` — apimachinery's `qualifiedNameRegexp`.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns1123_subdomain_syntax(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        let lower_alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && lower_alnum(b[0])
            && lower_alnum(b[b.len() - 1])
            && b.iter().all(|&c| lower_alnum(c) || c == b'-')
    })
}

/// apimachinery `validation.IsDNS1123Subdomain`: the list of problems (empty when valid).
pub(crate) fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !is_dns1123_subdomain_syntax(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// apimachinery `validation.IsWildcardDNS1123Subdomain`: `*.` then a DNS-1123 subdomain.
pub(crate) fn is_wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !value
        .strip_prefix("*.")
        .is_some_and(is_dns1123_subdomain_syntax)
    {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            &format!("\\*\\.{DNS1123_SUBDOMAIN_FMT}"),
            &["*.example.com"],
        ));
    }
    errs
}

/// apimachinery `validation.IsDomainPrefixedPath`'s problems as (value shown, message) pairs:
/// `acme.io/foo`, its host a DNS-1123 subdomain and its path of URL path characters.
pub(crate) fn domain_prefixed_path_problems(value: &str) -> Vec<(String, String)> {
    let Some((host, path)) = value
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        return vec![(
            value.to_owned(),
            "must be a domain-prefixed path (such as \"acme.io/foo\")".to_owned(),
        )];
    };
    let mut errs: Vec<(String, String)> = is_dns1123_subdomain(host)
        .into_iter()
        .map(|m| (host.to_owned(), m))
        .collect();
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(path_char) {
        errs.push((
            path.to_owned(),
            regex_error("Invalid path", "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+", &[]),
        ));
    }
    errs
}

/// apimachinery `validation.IsQualifiedName`: the list of problems (empty when valid).
pub(crate) fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_ERR_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// apimachinery `validation.IsValidLabelValue`: the list of problems (empty when valid).
pub(crate) fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

const DNS1123_LABEL_MAX_LENGTH: usize = 63;
const DNS1123_LABEL_ERR_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const CONFIG_MAP_KEY_ERR_MSG: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";

/// apimachinery `validation.IsDNS1123Label`: the list of problems (empty when valid).
pub(crate) fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if value.contains('.') || !is_dns1123_subdomain_syntax(value) {
        if is_dns1123_subdomain_syntax(value) {
            // A valid subdomain but not a label: with the length checked, it must be dots.
            errs.push("must not contain dots".to_owned());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

const DNS1035_LABEL_ERR_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";

/// apimachinery `validation.IsDNS1035Label`: the list of problems (empty when valid).
pub(crate) fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    let bytes = value.as_bytes();
    let valid = bytes.first().is_some_and(u8::is_ascii_lowercase)
        && bytes
            .last()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
    if !valid {
        errs.push(regex_error(
            DNS1035_LABEL_ERR_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// apimachinery `validation.IsConfigMapKey` (also the rule for Secret keys).
pub(crate) fn is_config_map_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    let key_char = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_');
    if value.is_empty() || !value.bytes().all(key_char) {
        errs.push(regex_error(
            CONFIG_MAP_KEY_ERR_MSG,
            CONFIG_MAP_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    // hasChDirPrefix
    if value == "." {
        errs.push("must not be '.'".to_owned());
    } else if value == ".." {
        errs.push("must not be '..'".to_owned());
    } else if value.starts_with("..") {
        errs.push("must not start with '..'".to_owned());
    }
    errs
}

/// How a kind's object names are checked (apimachinery `ValidateNameFunc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// `NameIsDNSSubdomain`: most kinds (ConfigMap, Secret, Lease, custom resources).
    DnsSubdomain,
    /// `NameIsDNSLabel`: Namespaces.
    DnsLabel,
    /// `path.IsValidPathSegmentName`: the RBAC kinds (`minimalNameRequirements`).
    PathSegment,
    /// `NameIsDNS1035Label`: Services (`ValidateServiceName`).
    Dns1035Label,
}

impl NameRule {
    /// The problems of `name`; for a `generateName` (`prefix`), a trailing dash is accepted as
    /// the random suffix will follow it (`maskTrailingDash`).
    pub(crate) fn check(self, name: &str, prefix: bool) -> Vec<String> {
        let masked;
        let name = if prefix && name.len() > 1 && name.ends_with('-') {
            masked = format!("{}a", name.get(..name.len() - 2).unwrap_or_default());
            masked.as_str()
        } else {
            name
        };
        match self {
            NameRule::DnsSubdomain => is_dns1123_subdomain(name),
            NameRule::DnsLabel => is_dns1123_label(name),
            NameRule::PathSegment => is_valid_path_segment_name(name),
            NameRule::Dns1035Label => is_dns1035_label(name),
        }
    }
}

/// apimachinery `path.IsValidPathSegmentName`: a name that can be one segment of a storage key.
pub(crate) fn is_valid_path_segment_name(name: &str) -> Vec<String> {
    if let Some(illegal) = [".", ".."].into_iter().find(|&illegal| name == illegal) {
        return vec![format!("may not be '{illegal}'")];
    }
    ["/", "%"]
        .into_iter()
        .filter(|illegal| name.contains(illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

/// The generic registry's key functions (`NamespaceKeyFunc`, `NoNamespaceKeyFunc`) refuse a
/// request naming an object that cannot be a storage key: 400 `Name parameter invalid: "a%b":
/// may not contain '%'`.
pub(crate) fn check_name_parameter(name: &str) -> Result<(), crate::status::ApiError> {
    let errors = is_valid_path_segment_name(name);
    if errors.is_empty() {
        return Ok(());
    }
    Err(crate::status::ApiError::bad_request(format!(
        "Name parameter invalid: {}: {}",
        go_quote(name),
        errors.join(";")
    )))
}
