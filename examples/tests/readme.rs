//! The README and the guide (`docs/`) show the example's generated state diagram and events
//! table, an excerpt of its declaration, the workspace's dependencies and a first controller
//! with its test; they cannot go stale. Their links resolve, and the README stays a front door.

use kube::runtime::events::EventType;
use kubeward_examples::rollouts::UpToDate;

/// A file of the workspace, by its path from the workspace root.
fn file(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn readme() -> String {
    file("README.md")
}

/// `text` as rendered: without the hidden lines (`# ` in a Rust block) that make a block a
/// complete doctest. Markdown headings go too, which is harmless for `contains`.
fn shown(text: &str) -> String {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with("# ") && t != "#"
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The body of the first fenced block that starts with the line `fence`.
fn block<'a>(text: &'a str, fence: &str) -> &'a str {
    let start = text
        .find(&format!("{fence}\n"))
        .unwrap_or_else(|| panic!("no {fence} block"))
        + fence.len()
        + 1;
    let end = text[start..].find("```").expect("unterminated block") + start;
    &text[start..end]
}

const CONDITIONS_PAGE: &str = "docs/conditions-and-transitions.md";
const RECONCILER_PAGE: &str = "docs/reconciler.md";

#[test]
fn the_guide_s_state_diagram_is_the_generated_one() {
    let page = file(CONDITIONS_PAGE);
    assert_eq!(
        block(&page, "```mermaid"),
        UpToDate::mermaid(),
        "paste the output of UpToDate::mermaid() into the mermaid block of {CONDITIONS_PAGE}"
    );
}

#[test]
fn the_guide_s_events_table_matches_the_vocabulary() {
    let page = file(CONDITIONS_PAGE);
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
            page.contains(&row),
            "the events table of {CONDITIONS_PAGE} lacks the row {row}"
        );
    }
}

/// The guide's excerpt of the example's declaration names the kinds the reconciler really
/// declares: each `owns(..)` and `watches(..)` line of `#[kubeward::reconciler(..)]` in
/// `reconciler.rs` is in `docs/reconciler.md` as written (comments aside).
#[test]
fn the_guide_s_declaration_names_the_declared_children_and_watches() {
    let page = file(RECONCILER_PAGE);
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
            page.lines().any(|l| l.trim() == relation),
            "the excerpt of the declaration in {RECONCILER_PAGE} lacks the line `{relation}`"
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

/// The README's first controller and its test are `examples/tests/first_controller.rs`, which
/// the test suite compiles and runs, as written between its markers.
#[test]
fn the_readme_s_first_controller_and_its_test_are_the_tested_ones() {
    let source = file("examples/tests/first_controller.rs");
    let readme = shown(&readme());
    for part in ["resource", "controller", "test"] {
        let begin = format!("// README {part}: begin\n");
        let start = source.find(&begin).expect("begin marker") + begin.len();
        let end = source
            .find(&format!("// README {part}: end"))
            .expect("end marker");
        assert!(
            readme.contains(&source[start..end]),
            "paste examples/tests/first_controller.rs between its `README {part}` markers into the README"
        );
    }
}

/// The pages of the guide: `docs/*.md`, by path from the workspace root.
fn guide_pages() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs");
    let mut pages: Vec<String> = std::fs::read_dir(dir)
        .expect("docs/")
        .map(|e| {
            e.expect("an entry of docs/")
                .file_name()
                .into_string()
                .expect("UTF-8")
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    pages
}

/// GitHub's anchor of a heading: lowercase, spaces to `-`, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of a Markdown file outside its fenced code blocks.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    text.lines().filter(move |line| {
        if line.starts_with("```") {
            in_code = !in_code;
            return false;
        }
        !in_code
    })
}

/// The anchors of a Markdown file's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    prose_lines(text)
        .filter(|line| line.starts_with('#'))
        .map(|line| anchor(line.trim_start_matches('#')))
        .collect()
}

/// The targets of the inline links `[text](target)` of a Markdown file, outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose_lines(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(close) = after.find(')') else { break };
            found.push(after[..close].to_owned());
            rest = &after[close..];
        }
    }
    found
}

/// Every relative link of the README and the guide names a file or directory that exists, and
/// an anchor in a Markdown file names one of its headings.
#[test]
fn the_readme_and_guide_links_resolve() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut checked = 0;
    for page in std::iter::once("README.md".to_owned()).chain(guide_pages()) {
        let dir = std::path::Path::new(&page).parent().expect("a directory");
        for link in links(&file(&page)) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                dir.join(path).to_string_lossy().into_owned()
            };
            assert!(
                root.join(&target).exists(),
                "{page}: the link {link} names no file"
            );
            if !fragment.is_empty() {
                assert!(
                    anchors(&file(&target)).iter().any(|a| a == fragment),
                    "{page}: the link {link} names no heading of {target}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "links found: {checked}");
}

/// Every page of the guide is compiled as doctests (`examples/src/lib.rs` includes it), and
/// every code block of the README and the guide says its language: a block that is not Rust is
/// tagged (`text`, `sh`, `yaml`, ...), so an untagged Rust block cannot slip past rustdoc.
#[test]
fn every_guide_page_is_a_doctest_and_every_block_is_tagged() {
    let lib = file("examples/src/lib.rs");
    for page in std::iter::once("README.md".to_owned()).chain(guide_pages()) {
        assert!(
            lib.contains(&format!("include_str!(\"../../{page}\")")),
            "examples/src/lib.rs does not include {page} as doctests"
        );
        let mut open = false;
        for (n, line) in file(&page).lines().enumerate() {
            if let Some(info) = line.strip_prefix("```") {
                assert!(
                    open || !info.trim().is_empty(),
                    "{page}:{}: a block without a language",
                    n + 1
                );
                open = !open;
            }
        }
    }
}

/// The README is a front door: at most 12 KB, with the command that runs the example and the
/// one that runs the test suite in its first 60 lines.
#[test]
fn the_readme_is_short_and_its_commands_come_first() {
    let readme = readme();
    assert!(
        readme.len() <= 12 * 1024,
        "README.md is {} bytes; move text into docs/",
        readme.len()
    );
    let first: Vec<&str> = readme.lines().take(60).collect();
    for command in [
        "cargo run -p kubeward-examples --bin rollouts",
        "./scripts/test",
    ] {
        assert!(
            first.contains(&command),
            "`{command}` is not in the README's first 60 lines"
        );
    }
}

#[test]
#[ignore = "prints the diagram to paste into docs/conditions-and-transitions.md: cargo test --test readme -- --ignored --nocapture"]
fn print_the_state_diagram() {
    print!("{}", UpToDate::mermaid());
}

/// The public items marked `#[deprecated]` in `dir` (recursively), as `(file, Type::name)` for
/// methods (the type of the `impl` block they are in) and `(file, name)` for anything else.
fn deprecated_items(dir: &std::path::Path, found: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            deprecated_items(&path, found);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let mut deprecated = false;
        let mut in_attribute = false;
        let mut in_impl: Option<String> = None;
        for line in text.lines() {
            if line.starts_with("impl") {
                // `impl<R: Reconciler> Controller<R> {` → `Controller`.
                let after_generics = match line.strip_prefix("impl<") {
                    Some(rest) => rest.split_once("> ").map_or("", |(_, t)| t),
                    None => line.trim_start_matches("impl "),
                };
                let name = after_generics
                    .split(['<', ' ', '{'])
                    .next()
                    .unwrap_or_default();
                in_impl = Some(name.to_owned());
            } else if line.starts_with('}') {
                in_impl = None;
            }
            let line = line.trim();
            if in_attribute {
                // The rest of an attribute written over several lines.
                in_attribute = !line.ends_with(']');
                continue;
            }
            if line.starts_with("#[") {
                deprecated |= line.starts_with("#[deprecated");
                in_attribute = !line.ends_with(']');
                continue;
            }
            if !deprecated || line.starts_with("#[") || line.starts_with("///") || line.is_empty() {
                continue;
            }
            // The item the attribute is on.
            deprecated = false;
            let item = line
                .trim_start_matches("pub ")
                .trim_start_matches("const ")
                .trim_start_matches("async ")
                .trim_start_matches("unsafe ");
            let Some((_, rest)) = item.split_once(' ') else {
                continue;
            };
            let name = rest
                .split(['(', '<', ':', ' ', '{', ';'])
                .next()
                .unwrap_or_default();
            let qualified = match (&in_impl, item.starts_with("fn ")) {
                (Some(type_), true) => format!("{type_}::{name}"),
                _ => name.to_owned(),
            };
            found.push((path.display().to_string(), qualified));
        }
    }
}

/// The changelog has an Unreleased section with its breaking changes, and lists every
/// deprecated alias of the crates users depend on under Deprecated.
#[test]
fn the_changelog_lists_every_deprecated_name() {
    let changelog = file("CHANGELOG.md");
    let unreleased = changelog
        .split_once("## [Unreleased]")
        .expect("an Unreleased section")
        .1;
    assert!(
        unreleased.contains("### Breaking changes"),
        "the Unreleased section lists its breaking changes"
    );
    let deprecated_section = unreleased
        .split_once("### Deprecated")
        .expect("a Deprecated section")
        .1
        .split("\n### ")
        .next()
        .unwrap_or_default();
    let mut found = Vec::new();
    for crate_dir in ["runtime/src", "macros/src", "names/src", "testing/src"] {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(crate_dir);
        deprecated_items(&dir, &mut found);
    }
    assert!(
        found.len() >= 9,
        "the deprecated aliases are found: {found:?}"
    );
    let missing: Vec<&(String, String)> = found
        .iter()
        .filter(|(_, name)| !deprecated_section.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "deprecated but not listed under Deprecated in CHANGELOG.md: {missing:?}"
    );
}
