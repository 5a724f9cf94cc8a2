//! Temporary stand-ins for the pure modules being written on branch `pure` (deleted on merge).
#![allow(dead_code, missing_docs)]

pub mod apply {
    use serde_json::Value;

    #[derive(Debug, Clone)]
    pub enum ApplyError {
        Conflict { conflicts: Vec<String> },
        Invalid(String),
    }
    impl ApplyError {
        pub fn message(&self) -> String {
            match self {
                Self::Conflict { conflicts } => {
                    format!("Apply failed with {} conflicts", conflicts.len())
                }
                Self::Invalid(m) => m.clone(),
            }
        }
    }

    pub fn server_side_apply(
        live: Option<&Value>,
        applied: &Value,
        _manager: &str,
        _force: bool,
        _api_version: &str,
        _subresource: Option<&str>,
        _now: &str,
    ) -> Result<Value, ApplyError> {
        let mut out = live.cloned().unwrap_or(Value::Null);
        crate::testing::patch::apply_merge_patch(&mut out, applied);
        Ok(out)
    }

    pub fn record_update(
        _old: Option<&Value>,
        _new: &mut Value,
        _manager: &str,
        _api_version: &str,
        _subresource: Option<&str>,
        _now: &str,
    ) {
    }
}
