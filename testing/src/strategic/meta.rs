//! Patch metadata of a built-in kind's fields: which lists merge, by which key, and which maps
//! are replaced, read from the kind's OpenAPI definition (`x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`), as apimachinery's `PatchMetaFromStruct` reads the same
//! facts from the Go types' struct tags.
//!
//! A lookup fails the way the Go one does: a field missing from a struct is `unable to find api
//! field in struct ObjectMeta for the json field "x"`; looking a key up in anything but a struct
//! (a map of objects, such as a CRD schema's `properties`) is `merging an object in json but data
//! type is not struct, instead is: map` — upstream's known limit, kept.

use serde_json::Value;

use super::SmpError;
use crate::openapi::definitions::{Definitions, V2_REF_PREFIX};

/// The strategies and merge key of one field (`PatchMeta`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct PatchMeta {
    /// `x-kubernetes-patch-strategy` split on commas (`merge`, `replace`, `retainKeys`).
    pub strategies: Vec<String>,
    /// `x-kubernetes-patch-merge-key`, empty for lists of scalars and unkeyed fields.
    pub merge_key: String,
}

impl PatchMeta {
    fn of(field: &Value) -> Self {
        let text = |key: &str| field.get(key).and_then(Value::as_str).unwrap_or_default();
        PatchMeta {
            // Go splits the (possibly empty) tag: "" is one empty strategy.
            strategies: text("x-kubernetes-patch-strategy")
                .split(',')
                .map(str::to_owned)
                .collect(),
            merge_key: text("x-kubernetes-patch-merge-key").to_owned(),
        }
    }

    /// `extractRetainKeysPatchStrategy`: the strategy other than `retainKeys` (empty if none).
    pub(super) fn strategy(&self) -> Result<&str, SmpError> {
        const RETAIN_KEYS: &str = "retainKeys";
        let unexpected = || {
            SmpError::Other(format!(
                "unexpected patch strategy: [{}]",
                self.strategies.join(" ")
            ))
        };
        match self.strategies.as_slice() {
            [] => Ok(""),
            [one] if one == RETAIN_KEYS => Ok(""),
            [one] => Ok(one),
            [a, b] if a == RETAIN_KEYS => Ok(b),
            [a, b] if b == RETAIN_KEYS => Ok(a),
            _ => Err(unexpected()),
        }
    }
}

/// A position in a kind's schema: the type a JSON value there decodes into.
#[derive(Debug, Clone, Copy)]
pub(super) struct PatchSchema<'a> {
    defs: &'a Definitions,
    /// The schema node, with `$ref`s resolved.
    node: &'a Value,
    /// The Go type name of a named definition (`ObjectMeta`), empty for inline schemas.
    type_name: &'a str,
}

impl<'a> PatchSchema<'a> {
    /// The schema of the definition `name`, `None` if there is no such definition.
    pub(super) fn definition(defs: &'a Definitions, name: &'a str) -> Option<Self> {
        let node = defs.get(name)?;
        Some(PatchSchema {
            defs,
            node,
            type_name: name.rsplit('.').next().unwrap_or(name),
        })
    }

    /// A subschema, following its `$ref` (a reference to a missing definition reads as an
    /// empty struct).
    fn at(&self, node: &'a Value) -> Self {
        match node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(V2_REF_PREFIX))
        {
            Some(name) => PatchSchema::definition(self.defs, name).unwrap_or(PatchSchema {
                defs: self.defs,
                node: &Value::Null,
                type_name: name,
            }),
            None => PatchSchema {
                defs: self.defs,
                node,
                type_name: "",
            },
        }
    }

    /// The Go kind of the type (`reflect.Kind.String()`), which upstream's errors name.
    pub(super) fn kind(&self) -> &'static str {
        if !self.type_name.is_empty() {
            return "struct";
        }
        match self.node.get("type").and_then(Value::as_str) {
            Some("array") => "slice",
            Some("string") => "string",
            Some("boolean") => "bool",
            Some("integer") => match self.node.get("format").and_then(Value::as_str) {
                Some("int32") => "int32",
                _ => "int64",
            },
            Some("number") => "float64",
            _ if self.node.get("additionalProperties").is_some() => "map",
            _ => "struct",
        }
    }

    /// `LookupPatchMetadataForStruct`: the field `key` of this struct and its patch metadata.
    /// A map's values have no metadata of their own.
    pub(super) fn field(&self, key: &str) -> Result<(Self, PatchMeta), SmpError> {
        if self.kind() != "struct" {
            return Err(SmpError::Other(format!(
                "merging an object in json but data type is not struct, instead is: {}",
                self.kind()
            )));
        }
        match self.node.get("properties").and_then(|p| p.get(key)) {
            Some(field) => Ok((self.at(field), PatchMeta::of(field))),
            None => Err(SmpError::Other(format!(
                "unable to find api field in struct {} for the json field {key:?}",
                self.type_name
            ))),
        }
    }

    /// `LookupPatchMetadataForSlice`: the element schema of the list field `key`. A field that
    /// is not an array is its own element type, as for Go's pointer fields.
    pub(super) fn list_field(&self, key: &str) -> Result<(Self, PatchMeta), SmpError> {
        let (list, meta) = self.field(key)?;
        if list.kind() != "slice" {
            return Ok((list, meta));
        }
        let items = list.at(&list.node["items"]);
        if items.kind() == "slice" {
            return Err(SmpError::Other("unexpected slice of slice".into()));
        }
        Ok((items, meta))
    }
}
