//! Waiting for what a controller under test should produce: a condition with a given status and
//! reason, or an event about an object. Both watch the server (kube-runtime's watcher and
//! `await_condition`), so they return as soon as the state is reached, and fail after a bound
//! with what they last saw, so a broken test says why instead of hanging.

use std::fmt;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::events::v1::Event;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a wait ended without what it waited for.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// The bound passed first.
    #[error("timed out after {after:?} waiting for {what}; last seen: {last_seen}")]
    Timeout {
        /// What was waited for.
        what: String,
        /// The bound.
        after: Duration,
        /// The closest thing seen (the object's conditions, or the events about it).
        last_seen: String,
    },
    /// The watch failed.
    #[error("watching for {what} failed: {source}")]
    Watch {
        /// What was waited for.
        what: String,
        /// The watch error.
        source: watcher::Error,
    },
}

/// A condition to wait for: its `type`, and optionally its `status` and `reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionMatch {
    type_: String,
    status: Option<String>,
    reason: Option<String>,
}

impl ConditionMatch {
    /// Any condition of type `type_`.
    pub fn new(type_: impl Into<String>) -> Self {
        Self {
            type_: type_.into(),
            status: None,
            reason: None,
        }
    }

    /// ... whose status is `status` (`"True"`, `"False"` or `"Unknown"`).
    #[must_use]
    pub fn status(mut self, status: impl Into<String>) -> Self {
        self.status = Some(status.into());
        self
    }

    /// ... whose reason is `reason`.
    #[must_use]
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Whether `object`'s `status.conditions` holds a matching condition.
    pub fn matches_object(&self, object: &Value) -> bool {
        conditions_of(object).iter().any(|c| self.matches(c))
    }

    fn matches(&self, condition: &Value) -> bool {
        let field = |name: &str| condition.get(name).and_then(Value::as_str);
        field("type") == Some(self.type_.as_str())
            && self
                .status
                .as_deref()
                .is_none_or(|s| field("status") == Some(s))
            && self
                .reason
                .as_deref()
                .is_none_or(|r| field("reason") == Some(r))
    }
}

impl fmt::Display for ConditionMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "condition {}", self.type_)?;
        if let Some(status) = &self.status {
            write!(f, "={status}")?;
        }
        if let Some(reason) = &self.reason {
            write!(f, " ({reason})")?;
        }
        Ok(())
    }
}

fn conditions_of(object: &Value) -> Vec<Value> {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Waits until the object `name` has a condition matching `wanted`, and returns the object.
///
/// ```no_run
/// # async fn f(client: kube::Client) -> Result<(), kubeward_testing::WaitError> {
/// use k8s_openapi::api::core::v1::Namespace;
/// use kubeward_testing::{ConditionMatch, wait_for_condition};
/// let api: kube::Api<Namespace> = kube::Api::all(client);
/// let wanted = ConditionMatch::new("NamespaceDeletionContentFailure").status("False");
/// wait_for_condition(&api, "demo", &wanted, std::time::Duration::from_secs(10)).await?;
/// # Ok(()) }
/// ```
pub async fn wait_for_condition<K>(
    api: &Api<K>,
    name: &str,
    wanted: &ConditionMatch,
    within: Duration,
) -> Result<K, WaitError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + fmt::Debug + Send + Sync + 'static,
{
    let what = format!("{wanted} on {name}");
    let mut last = None;
    let watch = watcher(
        api.clone(),
        watcher::Config::default().fields(&format!("metadata.name={name}")),
    )
    .applied_objects();
    let found = tokio::time::timeout(within, async {
        futures::pin_mut!(watch);
        while let Some(object) = watch.try_next().await.transpose() {
            let object = object.map_err(|source| WaitError::Watch {
                what: what.clone(),
                source,
            })?;
            let json = serde_json::to_value(&object).unwrap_or(Value::Null);
            if wanted.matches_object(&json) {
                return Ok(Some(object));
            }
            last = Some(json);
        }
        Ok(None)
    })
    .await;
    match found {
        Ok(Ok(Some(object))) => Ok(object),
        Ok(Err(err)) => Err(err),
        Ok(Ok(None)) | Err(_) => Err(WaitError::Timeout {
            what,
            after: within,
            last_seen: match last {
                Some(object) => format!("conditions {}", Value::Array(conditions_of(&object))),
                None => "no such object".to_owned(),
            },
        }),
    }
}

/// An event to wait for: about the object named `regarding`, optionally with a reason and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventMatch {
    regarding: String,
    reason: Option<String>,
    type_: Option<String>,
}

impl EventMatch {
    /// Any event whose `regarding.name` is `name`.
    pub fn regarding(name: impl Into<String>) -> Self {
        Self {
            regarding: name.into(),
            reason: None,
            type_: None,
        }
    }

    /// ... with this reason.
    #[must_use]
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// ... of this type (`"Normal"` or `"Warning"`).
    #[must_use]
    pub fn type_(mut self, type_: impl Into<String>) -> Self {
        self.type_ = Some(type_.into());
        self
    }

    /// Whether `event` matches.
    pub fn matches(&self, event: &Event) -> bool {
        event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(self.regarding.as_str())
            && self
                .reason
                .as_deref()
                .is_none_or(|r| event.reason.as_deref() == Some(r))
            && self
                .type_
                .as_deref()
                .is_none_or(|t| event.type_.as_deref() == Some(t))
    }
}

impl fmt::Display for EventMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an event")?;
        if let Some(type_) = &self.type_ {
            write!(f, " {type_}")?;
        }
        if let Some(reason) = &self.reason {
            write!(f, " {reason}")?;
        }
        write!(f, " about {}", self.regarding)
    }
}

/// Waits until an events.k8s.io/v1 event matching `wanted` is stored in `namespace`, and returns
/// it (with its `series.count` as stored then).
///
/// ```no_run
/// # async fn f(client: kube::Client) -> Result<(), kubeward_testing::WaitError> {
/// use kubeward_testing::{EventMatch, wait_for_event};
/// let wanted = EventMatch::regarding("web").reason("WaitingForApproval").type_("Normal");
/// let event = wait_for_event(&client, "default", &wanted, std::time::Duration::from_secs(10)).await?;
/// assert_eq!(event.reporting_controller.as_deref(), Some("demo.kubeward.dev/rollouts"));
/// # Ok(()) }
/// ```
pub async fn wait_for_event(
    client: &kube::Client,
    namespace: &str,
    wanted: &EventMatch,
    within: Duration,
) -> Result<Event, WaitError> {
    let what = wanted.to_string();
    let api: Api<Event> = Api::namespaced(client.clone(), namespace);
    let mut seen: Vec<String> = Vec::new();
    let watch = watcher(
        api,
        watcher::Config::default().fields(&format!("regarding.name={}", wanted.regarding)),
    )
    .applied_objects()
    .boxed();
    let found = tokio::time::timeout(within, async {
        let mut watch = watch;
        while let Some(event) = watch.next().await {
            let event = event.map_err(|source| WaitError::Watch {
                what: what.clone(),
                source,
            })?;
            if wanted.matches(&event) {
                return Ok(Some(event));
            }
            seen.push(format!(
                "{} {} ({})",
                event.type_.as_deref().unwrap_or("?"),
                event.reason.as_deref().unwrap_or("?"),
                event.name_any()
            ));
        }
        Ok(None)
    })
    .await;
    match found {
        Ok(Ok(Some(event))) => Ok(event),
        Ok(Err(err)) => Err(err),
        Ok(Ok(None)) | Err(_) => Err(WaitError::Timeout {
            what,
            after: within,
            last_seen: if seen.is_empty() {
                "no events about it".to_owned()
            } else {
                seen.join(", ")
            },
        }),
    }
}
