//! The anchor: the workload as a user would write it by hand on kube-runtime — a
//! `kube::runtime::Controller` whose reconcile goes through kube-runtime's `finalizer` helper,
//! writes the condition with a status merge patch (apimachinery's `SetStatusCondition` rules),
//! applies the child with server-side apply, watches its children (`owns`: a deleted or edited
//! child runs its owner's reconcile) and publishes each transition through kube-runtime's
//! `events::Recorder`.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Config};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::workload::{self, CONTROLLER, FINALIZER, Progress, Stage, Steady, Workload, stage};

/// What the anchor's reconcile shares.
pub struct Anchor {
    client: kube::Client,
    recorder: Recorder,
    progress: Arc<Progress>,
    steady: Steady,
}

impl Anchor {
    async fn apply(&self, workload: &Workload) -> Result<Action, kube::Error> {
        let stage = stage(workload, workload::ready(workload));
        match stage {
            Stage::Start => {}
            Stage::Apply => workload::apply_child(&self.client, workload).await?,
            Stage::Verify => {
                if !workload::child_is_current(&self.client, workload).await? {
                    return Ok(Action::requeue(Duration::from_millis(100)));
                }
            }
            Stage::Steady => {
                self.progress.steady(workload);
                if self.steady.restore_child {
                    workload::apply_child(&self.client, workload).await?;
                }
            }
        }
        self.transition(workload, Some(stage), "Reconcile").await?;
        Ok(Action::requeue(self.steady.resync))
    }

    async fn cleanup(&self, workload: &Workload) -> Result<Action, kube::Error> {
        let terminating = workload::ready(workload).is_some_and(|c| c.reason == "Terminating");
        if !terminating {
            self.transition(workload, None, "Cleanup").await?;
        }
        workload::delete_child(&self.client, workload).await?;
        Ok(Action::await_change())
    }

    /// Writes the condition of `stage` (cleanup's when `None`) and publishes its event.
    async fn transition(
        &self,
        workload: &Workload,
        stage: Option<Stage>,
        action: &str,
    ) -> Result<(), kube::Error> {
        let Some(desired) = workload::desired(workload, stage) else {
            return Ok(());
        };
        let mut conditions = workload
            .status
            .as_ref()
            .map(|s| s.conditions.clone())
            .unwrap_or_default();
        let reason = desired.reason().to_owned();
        let note = desired.message().to_owned();
        if !kubeward::conditions::set(&mut conditions, desired).is_changed() {
            return Ok(());
        }
        let api: Api<Workload> = Api::namespaced(
            self.client.clone(),
            &workload.namespace().unwrap_or_default(),
        );
        let patch = json!({ "status": { "conditions": conditions } });
        api.patch_status(
            &workload.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
        let event = Event {
            type_: EventType::Normal,
            reason,
            note: Some(note),
            action: action.to_owned(),
            secondary: None,
        };
        self.recorder
            .publish(&event, &workload.object_ref(&()))
            .await
    }
}

async fn reconcile(
    workload: Arc<Workload>,
    anchor: Arc<Anchor>,
) -> Result<Action, finalizer::Error<kube::Error>> {
    anchor.progress.pass();
    let api: Api<Workload> = Api::namespaced(
        anchor.client.clone(),
        &workload.namespace().unwrap_or_default(),
    );
    finalizer(&api, FINALIZER, workload, |event| async {
        match event {
            finalizer::Event::Apply(workload) => anchor.apply(&workload).await,
            finalizer::Event::Cleanup(workload) => anchor.cleanup(&workload).await,
        }
    })
    .await
}

/// The anchor controller, resyncing converged objects every `resync`, 16 passes at once (as
/// kubeward's default); runs until dropped.
pub async fn run(client: kube::Client, progress: Arc<Progress>, resync: Duration) {
    run_with(client, progress, Steady::resyncing(resync)).await;
}

/// [`run`] whose converged workloads do what `steady` says.
pub async fn run_with(client: kube::Client, progress: Arc<Progress>, steady: Steady) {
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: CONTROLLER.into(),
            instance: Some("bench-0".into()),
        },
    );
    let anchor = Arc::new(Anchor {
        client: client.clone(),
        recorder,
        progress,
        steady,
    });
    kube::runtime::Controller::new(
        Api::<Workload>::all(client.clone()),
        watcher::Config::default(),
    )
    .owns(Api::<ConfigMap>::all(client), watcher::Config::default())
    .with_config(Config::default().concurrency(16))
    .run(
        reconcile,
        |_, _, _| Action::requeue(Duration::from_secs(1)),
        anchor,
    )
    .for_each(|_| futures::future::ready(()))
    .await;
}
