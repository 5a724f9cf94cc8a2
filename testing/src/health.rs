//! `/healthz`, `/livez` and `/readyz` as kube-apiserver serves them (apiserver
//! `pkg/server/healthz`): `ok` for the endpoint or one of its checks (`/healthz/ping`), a
//! plain-text 404 for a check it does not have, and with `?verbose` each check on a line
//! (`[+]ping ok`) then `healthz check passed`.

/// The checks of `/healthz` (and `/livez`), in kube-apiserver 1.34's order.
const CHECKS: &[&str] = &[
    "ping",
    "log",
    "etcd",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/priority-and-fairness-config-consumer",
    "poststarthook/priority-and-fairness-filter",
    "poststarthook/storage-object-count-tracker-hook",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-apiserver-identity-lease-controller",
    "poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
    "poststarthook/start-legacy-token-tracking-controller",
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/bootstrap-controller",
    "poststarthook/start-kubernetes-service-cidr-controller",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-status-local-available-controller",
    "poststarthook/apiservice-status-remote-available-controller",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-discovery-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
    "poststarthook/apiservice-openapiv3-controller",
];

/// The checks only `/readyz` has.
const READY_CHECKS: &[&str] = &["etcd-readiness", "informer-sync", "shutdown"];

/// The answer to `/<endpoint>[/<check>]`: `Some(text)` with 200, or `None` for the 404 of a
/// check the endpoint does not have. `verbose` lists the checks (for `/healthz`; the other
/// endpoints answer `ok`).
pub(crate) fn answer(endpoint: &str, check: Option<&str>, verbose: bool) -> Option<String> {
    if let Some(check) = check {
        let known =
            CHECKS.contains(&check) || endpoint == "readyz" && READY_CHECKS.contains(&check);
        return known.then(|| "ok".to_owned());
    }
    if verbose && endpoint == "healthz" {
        let mut text: String = CHECKS.iter().map(|c| format!("[+]{c} ok\n")).collect();
        text.push_str("healthz check passed\n");
        return Some(text);
    }
    Some("ok".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_answer_ok_and_unknown_ones_not_found() {
        assert_eq!(
            answer("healthz", Some("ping"), false).as_deref(),
            Some("ok")
        );
        assert_eq!(
            answer("readyz", Some("shutdown"), false).as_deref(),
            Some("ok")
        );
        assert_eq!(answer("readyz", Some("nothing"), false), None);
        let verbose = answer("healthz", None, true).unwrap();
        assert!(verbose.starts_with("[+]ping ok\n[+]log ok\n"));
        assert!(verbose.ends_with("healthz check passed\n"));
    }
}
