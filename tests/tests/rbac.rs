//! The namespaced RBAC of a leader-elected controller, stored and used as its service account:
//! the Roles `rbac::namespaced` generates for the reconciled namespaces, and the Role
//! `rbac::lease` generates for the Lease's namespace (the operator's own), let the identity get,
//! create and update its Lease there, and grant nothing on Leases in the reconciled namespaces.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, ObjectMeta, PostParams};
use kubeward_tests::namespace;

/// Stores `role` and `binding` in their namespace through `admin`.
async fn store(admin: &kube::Client, (role, binding): (Role, RoleBinding)) {
    let namespace = role.metadata.namespace.clone().expect("a namespaced Role");
    Api::<Role>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    Api::<RoleBinding>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
}

/// The Lease `name` held by `holder`.
fn lease(name: &str, holder: &str) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            ..LeaseSpec::default()
        }),
    }
}

/// The HTTP status of `result`: 200 for a success.
fn code<T>(result: Result<T, kube::Error>) -> u16 {
    match result {
        Ok(_) => 200,
        Err(kube::Error::Api(status)) => status.code,
        Err(error) => panic!("no answer: {error}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_rule_is_granted_in_the_leases_namespace_and_nowhere_else() {
    let server = kubeward_testing::Cluster::start().await.expect("cluster");
    let admin = server.client().expect("admin");
    for name in ["operators", "team-a", "team-b"] {
        namespace(&admin, name).await;
    }
    // Nothing but what the Roles below grant.
    let operator = server
        .service_account_client("operators", "widgets", Vec::new())
        .await
        .expect("the identity");
    // The controller reconciles `team-a` and `team-b` and holds its Lease in `operators`.
    let rules = kubeward::rbac::rules::<kubeward_tests::Widgets>(true);
    for reconciled in ["team-a", "team-b"] {
        let generated = kubeward::rbac::namespaced(
            "widgets",
            reconciled,
            rules.clone(),
            "operators",
            "widgets",
        );
        store(&admin, generated).await;
    }
    store(
        &admin,
        kubeward::rbac::lease("widgets", "operators", "operators", "widgets"),
    )
    .await;

    let leases = Api::<Lease>::namespaced(operator.clone(), "operators");
    let created = leases
        .create(&PostParams::default(), &lease("widgets", "a"))
        .await;
    assert_eq!(code(created), 200, "create in the Lease's namespace");
    let mut stored = leases.get("widgets").await.expect("get");
    stored.spec = lease("widgets", "b").spec;
    let updated = leases
        .replace("widgets", &PostParams::default(), &stored)
        .await;
    assert_eq!(code(updated), 200, "update in the Lease's namespace");

    for reconciled in ["team-a", "team-b"] {
        let elsewhere = Api::<Lease>::namespaced(operator.clone(), reconciled);
        let created = elsewhere
            .create(&PostParams::default(), &lease("widgets", "a"))
            .await;
        assert_eq!(code(created), 403, "create in {reconciled}");
        assert_eq!(
            code(elsewhere.get("widgets").await),
            403,
            "get in {reconciled}"
        );
    }
}

/// `namespaced_service_account_client`: the rules hold in the account's namespace only (a Role
/// and RoleBinding there, created with the namespace), on either backend — 403 in another
/// namespace and cluster-wide.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaced_grant_holds_in_its_namespace_only() {
    let server = kubeward_testing::Cluster::start().await.expect("cluster");
    let admin = server.client().expect("admin");
    namespace(&admin, "team-b").await;
    let manage_leases = k8s_openapi::api::rbac::v1::PolicyRule {
        api_groups: Some(vec!["coordination.k8s.io".into()]),
        resources: Some(vec!["leases".into()]),
        verbs: vec!["get".into(), "list".into(), "create".into()],
        ..Default::default()
    };
    // `team-a` does not exist yet: the grant creates it.
    let operator = server
        .namespaced_service_account_client("team-a", "widgets", vec![manage_leases])
        .await
        .expect("the identity");
    let role = Api::<Role>::namespaced(admin.clone(), "team-a")
        .get("kubeward-testing:widgets")
        .await
        .expect("the Role is stored in team-a");
    assert_eq!(
        role.rules.expect("rules")[0].verbs,
        ["get", "list", "create"]
    );
    let binding = Api::<RoleBinding>::namespaced(admin, "team-a")
        .get("kubeward-testing:widgets")
        .await
        .expect("the RoleBinding is stored in team-a");
    assert_eq!(binding.role_ref.kind, "Role");

    let here = Api::<Lease>::namespaced(operator.clone(), "team-a");
    let created = here
        .create(&PostParams::default(), &lease("widgets", "a"))
        .await;
    assert_eq!(code(created), 200, "create in its namespace");
    assert_eq!(code(here.get("widgets").await), 200, "get in its namespace");
    let elsewhere = Api::<Lease>::namespaced(operator.clone(), "team-b");
    assert_eq!(
        code(elsewhere.list(&Default::default()).await),
        403,
        "list in another namespace"
    );
    let everywhere = Api::<Lease>::all(operator);
    assert_eq!(
        code(everywhere.list(&Default::default()).await),
        403,
        "list across namespaces"
    );
}
