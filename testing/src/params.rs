//! Query parameters read as kube-apiserver's parameter conversion and request filters read
//! them: booleans (`watch=maybe` is true), `resourceVersion` as an unsigned integer, `timeout`
//! as a Go duration.

use std::collections::HashMap;

/// Checks `text` as Go's `time.ParseDuration` reads it (`1.5h`, `300ms`, `-2m3s`, `0`),
/// returning its error (`time: invalid duration "soon"`).
pub(crate) fn go_duration(text: &str) -> Result<(), String> {
    let quoted = crate::validation::names::go_quote(text);
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
                crate::validation::names::go_quote(unit)
            ));
        }
        rest = &rest[unit_len..];
    }
    Ok(())
}

/// A boolean option as the query parameter conversion reads it
/// (`Convert_Slice_string_To_bool`): absent is false, `0` and `false` in any case are false,
/// anything else (`maybe`) is true.
pub(crate) fn option_flag(query: &HashMap<String, String>, name: &str) -> bool {
    query
        .get(name)
        .is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
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
    let quoted = crate::validation::names::go_quote(rv);
    Some(format!(
        "resourceVersion: Invalid value: {quoted}: strconv.ParseUint: parsing {quoted}: {why}"
    ))
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
    fn flags_are_false_only_for_zero_and_false() {
        let query: HashMap<String, String> = [("a", "maybe"), ("b", "FALSE"), ("c", "0")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into();
        assert!(option_flag(&query, "a"));
        assert!(!option_flag(&query, "b"));
        assert!(!option_flag(&query, "c"));
        assert!(!option_flag(&query, "absent"));
    }
}
