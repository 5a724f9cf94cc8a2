//! The OpenAPI v2 definitions of the built-in kinds: one data source for the published OpenAPI
//! documents (`kubectl explain`) and for strategic merge patch (whose list strategies and merge
//! keys are the definitions' `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key`).
//!
//! The data is `testing/openapi/builtins.json`, upstream's `api/openapi-spec/swagger.json`
//! (release-1.34) trimmed to the served kinds and what they reference by
//! `testing/openapi/trim.py` (see its docs to regenerate or add a kind). References inside are
//! v2 ones, `#/definitions/<name>`.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The prefix of a definition reference in OpenAPI v2 documents.
pub(crate) const V2_REF_PREFIX: &str = "#/definitions/";

/// Named schemas, as in an OpenAPI v2 document's `definitions`.
#[derive(Debug)]
pub(crate) struct Definitions {
    defs: Map<String, Value>,
}

impl Definitions {
    /// The built-in kinds' definitions, parsed once.
    pub(crate) fn builtin() -> &'static Definitions {
        static DEFS: OnceLock<Definitions> = OnceLock::new();
        DEFS.get_or_init(|| {
            let file: Value = serde_json::from_str(include_str!("../../openapi/builtins.json"))
                .expect("testing/openapi/builtins.json is valid JSON");
            let defs = match file.get("definitions") {
                Some(Value::Object(defs)) => defs.clone(),
                _ => panic!("testing/openapi/builtins.json has no definitions object"),
            };
            Definitions { defs }
        })
    }

    /// The definition named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.defs.get(name)
    }

    /// The name of the definition whose `x-kubernetes-group-version-kind` lists this kind.
    pub(crate) fn name_of_kind(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.defs
            .iter()
            .find(|(_, def)| has_gvk(def, group, version, kind))
            .map(|(name, _)| name.as_str())
    }

    /// The definitions named in `roots` (those that exist) and every definition they
    /// reference, directly or not.
    pub(crate) fn closure<I, S>(&self, roots: I) -> BTreeSet<&str>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&str> = roots
            .into_iter()
            .filter_map(|r| self.defs.get_key_value(r.as_ref()).map(|(k, _)| k.as_str()))
            .collect();
        while let Some(name) = todo.pop() {
            let Some((name, def)) = self.defs.get_key_value(name) else {
                continue;
            };
            if seen.insert(name.as_str()) {
                collect_refs(def, &mut todo);
            }
        }
        seen
    }
}

/// Whether a definition's `x-kubernetes-group-version-kind` names this kind.
fn has_gvk(def: &Value, group: &str, version: &str, kind: &str) -> bool {
    def.get("x-kubernetes-group-version-kind")
        .and_then(Value::as_array)
        .is_some_and(|gvks| {
            gvks.iter().any(|g| {
                g["group"].as_str() == Some(group)
                    && g["version"].as_str() == Some(version)
                    && g["kind"].as_str() == Some(kind)
            })
        })
}

/// The definition names a schema references (`$ref: #/definitions/<name>`), anywhere inside.
pub(crate) fn collect_refs<'a>(node: &'a Value, out: &mut Vec<&'a str>) {
    match node {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(V2_REF_PREFIX))
            {
                out.push(name);
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in resource the server serves has its kind's and list's definitions (strategic
    /// merge patch and the OpenAPI documents rely on it): a newly served kind must be added to
    /// `testing/openapi/trim.py`'s roots.
    #[test]
    fn every_served_builtin_kind_has_a_definition() {
        let defs = Definitions::builtin();
        let infos = super::super::all_resources(&crate::resources::Registry::builtin());
        assert!(infos.len() >= 8);
        for info in infos {
            for kind in [&info.kind, &info.list_kind] {
                assert!(
                    defs.name_of_kind(&info.group, &info.version, kind)
                        .is_some(),
                    "{}/{} {kind}",
                    info.group,
                    info.version
                );
            }
        }
    }

    #[test]
    fn closure_holds_every_referenced_definition() {
        let defs = Definitions::builtin();
        let lease = defs.closure(["io.k8s.api.coordination.v1.Lease"]);
        assert!(lease.contains("io.k8s.api.coordination.v1.LeaseSpec"));
        assert!(lease.contains("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
        assert!(lease.contains("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"));
        assert!(!lease.contains("io.k8s.api.core.v1.ConfigMap"));
        // The data file is closed under references: nothing points outside it.
        let all = defs.closure(defs.defs.keys().map(String::as_str));
        let mut refs = Vec::new();
        defs.defs.values().for_each(|d| collect_refs(d, &mut refs));
        assert!(refs.iter().all(|r| all.contains(r)));
    }
}
