//! Builder methods removed because what they switched on became the default, kept for one
//! release as deprecated no-ops so that code calling them builds (with a warning that says to
//! delete the call). To be removed in the release after 0.1.

use super::Reconciler;
use super::builder::Controller;

impl<R: Reconciler> Controller<R> {
    /// Once: skip the passes of the controller's own status writes. Every status write (anyone's)
    /// now starts no pass by default ([`with_relevant_changes`](Controller::with_relevant_changes)).
    #[deprecated(
        since = "0.1.0",
        note = "status writes start no pass by default: delete the call"
    )]
    #[must_use]
    pub fn skipping_own_status_writes(self) -> Self {
        self
    }

    /// Once: keep a standby's cache cold. A standby is cold by default;
    /// [`with_warm_standby`](Controller::with_warm_standby) opts into a warm one.
    #[deprecated(
        since = "0.1.0",
        note = "a standby is cold by default: delete the call"
    )]
    #[must_use]
    pub fn with_cold_standby(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    struct Configs;
    impl Reconciler for Configs {
        type Resource = ConfigMap;
        type Error = kube::Error;
        async fn apply(
            &self,
            _: &ConfigMap,
            _: &mut crate::Pass<ConfigMap>,
        ) -> Result<crate::Action, kube::Error> {
            Ok(crate::Action::await_change())
        }
    }

    /// The removed switches now ask for what is the default: the settings stay the defaults.
    #[tokio::test]
    #[allow(deprecated)]
    async fn the_deprecated_switches_leave_the_defaults() {
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let controller = Controller::new(Configs, client)
            .skipping_own_status_writes()
            .with_cold_standby();
        assert!(!controller.warm_standby);
        assert!(matches!(
            controller.starts,
            super::super::predicate::Starts::RelevantChanges
        ));
    }
}
