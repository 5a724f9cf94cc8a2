//! The workload as a kubeward reconciler: the pass decides, the runtime writes the condition
//! (optimistic concurrency), publishes its transition event and handles the finalizer.

use std::sync::Arc;
use std::time::Duration;

use kubeward::controller::Controller;
use kubeward::observe::{PassRecord, ReconcileObserver};
use kubeward::vocabulary::Vocabulary;
use kubeward::{Action, Pass, Reconciler};

use super::workload::{
    self, CONTROLLER, FINALIZER, Progress, READY_REASONS, Stage, Workload, stage,
};

/// The kubeward reconciler of workloads.
pub struct Workloads {
    client: kube::Client,
    progress: Arc<Progress>,
    resync: Duration,
}

impl Reconciler for Workloads {
    type Resource = Workload;
    type Error = kube::Error;
    const NAME: Option<&'static str> = Some(CONTROLLER);
    const FINALIZER: Option<&'static str> = Some(FINALIZER);
    const CONDITIONS: &'static [&'static Vocabulary] = &[&READY_REASONS];

    async fn apply(
        &self,
        workload: &Workload,
        pass: &mut Pass<Workload>,
    ) -> Result<Action, kube::Error> {
        let ready = kubeward::conditions::find(pass.stored_conditions(), workload::READY);
        let stage = stage(workload, ready);
        match stage {
            Stage::Start => {}
            Stage::Apply => workload::apply_child(&self.client, workload).await?,
            Stage::Verify => {
                if !workload::child_is_current(&self.client, workload).await? {
                    return Ok(Action::requeue(Duration::from_millis(100)));
                }
            }
            Stage::Steady => self.progress.steady(workload),
        }
        if let Some(desired) = workload::desired(workload, Some(stage)) {
            pass.set(desired);
        }
        Ok(Action::requeue(self.resync))
    }

    async fn cleanup(
        &self,
        workload: &Workload,
        pass: &mut Pass<Workload>,
    ) -> Result<Action, kube::Error> {
        if let Some(desired) = workload::desired(workload, None) {
            pass.set(desired);
        }
        workload::delete_child(&self.client, workload).await?;
        Ok(Action::await_change())
    }
}

/// Counts every pass (init, apply, cleanup, delete) into [`Progress::passes`].
struct CountPasses(Arc<Progress>);

impl ReconcileObserver for CountPasses {
    fn pass_finished(&self, _: &PassRecord) {
        self.0.pass();
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
    let reconciler = Workloads {
        client: client.clone(),
        progress: progress.clone(),
        resync,
    };
    Controller::new(reconciler, client.clone())
        .with_reporting_instance("bench-0")
        .with_observer(Arc::new(CountPasses(progress.clone())))
        .register_metrics(registry)
        .expect("metrics register")
        .shutdown_on(futures::future::pending())
}
