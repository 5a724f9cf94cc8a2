//! A CronJob's schedule and time zone as kube-apiserver reads them: robfig/cron v3's
//! `ParseStandard` (`github.com/robfig/cron/v3@v3.0.1/parser.go`: five fields, names of months
//! and weekdays, ranges, steps, the `@yearly` … `@hourly` and `@every <duration>` descriptors,
//! a `TZ=`/`CRON_TZ=` prefix) and Go's `time.LoadLocation` (the zoneinfo files of
//! `/usr/share/zoneinfo`, which Go reads before the embedded copy kube-apiserver carries, here
//! jiff's bundled database), with their error messages. The parsed [`Schedule`] gives its
//! activation times as robfig/cron's `Next` does (`spec.go`, `constantdelay.go`), for the
//! simulated cluster's CronJob controller.
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

/// A parsed schedule: robfig/cron's `SpecSchedule` (the set bits of each field, `STAR` when the
/// field was `*` or `?`, and the location) or `ConstantDelaySchedule` (`@every`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Schedule {
    /// Five fields (seconds always 0).
    Spec {
        minute: u64,
        hour: u64,
        dom: u64,
        month: u64,
        dow: u64,
        zone: jiff::tz::TimeZone,
    },
    /// `@every <duration>`: whole seconds, at least one.
    Every(jiff::SignedDuration),
}

impl Schedule {
    /// `Schedule.Next(t)`: the first activation time after `t` (`None` where robfig/cron gives
    /// the zero time: nothing matches within five years).
    pub(crate) fn next(&self, t: jiff::Timestamp) -> Option<jiff::Timestamp> {
        match self {
            // `ConstantDelaySchedule.Next`: `t` plus the delay, less its fraction of a second.
            Schedule::Every(delay) => {
                let fraction = jiff::SignedDuration::from_nanos(i64::from(t.subsec_nanosecond()));
                t.checked_add(*delay - fraction).ok()
            }
            Schedule::Spec { zone, .. } => self.next_spec(t.to_zoned(zone.clone())),
        }
    }

    /// `SpecSchedule.Next`, on the civil time of the schedule's zone.
    fn next_spec(&self, t: jiff::Zoned) -> Option<jiff::Timestamp> {
        let Schedule::Spec {
            minute,
            hour,
            month,
            zone,
            ..
        } = self
        else {
            return None;
        };
        let has = |bits: u64, value: i8| bits & (1u64 << u32::try_from(value).unwrap_or(63)) != 0;
        let at = |y: i16, mo: i8, d: i8, h: i8, mi: i8| {
            jiff::civil::DateTime::new(y, mo, d, h, mi, 0, 0)
                .ok()
                .and_then(|dt| dt.to_zoned(zone.clone()).ok())
        };
        let second = jiff::SignedDuration::from_secs(1);
        let fraction = jiff::SignedDuration::from_nanos(i64::from(t.subsec_nanosecond()));
        let mut t = t.checked_add(second - fraction).ok()?;
        let mut added = false;
        let year_limit = t.year() + 5;
        'wrap: loop {
            if t.year() > year_limit {
                return None;
            }
            while !has(*month, t.month()) {
                if !added {
                    added = true;
                    t = at(t.year(), t.month(), 1, 0, 0)?;
                }
                t = t.checked_add(jiff::Span::new().months(1)).ok()?;
                if t.month() == 1 {
                    continue 'wrap;
                }
            }
            while !self.day_matches(&t) {
                if !added {
                    added = true;
                    t = at(t.year(), t.month(), t.day(), 0, 0)?;
                }
                t = t.checked_add(jiff::Span::new().days(1)).ok()?;
                if t.day() == 1 {
                    continue 'wrap;
                }
            }
            while !has(*hour, t.hour()) {
                if !added {
                    added = true;
                    t = at(t.year(), t.month(), t.day(), t.hour(), 0)?;
                }
                t = t.checked_add(jiff::SignedDuration::from_hours(1)).ok()?;
                if t.hour() == 0 {
                    continue 'wrap;
                }
            }
            while !has(*minute, t.minute()) {
                if !added {
                    added = true;
                    t = at(t.year(), t.month(), t.day(), t.hour(), t.minute())?;
                }
                t = t.checked_add(jiff::SignedDuration::from_mins(1)).ok()?;
                if t.minute() == 0 {
                    continue 'wrap;
                }
            }
            // Seconds: only 0 is set.
            while t.second() != 0 {
                // (`t` is on a whole second already: nothing to truncate.)
                added = true;
                t = t.checked_add(second).ok()?;
                if t.second() == 0 {
                    continue 'wrap;
                }
            }
            return Some(t.timestamp());
        }
    }

    /// `dayMatches`: both day fields must match when either is a `*`, else either.
    fn day_matches(&self, t: &jiff::Zoned) -> bool {
        let Schedule::Spec { dom, dow, .. } = self else {
            return false;
        };
        let dom_match = dom & (1u64 << u32::try_from(t.day()).unwrap_or(63)) != 0;
        let weekday = t.weekday().to_sunday_zero_offset();
        let dow_match = dow & (1u64 << u32::try_from(weekday).unwrap_or(63)) != 0;
        if dom & STAR != 0 || dow & STAR != 0 {
            dom_match && dow_match
        } else {
            dom_match || dow_match
        }
    }
}

/// robfig/cron's `starBit`: the field was `*` or `?` (for the day-of-month/day-of-week rule).
const STAR: u64 = 1 << 63;

/// `cron.ParseStandard(spec)`: `Err` carries the parser's message
/// (`expected exactly 5 fields, found 1: [foo]`).
pub(crate) fn parse_standard(spec: &str) -> Result<(), String> {
    parse(spec).map(drop)
}

/// `cron.ParseStandard(spec)`, keeping the schedule.
pub(crate) fn parse(spec: &str) -> Result<Schedule, String> {
    if spec.is_empty() {
        return Err("empty spec string".to_owned());
    }
    let mut spec = spec;
    let mut zone = jiff::tz::TimeZone::UTC;
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
        zone = time_zone(name);
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return parse_descriptor(spec, zone);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    let mut bits = [0u64; 5];
    for ((field, bounds), bits) in fields
        .iter()
        .zip([&MINUTES, &HOURS, &DOM, &MONTHS, &DOW])
        .zip(&mut bits)
    {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            *bits |= range(expr, bounds)?;
        }
    }
    let [minute, hour, dom, month, dow] = bits;
    Ok(Schedule::Spec {
        minute,
        hour,
        dom,
        month,
        dow,
        zone,
    })
}

/// The zone of a name [`load_location`] accepts (`""`, `UTC` and `Local` are UTC, as on a
/// control plane node).
pub(crate) fn time_zone(name: &str) -> jiff::tz::TimeZone {
    match name {
        "" | "UTC" | "Local" => jiff::tz::TimeZone::UTC,
        _ => jiff::tz::TimeZone::get(name).unwrap_or(jiff::tz::TimeZone::UTC),
    }
}

/// `getRange`: one `a`, `a-b`, `*`, `?`, with an optional `/step`, as bits.
fn range(expr: &str, r: &Bounds) -> Result<u64, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let mut extra = 0;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        extra = STAR;
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
            if step > 1 {
                extra = 0;
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
    Ok(bits(start, end, step) | extra)
}

/// `getBits`.
fn bits(min: u64, max: u64, step: u64) -> u64 {
    (min..=max)
        .step_by(usize::try_from(step).unwrap_or(usize::MAX))
        .fold(0, |bits, i| bits | 1 << i)
}

/// `all`: every value of the field, as a `*`.
fn all(r: &Bounds) -> u64 {
    bits(r.min, r.max, 1) | STAR
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
fn parse_descriptor(descriptor: &str, zone: jiff::tz::TimeZone) -> Result<Schedule, String> {
    let first = |r: &Bounds| 1u64 << r.min;
    let (minute, hour) = (first(&MINUTES), first(&HOURS));
    let (dom, month, dow) = match descriptor {
        "@yearly" | "@annually" => (first(&DOM), first(&MONTHS), all(&DOW)),
        "@monthly" => (first(&DOM), all(&MONTHS), all(&DOW)),
        "@weekly" => (all(&DOM), all(&MONTHS), first(&DOW)),
        "@daily" | "@midnight" => (all(&DOM), all(&MONTHS), all(&DOW)),
        "@hourly" => {
            return Ok(Schedule::Spec {
                minute,
                hour: all(&HOURS),
                dom: all(&DOM),
                month: all(&MONTHS),
                dow: all(&DOW),
                zone,
            });
        }
        _ => {
            let Some(duration) = descriptor.strip_prefix("@every ") else {
                return Err(format!("unrecognized descriptor: {descriptor}"));
            };
            let nanos = parse_duration(duration)
                .map_err(|e| format!("failed to parse duration {descriptor}: {e}"))?;
            // `Every`: at least a second, whole seconds.
            let secs = i64::try_from(nanos / 1_000_000_000)
                .unwrap_or(i64::MAX)
                .max(1);
            return Ok(Schedule::Every(jiff::SignedDuration::from_secs(secs)));
        }
    };
    Ok(Schedule::Spec {
        minute,
        hour,
        dom,
        month,
        dow,
        zone,
    })
}

/// Go's `time.ParseDuration`: nanoseconds, or its error text (overflow not modelled).
fn parse_duration(text: &str) -> Result<i128, String> {
    let invalid = || format!("time: invalid duration {}", go_quote(text));
    let mut s = text.strip_prefix(['+', '-']).unwrap_or(text);
    let sign = if text.starts_with('-') { -1 } else { 1 };
    let mut total: i128 = 0;
    if s == "0" {
        return Ok(0);
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
        let Some(scale) = unit_nanos(unit) else {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                go_quote(unit),
                go_quote(text)
            ));
        };
        let whole: i128 = whole.parse().unwrap_or_default();
        let fraction_value: i128 = fraction.parse().unwrap_or_default();
        let fraction_scale =
            10i128.saturating_pow(u32::try_from(fraction.len()).unwrap_or(u32::MAX));
        total += whole * scale + fraction_value * scale / fraction_scale;
        s = &s[unit_end..];
    }
    Ok(sign * total)
}

/// Nanoseconds in one of Go's duration units.
fn unit_nanos(unit: &str) -> Option<i128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
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
