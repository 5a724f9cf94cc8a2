//! The Kubernetes API server's size limits that kubeward enforces before a request is sent, each
//! named once with its source, and the char-boundary truncation used for messages and notes.

/// Maximum length of a condition `type` (`metav1.Condition` CRD schema: `maxLength=316`).
pub const CONDITION_TYPE_MAX_BYTES: usize = 316;
/// Maximum length of a condition `reason` (`metav1.Condition` CRD schema: `maxLength=1024`).
pub const CONDITION_REASON_MAX_BYTES: usize = 1024;
/// Maximum length of a condition `message` (`metav1.Condition` CRD schema: `maxLength=32768`).
pub const CONDITION_MESSAGE_MAX_BYTES: usize = 32768;
/// Maximum length of an events.k8s.io/v1 `reason` (apiserver `ValidateEventCreate`: 128).
pub const EVENT_REASON_MAX_BYTES: usize = 128;
/// Maximum length of an events.k8s.io/v1 `action` (apiserver `ValidateEventCreate`: 128).
pub const EVENT_ACTION_MAX_BYTES: usize = 128;
/// Maximum length of an events.k8s.io/v1 `reportingInstance` (apiserver `ValidateEventCreate`: 128).
pub const EVENT_REPORTING_INSTANCE_MAX_BYTES: usize = 128;
/// Maximum length of an events.k8s.io/v1 `note` (apiserver `NoteLengthLimit`: 1 KiB).
pub const EVENT_NOTE_MAX_BYTES: usize = 1024;
/// Maximum length of the name part of a qualified name (apimachinery `IsQualifiedName`).
pub const QUALIFIED_NAME_PART_MAX_BYTES: usize = 63;
/// Maximum length of a DNS-1123 subdomain (apimachinery `IsDNS1123Subdomain`).
pub const DNS1123_SUBDOMAIN_MAX_BYTES: usize = 253;
/// Maximum length of a step name. Step names become Prometheus label values and tracing span
/// fields; kubeward keeps them as short as a Kubernetes label value.
pub const STEP_NAME_MAX_BYTES: usize = 63;

/// The longest prefix of `text` that is at most `max_bytes` long and ends on a char boundary.
///
/// ```
/// assert_eq!(kubeward_names::limits::truncated("héllo", 2), "h");
/// assert_eq!(kubeward_names::limits::truncated("héllo", 3), "hé");
/// assert_eq!(kubeward_names::limits::truncated("short", 100), "short");
/// ```
pub fn truncated(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut to at most `max_bytes` on a char boundary, ending in `…` when anything was cut
/// (the ellipsis counts towards the limit).
///
/// ```
/// let long = "x".repeat(2000);
/// let note = kubeward_names::limits::truncated_with_ellipsis(&long, 1024);
/// assert_eq!(note.len(), 1024);
/// assert!(note.ends_with('…'));
/// ```
pub fn truncated_with_ellipsis(text: &str, max_bytes: usize) -> std::borrow::Cow<'_, str> {
    const ELLIPSIS: &str = "…";
    if text.len() <= max_bytes {
        return std::borrow::Cow::Borrowed(text);
    }
    let kept = truncated(text, max_bytes.saturating_sub(ELLIPSIS.len()));
    std::borrow::Cow::Owned(format!("{kept}{ELLIPSIS}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn truncation_yields_valid_utf8_within_the_limit(text in "\\PC{0,64}", max in 0usize..80) {
            let cut = truncated(&text, max);
            prop_assert!(cut.len() <= max);
            prop_assert!(text.starts_with(cut));
            // The longest such prefix: one more char would exceed the limit.
            if cut.len() < text.len() {
                let next = text[cut.len()..].chars().next().unwrap();
                prop_assert!(cut.len() + next.len_utf8() > max);
            }
        }

        #[test]
        fn ellipsis_truncation_stays_within_the_limit(text in "\\PC{0,64}", max in 3usize..80) {
            let cut = truncated_with_ellipsis(&text, max);
            prop_assert!(cut.len() <= max);
            prop_assert_eq!(cut.len() < text.len() || cut == text.as_str(), true);
        }
    }
}
