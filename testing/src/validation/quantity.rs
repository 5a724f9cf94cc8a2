//! apimachinery's `resource.Quantity` (`pkg/api/resource/quantity.go`): parsing, the canonical
//! form the encoder writes (`CanonicalizeBytes`: `0.5` is `500m`, `1024Mi` is `1Gi`), rounding
//! up to a scale (`RoundUp`, which `SetDefaults_ResourceList` applies at milli) and comparison.
//!
//! A value is held as `mantissa × 10^scale` in an `i128`: quantities too large for it (beyond
//! about 10^38) are refused as unparsable, where upstream keeps them in an `inf.Dec`.

use std::cmp::Ordering;

/// The decoder's message for a string that is not a quantity (`ErrFormatWrong`).
pub(crate) const FORMAT_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// How a quantity was written, which its canonical form keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `Ki`, `Mi`, ... (`BinarySI`).
    Binary,
    /// `m`, `k`, `M`, ... or no suffix (`DecimalSI`).
    Decimal,
    /// `e3`, `E6` (`DecimalExponent`).
    Exponent,
}

/// A parsed quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quantity {
    mantissa: i128,
    scale: i32,
    format: Format,
}

impl Quantity {
    /// `resource.ParseQuantity`.
    pub(crate) fn parse(text: &str) -> Option<Quantity> {
        let (sign, rest) = match text.as_bytes().first() {
            Some(b'-') => (-1, &text[1..]),
            Some(b'+') => (1, &text[1..]),
            _ => (1, text),
        };
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_len);
        if number.is_empty() || number.matches('.').count() > 1 || number == "." {
            return None;
        }
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let digits = format!("{whole}{fraction}");
        let mut mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let mut scale = -i32::try_from(fraction.len()).ok()?;
        let format = match suffix {
            "" => Format::Decimal,
            "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
                let power = "KMGTPE".find(&suffix[..1])? as u32 + 1;
                mantissa = mantissa.checked_mul(1024_i128.checked_pow(power)?)?;
                Format::Binary
            }
            "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => {
                scale += match suffix {
                    "n" => -9,
                    "u" => -6,
                    "m" => -3,
                    "k" => 3,
                    "M" => 6,
                    "G" => 9,
                    "T" => 12,
                    "P" => 15,
                    _ => 18,
                };
                Format::Decimal
            }
            _ => {
                let exponent = suffix.strip_prefix(['e', 'E'])?;
                let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                scale += exponent.parse::<i32>().ok()?;
                Format::Exponent
            }
        };
        let mut q = Quantity {
            mantissa: sign * mantissa,
            scale,
            format,
        };
        // Upstream keeps at most nano precision, rounding up.
        q.round_up(-9);
        q.normalise();
        Some(q)
    }

    /// The quantity of a JSON value: a string, or a number read as its text.
    pub(crate) fn of_json(value: &serde_json::Value) -> Option<Quantity> {
        match value {
            serde_json::Value::String(text) => Self::parse(text),
            serde_json::Value::Number(n) => Self::parse(&n.to_string()),
            _ => None,
        }
    }

    /// Moves factors of ten from the mantissa into the scale.
    fn normalise(&mut self) {
        if self.mantissa == 0 {
            self.scale = 0;
            return;
        }
        while self.mantissa % 10 == 0 {
            self.mantissa /= 10;
            self.scale += 1;
        }
    }

    /// `RoundUp(scale)`: at most `scale` precision, rounded away from zero.
    pub(crate) fn round_up(&mut self, scale: i32) {
        while self.scale < scale {
            let rest = self.mantissa % 10;
            self.mantissa /= 10;
            if rest != 0 {
                self.mantissa += self.mantissa.signum().max(1) * rest.signum();
            }
            self.scale += 1;
        }
        self.normalise();
    }

    /// `q.Add(other)`: the sum, in this quantity's format.
    pub(crate) fn sum(&self, other: &Quantity) -> Quantity {
        let scale = self.scale.min(other.scale);
        let at = |q: &Quantity| {
            q.mantissa
                .saturating_mul(10_i128.saturating_pow((q.scale - scale) as u32))
        };
        let mut q = Quantity {
            mantissa: at(self).saturating_add(at(other)),
            scale,
            format: self.format,
        };
        q.normalise();
        q
    }

    /// Whether the quantity is below zero.
    pub(crate) fn is_negative(&self) -> bool {
        self.mantissa < 0
    }

    /// `MilliValue()`: the value in thousandths, rounded up (saturating).
    pub(crate) fn milli_value(&self) -> i128 {
        let mut q = *self;
        q.round_up(-3);
        let shift = u32::try_from(q.scale + 3).unwrap_or(0);
        q.mantissa.saturating_mul(10_i128.saturating_pow(shift))
    }

    /// The value as an integer, if it is one.
    fn integer(&self) -> Option<i128> {
        if self.scale < 0 {
            return None;
        }
        self.mantissa
            .checked_mul(10_i128.checked_pow(self.scale as u32)?)
    }

    /// `CanonicalizeBytes`: the form the encoder writes.
    pub(crate) fn canonical(&self) -> String {
        if self.mantissa == 0 {
            return "0".into();
        }
        if self.format == Format::Binary
            && let Some(value) = self.integer().filter(|v| v.abs() >= 1024)
        {
            let (mut amount, mut power) = (value, 0);
            while amount % 1024 == 0 && power < 6 {
                amount /= 1024;
                power += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
            return format!("{amount}{suffix}");
        }
        let (mut amount, mut exponent) = (self.mantissa, self.scale);
        match exponent.rem_euclid(3) {
            1 => {
                amount *= 10;
                exponent -= 1;
            }
            2 => {
                amount *= 100;
                exponent -= 2;
            }
            _ => {}
        }
        let suffix = if self.format == Format::Exponent {
            if exponent == 0 {
                String::new()
            } else {
                format!("e{exponent}")
            }
        } else {
            match exponent {
                -9 => "n".into(),
                -6 => "u".into(),
                -3 => "m".into(),
                0 => String::new(),
                3 => "k".into(),
                6 => "M".into(),
                9 => "G".into(),
                12 => "T".into(),
                15 => "P".into(),
                18 => "E".into(),
                other => format!("e{other}"),
            }
        };
        format!("{amount}{suffix}")
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        let scale = self.scale.min(other.scale);
        let at = |q: &Quantity| {
            q.mantissa
                .saturating_mul(10_i128.saturating_pow((q.scale - scale) as u32))
        };
        at(self).cmp(&at(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Quantity::parse(text).unwrap().canonical()
    }

    #[test]
    fn canonical_forms_are_the_encoders() {
        for (text, expected) in [
            ("0.5", "500m"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("1G", "1G"),
            ("2", "2"),
            ("100m", "100m"),
            ("1500", "1500"),
            ("2000", "2k"),
            ("1e3", "1e3"),
            ("512", "512"),
            ("0.1Ki", "102400m"),
            ("0", "0"),
            ("-1Mi", "-1Mi"),
        ] {
            assert_eq!(canonical(text), expected, "{text}");
        }
        for bad in ["lots", "", "1.2.3", "1Kb", "e3", "."] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn rounding_up_and_comparing() {
        let mut q = Quantity::parse("0.0001").unwrap();
        q.round_up(-3);
        assert_eq!(q.canonical(), "1m");
        assert!(Quantity::parse("2").unwrap() > Quantity::parse("1500m").unwrap());
        assert!(Quantity::parse("1Gi").unwrap() > Quantity::parse("1G").unwrap());
    }
}
