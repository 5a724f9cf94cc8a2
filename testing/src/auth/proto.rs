//! Protobuf bodies of the kinds access control adds — the RBAC kinds (`kubectl create role`,
//! `clusterrole`, `rolebinding`, `clusterrolebinding` send them so) and the self reviews (`kubectl
//! auth can-i`, `whoami`) — decoded by a table of each message's fields. Field numbers are those
//! of `k8s.io/api/rbac/v1` and `k8s.io/api/authorization/v1` `generated.proto`; the envelope and
//! the wire format are [`crate::protobuf`]'s.

use serde_json::{Map, Value};

use crate::protobuf::{self, Field};

/// How a field's bytes are read.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A string.
    String,
    /// A repeated string, as a JSON list.
    Strings,
    /// A nested message.
    Message(&'static Message),
    /// A repeated message, as a JSON list.
    Messages(&'static Message),
    /// `ObjectMeta`.
    ObjectMeta,
}

/// The fields of a message that are read: number, JSON name, kind. Others are skipped.
#[derive(Debug)]
pub(crate) struct Message(&'static [(u32, &'static str, Kind)]);

const POLICY_RULE: Message = Message(&[
    (1, "verbs", Kind::Strings),
    (2, "apiGroups", Kind::Strings),
    (3, "resources", Kind::Strings),
    (4, "resourceNames", Kind::Strings),
    (5, "nonResourceURLs", Kind::Strings),
]);
const SUBJECT: Message = Message(&[
    (1, "kind", Kind::String),
    (2, "apiGroup", Kind::String),
    (3, "name", Kind::String),
    (4, "namespace", Kind::String),
]);
const ROLE_REF: Message = Message(&[
    (1, "apiGroup", Kind::String),
    (2, "kind", Kind::String),
    (3, "name", Kind::String),
]);
/// Role and ClusterRole (a ClusterRole's `aggregationRule` is not read).
const ROLE: Message = Message(&[
    (1, "metadata", Kind::ObjectMeta),
    (2, "rules", Kind::Messages(&POLICY_RULE)),
]);
/// RoleBinding and ClusterRoleBinding.
const BINDING: Message = Message(&[
    (1, "metadata", Kind::ObjectMeta),
    (2, "subjects", Kind::Messages(&SUBJECT)),
    (3, "roleRef", Kind::Message(&ROLE_REF)),
]);

const RESOURCE_ATTRIBUTES: Message = Message(&[
    (1, "namespace", Kind::String),
    (2, "verb", Kind::String),
    (3, "group", Kind::String),
    (4, "version", Kind::String),
    (5, "resource", Kind::String),
    (6, "subresource", Kind::String),
    (7, "name", Kind::String),
]);
const NON_RESOURCE_ATTRIBUTES: Message =
    Message(&[(1, "path", Kind::String), (2, "verb", Kind::String)]);
const ACCESS_REVIEW_SPEC: Message = Message(&[
    (1, "resourceAttributes", Kind::Message(&RESOURCE_ATTRIBUTES)),
    (
        2,
        "nonResourceAttributes",
        Kind::Message(&NON_RESOURCE_ATTRIBUTES),
    ),
]);
const RULES_REVIEW_SPEC: Message = Message(&[(1, "namespace", Kind::String)]);
/// SelfSubjectAccessReview (its metadata is not read: upstream requires it empty).
const ACCESS_REVIEW: Message = Message(&[(2, "spec", Kind::Message(&ACCESS_REVIEW_SPEC))]);
const RULES_REVIEW: Message = Message(&[(2, "spec", Kind::Message(&RULES_REVIEW_SPEC))]);
const SUBJECT_REVIEW: Message = Message(&[]);

/// The message of `api_version`/`kind`, if it is one decoded here.
fn message_of(api_version: &str, kind: &str) -> Option<&'static Message> {
    match (api_version, kind) {
        ("rbac.authorization.k8s.io/v1", "Role" | "ClusterRole") => Some(&ROLE),
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => Some(&BINDING),
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => Some(&ACCESS_REVIEW),
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => Some(&RULES_REVIEW),
        ("authentication.k8s.io/v1", "SelfSubjectReview") => Some(&SUBJECT_REVIEW),
        _ => None,
    }
}

fn decode_message(bytes: &[u8], message: &Message) -> Result<Value, String> {
    let mut out = Map::new();
    for (number, field) in protobuf::fields(bytes)? {
        let Some(&(_, name, kind)) = message.0.iter().find(|(n, _, _)| *n == number) else {
            continue;
        };
        let Field::Bytes(b) = field else {
            continue;
        };
        let name = name.to_owned();
        match kind {
            Kind::String => drop(out.insert(name, Value::String(protobuf::string(b)?))),
            Kind::ObjectMeta => drop(out.insert(name, protobuf::object_meta(b)?)),
            Kind::Message(nested) => drop(out.insert(name, decode_message(b, nested)?)),
            Kind::Strings | Kind::Messages(_) => {
                let item = match kind {
                    Kind::Messages(nested) => decode_message(b, nested)?,
                    _ => Value::String(protobuf::string(b)?),
                };
                if let Value::Array(items) = out.entry(name).or_insert_with(|| Value::Array(vec![]))
                {
                    items.push(item);
                }
            }
        }
    }
    Ok(Value::Object(out))
}

/// The JSON object of a protobuf-encoded `raw` object of `api_version`/`kind`, when it is one of
/// the kinds decoded here (`None` otherwise).
pub(crate) fn decode(api_version: &str, kind: &str, raw: &[u8]) -> Option<Result<Value, String>> {
    let message = message_of(api_version, kind)?;
    Some(decode_message(raw, message).map(|mut object| {
        object["apiVersion"] = Value::from(api_version);
        object["kind"] = Value::from(kind);
        object
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u32, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![
            u8::try_from(number << 3 | 2).unwrap(),
            u8::try_from(bytes.len()).unwrap(),
        ];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn a_cluster_role_binding_decodes_with_its_subjects_and_role_ref() {
        let meta = field(1, b"ops");
        let subject = [
            field(1, b"ServiceAccount"),
            field(3, b"op"),
            field(4, b"demo"),
        ]
        .concat();
        let role_ref = [
            field(1, b"rbac.authorization.k8s.io"),
            field(2, b"ClusterRole"),
            field(3, b"view"),
        ]
        .concat();
        let raw = [field(1, &meta), field(2, &subject), field(3, &role_ref)].concat();
        let decoded = decode("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", &raw)
            .expect("an RBAC kind")
            .expect("decodes");
        assert_eq!(
            decoded,
            serde_json::json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "ops"},
                "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "demo"}],
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            })
        );
        assert!(decode("v1", "Pod", &raw).is_none());
    }

    #[test]
    fn a_role_decodes_its_rules_lists() {
        let rule = [
            field(1, b"get"),
            field(1, b"list"),
            field(2, b""),
            field(3, b"configmaps"),
        ]
        .concat();
        let raw = [field(1, &field(1, b"r")), field(2, &rule)].concat();
        let decoded = decode("rbac.authorization.k8s.io/v1", "Role", &raw)
            .unwrap()
            .unwrap();
        assert_eq!(
            decoded["rules"],
            serde_json::json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}])
        );
    }
}
