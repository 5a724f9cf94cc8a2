//! A controller that owns a Deployment, tested on the embedded API server: the README's example
//! (`the_readme_shows_this_test` keeps the two the same).

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, PostParams};
use kube::runtime::wait::await_condition;
use kube::{CustomResourceExt, ResourceExt};
use kubeward::children::ChildError;
use kubeward::controller::Controller;
use kubeward::{Action, Pass};
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
/// Each Widget runs a Deployment of its name.
struct Shop;

#[kubeward::reconciler(resource = Widget, controller = "demo.kubeward.dev/shop", owns(Deployment))]
impl Shop {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, ShopError> {
        pass.apply_child(&web(&widget.name_any())).await?;
        Ok(Action::await_change())
    }
}

#[tokio::test]
async fn a_widget_runs_its_deployment() -> Result<(), Box<dyn std::error::Error>> {
    let server = kubeward_testing::ApiServer::start().await?;
    server.install_crd(&Widget::crd())?;
    let client = server.client()?;
    let controller = tokio::spawn(Controller::new(Shop, client.clone()).run());
    let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
    let shop = Widget::new("shop", WidgetSpec::default());
    widgets.create(&PostParams::default(), &shop).await?;
    let stored = await_condition(
        Api::<Deployment>::namespaced(client, "default"),
        "shop",
        |deployment: Option<&Deployment>| deployment.is_some(),
    );
    let stored = tokio::time::timeout(Duration::from_secs(30), stored).await??;
    let deployment = stored.expect("the Deployment");
    // Stored as kube-apiserver stores it: defaulted, owned by the widget.
    let strategy = deployment.spec.as_ref().and_then(|s| s.strategy.clone());
    let rolling = strategy.and_then(|s| s.rolling_update).expect("defaulted");
    assert_eq!(rolling.max_surge, Some(IntOrString::String("25%".into())));
    assert_eq!(deployment.owner_references()[0].name, "shop");
    controller.abort();
    Ok(())
}
// README: end

/// The README shows the code between the markers above, as it is here.
#[test]
fn the_readme_shows_this_test() {
    let source = include_str!("workloads.rs");
    let begin = source.find("// README: begin\n").expect("begin marker") + 17;
    let end = source.find("// README: end").expect("end marker");
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    assert!(
        readme.contains(&source[begin..end]),
        "paste tests/tests/workloads.rs between its README markers into the README"
    );
}
