//! YAML request bodies: `application/yaml` creates and updates, and server-side apply patches
//! (`application/apply-patch+yaml`), read into the JSON model every other body uses, as
//! kube-apiserver reads them: sigs.k8s.io/yaml over go-yaml v2, so YAML 1.1 scalars (`y`, `no`,
//! `on` are booleans; `0755` is octal; `1_000` is an integer; timestamps stay strings), the last
//! of duplicate keys wins, and the duplicates are reported as go-yaml's strict decoder words
//! them. JSON is YAML, so JSON bodies under these types parse too.

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A YAML body as kube-apiserver decodes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decoded {
    /// The first document, as JSON.
    pub value: Value,
    /// Each duplicate key, as go-yaml's strict decoder reports it: `line 7: key "a" already
    /// set in map` (the line of the duplicate's value).
    pub duplicates: Vec<String>,
}

/// Parses one YAML document into JSON values; `Err` is go-yaml's message
/// (`yaml: line 4: did not find expected key`).
pub(crate) fn decode(body: &[u8]) -> Result<Value, String> {
    decode_with_duplicates(body).map(|decoded| decoded.value)
}

/// [`decode`], with the duplicate keys.
pub(crate) fn decode_with_duplicates(body: &[u8]) -> Result<Decoded, String> {
    // The syntax check is serde_yaml_ng's: libyaml's, of which go-yaml is a port.
    let checked =
        serde_yaml_ng::from_slice::<Value>(body).map_err(|e| go_yaml_error(&e.to_string()))?;
    let Ok(text) = std::str::from_utf8(body) else {
        return Ok(Decoded {
            value: checked,
            duplicates: Vec::new(),
        });
    };
    let mut reader = Reader::default();
    let mut parser = Parser::new_from_str(text);
    match parser.load(&mut reader, false) {
        Ok(()) if reader.error.is_none() => Ok(Decoded {
            value: reader.root.unwrap_or(Value::Null),
            duplicates: reader.duplicates,
        }),
        Ok(()) => Err(reader.error.unwrap_or_default()),
        Err(e) => Err(e.to_string()),
    }
}

/// go-yaml's message for a libyaml error that serde_yaml_ng words `<problem> at line <L> column
/// <C>, while <context>`: `yaml: line <N>: <problem>`, where N is the problem's line as go-yaml
/// counts it — the 0-based line of a parser error's mark, the 1-based line of a scanner error's
/// (`while scanning …`) — and the line is left out on the first line.
fn go_yaml_error(message: &str) -> String {
    let Some((problem, rest)) = message.split_once(" at line ") else {
        return format!("yaml: {message}");
    };
    let line: usize = rest
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let scanning = rest.contains(", while scanning");
    let go_line = if scanning {
        line
    } else {
        line.saturating_sub(1)
    };
    if line <= 1 || go_line == 0 {
        format!("yaml: {problem}")
    } else {
        format!("yaml: line {go_line}: {problem}")
    }
}

/// `value` as sigs.k8s.io/yaml's `JSONToYAML` writes it (go-yaml v2's emitter, block style):
/// keys sorted (and quoted like values: the key `n` is `"n"`); a list under a key at the key's indentation; a string quoted when go-yaml would
/// read it back as something else (`"214"`, `"true"`, `""`, a timestamp) — double quotes — or
/// when it cannot be plain (`': x'`) — single quotes; a multi-line string as a literal block.
pub(crate) fn encode(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => emit_mapping(map, 0, &mut out),
        Value::Array(items) if !items.is_empty() => emit_sequence(items, 0, &mut out),
        other => {
            out.push_str(&inline(other, 0));
            out.push('\n');
        }
    }
    out
}

/// The entries of a non-empty mapping, each on its own line at `indent`.
fn emit_mapping(map: &Map<String, Value>, indent: usize, out: &mut String) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&scalar_text(key, indent));
        out.push(':');
        emit_value(&map[key], indent, out);
    }
}

/// The items of a non-empty sequence, each `- ` at `indent` (a mapping item's first entry on
/// the dash's line).
fn emit_sequence(items: &[Value], indent: usize, out: &mut String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(&" ".repeat(indent));
        }
        out.push('-');
        match item {
            Value::Object(map) if !map.is_empty() => {
                out.push(' ');
                emit_mapping(map, indent + 2, out);
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push(' ');
                emit_sequence(inner, indent + 2, out);
            }
            other => {
                out.push(' ');
                out.push_str(&inline(other, indent + 2));
                out.push('\n');
            }
        }
    }
}

/// The value of a mapping entry at `indent`, after its `key:`.
fn emit_value(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            out.push_str(&" ".repeat(indent + 2));
            emit_mapping(map, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            // go-yaml v2 writes a mapping's sequence at the key's own indentation.
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            emit_sequence(items, indent, out);
        }
        other => {
            out.push(' ');
            out.push_str(&inline(other, indent + 2));
            out.push('\n');
        }
    }
}

/// A scalar, an empty mapping (`{}`) or an empty sequence (`[]`) on one line; a multi-line
/// string as a literal block whose lines are at `indent`.
fn inline(value: &Value, indent: usize) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => go_float(f),
            _ => n.to_string(),
        },
        Value::String(s) => scalar_text(s, indent),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// go-yaml v2's float: `strconv.FormatFloat(f, 'g', -1, 64)`.
fn go_float(f: f64) -> String {
    let exponent = if f == 0.0 {
        0
    } else {
        f.abs().log10().floor() as i32
    };
    if (-4..21).contains(&exponent) {
        f.to_string()
    } else {
        let text = format!("{f:e}");
        // Go writes the exponent's sign and at least two digits: 1e+21, 1e-05.
        match text.split_once('e') {
            Some((mantissa, exp)) => {
                let (sign, digits) = match exp.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', exp),
                };
                format!("{mantissa}e{sign}{digits:0>2}")
            }
            None => text,
        }
    }
}

/// A string as go-yaml v2 writes it (see [`encode`]).
fn scalar_text(s: &str, indent: usize) -> String {
    if s.contains('\n') {
        let chomp = if s.ends_with("\n\n") {
            "+"
        } else if s.ends_with('\n') {
            ""
        } else {
            "-"
        };
        let mut text = format!("|{chomp}");
        for line in s.trim_end_matches('\n').split('\n') {
            text.push('\n');
            if !line.is_empty() {
                text.push_str(&" ".repeat(indent));
                text.push_str(line);
            }
        }
        return text;
    }
    if !matches!(resolve(s), Value::String(_)) || timestamp_like(s) || special(s) {
        return double_quoted(s);
    }
    if plain_allowed(s) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// Characters only a double-quoted scalar can hold.
fn special(s: &str) -> bool {
    s.chars()
        .any(|c| c.is_control() || c == '\u{feff}' || c == '\u{85}')
}

/// libyaml's analysis of a plain scalar in block context.
fn plain_allowed(s: &str) -> bool {
    let bytes = s.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if first == b' ' || last == b' ' || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    let followed_by_blank = |i: usize| bytes.get(i + 1).is_none_or(|b| *b == b' ');
    if b"#,[]{}&*!|>'\"%@`".contains(&first) {
        return false;
    }
    if matches!(first, b'-' | b'?' | b':') && followed_by_blank(0) {
        return false;
    }
    bytes.iter().enumerate().skip(1).all(|(i, b)| match b {
        b':' => !followed_by_blank(i),
        b'#' => bytes[i - 1] != b' ',
        _ => true,
    })
}

/// A double-quoted scalar with YAML's escapes.
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A collection being read.
enum Open {
    Sequence {
        items: Vec<Value>,
        anchor: usize,
    },
    Mapping {
        map: Map<String, Value>,
        /// The key read, waiting for its value.
        key: Option<String>,
        anchor: usize,
    },
}

/// Builds the JSON value of the first document from the parser's events.
#[derive(Default)]
struct Reader {
    open: Vec<Open>,
    root: Option<Value>,
    /// Anchored values, by anchor id.
    anchors: std::collections::HashMap<usize, Value>,
    duplicates: Vec<String>,
    error: Option<String>,
    /// Whether the first document is complete.
    done: bool,
}

impl MarkedEventReceiver for Reader {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.done || self.error.is_some() {
            return;
        }
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let value = scalar(&text, style, tag.as_ref());
                self.anchor(anchor, &value);
                self.push(value, mark);
            }
            Event::Alias(anchor) => {
                let value = self.anchors.get(&anchor).cloned().unwrap_or(Value::Null);
                self.push(value, mark);
            }
            Event::SequenceStart(anchor, _) => self.open.push(Open::Sequence {
                items: Vec::new(),
                anchor,
            }),
            Event::MappingStart(anchor, _) => self.open.push(Open::Mapping {
                map: Map::new(),
                key: None,
                anchor,
            }),
            Event::SequenceEnd | Event::MappingEnd => {
                let (value, anchor) = match self.open.pop() {
                    Some(Open::Sequence { items, anchor }) => (Value::Array(items), anchor),
                    Some(Open::Mapping { map, anchor, .. }) => (Value::Object(map), anchor),
                    None => return,
                };
                self.anchor(anchor, &value);
                self.push(value, mark);
            }
            Event::DocumentEnd => self.done = true,
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentStart => {}
        }
    }
}

impl Reader {
    fn anchor(&mut self, anchor: usize, value: &Value) {
        if anchor > 0 {
            self.anchors.insert(anchor, value.clone());
        }
    }

    /// Places a complete `value` (which starts at `mark`): a sequence's item, a mapping's key
    /// or value, or the document.
    fn push(&mut self, value: Value, mark: Marker) {
        match self.open.last_mut() {
            None => self.root = Some(value),
            Some(Open::Sequence { items, .. }) => items.push(value),
            Some(Open::Mapping { map, key, .. }) => match key.take() {
                None => match key_string(&value) {
                    Ok(k) => *key = Some(k),
                    Err(e) => self.error = Some(e),
                },
                Some(k) => {
                    if map.contains_key(&k) {
                        self.duplicates.push(format!(
                            "line {}: key {} already set in map",
                            mark.line(),
                            go_key(&k)
                        ));
                    }
                    map.insert(k, value);
                }
            },
        }
    }
}

/// A mapping key as sigs.k8s.io/yaml writes it in JSON.
fn key_string(key: &Value) -> Result<String, String> {
    match key {
        Value::String(s) => Ok(s.clone()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(format!("unsupported map key: {other}")),
    }
}

/// A key as `%#v` prints it: Go-quoted (go-yaml's keys here are strings, or the booleans and
/// numbers JSON keys were converted from).
fn go_key(key: &str) -> String {
    crate::go::fmt::go_quote(key)
}

/// A scalar's value: quoted and block scalars, and `!!str`, are strings; plain ones resolve as
/// go-yaml v2's `resolve` does.
fn scalar(text: &str, style: TScalarStyle, tag: Option<&Tag>) -> Value {
    let is_str_tag = tag.is_some_and(|t| t.suffix == "str" || t.suffix == "binary");
    if style != TScalarStyle::Plain || is_str_tag {
        return Value::String(text.to_owned());
    }
    resolve(text)
}

/// go-yaml v2's resolution of a plain scalar (YAML 1.1).
fn resolve(text: &str) -> Value {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Value::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Value::Bool(false);
        }
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        // NaN and infinities have no JSON form: sigs.k8s.io/yaml cannot convert them either,
        // and they are kept as text here.
        _ => {}
    }
    let Some(first) = text.bytes().next() else {
        return Value::Null;
    };
    if first == b'.' {
        return text
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && !text.contains(['i', 'I', 'n', 'N']))
            .map_or_else(|| Value::String(text.to_owned()), number);
    }
    if !(first.is_ascii_digit() || first == b'+' || first == b'-') {
        return Value::String(text.to_owned());
    }
    if timestamp_like(text) {
        // A timestamp, kept as its text when decoded into interface{}.
        return Value::String(text.to_owned());
    }
    let plain = text.replace('_', "");
    if let Some(i) = go_parse_int(&plain) {
        return Value::from(i);
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Value::from(u);
    }
    if yaml_style_float(&plain)
        && let Ok(f) = plain.parse::<f64>()
        && f.is_finite()
    {
        return number(f);
    }
    Value::String(text.to_owned())
}

/// A float as JSON carries it after Go's encoder: whole values within 1e21 print without a
/// fraction, and decode back as integers.
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // Lossless for the magnitudes checked (i64 holds up to 9.2e18; larger stay floats).
        #[allow(clippy::cast_possible_truncation)]
        if f.abs() < 9.2e18 {
            return Value::from(f as i64);
        }
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// `strconv.ParseInt(s, 0, 64)`: an optional sign, then `0x`, `0o`, `0b` or a leading `0`
/// (octal) prefix, or decimal digits.
fn go_parse_int(s: &str) -> Option<i64> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_magnitude(digits)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// `strconv.ParseUint(s, 0, 64)`.
fn go_parse_uint(s: &str) -> Option<u64> {
    go_parse_magnitude(s)
}

/// The unsigned part of Go's base-0 integer syntax.
fn go_parse_magnitude(digits: &str) -> Option<u64> {
    let lower = digits.to_ascii_lowercase();
    let (radix, rest) = if let Some(r) = lower.strip_prefix("0x") {
        (16, r)
    } else if let Some(r) = lower.strip_prefix("0o") {
        (8, r)
    } else if let Some(r) = lower.strip_prefix("0b") {
        (2, r)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if rest.is_empty() || !rest.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(rest, radix).ok()
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => digits(fraction),
        Some((whole, fraction)) => digits(whole) && fraction.bytes().all(|b| b.is_ascii_digit()),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

/// Whether `text` has the shape of a YAML timestamp go-yaml parses (`2001-12-14`,
/// `2001-12-14T21:59:43.10Z`, `2001-12-14 21:59:43.10 -5`): a date first.
fn timestamp_like(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 8
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && text[5..]
            .split(['-', 'T', 't', ' '])
            .next()
            .is_some_and(|m| (1..=2).contains(&m.len()) && m.bytes().all(|c| c.is_ascii_digit()))
        && text.matches('-').count() >= 2
}

#[cfg(test)]
mod tests {
    use super::{decode, decode_with_duplicates};
    use serde_json::json;

    #[test]
    fn yaml_and_json_bodies_read_alike() {
        let yaml = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  v: \"1\"\n";
        let expected = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a"}, "data": {"v": "1"}});
        assert_eq!(decode(yaml).unwrap(), expected);
        assert_eq!(decode(expected.to_string().as_bytes()).unwrap(), expected);
        assert!(decode(b"metadata: [unclosed").is_err());
    }

    /// Errors are go-yaml's: a parser error on its mark's 0-based line, a scanner error on its
    /// 1-based line, none on the first line.
    #[test]
    fn syntax_errors_read_as_go_yaml_words_them() {
        assert_eq!(
            decode(b"{: [").unwrap_err(),
            "yaml: did not find expected node content"
        );
        assert_eq!(
            decode(b"a: 1\nb: 2\nc:\n  d: 1\n e: 2\n").unwrap_err(),
            "yaml: line 4: did not find expected key"
        );
        assert_eq!(
            decode(b"a: 1\nb: 2\nc:\n\td: 1\n").unwrap_err(),
            "yaml: line 4: found character that cannot start any token"
        );
    }

    /// Keys resolve too: the key `n` is the boolean false, written `"false"` in JSON (YAML 1.1's
    /// "Norway problem", as kube-apiserver has it).
    #[test]
    fn plain_scalars_resolve_as_yaml_1_1() {
        let yaml = b"a: y\nb: no\nc: On\nd: 0755\ne: 1_000\nf: 0x1F\ng: 1.5e3\nh: ~\ni: 2001-12-14\nj: 'y'\nk: .5\nl: -0b11\nm: 1.0\nn: +7\no: 12abc\n";
        assert_eq!(
            decode(yaml).unwrap(),
            json!({"a": true, "b": false, "c": true, "d": 493, "e": 1000, "f": 31,
                   "g": 1500, "h": null, "i": "2001-12-14", "j": "y", "k": 0.5, "l": -3,
                   "m": 1, "false": 7, "o": "12abc"})
        );
    }

    #[test]
    fn the_last_duplicate_wins_and_each_is_reported_with_its_line() {
        let yaml = b"apiVersion: v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  a: x\n  a: y\n";
        let decoded = decode_with_duplicates(yaml).unwrap();
        assert_eq!(decoded.value["spec"], json!({"a": true}));
        assert_eq!(decoded.duplicates, ["line 7: key \"a\" already set in map"]);
    }

    #[test]
    fn objects_are_written_as_go_yaml_writes_them() {
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"},
            "metadata": {"name": "a", "resourceVersion": "214", "creationTimestamp": "2026-12-04T19:16:20Z",
                "managedFields": [{"manager": "unknown", "fieldsV1": {"f:data": {".": {}, "f:k": {}}}}],
                "labels": {}},
            "spec": {"on": "yes", "empty": "", "colon": "a: b", "script": "line 1\nline 2\n",
                "list": [], "n": 1.5, "dash": "- x"}});
        assert_eq!(
            super::encode(&object),
            "apiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\nmetadata:\n  creationTimestamp: \"2026-12-04T19:16:20Z\"\n  labels: {}\n  managedFields:\n  - fieldsV1:\n      f:data:\n        .: {}\n        f:k: {}\n    manager: unknown\n  name: a\n  resourceVersion: \"214\"\nspec:\n  colon: 'a: b'\n  dash: '- x'\n  empty: \"\"\n  list: []\n  \"n\": 1.5\n  \"on\": \"yes\"\n  script: |\n    line 1\n    line 2\n"
        );
    }

    #[test]
    fn anchors_and_aliases_are_copied() {
        let yaml = b"base: &b {x: 1}\nother: *b\n";
        assert_eq!(
            decode(yaml).unwrap(),
            json!({"base": {"x": 1}, "other": {"x": 1}})
        );
    }
}
