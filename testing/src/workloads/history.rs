//! ControllerRevisions, the history of a StatefulSet's or DaemonSet's pod template
//! (`pkg/controller/history/controller_history.go`): a revision is named `<owner>-<hash>`, the
//! hash `HashControllerRevision`'s (FNV-1 of the revision's data, then the collision count,
//! safe-encoded), carries the template's labels plus `controller.kubernetes.io/hash`, a
//! controller reference to its owner, the owner's `data` (a strategic merge patch replacing
//! `spec.template`) and a `revision` number. Equal revisions are found by their data; a name
//! taken by other data bumps the owner's `collisionCount` and hashes again.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Ctx;
use super::context::{CONTROLLER_REVISIONS, controller_ref};

const MANAGER: &str = "kube-controller-manager";

/// `history.ControllerRevisionHashLabel`, on a revision.
pub(crate) const HASH_LABEL: &str = "controller.kubernetes.io/hash";
/// `apps.ControllerRevisionHashLabelKey`, on the pods of a revision (and a DaemonSet's
/// revisions).
pub(crate) const REVISION_LABEL: &str = "controller-revision-hash";

/// 32-bit FNV-1 (`hash/fnv.New32`).
pub(crate) fn fnv1_32(chunks: &[&[u8]]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in chunks.iter().flat_map(|c| c.iter()) {
        hash = hash.wrapping_mul(0x0100_0193) ^ u32::from(*byte);
    }
    hash
}

/// 32-bit FNV-1a (`hash/fnv.New32a`).
pub(crate) fn fnv1a_32(chunks: &[&[u8]]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in chunks.iter().flat_map(|c| c.iter()) {
        hash = (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193);
    }
    hash
}

/// `rand.SafeEncodeString`: each character mapped onto consonants and digits that spell no
/// words.
pub(crate) fn safe_encode(text: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    text.chars()
        .map(|c| char::from(ALPHANUMS[c as usize % ALPHANUMS.len()]))
        .collect()
}

/// `HashControllerRevision`: the revision's data, then the collision count in decimal.
pub(crate) fn hash(data: &Value, collision_count: i64) -> String {
    let raw = serde_json::to_vec(data).unwrap_or_default();
    let probe = collision_count.to_string();
    safe_encode(&fnv1_32(&[&raw, probe.as_bytes()]).to_string())
}

/// `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 bytes.
pub(crate) fn revision_name(prefix: &str, hash: &str) -> String {
    let mut end = prefix.len().min(223);
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash}", &prefix[..end])
}

/// The revision data of a StatefulSet or DaemonSet (`getPatch`): its template, to replace
/// the whole `spec.template` when applied.
pub(crate) fn template_patch(owner: &Value) -> Value {
    let mut template = owner["spec"]["template"].clone();
    if !template.is_object() {
        template = json!({});
    }
    template["$patch"] = json!("replace");
    json!({"spec": {"template": template}})
}

/// A revision's number.
pub(crate) fn number(revision: &Value) -> i64 {
    revision["revision"].as_i64().unwrap_or_default()
}

/// The revisions `owner` controls, by revision number, then creation, then name
/// (`SortControllerRevisions`).
pub(crate) fn list(ctx: &Ctx<'_>, owner: &Value) -> Vec<Value> {
    let namespace = owner["metadata"]["namespace"].as_str().unwrap_or_default();
    let uid = owner["metadata"]["uid"].as_str().unwrap_or_default();
    let mut revisions = ctx.owned(CONTROLLER_REVISIONS, namespace, uid);
    revisions.sort_by(by_revision);
    revisions
}

fn by_revision(a: &Value, b: &Value) -> Ordering {
    let meta = |r: &Value, f: &str| r["metadata"][f].as_str().unwrap_or_default().to_string();
    number(a)
        .cmp(&number(b))
        .then_with(|| meta(a, "creationTimestamp").cmp(&meta(b, "creationTimestamp")))
        .then_with(|| meta(a, "name").cmp(&meta(b, "name")))
}

/// `NewControllerRevision` + `CreateControllerRevision`: stores a revision of `data` numbered
/// `revision`, controlled by `owner` (of `kind`), labelled with `labels` (the template's) and
/// the hash under `hash_label`; a name taken by other data increments `collision_count` and
/// tries again. `name_hash` gives the hash for a collision count: [`hash`] of the data for a
/// StatefulSet ([`HASH_LABEL`]), the template's for a DaemonSet ([`REVISION_LABEL`]).
pub(crate) fn create(
    ctx: &mut Ctx<'_>,
    owner: &Value,
    kind: &str,
    data: &Value,
    revision: i64,
    collision_count: &mut i64,
    (hash_label, name_hash): (&str, &dyn Fn(i64) -> String),
) -> Option<Value> {
    let namespace = owner["metadata"]["namespace"].as_str().unwrap_or_default();
    let prefix = owner["metadata"]["name"].as_str().unwrap_or_default();
    let mut labels = owner["spec"]["template"]["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    loop {
        let hash = name_hash(*collision_count);
        let name = revision_name(prefix, &hash);
        if let Some(existing) = ctx.get(CONTROLLER_REVISIONS, namespace, &name) {
            if existing["data"] == *data {
                return Some(existing);
            }
            *collision_count += 1;
            continue;
        }
        labels[hash_label] = json!(hash);
        let mut body = json!({
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {
                "name": name, "namespace": namespace, "labels": labels,
                "ownerReferences": [controller_ref(owner, "apps/v1", kind)],
            },
            "data": data, "revision": revision,
        });
        if let Some(annotations) = owner["metadata"]["annotations"].as_object() {
            body["metadata"]["annotations"] = json!(annotations);
        }
        return ctx
            .create(MANAGER, CONTROLLER_REVISIONS, body)
            .ok()
            .map(Arc::unwrap_or_clone);
    }
}

/// `UpdateControllerRevision`: renumbers `revision` (a rollback to an older template).
pub(crate) fn renumber(ctx: &mut Ctx<'_>, revision: &Value, number: i64) -> Option<Value> {
    if self::number(revision) == number {
        return Some(revision.clone());
    }
    let mut new = revision.clone();
    new["revision"] = json!(number);
    ctx.update(MANAGER, CONTROLLER_REVISIONS, revision, new, None)
        .ok()
        .map(Arc::unwrap_or_clone)
}

/// Deletes a revision no longer kept.
pub(crate) fn delete(ctx: &mut Ctx<'_>, revision: &Value) {
    let meta = &revision["metadata"];
    let _ = ctx.delete(
        MANAGER,
        CONTROLLER_REVISIONS,
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default(),
        &json!({}),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_hashes_match_go() {
        // hash/fnv test vectors.
        assert_eq!(fnv1_32(&[b""]), 0x811c_9dc5);
        assert_eq!(fnv1_32(&[b"a"]), 0x050c_5d7e);
        assert_eq!(fnv1_32(&[b"ab"]), 0x70772d38);
        assert_eq!(fnv1_32(&[b"a", b"b", b"c"]), 0x439c_2f4b);
        assert_eq!(fnv1a_32(&[b"a"]), 0xe40c_292c);
        assert_eq!(fnv1a_32(&[b"abc"]), 0x1a47_e90b);
    }

    #[test]
    fn hashes_are_safe_encoded_decimal() {
        // '0' is 48: 48 % 27 = 21 → '4'; '9' is 57: 57 % 27 = 3 → 'f'.
        assert_eq!(safe_encode("09"), "4f");
        let h = hash(&json!({"spec": {}}), 0);
        assert!(h.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
        assert_ne!(h, hash(&json!({"spec": {}}), 1));
    }

    #[test]
    fn revision_names_cut_long_prefixes() {
        assert_eq!(revision_name("web", "abc"), "web-abc");
        assert_eq!(revision_name(&"x".repeat(300), "h").len(), 225);
    }

    #[test]
    fn the_template_patch_replaces_the_template() {
        let set = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": []}}}});
        assert_eq!(
            template_patch(&set),
            json!({"spec": {"template": {"$patch": "replace", "spec": {"containers": []}}}})
        );
    }
}
