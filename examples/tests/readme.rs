//! The README shows the example's generated state diagram and events table, and an excerpt of
//! its declaration; they cannot go stale.

use kube::runtime::events::EventType;
use kubeward_examples::rollouts::UpToDate;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md")
}

/// The body of the first fenced block that starts with the line `fence`.
fn block<'a>(text: &'a str, fence: &str) -> &'a str {
    let start = text
        .find(&format!("{fence}\n"))
        .unwrap_or_else(|| panic!("no {fence} block in the README"))
        + fence.len()
        + 1;
    let end = text[start..].find("```").expect("unterminated block") + start;
    &text[start..end]
}

#[test]
fn the_readme_state_diagram_is_the_generated_one() {
    let readme = readme();
    assert_eq!(
        block(&readme, "```mermaid"),
        UpToDate::mermaid(),
        "paste the output of UpToDate::mermaid() into the README's mermaid block"
    );
}

#[test]
fn the_readme_events_table_matches_the_vocabulary() {
    let readme = readme();
    let all = [
        UpToDate::Applying,
        UpToDate::WaitingForApproval,
        UpToDate::ReadyToPromote,
        UpToDate::Promoting,
        UpToDate::Applied,
        UpToDate::RolloutTimeout,
        UpToDate::FailedDeploy,
    ];
    for reason in all {
        let type_ = match reason.event_type() {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        };
        let row = format!("| `{}` | {} | {type_} |", reason.reason(), reason.status());
        assert!(
            readme.contains(&row),
            "the README's events table lacks the row {row}"
        );
    }
}

/// The README's excerpt of the example's declaration names the kinds the reconciler really
/// declares: each `owns(..)` and `watches(..)` line of `#[kubeward::reconciler(..)]` in
/// `reconciler.rs` is in the README as written (comments aside).
#[test]
fn the_readme_declaration_names_the_declared_children_and_watches() {
    let readme = readme();
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/rollouts/reconciler.rs"
    ))
    .expect("reconciler.rs");
    let declaration = source
        .split_once("#[kubeward::reconciler(")
        .and_then(|(_, rest)| rest.split_once(")]\nimpl"))
        .map(|(declaration, _)| declaration)
        .expect("the #[kubeward::reconciler(..)] declaration");
    let relations: Vec<&str> = declaration
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("owns(") || l.starts_with("watches("))
        .collect();
    assert!(!relations.is_empty(), "{declaration}");
    for relation in relations {
        assert!(
            readme.lines().any(|l| l.trim() == relation),
            "the README's excerpt of the declaration lacks the line `{relation}`"
        );
    }
}

/// The version a dependency line `name = "1"` or `name = { .., version = "1", .. }` gives.
fn version_of<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let value = line
        .strip_prefix(name)?
        .trim_start()
        .strip_prefix('=')?
        .trim_start();
    let quoted = match value.split_once("version = ") {
        Some((_, rest)) => rest,
        None => value,
    };
    quoted.strip_prefix('"')?.split('"').next()
}

/// The getting-started `Cargo.toml` names what the workspace builds with: every dependency in it
/// at a version the workspace pins, and the workspace's Kubernetes version feature.
#[test]
fn the_readme_getting_started_dependencies_are_the_workspace_s() {
    let readme = readme();
    let block = block(&readme, "```toml");
    let workspace = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml"))
        .expect("workspace Cargo.toml");
    let mut checked = 0;
    for line in block.lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        let Some(version) = version_of(line, name) else {
            continue;
        };
        let (pinned, pinned_line) = workspace
            .lines()
            .find_map(|l| version_of(l, name).map(|v| (v, l)))
            .unwrap_or_else(|| panic!("{name} is not a workspace dependency"));
        assert!(
            pinned.starts_with(version),
            "the README asks for {name} {version}, the workspace pins {pinned}"
        );
        if name == "k8s-openapi" {
            let feature = pinned_line
                .split('"')
                .find(|f| f.starts_with("v1_"))
                .unwrap();
            assert!(
                line.contains(feature),
                "the README's k8s-openapi lacks {feature}"
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 10,
        "the getting-started block names the dependencies ({checked} found)"
    );
}

#[test]
#[ignore = "prints the diagram to paste into the README: cargo test --test readme -- --ignored --nocapture"]
fn print_the_state_diagram() {
    print!("{}", UpToDate::mermaid());
}
