//! A single-fn reconciler with a context: the generated struct owns it (`Copies::new(context)`)
//! and lends it to every pass, so the fn can reach other objects through its client and keep
//! shared state.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kubeward::{Action, Pass};
use kubeward_tests::eventually;

/// What every pass of `copies` borrows.
struct Context {
    client: kube::Client,
    copied: AtomicUsize,
}

/// Copies each ConfigMap labelled `copy=yes` to `<name>-copy`, through the context's client.
#[kubeward::reconciler(resource = ConfigMap, controller = "test.kubeward.dev/copies")]
async fn copies(
    cm: &ConfigMap,
    _pass: &mut Pass<ConfigMap>,
    context: &Arc<Context>,
) -> Result<Action, kube::Error> {
    let labels = cm.metadata.labels.clone().unwrap_or_default();
    if labels.get("copy").map(String::as_str) != Some("yes") {
        return Ok(Action::await_change());
    }
    let name = format!("{}-copy", cm.metadata.name.as_deref().unwrap_or_default());
    let namespace = cm.metadata.namespace.as_deref().unwrap_or("default");
    let copy = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        data: cm.data.clone(),
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(context.client.clone(), namespace)
        .patch(
            &name,
            &PatchParams::apply("test.kubeward.dev/copies").force(),
            &Patch::Apply(&copy),
        )
        .await?;
    context.copied.fetch_add(1, Ordering::Relaxed);
    Ok(Action::await_change())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_fn_reconciler_reaches_other_objects_through_its_context() {
    let server = kubeward_testing::ApiServer::start().await.expect("server");
    let client = server.client().expect("client");
    let context = Arc::new(Context {
        client: client.clone(),
        copied: AtomicUsize::new(0),
    });
    let reconciler = Copies::new(context.clone());
    assert!(Arc::ptr_eq(reconciler.context(), &context));
    let running = kubeward_tests::Running::start(reconciler.controller(client.clone()));
    let config_maps = Api::<ConfigMap>::namespaced(client.clone(), "default");
    let original = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            labels: Some([("copy".to_owned(), "yes".to_owned())].into()),
            ..ObjectMeta::default()
        },
        data: Some([("level".to_owned(), "debug".to_owned())].into()),
        ..ConfigMap::default()
    };
    config_maps
        .create(&PostParams::default(), &original)
        .await
        .expect("create");
    eventually("the copy stored", || async {
        config_maps
            .get_opt("settings-copy")
            .await
            .expect("get")
            .is_some_and(|copy| copy.data == original.data)
    })
    .await;
    // The copy is visible before the pass has read the apply's answer and counted it.
    eventually(
        "the pass counted its copy in the shared context",
        || async { context.copied.load(Ordering::Relaxed) >= 1 },
    )
    .await;
    running.stop().await;
}
