//! Events, and a Deployment's replicas and conditions, as `kubectl describe` shows them.
//!
//! Mirrors kubectl's `DescribeEvents` (`k8s.io/kubectl/pkg/describe`): sorted by when they were
//! last seen (`series.lastObservedTime`, else `deprecatedLastTimestamp`, else `eventTime`), in
//! tab-aligned columns `Type`, `Reason`, `Age`, `From`, `Message`, where a series shows as
//! `<last seen> (x<count> over <first seen>)`, `From` is the legacy source component or else
//! the `reportingController`, and ages use apimachinery's `HumanDuration`.

use std::fmt::Write as _;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;

/// The `Events:` section of `kubectl describe` for `events`, as of `now`.
///
/// ```
/// # use kubeward_examples::rollouts::describe::describe_events;
/// assert_eq!(describe_events(&[], jiff::Timestamp::UNIX_EPOCH), "Events:  <none>\n");
/// ```
pub fn describe_events(events: &[Event], now: Timestamp) -> String {
    if events.is_empty() {
        return "Events:  <none>\n".to_owned();
    }
    let mut sorted: Vec<&Event> = events.iter().collect();
    sorted.sort_by_key(|e| last_seen(e));
    let mut rows: Vec<[String; 5]> = vec![
        [
            "  Type".into(),
            "Reason".into(),
            "Age".into(),
            "From".into(),
            "Message".into(),
        ],
        [
            "  ----".into(),
            "------".into(),
            "----".into(),
            "----".into(),
            "-------".into(),
        ],
    ];
    for event in sorted {
        rows.push([
            format!("  {}", event.type_.as_deref().unwrap_or_default()),
            event.reason.clone().unwrap_or_default(),
            age(event, now),
            source(event),
            event.note.as_deref().unwrap_or_default().trim().to_owned(),
        ]);
    }
    // Go's tabwriter with minwidth 0, padding 2: every cell but the last is padded to its
    // column's widest cell plus two spaces.
    let mut widths = [0usize; 4];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row.iter()) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::from("Events:\n");
    for row in &rows {
        for (width, cell) in widths.iter().zip(row.iter()) {
            let _ = write!(out, "{cell:<w$}", w = width + 2);
        }
        let _ = writeln!(out, "{}", row[4]);
    }
    out
}

/// The `Replicas:` line and the `Conditions:` table of `kubectl describe deployment`
/// (`describeDeployment` in `k8s.io/kubectl/pkg/describe/describe.go`): `<n> desired | <n>
/// updated | <n> total | <n> available | <n> unavailable`, then each condition's type, status and
/// reason in the order stored, tab-aligned as kubectl's tabwriter aligns them (a cell is padded
/// to its column's widest plus two spaces; kubectl writes the type followed by a space).
///
/// ```
/// # use kubeward_examples::rollouts::describe::describe_deployment;
/// let d = serde_json::from_value(serde_json::json!({
///     "spec": {"replicas": 3, "selector": {}, "template": {}},
///     "status": {"replicas": 3, "updatedReplicas": 3, "availableReplicas": 3, "conditions": [
///         {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}]},
/// })).unwrap();
/// assert_eq!(describe_deployment(&d), "Replicas:  3 desired | 3 updated | 3 total | 3 available | 0 unavailable\n\
///     Conditions:\n  Type        Status  Reason\n  ----        ------  ------\n  \
///     Available   True    MinimumReplicasAvailable\n");
/// ```
pub fn describe_deployment(deployment: &Deployment) -> String {
    let desired = deployment
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1);
    let status = deployment.status.clone().unwrap_or_default();
    let mut out = format!(
        "Replicas:  {desired} desired | {} updated | {} total | {} available | {} unavailable\n",
        status.updated_replicas.unwrap_or_default(),
        status.replicas.unwrap_or_default(),
        status.available_replicas.unwrap_or_default(),
        status.unavailable_replicas.unwrap_or_default(),
    );
    let conditions = status.conditions.unwrap_or_default();
    if conditions.is_empty() {
        return out;
    }
    let mut rows: Vec<[String; 3]> = vec![
        ["  Type".into(), "Status".into(), "Reason".into()],
        ["  ----".into(), "------".into(), "------".into()],
    ];
    for c in &conditions {
        rows.push([
            format!("  {} ", c.type_),
            c.status.clone(),
            c.reason.clone().unwrap_or_default(),
        ]);
    }
    let widths = [0, 1].map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0));
    out.push_str("Conditions:\n");
    for row in &rows {
        let _ = writeln!(
            out,
            "{:<w0$}{:<w1$}{}",
            row[0],
            row[1],
            row[2],
            w0 = widths[0] + 2,
            w1 = widths[1] + 2
        );
    }
    out
}

/// When kubectl considers `event` last seen (its sort key).
fn last_seen(event: &Event) -> Option<Timestamp> {
    if let Some(series) = &event.series {
        return Some(series.last_observed_time.0);
    }
    if let Some(last) = &event.deprecated_last_timestamp {
        return Some(last.0);
    }
    event.event_time.as_ref().map(|t| t.0)
}

/// The `Age` column: `<first seen>`, or `<last seen> (xN over <first seen>)` for a series.
fn age(event: &Event, now: Timestamp) -> String {
    let first = event
        .event_time
        .as_ref()
        .map(|t| t.0)
        .or_else(|| event.deprecated_first_timestamp.as_ref().map(|t| t.0));
    let first = since(first, now);
    if let Some(series) = &event.series {
        return format!(
            "{} (x{} over {first})",
            since(Some(series.last_observed_time.0), now),
            series.count
        );
    }
    match event.deprecated_count {
        Some(count) if count > 1 => format!(
            "{} (x{count} over {first})",
            since(event.deprecated_last_timestamp.as_ref().map(|t| t.0), now)
        ),
        _ => first,
    }
}

/// The `From` column.
fn source(event: &Event) -> String {
    event
        .deprecated_source
        .as_ref()
        .and_then(|s| s.component.clone())
        .filter(|c| !c.is_empty())
        .or_else(|| event.reporting_controller.clone())
        .unwrap_or_default()
}

fn since(time: Option<Timestamp>, now: Timestamp) -> String {
    match time {
        None => "<unknown>".to_owned(),
        Some(time) => human_duration(now.duration_since(time)),
    }
}

/// apimachinery's `duration.HumanDuration`: `12s`, `3m4s`, `15m`, `2h5m`, `3d4h`, `2y30d`.
pub fn human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::events::v1::EventSeries;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).expect("in range")
    }

    fn event(type_: &str, reason: &str, time: i64, note: &str) -> Event {
        Event {
            type_: Some(type_.into()),
            reason: Some(reason.into()),
            event_time: Some(MicroTime(at(time))),
            note: Some(note.into()),
            reporting_controller: Some("demo.kubeward.dev/rollouts".into()),
            ..Event::default()
        }
    }

    #[test]
    fn human_durations_match_apimachinery() {
        let cases = [
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (184, "3m4s"),
            (600, "10m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 5 * 60, "3h5m"),
            (9 * 3600, "9h"),
            (50 * 3600, "2d2h"),
            (10 * 86400, "10d"),
        ];
        for (seconds, shown) in cases {
            assert_eq!(human_duration(SignedDuration::from_secs(seconds)), shown);
        }
        assert_eq!(human_duration(SignedDuration::from_secs(-5)), "<invalid>");
    }

    #[test]
    fn events_are_aligned_sorted_by_last_seen_and_series_show_their_count() {
        let mut failed = event(
            "Warning",
            "ReconcileFailed",
            2,
            "cannot deploy generation 2",
        );
        failed.series = Some(EventSeries {
            count: 4,
            last_observed_time: MicroTime(at(9)),
        });
        let events = [
            failed,
            event("Normal", "Applying", 0, "rolling out generation 2"),
            event("Warning", "FailedDeploy", 1, "image not found"),
        ];
        let shown = describe_events(&events, at(10));
        assert_eq!(
            shown,
            "Events:\n\
             \x20 Type     Reason           Age              From                        Message\n\
             \x20 ----     ------           ----             ----                        -------\n\
             \x20 Normal   Applying         10s              demo.kubeward.dev/rollouts  rolling out generation 2\n\
             \x20 Warning  FailedDeploy     9s               demo.kubeward.dev/rollouts  image not found\n\
             \x20 Warning  ReconcileFailed  1s (x4 over 8s)  demo.kubeward.dev/rollouts  cannot deploy generation 2\n"
        );
    }
}
