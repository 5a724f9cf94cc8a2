//! Access through credentials like kube-apiserver: bearer tokens (401 for unknown ones, and for
//! missing ones once any are configured), RBAC from stored Roles, ClusterRoles and bindings (validated as
//! upstream), impersonation headers, and the self reviews behind `kubectl auth`.

mod apiserver_support;

use apiserver_support::raw;
use http::HeaderValue;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
    SelfSubjectRulesReview, SelfSubjectRulesReviewSpec,
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use kube::api::{Api, ListParams, PostParams};
use kube::{Client, Config};
use kubeward_testing::kubectl::Kubectl;
use kubeward_testing::{ApiServer, Identity};
use serde_json::{Value, json};

const ALICE: &str = "alice-token";

async fn server() -> ApiServer {
    ApiServer::builder()
        .token(ALICE, "alice", &["devs"])
        .start()
        .await
        .expect("server")
}

/// A client with the given extra headers and no credentials of its own.
fn client_with_headers(server: &ApiServer, headers: &[(&str, &str)]) -> Client {
    let mut config = Config::new(server.url().parse().expect("url"));
    for (name, value) in headers {
        config.headers.push((
            http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
            HeaderValue::from_str(value).expect("value"),
        ));
    }
    Client::try_from(config).expect("client")
}

/// The `Status` of a failed call: code, reason and message.
fn status_of<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (u16, String, String) {
    match result {
        Err(kube::Error::Api(s)) => (s.code, s.reason.clone(), s.message.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn role(namespace: &str, name: &str, rules: Value) -> Role {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules,
    }))
    .expect("role")
}

fn role_binding(namespace: &str, name: &str, role_ref: Value, subjects: Value) -> RoleBinding {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": role_ref,
        "subjects": subjects,
    }))
    .expect("binding")
}

/// Stores a Role through `roles` (whose client must be allowed to write it).
async fn store_role(roles: &Api<Role>, namespace: &str, name: &str, rules: Value) -> Role {
    roles
        .create(&PostParams::default(), &role(namespace, name, rules))
        .await
        .unwrap_or_else(|e| panic!("create role {name}: {e}"))
}

/// Stores a RoleBinding through `bindings` (whose client must be allowed to write it).
async fn store_role_binding(
    bindings: &Api<RoleBinding>,
    namespace: &str,
    name: &str,
    role_ref: Value,
    subjects: Value,
) -> RoleBinding {
    bindings
        .create(
            &PostParams::default(),
            &role_binding(namespace, name, role_ref, subjects),
        )
        .await
        .unwrap_or_else(|e| panic!("create role binding {name}: {e}"))
}

#[tokio::test]
async fn unknown_and_missing_tokens_are_401_once_tokens_are_configured() {
    let server = server().await;
    for client in [
        client_with_headers(&server, &[("authorization", "Bearer not-a-token")]),
        client_with_headers(&server, &[]),
    ] {
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        assert_eq!(
            status_of(cms.list(&ListParams::default()).await),
            (401, "Unauthorized".into(), "Unauthorized".into())
        );
        // discovery too: authentication comes before everything
        let (code, body) = raw(&client, "GET", "/version", None, None).await;
        assert_eq!((code, &body["reason"]), (401, &json!("Unauthorized")));
    }
    // The administrator's client carries a minted token; rule-limited clients keep working.
    let admin: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    admin
        .list(&ListParams::default())
        .await
        .expect("admin lists");
    let rules = vec![PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(vec!["configmaps".into()]),
        verbs: vec!["list".into()],
        ..PolicyRule::default()
    }];
    let limited: Api<ConfigMap> = Api::namespaced(
        server
            .client_for(&Identity::with_rules("limited", rules))
            .unwrap(),
        "default",
    );
    limited
        .list(&ListParams::default())
        .await
        .expect("rules allow list");
}

#[tokio::test]
async fn without_configured_tokens_requests_without_credentials_are_the_administrator() {
    let server = ApiServer::start().await.unwrap();
    let client = client_with_headers(&server, &[]);
    let reviews: Api<SelfSubjectReview> = Api::all(client);
    let review = reviews
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .expect("whoami");
    let user = review.status.and_then(|s| s.user_info).expect("userInfo");
    assert_eq!(user.username.as_deref(), Some("system:admin"));
    assert_eq!(
        user.groups.unwrap_or_default(),
        ["system:masters", "system:authenticated"]
    );
}

/// Without configured tokens, a request bearing a token that authenticates no one is not the
/// administrator: it is 401 with kube-apiserver's Status, as a peer client (the Python client
/// with a stale token) meets it on a real cluster. Minted tokens and no credentials work.
#[tokio::test]
async fn without_configured_tokens_an_unknown_token_is_401() {
    let server = ApiServer::start().await.unwrap();
    let bogus = client_with_headers(&server, &[("authorization", "Bearer bogus-token")]);
    for path in ["/api/v1/namespaces/default/configmaps", "/version", "/apis"] {
        let (code, body) = raw(&bogus, "GET", path, None, None).await;
        assert_eq!(code, 401, "{path}: {body}");
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "Unauthorized", "reason": "Unauthorized", "code": 401}),
            "{path}"
        );
    }
    let cms: Api<ConfigMap> = Api::namespaced(bogus, "default");
    assert_eq!(
        status_of(cms.list(&ListParams::default()).await),
        (401, "Unauthorized".into(), "Unauthorized".into())
    );
    for client in [
        server.client().unwrap(),
        client_with_headers(&server, &[]),
        server
            .client_for(&Identity::user("carol", &["system:masters"]))
            .unwrap(),
    ] {
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        cms.list(&ListParams::default()).await.expect("lists");
    }
}

#[tokio::test]
async fn anonymous_auth_serves_requests_without_credentials_as_system_anonymous() {
    let server = ApiServer::builder()
        .token(ALICE, "alice", &[])
        .anonymous_auth(true)
        .start()
        .await
        .unwrap();
    let anonymous = client_with_headers(&server, &[]);
    // public info is bound to system:unauthenticated, discovery is not
    let (code, _) = raw(&anonymous, "GET", "/version", None, None).await;
    assert_eq!(code, 200);
    let (code, body) = raw(&anonymous, "GET", "/apis", None, None).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        r#"forbidden: User "system:anonymous" cannot get path "/apis""#
    );
    let cms: Api<ConfigMap> = Api::namespaced(anonymous, "default");
    assert_eq!(
        status_of(cms.list(&ListParams::default()).await),
        (
            403,
            "Forbidden".into(),
            r#"configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default""#
                .into()
        )
    );
}

#[tokio::test]
async fn token_users_are_authorized_by_the_stored_roles_and_bindings() {
    let server = server().await;
    let admin = server.client().unwrap();
    let alice = server.client_for(&Identity::token(ALICE)).unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(alice.clone(), "default");
    assert_eq!(
        status_of(cms.list(&ListParams::default()).await),
        (
            403,
            "Forbidden".into(),
            r#"configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default""#
                .into()
        )
    );

    let roles: Api<Role> = Api::namespaced(admin.clone(), "default");
    store_role(
        &roles,
        "default",
        "cm-reader",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]),
    )
    .await;
    let bindings: Api<RoleBinding> = Api::namespaced(admin.clone(), "default");
    let binding = store_role_binding(
        &bindings,
        "default",
        "devs-read",
        json!({"kind": "Role", "name": "cm-reader"}),
        json!([{"kind": "Group", "name": "devs"}]),
    )
    .await;
    // defaulted as upstream's v1 defaults do
    assert_eq!(binding.role_ref.api_group, "rbac.authorization.k8s.io");
    assert_eq!(
        binding.subjects.unwrap()[0].api_group.as_deref(),
        Some("rbac.authorization.k8s.io")
    );
    cms.list(&ListParams::default())
        .await
        .expect("the group binding allows list");
    let elsewhere: Api<ConfigMap> = Api::namespaced(alice.clone(), "kube-system");
    assert_eq!(
        status_of(elsewhere.list(&ListParams::default()).await).0,
        403,
        "a RoleBinding applies in its namespace only"
    );

    // A binding to a missing role: the denial names the resolution error.
    store_role_binding(
        &bindings,
        "default",
        "dangling",
        json!({"kind": "ClusterRole", "name": "missing"}),
        json!([{"kind": "User", "name": "alice"}]),
    )
    .await;
    assert_eq!(
        status_of(cms.delete("x", &Default::default()).await).2,
        r#"configmaps "x" is forbidden: User "alice" cannot delete resource "configmaps" in API group "" in the namespace "default": RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found"#
    );

    // Removing the binding takes the access away.
    bindings
        .delete("devs-read", &Default::default())
        .await
        .expect("delete binding");
    assert_eq!(status_of(cms.list(&ListParams::default()).await).0, 403);
}

#[tokio::test]
async fn rbac_objects_are_validated_as_upstream() {
    let server = ApiServer::start().await.unwrap();
    let admin = server.client().unwrap();
    let crbs: Api<ClusterRoleBinding> = Api::all(admin.clone());
    let bad: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "bad"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"},
        "subjects": [{"kind": "ServiceAccount", "name": "op"}],
    }))
    .unwrap();
    assert_eq!(
        status_of(crbs.create(&PostParams::default(), &bad).await),
        (
            422,
            "Invalid".into(),
            r#"ClusterRoleBinding.rbac.authorization.k8s.io "bad" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value]"#
                .into()
        )
    );
    let roles: Api<Role> = Api::namespaced(admin.clone(), "default");
    let urls = role(
        "default",
        "urls",
        json!([{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]),
    );
    assert_eq!(
        status_of(roles.create(&PostParams::default(), &urls).await).2,
        r#"Role.rbac.authorization.k8s.io "urls" is invalid: rules[0].nonResourceURLs: Invalid value: ["/metrics"]: namespaced rules cannot apply to non-resource URLs"#
    );
    // names need only be path segments
    let colons = role(
        "default",
        "system:leader-locking",
        json!([{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}]),
    );
    roles
        .create(&PostParams::default(), &colons)
        .await
        .expect("a role name with colons");

    let good: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "good"},
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "Group", "name": "devs"}],
    }))
    .unwrap();
    let mut stored = crbs.create(&PostParams::default(), &good).await.unwrap();
    stored.role_ref.name = "edit".into();
    assert_eq!(
        status_of(crbs.replace("good", &PostParams::default(), &stored).await).2,
        r#"ClusterRoleBinding.rbac.authorization.k8s.io "good" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef"#
    );
}

#[tokio::test]
async fn a_fresh_server_stores_the_default_roles_binding_cluster_admin_to_system_masters() {
    let server = ApiServer::start().await.unwrap();
    let binding = server
        .object(
            "rbac.authorization.k8s.io/v1",
            "clusterrolebindings",
            None,
            "cluster-admin",
        )
        .expect("cluster-admin binding");
    assert_eq!(binding["subjects"][0]["name"], "system:masters");
    assert_eq!(binding["roleRef"]["name"], "cluster-admin");
    let role = server
        .object(
            "rbac.authorization.k8s.io/v1",
            "clusterroles",
            None,
            "cluster-admin",
        )
        .expect("cluster-admin role");
    assert_eq!(
        role["rules"][0],
        json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]})
    );
}

#[tokio::test]
async fn impersonation_needs_the_impersonate_verb_and_acts_as_the_impersonated_user() {
    let server = server().await;
    let as_sa = [
        ("authorization", "Bearer alice-token"),
        ("impersonate-user", "system:serviceaccount:default:op"),
    ];
    let alice_as_sa = client_with_headers(&server, &as_sa);
    let cms: Api<ConfigMap> = Api::namespaced(alice_as_sa.clone(), "default");
    assert_eq!(
        status_of(cms.list(&ListParams::default()).await),
        (
            403,
            "Forbidden".into(),
            r#"serviceaccounts "op" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default""#
                .into()
        )
    );
    let admin = server.client().unwrap();
    let roles: Api<Role> = Api::namespaced(admin.clone(), "default");
    let bindings: Api<RoleBinding> = Api::namespaced(admin.clone(), "default");
    store_role(&roles, "default", "impersonate-op", json!([{"apiGroups": [""], "resources": ["serviceaccounts"], "resourceNames": ["op"], "verbs": ["impersonate"]}])).await;
    store_role_binding(
        &bindings,
        "default",
        "alice-impersonates-op",
        json!({"kind": "Role", "name": "impersonate-op"}),
        json!([{"kind": "User", "name": "alice"}]),
    )
    .await;
    // Now alice acts as the service account, which may do nothing yet.
    assert_eq!(
        status_of(cms.list(&ListParams::default()).await).2,
        r#"configmaps is forbidden: User "system:serviceaccount:default:op" cannot list resource "configmaps" in API group "" in the namespace "default""#
    );
    let whoami: Api<SelfSubjectReview> = Api::all(alice_as_sa.clone());
    let user = whoami
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .expect("whoami as the service account")
        .status
        .and_then(|s| s.user_info)
        .unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:default:op")
    );
    assert_eq!(
        user.groups.unwrap_or_default(),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]
    );
    // Asking for a group as well needs impersonate on groups.
    let with_group = client_with_headers(
        &server,
        &[
            ("authorization", "Bearer alice-token"),
            ("impersonate-user", "system:serviceaccount:default:op"),
            ("impersonate-group", "system:masters"),
        ],
    );
    let (code, body) = raw(
        &with_group,
        "GET",
        "/api/v1/namespaces/default/configmaps",
        None,
        None,
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        r#"groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope"#
    );
    // Groups without a user: as kube-apiserver, the impersonation filter's plain-text 500
    // (`responsewriters.InternalError`) naming the request URI.
    let group_only = client_with_headers(
        &server,
        &[
            ("authorization", "Bearer alice-token"),
            ("impersonate-group", "devs"),
        ],
    );
    let request = http::Request::builder()
        .method("GET")
        .uri("/api/v1/namespaces/default/configmaps")
        .body(kube::client::Body::from(Vec::new()))
        .unwrap();
    let response = group_only.send(request).await.unwrap();
    assert_eq!(response.status().as_u16(), 500);
    let text = response.into_body().collect_bytes().await.unwrap();
    assert_eq!(
        String::from_utf8_lossy(&text),
        "Internal Server Error: \"/api/v1/namespaces/default/configmaps\": requested [{Group  devs    }] without impersonating a user\n"
    );
}

#[tokio::test]
async fn self_subject_access_reviews_answer_with_the_rbac_decision_and_its_reason() {
    let server = server().await;
    let alice = server.client_for(&Identity::token(ALICE)).unwrap();
    let reviews: Api<SelfSubjectAccessReview> = Api::all(alice.clone());
    let ask = |verb: &str| SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("default".into()),
                verb: Some(verb.into()),
                resource: Some("configmaps".into()),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    let denied = reviews
        .create(&PostParams::default(), &ask("get"))
        .await
        .expect("system:basic-user allows the review")
        .status
        .unwrap();
    assert!(!denied.allowed);
    let admin = server.client().unwrap();
    let crbs: Api<ClusterRoleBinding> = Api::all(admin.clone());
    let readers: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "devs-admin"},
        "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "Group", "name": "devs"}],
    }))
    .unwrap();
    crbs.create(&PostParams::default(), &readers).await.unwrap();
    let allowed = reviews
        .create(&PostParams::default(), &ask("get"))
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(allowed.allowed);
    assert_eq!(
        allowed.reason.as_deref(),
        Some(
            r#"RBAC: allowed by ClusterRoleBinding "devs-admin" of ClusterRole "cluster-admin" to Group "devs""#
        )
    );
    // exactly one of the attribute kinds
    let (code, body) = raw(
        &alice,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        Some("application/json"),
        Some(json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {}})),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        // As kube-apiserver words it: the 422 names no kind, and the value is Go's nil.
        r#".authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"#
    );
    // create-only
    let (code, _) = raw(
        &alice,
        "GET",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        None,
        None,
    )
    .await;
    assert_eq!(code, 405);
}

#[tokio::test]
async fn self_subject_rules_reviews_list_the_bound_rules_and_missing_roles() {
    let server = server().await;
    let admin = server.client().unwrap();
    let roles: Api<Role> = Api::namespaced(admin.clone(), "default");
    store_role(&roles, "default", "cm-reader", json!([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["web"], "verbs": ["get"]}])).await;
    let bindings: Api<RoleBinding> = Api::namespaced(admin.clone(), "default");
    for (name, role_ref) in [
        ("read", json!({"kind": "Role", "name": "cm-reader"})),
        ("dangling", json!({"kind": "Role", "name": "gone"})),
    ] {
        store_role_binding(
            &bindings,
            "default",
            name,
            role_ref,
            json!([{"kind": "User", "name": "alice"}]),
        )
        .await;
    }
    let alice = server.client_for(&Identity::token(ALICE)).unwrap();
    let reviews: Api<SelfSubjectRulesReview> = Api::all(alice.clone());
    let review = SelfSubjectRulesReview {
        spec: SelfSubjectRulesReviewSpec {
            namespace: Some("default".into()),
        },
        ..SelfSubjectRulesReview::default()
    };
    let status = reviews
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap();
    let resource_rules = serde_json::to_value(&status.resource_rules).unwrap();
    assert!(
        resource_rules
            .as_array()
            .unwrap()
            .contains(&json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["web"]})),
        "{resource_rules}"
    );
    assert!(
        resource_rules.as_array().unwrap().contains(&json!({
            "verbs": ["create"],
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]
        })),
        "system:basic-user applies to every authenticated user: {resource_rules}"
    );
    let non_resource = serde_json::to_value(&status.non_resource_rules).unwrap();
    assert!(
        non_resource.to_string().contains("/version"),
        "{non_resource}"
    );
    assert_eq!(
        status.evaluation_error.as_deref(),
        Some(r#"role.rbac.authorization.k8s.io "gone" not found"#)
    );
    let (code, body) = raw(
        &alice,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        Some("application/json"),
        Some(json!({"spec": {}})),
    )
    .await;
    assert_eq!(
        (code, body["message"].as_str()),
        (400, Some("no namespace on request"))
    );
}

#[tokio::test]
async fn reviews_are_discoverable_as_create_only_resources() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let (code, body) = raw(&client, "GET", "/apis/authorization.k8s.io/v1", None, None).await;
    assert_eq!(code, 200);
    let names: Vec<(&str, &Value)> = body["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), &r["verbs"]))
        .collect();
    assert_eq!(
        names,
        [
            ("localsubjectaccessreviews", &json!(["create"])),
            ("selfsubjectaccessreviews", &json!(["create"])),
            ("selfsubjectrulesreviews", &json!(["create"])),
            ("subjectaccessreviews", &json!(["create"]))
        ]
    );
    let (_, groups) = raw(&client, "GET", "/apis", None, None).await;
    let groups = groups.to_string();
    for group in [
        "authentication.k8s.io",
        "authorization.k8s.io",
        "rbac.authorization.k8s.io",
    ] {
        assert!(groups.contains(group), "{group} in {groups}");
    }
}

const RBAC_YAML: &str = r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
  namespace: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: cm-reader
  namespace: default
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: op-reads
  namespace: default
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: cm-reader
subjects:
- kind: ServiceAccount
  name: op
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_rbac_then_acts_as_the_service_account_and_asks_auth() {
    // kubectl sends a kubeconfig's credentials only over TLS (client-go reads a user's auth info
    // for https servers only), so it talks to this plain-HTTP server as the administrator and
    // reaches other identities by impersonation, which it does send.
    let server = ApiServer::start().await.unwrap();
    let dir = std::env::temp_dir().join(format!("kubeward-auth-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let admin_config = dir.join("admin.kubeconfig");
    server.write_kubeconfig(&admin_config).unwrap();
    let rbac = dir.join("rbac.yaml");
    std::fs::write(&rbac, RBAC_YAML).unwrap();
    let admin = Kubectl::new(&admin_config);
    let rbac_path = rbac.to_str().unwrap().to_owned();
    tokio::task::spawn_blocking(move || {
        let applied = admin.ok(&["apply", "-f", &rbac_path]);
        for line in [
            "serviceaccount/op created",
            "role.rbac.authorization.k8s.io/cm-reader created",
            "rolebinding.rbac.authorization.k8s.io/op-reads created",
        ] {
            assert!(applied.contains(line), "{applied}");
        }
        admin.ok(&["create", "configmap", "web", "--from-literal=a=b"]);
        let sa = "--as=system:serviceaccount:default:op";

        assert_eq!(admin.ok(&["auth", "can-i", "list", "configmaps", sa]).trim(), "yes");
        let (allowed, answer) = admin.run(&["auth", "can-i", "delete", "configmaps", sa]);
        assert!(!allowed, "can-i answers no with exit status 1");
        assert_eq!(answer.trim(), "no");
        // The administrator may do anything.
        assert_eq!(admin.ok(&["auth", "can-i", "delete", "configmaps"]).trim(), "yes");

        let listed = admin.ok(&["get", "configmaps", sa]);
        assert!(listed.contains("web"), "{listed}");
        let refused = admin.fails(&["delete", "configmap", "web", sa]);
        assert!(
            refused.contains(r#"Error from server (Forbidden): configmaps "web" is forbidden: User "system:serviceaccount:default:op" cannot delete resource "configmaps" in API group "" in the namespace "default""#),
            "{refused}"
        );

        let whoami = admin.ok(&["auth", "whoami", sa]);
        assert!(
            whoami.contains("system:serviceaccount:default:op")
                && whoami.contains("[system:serviceaccounts system:serviceaccounts:default system:authenticated]"),
            "{whoami}"
        );
        let list = admin.ok(&["auth", "can-i", "--list", sa]);
        let row = list
            .lines()
            .find(|l| l.starts_with("configmaps "))
            .unwrap_or_else(|| panic!("no configmaps row:\n{list}"));
        assert!(row.contains("[get list]"), "{list}");

        // A user bound to nothing.
        let refused = admin.fails(&["get", "configmaps", "--as=alice"]);
        assert!(
            refused.contains(r#"Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default""#),
            "{refused}"
        );
    })
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn clients_as_a_user_are_authorized_by_rbac_without_configured_tokens() {
    let server = ApiServer::start().await.unwrap();
    let op = server
        .client_for(&Identity::user("system:serviceaccount:default:op", &[]))
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(op, "default");
    assert_eq!(
        status_of(cms.list(&ListParams::default()).await).2,
        r#"configmaps is forbidden: User "system:serviceaccount:default:op" cannot list resource "configmaps" in API group "" in the namespace "default""#
    );
    let admin = server.client().unwrap();
    let bindings: Api<RoleBinding> = Api::namespaced(admin, "default");
    store_role_binding(
        &bindings,
        "default",
        "sa-admin",
        json!({"kind": "ClusterRole", "name": "cluster-admin"}),
        json!([{"kind": "Group", "name": "system:serviceaccounts:default"}]),
    )
    .await;
    cms.list(&ListParams::default())
        .await
        .expect("bound through the service account's namespace group");
}

#[tokio::test]
async fn roles_and_bindings_cannot_grant_more_than_the_writer_holds_without_escalate_or_bind() {
    let server = server().await;
    let admin = server.client().unwrap();
    // alice may manage roles and bindings in default and read configmaps there.
    Api::<Role>::namespaced(admin.clone(), "default")
        .create(
            &PostParams::default(),
            &role(
                "default",
                "rbac-manager",
                json!([
                    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": ["create", "update"]},
                    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
                ]),
            ),
        )
        .await
        .unwrap();
    let admin_bindings: Api<RoleBinding> = Api::namespaced(admin.clone(), "default");
    store_role_binding(
        &admin_bindings,
        "default",
        "alice-manages",
        json!({"kind": "Role", "name": "rbac-manager"}),
        json!([{"kind": "User", "name": "alice"}]),
    )
    .await;
    let alice = server.client_for(&Identity::token(ALICE)).unwrap();
    let roles: Api<Role> = Api::namespaced(alice.clone(), "default");
    store_role(
        &roles,
        "default",
        "reader",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
    )
    .await;
    let too_much = role(
        "default",
        "too-much",
        json!([{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "delete"]}]),
    );
    assert_eq!(
        status_of(roles.create(&PostParams::default(), &too_much).await),
        (
            403,
            "Forbidden".into(),
            "roles.rbac.authorization.k8s.io \"too-much\" is forbidden: user \"alice\" (groups=[\"devs\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"delete\"]}\n\
             {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\"]}"
                .into()
        )
    );
    assert!(
        server
            .object(
                "rbac.authorization.k8s.io/v1",
                "roles",
                Some("default"),
                "too-much"
            )
            .is_none(),
        "nothing stored"
    );

    let bindings: Api<RoleBinding> = Api::namespaced(alice.clone(), "default");
    let to_admin = role_binding(
        "default",
        "alice-admin",
        json!({"kind": "ClusterRole", "name": "cluster-admin"}),
        json!([{"kind": "User", "name": "alice"}]),
    );
    let (code, _, message) = status_of(bindings.create(&PostParams::default(), &to_admin).await);
    assert_eq!(code, 403);
    assert!(
        message.starts_with("rolebindings.rbac.authorization.k8s.io \"alice-admin\" is forbidden: user \"alice\" (groups=[\"devs\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}"),
        "{message}"
    );
    let to_missing = role_binding(
        "default",
        "alice-missing",
        json!({"kind": "ClusterRole", "name": "missing"}),
        json!([{"kind": "User", "name": "alice"}]),
    );
    assert_eq!(
        status_of(bindings.create(&PostParams::default(), &to_missing).await),
        (
            404,
            "NotFound".into(),
            r#"clusterroles.rbac.authorization.k8s.io "missing" not found"#.into()
        )
    );

    // `bind` on the role and `escalate` on roles lift the checks.
    Api::<Role>::namespaced(admin.clone(), "default")
        .create(
            &PostParams::default(),
            &role(
                "default",
                "delegate",
                json!([
                    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "resourceNames": ["cluster-admin"], "verbs": ["bind"]},
                    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]},
                ]),
            ),
        )
        .await
        .unwrap();
    store_role_binding(
        &admin_bindings,
        "default",
        "alice-delegates",
        json!({"kind": "Role", "name": "delegate"}),
        json!([{"kind": "User", "name": "alice"}]),
    )
    .await;
    bindings
        .create(&PostParams::default(), &to_admin)
        .await
        .expect("bind on cluster-admin");
    roles
        .create(&PostParams::default(), &too_much)
        .await
        .expect("escalate on roles");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_kubectl_uses_token_and_certificate_kubeconfigs() {
    let server = ApiServer::builder()
        .tls(true)
        .token(ALICE, "alice", &["devs"])
        .start()
        .await
        .unwrap();
    assert!(server.url().starts_with("https://127.0.0.1:"));
    // kube clients trust the server's CA; a certificate names its user.
    let admin = server.client().unwrap();
    let robot = server
        .client_for(&Identity::certificate("robot", &["robots"]))
        .unwrap();
    let whoami: Api<SelfSubjectReview> = Api::all(robot.clone());
    let user = whoami
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .unwrap()
        .status
        .and_then(|s| s.user_info)
        .unwrap();
    assert_eq!(user.username.as_deref(), Some("robot"));
    assert_eq!(
        user.groups.unwrap_or_default(),
        ["robots", "system:authenticated"]
    );
    Api::<ClusterRoleBinding>::all(admin)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "robots-admin"},
                "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
                "subjects": [{"kind": "Group", "name": "robots"}],
            }))
            .unwrap(),
        )
        .await
        .unwrap();

    let dir = std::env::temp_dir().join(format!("kubeward-tls-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let (admin_config, alice_config, robot_config, bogus_config) = (
        dir.join("admin.kubeconfig"),
        dir.join("alice.kubeconfig"),
        dir.join("robot.kubeconfig"),
        dir.join("bogus.kubeconfig"),
    );
    server.write_kubeconfig(&admin_config).unwrap();
    server
        .write_kubeconfig_for(&alice_config, &Identity::token(ALICE))
        .unwrap();
    server
        .write_kubeconfig_for(&robot_config, &Identity::certificate("robot", &["robots"]))
        .unwrap();
    server
        .write_kubeconfig_for(&bogus_config, &Identity::token("bogus"))
        .unwrap();
    tokio::task::spawn_blocking(move || {
        let (admin, alice, robot, bogus) = (
            Kubectl::new(&admin_config),
            Kubectl::new(&alice_config),
            Kubectl::new(&robot_config),
            Kubectl::new(&bogus_config),
        );
        admin.ok(&["create", "configmap", "web", "--from-literal=a=b"]);
        let whoami = |k: &Kubectl| {
            k.ok(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"])
        };
        assert_eq!(whoami(&admin), "system:admin");
        assert_eq!(whoami(&alice), "alice");
        assert_eq!(whoami(&robot), "robot");
        let refused = alice.fails(&["get", "configmaps"]);
        assert!(
            refused.contains(r#"Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default""#),
            "{refused}"
        );
        assert!(robot.ok(&["get", "configmaps"]).contains("web"));
        let refused = bogus.fails(&["get", "configmaps"]);
        assert!(
            refused.contains(
                "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
            ),
            "{refused}"
        );
    })
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every identity writes a kubeconfig kubectl acts as (over TLS, where kubectl sends its
/// credentials): a minted user in its groups, a user bound to its own rules.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_kubectl_acts_as_a_users_and_a_rule_bound_identitys_kubeconfig() {
    let server = ApiServer::builder().tls(true).start().await.unwrap();
    let dir = std::env::temp_dir().join(format!("kubeward-identity-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let (user_config, rules_config) = (dir.join("user.kubeconfig"), dir.join("rules.kubeconfig"));
    server
        .write_kubeconfig_for(&user_config, &Identity::user("carol", &["ops"]))
        .unwrap();
    let read = PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec!["configmaps".into()]),
        verbs: vec!["list".into()],
        ..PolicyRule::default()
    };
    server
        .write_kubeconfig_for(&rules_config, &Identity::with_rules("dave", vec![read]))
        .unwrap();
    tokio::task::spawn_blocking(move || {
        let (carol, dave) = (Kubectl::new(&user_config), Kubectl::new(&rules_config));
        let groups = carol.ok(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}"]);
        assert_eq!(groups, r#"["ops","system:authenticated"]"#);
        let refused = carol.fails(&["get", "configmaps"]);
        assert!(
            refused.contains(r#"User "carol" cannot list resource "configmaps""#),
            "{refused}"
        );
        dave.ok(&["get", "configmaps"]);
        let refused = dave.fails(&["get", "secrets"]);
        assert!(
            refused.contains(r#"User "dave" cannot list resource "secrets""#),
            "{refused}"
        );
    })
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
