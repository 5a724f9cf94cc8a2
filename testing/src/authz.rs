//! What a request asks to be allowed (apiserver `RequestInfoFactory`), and the
//! `OwnerReferencesPermissionEnforcement` admission; the decision is [`super::auth::authorizer`]'s.

use std::collections::HashMap;

use http::Method;
use serde_json::Value;

use super::rbac::{RequestAttributes, verb_for};
use super::routes::ResourcePath;

/// The attributes of a non-resource request (discovery, `/version`, `/healthz`): the path and
/// the lowercased HTTP method as the verb.
pub(crate) fn non_resource_attributes(
    user: &str,
    method: &Method,
    raw_path: &str,
) -> RequestAttributes {
    RequestAttributes {
        user: user.to_owned(),
        verb: method.as_str().to_ascii_lowercase(),
        path: raw_path.to_owned(),
        ..RequestAttributes::default()
    }
}

/// The attributes of a resource request.
pub(crate) fn resource_attributes(
    user: &str,
    method: &Method,
    path: &ResourcePath,
    raw_path: &str,
    query: &HashMap<String, String>,
) -> RequestAttributes {
    let watch = super::handler::is_watch(query);
    let mut name = path.name.clone();
    if name.is_none() && method == Method::GET {
        // RequestInfoFactory takes a list/watch's name from a `metadata.name=` field selector.
        name = query.get("fieldSelector").and_then(|s| {
            s.split(',')
                .filter_map(|t| t.strip_prefix("metadata.name="))
                .next()
                .map(str::to_string)
        });
    }
    RequestAttributes {
        user: user.to_string(),
        verb: verb_for(method.as_str(), path.name.is_some(), watch),
        api_group: path.group.clone(),
        resource: path.plural.clone(),
        subresource: path.subresource.clone(),
        // RequestInfoFactory: `/api/v1/namespaces/{name}[/status|/finalize]` is in that namespace.
        namespace: match (&path.namespace, path.group.as_str(), path.plural.as_str()) {
            (None, "", "namespaces") => path.name.clone(),
            (namespace, ..) => namespace.clone(),
        },
        name,
        path: raw_path.to_string(),
        resource_request: true,
    }
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
pub(crate) fn owner_references_admission(
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
