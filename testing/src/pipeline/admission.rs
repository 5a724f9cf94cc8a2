//! kube-apiserver's `OwnerReferencesPermissionEnforcement` admission, on what can be known of a
//! write before it is served.

use http::Method;
use serde_json::{Value, json};

use super::RequestContext;
use crate::auth::authorizer::{self, Identity};
use crate::rbac::RequestAttributes;
use crate::registry::State;
use crate::routes::ResourcePath;
use crate::status::{ApiError, Qualified};

/// [`owner_references_admission`] for a request, with what can be known before the
/// write: the body of a create, update, merge patch or server-side apply, and the stored object.
pub(super) fn owner_references(
    state: &State,
    identity: &Identity,
    request: &RequestContext<'_>,
    path: &ResourcePath,
) -> Result<(), ApiError> {
    let method = request.method;
    let media = crate::endpoints::media_type(request.headers);
    let merge_patch = media.as_deref() == Some("application/merge-patch+json");
    let strategic = media.as_deref() == Some("application/strategic-merge-patch+json");
    let apply = media.as_deref() == Some("application/apply-patch+yaml");
    let checked = *method == Method::POST
        || *method == Method::PUT
        || (*method == Method::PATCH && (merge_patch || strategic || apply));
    if !checked || path.subresource.is_some() {
        return Ok(());
    }
    let Ok(mut new) = serde_json::from_slice::<Value>(request.body) else {
        return Ok(()); // protobuf or YAML bodies: not checked
    };
    let info = state.resource(&path.group, &path.version, &path.plural);
    let old = match (&path.name, &info) {
        (Some(name), Some(info)) if *method != Method::POST => {
            state.get(info, path.namespace.as_deref(), name).ok()
        }
        _ => None,
    };
    if *method == Method::PATCH && strategic {
        // The owner references the strategic merge produces; a patch that does not apply is
        // answered by the patch itself.
        let (Some(info), Some(old), Value::Object(patch)) = (&info, &old, new) else {
            return Ok(());
        };
        let Ok(patched) = crate::strategic::patch_object(info, old, patch) else {
            return Ok(());
        };
        new = patched;
    } else if *method == Method::PATCH {
        // A merge patch or an apply (in JSON) without owner references leaves them as they are;
        // with them, an apply by the manager that owns the references sets them as written.
        let Some(refs) = new["metadata"].get("ownerReferences").cloned() else {
            return Ok(());
        };
        new = old.clone().unwrap_or_else(|| json!({}));
        new["metadata"]["ownerReferences"] = refs;
    }
    let name = new["metadata"]["name"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| path.name.clone())
        .unwrap_or_default();
    owner_references_admission(
        &identity.user.name,
        |attrs| authorizer::authorize(&state.store, identity, attrs).allowed,
        path,
        &new,
        old.as_ref(),
        |api_version, kind| state.plural_of_kind(api_version, kind),
    )
    .map_err(|message| {
        let resource = Qualified {
            group: &path.group,
            name: &path.plural,
        };
        ApiError::forbidden_resource(resource, &name, message)
    })
}

/// kube-apiserver's `OwnerReferencesPermissionEnforcement` admission (on in OpenShift and many
/// hardened clusters), with `allowed` the requesting identity's authorizer: changing an object's owner references needs
/// `delete` on the object (except on create), and making an owner reference block its owner's
/// deletion needs `update` on the owner's `finalizers` subresource. `Err` carries the 403 message.
///
/// `new` is the object the request writes and `old` the stored one (`None` on create); the caller
/// passes what it can know before the write: request bodies of creates, updates and merge
/// patches, and the result of strategic merge patches (JSON patches and applies that touch
/// owner references are not checked).
fn owner_references_admission(
    user: &str,
    allowed: impl Fn(&RequestAttributes) -> bool,
    path: &ResourcePath,
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
        .or_else(|| path.name.clone());
    let forbidden = |detail: String| {
        let qualified = if path.group.is_empty() {
            path.plural.clone()
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
            namespace: path.namespace.clone(),
            name,
            path: String::new(),
            resource_request: true,
        }
    };
    if old.is_some() {
        let delete = attributes("delete", &path.group, &path.plural, None, name.clone());
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
