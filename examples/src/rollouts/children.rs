//! The children of a `Rollout` `<name>`: the **Deployment** `<name>` that runs its image and the
//! **Service** `<name>` in front of its pods, both owned by the Rollout
//! ([`Pass::apply_child`](kubeward::Pass::apply_child) sets the controller ownerReference).
//!
//! - The Deployment: `spec.replicas` replicas of one container `app` running `spec.image`, port
//!   8080 (`http`), its pods labelled `app.kubernetes.io/name: <name>` and
//!   [`ROLLOUT_LABEL`]`: <name>`. A generation is **staged** by applying the Deployment with its
//!   new template and `paused: true` (the Deployment controller records the template and rolls
//!   nothing out: the pods keep running the promoted generation), and **promoted** by applying
//!   it again with `paused: false`. Its `progressDeadlineSeconds` is the Rollout's
//!   `timeoutSeconds`: the Deployment controller itself reports a rollout that stops
//!   progressing (`ProgressDeadlineExceeded`).
//! - The Service: port 80 (`http`) to the pods' port 8080, selecting the same labels.
//!
//! The reconciler declares `owns(Deployment, Service)`: a deleted or edited child starts the
//! Rollout's pass, which applies it again, and the generated RBAC rules cover the writes. What
//! the Deployment and its pods say about a generation is read in [`health`](super::health).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, PodSpec, PodTemplateSpec, Service, ServicePort, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;
use kubeward::Pass;
use kubeward::children::ChildError;

use super::resource::Rollout;

/// The label every child and every pod carries, naming its Rollout.
pub const ROLLOUT_LABEL: &str = "demo.kubeward.dev/rollout";
/// The recommended label naming the application (`app.kubernetes.io/name`).
pub const NAME_LABEL: &str = "app.kubernetes.io/name";
/// The name of the pods' one container.
pub const CONTAINER: &str = "app";
/// The port the container listens on.
pub const CONTAINER_PORT: i32 = 8080;
/// The port the Service serves.
pub const SERVICE_PORT: i32 = 80;
/// The name of both ports.
pub const PORT_NAME: &str = "http";

/// Why a generation cannot be rendered: both are permanent for that generation
/// (`#[terminal]`): the spec has to change, so the operator does not retry them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, kubeward::Terminal)]
pub enum RenderError {
    /// The image reference has no repository or no tag.
    #[terminal]
    #[error("image reference {image:?} is not of the form repository:tag")]
    InvalidImage {
        /// The image as written in the spec.
        image: String,
    },
    /// The replica count is negative.
    #[terminal]
    #[error("spec.replicas must not be negative, got {replicas}")]
    NegativeReplicas {
        /// The replica count as written.
        replicas: i32,
    },
    /// The Rollout has no name yet (it was not read from the API server).
    #[error("the Rollout has no {0}: it must be read from the API server")]
    Incomplete(&'static str),
}

/// Checks that `image` is a `repository:tag` reference (a registry host may carry a port:
/// `localhost:5000/web:2`). Whether the tag exists is the kubelet's to find out: a pod that
/// cannot pull it says so ([`health`](super::health)).
///
/// # Errors
/// [`RenderError::InvalidImage`].
pub fn check_image(image: &str) -> Result<(), RenderError> {
    let invalid = || RenderError::InvalidImage {
        image: image.to_owned(),
    };
    // The tag follows the last ':' after the last '/'.
    let last = image.rsplit('/').next().unwrap_or(image);
    let (repository, tag) = last.rsplit_once(':').ok_or_else(invalid)?;
    if repository.is_empty() || tag.is_empty() || image.contains(char::is_whitespace) {
        return Err(invalid());
    }
    Ok(())
}

/// The labels of the children and of the pods of the Rollout `name` (the Deployment's selector
/// and the Service's).
pub fn labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (NAME_LABEL.to_owned(), name.to_owned()),
        (ROLLOUT_LABEL.to_owned(), name.to_owned()),
    ])
}

/// The children `rollout`'s current generation wants.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The Deployment, `paused` as asked.
    pub deployment: Deployment,
    /// The Service.
    pub service: Service,
}

/// Renders the children of `rollout`'s current generation, the Deployment `paused` (staged) or
/// not (promoted).
///
/// # Errors
/// When the spec is invalid; see [`RenderError`].
pub fn render(rollout: &Rollout, paused: bool) -> Result<Rendered, RenderError> {
    check_image(&rollout.spec.image)?;
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
    let meta = ObjectMeta {
        name: Some(name.to_owned()),
        namespace: rollout.metadata.namespace.clone(),
        labels: Some(labels(name)),
        ..ObjectMeta::default()
    };
    let deadline = i32::try_from(rollout.spec.timeout_seconds).unwrap_or(i32::MAX);
    let deployment = Deployment {
        metadata: meta.clone(),
        spec: Some(DeploymentSpec {
            replicas: Some(rollout.spec.replicas),
            paused: Some(paused),
            // The API server requires it above minReadySeconds (0).
            progress_deadline_seconds: Some(deadline.max(1)),
            selector: LabelSelector {
                match_labels: Some(labels(name)),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(name)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: CONTAINER.to_owned(),
                        image: Some(rollout.spec.image.clone()),
                        ports: Some(vec![ContainerPort {
                            name: Some(PORT_NAME.to_owned()),
                            container_port: CONTAINER_PORT,
                            protocol: Some("TCP".to_owned()),
                            ..ContainerPort::default()
                        }]),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        status: None,
    };
    let service = Service {
        metadata: meta,
        spec: Some(ServiceSpec {
            selector: Some(labels(name)),
            ports: Some(vec![ServicePort {
                name: Some(PORT_NAME.to_owned()),
                port: SERVICE_PORT,
                target_port: Some(IntOrString::Int(CONTAINER_PORT)),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    };
    Ok(Rendered {
        deployment,
        service,
    })
}

/// Applies both children of `rendered`; returns the Deployment as stored.
///
/// # Errors
/// When the API server refuses an apply.
pub async fn apply(pass: &Pass<Rollout>, rendered: &Rendered) -> Result<Deployment, ChildError> {
    // Boxed: a Deployment's apply future is large, and an unoptimised build polls it on the
    // worker thread's stack.
    Box::pin(pass.apply_child(&rendered.service)).await?;
    Box::pin(pass.apply_child(&rendered.deployment)).await
}

/// The stored Deployment and Service of `rollout`, read through its `pass` (`None` when
/// missing).
///
/// # Errors
/// When the API server refuses a read.
pub async fn stored(
    pass: &Pass<Rollout>,
    rollout: &Rollout,
) -> Result<(Option<Deployment>, Option<Service>), ChildError> {
    let name = rollout.name_any();
    let deployment = Box::pin(pass.get_child::<Deployment>(&name)).await?;
    let service = Box::pin(pass.get_child::<Service>(&name)).await?;
    Ok((deployment, service))
}

/// Deletes the children of `rollout` (a missing one is fine; the Deployment's ReplicaSets and
/// pods go with it, by the garbage collector). Returns how many were deleted.
///
/// # Errors
/// When the API server refuses a delete.
pub async fn delete_all(pass: &Pass<Rollout>, rollout: &Rollout) -> Result<usize, ChildError> {
    let name = rollout.name_any();
    let mut deleted = 0;
    if pass.delete_child::<Service>(&name).await? {
        deleted += 1;
    }
    if pass.delete_child::<Deployment>(&name).await? {
        deleted += 1;
    }
    Ok(deleted)
}

/// The image of the container `app` of a Deployment's pod template.
pub fn image_of(deployment: &Deployment) -> Option<&str> {
    deployment
        .spec
        .as_ref()?
        .template
        .spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == CONTAINER)?
        .image
        .as_deref()
}

/// Whether a Deployment is paused.
pub fn is_paused(deployment: &Deployment) -> bool {
    deployment
        .spec
        .as_ref()
        .and_then(|s| s.paused)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollouts::resource::{RolloutSpec, Strategy};

    fn rollout(image: &str, replicas: i32) -> Rollout {
        let mut rollout = Rollout::new(
            "web",
            RolloutSpec {
                image: image.into(),
                replicas,
                strategy: Strategy::Automatic,
                timeout_seconds: 600,
                suspend: false,
            },
        );
        rollout.metadata.namespace = Some("shop".into());
        rollout
    }

    #[test]
    fn images_must_be_repository_and_tag() {
        assert_eq!(check_image("registry.example/web:1.0"), Ok(()));
        assert_eq!(check_image("localhost:5000/web:2"), Ok(()));
        assert_eq!(check_image("registry.example/web:broken"), Ok(()));
        for invalid in ["localhost:5000/web", "web:", ":1", "web: 1", "web"] {
            assert!(
                matches!(check_image(invalid), Err(RenderError::InvalidImage { .. })),
                "{invalid}"
            );
        }
    }

    #[test]
    fn the_deployment_and_service_select_the_same_pods_on_the_same_port() {
        let rendered = render(&rollout("registry.example/web:1.0", 3), true).expect("renders");
        let deployment = serde_json::to_value(&rendered.deployment).expect("json");
        let labels = serde_json::json!({
            "app.kubernetes.io/name": "web", "demo.kubeward.dev/rollout": "web"
        });
        assert_eq!(deployment["metadata"]["name"], "web");
        assert_eq!(deployment["metadata"]["namespace"], "shop");
        assert_eq!(deployment["spec"]["replicas"], 3);
        assert_eq!(deployment["spec"]["paused"], true);
        assert_eq!(deployment["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(deployment["spec"]["selector"]["matchLabels"], labels);
        assert_eq!(deployment["spec"]["template"]["metadata"]["labels"], labels);
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["name"], "app");
        assert_eq!(container["image"], "registry.example/web:1.0");
        assert_eq!(container["ports"][0]["containerPort"], 8080);
        let service = serde_json::to_value(&rendered.service).expect("json");
        assert_eq!(service["metadata"]["name"], "web");
        assert_eq!(service["spec"]["selector"], labels);
        assert_eq!(service["spec"]["ports"][0]["port"], 80);
        assert_eq!(service["spec"]["ports"][0]["targetPort"], 8080);
        assert_eq!(
            image_of(&rendered.deployment),
            Some("registry.example/web:1.0")
        );
        assert!(is_paused(&rendered.deployment));
        let promoted = render(&rollout("registry.example/web:1.0", 3), false).expect("renders");
        assert!(!is_paused(&promoted.deployment));
    }

    #[test]
    fn an_invalid_spec_does_not_render() {
        assert_eq!(
            render(&rollout("registry.example/web:1.0", -1), false),
            Err(RenderError::NegativeReplicas { replicas: -1 })
        );
        assert!(matches!(
            render(&rollout("web", 1), false),
            Err(RenderError::InvalidImage { .. })
        ));
    }
}
