//! Go's `time.Parse` for the two layouts Kubernetes times are decoded with — `metav1.Time`
//! (`time.RFC3339`) and `metav1.MicroTime` (`metav1.RFC3339Micro`) — with its error messages,
//! and the UTC text the encoder writes back (`Time` at second precision, `MicroTime` at
//! microseconds).

use jiff::Timestamp;
use jiff::civil::date;
use jiff::tz::{Offset, TimeZone};

use crate::go::fmt::go_quote;

/// Which of the two layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `metav1.Time`: `2006-01-02T15:04:05Z07:00` (a fraction after the seconds is accepted
    /// and dropped, as `time.Parse` accepts one the layout does not name).
    Time,
    /// `metav1.MicroTime`: `2006-01-02T15:04:05.000000Z07:00` (exactly six digits).
    MicroTime,
}

impl Layout {
    fn text(self) -> &'static str {
        match self {
            Layout::Time => "2006-01-02T15:04:05Z07:00",
            Layout::MicroTime => "2006-01-02T15:04:05.000000Z07:00",
        }
    }
}

/// One element of a layout: the literal before it and the element itself.
const ELEMENTS: [(&str, &str); 7] = [
    ("", "2006"),
    ("-", "01"),
    ("-", "02"),
    ("T", "15"),
    (":", "04"),
    (":", "05"),
    ("", "Z07:00"),
];

/// Parses `value` as `time.Parse(layout, value)` does, then re-encodes it as the type's
/// `MarshalJSON` writes it (UTC). `Err` is Go's message (`parsing time "x" as "2006-…":
/// cannot parse "x" as "2006"`).
pub(crate) fn normalise(value: &str, layout: Layout) -> Result<String, String> {
    let timestamp = parse(value, layout)?;
    Ok(match layout {
        Layout::Time => timestamp.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Layout::MicroTime => timestamp.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string(),
    })
}

fn parse(original: &str, layout: Layout) -> Result<Timestamp, String> {
    let cannot = |rest: &str, element: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            go_quote(original),
            go_quote(layout.text()),
            go_quote(rest),
            go_quote(element)
        )
    };
    let out_of_range =
        |what: &str| format!("parsing time {}: {what} out of range", go_quote(original));
    let mut value = original;
    let mut numbers = [0i64; 6];
    let mut nanos = 0i64;
    let mut offset_seconds = 0i32;
    for (index, (literal, element)) in ELEMENTS.iter().enumerate() {
        if layout == Layout::MicroTime && *element == "Z07:00" {
            // `.000000`: a separator and exactly six digits.
            let bytes = value.as_bytes();
            if bytes.len() < 7
                || !matches!(bytes[0], b'.' | b',')
                || !bytes[1..7].iter().all(u8::is_ascii_digit)
            {
                return Err(cannot(value, ".000000"));
            }
            nanos = value[1..7].parse::<i64>().unwrap_or(0) * 1000;
            value = &value[7..];
        }
        let Some(rest) = value.strip_prefix(literal) else {
            return Err(cannot(value, literal));
        };
        value = rest;
        if *element == "Z07:00" {
            if let Some(rest) = value.strip_prefix('Z') {
                value = rest;
                break;
            }
            let bytes = value.as_bytes();
            let digits =
                |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
            if bytes.len() < 6
                || bytes[3] != b':'
                || !matches!(bytes[0], b'+' | b'-')
                || !digits(1..3)
                || !digits(4..6)
            {
                return Err(cannot(value, element));
            }
            let hours: i32 = value[1..3].parse().unwrap_or(0);
            let minutes: i32 = value[4..6].parse().unwrap_or(0);
            if hours > 24 || minutes > 59 {
                return Err(out_of_range("time zone offset"));
            }
            offset_seconds = (hours * 3600 + minutes * 60) * if bytes[0] == b'-' { -1 } else { 1 };
            value = &value[6..];
            break;
        }
        // `2006` takes four digits, `15` one or two, the others exactly two.
        let width = match *element {
            "2006" => 4,
            "15" if value.len() < 2 || !value.as_bytes()[1].is_ascii_digit() => 1,
            _ => 2,
        };
        let Some(digits) = value
            .get(..width)
            .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
        else {
            return Err(cannot(value, element));
        };
        let number: i64 = digits.parse().unwrap_or(0);
        let (low, high, what) = match *element {
            "01" => (1, 12, "month"),
            "15" => (0, 23, "hour"),
            "04" => (0, 59, "minute"),
            "05" => (0, 59, "second"),
            _ => (0, 9999, ""),
        };
        if !(low..=high).contains(&number) {
            return Err(out_of_range(what));
        }
        numbers[index] = number;
        value = &value[width..];
        if *element == "05" && layout == Layout::Time {
            // A fraction the layout does not name is accepted (and, in a `metav1.Time`, dropped).
            let bytes = value.as_bytes();
            if bytes.len() >= 2 && matches!(bytes[0], b'.' | b',') && bytes[1].is_ascii_digit() {
                let end = 1 + bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
                value = &value[end..];
            }
        }
    }
    if !value.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            go_quote(original),
            go_quote(value)
        ));
    }
    let [year, month, day, hour, minute, second] = numbers;
    let civil = date(year as i16, month as i8, 1);
    if day < 1 || day > i64::from(civil.days_in_month()) {
        return Err(out_of_range("day"));
    }
    let datetime = date(year as i16, month as i8, day as i8).at(
        hour as i8,
        minute as i8,
        second as i8,
        nanos as i32,
    );
    let zone = TimeZone::fixed(Offset::from_seconds(offset_seconds).map_err(|e| e.to_string())?);
    datetime
        .to_zoned(zone)
        .map(|zoned| zoned.timestamp())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_as_go_parses_them() {
        assert_eq!(
            normalise("2024-05-01T12:00:00+02:00", Layout::Time).unwrap(),
            "2024-05-01T10:00:00Z"
        );
        assert_eq!(
            normalise("2024-05-01T10:00:05.5Z", Layout::Time).unwrap(),
            "2024-05-01T10:00:05Z"
        );
        assert_eq!(
            normalise("2024-05-01T12:00:00.000001+02:00", Layout::MicroTime).unwrap(),
            "2024-05-01T10:00:00.000001Z"
        );
        assert_eq!(
            normalise("now", Layout::Time).unwrap_err(),
            r#"parsing time "now" as "2006-01-02T15:04:05Z07:00": cannot parse "now" as "2006""#
        );
        // The messages kube-apiserver v1.34 answers for events' `eventTime`.
        for (value, rest, element) in [
            ("2024-05-01T10:00:00Z", "Z", ".000000"),
            ("2024-05-01T10:00:00.123Z", ".123Z", ".000000"),
            ("2024-05-01T10:00:00.123456789Z", "789Z", "Z07:00"),
            ("yesterday", "yesterday", "2006"),
        ] {
            assert_eq!(
                normalise(value, Layout::MicroTime).unwrap_err(),
                format!(
                    "parsing time {value:?} as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse {rest:?} as {element:?}"
                )
            );
        }
        assert_eq!(
            normalise("2024-13-01T00:00:00Z", Layout::Time).unwrap_err(),
            r#"parsing time "2024-13-01T00:00:00Z": month out of range"#
        );
        assert_eq!(
            normalise("2024-02-30T00:00:00Z", Layout::Time).unwrap_err(),
            r#"parsing time "2024-02-30T00:00:00Z": day out of range"#
        );
    }
}
