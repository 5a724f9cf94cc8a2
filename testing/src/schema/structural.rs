//! The structural schema model: a CRD version's `openAPIV3Schema` read once, when the CRD is
//! stored, into the typed tree that validation, defaulting, pruning and CEL walk
//! (apiextensions-apiserver `pkg/apiserver/schema/structural.go`).
//!
//! Patterns are compiled to regular expressions and `x-kubernetes-validations` rules to CEL
//! programs here, so that a CRD whose pattern or rule does not compile is rejected at its own
//! create or update, as kube-apiserver does, and no write of a custom resource compiles anything.

use std::collections::BTreeMap;

use serde_json::Value;

use super::cel::Rule;

/// One node of a structural schema.
#[derive(Debug, Default)]
pub(crate) struct Structural {
    /// `type`: `object`, `array`, `string`, `integer`, `number`, `boolean`, or empty.
    pub type_: String,
    /// `nullable`: `null` is a valid value (and is kept by pruning and defaulting).
    pub nullable: bool,
    /// `x-kubernetes-int-or-string`: an integer or a string.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`: fields not in `properties` are kept.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource`: an object with its own `apiVersion`, `kind`, `metadata`.
    pub embedded_resource: bool,
    /// `format` as written (`date-time`: messages quote it), only the ones apiextensions
    /// validates (others are stripped, as upstream does).
    pub format: Option<String>,
    /// `enum`.
    pub enum_: Vec<Value>,
    /// `required`.
    pub required: Vec<String>,
    /// `minimum` with `exclusiveMinimum`.
    pub minimum: Option<(f64, bool)>,
    /// `maximum` with `exclusiveMaximum`.
    pub maximum: Option<(f64, bool)>,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `minLength`, `maxLength` (in characters).
    pub min_length: Option<u64>,
    /// See `min_length`.
    pub max_length: Option<u64>,
    /// `minItems`, `maxItems`.
    pub min_items: Option<u64>,
    /// See `min_items`.
    pub max_items: Option<u64>,
    /// `minProperties`, `maxProperties`.
    pub min_properties: Option<u64>,
    /// See `min_properties`.
    pub max_properties: Option<u64>,
    /// `pattern`, its source and the compiled expression.
    pub pattern: Option<(String, regex::Regex)>,
    /// `default`.
    pub default: Option<Value>,
    /// `properties`.
    pub properties: BTreeMap<String, Structural>,
    /// `additionalProperties` as a schema (a map); `true` counts as preserving unknown fields.
    pub additional_properties: Option<Box<Structural>>,
    /// `items`.
    pub items: Option<Box<Structural>>,
    /// `x-kubernetes-list-type`: `atomic` (default), `set` or `map`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-validations`, compiled.
    pub validations: Vec<Rule>,
    /// `anyOf`: value validations of which at least one must hold (structural schemas allow no
    /// types or properties in them).
    pub any_of: Vec<Structural>,
}

/// The formats apiextensions-apiserver validates for strings
/// (`pkg/apiserver/validation/formats.go`, normalized without dashes); others are ignored.
const STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

impl Structural {
    /// Reads a schema node. A pattern or CEL rule that does not compile is left out: the CRD
    /// that holds it is refused by [`super::checks`] before it is stored.
    pub(crate) fn from_json(schema: &Value) -> Self {
        let num = |k: &str| schema.get(k).and_then(Value::as_f64);
        let count = |k: &str| schema.get(k).and_then(Value::as_u64);
        let flag = |k: &str| schema.get(k).and_then(Value::as_bool).unwrap_or(false);
        let type_ = schema["type"].as_str().unwrap_or_default().to_string();
        let format = schema["format"]
            .as_str()
            .filter(|f| supported_format(&type_, f))
            .map(str::to_owned);
        let pattern = schema["pattern"]
            .as_str()
            .and_then(|p| regex::Regex::new(p).ok().map(|re| (p.to_string(), re)));
        let properties = schema["properties"]
            .as_object()
            .map(|props| {
                props
                    .iter()
                    .map(|(k, v)| (k.clone(), Self::from_json(v)))
                    .collect()
            })
            .unwrap_or_default();
        let mut preserve_unknown_fields = flag("x-kubernetes-preserve-unknown-fields");
        let additional_properties = match &schema["additionalProperties"] {
            Value::Object(_) => Some(Box::new(Self::from_json(&schema["additionalProperties"]))),
            Value::Bool(true) => {
                preserve_unknown_fields = true;
                None
            }
            _ => None,
        };
        let items = schema
            .get("items")
            .filter(|i| i.is_object())
            .map(|i| Box::new(Self::from_json(i)));
        let validations = super::cel::compile_rules(&schema["x-kubernetes-validations"]);
        let strings = |k: &str| -> Vec<String> {
            schema[k]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        Self {
            nullable: flag("nullable"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            preserve_unknown_fields,
            embedded_resource: flag("x-kubernetes-embedded-resource"),
            format,
            enum_: schema["enum"].as_array().cloned().unwrap_or_default(),
            required: strings("required"),
            minimum: num("minimum").map(|m| (m, flag("exclusiveMinimum"))),
            maximum: num("maximum").map(|m| (m, flag("exclusiveMaximum"))),
            multiple_of: num("multipleOf"),
            min_length: count("minLength"),
            max_length: count("maxLength"),
            min_items: count("minItems"),
            max_items: count("maxItems"),
            min_properties: count("minProperties"),
            max_properties: count("maxProperties"),
            pattern,
            default: schema.get("default").cloned(),
            properties,
            additional_properties,
            items,
            list_type: schema["x-kubernetes-list-type"]
                .as_str()
                .map(str::to_string),
            list_map_keys: strings("x-kubernetes-list-map-keys"),
            validations,
            any_of: schema["anyOf"]
                .as_array()
                .map(|branches| branches.iter().map(Self::from_json).collect())
                .unwrap_or_default(),
            type_,
        }
    }

    /// The schema of property `name`: a declared property, else the `additionalProperties`.
    pub(crate) fn child(&self, name: &str) -> Option<&Structural> {
        self.properties
            .get(name)
            .or(self.additional_properties.as_deref())
    }
}

/// The formats of `type: string` nodes of a CRD schema that apiextensions does not validate,
/// in the order of a walk through the schema (the strategy's `WarningsOnCreate` warns
/// `unrecognized format "colour"` for each).
pub(crate) fn unrecognized_formats(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    walk_formats(schema, &mut found);
    found
}

fn walk_formats(schema: &Value, found: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    if let Some(format) = map.get("format").and_then(Value::as_str)
        && !format.is_empty()
        && map.get("type").and_then(Value::as_str) == Some("string")
        && !supported_format("string", format)
    {
        found.push(format.to_owned());
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = map.get(key) {
            walk_formats(child, found);
        }
    }
    for key in ["properties", "patternProperties", "definitions"] {
        if let Some(children) = map.get(key).and_then(Value::as_object) {
            children.values().for_each(|c| walk_formats(c, found));
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(children) = map.get(key).and_then(Value::as_array) {
            children.iter().for_each(|c| walk_formats(c, found));
        }
    }
}

/// Whether apiextensions keeps `format` on a node of `type_`
/// (`StripUnsupportedFormatsPostProcessorForVersion`).
fn supported_format(type_: &str, format: &str) -> bool {
    match type_ {
        "" | "string" => STRING_FORMATS.contains(&format.replace('-', "").as_str()),
        "integer" => format == "int32" || format == "int64",
        "number" => format == "float" || format == "double",
        _ => false,
    }
}
