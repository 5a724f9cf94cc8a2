//! A dependent's readiness feeds a declared condition: a Widget owns a Gadget (a custom resource
//! whose status another controller writes); each pass reads it back (`pass.get_child`), asks
//! kstatus for its verdict (`kubeward::kstatus::readiness`) and moves the widget's `GadgetReady`
//! condition to match. The gadget's status changes start the widget's passes (the owned kind is
//! watched metadata-only). Run as the identity the generated RBAC grants.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, Patch, PatchParams};
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubeward::children::ChildError;
use kubeward::kstatus::{Readiness, readiness};
use kubeward::{Action, Pass};
use kubeward_tests::{Running, Widget, WidgetSpec, create_widget, eventually, server_with_widgets};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A dependent some other controller reconciles.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "test.kubeward.dev",
    version = "v1",
    kind = "Gadget",
    namespaced,
    status = "GadgetStatus"
)]
pub struct GadgetSpec {
    /// Whatever the widget asks of it.
    pub size: i32,
}

/// What the gadget's own controller reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GadgetStatus {
    /// The generation it last worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Its conditions (kstatus').
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// Whether the widget's gadget is ready.
#[kubeward::condition(type = "GadgetReady")]
#[transitions(
    Waiting -> Ready | Broken,
    Ready -> Waiting | Broken,
    Broken -> Waiting | Ready,
)]
pub enum GadgetReady {
    #[reason(Unknown)]
    Waiting,
    #[reason(True)]
    Ready,
    #[reason(False)]
    Broken,
}

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
enum AssemblyError {
    #[error("could not write or read the gadget")]
    Child(#[from] ChildError),
}

fn gadget_name(widget: &Widget) -> String {
    format!("{}-gadget", widget.name_any())
}

/// Owns one Gadget per Widget, and reports its readiness as `GadgetReady`.
struct Assemblies;

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/assemblies",
    conditions(GadgetReady),
    owns(Gadget),
    kstatus = false,
)]
impl Assemblies {
    async fn apply(
        &self,
        widget: &Widget,
        pass: &mut Pass<Widget>,
    ) -> Result<Action, AssemblyError> {
        let name = gadget_name(widget);
        pass.apply_child(&Gadget::new(&name, GadgetSpec { size: 3 }))
            .await?;
        let (reason, message) = match pass
            .get_child::<Gadget>(&name)
            .await?
            .map(|g| readiness(&g))
        {
            Some(Readiness::Current(message)) => (GadgetReady::Ready, message),
            Some(Readiness::Failed(message)) => (GadgetReady::Broken, message),
            Some(other) => (GadgetReady::Waiting, other.message().to_owned()),
            None => (GadgetReady::Waiting, format!("{name} is not there yet")),
        };
        let transition = pass
            .condition::<GadgetReady>()
            .try_to(reason, message.clone())
            // With no condition yet, its start state first: that transition runs the next pass.
            .or_else(|| {
                pass.condition::<GadgetReady>()
                    .try_to(GadgetReady::Waiting, message)
            });
        if let Some(transition) = transition {
            pass.set(transition);
        }
        Ok(Action::await_change())
    }
}

/// The widget's stored `GadgetReady` as (status, reason, message).
async fn gadget_ready(client: &kube::Client) -> Option<(String, String, String)> {
    let widget = kubeward_tests::widgets(client).get("w").await.ok()?;
    let condition = widget
        .status?
        .conditions
        .into_iter()
        .find(|c| c.type_ == "GadgetReady")?;
    Some((condition.status, condition.reason, condition.message))
}

async fn reaches(client: &kube::Client, status: &str, reason: &str, message: &str) {
    let expected = Some((status.to_owned(), reason.to_owned(), message.to_owned()));
    eventually(
        &format!("GadgetReady {status} {reason} {message:?}"),
        || async { gadget_ready(client).await == expected },
    )
    .await;
}

/// The gadget's controller, played by the test: writes its status.
async fn gadget_reports(client: &kube::Client, conditions: serde_json::Value) {
    Api::<Gadget>::namespaced(client.clone(), "default")
        .patch_status(
            "w-gadget",
            &PatchParams::default(),
            &Patch::Merge(
                json!({ "status": { "observedGeneration": 1, "conditions": conditions } }),
            ),
        )
        .await
        .expect("gadget status");
}

fn condition(type_: &str, status: &str, reason: &str, message: &str) -> serde_json::Value {
    json!({ "type": type_, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-12-04T00:00:00Z" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependents_readiness_feeds_a_declared_condition() {
    let (server, admin) = server_with_widgets().await;
    server
        .install_crd(&Gadget::crd())
        .await
        .expect("gadget CRD");
    let client = server
        .service_account_client("default", "assemblies", Assemblies::rbac_rules(false))
        .await
        .expect("the generated RBAC is stored");
    let running = Running::start(Assemblies.controller(client).without_events());
    create_widget(&admin, "w", WidgetSpec::default()).await;
    // A gadget its controller has not reported on yet is Current by kstatus' rules.
    reaches(&admin, "True", "Ready", "Resource is current").await;

    gadget_reports(
        &admin,
        json!([condition("Ready", "False", "Warming", "warming up")]),
    )
    .await;
    reaches(&admin, "Unknown", "Waiting", "warming up").await;

    gadget_reports(&admin, json!([condition("Ready", "True", "Warm", "")])).await;
    reaches(&admin, "True", "Ready", "Resource is current").await;

    gadget_reports(
        &admin,
        json!([condition(
            "Stalled",
            "True",
            "NoCapacity",
            "no capacity left in zone a"
        )]),
    )
    .await;
    reaches(&admin, "False", "Broken", "no capacity left in zone a").await;
    running.stop().await;

    let user = "system:serviceaccount:default:assemblies";
    let refused = server
        .requests()
        .iter()
        .filter(|r| r.user == user && r.status == 403)
        .count();
    assert_eq!(refused, 0, "the controller was refused something");
}
