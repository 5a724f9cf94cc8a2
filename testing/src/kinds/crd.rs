//! CustomResourceDefinitions (apiextensions-apiserver's CRD strategy): the resources a CRD
//! serves, read from it once it is valid, and the warnings its schemas earn.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Strategy, Upkeep};
use crate::apply::ApplySchema;
use crate::resources::{ResourceInfo, View, storage_version_hash_of};
use crate::scale::ScalePaths;
use crate::schema::Structural;
use crate::status::{ApiError, Cause};
use crate::store::StorageKey;
use crate::validation::{self, FieldError};

/// Reads the served versions of a CustomResourceDefinition into resource infos.
///
/// Returns the problems found as `(field, message)` pairs when the definition is unusable.
pub(crate) fn infos_from_crd(crd: &Value) -> Result<Vec<ResourceInfo>, Vec<FieldError>> {
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or_default().to_string();
    let names = &spec["names"];
    let plural = names["plural"].as_str().unwrap_or_default().to_string();
    let kind = names["kind"].as_str().unwrap_or_default().to_string();
    let expected_name = format!("{plural}.{group}");
    let mut errors = Vec::new();
    if crd["metadata"]["name"].as_str() != Some(expected_name.as_str()) {
        errors.push(FieldError::invalid(
            "metadata.name",
            crd["metadata"]["name"].as_str().unwrap_or_default(),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    errors.extend(validation::crd::validate_spec(spec));
    let scope = spec["scope"].as_str().unwrap_or("Namespaced");
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    // Identical per-version schemas are validated once, at `spec.validation`: the conversion
    // to the internal version hoists them there (`hasIdenticalPerVersionSchema`).
    let schema_of = |v: &Value| v["schema"]["openAPIV3Schema"].clone();
    let hoisted = !versions.is_empty()
        && schema_of(&versions[0]).is_object()
        && versions
            .iter()
            .all(|v| schema_of(v) == schema_of(&versions[0]));
    let mut first: Option<Arc<Structural>> = None;
    let structurals: Vec<Option<Arc<Structural>>> = versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v["schema"]["openAPIV3Schema"].as_object().map(|_| {
                if hoisted && let Some(done) = &first {
                    return done.clone();
                }
                let path = if hoisted {
                    "spec.validation.openAPIV3Schema".to_owned()
                } else {
                    format!("spec.versions[{i}].schema.openAPIV3Schema")
                };
                let schema = &v["schema"]["openAPIV3Schema"];
                errors.extend(crate::schema::checks::validate(schema, &path));
                let structural = Arc::new(Structural::from_json(schema));
                first.get_or_insert_with(|| structural.clone());
                structural
            })
        })
        .collect();
    errors.extend(validation::crd::validate_stored_versions(crd));
    if !errors.is_empty() {
        return Err(errors);
    }
    let storage_version = versions
        .iter()
        .find(|v| v["storage"].as_bool() == Some(true))
        .and_then(|v| v["name"].as_str());
    let list_kind = names["listKind"]
        .as_str()
        .filter(|l| !l.is_empty())
        .map_or_else(|| format!("{kind}List"), str::to_owned);
    let singular = names["singular"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_lowercase());
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(versions
        .iter()
        .zip(structurals)
        .filter(|(v, _)| v["served"].as_bool().unwrap_or(true))
        .map(|(v, structural)| ResourceInfo {
            group: group.clone(),
            version: v["name"].as_str().unwrap_or_default().to_string(),
            kind: kind.clone(),
            list_kind: list_kind.clone(),
            plural: plural.clone(),
            singular: singular.clone(),
            namespaced: scope == "Namespaced",
            status_subresource: v["subresources"]["status"].is_object(),
            storage_version_hash: storage_version
                .map(|stored| storage_version_hash_of(&group, stored, &kind)),
            scale: ScalePaths::of_version(v),
            tracks_generation: true,
            custom: true,
            short_names: strings(&names["shortNames"]),
            categories: strings(&names["categories"]),
            storage: StorageKey {
                group: group.clone(),
                resource: plural.clone(),
            },
            view: View::Native,
            printer_columns: v["additionalPrinterColumns"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
            schema: v["schema"]["openAPIV3Schema"]
                .as_object()
                .map(|o| Value::Object(o.clone())),
            apply: v["schema"]["openAPIV3Schema"].is_object().then(|| {
                Arc::new(ApplySchema::from_openapi_v3(
                    &v["schema"]["openAPIV3Schema"],
                ))
            }),
            structural,
        })
        .collect())
}

/// The resources a CRD object serves, or the 422 Invalid its declaration earns.
pub(crate) fn crd_infos(
    info: &ResourceInfo,
    name: &str,
    crd: &Value,
) -> Result<Vec<ResourceInfo>, ApiError> {
    infos_from_crd(crd).map_err(|errs| {
        let causes = errs
            .into_iter()
            .map(|e| Cause {
                reason: e.reason.into(),
                message: e.message,
                field: e.field,
            })
            .collect();
        ApiError::invalid(info.qualified_kind(), name, causes)
    })
}

/// The strategy's `WarningsOnCreate`: `unrecognized format "colour"` for each format of a
/// string the schemas use that apiextensions does not validate (a schema the versions share
/// is read once, as upstream reads it hoisted to `spec.validation`).
pub(crate) fn crd_format_warnings(crd: &Value) -> Vec<String> {
    let schemas: Vec<&Value> = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| &v["schema"]["openAPIV3Schema"])
        .collect();
    let shared = schemas.len() > 1 && schemas.iter().all(|s| *s == schemas[0]);
    let distinct = if shared { &schemas[..1] } else { &schemas[..] };
    distinct
        .iter()
        .flat_map(|s| crate::schema::structural::unrecognized_formats(s))
        .map(|f| format!("unrecognized format {}", crate::schema::field::quote(&f)))
        .collect()
}

/// CustomResourceDefinitions' [`Strategy`].
pub(crate) struct Definitions;

impl Strategy for Definitions {
    /// `AllowUnconditionalUpdate` is false (the CRD strategy's and its status strategy's): a PUT
    /// names the resourceVersion it replaces.
    fn allows_unconditional_update(&self) -> bool {
        false
    }

    /// The spec's and status's rules, which follow the metadata's in one list (upstream's
    /// `ValidateCustomResourceDefinition`), on the object as decoding defaults it.
    fn field_rules(&self, new: &Value, _old: Option<&Value>) -> Vec<FieldError> {
        let mut defaulted = new.clone();
        validation::crd::set_defaults(&mut defaulted);
        infos_from_crd(&defaulted).err().unwrap_or_default()
    }

    /// Defaulting (`SetDefaults_CustomResourceDefinitionSpec`), the CRD's validation (the
    /// resources it would serve), and `PrepareForCreate`: a fresh status naming the storage
    /// version; the names are accepted and the CRD established by controllers, in writes of
    /// their own. Warns of the schemas' unrecognized formats.
    fn validate_create(
        &self,
        info: &ResourceInfo,
        name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        validation::crd::set_defaults(obj);
        let infos = crd_infos(info, name, obj)?;
        let warnings = crd_format_warnings(obj);
        let storage = obj["spec"]["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["storage"].as_bool() == Some(true)))
            .and_then(|v| v["name"].as_str())
            .or_else(|| infos.first().map(|i| i.version.as_str()))
            .unwrap_or_default()
            .to_string();
        obj["status"] = json!({
            "acceptedNames": {"plural": "", "kind": ""},
            "conditions": null,
            "storedVersions": [storage],
        });
        Ok(warnings)
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        name: &str,
        new: &mut Value,
        _old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        if subresource.is_none() {
            validation::crd::set_defaults(new);
            crd_infos(info, name, new)?;
        }
        Ok(())
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    /// A valid CRD serves its versions (an invalid one was refused before it was stored).
    fn after_write(&self, stored: &Value) -> Upkeep {
        match infos_from_crd(stored) {
            Ok(infos) => Upkeep::Serves(infos),
            Err(_) => Upkeep::None,
        }
    }

    fn after_delete(&self, gone: &Value) -> Upkeep {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        Upkeep::StopsServing {
            group: text(&gone["spec"]["group"]),
            plural: text(&gone["spec"]["names"]["plural"]),
        }
    }

    fn established_after_create(&self) -> bool {
        true
    }
}
