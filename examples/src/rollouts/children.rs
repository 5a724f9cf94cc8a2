//! The child objects of a `Rollout`: a candidate ConfigMap per generation
//! (`<name>-candidate`) and the live ConfigMap (`<name>-live`), both owned by the Rollout.
//!
//! They stand in for a workload: rendering resolves the image (and refuses one that does not
//! resolve), applying stages the candidate, promoting copies it to the live ConfigMap. The
//! reconciler declares `owns(ConfigMap)`: a deleted or edited child starts the Rollout's pass,
//! which applies it again, and the generated RBAC rules cover the writes
//! ([`Pass::apply_child`](kubeward::Pass::apply_child), [`Pass::delete_child`](kubeward::Pass::delete_child)).
//! Reading the candidate back is the operator's own `get` ([`rbac`](super::rbac)).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kubeward::Pass;
use kubeward::children::ChildError;

use super::resource::Rollout;

/// The label every child carries, naming its Rollout.
pub const ROLLOUT_LABEL: &str = "demo.kubeward.dev/rollout";
/// The `data` keys of a child.
pub const IMAGE_KEY: &str = "image";
/// See [`IMAGE_KEY`].
pub const REPLICAS_KEY: &str = "replicas";
/// See [`IMAGE_KEY`].
pub const GENERATION_KEY: &str = "generation";

/// Why a generation cannot be rendered. `InvalidImage` and `NegativeReplicas` are permanent
/// for that generation (`#[terminal]`): the spec has to change, so the operator does not retry
/// them. A missing tag may yet be pushed: `ImageNotFound` is retried with backoff.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, kubeward::Terminal)]
pub enum RenderError {
    /// The image reference has no repository or no tag.
    #[terminal]
    #[error("image reference {image:?} is not of the form repository:tag")]
    InvalidImage {
        /// The image as written in the spec.
        image: String,
    },
    /// The registry has no such tag (the demo registry has every tag except `broken`).
    #[error("image {image} not found: manifest unknown for tag {tag:?}")]
    ImageNotFound {
        /// The image as written in the spec.
        image: String,
        /// Its tag.
        tag: String,
    },
    /// The replica count is negative.
    #[terminal]
    #[error("spec.replicas must not be negative, got {replicas}")]
    NegativeReplicas {
        /// The replica count as written.
        replicas: i32,
    },
    /// The Rollout has no name, namespace or uid yet (it was not read from the API server).
    #[error("the Rollout has no {0}: it must be read from the API server")]
    Incomplete(&'static str),
}

/// The name of the candidate ConfigMap of `rollout`.
pub fn candidate_name(rollout: &str) -> String {
    format!("{rollout}-candidate")
}

/// The name of the live ConfigMap of `rollout`.
pub fn live_name(rollout: &str) -> String {
    format!("{rollout}-live")
}

/// Resolves `image` against the demo registry: every `repository:tag` exists except the tag
/// `broken`.
///
/// # Errors
/// [`RenderError::InvalidImage`] or [`RenderError::ImageNotFound`].
pub fn resolve_image(image: &str) -> Result<(), RenderError> {
    let invalid = || RenderError::InvalidImage {
        image: image.to_owned(),
    };
    // The tag follows the last ':' after the last '/' (a registry host may carry a port).
    let last = image.rsplit('/').next().unwrap_or(image);
    let (repository, tag) = last.rsplit_once(':').ok_or_else(invalid)?;
    if repository.is_empty() || tag.is_empty() || image.contains(char::is_whitespace) {
        return Err(invalid());
    }
    if tag == "broken" {
        return Err(RenderError::ImageNotFound {
            image: image.to_owned(),
            tag: tag.to_owned(),
        });
    }
    Ok(())
}

/// Renders the candidate ConfigMap of `rollout`'s current generation (applied as a child of
/// the Rollout: [`Pass::apply_child`] adds the owner reference).
///
/// # Errors
/// When the image does not resolve or the spec is invalid; see [`RenderError`].
pub fn render(rollout: &Rollout) -> Result<ConfigMap, RenderError> {
    resolve_image(&rollout.spec.image)?;
    if rollout.spec.replicas < 0 {
        return Err(RenderError::NegativeReplicas {
            replicas: rollout.spec.replicas,
        });
    }
    let name = rollout
        .metadata
        .name
        .as_deref()
        .ok_or(RenderError::Incomplete("name"))?;
    let generation = rollout.metadata.generation.unwrap_or_default();
    Ok(ConfigMap {
        metadata: ObjectMeta {
            name: Some(candidate_name(name)),
            namespace: rollout.metadata.namespace.clone(),
            labels: Some(BTreeMap::from([(
                ROLLOUT_LABEL.to_owned(),
                name.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([
            (IMAGE_KEY.to_owned(), rollout.spec.image.clone()),
            (REPLICAS_KEY.to_owned(), rollout.spec.replicas.to_string()),
            (GENERATION_KEY.to_owned(), generation.to_string()),
        ])),
        ..ConfigMap::default()
    })
}

/// The stored candidate of `rollout`, read through its `pass`, if any.
///
/// # Errors
/// When the API server refuses the read (a missing candidate is `Ok(None)`).
pub async fn candidate(
    pass: &kubeward::Pass<Rollout>,
    rollout: &Rollout,
) -> Result<Option<ConfigMap>, kubeward::children::ChildError> {
    pass.get_child(&candidate_name(&rollout.name_any())).await
}

/// Whether the stored candidate is the one rendered for `rollout`'s current generation.
pub fn is_current(candidate: &ConfigMap, rollout: &Rollout) -> bool {
    let generation = rollout.metadata.generation.unwrap_or_default().to_string();
    candidate
        .data
        .as_ref()
        .and_then(|d| d.get(GENERATION_KEY))
        .is_some_and(|g| *g == generation)
}

/// The live ConfigMap that promoting `candidate` produces.
pub fn promoted(candidate: &ConfigMap, rollout: &Rollout) -> ConfigMap {
    let mut live = candidate.clone();
    live.metadata = ObjectMeta {
        name: Some(live_name(&rollout.name_any())),
        namespace: candidate.metadata.namespace.clone(),
        labels: candidate.metadata.labels.clone(),
        ..ObjectMeta::default()
    };
    live
}

/// Deletes the children of `rollout` (a missing one is fine). Returns how many were deleted.
///
/// # Errors
/// When the API server refuses a delete.
pub async fn delete_all(pass: &Pass<Rollout>, rollout: &Rollout) -> Result<usize, ChildError> {
    let name = rollout.name_any();
    let mut deleted = 0;
    for child in [candidate_name(&name), live_name(&name)] {
        if pass.delete_child::<ConfigMap>(&child).await? {
            deleted += 1;
        }
    }
    Ok(deleted)
}

/// The image a stored child ConfigMap carries.
pub fn image_of(config_map: &ConfigMap) -> Option<&str> {
    config_map.data.as_ref()?.get(IMAGE_KEY).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolving_refuses_the_broken_tag_and_malformed_references() {
        assert_eq!(resolve_image("registry.example/web:1.0"), Ok(()));
        assert_eq!(resolve_image("localhost:5000/web:2"), Ok(()));
        assert!(matches!(
            resolve_image("registry.example/web:broken"),
            Err(RenderError::ImageNotFound { .. })
        ));
        assert!(matches!(
            resolve_image("localhost:5000/web"),
            Err(RenderError::InvalidImage { .. })
        ));
        assert!(matches!(
            resolve_image("web:"),
            Err(RenderError::InvalidImage { .. })
        ));
    }
}
