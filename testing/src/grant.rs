//! Granting a service account a controller's rules, as `kubectl apply` of its generated
//! ClusterRole and ClusterRoleBinding would: the same objects on either backend.

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};

use crate::ServerError;

/// Stores a ClusterRole of `rules` and a ClusterRoleBinding of it to the service account
/// `namespace/name`, both named `kubeward-testing:<namespace>:<name>`, replacing any of that
/// name, through `admin`.
pub(crate) async fn grant(
    admin: kube::Client,
    namespace: &str,
    name: &str,
    rules: Vec<PolicyRule>,
) -> Result<(), ServerError> {
    let object_name = format!("kubeward-testing:{namespace}:{name}");
    let metadata = ObjectMeta {
        name: Some(object_name.clone()),
        ..ObjectMeta::default()
    };
    let role = ClusterRole {
        metadata: metadata.clone(),
        rules: Some(rules),
        ..ClusterRole::default()
    };
    let binding = ClusterRoleBinding {
        metadata,
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: object_name.clone(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: name.into(),
            namespace: Some(namespace.into()),
            ..Subject::default()
        }]),
    };
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(admin);
    for result in [
        roles
            .delete(&object_name, &DeleteParams::default())
            .await
            .map(drop),
        bindings
            .delete(&object_name, &DeleteParams::default())
            .await
            .map(drop),
    ] {
        ignore_status(result, 404)?;
    }
    roles.create(&PostParams::default(), &role).await?;
    bindings.create(&PostParams::default(), &binding).await?;
    Ok(())
}

/// `result`, with an API error of `code` taken as success.
pub(crate) fn ignore_status(result: Result<(), kube::Error>, code: u16) -> Result<(), ServerError> {
    match result {
        Err(kube::Error::Api(status)) if status.code == code => Ok(()),
        other => Ok(other?),
    }
}
