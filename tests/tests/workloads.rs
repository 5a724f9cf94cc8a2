//! A controller that owns a Deployment, tested on the embedded API server with its simulated
//! cluster (the Deployment's controllers, scheduler and kubelet): the example of
//! `docs/testing.md` (`the_guide_shows_this_test` keeps the two the same).

use std::error::Error;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use kube::{CustomResourceExt, ResourceExt};
use kubeward::children::ChildError;
use kubeward::controller::Controller;
use kubeward::kstatus::readiness;
use kubeward::{Action, Pass};
use kubeward_testing::{ApiServer, ConditionMatch, Workloads, wait_for_condition};
use kubeward_tests::{Widget, WidgetSpec};

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
enum ShopError {
    #[error("could not write the Deployment")]
    Child(#[from] ChildError),
}

/// The Deployment `name`: one nginx container, selected by `app: <name>`.
fn web(name: &str) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": name },
        "spec": {
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [{ "name": "web", "image": "nginx:1.27" }] },
            },
        },
    }))
    .expect("a Deployment")
}

// README: begin
/// Each Widget runs a Deployment of its name, and is ready once the Deployment is available.
struct Shop;

#[kubeward::reconciler(resource = Widget, controller = "demo.kubeward.dev/shop", owns(Deployment))]
impl Shop {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, ShopError> {
        pass.apply_child(&web(&widget.name_any())).await?;
        let web = pass.get_child::<Deployment>(&widget.name_any()).await?;
        if web.is_some_and(|d| readiness(&d).is_current()) {
            pass.set_status_field("phase", "Running");
            return Ok(Action::await_change()); // kstatus: Ready
        }
        pass.set_status_field("phase", "Starting");
        Ok(Action::requeue(Duration::from_secs(5))) // kstatus: Reconciling; its changes wake it
    }
}

#[tokio::test]
async fn a_widget_is_ready_once_its_deployment_is_available() -> Result<(), Box<dyn Error>> {
    let server = ApiServer::builder()
        .workloads(Workloads::with_nodes(2))
        .start()
        .await?;
    server.install_crd(&Widget::crd())?;
    let client = server.client()?;
    let controller = tokio::spawn(Controller::new(Shop, client.clone()).run());
    let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
    let shop = Widget::new("shop", WidgetSpec::default());
    widgets.create(&PostParams::default(), &shop).await?;
    let ready = ConditionMatch::new("Ready").status("True");
    wait_for_condition(&widgets, "shop", &ready, Duration::from_secs(30)).await?;
    // The simulated cluster ran it: a ReplicaSet, a pod scheduled, started and ready.
    let web = Api::<Deployment>::namespaced(client, "default")
        .get("shop")
        .await?;
    assert_eq!(web.status.and_then(|s| s.available_replicas), Some(1));
    assert_eq!(web.metadata.owner_references.unwrap()[0].name, "shop");
    controller.abort();
    Ok(())
}
// README: end

/// `docs/testing.md` shows the code between the markers above, as it is here (its hidden lines,
/// `# ` in the block, aside: they make the block a complete doctest).
#[test]
fn the_guide_shows_this_test() {
    let source = include_str!("workloads.rs");
    let begin = source.find("// README: begin\n").expect("begin marker") + 17;
    let end = source.find("// README: end").expect("end marker");
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/testing.md"))
        .expect("docs/testing.md");
    let shown: String = page
        .lines()
        .filter(|l| !l.trim_start().starts_with("# ") && l.trim() != "#")
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        shown.contains(&source[begin..end]),
        "paste tests/tests/workloads.rs between its README markers into docs/testing.md"
    );
}
