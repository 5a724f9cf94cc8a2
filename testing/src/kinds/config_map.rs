//! ConfigMaps (`pkg/registry/core/configmap`): their typed decoding, rules and columns.

use serde_json::{Value, json};

use super::Strategy;
use crate::resources::ResourceInfo;
use crate::table::column::{Column, entries};
use crate::validation::{FieldError, builtins, gotypes};

/// ConfigMaps' [`Strategy`].
pub(crate) struct ConfigMaps;

impl Strategy for ConfigMaps {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(&gotypes::CONFIG_MAP)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        builtins::decode_config_map(obj)
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        builtins::config_map_rules(new, old)
    }

    fn update_revalidates_metadata(&self) -> bool {
        true
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        vec![
            Column::name(),
            // The printers declare the count a string column.
            Column::new(
                "Data",
                "string",
                0,
                Box::new(|o, _| json!(entries(&o["data"]) + entries(&o["binaryData"]))),
            )
            .described("Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."),
            Column::age(),
        ]
    }
}
