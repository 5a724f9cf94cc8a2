//! events.k8s.io/v1 validation and the events.k8s.io/v1 <-> core/v1 Event mapping, as
//! kube-apiserver does them (both APIs serve one store of internal `core.Event`s).
//!
//! Validation is kubernetes `pkg/apis/core/validation/events.go`: `ValidateEventCreate` and
//! `ValidateEventUpdate` with the strict rules that apply to requests through events.k8s.io/v1,
//! on top of `legacyValidateEvent`. They run on the *internal* event, so error fields use the
//! internal (core) names: `note` is reported as `message`, `regarding` as `involvedObject`,
//! `deprecatedCount` as `count`, `deprecatedSource` as `source` — as the real server reports
//! them. `ValidateObjectMeta`/`ValidateObjectMetaUpdate` (name, namespace, labels…) are generic
//! object-meta rules the server applies to every kind and are not repeated here.
//!
//! The mapping is kubernetes `pkg/apis/events/v1/conversion.go` (`Convert_v1_Event_To_core_Event`
//! and back): `regarding` <-> `involvedObject`, `note` <-> `message`, `reportingController` <->
//! `reportingComponent`, `deprecatedSource` <-> `source`, `deprecatedCount` <-> `count`,
//! `deprecatedFirstTimestamp`/`deprecatedLastTimestamp` <-> `firstTimestamp`/`lastTimestamp`;
//! `type`, `reason`, `action`, `related`, `eventTime`, `series`, `reportingInstance` and
//! `metadata` carry over unchanged. The conversion does NOT derive `count` or `source` from
//! `series`/`reportingController`; `kubectl describe` reads `series` and `reportingController`
//! itself. Output objects have the keys Go's encoder writes (zero timestamps as `null`, an
//! empty `source: {}`, `reportingComponent: ""`), so they read exactly like the real server's.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::{Strategy, Upkeep};
use crate::go::fmt::go_quote;
use crate::resources::ResourceInfo;
use crate::status::{ApiError, Cause};
use crate::table::column::{Column, age_since};
use crate::validation::names::{NameRule, is_dns1123_subdomain, is_qualified_name};
use crate::validation::{FieldError, builtins, gotypes};

/// `ReportingInstanceLengthLimit` (bytes).
pub(crate) const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
/// `ActionLengthLimit` (bytes).
pub(crate) const ACTION_LENGTH_LIMIT: usize = 128;
/// `ReasonLengthLimit` (bytes).
pub(crate) const REASON_LENGTH_LIMIT: usize = 128;
/// `NoteLengthLimit` (bytes of `note`, reported as `message`).
pub(crate) const NOTE_LENGTH_LIMIT: usize = 1024;

// ---------------------------------------------------------------------------------------------
// Conversion
// ---------------------------------------------------------------------------------------------

fn str_field<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An `ObjectReference`/`EventSource` as Go writes it: every field omitempty.
fn omit_empty(v: Option<&Value>) -> Value {
    let mut out = Map::new();
    if let Some(Value::Object(map)) = v {
        for (k, v) in map {
            let empty = match v {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                _ => false,
            };
            if !empty {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

fn non_empty_str(out: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(Value::String(s)) = v
        && !s.is_empty()
    {
        out.insert(key.to_owned(), Value::String(s.clone()));
    }
}

fn present(out: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(v) = v
        && !v.is_null()
    {
        out.insert(key.to_owned(), v.clone());
    }
}

fn time_or_null(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s))
            if !s.is_empty() && !is_zero_time(Some(&Value::String(s.clone()))) =>
        {
            Value::String(s.clone())
        }
        _ => Value::Null,
    }
}

fn count_field(out: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    match v {
        Some(Value::Null) | None => {}
        Some(count) => match count.as_i64() {
            Some(0) => {}
            Some(n) => {
                out.insert(key.to_owned(), json!(n));
            }
            // Not an integer: kept for the typed decoder to refuse (`cannot unmarshal string
            // into Go struct field Event.count of type int32`).
            None => {
                out.insert(key.to_owned(), count.clone());
            }
        },
    }
}

/// events.k8s.io/v1 Event -> core/v1 Event, as `Convert_v1_Event_To_core_Event` then the core/v1
/// encoder (see the module docs for the field mapping).
pub(crate) fn to_core_v1(event: &Value) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!("v1"));
    out.insert("kind".into(), json!("Event"));
    out.insert(
        "metadata".into(),
        event.get("metadata").cloned().unwrap_or_else(|| json!({})),
    );
    out.insert("involvedObject".into(), omit_empty(event.get("regarding")));
    non_empty_str(&mut out, "reason", event.get("reason"));
    non_empty_str(&mut out, "message", event.get("note"));
    out.insert("source".into(), omit_empty(event.get("deprecatedSource")));
    out.insert(
        "firstTimestamp".into(),
        time_or_null(event.get("deprecatedFirstTimestamp")),
    );
    out.insert(
        "lastTimestamp".into(),
        time_or_null(event.get("deprecatedLastTimestamp")),
    );
    count_field(&mut out, "count", event.get("deprecatedCount"));
    non_empty_str(&mut out, "type", event.get("type"));
    out.insert("eventTime".into(), time_or_null(event.get("eventTime")));
    present(&mut out, "series", event.get("series"));
    non_empty_str(&mut out, "action", event.get("action"));
    if let Some(r) = event.get("related").filter(|r| !r.is_null()) {
        out.insert("related".into(), omit_empty(Some(r)));
    }
    out.insert(
        "reportingComponent".into(),
        json!(str_field(event, "reportingController")),
    );
    out.insert(
        "reportingInstance".into(),
        json!(str_field(event, "reportingInstance")),
    );
    Value::Object(out)
}

/// core/v1 Event -> events.k8s.io/v1 Event, as `Convert_core_Event_To_v1_Event` then the
/// events.k8s.io/v1 encoder.
pub(crate) fn from_core_v1(event: &Value) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), json!("events.k8s.io/v1"));
    out.insert("kind".into(), json!("Event"));
    out.insert(
        "metadata".into(),
        event.get("metadata").cloned().unwrap_or_else(|| json!({})),
    );
    out.insert("eventTime".into(), time_or_null(event.get("eventTime")));
    present(&mut out, "series", event.get("series"));
    non_empty_str(
        &mut out,
        "reportingController",
        event.get("reportingComponent"),
    );
    non_empty_str(
        &mut out,
        "reportingInstance",
        event.get("reportingInstance"),
    );
    non_empty_str(&mut out, "action", event.get("action"));
    non_empty_str(&mut out, "reason", event.get("reason"));
    out.insert("regarding".into(), omit_empty(event.get("involvedObject")));
    if let Some(r) = event.get("related").filter(|r| !r.is_null()) {
        out.insert("related".into(), omit_empty(Some(r)));
    }
    non_empty_str(&mut out, "note", event.get("message"));
    non_empty_str(&mut out, "type", event.get("type"));
    out.insert("deprecatedSource".into(), omit_empty(event.get("source")));
    out.insert(
        "deprecatedFirstTimestamp".into(),
        time_or_null(event.get("firstTimestamp")),
    );
    out.insert(
        "deprecatedLastTimestamp".into(),
        time_or_null(event.get("lastTimestamp")),
    );
    count_field(&mut out, "deprecatedCount", event.get("count"));
    Value::Object(out)
}

// ---------------------------------------------------------------------------------------------
// Field selectors
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

fn parse_time(v: Option<&Value>) -> Option<jiff::Timestamp> {
    v.and_then(Value::as_str)
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
}

/// Go's `t.Time == time.Time{}`: absent, `null`, or `0001-01-01T00:00:00Z`.
fn is_zero_time(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) if s.is_empty() => true,
        other => parse_time(other)
            .is_some_and(|t| t.as_second() == -62135596800 && t.subsec_nanosecond() == 0),
    }
}

fn ns(event: &Value) -> &str {
    event
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `legacyValidateEvent`, on a core/v1-shaped event. `controller_field` names the reporting
/// controller in errors: `reportingComponent` for requests through core/v1,
/// `reportingController` otherwise (kubernetes#111506).
fn legacy_validate(core: &Value, controller_field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let namespace = ns(core);
    let involved_ns = core
        .pointer("/involvedObject/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mismatch = |errs: &mut Vec<FieldError>| {
        errs.push(FieldError::invalid(
            "involvedObject.namespace",
            involved_ns,
            "does not match event.namespace",
        ));
    };
    if is_zero_time(core.get("eventTime")) {
        if involved_ns.is_empty() {
            if !namespace.is_empty() && namespace != "default" {
                mismatch(&mut errs);
            }
        } else if namespace != involved_ns {
            mismatch(&mut errs);
        }
    } else {
        if involved_ns.is_empty() && namespace != "default" && namespace != "kube-system" {
            mismatch(&mut errs);
        }
        let controller = str_field(core, "reportingComponent");
        if controller.is_empty() {
            errs.push(FieldError::required(controller_field));
        }
        // ValidateQualifiedName
        for msg in is_qualified_name(controller) {
            errs.push(FieldError::invalid(controller_field, controller, &msg));
        }
        let limited =
            |errs: &mut Vec<FieldError>, field: &str, value: &str, limit: usize, required: bool| {
                if required && value.is_empty() {
                    errs.push(FieldError::required(field));
                }
                if value.len() > limit {
                    errs.push(FieldError::invalid(
                        field,
                        "",
                        &format!("can have at most {limit} characters"),
                    ));
                }
            };
        limited(
            &mut errs,
            "reportingInstance",
            str_field(core, "reportingInstance"),
            REPORTING_INSTANCE_LENGTH_LIMIT,
            true,
        );
        limited(
            &mut errs,
            "action",
            str_field(core, "action"),
            ACTION_LENGTH_LIMIT,
            true,
        );
        limited(
            &mut errs,
            "reason",
            str_field(core, "reason"),
            REASON_LENGTH_LIMIT,
            true,
        );
        limited(
            &mut errs,
            "message",
            str_field(core, "message"),
            NOTE_LENGTH_LIMIT,
            false,
        );
    }
    for msg in is_dns1123_subdomain(namespace) {
        errs.push(FieldError::invalid("namespace", namespace, &msg));
    }
    errs
}

/// `validateV1EventSeries`.
fn validate_series(core: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(series) = core.get("series").filter(|s| !s.is_null()) {
        if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
            errs.push(FieldError::invalid(
                "series.count",
                "",
                "should be at least 2",
            ));
        }
        if is_zero_time(series.get("lastObservedTime")) {
            errs.push(FieldError::required("series.lastObservedTime"));
        }
    }
    errs
}

fn result(errs: Vec<FieldError>) -> Result<(), Vec<FieldError>> {
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

/// `ValidateEventCreate` for a request through events.k8s.io/v1; `event` is events.k8s.io/v1
/// shaped. Errors come in Go's order.
pub(crate) fn validate_event_create(event: &Value) -> Result<(), Vec<FieldError>> {
    let core = to_core_v1(event);
    let mut errs = legacy_validate(&core, "reportingController");
    errs.extend(validate_series(&core));
    if is_zero_time(core.get("eventTime")) {
        errs.push(FieldError::required("eventTime"));
    }
    let ty = str_field(&core, "type");
    if ty != "Normal" && ty != "Warning" {
        errs.push(FieldError::invalid(
            "type",
            "",
            &format!("has invalid value: {ty}"),
        ));
    }
    for field in ["firstTimestamp", "lastTimestamp"] {
        if !is_zero_time(core.get(field)) {
            errs.push(FieldError::invalid(field, "", "needs to be unset"));
        }
    }
    if core.get("count").and_then(Value::as_i64).unwrap_or(0) != 0 {
        errs.push(FieldError::invalid("count", "", "needs to be unset"));
    }
    if !str_field(&core["source"], "component").is_empty()
        || !str_field(&core["source"], "host").is_empty()
    {
        errs.push(FieldError::invalid("source", "", "needs to be unset"));
    }
    result(errs)
}

/// Legacy validation only, as `ValidateEventCreate`/`ValidateEventUpdate` apply to requests
/// through core/v1 (`event` is core/v1 shaped; the reporting controller is reported as
/// `reportingComponent`, its core/v1 name).
pub(crate) fn validate_core_v1_event(event: &Value) -> Result<(), Vec<FieldError>> {
    result(legacy_validate(event, "reportingComponent"))
}

/// How a field is compared and rendered in "field is immutable" errors.
#[derive(Clone, Copy)]
enum Kind {
    Str,
    Int,
    Time { micro: bool },
    ObjectRef { pointer: bool },
    Source,
}

/// The canonical value of a field for comparison (Go compares the decoded structs).
fn canonical(kind: Kind, v: Option<&Value>) -> Value {
    match kind {
        Kind::Str => json!(v.and_then(Value::as_str).unwrap_or("")),
        Kind::Int => json!(v.and_then(Value::as_i64).unwrap_or(0)),
        Kind::Time { micro } => {
            if is_zero_time(v) {
                return Value::Null;
            }
            match parse_time(v) {
                Some(t) => {
                    let nanos = t.subsec_nanosecond();
                    let kept = if micro { nanos / 1000 * 1000 } else { 0 };
                    json!([t.as_second(), kept])
                }
                None => v.cloned().unwrap_or(Value::Null),
            }
        }
        Kind::ObjectRef { pointer: true } if v.is_none_or(Value::is_null) => Value::Null,
        Kind::ObjectRef { .. } | Kind::Source => omit_empty(v),
    }
}

/// Go's `time.Time.String()` in UTC: `2006-01-02 15:04:05.999999999 +0000 UTC`.
fn go_time_string(v: Option<&Value>) -> String {
    let t = if is_zero_time(v) { None } else { parse_time(v) };
    let Some(t) = t else {
        return "0001-01-01 00:00:00 +0000 UTC".to_owned();
    };
    let mut s = t.strftime("%Y-%m-%d %H:%M:%S").to_string();
    let nanos = t.subsec_nanosecond();
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s.push_str(" +0000 UTC");
    s
}

/// The new value as `field.Error.ErrorBody` renders it (`%q`, `%v`, `String()` or `%#v`).
fn render(kind: Kind, v: Option<&Value>) -> String {
    match kind {
        Kind::Str => go_quote(v.and_then(Value::as_str).unwrap_or("")),
        Kind::Int => v.and_then(Value::as_i64).unwrap_or(0).to_string(),
        Kind::Time { .. } => go_time_string(v),
        Kind::ObjectRef { pointer: true } if v.is_none_or(Value::is_null) => "null".to_owned(),
        Kind::ObjectRef { .. } => {
            let r = v.cloned().unwrap_or(Value::Null);
            let f = |k: &str| go_quote(str_field(&r, k));
            format!(
                "core.ObjectReference{{Kind:{}, Namespace:{}, Name:{}, UID:{}, APIVersion:{}, ResourceVersion:{}, FieldPath:{}}}",
                f("kind"),
                f("namespace"),
                f("name"),
                f("uid"),
                f("apiVersion"),
                f("resourceVersion"),
                f("fieldPath")
            )
        }
        Kind::Source => {
            let s = v.cloned().unwrap_or(Value::Null);
            format!(
                "core.EventSource{{Component:{}, Host:{}}}",
                go_quote(str_field(&s, "component")),
                go_quote(str_field(&s, "host"))
            )
        }
    }
}

/// `ValidateEventUpdate` for a request through events.k8s.io/v1; both events are
/// events.k8s.io/v1 shaped. Every field but `series` (and metadata, which the server's generic
/// object-meta rules cover) is immutable; a changed series is validated again.
pub(crate) fn validate_event_update(new: &Value, old: &Value) -> Result<(), Vec<FieldError>> {
    let new = to_core_v1(new);
    let old = to_core_v1(old);
    let mut errs = legacy_validate(&new, "reportingController");
    if new.get("series") != old.get("series") {
        errs.extend(validate_series(&new));
    }
    // The order (and the doubled `reason`) of ValidateEventUpdate.
    let immutable: [(&str, Kind); 14] = [
        ("involvedObject", Kind::ObjectRef { pointer: false }),
        ("reason", Kind::Str),
        ("message", Kind::Str),
        ("source", Kind::Source),
        ("firstTimestamp", Kind::Time { micro: false }),
        ("lastTimestamp", Kind::Time { micro: false }),
        ("count", Kind::Int),
        ("reason", Kind::Str),
        ("type", Kind::Str),
        // compared at microsecond precision (kubernetes#111928)
        ("eventTime", Kind::Time { micro: true }),
        ("action", Kind::Str),
        ("related", Kind::ObjectRef { pointer: true }),
        ("reportingComponent", Kind::Str),
        ("reportingInstance", Kind::Str),
    ];
    for (field, kind) in immutable {
        let (a, b) = (new.get(field), old.get(field));
        if canonical(kind, a) != canonical(kind, b) {
            let name = if field == "reportingComponent" {
                "reportingController"
            } else {
                field
            };
            errs.push(FieldError::invalid_rendered(
                name,
                &render(kind, a),
                "field is immutable",
            ));
        }
    }
    result(errs)
}

/// The 422 of an Event that failed `errors`' checks.
fn invalid(info: &ResourceInfo, name: &str, errors: Vec<FieldError>) -> ApiError {
    let causes: Vec<Cause> = errors.into_iter().map(Cause::from).collect();
    ApiError::invalid(info.qualified_kind(), name, causes)
}

/// The field labels a core/v1 Event list accepts in `?fieldSelector=` (`EventToSelectableFields`
/// in kubernetes `pkg/registry/core/event/strategy.go`); `kubectl describe` lists an object's
/// events with `involvedObject.name`, `involvedObject.namespace`, `involvedObject.kind` and
/// `involvedObject.uid`.
pub(crate) const EVENT_FIELD_LABELS: [&str; 13] = [
    "metadata.name",
    "metadata.namespace",
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// The field labels an events.k8s.io/v1 Event list accepts beyond `metadata.name` and
/// `metadata.namespace` (`EventToSelectableFields` of the events.k8s.io registry's conversion).
const NATIVE_FIELD_LABELS: [&str; 10] = [
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "type",
];

/// The columns of `kubectl get events` (`pkg/printers/internalversion` `printEvent`), read from
/// the event as the API (`core`: core/v1) serves it.
fn columns(core: bool) -> Vec<Column> {
    vec![
        Column::new(
            "Last Seen",
            "string",
            0,
            Box::new(move |o, now| {
                let seen = if core {
                    o["series"]["lastObservedTime"]
                        .as_str()
                        .or(o["lastTimestamp"].as_str())
                        .or(o["eventTime"].as_str())
                } else {
                    o["series"]["lastObservedTime"]
                        .as_str()
                        .or(o["eventTime"].as_str())
                };
                age_since(seen, now)
            }),
        ),
        Column::new("Type", "string", 0, Box::new(|o, _| o["type"].clone())),
        Column::new("Reason", "string", 0, Box::new(|o, _| o["reason"].clone())),
        Column::new(
            "Object",
            "string",
            0,
            Box::new(move |o, _| {
                let r = if core {
                    &o["involvedObject"]
                } else {
                    &o["regarding"]
                };
                json!(format!(
                    "{}/{}",
                    r["kind"].as_str().unwrap_or_default().to_lowercase(),
                    r["name"].as_str().unwrap_or_default()
                ))
            }),
        ),
        Column::new(
            "Message",
            "string",
            0,
            Box::new(move |o, _| {
                if core {
                    o["message"].clone()
                } else {
                    o["note"].clone()
                }
            }),
        ),
        Column::new(
            "Name",
            "string",
            1,
            Box::new(|o, _| o["metadata"]["name"].clone()),
        ),
    ]
}

/// Events' [`Strategy`], through either API: they expire a TTL after their last write, and a
/// write through events.k8s.io/v1 meets that API's strict validation, one through core/v1 the
/// core validation of the event in its core/v1 form (it is stored in the events.k8s.io form).
pub(crate) enum Events {
    /// events.k8s.io/v1.
    Native,
    /// core/v1.
    Core,
}

impl Strategy for Events {
    /// Events are stored in the events.k8s.io/v1 form: through core/v1 they are mapped to that
    /// API; through events.k8s.io/v1, through the Go types and back (the keys its encoder
    /// writes: `deprecatedSource: {}`, null timestamps; unknown fields gone).
    fn to_served<'a>(&self, _info: &ResourceInfo, stored: &'a Value) -> Cow<'a, Value> {
        Cow::Owned(match self {
            Events::Native => from_core_v1(&to_core_v1(stored)),
            Events::Core => to_core_v1(stored),
        })
    }

    fn to_stored(&self, info: &ResourceInfo, served: Value) -> Value {
        match self {
            Events::Native => super::served_as(info, served),
            Events::Core => from_core_v1(&served),
        }
    }

    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        match self {
            Events::Native => Some(&gotypes::EVENT),
            Events::Core => None,
        }
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        match self {
            Events::Native => builtins::decode_native_event(obj),
            Events::Core => builtins::decode_core_event(obj),
        }
    }

    /// `ValidateEventCreate` checks names only for events.k8s.io/v1: through core/v1 only the
    /// generic store's `ValidatePathSegmentName` applies.
    fn name_rule(&self) -> NameRule {
        match self {
            Events::Native => NameRule::DnsSubdomain,
            Events::Core => NameRule::PathSegment,
        }
    }

    fn creates_on_update(&self) -> bool {
        true
    }

    fn validate_create(
        &self,
        info: &ResourceInfo,
        name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        match self {
            Events::Native => validate_event_create(obj),
            Events::Core => validate_core_v1_event(&to_core_v1(obj)),
        }
        .map_err(|e| invalid(info, name, e))?;
        Ok(Vec::new())
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        name: &str,
        new: &mut Value,
        old: &Value,
        _subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        match self {
            Events::Native => validate_event_update(new, old),
            Events::Core => validate_core_v1_event(&to_core_v1(new)),
        }
        .map_err(|e| invalid(info, name, e))
    }

    fn field_labels(&self) -> &'static [&'static str] {
        match self {
            Events::Native => &NATIVE_FIELD_LABELS,
            // Beyond metadata.name and metadata.namespace.
            Events::Core => &EVENT_FIELD_LABELS[2..],
        }
    }

    fn unsupported_field_label(&self, field: &str) -> Option<String> {
        super::core_field_label_error(field)
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        columns(matches!(self, Events::Core))
    }

    fn after_write(&self, _stored: &Value) -> Upkeep {
        Upkeep::Expires
    }

    fn after_delete(&self, _gone: &Value) -> Upkeep {
        Upkeep::Expires
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of the 422 Status kube-apiserver returns for `errs` (`errors.NewInvalid`):
    /// `Event.events.k8s.io "name" is invalid: [a: b, c: d]` (one error alone without brackets;
    /// identical texts once).
    ///
    /// `qualified_kind` is `Kind.group` (`Event.events.k8s.io`, or `Event` for core/v1).
    fn invalid_status_message(qualified_kind: &str, name: &str, errs: &[FieldError]) -> String {
        let mut seen: Vec<String> = Vec::new();
        for e in errs {
            let text = e.to_string();
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
        let name = go_quote(name);
        match seen.len() {
            0 => format!("{qualified_kind} {name} is invalid"),
            1 => format!("{qualified_kind} {name} is invalid: {}", seen[0]),
            _ => format!("{qualified_kind} {name} is invalid: [{}]", seen.join(", ")),
        }
    }

    /// The value of field label `label` (one of
    /// [`EVENT_FIELD_LABELS`]) for a core/v1-shaped event,
    /// as `EventToSelectableFields` computes it: absent strings are `""`, and `source` is
    /// `source.component`, or the reporting controller when that is empty. Unknown labels are
    /// `None`.
    fn event_field(core: &Value, label: &str) -> Option<String> {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
        Some(match label {
            "metadata.name" => s(core.pointer("/metadata/name")),
            "metadata.namespace" => s(core.pointer("/metadata/namespace")),
            "reason" | "type" | "reportingComponent" => s(core.get(label)),
            "source" => {
                let component = s(core.pointer("/source/component"));
                if component.is_empty() {
                    s(core.get("reportingComponent"))
                } else {
                    component
                }
            }
            _ => {
                let field = label.strip_prefix("involvedObject.")?;
                if !EVENT_FIELD_LABELS.contains(&label) {
                    return None;
                }
                s(core.get("involvedObject").and_then(|o| o.get(field)))
            }
        })
    }

    fn valid() -> Value {
        json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "web.17a", "namespace": "demo"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "demo.kubeward.dev/rollouts",
            "reportingInstance": "rollouts-0",
            "action": "Reconcile",
            "reason": "Applying",
            "note": "rolling out generation 4",
            "type": "Normal",
            "regarding": {"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "namespace": "demo", "name": "web", "uid": "u1"},
        })
    }

    fn texts(r: Result<(), Vec<FieldError>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    fn with(mut v: Value, path: &str, x: Value) -> Value {
        let mut cur = &mut v;
        let parts: Vec<&str> = path.split('.').collect();
        for p in &parts[..parts.len() - 1] {
            cur = cur
                .as_object_mut()
                .unwrap()
                .entry(p.to_string())
                .or_insert(json!({}));
        }
        let last = parts[parts.len() - 1];
        if x.is_null() {
            cur.as_object_mut().unwrap().remove(last);
        } else {
            cur[last] = x;
        }
        v
    }

    #[test]
    fn a_complete_event_is_valid() {
        assert_eq!(validate_event_create(&valid()), Ok(()));
        let with_series = with(
            valid(),
            "series",
            json!({"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}),
        );
        assert_eq!(validate_event_create(&with_series), Ok(()));
    }

    #[test]
    fn required_fields_are_reported_in_go_order() {
        let ev = json!({"metadata": {"name": "x", "namespace": "demo"}, "regarding": {"namespace": "demo"}, "eventTime": "2026-01-01T00:00:00Z"});
        let errs = validate_event_create(&ev).unwrap_err();
        let t: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(t[0], "reportingController: Required value");
        assert!(
            t[1].starts_with(
                "reportingController: Invalid value: \"\": name part must be non-empty"
            ),
            "{}",
            t[1]
        );
        assert_eq!(
            &t[3..],
            [
                "reportingInstance: Required value",
                "action: Required value",
                "reason: Required value",
                "type: Invalid value: \"\": has invalid value: ",
            ]
        );
        assert_eq!(
            errs[0].status_cause(),
            json!({"reason": "FieldValueRequired", "message": "Required value", "field": "reportingController"})
        );
    }

    #[test]
    fn missing_event_time_is_required_and_switches_to_legacy_rules() {
        let ev = with(valid(), "eventTime", Value::Null);
        assert_eq!(
            texts(validate_event_create(&ev)),
            ["eventTime: Required value"]
        );
        let zero = with(valid(), "eventTime", json!("0001-01-01T00:00:00Z"));
        assert_eq!(
            texts(validate_event_create(&zero)),
            ["eventTime: Required value"]
        );
        // legacy rule without eventTime: the namespaces must match
        let ev = with(ev, "regarding.namespace", json!("other"));
        assert_eq!(
            texts(validate_event_create(&ev)),
            [
                "involvedObject.namespace: Invalid value: \"other\": does not match event.namespace",
                "eventTime: Required value"
            ]
        );
    }

    #[test]
    fn byte_limits_count_bytes() {
        let ok = with(valid(), "note", json!("é".repeat(512))); // 1024 bytes
        assert_eq!(validate_event_create(&ok), Ok(()));
        let long = with(valid(), "note", json!("é".repeat(513)));
        assert_eq!(
            texts(validate_event_create(&long)),
            ["message: Invalid value: \"\": can have at most 1024 characters"]
        );
        for (field, reported) in [
            ("reason", "reason"),
            ("action", "action"),
            ("reportingInstance", "reportingInstance"),
        ] {
            let ev = with(valid(), field, json!("x".repeat(129)));
            assert_eq!(
                texts(validate_event_create(&ev)),
                [format!(
                    "{reported}: Invalid value: \"\": can have at most 128 characters"
                )]
            );
            let ev = with(valid(), field, json!("x".repeat(128)));
            assert_eq!(validate_event_create(&ev), Ok(()));
        }
    }

    #[test]
    fn reporting_controller_must_be_a_qualified_name() {
        let ev = with(valid(), "reportingController", json!("Demo Controller"));
        assert_eq!(
            texts(validate_event_create(&ev)),
            [
                "reportingController: Invalid value: \"Demo Controller\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
    }

    #[test]
    fn type_must_be_normal_or_warning() {
        let ev = with(valid(), "type", json!("Error"));
        assert_eq!(
            texts(validate_event_create(&ev)),
            ["type: Invalid value: \"\": has invalid value: Error"]
        );
        assert_eq!(
            validate_event_create(&with(valid(), "type", json!("Warning"))),
            Ok(())
        );
    }

    #[test]
    fn series_needs_count_two_and_last_observed_time() {
        let ev = with(valid(), "series", json!({"count": 1}));
        let errs = validate_event_create(&ev).unwrap_err();
        assert_eq!(
            errs.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            [
                "series.count: Invalid value: \"\": should be at least 2",
                "series.lastObservedTime: Required value"
            ]
        );
        assert_eq!(errs[1].reason, "FieldValueRequired");
    }

    #[test]
    fn deprecated_fields_must_be_unset_on_create() {
        let ev = with(valid(), "deprecatedCount", json!(2));
        let ev = with(
            ev,
            "deprecatedFirstTimestamp",
            json!("2026-01-01T00:00:00Z"),
        );
        let ev = with(ev, "deprecatedLastTimestamp", json!("2026-01-01T00:00:00Z"));
        let ev = with(ev, "deprecatedSource", json!({"component": "x"}));
        assert_eq!(
            texts(validate_event_create(&ev)),
            [
                "firstTimestamp: Invalid value: \"\": needs to be unset",
                "lastTimestamp: Invalid value: \"\": needs to be unset",
                "count: Invalid value: \"\": needs to be unset",
                "source: Invalid value: \"\": needs to be unset",
            ]
        );
    }

    #[test]
    fn cluster_scoped_regarding_only_in_default_or_kube_system() {
        let cluster = with(valid(), "regarding", json!({"kind": "Node", "name": "n1"}));
        assert_eq!(
            texts(validate_event_create(&cluster)),
            ["involvedObject.namespace: Invalid value: \"\": does not match event.namespace"]
        );
        for ns in ["default", "kube-system"] {
            let ev = with(cluster.clone(), "metadata.namespace", json!(ns));
            assert_eq!(validate_event_create(&ev), Ok(()), "{ns}");
        }
        // with eventTime set, a namespaced referent in another namespace is not checked (Go)
        let other = with(valid(), "regarding.namespace", json!("elsewhere"));
        assert_eq!(validate_event_create(&other), Ok(()));
    }

    #[test]
    fn update_allows_series_changes_only() {
        let old = with(
            valid(),
            "series",
            json!({"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}),
        );
        let new = with(
            old.clone(),
            "series",
            json!({"count": 3, "lastObservedTime": "2026-01-01T00:00:09.000000Z"}),
        );
        assert_eq!(validate_event_update(&new, &old), Ok(()));
        assert_eq!(validate_event_update(&new, &valid()), Ok(()));
        let bad = with(
            old.clone(),
            "series",
            json!({"count": 1, "lastObservedTime": "2026-01-01T00:00:09.000000Z"}),
        );
        assert_eq!(
            texts(validate_event_update(&bad, &old)),
            ["series.count: Invalid value: \"\": should be at least 2"]
        );
        // the same timestamp written with other precision is no change
        let same = with(valid(), "eventTime", json!("2026-01-01T00:00:00Z"));
        assert_eq!(validate_event_update(&same, &valid()), Ok(()));
    }

    #[test]
    fn update_reports_immutable_fields_with_go_rendering() {
        let new = with(valid(), "note", json!("changed"));
        let errs = validate_event_update(&new, &valid()).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "message: Invalid value: \"changed\": field is immutable"
        );
        assert_eq!(errs[0].reason, "FieldValueInvalid");

        let new = with(valid(), "reason", json!("Other"));
        // Go checks reason twice
        assert_eq!(
            texts(validate_event_update(&new, &valid())),
            [
                "reason: Invalid value: \"Other\": field is immutable",
                "reason: Invalid value: \"Other\": field is immutable"
            ]
        );
        let new = with(valid(), "eventTime", json!("2026-01-01T00:00:01.5Z"));
        assert_eq!(
            texts(validate_event_update(&new, &valid())),
            ["eventTime: Invalid value: 2026-01-01 00:00:01.5 +0000 UTC: field is immutable"]
        );
        let new = with(valid(), "regarding.name", json!("db"));
        assert_eq!(
            texts(validate_event_update(&new, &valid())),
            [
                "involvedObject: Invalid value: core.ObjectReference{Kind:\"Rollout\", Namespace:\"demo\", Name:\"db\", UID:\"u1\", APIVersion:\"demo.kubeward.dev/v1\", ResourceVersion:\"\", FieldPath:\"\"}: field is immutable"
            ]
        );
        let new = with(valid(), "reportingController", json!("other.dev/x"));
        assert_eq!(
            texts(validate_event_update(&new, &valid())),
            ["reportingController: Invalid value: \"other.dev/x\": field is immutable"]
        );
        let new = with(valid(), "deprecatedCount", json!(5));
        assert_eq!(
            texts(validate_event_update(&new, &valid())),
            ["count: Invalid value: 5: field is immutable"]
        );
    }

    #[test]
    fn invalid_status_message_aggregates_like_apimachinery() {
        let errs = validate_event_create(&with(valid(), "eventTime", Value::Null)).unwrap_err();
        assert_eq!(
            invalid_status_message("Event.events.k8s.io", "web.17a", &errs),
            "Event.events.k8s.io \"web.17a\" is invalid: eventTime: Required value"
        );
        let errs =
            validate_event_update(&with(valid(), "reason", json!("X")), &valid()).unwrap_err();
        assert_eq!(
            invalid_status_message("Event.events.k8s.io", "e", &errs),
            "Event.events.k8s.io \"e\" is invalid: reason: Invalid value: \"X\": field is immutable"
        );
        let errs =
            validate_event_create(&with(valid(), "series", json!({"count": 0}))).unwrap_err();
        assert_eq!(
            invalid_status_message("Event.events.k8s.io", "e", &errs),
            "Event.events.k8s.io \"e\" is invalid: [series.count: Invalid value: \"\": should be at least 2, series.lastObservedTime: Required value]"
        );
    }

    #[test]
    fn conversion_maps_fields_as_the_apiserver() {
        let ev = with(
            valid(),
            "series",
            json!({"count": 3, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}),
        );
        let ev = with(
            ev,
            "related",
            json!({"kind": "Pod", "name": "p", "namespace": ""}),
        );
        let core = to_core_v1(&ev);
        assert_eq!(
            core,
            json!({
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": "web.17a", "namespace": "demo"},
                "involvedObject": {"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "namespace": "demo", "name": "web", "uid": "u1"},
                "reason": "Applying",
                "message": "rolling out generation 4",
                "source": {},
                "firstTimestamp": null,
                "lastTimestamp": null,
                "type": "Normal",
                "eventTime": "2026-01-01T00:00:00.000000Z",
                "series": {"count": 3, "lastObservedTime": "2026-01-01T00:00:05.000000Z"},
                "action": "Reconcile",
                "related": {"kind": "Pod", "name": "p"},
                "reportingComponent": "demo.kubeward.dev/rollouts",
                "reportingInstance": "rollouts-0",
            })
        );
        // and back: the events.k8s.io view is what was written (plus Go's always-written keys)
        let back = from_core_v1(&core);
        let mut expected = ev.clone();
        expected["related"] = json!({"kind": "Pod", "name": "p"});
        expected["deprecatedSource"] = json!({});
        expected["deprecatedFirstTimestamp"] = Value::Null;
        expected["deprecatedLastTimestamp"] = Value::Null;
        assert_eq!(back, expected);
    }

    #[test]
    fn legacy_core_events_map_their_count_and_timestamps() {
        let core = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "p.1", "namespace": "demo"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "demo"},
            "reason": "Pulled", "message": "pulled image", "type": "Normal",
            "source": {"component": "kubelet", "host": "n1"},
            "count": 4, "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:01:00Z",
            "eventTime": null, "reportingComponent": "", "reportingInstance": "",
        });
        let ev = from_core_v1(&core);
        assert_eq!(ev["deprecatedCount"], 4);
        assert_eq!(ev["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");
        assert_eq!(ev["deprecatedLastTimestamp"], "2026-01-01T00:01:00Z");
        assert_eq!(
            ev["deprecatedSource"],
            json!({"component": "kubelet", "host": "n1"})
        );
        assert!(ev["eventTime"].is_null());
        assert!(ev.get("reportingController").is_none());
        assert_eq!(to_core_v1(&ev), core);
        assert_eq!(validate_core_v1_event(&core), Ok(()));
    }

    #[test]
    fn core_v1_requests_name_the_controller_reporting_component() {
        let core = json!({
            "metadata": {"name": "p.1", "namespace": "demo"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "demo"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "action": "A", "reason": "R", "reportingInstance": "i",
        });
        let t = texts(validate_core_v1_event(&core));
        assert_eq!(t[0], "reportingComponent: Required value");
        assert!(
            t[1].starts_with(
                "reportingComponent: Invalid value: \"\": name part must be non-empty"
            )
        );
    }

    #[test]
    fn event_fields_serve_kubectl_describe_selectors() {
        let core = to_core_v1(&valid());
        let sel = crate::selector::FieldSelector::parse(
            "involvedObject.name=web,involvedObject.namespace=demo,involvedObject.kind=Rollout,involvedObject.uid=u1",
        )
        .unwrap();
        assert!(sel.check_supported(&EVENT_FIELD_LABELS).is_ok());
        assert!(sel.matches(|f| event_field(&core, f)));
        assert_eq!(
            event_field(&core, "source").as_deref(),
            Some("demo.kubeward.dev/rollouts")
        );
        assert_eq!(
            event_field(&core, "reportingComponent").as_deref(),
            Some("demo.kubeward.dev/rollouts")
        );
        assert_eq!(
            event_field(&core, "involvedObject.fieldPath").as_deref(),
            Some("")
        );
        assert_eq!(event_field(&core, "involvedObject.bogus"), None);
        assert_eq!(event_field(&core, "note"), None);
    }

    #[test]
    fn core_v1_legacy_validation_checks_namespaces() {
        let core = json!({
            "metadata": {"name": "p.1", "namespace": "demo"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "other"},
        });
        assert_eq!(
            texts(validate_core_v1_event(&core)),
            ["involvedObject.namespace: Invalid value: \"other\": does not match event.namespace"]
        );
    }
}

/// The usage examples of this module's items (the module is private to the crate).
#[cfg(test)]
mod examples {
    #[test]
    fn to_core_v1() {
        use crate::kinds::events::to_core_v1;
        let ev = serde_json::json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "demo"},
            "regarding": {"kind": "Rollout", "name": "web", "namespace": "demo"},
            "note": "rolling out", "reportingController": "demo.kubeward.dev/rollouts",
            "series": {"count": 3, "lastObservedTime": "2026-01-01T00:00:05.000000Z"},
        });
        let core = to_core_v1(&ev);
        assert_eq!(core["involvedObject"]["name"], "web");
        assert_eq!(core["message"], "rolling out");
        assert_eq!(core["reportingComponent"], "demo.kubeward.dev/rollouts");
        assert_eq!(core["series"]["count"], 3);
        assert!(core["firstTimestamp"].is_null());
    }

    #[test]
    fn from_core_v1() {
        use crate::kinds::events::from_core_v1;
        let core = serde_json::json!({
            "metadata": {"name": "web.1", "namespace": "demo"},
            "involvedObject": {"kind": "Pod", "name": "web"}, "message": "pulled",
            "count": 4, "firstTimestamp": "2026-01-01T00:00:00Z", "source": {"component": "kubelet"},
        });
        let ev = from_core_v1(&core);
        assert_eq!(ev["regarding"]["kind"], "Pod");
        assert_eq!(ev["note"], "pulled");
        assert_eq!(ev["deprecatedCount"], 4);
        assert_eq!(ev["deprecatedSource"]["component"], "kubelet");
    }

    #[test]
    fn validate_event_create() {
        use crate::kinds::events::validate_event_create;
        let errs = validate_event_create(&serde_json::json!({
            "metadata": {"name": "x", "namespace": "demo"},
            "regarding": {"namespace": "demo"},
            "type": "Normal",
        }))
        .unwrap_err();
        let texts: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(texts, ["eventTime: Required value"]);
    }
}
