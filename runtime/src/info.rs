//! Object info labels: a few spec or status fields of each object, exported as the labels of one
//! info series per object (`kubeward_object_info`, value 1), like kube-state-metrics'
//! custom-resource state. They say *which* revision, image or version is rolling out, where
//! `generation` only says that something is.
//!
//! Bounded by construction: one series per object, its labels replaced when a field changes and
//! the series gone with the object (the metrics are read from the controller's cache at scrape
//! time). Declare them with `#[reconciler(info(revision = "status.revision"))]`, or set
//! [`Reconciler::INFO`](crate::controller::Reconciler::INFO) by hand.
//!
//! ```
//! use kubeward::info::InfoField;
//! let fields = [InfoField::new("revision", "status.revision"), InfoField::new("image", "spec.image")];
//! let object = serde_json::json!({"spec": {"image": "web:4"}, "status": {"revision": 7}});
//! assert_eq!(kubeward::info::values(&fields, &object), ["7", "web:4"]);
//! let fresh = serde_json::json!({"spec": {"image": "web:4"}});
//! assert_eq!(kubeward::info::values(&fields, &fresh), ["", "web:4"]);
//! ```

/// The label names every per-object series already has; an info label may not take them.
pub const RESERVED_LABELS: [&str; 3] = ["controller", "namespace", "name"];

/// One field of the object exported as a label of its info series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InfoField {
    /// The label name (a Prometheus label name, not one of [`RESERVED_LABELS`]).
    pub label: &'static str,
    /// The field's path in the object as the API server serves it, dot-separated from the top:
    /// `status.revision`, `spec.template.image` (a leading dot, as in a kubectl JSONPath, is
    /// allowed: `.status.revision`).
    pub path: &'static str,
}

impl InfoField {
    /// The field at `path`, exported as label `label`.
    pub const fn new(label: &'static str, path: &'static str) -> Self {
        Self { label, path }
    }

    /// The field's value in `object` as a label value: strings as they are, numbers and booleans
    /// as JSON writes them, empty when the field is absent, null or not a scalar (a label value
    /// must stay one short string, whatever the object holds).
    pub fn value(&self, object: &serde_json::Value) -> String {
        let path = self.path.strip_prefix('.').unwrap_or(self.path);
        let field = path
            .split('.')
            .try_fold(object, |value, key| value.get(key));
        match field {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(value @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => {
                value.to_string()
            }
            _ => String::new(),
        }
    }
}

/// The values of `fields` in `object`, in order; see [`InfoField::value`].
pub fn values(fields: &[InfoField], object: &serde_json::Value) -> Vec<String> {
    fields.iter().map(|field| field.value(object)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_and_arrays_are_not_label_values() {
        let field = InfoField::new("spec", "spec");
        assert_eq!(field.value(&serde_json::json!({"spec": {"a": 1}})), "");
        let field = InfoField::new("tags", "spec.tags");
        assert_eq!(
            field.value(&serde_json::json!({"spec": {"tags": ["a"]}})),
            ""
        );
        let field = InfoField::new("paused", "spec.paused");
        assert_eq!(
            field.value(&serde_json::json!({"spec": {"paused": true}})),
            "true"
        );
        assert_eq!(field.value(&serde_json::json!({"spec": null})), "");
        let field = InfoField::new("paused", ".spec.paused");
        assert_eq!(
            field.value(&serde_json::json!({"spec": {"paused": false}})),
            "false"
        );
    }
}
