//! apiextensions-apiserver's `validateCustomResourceDefinitionSpec` for what a CRD names: its
//! group, scope, names (`ValidateCustomResourceDefinitionNames`) and versions' names, and that
//! every version has a schema. The schemas themselves are checked where they are read
//! (`schema::structural`).

use serde_json::Value;

use super::field::FieldError;
use super::names::{is_dns1035_label, is_dns1123_subdomain};

/// apiextensions v1 `SetDefaults_CustomResourceDefinitionSpec`, before validation: `singular`
/// is the lower-cased `kind`, `listKind` is `<kind>List`, and `conversion` is `None`.
pub(crate) fn set_defaults(crd: &mut Value) {
    let spec = &mut crd["spec"];
    if !spec.is_object() {
        return;
    }
    let kind = spec["names"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if spec["names"].is_object() && !kind.is_empty() {
        let names = &mut spec["names"];
        if names["singular"].as_str().is_none_or(str::is_empty) {
            names["singular"] = Value::String(kind.to_lowercase());
        }
        if names["listKind"].as_str().is_none_or(str::is_empty) {
            names["listKind"] = Value::String(format!("{kind}List"));
        }
    }
    if spec["conversion"].is_null() {
        spec["conversion"] = serde_json::json!({"strategy": "None"});
    }
}

/// The problems of a CRD's `spec`, in upstream's order (after the v1 defaults: `singular` and
/// `listKind` derived from `kind`).
pub(crate) fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let group = text(&spec["group"]);
    if group.is_empty() {
        errs.push(FieldError::required("spec.group"));
    } else if let problems = is_dns1123_subdomain(&group)
        && !problems.is_empty()
    {
        errs.push(FieldError::invalid(
            "spec.group",
            &group,
            &problems.join(","),
        ));
    } else if !group.contains('.') {
        errs.push(FieldError::invalid(
            "spec.group",
            &group,
            "should be a domain with at least one dot",
        ));
    }
    // `validateEnumStrings(scope, [Cluster, Namespaced], required)`.
    match spec["scope"].as_str().unwrap_or_default() {
        "" => errs.push(FieldError::required("spec.scope")),
        "Cluster" | "Namespaced" => {}
        other => errs.push(FieldError::not_supported(
            "spec.scope",
            &Value::String(other.to_owned()),
            &["Cluster".to_owned(), "Namespaced".to_owned()],
        )),
    }
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    for (i, version) in versions.iter().enumerate() {
        if !version["schema"]["openAPIV3Schema"].is_object() {
            errs.push(FieldError::required(&format!(
                "spec.versions[{i}].schema.openAPIV3Schema"
            )));
        }
    }
    for (i, version) in versions.iter().enumerate() {
        let name = text(&version["name"]);
        if let problems = is_dns1035_label(&name)
            && !problems.is_empty()
        {
            errs.push(FieldError::invalid(
                &format!("spec.versions[{i}].name"),
                &name,
                &problems.join(","),
            ));
        }
    }
    let names: Vec<String> = versions.iter().map(|v| text(&v["name"])).collect();
    if names
        .iter()
        .enumerate()
        .any(|(i, n)| names[..i].contains(n))
    {
        errs.push(FieldError::invalid_rendered(
            "spec.versions",
            &go_versions(&versions),
            "must contain unique version names",
        ));
    }
    if versions.iter().filter(|v| is_storage(v)).count() != 1 {
        errs.push(FieldError::invalid_rendered(
            "spec.versions",
            &go_versions(&versions),
            "must have exactly one version marked as storage version",
        ));
    }
    // The internal version's `spec.version` is the first version's name (v1 conversion).
    if let Some(first) = names.first().filter(|n| !n.is_empty())
        && let problems = is_dns1035_label(first)
        && !problems.is_empty()
    {
        errs.push(FieldError::invalid(
            "spec.version",
            first,
            &problems.join(","),
        ));
    }
    let names = &spec["names"];
    for key in ["plural", "singular", "kind", "listKind"] {
        if text(&names[key]).is_empty() {
            errs.push(FieldError::required(&format!("spec.names.{key}")));
        }
    }
    errs.extend(validate_names(names, "spec.names"));
    errs
}

/// Whether a version is marked `storage: true`.
fn is_storage(version: &Value) -> bool {
    version["storage"].as_bool() == Some(true)
}

/// The internal `[]CustomResourceDefinitionVersion` as Go's `encoding/json` writes it in an
/// error, for versions whose schema, subresources and columns were hoisted to the spec (or
/// are absent): `[{"Name":"v1","Served":true,"Storage":true,"Deprecated":false,...}]`.
fn go_versions(versions: &[Value]) -> String {
    if versions.is_empty() {
        return "[]".to_owned();
    }
    let items: Vec<String> = versions
        .iter()
        .map(|v| {
            format!(
                "{{\"Name\":{},\"Served\":{},\"Storage\":{},\"Deprecated\":{},\"DeprecationWarning\":{},\"Schema\":null,\"Subresources\":null,\"AdditionalPrinterColumns\":null,\"SelectableFields\":null}}",
                Value::String(v["name"].as_str().unwrap_or_default().to_owned()),
                v["served"].as_bool().unwrap_or(false),
                is_storage(v),
                v["deprecated"].as_bool().unwrap_or(false),
                match &v["deprecationWarning"] {
                    Value::String(w) => Value::String(w.clone()).to_string(),
                    _ => "null".to_owned(),
                },
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// `ValidateCustomResourceDefinitionStoredVersions` of the status a write stores: the stored
/// versions already recorded, and the storage version (the first marked one) added as the
/// strategy's `PrepareForCreate` and `PrepareForUpdate` add it.
pub(crate) fn validate_stored_versions(crd: &Value) -> Vec<FieldError> {
    let versions = crd["spec"]["versions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut stored: Vec<String> = crd["status"]["storedVersions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if let Some(storage) = versions
        .iter()
        .find(|v| is_storage(v))
        .and_then(|v| v["name"].as_str())
        && !stored.iter().any(|s| s == storage)
    {
        stored.push(storage.to_owned());
    }
    let path = "status.storedVersions";
    if stored.is_empty() {
        return vec![FieldError::invalid_rendered(
            path,
            "null",
            "must have at least one stored version",
        )];
    }
    let rendered = serde_json::to_string(&stored).unwrap_or_default();
    let mut errs = Vec::new();
    let mut remaining: Vec<(usize, &String)> = stored.iter().enumerate().collect();
    for v in &versions {
        let name = v["name"].as_str().unwrap_or_default();
        let found = remaining.iter().position(|(_, s)| *s == name);
        if is_storage(v) && found.is_none() {
            errs.push(FieldError::invalid_rendered(
                path,
                &rendered,
                &format!("must have the storage version {name}"),
            ));
        }
        if let Some(at) = found {
            remaining.remove(at);
        }
    }
    for (i, v) in remaining {
        errs.push(FieldError::invalid(
            &format!("{path}[{i}]"),
            v,
            &format!("missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"),
        ));
    }
    errs
}

/// `ValidateCustomResourceDefinitionNames` of `names` at `path`.
fn validate_names(names: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let text = |key: &str| names[key].as_str().unwrap_or_default().to_owned();
    for key in ["plural", "singular"] {
        let value = text(key);
        if let problems = is_dns1035_label(&value)
            && !value.is_empty()
            && !problems.is_empty()
        {
            errs.push(FieldError::invalid(
                &format!("{path}.{key}"),
                &value,
                &problems.join(","),
            ));
        }
    }
    for key in ["kind", "listKind"] {
        let value = text(key);
        if let problems = is_dns1035_label(&value.to_lowercase())
            && !value.is_empty()
            && !problems.is_empty()
        {
            errs.push(FieldError::invalid(
                &format!("{path}.{key}"),
                &value,
                &format!(
                    "may have mixed case, but should otherwise match: {}",
                    problems.join(",")
                ),
            ));
        }
    }
    let list = |key: &str| -> Vec<String> {
        names[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (i, short) in list("shortNames").iter().enumerate() {
        if let problems = is_dns1035_label(short)
            && !problems.is_empty()
        {
            errs.push(FieldError::invalid(
                &format!("{path}.shortNames[{i}]"),
                short,
                &problems.join(","),
            ));
        }
    }
    let (kind, list_kind) = (text("kind"), text("listKind"));
    if !kind.is_empty() && kind == list_kind {
        errs.push(FieldError::invalid(
            &format!("{path}.listKind"),
            &list_kind,
            "kind and listKind may not be the same",
        ));
    }
    for (i, category) in list("categories").iter().enumerate() {
        if let problems = is_dns1035_label(category)
            && !problems.is_empty()
        {
            errs.push(FieldError::invalid(
                &format!("{path}.categories[{i}]"),
                category,
                &problems.join(","),
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(edit: Value) -> Value {
        let mut spec = json!({"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object"}}}]});
        if let (Some(s), Value::Object(e)) = (spec.as_object_mut(), edit) {
            s.extend(e);
        }
        spec
    }

    fn messages(spec: &Value) -> Vec<String> {
        validate_spec(spec)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_valid_spec_has_no_problems() {
        assert_eq!(messages(&spec(json!({}))), Vec::<String>::new());
    }

    #[test]
    fn names_group_and_scope_are_reported_as_kube_apiserver_words_them() {
        assert_eq!(
            messages(&spec(json!({"group": "example", "scope": "Global",
                "names": {"plural": "widgets", "singular": "Widget", "kind": "Widget", "listKind": "Widget", "shortNames": ["w w"]}}))),
            [
                "spec.group: Invalid value: \"example\": should be a domain with at least one dot",
                "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"",
                "spec.names.singular: Invalid value: \"Widget\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.names.shortNames[0]: Invalid value: \"w w\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.names.listKind: Invalid value: \"Widget\": kind and listKind may not be the same",
            ]
        );
    }

    #[test]
    fn a_version_needs_a_schema_and_a_dns_label_name() {
        assert_eq!(
            messages(&spec(
                json!({"scope": "", "versions": [{"name": "V1", "served": true, "storage": true}]})
            )),
            [
                "spec.scope: Required value",
                "spec.versions[0].schema.openAPIV3Schema: Required value",
                "spec.versions[0].name: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                // The internal version's hoisted `spec.version`, reported again as upstream does.
                "spec.version: Invalid value: \"V1\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ]
        );
    }
}
