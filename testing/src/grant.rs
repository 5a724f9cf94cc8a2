//! Granting a service account a controller's rules, as `kubectl apply` of its generated
//! ClusterRole and ClusterRoleBinding (or, for a namespaced operator, Role and RoleBinding) would:
//! the same objects on either backend.

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ServerError;

/// Where a grant's rules hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Everywhere: a ClusterRole and ClusterRoleBinding named
    /// `kubeward-testing:<namespace>:<name>`.
    Cluster,
    /// In the service account's namespace only: a Role and RoleBinding there named
    /// `kubeward-testing:<name>` (the namespace is created if missing).
    Namespace,
}

/// Stores a role of `rules` and a binding of it to the service account `namespace/name`, as
/// `scope` says, replacing any of their name, through `admin`.
pub(crate) async fn grant(
    admin: kube::Client,
    namespace: &str,
    name: &str,
    rules: Vec<PolicyRule>,
    scope: Scope,
) -> Result<(), ServerError> {
    let object_name = match scope {
        Scope::Cluster => format!("kubeward-testing:{namespace}:{name}"),
        Scope::Namespace => format!("kubeward-testing:{name}"),
    };
    let metadata = ObjectMeta {
        name: Some(object_name.clone()),
        ..ObjectMeta::default()
    };
    let subjects = Some(vec![Subject {
        kind: "ServiceAccount".into(),
        name: name.into(),
        namespace: Some(namespace.into()),
        ..Subject::default()
    }]);
    let role_ref = |kind: &str| RoleRef {
        api_group: "rbac.authorization.k8s.io".into(),
        kind: kind.into(),
        name: object_name.clone(),
    };
    match scope {
        Scope::Cluster => {
            let role = ClusterRole {
                metadata: metadata.clone(),
                rules: Some(rules),
                ..ClusterRole::default()
            };
            let binding = ClusterRoleBinding {
                metadata,
                role_ref: role_ref("ClusterRole"),
                subjects,
            };
            replace(Api::all(admin.clone()), &role).await?;
            replace(Api::all(admin), &binding).await
        }
        Scope::Namespace => {
            let created = Api::<Namespace>::all(admin.clone())
                .create(&PostParams::default(), &named(namespace))
                .await
                .map(drop);
            ignore_status(created, 409)?;
            let role = Role {
                metadata: metadata.clone(),
                rules: Some(rules),
            };
            let binding = RoleBinding {
                metadata,
                role_ref: role_ref("Role"),
                subjects,
            };
            replace(Api::namespaced(admin.clone(), namespace), &role).await?;
            replace(Api::namespaced(admin, namespace), &binding).await
        }
    }
}

/// Stores `object` through `api`, deleting first any object of its name.
async fn replace<K>(api: Api<K>, object: &K) -> Result<(), ServerError>
where
    K: kube::Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    ignore_status(
        api.delete(&name, &DeleteParams::default()).await.map(drop),
        404,
    )?;
    api.create(&PostParams::default(), object).await?;
    Ok(())
}

/// An object of kind `K` named `name`, nothing else set.
pub(crate) fn named<K: kube::Resource<DynamicType = ()> + Default>(name: &str) -> K {
    let mut object = K::default();
    *object.meta_mut() = ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    };
    object
}

/// `result`, with an API error of `code` taken as success.
pub(crate) fn ignore_status(result: Result<(), kube::Error>, code: u16) -> Result<(), ServerError> {
    match result {
        Err(kube::Error::Api(status)) if status.code == code => Ok(()),
        other => Ok(other?),
    }
}
