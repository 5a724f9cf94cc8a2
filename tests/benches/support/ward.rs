//! The workload as a kubeward reconciler: the pass decides, the runtime writes the condition
//! (optimistic concurrency), publishes its transition event and handles the finalizer; the child
//! ConfigMaps are declared owned (watched metadata-only: a deleted or edited child runs its
//! owner's pass) and written through the pass.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::children::ChildError;
use kubeward::controller::Controller;
use kubeward::observe::{PassRecord, ReconcileObserver};
use kubeward::relations::Relations;
use kubeward::vocabulary::Vocabulary;
use kubeward::{Action, Pass, Reconciler};

use super::workload::{
    self, CONTROLLER, FINALIZER, Progress, READY_REASONS, Stage, Steady, Workload, stage,
};

/// The kubeward reconciler of workloads.
pub struct Workloads {
    client: kube::Client,
    progress: Arc<Progress>,
    steady: Steady,
}

/// Why a workload's pass failed.
#[derive(Debug, thiserror::Error, kubeward::Terminal)]
pub enum WorkloadError {
    /// Reading the child back failed.
    #[error(transparent)]
    Api(#[from] kube::Error),
    /// Writing the child failed.
    #[error(transparent)]
    Child(#[from] ChildError),
}

impl Reconciler for Workloads {
    type Resource = Workload;
    type Error = WorkloadError;
    const NAME: Option<&'static str> = Some(CONTROLLER);
    const FINALIZER: Option<&'static str> = Some(FINALIZER);
    const CONDITIONS: &'static [&'static Vocabulary] = &[&READY_REASONS];

    fn relations() -> Relations<Workload> {
        Relations::new().owns::<ConfigMap>()
    }

    async fn apply(
        &self,
        workload: &Workload,
        pass: &mut Pass<Workload>,
    ) -> Result<Action, WorkloadError> {
        let ready = kubeward::conditions::find(pass.stored_conditions(), workload::READY);
        let stage = stage(workload, ready);
        match stage {
            Stage::Start => {}
            Stage::Apply => {
                for child in workload::children_of(workload) {
                    pass.apply_child(&child).await?;
                }
            }
            Stage::Verify => {
                if !workload::child_is_current(&self.client, workload).await? {
                    return Ok(Action::requeue(Duration::from_millis(100)));
                }
            }
            Stage::Steady => {
                self.progress.steady(workload);
                if self.steady.restore_child {
                    for child in workload::children_of(workload) {
                        pass.apply_child(&child).await?;
                    }
                }
            }
        }
        match workload::desired(workload, Some(stage)) {
            // The transition runs the next stage's pass at once.
            Some(desired) => {
                pass.set(desired);
                Ok(Action::await_change())
            }
            None => Ok(Action::requeue(self.steady.resync)),
        }
    }

    async fn cleanup(
        &self,
        workload: &Workload,
        pass: &mut Pass<Workload>,
    ) -> Result<Action, WorkloadError> {
        if let Some(desired) = workload::desired(workload, None) {
            pass.set(desired);
        }
        for name in workload::child_names(workload) {
            pass.delete_child::<ConfigMap>(&name).await?;
        }
        Ok(Action::await_change())
    }
}

/// Counts every pass (init, apply, cleanup, delete) into [`Progress::passes`].
pub struct CountPasses(pub Arc<Progress>);

impl ReconcileObserver for CountPasses {
    fn pass_finished(&self, _: &PassRecord) {
        self.0.pass();
    }
}

/// The reconciler of workloads, on `client`, counting into `progress`; converged workloads do
/// what `steady` says.
pub fn reconciler(client: &kube::Client, progress: &Arc<Progress>, steady: Steady) -> Workloads {
    Workloads {
        client: client.clone(),
        progress: progress.clone(),
        steady,
    }
}

/// The kubeward controller of workloads, resyncing converged objects every `resync`, with every
/// metric registered on `registry` (passes, steps, events, per-object state).
pub fn controller(
    client: &kube::Client,
    progress: &Arc<Progress>,
    resync: Duration,
    registry: &prometheus::Registry,
) -> Controller<Workloads> {
    controller_with(client, progress, Steady::resyncing(resync), registry)
}

/// [`controller`] whose converged workloads do what `steady` says.
pub fn controller_with(
    client: &kube::Client,
    progress: &Arc<Progress>,
    steady: Steady,
    registry: &prometheus::Registry,
) -> Controller<Workloads> {
    Controller::new(reconciler(client, progress, steady), client.clone())
        .with_reporting_instance("bench-0")
        .with_observer(Arc::new(CountPasses(progress.clone())))
        .register_metrics(registry)
        .expect("metrics register")
        .shutdown_on(futures::future::pending())
}
