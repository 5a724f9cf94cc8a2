//! The walks over objects: `ToFieldSet`, `Compare`, `Merge`, and the removal of a path.

use serde_json::{Map, Value};

use super::field_set::{FieldSet, Path, Pe};
use super::schema::{ApplySchema, field_pe, item_elements};

/// `TypedValue.ToFieldSet`: the fields an applied configuration sets.
pub(super) fn to_field_set(sc: &ApplySchema, v: &Value) -> FieldSet {
    let mut set = FieldSet::default();
    if let Value::Object(map) = v {
        walk_object_set(sc, map, &mut Vec::new(), &mut set);
    }
    set
}

pub(super) fn walk_object_set(
    sc: &ApplySchema,
    map: &Map<String, Value>,
    path: &mut Path,
    set: &mut FieldSet,
) {
    for (k, v) in map {
        path.push(field_pe(k));
        walk_value_set(sc, v, path, set);
        path.pop();
    }
}

pub(super) fn walk_value_set(sc: &ApplySchema, v: &Value, path: &mut Path, set: &mut FieldSet) {
    match v {
        Value::Object(m) if m.is_empty() || sc.is_atomic(path) => set.insert(path),
        Value::Object(m) => walk_object_set(sc, m, path, set),
        Value::Array(items) => {
            let kind = sc.list_type(path);
            match item_elements(&kind, items) {
                Some(pes) => {
                    for (pe, item) in pes.into_iter().zip(items) {
                        path.push(pe);
                        set.insert(path);
                        if let Value::Object(m) = item
                            && !sc.is_atomic(path)
                        {
                            walk_object_set(sc, m, path, set);
                        }
                        path.pop();
                    }
                }
                None => set.insert(path),
            }
        }
        _ => set.insert(path),
    }
}

#[derive(Default)]
pub(super) struct Comparison {
    pub(super) added: FieldSet,
    pub(super) modified: FieldSet,
    pub(super) removed: FieldSet,
}

/// `TypedValue.Compare`: what changed from `lhs` to `rhs` (`metadata.managedFields` left out,
/// so callers compare the objects as stored, without a copy stripped of them).
pub(super) fn compare(sc: &ApplySchema, lhs: &Value, rhs: &Value) -> Comparison {
    compare_typed(sc, EmptyStructs::Kept, lhs, rhs)
}

/// [`compare`] of two objects as their Go type holds them: the empty structs `voids` names
/// hold no field, so they compare as absent (no copy of either object is stripped of them).
pub(super) fn compare_typed(
    sc: &ApplySchema,
    voids: EmptyStructs,
    lhs: &Value,
    rhs: &Value,
) -> Comparison {
    let mut c = Comparison::default();
    let walk = Walk { sc, voids };
    walk.compare_at(Some(lhs), Some(rhs), &mut Vec::new(), &mut c);
    c
}

/// Which empty objects of a built-in's object are Go structs without a field set: typed from
/// the Go struct, such an object holds no leaf, so the field manager owns nothing for it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EmptyStructs {
    /// None: every object is a value (custom resources; views already stripped).
    Kept,
    /// Every object outside `metadata` reached through objects only, that holds nothing but
    /// such objects (a kind whose value structs are not listed: a Lease's `spec: {}`).
    All,
    /// Only the objects at these dotted paths (`spec.template`), each when it holds nothing
    /// but such objects; a container's `resources: {}` elsewhere is a value.
    At(&'static [&'static str]),
}

impl EmptyStructs {
    /// Whether `path` (field elements `f:name`) may hold an empty struct.
    fn covers(self, path: &[Pe]) -> bool {
        let fields = || path.iter().map(|pe| pe.strip_prefix("f:"));
        match self {
            EmptyStructs::Kept => false,
            EmptyStructs::All => {
                !path.is_empty() && path[0] != "f:metadata" && fields().all(|name| name.is_some())
            }
            EmptyStructs::At(paths) => paths.iter().any(|dotted| {
                dotted.split('.').count() == path.len()
                    && dotted.split('.').zip(fields()).all(|(a, b)| Some(a) == b)
            }),
        }
    }

    /// Whether `v` at `path` is an empty struct: an object the rule covers holding only such.
    fn is_void(self, v: &Value, path: &mut Path) -> bool {
        let Value::Object(map) = v else {
            return false;
        };
        if !self.covers(path) {
            return false;
        }
        map.iter().all(|(k, child)| {
            path.push(field_pe(k));
            let void = self.is_void(child, path);
            path.pop();
            void
        })
    }
}

/// A comparison's fixed inputs.
struct Walk<'a> {
    sc: &'a ApplySchema,
    voids: EmptyStructs,
}

pub(super) fn is_empty_container(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

/// Compares one leaf. In a built-in's object `null` is no value (a Go nil slice or pointer
/// encodes as `null`, and is not a field an Update sets); in a custom resource's it is one.
pub(super) fn compare_leaf(
    sc: &ApplySchema,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &Path,
    c: &mut Comparison,
) {
    let (lhs, rhs) = if sc.unstructured {
        (lhs, rhs)
    } else {
        (lhs.filter(|v| !v.is_null()), rhs.filter(|v| !v.is_null()))
    };
    match (lhs, rhs) {
        (None, None) => {}
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(a), Some(b)) if a != b => c.modified.insert(path),
        _ => {}
    }
}

impl Walk<'_> {
    fn compare_at(
        &self,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
        path: &mut Path,
        c: &mut Comparison,
    ) {
        // Equal sides change nothing: most of an updated object is left as it was.
        if let (Some(a), Some(b)) = (lhs, rhs)
            && a == b
        {
            return;
        }
        let sc = self.sc;
        let lhs = lhs.filter(|v| !self.voids.is_void(v, path));
        let rhs = rhs.filter(|v| !self.voids.is_void(v, path));
        let is_obj = |v: Option<&Value>| v.is_none_or(Value::is_object);
        let is_arr = |v: Option<&Value>| v.is_none_or(Value::is_array);
        if is_obj(lhs) && is_obj(rhs) && (lhs.is_some() || rhs.is_some()) {
            if (is_empty_container(lhs) && is_empty_container(rhs)) || sc.is_atomic(path) {
                return compare_leaf(sc, lhs, rhs, path, c);
            }
            let empty = Map::new();
            let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
            let mut keys: Vec<&String> = l.keys().chain(r.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                // managedFields are the record of ownership, never owned: not compared.
                if k == "managedFields" && path.len() == 1 && path[0] == "f:metadata" {
                    continue;
                }
                path.push(field_pe(k));
                self.compare_at(l.get(k), r.get(k), path, c);
                path.pop();
            }
            if !path.is_empty() && (sc.unstructured || sc.is_map(path)) {
                match (lhs, rhs) {
                    (None, Some(_)) => c.added.insert(path),
                    (Some(_), None) => c.removed.insert(path),
                    _ => {}
                }
            }
            return;
        }
        if is_arr(lhs) && is_arr(rhs) && (lhs.is_some() || rhs.is_some()) {
            let empty = Vec::new();
            let l = lhs.and_then(Value::as_array).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_array).unwrap_or(&empty);
            let kind = sc.list_type(path);
            let (Some(lpes), Some(rpes)) = (item_elements(&kind, l), item_elements(&kind, r))
            else {
                return compare_leaf(sc, lhs, rhs, path, c);
            };
            if l.is_empty() && r.is_empty() {
                return compare_leaf(sc, lhs, rhs, path, c);
            }
            // An associative list an Update adds (or removes) is owned itself, like a map, unless
            // the type's zero value holds it.
            match (lhs, rhs) {
                _ if sc.is_zero_valued(path) => {}
                (None, Some(_)) => c.added.insert(path),
                (Some(_), None) => c.removed.insert(path),
                _ => {}
            }
            let mut seen: Vec<&Pe> = Vec::new();
            for pe in lpes.iter().chain(rpes.iter()) {
                if seen.contains(&pe) {
                    continue;
                }
                seen.push(pe);
                let li = lpes.iter().position(|p| p == pe).map(|i| &l[i]);
                let ri = rpes.iter().position(|p| p == pe).map(|i| &r[i]);
                path.push(pe.clone());
                match (li, ri) {
                    (Some(a), Some(b)) if a.is_object() && b.is_object() => {
                        self.compare_at(Some(a), Some(b), path, c)
                    }
                    (Some(a), Some(b)) => compare_leaf(sc, Some(a), Some(b), path, c),
                    (a, b) => {
                        if a.is_some_and(Value::is_object) || b.is_some_and(Value::is_object) {
                            self.compare_at(a, b, path, c);
                        }
                        compare_leaf(sc, a, b, path, c);
                    }
                }
                path.pop();
            }
            return;
        }
        compare_leaf(sc, lhs, rhs, path, c)
    }
}

/// `TypedValue.Merge`: `config` merged into `live` (config wins; associative lists merge by key
/// in structured-merge-diff's order; `null` in config removes the field).
pub(super) fn merge(
    sc: &ApplySchema,
    live: Option<&Value>,
    config: &Value,
    path: &mut Path,
) -> Option<Value> {
    match (live, config) {
        (_, Value::Null) => None,
        (_, Value::Object(_)) if sc.is_atomic(path) => Some(config.clone()),
        (Some(Value::Object(l)), Value::Object(r)) => {
            let mut out = l.clone();
            for (k, v) in r {
                path.push(field_pe(k));
                match merge(sc, l.get(k), v, path) {
                    Some(m) => {
                        out.insert(k.clone(), m);
                    }
                    None => {
                        out.remove(k);
                    }
                }
                path.pop();
            }
            Some(Value::Object(out))
        }
        (Some(Value::Array(l)), Value::Array(r)) => {
            let kind = sc.list_type(path);
            match (item_elements(&kind, l), item_elements(&kind, r)) {
                (Some(lpes), Some(rpes)) => {
                    Some(Value::Array(merge_list(sc, l, &lpes, r, &rpes, path)))
                }
                _ => Some(config.clone()),
            }
        }
        (_, Value::Object(r)) => {
            // no live object to merge into: the config, without its nulls
            let mut out = Map::new();
            for (k, v) in r {
                path.push(field_pe(k));
                if let Some(m) = merge(sc, None, v, path) {
                    out.insert(k.clone(), m);
                }
                path.pop();
            }
            Some(Value::Object(out))
        }
        _ => Some(config.clone()),
    }
}

/// structured-merge-diff `mergingWalker.visitListItems`: items only in the live list keep their
/// place, config items come in config order, shared items are merged.
pub(super) fn merge_list(
    sc: &ApplySchema,
    l: &[Value],
    lpes: &[Pe],
    r: &[Value],
    rpes: &[Pe],
    path: &mut Path,
) -> Vec<Value> {
    let in_r = |pe: &Pe| rpes.iter().position(|p| p == pe);
    let in_l = |pe: &Pe| lpes.iter().position(|p| p == pe);
    let mut shared_order: std::collections::VecDeque<&Pe> =
        rpes.iter().filter(|pe| in_l(pe).is_some()).collect();
    let mut next_shared = shared_order.pop_front();
    let mut merged_rhs: Vec<&Pe> = Vec::new();
    let mut out = Vec::new();
    let merge_item = |li: Option<usize>, ri: Option<usize>, pe: &Pe, path: &mut Path| {
        path.push(pe.clone());
        let v = match ri {
            Some(ri) => merge(sc, li.map(|i| &l[i]), &r[ri], path),
            None => li.map(|i| l[i].clone()),
        };
        path.pop();
        v
    };
    let (mut li, mut ri) = (0, 0);
    while li < lpes.len() || ri < rpes.len() {
        if li < lpes.len() && ri < rpes.len() {
            let pe = &lpes[li];
            if *pe == rpes[ri] {
                merged_rhs.push(pe);
                if let Some(v) = merge_item(Some(li), Some(ri), pe, path) {
                    out.push(v);
                }
                li += 1;
                ri += 1;
                next_shared = shared_order.pop_front();
                continue;
            }
            if in_r(pe).is_some() && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lpes.len() {
            let pe = &lpes[li];
            if in_r(pe).is_none() {
                if let Some(v) = merge_item(Some(li), None, pe, path) {
                    out.push(v);
                }
                li += 1;
                continue;
            } else if merged_rhs.contains(&pe) {
                li += 1;
                continue;
            }
        }
        if ri < rpes.len() {
            let pe = &rpes[ri];
            merged_rhs.push(pe);
            if let Some(v) = merge_item(in_l(pe), Some(ri), pe, path) {
                out.push(v);
            }
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared_order.pop_front();
            }
        }
    }
    out
}

/// Removes the value at `path` (if present).
pub(super) fn remove_path(sc: &ApplySchema, v: &mut Value, path: &[Pe]) {
    remove_in(sc, v, path, &[]);
}

/// Removes the value at `path` below `prefix` (lists are classified by their full path).
pub(super) fn remove_in(sc: &ApplySchema, v: &mut Value, path: &[Pe], prefix: &[Pe]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match v {
        Value::Object(map) => {
            let Some(name) = first.strip_prefix("f:") else {
                return;
            };
            if rest.is_empty() {
                map.remove(name);
            } else if let Some(child) = map.get_mut(name) {
                let mut p = prefix.to_vec();
                p.push(first.clone());
                remove_in(sc, child, rest, &p);
            }
        }
        Value::Array(items) => {
            let kind = sc.list_type(prefix);
            let Some(pes) = item_elements(&kind, items) else {
                return;
            };
            if let Some(i) = pes.iter().position(|p| p == first) {
                if rest.is_empty() {
                    items.remove(i);
                } else {
                    let mut p = prefix.to_vec();
                    p.push(first.clone());
                    remove_in(sc, &mut items[i], rest, &p);
                }
            }
        }
        _ => {}
    }
}
