//! Duplicate keys in a JSON request body, which a JSON object cannot hold once decoded: found
//! on the raw bytes, as the strict JSON decoder of kube-apiserver (`sigs.k8s.io/json`) reports
//! them, by their path (`spec.replicas`).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::field;

/// The paths of keys that appear twice in one object of `body`; empty when the body is not JSON.
pub(crate) fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    let seed = Walk {
        path: String::new(),
        found: &mut found,
    };
    if seed.deserialize(&mut de).is_err() {
        return Vec::new();
    }
    found
}

struct Walk<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = field::child(&self.path, &key);
            if !seen.insert(key) && !self.found.contains(&path) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Walk {
                path,
                found: self.found,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq
            .next_element_seed(Walk {
                path: field::index(&self.path, i),
                found: self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_duplicates_by_path_once() {
        let body = br#"{"spec": {"replicas": 1, "replicas": 2, "replicas": 3, "items": [{"a": 1, "a": 2}]}}"#;
        assert_eq!(
            duplicate_fields(body),
            vec!["spec.replicas".to_string(), "spec.items[0].a".to_string()]
        );
        assert!(duplicate_fields(b"{\"a\": 1}").is_empty());
        assert!(duplicate_fields(b"not json").is_empty());
    }
}
