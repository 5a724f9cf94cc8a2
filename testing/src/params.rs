//! Query parameters read as kube-apiserver's parameter conversion and request filters read
//! them: booleans ([`query_bool`]: `watch=maybe` is true), `resourceVersion` as an unsigned
//! integer, `timeout` as a Go duration; and the options of a list or watch, validated as
//! apimachinery validates them.

use std::collections::HashMap;

use crate::status::ApiError;

/// Checks `text` as Go's `time.ParseDuration` reads it (`1.5h`, `300ms`, `-2m3s`, `0`),
/// returning its error (`time: invalid duration "soon"`).
pub(crate) fn go_duration(text: &str) -> Result<(), String> {
    let quoted = crate::go::fmt::go_quote(text);
    let invalid = || format!("time: invalid duration {quoted}");
    let mut rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    if rest == "0" {
        return Ok(());
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..digits];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(invalid());
        }
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {quoted}"));
        }
        if !matches!(unit, "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h") {
            return Err(format!(
                "time: unknown unit {} in duration {quoted}",
                crate::go::fmt::go_quote(unit)
            ));
        }
        rest = &rest[unit_len..];
    }
    Ok(())
}

/// A boolean query parameter (`watch`, `allowWatchBookmarks`, `sendInitialEvents`, `force`,
/// `orphanDependents`, …) as kube-apiserver's query parameter codec reads it: `None` when absent,
/// else apimachinery's `runtime.Convert_Slice_string_To_bool` (and `_To_Pointer_bool`, for
/// the `*bool` options; `pkg/runtime/conversion.go`, which the generated `url.Values`
/// conversions of `meta/v1` call). That is not `strconv.ParseBool`: the first value is false
/// when it is `0` or, in any case, `false` (`0`, `false`, `False`, `FALSE`, `fAlSe`), and true
/// otherwise — `1`, `t`, `True`, `TRUE`, but also `f`, `F`, `no`, `maybe` and the empty value
/// (`?force=` or `?force`). It never fails. (kube-apiserver's `RequestInfoFactory`, reading
/// `watch` itself when the list options do not decode, applies the same rule.)
pub(crate) fn query_bool(query: &HashMap<String, String>, name: &str) -> Option<bool> {
    query
        .get(name)
        .map(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// The problem of a `resourceVersion` parameter that is not a number
/// (`resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`).
pub(crate) fn unparsable_resource_version(query: &HashMap<String, String>) -> Option<String> {
    let rv = query.get("resourceVersion").filter(|rv| !rv.is_empty())?;
    let why = match rv.parse::<u64>() {
        Ok(_) => return None,
        Err(_) if !rv.is_empty() && rv.bytes().all(|b| b.is_ascii_digit()) => "value out of range",
        Err(_) => "invalid syntax",
    };
    let quoted = crate::go::fmt::go_quote(rv);
    Some(format!(
        "resourceVersion: Invalid value: {quoted}: strconv.ParseUint: parsing {quoted}: {why}"
    ))
}

/// A list's `limit` (0: no limit). kube-apiserver serves `resourceVersion=0` from its watch
/// cache, which ignores the limit: every item, no `continue`.
pub(crate) fn list_limit(query: &HashMap<String, String>) -> Result<usize, ApiError> {
    let limit = usize::try_from(int_parameter(query, "limit")?.unwrap_or(0)).unwrap_or(0);
    let from_cache = query.get("resourceVersion").is_some_and(|rv| rv == "0");
    Ok(if from_cache { 0 } else { limit })
}

/// apimachinery's `ValidateListOptions` (`validateWatchOptions` for watches): on a watch,
/// `resourceVersionMatch` only with `sendInitialEvents` and only `NotOlderThan`; on a list, only
/// with a `resourceVersion`, not with `continue`, `Exact` or `NotOlderThan` (and `Exact` not at
/// `0`), and no `sendInitialEvents`.
pub(crate) fn validate_list_options(
    query: &HashMap<String, String>,
    watching: bool,
) -> Result<(), ApiError> {
    let send_initial = query_bool(query, "sendInitialEvents").is_some();
    let version_match = query
        .get("resourceVersionMatch")
        .map(String::as_str)
        .filter(|m| !m.is_empty());
    let resource_version = query
        .get("resourceVersion")
        .map(String::as_str)
        .unwrap_or("");
    let continuing = query.get("continue").is_some_and(|c| !c.is_empty());
    let mut causes = Vec::new();
    let mut cause = |reason: &str, field: &str, message: String| {
        causes.push(crate::status::Cause {
            reason: reason.into(),
            message,
            field: field.into(),
        })
    };
    let forbidden = |text: &str| format!("Forbidden: {text}");
    if watching {
        if send_initial && version_match != Some("NotOlderThan") {
            cause(
                "FieldValueForbidden",
                "resourceVersionMatch",
                forbidden(
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ),
            );
        }
        if let Some(m) = version_match {
            if !send_initial {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden(
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    ),
                );
            }
            if m != "NotOlderThan" {
                cause(
                    "FieldValueNotSupported",
                    "resourceVersionMatch",
                    format!("Unsupported value: {m:?}: supported values: \"NotOlderThan\""),
                );
            }
            if continuing {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden("resourceVersionMatch is forbidden when continue is provided"),
                );
            }
        }
    } else {
        if let Some(m) = version_match {
            if resource_version.is_empty() {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden(
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    ),
                );
            }
            if continuing {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden("resourceVersionMatch is forbidden when continue is provided"),
                );
            }
            if m != "Exact" && m != "NotOlderThan" {
                cause(
                    "FieldValueNotSupported",
                    "resourceVersionMatch",
                    format!(
                        "Unsupported value: {m:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
                    ),
                );
            }
            if m == "Exact" && resource_version == "0" {
                cause(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    forbidden(
                        "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                    ),
                );
            }
        }
        if send_initial {
            cause(
                "FieldValueForbidden",
                "sendInitialEvents",
                forbidden("sendInitialEvents is forbidden for list"),
            );
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            crate::status::Qualified {
                group: "meta.k8s.io",
                name: "ListOptions",
            },
            "",
            causes,
        ))
    }
}

/// Whether a collection GET is a watch (`watch=true`, `watch=1`, `watch=maybe`; see
/// [`query_bool`]).
pub(crate) fn is_watch(query: &HashMap<String, String>) -> bool {
    query_bool(query, "watch").unwrap_or(false)
}

/// An integer query parameter decoded as the parameter codec does (`strconv.ParseInt`), 400
/// with its error when it is not one.
pub(crate) fn int_parameter(
    query: &HashMap<String, String>,
    name: &str,
) -> Result<Option<i64>, ApiError> {
    let Some(text) = query.get(name) else {
        return Ok(None);
    };
    text.parse::<i64>().map(Some).map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing \"{text}\": {why}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_as_go_parses_them() {
        for ok in ["0", "32s", "1.5h", "-2m3s", "300ms", "1us"] {
            assert_eq!(go_duration(ok), Ok(()), "{ok}");
        }
        assert_eq!(
            go_duration("soon"),
            Err("time: invalid duration \"soon\"".into())
        );
        assert_eq!(
            go_duration("5"),
            Err("time: missing unit in duration \"5\"".into())
        );
        assert_eq!(
            go_duration("5x"),
            Err("time: unknown unit \"x\" in duration \"5x\"".into())
        );
    }

    #[test]
    fn booleans_are_false_only_for_zero_and_false_in_any_case() {
        let falses = ["0", "false", "False", "FALSE", "fAlSe"];
        let trues = [
            "1", "t", "T", "true", "True", "TRUE", "f", "F", "no", "maybe", "",
        ];
        for (value, expected) in falses
            .iter()
            .map(|v| (v, false))
            .chain(trues.iter().map(|v| (v, true)))
        {
            let query: HashMap<String, String> = [("force".to_owned(), (*value).to_owned())].into();
            assert_eq!(query_bool(&query, "force"), Some(expected), "force={value}");
        }
        assert_eq!(query_bool(&HashMap::new(), "force"), None);
    }
}
