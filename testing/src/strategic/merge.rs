//! The merge of a strategic merge patch into an object: a port of apimachinery's
//! `strategicpatch.StrategicMergeMapPatch` (`pkg/util/strategicpatch/patch.go`, `mergeMap` and
//! its helpers) with the options the apiserver uses (`MergeParallelList` and
//! `IgnoreUnmatchedNulls` both on). Function names follow upstream's so the two read side by side.

use serde_json::{Map, Value};

use super::SmpError;
use super::meta::PatchSchema;
use crate::go::fmt::{fmt_s, fmt_v, type_of};

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const REPLACE_DIRECTIVE: &str = "replace";
const MERGE_DIRECTIVE: &str = "merge";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

const MAP_TYPE: &str = "map[string]interface {}";
const SLICE_TYPE: &str = "[]interface {}";

/// `mergepatch.ErrNoMergeKey`.
fn no_merge_key(m: &Map<String, Value>, key: &str) -> SmpError {
    SmpError::Other(format!(
        "map: {} does not contain declared merge key: {key}",
        fmt_v(&Value::Object(m.clone()))
    ))
}

/// `mergepatch.ErrBadArgType`.
fn bad_arg_type(expected: &str, actual: Option<&Value>) -> SmpError {
    SmpError::Other(format!(
        "expected a {expected}, but received a {}",
        type_of(actual)
    ))
}

fn as_map(v: &Value) -> Result<&Map<String, Value>, SmpError> {
    v.as_object().ok_or_else(|| bad_arg_type(MAP_TYPE, Some(v)))
}

/// `mergeMap`: merges `patch` into `original` field by field, as `schema` says.
pub(super) fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: PatchSchema<'_>,
) -> Result<Map<String, Value>, SmpError> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER).cloned() {
        return handle_directive_in_merge_map(&directive, patch);
    }
    apply_retain_keys_directive(&mut original, &mut patch)?;
    merge_patch_into_original(&mut original, &mut patch, schema)?;
    for (k, patch_v) in patch {
        let (key, is_delete_list) = if k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
            (extract_key(&k, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?, true)
        } else {
            (k, false)
        };
        // null deletes the field (and a null deletion list deletes the list).
        if patch_v.is_null() {
            original.remove(&key);
            continue;
        }
        let Some(slot) = original.get_mut(&key) else {
            if !is_delete_list {
                put_patch_value(&mut original, key, patch_v);
            }
            continue;
        };
        if type_of(Some(slot)) != type_of(Some(&patch_v)) {
            if !is_delete_list {
                put_patch_value(&mut original, key, patch_v);
            }
            continue;
        }
        let merged = match (std::mem::take(slot), patch_v) {
            (Value::Object(o), Value::Object(p)) => {
                let (sub, meta) = schema.field(&key)?;
                if meta.strategy()? == REPLACE_DIRECTIVE {
                    Value::Object(p)
                } else {
                    Value::Object(merge_map(o, p, sub)?)
                }
            }
            (Value::Array(o), Value::Array(p)) => {
                let (sub, meta) = schema.list_field(&key)?;
                let strategy = meta.strategy()?;
                Value::Array(merge_slice_handler(
                    o,
                    p,
                    sub,
                    strategy,
                    &meta.merge_key,
                    is_delete_list,
                )?)
            }
            (_, p) => match remove_directives(p) {
                Some(v) => v,
                None => {
                    original.remove(&key);
                    continue;
                }
            },
        };
        original.insert(key, merged);
    }
    Ok(original)
}

/// A patch value where the original has none (or one of another type): nulls inside are
/// dropped (`discardNullValuesFromPatch`), as are directive maps (`removeDirectives`).
fn put_patch_value(original: &mut Map<String, Value>, key: String, mut value: Value) {
    discard_null_values_from_patch(&mut value);
    match remove_directives(value) {
        Some(v) => {
            original.insert(key, v);
        }
        None => {
            original.remove(&key);
        }
    }
}

/// `handleDirectiveInMergeMap`: `$patch: replace` takes the patch map as it is, `$patch: delete`
/// empties the map.
fn handle_directive_in_merge_map(
    directive: &Value,
    mut patch: Map<String, Value>,
) -> Result<Map<String, Value>, SmpError> {
    match directive.as_str() {
        Some(REPLACE_DIRECTIVE) => {
            patch.remove(DIRECTIVE_MARKER);
            Ok(patch)
        }
        Some(DELETE_DIRECTIVE) => Ok(Map::new()),
        _ => Err(bad_patch_type(directive, &patch)),
    }
}

/// `mergepatch.ErrBadPatchType`.
fn bad_patch_type(directive: &Value, m: &Map<String, Value>) -> SmpError {
    SmpError::Other(format!(
        "unknown patch type: {} in map: {}",
        fmt_s(directive),
        fmt_v(&Value::Object(m.clone()))
    ))
}

/// `extractKey`: the field a `$deleteFromPrimitiveList/<field>` or `$setElementOrder/<field>`
/// key names.
fn extract_key(s: &str, prefix: &str) -> Result<String, SmpError> {
    match s.split_once('/') {
        Some((head, field)) if head == prefix => Ok(field.to_owned()),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST_PREFIX => {
            Err(SmpError::BadRequest(SmpError::BAD_PRIMITIVE_LIST))
        }
        _ => Err(SmpError::BadRequest(SmpError::BAD_SET_ELEMENT_ORDER)),
    }
}

/// `applyRetainKeysDirective`: `$retainKeys` clears the original's fields it does not list; the
/// patch may not set a field it does not list.
fn apply_retain_keys_directive(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), SmpError> {
    let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(SmpError::BadRequest(SmpError::BAD_RETAIN_KEYS));
    };
    let listed = |k: &str| retain.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || k.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !listed(k) {
            return Err(SmpError::BadRequest(SmpError::BAD_RETAIN_KEYS));
        }
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// `mergePatchIntoOriginal`: merges each list that has a `$setElementOrder/<field>` directive,
/// then orders it: the directive's order, then the patch's, then the live list's.
fn merge_patch_into_original(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: PatchSchema<'_>,
) -> Result<(), SmpError> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(bad_arg_type(SLICE_TYPE, Some(&order)));
        };
        let original_key = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)?;
        let list_at = |m: &Map<String, Value>| match m.get(&original_key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items.clone())),
            Some(other) => Err(bad_arg_type(SLICE_TYPE, Some(other))),
        };
        let original_list = list_at(original)?;
        let patch_list = list_at(patch)?;
        let (sub, meta) = schema.list_field(&original_key)?;
        let strategy = meta.strategy()?;
        validate_patch_with_set_order_list(
            patch_list.as_deref().unwrap_or_default(),
            &order,
            &meta.merge_key,
        )?;
        let merged = match (&original_list, &patch_list) {
            (Some(o), None) => o.clone(),
            (None, Some(p)) => match remove_directives(Value::Array(p.clone())) {
                Some(Value::Array(items)) => items,
                _ => continue,
            },
            (Some(o), Some(p)) => {
                merge_slice_handler(o.clone(), p.clone(), sub, strategy, &meta.merge_key, false)?
            }
            (None, None) => continue,
        };
        let (patch_items, server_only) =
            partition_by_present_in_list(merged, &order, &meta.merge_key)?;
        let original_list = original_list.unwrap_or_default();
        let patch_list = patch_list.unwrap_or_default();
        let is_map = slice_element_type(&[&original_list, &patch_list])? == MAP_TYPE;
        let server_order = if is_map && strategy == MERGE_DIRECTIVE {
            live_list_after_merge(&original_list, &patch_list, &meta.merge_key)
        } else {
            original_list
        };
        let both = normalize_element_order(
            patch_items,
            server_only,
            &order,
            &server_order,
            &meta.merge_key,
            is_map,
        )?;
        original.insert(original_key.clone(), Value::Array(both));
        patch.remove(&original_key);
    }
    Ok(())
}

/// The live list as `mergePatchIntoOriginal` sees it after `mergeSlice` merged the patch into
/// it: upstream removes `$patch: delete` items by shifting the list's backing array in place
/// and appends new items into the slots that frees (the converter's slices have no spare
/// capacity), and its variable still spans the original length. The order of this view decides
/// where server-only items land, and upstream's results (e.g. "add map and delete map from
/// merging list") depend on it, so it is reproduced here.
fn live_list_after_merge(original: &[Value], patch: &[Value], merge_key: &str) -> Vec<Value> {
    let key_of = |v: &Value| v.get(merge_key).cloned();
    let mut backing = original.to_vec();
    let mut len = backing.len();
    let mut replace = false;
    for item in patch {
        match item.get(DIRECTIVE_MARKER).map(Value::as_str) {
            Some(Some(DELETE_DIRECTIVE)) => {
                let value = key_of(item);
                while let Some(idx) = backing[..len].iter().position(|v| key_of(v) == value) {
                    for i in idx..len - 1 {
                        backing[i] = backing[i + 1].clone();
                    }
                    len -= 1;
                }
            }
            Some(_) => replace = true,
            None => {}
        }
    }
    if !replace {
        for item in patch.iter().filter(|i| !contains_directive_marker(i)) {
            let value = key_of(item);
            if backing[..len].iter().any(|v| key_of(v) == value) {
                continue;
            }
            if len < backing.len() {
                backing[len] = item.clone();
            } else {
                backing.push(item.clone());
            }
            len += 1;
        }
    }
    backing.truncate(original.len());
    backing
}

/// `validatePatchWithSetOrderList`: the patch list's items (deletions aside) appear in the
/// `$setElementOrder` list, in the same relative order.
fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    set_order: &[Value],
    merge_key: &str,
) -> Result<(), SmpError> {
    if set_order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        extract_to_delete_items(patch_list.to_vec())?.0
    };
    let (mut pi, mut si) = (0, 0);
    while pi < non_delete.len() && si < set_order.len() {
        if contains_directive_marker(&non_delete[pi]) {
            pi += 1;
            continue;
        }
        if merge_key_value_equal(&non_delete[pi], &set_order[si], merge_key)? {
            pi += 1;
        }
        si += 1;
    }
    if pi < non_delete.len() && si >= set_order.len() {
        return Err(SmpError::Other(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER_PREFIX} list:\n{}\n",
            fmt_v(&Value::Array(patch_list.to_vec())),
            fmt_v(&Value::Array(set_order.to_vec()))
        )));
    }
    Ok(())
}

fn contains_directive_marker(item: &Value) -> bool {
    item.get(DIRECTIVE_MARKER).is_some()
}

/// `mergeKeyValueEqual`.
fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, SmpError> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let (left, right) = (as_map(left)?, as_map(right)?);
    let l = left
        .get(merge_key)
        .ok_or_else(|| no_merge_key(left, merge_key))?;
    let r = right
        .get(merge_key)
        .ok_or_else(|| no_merge_key(right, merge_key))?;
    Ok(l == r)
}

/// `extractToDeleteItems`: the items to keep, and those marked `$patch: delete`.
fn extract_to_delete_items(list: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>), SmpError> {
    let mut keep = Vec::new();
    let mut delete = Vec::new();
    for v in list {
        let marked =
            as_map(&v)?.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE);
        if marked {
            delete.push(v);
        } else {
            keep.push(v);
        }
    }
    Ok((keep, delete))
}

/// `mergeSliceHandler`: lists with the `merge` strategy (and deletion lists) merge; any other
/// list is replaced by the patch's.
fn merge_slice_handler(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: PatchSchema<'_>,
    strategy: &str,
    merge_key: &str,
    is_delete_list: bool,
) -> Result<Vec<Value>, SmpError> {
    if strategy == MERGE_DIRECTIVE || is_delete_list {
        merge_slice(original, patch, schema, merge_key, is_delete_list)
    } else {
        Ok(patch)
    }
}

/// `mergeSlice`: scalars are unioned (or, for a deletion list, removed); objects merge by their
/// merge key, honouring `$patch: delete|replace` items.
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: PatchSchema<'_>,
    merge_key: &str,
    is_delete_list: bool,
) -> Result<Vec<Value>, SmpError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let is_map = slice_element_type(&[&original, &patch])? == MAP_TYPE;
    let (original, patch, merged) = if !is_map {
        if is_delete_list {
            return Ok(delete_from_slice(original, &patch));
        }
        let both = original.iter().chain(&patch).cloned().collect();
        (original, patch, deduplicate_scalars(both))
    } else {
        if merge_key.is_empty() {
            return Err(SmpError::Other(format!(
                "cannot merge lists without merge key for {}",
                schema.kind()
            )));
        }
        let (original, patch) = merge_slice_with_special_elements(original, patch, merge_key)?;
        let merged = merge_slice_without_special_elements(
            original.clone(),
            patch.clone(),
            merge_key,
            schema,
        )?;
        (original, patch, merged)
    };
    let (patch_items, server_only) = partition_by_present_in_list(merged, &patch, merge_key)?;
    normalize_element_order(
        patch_items,
        server_only,
        &patch,
        &original,
        merge_key,
        is_map,
    )
}

/// `mergeSliceWithSpecialElements`: applies `$patch: delete` items to the original; a
/// `$patch: replace` item makes the patch's other items the whole list.
fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), SmpError> {
    let mut plain = Vec::new();
    let mut replace = false;
    for v in patch {
        let item = as_map(&v)?;
        let Some(directive) = item.get(DIRECTIVE_MARKER) else {
            plain.push(v);
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => {
                let value = item
                    .get(merge_key)
                    .ok_or_else(|| no_merge_key(item, merge_key))?;
                while let Some(idx) =
                    find_map_in_slice_based_on_key_value(&original, merge_key, value)?
                {
                    original.remove(idx);
                }
            }
            Some(REPLACE_DIRECTIVE) => replace = true,
            Some(MERGE_DIRECTIVE) => {
                return Err(SmpError::Other(
                    "merging lists cannot yet be specified in the patch".into(),
                ));
            }
            _ => return Err(bad_patch_type(directive, item)),
        }
    }
    Ok(if replace {
        (plain, Vec::new())
    } else {
        (original, plain)
    })
}

/// `mergeSliceWithoutSpecialElements`: each patch item merges into the original item with the
/// same merge key, or is appended.
fn merge_slice_without_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    schema: PatchSchema<'_>,
) -> Result<Vec<Value>, SmpError> {
    for v in patch {
        let Value::Object(item) = v else {
            return Err(bad_arg_type(MAP_TYPE, Some(&v)));
        };
        let value = item
            .get(merge_key)
            .ok_or_else(|| no_merge_key(&item, merge_key))?;
        match find_map_in_slice_based_on_key_value(&original, merge_key, value)? {
            Some(idx) => {
                let found = original[idx].as_object().cloned().unwrap_or_default();
                original[idx] = Value::Object(merge_map(found, item, schema)?);
            }
            None => original.push(Value::Object(item)),
        }
    }
    Ok(original)
}

/// `findMapInSliceBasedOnKeyValue`: the index of the first item whose `key` equals `value`.
fn find_map_in_slice_based_on_key_value(
    list: &[Value],
    key: &str,
    value: &Value,
) -> Result<Option<usize>, SmpError> {
    for (i, v) in list.iter().enumerate() {
        let Value::Object(item) = v else {
            return Err(SmpError::Other(format!("value for key {i} is not a map")));
        };
        if item.get(key) == Some(value) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// `deleteFromSlice`: `current` without the values in `to_delete`.
fn delete_from_slice(current: Vec<Value>, to_delete: &[Value]) -> Vec<Value> {
    current
        .into_iter()
        .filter(|v| !to_delete.contains(v))
        .collect()
}

/// `deduplicateScalars`, with its order: a duplicate is replaced by the last item.
fn deduplicate_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i + 1 < s.len() {
        let mut j = i + 1;
        while j < s.len() {
            if s[i] == s[j] {
                s.swap_remove(j);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    s
}

/// `sliceElementType`: the one Go type of the lists' items.
fn slice_element_type(slices: &[&[Value]]) -> Result<&'static str, SmpError> {
    let mut prev: Option<&'static str> = None;
    for v in slices.iter().flat_map(|s| s.iter()) {
        let t = type_of(Some(v));
        match prev {
            None if t == SLICE_TYPE => return Err(SmpError::Invalid(SmpError::NO_LIST_OF_LISTS)),
            None => prev = Some(t),
            Some(p) if p != t => {
                let all: Vec<Value> = slices.iter().map(|s| Value::Array(s.to_vec())).collect();
                return Err(SmpError::Other(format!(
                    "list element types are not identical: {}",
                    fmt_v(&Value::Array(all))
                )));
            }
            Some(_) => {}
        }
    }
    prev.ok_or_else(|| SmpError::Other("no elements in any of the given slices".into()))
}

/// `partitionPrimitivesByPresentInList` / `partitionMapsByPresentInList`: the items present in
/// `by` (compared by merge key for objects), and the others.
fn partition_by_present_in_list(
    items: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), SmpError> {
    let mut present = Vec::new();
    let mut absent = Vec::new();
    for v in items {
        let found = if merge_key.is_empty() {
            by.contains(&v)
        } else {
            let item = as_map(&v)?;
            let value = item
                .get(merge_key)
                .ok_or_else(|| no_merge_key(item, merge_key))?;
            find_map_in_slice_based_on_key_value(by, merge_key, value)?.is_some()
        };
        if found {
            present.push(v);
        } else {
            absent.push(v);
        }
    }
    Ok((present, absent))
}

/// `normalizeElementOrder`: the patch's items in `patch_order`, the server-only items in
/// `server_order`, then interleaved by `mergeSortedSlice`.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>, SmpError> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, is_map)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, is_map)?;
    Ok(merge_sorted_slice(
        server_only,
        patch,
        server_order,
        merge_key,
        is_map,
    ))
}

/// `normalizeSliceOrder`: `to_sort` stably sorted by position in `order`; objects must carry
/// the merge key, and `$patch: delete` items go last.
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>, SmpError> {
    let (mut to_sort, to_delete) = if is_map {
        for item in to_sort.iter().chain(order) {
            let m = as_map(item)?;
            if !m.contains_key(merge_key) {
                return Err(no_merge_key(m, merge_key));
            }
        }
        extract_to_delete_items(to_sort)?
    } else {
        (to_sort, Vec::new())
    };
    to_sort.sort_by_key(|v| index(order, v, merge_key, is_map).unwrap_or(usize::MAX));
    to_sort.extend(to_delete);
    Ok(to_sort)
}

/// `mergeSortedSlice`: inserts each of `left` (server-only items) into `right` (the patch's)
/// before the first item it precedes in `server_order`, keeping both lists' own orders.
fn merge_sorted_slice(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Vec<Value> {
    let pos = |v: &Value| index(server_order, v, merge_key, is_map);
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
            (Some(l), Some(r)) => matches!((pos(l), pos(r)), (Some(li), Some(ri)) if li < ri),
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}

/// `index`: the position of `v` in `list`, objects compared by merge key (a missing key is a
/// nil that equals another missing key, as in Go).
fn index(list: &[Value], v: &Value, merge_key: &str, is_map: bool) -> Option<usize> {
    let key_of = |item: &Value| -> Option<Value> {
        if is_map {
            item.get(merge_key).cloned()
        } else {
            Some(item.clone())
        }
    };
    let wanted = key_of(v);
    list.iter().position(|item| key_of(item) == wanted)
}

/// `removeDirectives`: drops maps carrying `$patch` (and so list items and fields holding one);
/// `None` when `v` itself is one.
pub(super) fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.contains_key(DIRECTIVE_MARKER) {
                return None;
            }
            Some(Value::Object(
                m.into_iter()
                    .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                    .collect(),
            ))
        }
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

/// `discardNullValuesFromPatch`: removes null fields anywhere inside.
fn discard_null_values_from_patch(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(discard_null_values_from_patch);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_null_values_from_patch),
        _ => {}
    }
}
