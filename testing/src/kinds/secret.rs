//! Secrets (`pkg/registry/core/secret`): their typed decoding, defaulting, rules, field labels
//! and columns.

use serde_json::{Value, json};

use super::Strategy;
use crate::resources::ResourceInfo;
use crate::table::column::{Column, entries};
use crate::validation::{FieldError, builtins, gotypes};

/// Secrets' [`Strategy`].
pub(crate) struct Secrets;

impl Strategy for Secrets {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(&gotypes::SECRET)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        builtins::decode_secret(obj)
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        builtins::secret_rules(new, old)
    }

    fn update_revalidates_metadata(&self) -> bool {
        true
    }

    fn field_labels(&self) -> &'static [&'static str] {
        &["type"]
    }

    fn unsupported_field_label(&self, field: &str) -> Option<String> {
        super::core_field_label_error(field)
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        vec![
            Column::name(),
            Column::new("Type", "string", 0, Box::new(|o, _| o["type"].clone()))
                .described("Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"),
            Column::new(
                "Data",
                "string",
                0,
                Box::new(|o, _| json!(entries(&o["data"]))),
            )
            .described("Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"),
            Column::age(),
        ]
    }
}
