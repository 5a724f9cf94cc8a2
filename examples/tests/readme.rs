//! The README shows the example's generated state diagram and events table; they cannot go stale.

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

#[test]
#[ignore = "prints the diagram to paste into the README: cargo test --test readme -- --ignored --nocapture"]
fn print_the_state_diagram() {
    print!("{}", UpToDate::mermaid());
}
