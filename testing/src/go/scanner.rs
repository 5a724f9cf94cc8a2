//! The syntax errors of Go's `encoding/json` (`scanner.go`), word for word, for request bodies
//! kube-apiserver refuses before decoding them: `invalid character 'n' looking for beginning of
//! object key string`, `unexpected end of JSON input`. A port of the scanner's state machine,
//! without its nesting limit.

/// What the scanner expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEscape,
    /// Inside `\u`, with this many hex digits read.
    InStringEscapeU(u8),
    Negative,
    One,
    Zero,
    Dot,
    DotZero,
    Exponent,
    ExponentSign,
    ExponentZero,
    /// Inside a literal: its rest, and the literal for the message.
    Literal(&'static [u8], &'static str),
}

/// What an open `{` or `[` is parsing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// Go's `checkValid`: `None` if `bytes` is one JSON value, else the `SyntaxError` message
/// `json.Unmarshal` would return.
pub(crate) fn syntax_error(bytes: &[u8]) -> Option<String> {
    let mut scanner = Scanner {
        step: Step::BeginValue,
        stack: Vec::new(),
    };
    for &c in bytes {
        if let Err(why) = scanner.step(c) {
            return Some(format!("invalid character {} {why}", quote_char(c)));
        }
    }
    // Go's `eof`: a space ends a number at the top level, or is the invalid character of an
    // unfinished literal or number.
    if scanner.step == Step::EndTop {
        return None;
    }
    if let Err(why) = scanner.step(b' ') {
        return Some(format!("invalid character ' ' {why}"));
    }
    (scanner.step != Step::EndTop).then(|| "unexpected end of JSON input".into())
}

struct Scanner {
    step: Step,
    stack: Vec<Parse>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

impl Scanner {
    fn step(&mut self, c: u8) -> Result<(), String> {
        match self.step {
            Step::BeginValueOrEmpty if c == b']' => self.end_value(c),
            Step::BeginValue | Step::BeginValueOrEmpty => self.begin_value(c),
            Step::BeginStringOrEmpty if c == b'}' => {
                if let Some(top) = self.stack.last_mut() {
                    *top = Parse::ObjectValue;
                }
                self.end_value(c)
            }
            Step::BeginStringOrEmpty | Step::BeginString => match c {
                c if is_space(c) => Ok(()),
                b'"' => self.then(Step::InString),
                _ => Err("looking for beginning of object key string".into()),
            },
            Step::EndValue => self.end_value(c),
            Step::EndTop if is_space(c) => Ok(()),
            Step::EndTop => Err("after top-level value".into()),
            Step::InString => match c {
                b'"' => self.then(Step::EndValue),
                b'\\' => self.then(Step::InStringEscape),
                0x00..=0x1f => Err("in string literal".into()),
                _ => Ok(()),
            },
            Step::InStringEscape => match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => self.then(Step::InString),
                b'u' => self.then(Step::InStringEscapeU(0)),
                _ => Err("in string escape code".into()),
            },
            Step::InStringEscapeU(read) => match c {
                c if c.is_ascii_hexdigit() && read == 3 => self.then(Step::InString),
                c if c.is_ascii_hexdigit() => self.then(Step::InStringEscapeU(read + 1)),
                _ => Err("in \\u hexadecimal character escape".into()),
            },
            Step::Negative => match c {
                b'0' => self.then(Step::Zero),
                b'1'..=b'9' => self.then(Step::One),
                _ => Err("in numeric literal".into()),
            },
            Step::One if c.is_ascii_digit() => Ok(()),
            Step::One | Step::Zero => match c {
                b'.' => self.then(Step::Dot),
                b'e' | b'E' => self.then(Step::Exponent),
                _ => self.end_value(c),
            },
            Step::Dot if c.is_ascii_digit() => self.then(Step::DotZero),
            Step::Dot => Err("after decimal point in numeric literal".into()),
            Step::DotZero => match c {
                c if c.is_ascii_digit() => Ok(()),
                b'e' | b'E' => self.then(Step::Exponent),
                _ => self.end_value(c),
            },
            Step::Exponent if c == b'+' || c == b'-' => self.then(Step::ExponentSign),
            Step::Exponent | Step::ExponentSign if c.is_ascii_digit() => {
                self.then(Step::ExponentZero)
            }
            Step::Exponent | Step::ExponentSign => Err("in exponent of numeric literal".into()),
            Step::ExponentZero if c.is_ascii_digit() => Ok(()),
            Step::ExponentZero => self.end_value(c),
            Step::Literal(rest, literal) => match rest.split_first() {
                Some((&expected, rest)) if c == expected => self.then(if rest.is_empty() {
                    Step::EndValue
                } else {
                    Step::Literal(rest, literal)
                }),
                _ => Err(format!(
                    "in literal {literal} (expecting {})",
                    quote_char(rest.first().copied().unwrap_or_default())
                )),
            },
        }
    }

    fn then(&mut self, step: Step) -> Result<(), String> {
        self.step = step;
        Ok(())
    }

    fn begin_value(&mut self, c: u8) -> Result<(), String> {
        match c {
            c if is_space(c) => Ok(()),
            b'{' => {
                self.stack.push(Parse::ObjectKey);
                self.then(Step::BeginStringOrEmpty)
            }
            b'[' => {
                self.stack.push(Parse::ArrayValue);
                self.then(Step::BeginValueOrEmpty)
            }
            b'"' => self.then(Step::InString),
            b'-' => self.then(Step::Negative),
            b'0' => self.then(Step::Zero),
            b'1'..=b'9' => self.then(Step::One),
            b't' => self.then(Step::Literal(b"rue", "true")),
            b'f' => self.then(Step::Literal(b"alse", "false")),
            b'n' => self.then(Step::Literal(b"ull", "null")),
            _ => Err("looking for beginning of value".into()),
        }
    }

    fn end_value(&mut self, c: u8) -> Result<(), String> {
        let Some(&top) = self.stack.last() else {
            self.step = Step::EndTop;
            return self.step(c);
        };
        if is_space(c) {
            return self.then(Step::EndValue);
        }
        match (top, c) {
            (Parse::ObjectKey, b':') => {
                self.replace_top(Parse::ObjectValue);
                self.then(Step::BeginValue)
            }
            (Parse::ObjectKey, _) => Err("after object key".into()),
            (Parse::ObjectValue, b',') => {
                self.replace_top(Parse::ObjectKey);
                self.then(Step::BeginString)
            }
            (Parse::ObjectValue, b'}') | (Parse::ArrayValue, b']') => {
                self.stack.pop();
                self.then(Step::EndValue).and_then(|()| {
                    if self.stack.is_empty() {
                        self.then(Step::EndTop)
                    } else {
                        Ok(())
                    }
                })
            }
            (Parse::ObjectValue, _) => Err("after object key:value pair".into()),
            (Parse::ArrayValue, b',') => self.then(Step::BeginValue),
            (Parse::ArrayValue, _) => Err("after array element".into()),
        }
    }

    fn replace_top(&mut self, parse: Parse) {
        if let Some(top) = self.stack.last_mut() {
            *top = parse;
        }
    }
}

/// Go's `encoding/json` `quoteChar`: a byte as a single-quoted character literal (`'g'`,
/// `'\u0081'`, `'\x01'`).
pub(crate) fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".into(),
        b'"' => "'\"'".into(),
        b'\x07' => r"'\a'".into(),
        b'\x08' => r"'\b'".into(),
        b'\x0c' => r"'\f'".into(),
        b'\n' => r"'\n'".into(),
        b'\r' => r"'\r'".into(),
        b'\t' => r"'\t'".into(),
        b'\x0b' => r"'\v'".into(),
        b'\\' => r"'\\'".into(),
        0x20..=0x7e => format!("'{}'", char::from(c)),
        0x00..=0x1f | 0x7f => format!(r"'\x{c:02x}'"),
        // Go converts the byte to the rune of that number: Latin-1's printable ones as they
        // are, its controls, no-break space and soft hyphen escaped.
        0x80..=0xa0 | 0xad => format!(r"'\u{c:04x}'"),
        _ => format!("'{}'", char::from(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> Option<String> {
        syntax_error(text.as_bytes())
    }

    #[test]
    fn valid_json_has_no_error() {
        for ok in [
            r#"{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}}"#,
            "[]",
            " 0 ",
            "12",
            r#""s""#,
            "{ }",
            "[ 1 , 2 ]",
        ] {
            assert_eq!(error(ok), None, "{ok}");
        }
    }

    #[test]
    fn errors_are_gos() {
        // Each as Go 1.26's json.Unmarshal words it.
        for (text, want) in [
            (
                "{not json",
                "invalid character 'n' looking for beginning of object key string",
            ),
            ("", "unexpected end of JSON input"),
            ("{", "unexpected end of JSON input"),
            ("[1,", "unexpected end of JSON input"),
            ("x", "invalid character 'x' looking for beginning of value"),
            (r#"{"a" 1}"#, "invalid character '1' after object key"),
            (
                r#"{"a":1 "b"}"#,
                "invalid character '\"' after object key:value pair",
            ),
            ("[1 2]", "invalid character '2' after array element"),
            ("1 2", "invalid character '2' after top-level value"),
            ("{} x", "invalid character 'x' after top-level value"),
            ("\"a\nb\"", "invalid character '\\n' in string literal"),
            (r#""\q""#, "invalid character 'q' in string escape code"),
            (
                r#""\u12x4""#,
                "invalid character 'x' in \\u hexadecimal character escape",
            ),
            ("-x", "invalid character 'x' in numeric literal"),
            (
                "1.x",
                "invalid character 'x' after decimal point in numeric literal",
            ),
            (
                "1ex",
                "invalid character 'x' in exponent of numeric literal",
            ),
            (
                "tru",
                "invalid character ' ' in literal true (expecting 'e')",
            ),
            ("-", "invalid character ' ' in numeric literal"),
            ("\"abc", "unexpected end of JSON input"),
            (
                "trux",
                "invalid character 'x' in literal true (expecting 'e')",
            ),
            (
                "nul!",
                "invalid character '!' in literal null (expecting 'l')",
            ),
            ("[}", "invalid character '}' looking for beginning of value"),
        ] {
            assert_eq!(error(text).as_deref(), Some(want), "{text:?}");
        }
    }

    #[test]
    fn characters_are_quoted_as_go_quotes_them() {
        assert_eq!(quote_char(b'g'), "'g'");
        assert_eq!(quote_char(0x01), r"'\x01'");
        assert_eq!(quote_char(0x81), r"'\u0081'");
        assert_eq!(quote_char(0xe9), "'é'");
        assert_eq!(quote_char(b'\''), r"'\''");
    }
}
