//! What a caught panic said: the runtime catches the panics of reconcilers, hooks and
//! observers, and reports their message.

/// The message of a panic with `payload` (what `panic!` was given).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic payload that is not a string)".to_owned())
}
