//! [`Reporter`]: which controller, and which replica of it, publishes.

use crate::limits::{EVENT_REPORTING_INSTANCE_MAX_BYTES, truncated};
use crate::names::{InvalidName, NameKind};

/// The controller that publishes events (`reportingController`) and the replica it runs in
/// (`reportingInstance`). Both are shown by `kubectl get events -o wide` and are the only way to
/// tell which of several controllers reconciling the same object published an event.
///
/// ```
/// use kubeward::events::Reporter;
///
/// let reporter = Reporter::new("demo.kubeward.dev/rollouts", "rollouts-7d9f-x2x9z").unwrap();
/// assert_eq!(reporter.controller(), "demo.kubeward.dev/rollouts");
/// assert!(Reporter::new("not a qualified name", "pod").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reporter {
    controller: String,
    instance: String,
}

/// A [`Reporter`] the API server would reject.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidReporter {
    /// The controller name is not a qualified name (such as `demo.kubeward.dev/rollouts`).
    #[error(transparent)]
    Controller(InvalidName),
    /// The instance is empty or longer than 128 bytes.
    #[error(
        "invalid reporting instance {instance:?}: must be 1 to {EVENT_REPORTING_INSTANCE_MAX_BYTES} bytes (use the pod name)"
    )]
    Instance {
        /// The rejected instance.
        instance: String,
    },
}

impl Reporter {
    /// A reporter for `controller` (a qualified name, validated like the API server's
    /// `reportingController`) running as `instance` (1 to 128 bytes, usually the pod name).
    pub fn new(
        controller: impl Into<String>,
        instance: impl Into<String>,
    ) -> Result<Self, InvalidReporter> {
        let controller = controller.into();
        let instance = instance.into();
        NameKind::ControllerName
            .validate(&controller)
            .map_err(InvalidReporter::Controller)?;
        if instance.is_empty() || instance.len() > EVENT_REPORTING_INSTANCE_MAX_BYTES {
            return Err(InvalidReporter::Instance { instance });
        }
        Ok(Self {
            controller,
            instance,
        })
    }

    /// A reporter for `controller` whose instance is this process's pod: the `POD_NAME`
    /// environment variable (set it from the downward API, `fieldRef: metadata.name`), else the
    /// host name (`HOSTNAME`, then `/proc/sys/kernel/hostname`, then `/etc/hostname`; a pod's host
    /// name is its name unless the pod sets `hostname`), else the controller name. An instance
    /// longer than 128 bytes is cut to 128.
    ///
    /// ```
    /// let reporter = kubeward::events::Reporter::for_controller("demo.kubeward.dev/rollouts").unwrap();
    /// assert!(!reporter.instance().is_empty());
    /// ```
    pub fn for_controller(controller: impl Into<String>) -> Result<Self, InvalidReporter> {
        let controller = controller.into();
        let instance = discover_instance(
            |var| std::env::var(var).ok(),
            |path| std::fs::read_to_string(path).ok(),
        )
        .unwrap_or_else(|| truncated(&controller, EVENT_REPORTING_INSTANCE_MAX_BYTES).to_owned());
        Self::new(controller, instance)
    }

    /// The controller's name (`reportingController`).
    pub fn controller(&self) -> &str {
        &self.controller
    }

    /// The replica's name (`reportingInstance`).
    pub fn instance(&self) -> &str {
        &self.instance
    }
}

/// The first non-empty of `POD_NAME`, `HOSTNAME` and the host name files, cut to 128 bytes.
fn discover_instance(
    env: impl Fn(&str) -> Option<String>,
    read: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    ["POD_NAME", "HOSTNAME"]
        .into_iter()
        .filter_map(&env)
        .chain(
            ["/proc/sys/kernel/hostname", "/etc/hostname"]
                .into_iter()
                .filter_map(&read),
        )
        .map(|name| name.trim().to_owned())
        .find(|name| !name.is_empty())
        .map(|name| truncated(&name, EVENT_REPORTING_INSTANCE_MAX_BYTES).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_prefers_pod_name_then_hostname() {
        let env = |var: &str| match var {
            "POD_NAME" => Some("web-0".to_owned()),
            "HOSTNAME" => Some("node".to_owned()),
            _ => None,
        };
        assert_eq!(discover_instance(env, |_| None).as_deref(), Some("web-0"));
        let no_pod = |var: &str| (var == "HOSTNAME").then(|| "node".to_owned());
        assert_eq!(discover_instance(no_pod, |_| None).as_deref(), Some("node"));
        let file = |path: &str| (path == "/etc/hostname").then(|| "from-file\n".to_owned());
        assert_eq!(
            discover_instance(|_| Some(" ".to_owned()), file).as_deref(),
            Some("from-file")
        );
        assert_eq!(discover_instance(|_| None, |_| None), None);
    }

    #[test]
    fn discovered_instance_is_cut_to_128_bytes() {
        let long = "p".repeat(300);
        let env = |var: &str| (var == "POD_NAME").then(|| long.clone());
        assert_eq!(discover_instance(env, |_| None).map(|i| i.len()), Some(128));
    }

    #[test]
    fn reporter_rejects_what_the_api_server_rejects() {
        assert!(matches!(
            Reporter::new("demo.kubeward.dev/rollouts", ""),
            Err(InvalidReporter::Instance { .. })
        ));
        assert!(matches!(
            Reporter::new("demo.kubeward.dev/rollouts", "p".repeat(129)),
            Err(InvalidReporter::Instance { .. })
        ));
        assert!(Reporter::new("demo.kubeward.dev/rollouts", "p".repeat(128)).is_ok());
        let err = Reporter::new("Demo.dev/rollouts", "pod").unwrap_err();
        assert!(
            err.to_string().starts_with("invalid controller name"),
            "{err}"
        );
    }
}
