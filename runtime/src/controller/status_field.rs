//! The `status` of an object, serialized alone.
//!
//! A pass that reads its stored conditions, and every object at each scrape of the per-object
//! metrics, needs the object's `status` only. Serializing the whole object to a JSON value to
//! pick it out costs its metadata too (`managedFields` alone is often most of an object), on
//! every pass and for every object at every scrape. [`status_field`] runs the object's own
//! `Serialize` against a serializer that keeps the top-level `status` field and skips the others
//! without serializing them.

use serde::Serialize;
use serde::ser::{self, Impossible, SerializeMap, SerializeStruct};
use serde_json::Value;

/// The top-level `status` field of `object` as JSON: `Ok(None)` when it has none (or it was
/// skipped), `Err` when `object` does not serialize as a struct or map (then the caller falls back
/// to serializing it whole).
pub(super) fn status_field<K: Serialize + ?Sized>(
    object: &K,
) -> Result<Option<Value>, serde_json::Error> {
    object.serialize(StatusField)
}

/// The serializer of [`status_field`].
struct StatusField;

/// The fields of a struct or the entries of a map, until `status`.
#[derive(Default)]
struct Fields {
    status: Option<Value>,
    /// The map key just given was `status`: its value is next.
    next_is_status: bool,
}

fn not_an_object() -> serde_json::Error {
    ser::Error::custom("the object does not serialize as a struct or map")
}

type Unsupported = Impossible<Option<Value>, serde_json::Error>;

macro_rules! unsupported {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Option<Value>, serde_json::Error> {
            Err(not_an_object())
        })*
    };
}

impl ser::Serializer for StatusField {
    type Ok = Option<Value>;
    type Error = serde_json::Error;
    type SerializeSeq = Unsupported;
    type SerializeTuple = Unsupported;
    type SerializeTupleStruct = Unsupported;
    type SerializeTupleVariant = Unsupported;
    type SerializeMap = Fields;
    type SerializeStruct = Fields;
    type SerializeStructVariant = Unsupported;

    unsupported!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, Self::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Self::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Self::Ok, Self::Error> {
        Err(not_an_object())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Self::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Self::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Self::Error> {
        Err(not_an_object())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Self::Error> {
        Err(not_an_object())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Self::Error> {
        Ok(Fields::default())
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Self::Error> {
        Ok(Fields::default())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Self::Error> {
        Err(not_an_object())
    }
}

impl SerializeStruct for Fields {
    type Ok = Option<Value>;
    type Error = serde_json::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Self::Error> {
        if key == "status" {
            self.status = Some(serde_json::to_value(value)?);
        }
        Ok(())
    }

    fn end(self) -> Result<Self::Ok, Self::Error> {
        Ok(self.status)
    }
}

impl SerializeMap for Fields {
    type Ok = Option<Value>;
    type Error = serde_json::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Self::Error> {
        // Keys are short strings: serializing one to compare it costs little.
        self.next_is_status = serde_json::to_value(key)? == "status";
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Self::Error> {
        if std::mem::take(&mut self.next_is_status) {
            self.status = Some(serde_json::to_value(value)?);
        }
        Ok(())
    }

    fn end(self) -> Result<Self::Ok, Self::Error> {
        Ok(self.status)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{Pod, PodStatus};
    use kube::api::DynamicObject;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_status_of_a_struct_is_serialized_alone() {
        let pod = Pod {
            status: Some(PodStatus {
                phase: Some("Running".into()),
                ..PodStatus::default()
            }),
            ..Pod::default()
        };
        assert_eq!(
            status_field(&pod).unwrap(),
            Some(json!({ "phase": "Running" }))
        );
        assert_eq!(status_field(&Pod::default()).unwrap(), None);
    }

    #[test]
    fn the_status_of_a_map_is_found_by_its_key() {
        // A DynamicObject serializes its fields through a flattened map.
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Thing",
            "metadata": { "name": "a" },
            "spec": { "status": "not this one" },
            "status": { "conditions": [] },
        }))
        .unwrap();
        assert_eq!(
            status_field(&object).unwrap(),
            Some(json!({ "conditions": [] }))
        );
        let map = BTreeMap::from([("spec", json!(1)), ("status", json!({ "ready": true }))]);
        assert_eq!(status_field(&map).unwrap(), Some(json!({ "ready": true })));
    }

    #[test]
    fn what_is_not_an_object_is_refused() {
        assert!(status_field(&vec![1, 2]).is_err());
        assert!(status_field("status").is_err());
    }
}
