//! A CronJob's schedule and time zone as kube-apiserver reads them: robfig/cron v3's
//! `ParseStandard` (`github.com/robfig/cron/v3@v3.0.1/parser.go`: five fields, names of months
//! and weekdays, ranges, steps, the `@yearly` … `@hourly` and `@every <duration>` descriptors,
//! a `TZ=`/`CRON_TZ=` prefix) and Go's `time.LoadLocation` (the zoneinfo files of
//! `/usr/share/zoneinfo`, which Go reads before the embedded copy kube-apiserver carries, here
//! jiff's bundled database), with their error messages.
//!
//! Not modelled: a `TZ=` prefix without a following space, on which the parser panics in Go
//! (kube-apiserver answers 500); it is refused here as a bad location.

use std::path::Path;

use crate::go::fmt::go_quote;

/// The bounds and names of one field.
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// `cron.ParseStandard(spec)`: `Err` carries the parser's message
/// (`expected exactly 5 fields, found 1: [foo]`).
pub(crate) fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".to_owned());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let eq = spec.find('=').unwrap_or_default();
        let Some(space) = spec.find(' ') else {
            let name = &spec[eq + 1..];
            return Err(format!(
                "provided bad location {name}: unknown time zone {name}"
            ));
        };
        let name = &spec[eq + 1..space];
        load_location(name).map_err(|e| format!("provided bad location {name}: {e}"))?;
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return parse_descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip([&MINUTES, &HOURS, &DOM, &MONTHS, &DOW]) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            range(expr, bounds)?;
        }
    }
    Ok(())
}

/// `getRange`: one `a`, `a-b`, `*`, `?`, with an optional `/step`.
fn range(expr: &str, r: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (r.min, r.max)
    } else {
        let start = int_or_name(low_and_high[0], r)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_and_high[1], r)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = r.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < r.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            r.min
        ));
    }
    if end > r.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            r.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// `parseIntOrName`: a month's or weekday's name (any case), or a number.
fn int_or_name(expr: &str, r: &Bounds) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    match r.names.iter().find(|(name, _)| *name == lower) {
        Some((_, value)) => Ok(*value),
        None => must_parse_int(expr),
    }
}

/// `mustParseInt`: `strconv.Atoi`, refusing negative numbers.
fn must_parse_int(expr: &str) -> Result<u64, String> {
    let num = atoi(expr).map_err(|e| format!("failed to parse int from {expr}: {e}"))?;
    u64::try_from(num).map_err(|_| format!("negative number ({num}) not allowed: {expr}"))
}

/// Go's `strconv.Atoi` (64-bit `int`), with its error text.
fn atoi(s: &str) -> Result<i64, String> {
    let syntax = || format!("strconv.Atoi: parsing {}: invalid syntax", go_quote(s));
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(syntax());
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", go_quote(s)))
}

/// `parseDescriptor`.
fn parse_descriptor(descriptor: &str) -> Result<(), String> {
    match descriptor {
        "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly" => {
            Ok(())
        }
        _ => match descriptor.strip_prefix("@every ") {
            Some(duration) => parse_duration(duration)
                .map_err(|e| format!("failed to parse duration {descriptor}: {e}")),
            None => Err(format!("unrecognized descriptor: {descriptor}")),
        },
    }
}

/// Go's `time.ParseDuration` (whether it parses, and its error text; overflow not modelled).
fn parse_duration(text: &str) -> Result<(), String> {
    let invalid = || format!("time: invalid duration {}", go_quote(text));
    let mut s = text.strip_prefix(['+', '-']).unwrap_or(text);
    if s == "0" {
        return Ok(());
    }
    if s.is_empty() {
        return Err(invalid());
    }
    while !s.is_empty() {
        let number_end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let number = &s[..number_end];
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || number.matches('.').count() > 1 {
            return Err(invalid());
        }
        s = &s[number_end..];
        let unit_end = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let unit = &s[..unit_end];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {}", go_quote(text)));
        }
        if !["ns", "us", "µs", "μs", "ms", "s", "m", "h"].contains(&unit) {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                go_quote(unit),
                go_quote(text)
            ));
        }
        s = &s[unit_end..];
    }
    Ok(())
}

/// The directories Go's `time.LoadLocation` reads zoneinfo files from on Unix, in order.
const ZONE_SOURCES: &[&str] = &[
    "/usr/share/zoneinfo",
    "/usr/share/lib/zoneinfo",
    "/usr/lib/locale/TZ",
    "/etc/zoneinfo",
];

/// `time.LoadLocation(name)`: `Err` carries Go's message (`unknown time zone Mars/Base`).
pub(crate) fn load_location(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(());
    }
    if name.split('/').any(|part| part == "..") || name.starts_with(['/', '\\']) {
        return Err("time: invalid location name".to_owned());
    }
    for dir in ZONE_SOURCES {
        let path = Path::new(dir).join(name);
        if path.is_dir() {
            return Err("is a directory".to_owned());
        }
        if let Ok(data) = std::fs::read(&path)
            && data.starts_with(b"TZif")
        {
            return Ok(());
        }
    }
    // Then the embedded copy kube-apiserver carries (`time/tzdata`): jiff's bundled database,
    // its names compared exactly, as Go's are.
    if jiff::tz::TimeZoneDatabase::bundled()
        .available()
        .any(|known| known.as_str() == name)
    {
        return Ok(());
    }
    Err(format!("unknown time zone {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_schedules_parse_as_robfig_cron_parses_them() {
        for ok in [
            "*/5 * * * *",
            "0 0 1 jan-mar MON-fri",
            "15,45 2-4 ? * 0",
            "@hourly",
            "@every 1h30m",
            "TZ=UTC 0 * * * *",
        ] {
            assert_eq!(parse_standard(ok), Ok(()), "{ok}");
        }
        let cases = [
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                "5-2 * * * *",
                "beginning of range (5) beyond end of range (2): 5-2",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("@often", "unrecognized descriptor: @often"),
            (
                "@every 5",
                "failed to parse duration @every 5: time: missing unit in duration \"5\"",
            ),
            (
                "TZ=Mars/Base 0 * * * *",
                "provided bad location Mars/Base: unknown time zone Mars/Base",
            ),
        ];
        for (spec, message) in cases {
            assert_eq!(parse_standard(spec), Err(message.to_owned()), "{spec}");
        }
    }
}
