//! Admission inside the registry, as kube-apiserver runs it: on the object a create or an update
//! is about to store (decoded, patched, defaulted and validated), with the requester's identity
//! ([`WriteOptions::requester`]). Each request is served once; the server's own controllers
//! write with no requester and are not admitted.
//!
//! - The RBAC escalation check of a Role, ClusterRole, RoleBinding or ClusterRoleBinding
//!   (`pkg/registry/rbac/*/policybased`): [`crate::auth::escalation::check`].
//! - `OwnerReferencesPermissionEnforcement` (on in OpenShift and many hardened clusters): changing
//!   an object's owner references needs `delete` on it, and making one block its owner's deletion
//!   needs `update` on the owner's `finalizers`.

use serde_json::Value;

use super::{State, WriteOptions};
use crate::auth::authorizer;
use crate::object::meta_str;
use crate::rbac::RequestAttributes;
use crate::resources::ResourceInfo;
use crate::status::{ApiError, Qualified};
use crate::validation::rbac::RbacKind;

/// The object a write lands on, as the admission checks name it.
struct Target<'a> {
    group: &'a str,
    plural: &'a str,
    /// Empty for a cluster-scoped object.
    namespace: &'a str,
    name: &'a str,
}

impl State {
    /// Admits `new` (in stored form), written over `old` (`None` on create) through
    /// `subresource` by `opts`' requester.
    ///
    /// # Errors
    /// The 403 of the first check that refuses the write.
    pub(super) fn admit(
        &self,
        info: &ResourceInfo,
        old: Option<&Value>,
        new: &Value,
        subresource: Option<&str>,
        opts: &WriteOptions,
    ) -> Result<(), ApiError> {
        let Some(identity) = opts.requester.as_ref() else {
            return Ok(());
        };
        if identity.user.is_privileged() || subresource.is_some() {
            return Ok(()); // every check below allows system:masters
        }
        let target = Target {
            group: &info.group,
            plural: &info.plural,
            namespace: meta_str(new, "namespace").unwrap_or_default(),
            name: meta_str(new, "name").unwrap_or_default(),
        };
        if let Some(kind) = RbacKind::of(&info.group, &info.plural) {
            crate::auth::escalation::check(
                &self.store,
                identity,
                kind,
                target.plural,
                target.namespace,
                target.name,
                &Self::to_view(info, new),
            )?;
        }
        owner_references_admission(
            &identity.user.name,
            |attrs| authorizer::authorize(&self.store, identity, attrs).allowed,
            &target,
            new,
            old,
            |api_version, kind| self.plural_of_kind(api_version, kind),
        )
        .map_err(|message| {
            let resource = Qualified {
                group: target.group,
                name: target.plural,
            };
            ApiError::forbidden_resource(resource, target.name, message)
        })
    }
}

/// kube-apiserver's `OwnerReferencesPermissionEnforcement` admission (on in OpenShift and many
/// hardened clusters), with `allowed` the requesting identity's authorizer: changing an object's owner references needs
/// `delete` on the object (except on create), and making an owner reference block its owner's
/// deletion needs `update` on the owner's `finalizers` subresource. `Err` carries the 403 message.
///
/// `new` is the object the write stores and `old` the stored one (`None` on create).
fn owner_references_admission(
    user: &str,
    allowed: impl Fn(&RequestAttributes) -> bool,
    path: &Target<'_>,
    new: &Value,
    old: Option<&Value>,
    plural_of: impl Fn(&str, &str) -> Option<String>,
) -> Result<(), String> {
    let refs = |object: Option<&Value>| -> Vec<Value> {
        object
            .and_then(|o| o["metadata"]["ownerReferences"].as_array())
            .cloned()
            .unwrap_or_default()
    };
    let (new_refs, old_refs) = (refs(Some(new)), refs(old));
    let changing = match old {
        None => !new_refs.is_empty(),
        Some(_) => new_refs != old_refs,
    };
    if !changing {
        return Ok(());
    }
    let name = new["metadata"]["name"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| Some(path.name.to_owned()).filter(|n| !n.is_empty()));
    let forbidden = |detail: String| {
        let qualified = if path.group.is_empty() {
            path.plural.to_owned()
        } else {
            format!("{}.{}", path.plural, path.group)
        };
        match &name {
            Some(name) => format!("{qualified} {name:?} is forbidden: {detail}"),
            None => format!("{qualified} is forbidden: {detail}"),
        }
    };
    let attributes = |verb: &str,
                      group: &str,
                      resource: &str,
                      subresource: Option<&str>,
                      name: Option<String>| {
        RequestAttributes {
            user: user.to_string(),
            verb: verb.to_string(),
            api_group: group.to_string(),
            resource: resource.to_string(),
            subresource: subresource.map(str::to_string),
            namespace: Some(path.namespace.to_owned()).filter(|n| !n.is_empty()),
            name,
            path: String::new(),
            resource_request: true,
        }
    };
    if old.is_some() {
        let delete = attributes("delete", path.group, path.plural, None, name.clone());
        if !allowed(&delete) {
            // The RBAC authorizer gives no reason for a denial, hence the empty one.
            return Err(forbidden(
                "cannot set an ownerRef on a resource you can't delete: , <nil>".into(),
            ));
        }
    }
    let blocking = |r: &Value| r["blockOwnerDeletion"].as_bool() == Some(true);
    for owner in new_refs.iter().filter(|r| blocking(r)) {
        let already_blocking = old_refs
            .iter()
            .any(|o| blocking(o) && o["uid"] == owner["uid"]);
        if already_blocking {
            continue;
        }
        let api_version = owner["apiVersion"].as_str().unwrap_or_default();
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let kind = owner["kind"].as_str().unwrap_or_default();
        let Some(plural) = plural_of(api_version, kind) else {
            return Err(forbidden(format!(
                "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion {api_version} Kind {kind}: , <nil>"
            )));
        };
        let owner_name = owner["name"].as_str().map(str::to_owned);
        let update = attributes("update", group, &plural, Some("finalizers"), owner_name);
        if !allowed(&update) {
            return Err(forbidden(
                "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>"
                    .into(),
            ));
        }
    }
    Ok(())
}
