//! Temporary stand-ins for the pure modules being written on branch `pure` (deleted on merge).
#![allow(dead_code, missing_docs)]

pub mod selector {
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    pub struct SelectorError {
        pub message: String,
    }

    pub fn labels_of(obj: &serde_json::Value) -> BTreeMap<String, String> {
        obj["metadata"]["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn terms(s: &str) -> Result<Vec<(String, bool, String)>, SelectorError> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, neg, v) = if let Some((k, v)) = part.split_once("!=") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, false, v)
            } else {
                return Err(SelectorError {
                    message: format!("invalid selector: '{s}'"),
                });
            };
            out.push((k.trim().to_string(), neg, v.trim().to_string()));
        }
        Ok(out)
    }

    #[derive(Debug, Clone)]
    pub struct LabelSelector(Vec<(String, bool, String)>);
    impl LabelSelector {
        pub fn parse(s: &str) -> Result<Self, SelectorError> {
            terms(s).map(Self)
        }
        pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
            self.0.iter().all(|(k, neg, v)| {
                let got = labels.get(k);
                if *neg { got != Some(v) } else { got == Some(v) }
            })
        }
    }

    #[derive(Debug, Clone)]
    pub struct FieldSelector(Vec<(String, bool, String)>);
    impl FieldSelector {
        pub fn parse(s: &str) -> Result<Self, SelectorError> {
            terms(s).map(Self)
        }
        pub fn fields(&self) -> Vec<&str> {
            self.0.iter().map(|(k, _, _)| k.as_str()).collect()
        }
        pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
            self.0.iter().all(|(k, neg, v)| {
                let got = get(k).unwrap_or_default();
                if *neg { &got != v } else { &got == v }
            })
        }
    }
}

pub mod patch {
    use serde_json::Value;

    #[derive(Debug, Clone)]
    pub enum PatchError {
        Malformed(String),
        Failed(String),
    }

    pub fn apply_merge_patch(target: &mut Value, patch: &Value) {
        if let Value::Object(p) = patch {
            if !target.is_object() {
                *target = Value::Object(Default::default());
            }
            let t = target.as_object_mut().expect("object");
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    apply_merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        } else {
            *target = patch.clone();
        }
    }

    fn unescape(s: &str) -> String {
        s.replace("~1", "/").replace("~0", "~")
    }

    pub fn apply_json_patch(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
        let ops = patch
            .as_array()
            .ok_or_else(|| PatchError::Malformed("not an array".into()))?;
        for op in ops {
            let path = op["path"].as_str().unwrap_or_default();
            let (parent, last) = path.rsplit_once('/').unwrap_or(("", ""));
            let last = unescape(last);
            match op["op"].as_str().unwrap_or_default() {
                "test" => {
                    let got = target.pointer(path).cloned().unwrap_or(Value::Null);
                    if got != op["value"] {
                        return Err(PatchError::Failed(format!("testing value {path} failed")));
                    }
                }
                kind @ ("add" | "replace" | "remove") => {
                    let p = target
                        .pointer_mut(parent)
                        .ok_or_else(|| PatchError::Failed(format!("missing path {path}")))?;
                    match p {
                        Value::Object(m) => {
                            if kind == "remove" {
                                m.remove(&last);
                            } else {
                                m.insert(last, op["value"].clone());
                            }
                        }
                        Value::Array(a) => {
                            let idx = if last == "-" {
                                a.len()
                            } else {
                                last.parse().unwrap_or(usize::MAX)
                            };
                            match kind {
                                "add" if idx <= a.len() => a.insert(idx, op["value"].clone()),
                                "replace" if idx < a.len() => a[idx] = op["value"].clone(),
                                "remove" if idx < a.len() => {
                                    a.remove(idx);
                                }
                                _ => return Err(PatchError::Failed(format!("bad index {path}"))),
                            }
                        }
                        _ => return Err(PatchError::Failed(format!("bad path {path}"))),
                    }
                }
                other => return Err(PatchError::Malformed(format!("unknown op {other}"))),
            }
        }
        Ok(())
    }
}

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
        super::patch::apply_merge_patch(&mut out, applied);
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

pub mod events_api {
    use serde_json::{Value, json};

    #[derive(Debug, Clone)]
    pub struct FieldError {
        pub field: String,
        pub reason: String,
        pub message: String,
    }

    pub fn validate_event_create(_e: &Value) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
    pub fn validate_event_update(_n: &Value, _o: &Value) -> Result<(), Vec<FieldError>> {
        Ok(())
    }

    pub fn to_core_v1(e: &Value) -> Value {
        let mut out = json!({"apiVersion": "v1", "kind": "Event", "metadata": e["metadata"]});
        for (from, to) in [
            ("regarding", "involvedObject"),
            ("note", "message"),
            ("reason", "reason"),
            ("type", "type"),
            ("related", "related"),
            ("action", "action"),
            ("eventTime", "eventTime"),
            ("reportingController", "reportingComponent"),
            ("reportingInstance", "reportingInstance"),
        ] {
            if !e[from].is_null() {
                out[to] = e[from].clone();
            }
        }
        out
    }

    pub fn from_core_v1(e: &Value) -> Value {
        let mut out =
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": e["metadata"]});
        for (to, from) in [
            ("regarding", "involvedObject"),
            ("note", "message"),
            ("reason", "reason"),
            ("type", "type"),
            ("related", "related"),
            ("action", "action"),
            ("eventTime", "eventTime"),
            ("reportingController", "reportingComponent"),
            ("reportingInstance", "reportingInstance"),
        ] {
            if !e[from].is_null() {
                out[to] = e[from].clone();
            }
        }
        out
    }
}
