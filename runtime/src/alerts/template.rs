//! The tiny template language of the rule and scenario files: `@NAME@` placeholders, and blocks
//! between whole lines `# @if flag` (or `# @if !flag`) and `# @end`, kept when the flag is set
//! (unset), nestable. Both marker lines are dropped; so is every line of a block not kept.

/// `template` with its blocks resolved by `flag` and its placeholders replaced by `values`.
///
/// # Panics
/// On unbalanced blocks or a placeholder left unreplaced: the templates are part of this crate,
/// so either is a bug caught by its tests, never a user error.
pub(crate) fn render(
    template: &str,
    flag: impl Fn(&str) -> bool,
    values: &[(&str, &str)],
) -> String {
    let mut out = String::with_capacity(template.len());
    // One entry per open block: whether it is kept.
    let mut open: Vec<bool> = Vec::new();
    for line in template.lines() {
        let marker = line.trim();
        if let Some(condition) = marker.strip_prefix("# @if ") {
            let kept = match condition.strip_prefix('!') {
                Some(name) => !flag(name),
                None => flag(condition),
            };
            open.push(kept);
            continue;
        }
        if marker == "# @end" {
            assert!(open.pop().is_some(), "`# @end` without `# @if`");
            continue;
        }
        if open.iter().all(|kept| *kept) {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(open.is_empty(), "`# @if` without `# @end`");
    for (name, value) in values {
        out = out.replace(&format!("@{name}@"), value);
    }
    for (at, _) in out.match_indices('@') {
        let rest = &out[at + 1..];
        let len = rest
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        assert!(
            !(len > 0 && rest[len..].starts_with('@')),
            "placeholder @{}@ has no value",
            &rest[..len]
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn blocks_nest_and_negate_and_placeholders_are_replaced() {
        let template =
            "a @X@\n# @if one\nb\n  # @if !two\nc\n  # @end\n# @end\n# @if two\nd\n# @end\n";
        assert_eq!(
            render(template, |f| f == "one", &[("X", "x")]),
            "a x\nb\nc\n"
        );
        assert_eq!(render(template, |_| true, &[("X", "x")]), "a x\nb\nd\n");
        assert_eq!(render(template, |_| false, &[("X", "")]), "a \n");
    }

    #[test]
    #[should_panic(expected = "placeholder @Y@ has no value")]
    fn a_placeholder_without_value_is_a_bug() {
        render("@Y@\n", |_| true, &[]);
    }
}
