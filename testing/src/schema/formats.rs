//! The string formats apiextensions-apiserver validates (kube-openapi `pkg/validation/strfmt`),
//! by their names normalized without dashes (`date-time` is `datetime`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("format patterns are valid")
}

static UUID: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| re(r"^[^@\s<>]+@[^@\s<>]+$"));
static MAC: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$")
});
static HEXCOLOR: LazyLock<Regex> = LazyLock::new(|| re(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGBCOLOR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
    )
});
static SSN: LazyLock<Regex> = LazyLock::new(|| re(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"));
static BSON_OBJECT_ID: LazyLock<Regex> = LazyLock::new(|| re(r"^[0-9a-fA-F]{24}$"));
static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    // Go's time.ParseDuration, or the Scala-like `3 days` form strfmt also accepts.
    re(
        r"^([+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+|0|[+-]?\d+\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?))$",
    )
});
static SHORT_NAME: LazyLock<Regex> = LazyLock::new(|| re(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
static LONG_NAME: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));

/// Whether `s` is a valid value of `format` (dashes ignored: `date-time` is `datetime`).
/// Formats not listed are accepted.
pub(crate) fn is_valid(format: &str, s: &str) -> bool {
    match format.replace('-', "").as_str() {
        "uuid" => UUID.is_match(s),
        "uuid3" => UUID3.is_match(s),
        "uuid4" => UUID4.is_match(s),
        "uuid5" => UUID5.is_match(s),
        "hostname" => HOSTNAME.is_match(s),
        "email" => EMAIL.is_match(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "mac" => MAC.is_match(s),
        "hexcolor" => HEXCOLOR.is_match(s),
        "rgbcolor" => RGBCOLOR.is_match(s),
        "ssn" => SSN.is_match(s),
        "bsonobjectid" => BSON_OBJECT_ID.is_match(s),
        "byte" => crate::validation::base64::decode(s).is_ok(),
        "date" => jiff::civil::Date::strptime("%Y-%m-%d", s).is_ok(),
        "datetime" => s.parse::<jiff::Timestamp>().is_ok(),
        "duration" => DURATION.is_match(s),
        "uri" => is_uri(s),
        "k8sshortname" => s.len() <= 63 && SHORT_NAME.is_match(s),
        "k8slongname" => s.len() <= 253 && LONG_NAME.is_match(s),
        _ => true,
    }
}

/// `net.ParseCIDR`: an address, a slash, a prefix length within the address's bits.
fn is_cidr(s: &str) -> bool {
    let Some((addr, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match addr.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

/// `url.ParseRequestURI`: an absolute URI (`scheme:...`) or an absolute path.
fn is_uri(s: &str) -> bool {
    if s.starts_with('/') {
        return !s.contains(char::is_whitespace);
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !s.contains(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::is_valid;

    #[test]
    fn each_format_accepts_its_form_and_rejects_others() {
        let cases: &[(&str, &str, &str)] = &[
            ("uuid", "6F1C2A4E-8A9B-4C3D-9E8F-0A1B2C3D4E5F", "6f1c2a4e"),
            (
                "uuid4",
                "6f1c2a4e-8a9b-4c3d-9e8f-0a1b2c3d4e5f",
                "6f1c2a4e-8a9b-5c3d-9e8f-0a1b2c3d4e5f",
            ),
            ("hostname", "example.com", "-bad-.com"),
            ("email", "a@example.com", "not an email"),
            ("ipv4", "10.0.0.1", "10.0.0.256"),
            ("ipv6", "::1", "1.2.3.4"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("mac", "01:23:45:67:89:ab", "01:23:45"),
            ("hexcolor", "#fff", "#ffff"),
            ("rgbcolor", "rgb(1, 2, 255)", "rgb(256,0,0)"),
            ("byte", "aGVsbG8=", "aGVsbG8"),
            ("date", "2026-02-28", "2026-02-30"),
            ("datetime", "2026-01-02T03:04:05.5+01:00", "2026-01-02"),
            ("duration", "1h30m", "soon"),
            ("uri", "https://example.com/x", "example.com"),
            ("k8sshortname", "web-1", "Web"),
            ("k8slongname", "a.b-c", "a..b"),
        ];
        for (format, good, bad) in cases {
            assert!(is_valid(format, good), "{format} accepts {good:?}");
            assert!(!is_valid(format, bad), "{format} rejects {bad:?}");
        }
        assert!(is_valid("password", "anything at all"));
    }
}
