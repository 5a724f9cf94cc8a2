//! Event object names: `<regarding name>.<16 random hex digits>`, always a valid DNS subdomain.
//!
//! kube-runtime's `Recorder` names an event `<name>.<nanoseconds, hex>`: two recorders publishing
//! about the same object in the same nanosecond collide, and a regarding name that is not a DNS
//! subdomain (RBAC objects may be named `system:controller:x`) yields a name the server rejects.

use crate::limits::DNS1123_SUBDOMAIN_MAX_BYTES;

/// Length of `.` plus 16 hex digits.
const SUFFIX_BYTES: usize = 17;

/// A fresh event name for an event about the object named `regarding` (`None` for an event
/// about nothing in particular).
pub(crate) fn event_name(regarding: Option<&str>) -> String {
    event_name_with(regarding, rand::random::<u64>())
}

fn event_name_with(regarding: Option<&str>, random: u64) -> String {
    let prefix = dns_prefix(regarding.unwrap_or(""));
    if prefix.is_empty() {
        format!("event.{random:016x}")
    } else {
        format!("{prefix}.{random:016x}")
    }
}

/// `name` made into a DNS-1123 subdomain of at most 253 - 17 bytes: lowercased, characters other
/// than `[a-z0-9-.]` replaced by `-`, each dot-separated label trimmed of leading and trailing
/// `-`, empty labels dropped. May be empty.
fn dns_prefix(name: &str) -> String {
    let max = DNS1123_SUBDOMAIN_MAX_BYTES - SUFFIX_BYTES;
    let mut out = String::with_capacity(name.len().min(max));
    for label in name.split('.') {
        let label: String = label
            .chars()
            .map(|c| match c.to_ascii_lowercase() {
                c @ ('a'..='z' | '0'..='9') => c,
                _ => '-',
            })
            .collect();
        let label = label.trim_matches('-');
        if label.is_empty() {
            continue;
        }
        let room = max.saturating_sub(out.len() + usize::from(!out.is_empty()));
        if room == 0 {
            break;
        }
        if !out.is_empty() {
            out.push('.');
        }
        // ASCII only: any byte index is a char boundary.
        out.push_str(label[..label.len().min(room)].trim_end_matches('-'));
    }
    out.trim_end_matches(['-', '.']).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::NameKind;
    use proptest::prelude::*;

    /// Whether `name` is a DNS-1123 subdomain of at most 253 bytes: the prefix of a qualified name
    /// is validated exactly so.
    fn is_dns_subdomain(name: &str) -> bool {
        NameKind::ControllerName
            .validate(&format!("{name}/x"))
            .is_ok()
    }

    #[test]
    fn event_name_keeps_a_valid_regarding_name() {
        assert_eq!(
            event_name_with(Some("web-0.demo"), 0xab),
            "web-0.demo.00000000000000ab"
        );
        assert_eq!(event_name_with(None, 1), "event.0000000000000001");
    }

    #[test]
    fn event_name_repairs_names_that_are_not_dns_subdomains() {
        let cases = [
            (
                "system:controller:Attach_Detach",
                "system-controller-attach-detach",
            ),
            ("-.x..Y-.", "x.y"),
            ("ümlaut", "mlaut"),
            (":::", "event"),
        ];
        for (regarding, prefix) in cases {
            let name = event_name_with(Some(regarding), 7);
            assert_eq!(name, format!("{prefix}.0000000000000007"));
            assert!(is_dns_subdomain(&name), "{name}");
        }
    }

    #[test]
    fn event_name_of_a_long_regarding_name_is_at_most_253_bytes() {
        let long = format!("{}.{}", "a".repeat(200), "b-".repeat(100));
        let name = event_name(Some(&long));
        assert!(name.len() <= 253, "{}", name.len());
        assert!(is_dns_subdomain(&name), "{name}");
    }

    #[test]
    fn event_names_for_one_object_do_not_collide() {
        let names: std::collections::HashSet<_> =
            (0..10_000).map(|_| event_name(Some("web"))).collect();
        assert_eq!(names.len(), 10_000);
    }

    proptest! {
        #[test]
        fn event_name_is_always_a_dns_subdomain(regarding in "\\PC{0,300}") {
            let name = event_name(Some(&regarding));
            prop_assert!(name.len() <= DNS1123_SUBDOMAIN_MAX_BYTES);
            prop_assert!(is_dns_subdomain(&name), "{}", name);
        }

        #[test]
        fn event_name_of_dns_like_names_is_always_valid(regarding in "[a-z0-9.-]{0,300}") {
            let name = event_name(Some(&regarding));
            prop_assert!(is_dns_subdomain(&name), "{}", name);
        }
    }
}
