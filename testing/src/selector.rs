//! Label and field selectors, parsed and matched exactly as kube-apiserver does for
//! `?labelSelector=` and `?fieldSelector=`.
//!
//! - [`LabelSelector::parse`] is apimachinery `labels.Parse` (pkg/labels/selector.go): the same
//!   lexer (whitespace is ` `, `\t`, `\r`, `\n`; `in`/`notin` are keywords only in operator
//!   position), the same grammar (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
//!   `a>1`, `a<1`, comma = AND) and the same error texts, including the key/value validation
//!   (`validateLabelKey` = `IsQualifiedName`, `validateLabelValue` = `IsValidLabelValue`).
//! - [`FieldSelector::parse`] is apimachinery `fields.ParseSelector` (pkg/fields/selector.go):
//!   terms split on unescaped commas, operators `!=`, `==`, `=` found at their first occurrence,
//!   values unescaped with `\\`, `\,`, `\=`; a missing field reads as the empty string.
//!
//! Which fields a resource supports is the server's business ([`FieldSelector::fields`] lists
//! the ones a selector uses so it can answer `field label not supported: x`).

use std::collections::BTreeMap;
use std::fmt;

use super::validation::names::{is_qualified_name, is_valid_label_value};
use crate::go::fmt::go_quote;

/// A selector the API server could not parse. The server returns [`SelectorError::message`] as
/// the message of a 400 BadRequest Status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SelectorError {
    /// The error text, worded as apimachinery words it.
    pub message: String,
}

impl SelectorError {
    fn new(message: impl Into<String>) -> Self {
        SelectorError {
            message: message.into(),
        }
    }
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SelectorError {}

/// The labels (`metadata.labels`) of a JSON object; non-string values are skipped.
pub(crate) fn labels_of(obj: &serde_json::Value) -> BTreeMap<String, String> {
    obj.pointer("/metadata/labels")
        .and_then(serde_json::Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// A `field.Invalid(path, value, detail).Error()` text: `path: Invalid value: "value": detail`.
fn field_invalid(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {}: {detail}", go_quote(value))
}

/// `field.ErrorList.ToAggregate().Error()`: one error alone, several as `[a, b]` (deduplicated).
fn aggregate(errs: Vec<String>) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.len() {
        0 => None,
        1 => seen.pop(),
        _ => Some(format!("[{}]", seen.join(", "))),
    }
}

// ---------------------------------------------------------------------------------------------
// Label selectors
// ---------------------------------------------------------------------------------------------

/// The operator of one label requirement (apimachinery `selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operator {
    /// `key in (a,b)`
    In,
    /// `key notin (a,b)`
    NotIn,
    /// `key=a`
    Equals,
    /// `key==a`
    DoubleEquals,
    /// `key!=a`
    NotEquals,
    /// `key>1`
    GreaterThan,
    /// `key<1`
    LessThan,
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
}

/// One term of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub operator: Operator,
    /// The values, sorted and deduplicated as apimachinery's `sets.String` leaves them.
    pub values: Vec<String>,
}

impl Requirement {
    /// apimachinery `Requirement.Matches`.
    pub(crate) fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        let has = |v: &String| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => value.is_some_and(has),
            Operator::NotIn | Operator::NotEquals => !value.is_some_and(has),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(Ok(have)) = value.map(|v| v.parse::<i64>()) else {
                    return false;
                };
                let [want] = self.values.as_slice() else {
                    return false;
                };
                let Ok(want) = want.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

/// A parsed label selector: the AND of its requirements. The empty selector matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// apimachinery `Lexer.Lex`, run to the end (`Parser.scan`). Identifiers are cut only at ASCII
/// bytes, so they stay valid UTF-8.
fn scan(s: &str) -> Vec<(Token, String)> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut items = Vec::new();
    loop {
        while pos < b.len() && is_whitespace(b[pos]) {
            pos += 1;
        }
        if pos >= b.len() {
            items.push((Token::EndOfString, String::new()));
            return items;
        }
        if is_special_symbol(b[pos]) {
            // scanSpecialSymbol: the longest run of special bytes that is still an operator.
            let start = pos;
            let mut last: Option<(Token, usize)> = None;
            while pos < b.len() && is_special_symbol(b[pos]) {
                pos += 1;
                match keyword(&s[start..pos]) {
                    Some(tok) => last = Some((tok, pos)),
                    None if last.is_some() => {
                        pos -= 1;
                        break;
                    }
                    None => {}
                }
            }
            // Every single special byte is an operator, so `last` is always set here.
            let (tok, end) = last.unwrap_or((Token::Identifier, pos));
            pos = end;
            items.push((tok, s[start..end].to_owned()));
        } else {
            let start = pos;
            while pos < b.len() && !is_special_symbol(b[pos]) && !is_whitespace(b[pos]) {
                pos += 1;
            }
            let lit = &s[start..pos];
            items.push((keyword(lit).unwrap_or(Token::Identifier), lit.to_owned()));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    fn token_in(context: Context, tok: Token) -> Token {
        match (context, tok) {
            (Context::Values, Token::In | Token::NotIn) => Token::Identifier,
            _ => tok,
        }
    }

    fn lookahead(&self, context: Context) -> (Token, String) {
        let (tok, lit) = &self.items[self.position.min(self.items.len() - 1)];
        (Self::token_in(context, *tok), lit.clone())
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let item = self.lookahead(context);
        if self.position < self.items.len() - 1 {
            self.position += 1;
        }
        item
    }

    /// apimachinery `Parser.parse`.
    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self.parse_requirement().map_err(|e| {
                        SelectorError::new(format!("unable to parse requirement: {e}"))
                    })?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(SelectorError::new(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = operator {
            return new_requirement(key, op, Vec::new());
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(key, operator, values)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut tok, mut literal) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (tok, literal) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        // validateLabelKey(literal, p.path) with the nil path Parse uses: "<nil>: Invalid value".
        let errs = is_qualified_name(&literal);
        if !errs.is_empty() {
            return Err(field_invalid("<nil>", &literal, &errs.join("; ")));
        }
        let (t, _) = self.lookahead(Context::Values);
        if (t == Token::EndOfString || t == Token::Comma)
            && operator != Some(Operator::DoesNotExist)
        {
            operator = Some(Operator::Exists);
        }
        Ok((literal, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let s = self.parse_identifiers_list()?;
                if self.consume(Context::Values).0 != Token::ClosedPar {
                    // Go reports the token after '(' here, not the offending one.
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut s: Vec<String> = Vec::new();
        let insert = |s: &mut Vec<String>, v: String| {
            if !s.contains(&v) {
                s.push(v);
            }
        };
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    insert(&mut s, lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(s),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if s.is_empty() {
                        insert(&mut s, String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        insert(&mut s, String::new());
                        return Ok(s);
                    }
                    if tok2 == Token::Comma {
                        self.consume(Context::Values);
                        insert(&mut s, String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Token::EndOfString || tok == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// apimachinery `NewRequirement` as `parse` calls it (key already validated; values sorted as
/// `sets.String.List()` returns them).
fn new_requirement(
    key: String,
    operator: Operator,
    mut values: Vec<String>,
) -> Result<Requirement, String> {
    values.sort();
    values.dedup();
    let mut errs = Vec::new();
    if matches!(operator, Operator::GreaterThan | Operator::LessThan) {
        for (i, v) in values.iter().enumerate() {
            if v.parse::<i64>().is_err() {
                errs.push(field_invalid(
                    &format!("values[{i}]"),
                    v,
                    "for 'Gt', 'Lt' operators, the value must be an integer",
                ));
            }
        }
    }
    for (i, v) in values.iter().enumerate() {
        let problems = is_valid_label_value(v);
        if !problems.is_empty() {
            errs.push(field_invalid(
                &format!("values[{i}][{key}]"),
                v,
                &problems.join("; "),
            ));
        }
    }
    match aggregate(errs) {
        Some(message) => Err(message),
        None => Ok(Requirement {
            key,
            operator,
            values,
        }),
    }
}

impl LabelSelector {
    /// Parses a selector as apimachinery `labels.Parse` does; the error text is Go's.
    pub(crate) fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut parser = Parser {
            items: scan(s),
            position: 0,
        };
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// True when every requirement matches `labels` (the empty selector matches everything).
    pub(crate) fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

// ---------------------------------------------------------------------------------------------
// Field selectors
// ---------------------------------------------------------------------------------------------

/// One `field=value` (or `field!=value`) term of a field selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldTerm {
    /// The field path as written (`metadata.name`); no escaping applies to it.
    pub field: String,
    /// The unescaped value.
    pub value: String,
    /// `!=` rather than `=`/`==`.
    pub negated: bool,
}

/// A parsed field selector: the AND of its terms. The empty selector matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FieldSelector {
    terms: Vec<FieldTerm>,
}

/// apimachinery `fields.splitTerms`: split on commas not escaped by a backslash.
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// apimachinery `fields.splitTerm`: the first position where `!=`, `==` or `=` starts.
fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], op, rhs));
            }
        }
    }
    None
}

/// apimachinery `fields.UnescapeValue`.
fn unescape_value(s: &str) -> Result<String, SelectorError> {
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => {
                    return Err(SelectorError::new(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    )));
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go formats the rune with %v, which prints its code point.
            ',' | '=' => {
                return Err(SelectorError::new(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )));
            }
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err(SelectorError::new(
            "invalid field selector: invalid escape sequence: \\",
        ));
    }
    Ok(out)
}

impl FieldSelector {
    /// Parses a selector as apimachinery `fields.ParseSelector` does; the error text is Go's.
    pub(crate) fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut parts = split_terms(s);
        parts.sort_unstable();
        let mut terms = Vec::new();
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(SelectorError::new(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            terms.push(FieldTerm {
                field: lhs.to_owned(),
                value: unescape_value(rhs)?,
                negated: op == "!=",
            });
        }
        Ok(FieldSelector { terms })
    }

    /// The fields the selector tests, in term order (sorted as Go sorts the terms).
    pub(crate) fn fields(&self) -> Vec<&str> {
        self.terms.iter().map(|t| t.field.as_str()).collect()
    }

    /// True when every term holds; `get` returns a field's value, and a missing field reads as
    /// the empty string (`fields.Set.Get`).
    pub(crate) fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.terms.iter().all(|t| {
            let value = get(&t.field).unwrap_or_default();
            (value == t.value) != t.negated
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl LabelSelector {
        /// True when the selector has no requirement.
        pub(crate) fn is_empty(&self) -> bool {
            self.requirements.is_empty()
        }
    }

    impl FieldSelector {
        /// Checks every field against the ones the resource supports, as the list handler's
        /// `FieldSelector.Transform(ConvertFieldLabel)` does: the first unsupported field fails with
        /// `field label not supported: <field>` (the text of core kinds' and custom resources'
        /// field-label conversion functions; the server answers 400 BadRequest with it).
        pub(crate) fn check_supported(&self, supported: &[&str]) -> Result<(), SelectorError> {
            match self
                .terms
                .iter()
                .find(|t| !supported.contains(&t.field.as_str()))
            {
                Some(t) => Err(SelectorError::new(format!(
                    "field label not supported: {}",
                    t.field
                ))),
                None => Ok(()),
            }
        }
    }

    impl FieldSelector {
        /// The terms.
        pub(crate) fn terms(&self) -> &[FieldTerm] {
            &self.terms
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn err(s: &str) -> String {
        LabelSelector::parse(s).unwrap_err().message
    }

    #[test]
    fn empty_label_selector_matches_everything() {
        let s = LabelSelector::parse("").unwrap();
        assert!(s.is_empty());
        assert!(s.matches(&labels(&[])));
        assert!(LabelSelector::parse("  \t ").unwrap().is_empty());
    }

    #[test]
    fn equality_operators_match_as_apimachinery() {
        let l = labels(&[("app", "web"), ("tier", "front")]);
        for s in [
            "app=web",
            "app==web",
            "app = web",
            "app=web,tier=front",
            "tier!=db",
        ] {
            assert!(LabelSelector::parse(s).unwrap().matches(&l), "{s}");
        }
        for s in ["app=db", "app!=web", "missing=x", "app=web,tier=back"] {
            assert!(!LabelSelector::parse(s).unwrap().matches(&l), "{s}");
        }
        // != matches an absent key
        assert!(LabelSelector::parse("missing!=x").unwrap().matches(&l));
    }

    #[test]
    fn set_operators_and_existence() {
        let l = labels(&[("env", "prod"), ("in", "notin")]);
        let yes = [
            "env in (prod,dev)",
            "env in(prod)",
            "env notin (dev)",
            "missing notin (x)",
            "env",
            "!missing",
            "in in (notin)",
            "in=notin",
        ];
        for s in yes {
            assert!(LabelSelector::parse(s).unwrap().matches(&l), "{s}");
        }
        let no = [
            "env in (dev)",
            "env notin (prod)",
            "missing in (x)",
            "missing",
            "!env",
        ];
        for s in no {
            assert!(!LabelSelector::parse(s).unwrap().matches(&l), "{s}");
        }
    }

    #[test]
    fn empty_values_are_valid() {
        let l = labels(&[("a", "")]);
        assert!(LabelSelector::parse("a=").unwrap().matches(&l));
        assert!(LabelSelector::parse("a in ()").unwrap().matches(&l));
        assert!(LabelSelector::parse("a in (x,,y)").unwrap().matches(&l));
        assert!(LabelSelector::parse("a in (,x)").unwrap().matches(&l));
        // Go's parseIdentifiersList quirk: a run of commas up to ')' is rejected
        assert_eq!(
            err("a in (,,)"),
            "unable to parse requirement: found ')', expected: ',', or identifier"
        );
        assert!(!LabelSelector::parse("a in (x,y)").unwrap().matches(&l));
        let r = &LabelSelector::parse("a in (y,,x)").unwrap().requirements[0];
        assert_eq!(r.values, ["", "x", "y"]);
    }

    #[test]
    fn gt_and_lt_compare_integers() {
        let l = labels(&[("n", "5"), ("s", "x")]);
        assert!(LabelSelector::parse("n>4").unwrap().matches(&l));
        assert!(!LabelSelector::parse("n>5").unwrap().matches(&l));
        assert!(LabelSelector::parse("n<6").unwrap().matches(&l));
        assert!(!LabelSelector::parse("s<6").unwrap().matches(&l));
        assert_eq!(
            err("n>x"),
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
    }

    #[test]
    fn syntax_errors_have_apimachinery_text() {
        assert_eq!(err("a,"), "found '', expected: identifier after ','");
        assert_eq!(err("a=b c"), "found 'c', expected: ',' or 'end of string'");
        assert_eq!(
            err(",a"),
            "found ',', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            err("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            err("a in b"),
            "unable to parse requirement: found 'b' expected: '('"
        );
        assert_eq!(
            err("a in (b c)"),
            "unable to parse requirement: found 'c', expected: ',' or ')'"
        );
        assert_eq!(
            err("a in (="),
            "unable to parse requirement: found '=', expected: ',', ')' or identifier"
        );
        assert_eq!(
            err("a=(b)"),
            "unable to parse requirement: found '(', expected: identifier"
        );
        assert_eq!(err("!a=b"), "found '=', expected: ',' or 'end of string'");
        assert_eq!(
            err("a!==b"),
            "unable to parse requirement: found '=', expected: identifier"
        );
    }

    #[test]
    fn invalid_keys_and_values_are_rejected_with_validation_text() {
        assert_eq!(
            err("-a=b"),
            "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            err("a=-b"),
            "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
        let long = "x".repeat(64);
        assert!(err(&format!("{long}=a")).contains("name part must be no more than 63 characters"));
        assert!(err(&format!("a={long}")).contains("must be no more than 63 characters"));
        assert!(LabelSelector::parse("example.com/app=web").is_ok());
        assert!(err("Example.com/app=web").contains("prefix part a lowercase RFC 1123 subdomain"));
        assert!(err("/app").contains("prefix part must be non-empty"));
        // several bad values aggregate as [a, b]
        let e = err("a in (-x,-y)");
        assert!(
            e.starts_with("unable to parse requirement: [values[0][a]: Invalid value: \"-x\""),
            "{e}"
        );
        assert!(e.contains(", values[1][a]: Invalid value: \"-y\""), "{e}");
    }

    #[test]
    fn labels_of_reads_metadata_labels() {
        let obj = serde_json::json!({"metadata": {"labels": {"a": "1", "b": 2}}});
        assert_eq!(labels_of(&obj), labels(&[("a", "1")]));
        assert!(labels_of(&serde_json::json!({})).is_empty());
    }

    #[test]
    fn field_selector_terms_and_matching() {
        let s = FieldSelector::parse("metadata.name=web,metadata.namespace!=kube-system").unwrap();
        assert_eq!(s.fields(), ["metadata.name", "metadata.namespace"]);
        let get = |name: &'static str, ns: &'static str| {
            move |f: &str| match f {
                "metadata.name" => Some(name.to_owned()),
                "metadata.namespace" => Some(ns.to_owned()),
                _ => None,
            }
        };
        assert!(s.matches(get("web", "demo")));
        assert!(!s.matches(get("web", "kube-system")));
        assert!(!s.matches(get("db", "demo")));
        assert!(
            FieldSelector::parse("metadata.name==web")
                .unwrap()
                .matches(get("web", ""))
        );
        // a missing field is the empty string
        assert!(
            FieldSelector::parse("spec.nodeName=")
                .unwrap()
                .matches(|_| None)
        );
        assert!(FieldSelector::parse("").unwrap().matches(|_| None));
        assert!(FieldSelector::parse("a=b,,").unwrap().fields() == ["a"]);
        let s = FieldSelector::parse("metadata.name=a,spec.x=b").unwrap();
        assert_eq!(
            s.check_supported(&["metadata.name", "metadata.namespace"])
                .unwrap_err()
                .message,
            "field label not supported: spec.x"
        );
        assert!(s.check_supported(&["metadata.name", "spec.x"]).is_ok());
    }

    #[test]
    fn field_selector_escapes_and_errors() {
        let s = FieldSelector::parse(r"metadata.name=a\,b\=c\\d").unwrap();
        assert_eq!(s.terms()[0].value, r"a,b=c\d");
        assert_eq!(
            FieldSelector::parse("a").unwrap_err().message,
            "invalid selector: 'a'; can't understand 'a'"
        );
        assert_eq!(
            FieldSelector::parse("a=b=c").unwrap_err().message,
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            FieldSelector::parse(r"a=\x").unwrap_err().message,
            r"invalid field selector: invalid escape sequence: \x"
        );
        assert_eq!(
            FieldSelector::parse(r"a=b\").unwrap_err().message,
            r"invalid field selector: invalid escape sequence: \"
        );
        // no trimming: the field is " a"
        assert_eq!(FieldSelector::parse(" a =b").unwrap().fields(), [" a "]);
    }

    type Req = (String, &'static str, Vec<String>);

    fn arb_requirement() -> impl Strategy<Value = Req> {
        (
            "[ab]",
            prop_oneof![
                Just("="),
                Just("=="),
                Just("!="),
                Just("in"),
                Just("notin"),
                Just("exists"),
                Just("!")
            ],
            proptest::collection::vec("[xy]", 1..3),
        )
            .prop_map(|(k, op, vals)| (k, op, vals))
    }

    fn render((k, op, vals): &Req, ws: &str) -> String {
        match *op {
            "=" | "==" | "!=" => format!("{k}{ws}{op}{ws}{}", vals[0]),
            "in" | "notin" => format!("{k} {op}{ws}({ws}{}{ws})", vals.join(&format!("{ws},{ws}"))),
            "exists" => k.clone(),
            _ => format!("!{ws}{k}"),
        }
    }

    fn label_value() -> impl Strategy<Value = String> {
        "([a-z0-9]([-a-z0-9_.]{0,8}[a-z0-9])?)?"
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in "[ a-z0-9=!(),<>._/-]{0,30}") {
            let _ = LabelSelector::parse(&s);
            let _ = FieldSelector::parse(&s);
        }

        #[test]
        fn set_selectors_match_their_own_labels(
            set in proptest::collection::btree_map("[a-z]([a-z0-9]{0,5})", label_value(), 0..5)
        ) {
            let text = set.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
            let sel = LabelSelector::parse(&text).unwrap();
            prop_assert!(sel.matches(&set));
            for (k, v) in &set {
                let mut other = set.clone();
                other.insert(k.clone(), format!("{v}x"));
                prop_assert!(!sel.matches(&other));
                let neg = LabelSelector::parse(&format!("{k}!={v}")).unwrap();
                prop_assert!(!neg.matches(&set));
                prop_assert!(neg.matches(&other));
            }
        }

        #[test]
        fn in_is_the_or_of_equalities(v in label_value(), vals in proptest::collection::vec("[a-z0-9]{1,3}", 1..4)) {
            let l: BTreeMap<String, String> = [("k".to_owned(), v.clone())].into_iter().collect();
            let sel = LabelSelector::parse(&format!("k in ({})", vals.join(","))).unwrap();
            prop_assert_eq!(sel.matches(&l), vals.contains(&v));
            let sel = LabelSelector::parse(&format!("k notin ({})", vals.join(","))).unwrap();
            prop_assert_eq!(sel.matches(&l), !vals.contains(&v));
        }

        #[test]
        fn rendered_requirements_match_like_the_model(
            reqs in proptest::collection::vec(arb_requirement(), 1..4),
            labels in proptest::collection::btree_map("[ab]", "[xy]?", 0..3),
            ws in "[ \t]{0,2}",
        ) {
            let text = reqs.iter().map(|r| render(r, &ws)).collect::<Vec<_>>().join(&format!("{ws},{ws}"));
            let sel = LabelSelector::parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
            let model = reqs.iter().all(|(k, op, vals)| {
                let v = labels.get(k);
                match *op {
                    "=" | "==" => v == Some(&vals[0]),
                    "!=" => v != Some(&vals[0]),
                    "in" => v.is_some_and(|v| vals.contains(v)),
                    "notin" => !v.is_some_and(|v| vals.contains(v)),
                    "exists" => v.is_some(),
                    _ => v.is_none(),
                }
            });
            prop_assert_eq!(sel.matches(&labels), model, "{}", text);
        }

        #[test]
        fn field_values_round_trip_through_escaping(v in "[a-z,=\\\\]{0,12}") {
            let escaped = v.replace('\\', "\\\\").replace(',', "\\,").replace('=', "\\=");
            let sel = FieldSelector::parse(&format!("f={escaped}")).unwrap();
            prop_assert_eq!(&sel.terms()[0].value, &v);
            prop_assert!(sel.matches(|_| Some(v.clone())));
        }
    }
}

/// The usage examples of this module's items (the module is private to the crate).
#[cfg(test)]
mod examples {
    #[test]
    fn label_selector() {
        use crate::selector::LabelSelector;
        let s = LabelSelector::parse("app=web, tier notin (db), !legacy").unwrap();
        let labels = [("app".to_owned(), "web".to_owned())].into_iter().collect();
        assert!(s.matches(&labels));
    }

    #[test]
    fn field_selector() {
        use crate::selector::FieldSelector;
        let s = FieldSelector::parse("metadata.name=web,metadata.namespace!=kube-system").unwrap();
        assert_eq!(s.fields(), ["metadata.name", "metadata.namespace"]);
        assert!(s.matches(|f| Some(if f == "metadata.name" { "web" } else { "demo" }.to_owned())));
    }
}
