//! Running a [`Controller`]: its run loop (names checked, the recorder built, the watch term
//! run — alone, while holding its own lease, or while holding the lease it shares with the other
//! controllers of an operator), the shutdown inside its budget, the final flush of event series,
//! and its final state.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use tokio::sync::watch;

use super::Reconciler;
use super::builder::{Controller, ControllerError, Events, OwnRecorder};
use super::context::Context;
use super::effects::{Effects, SETTLE_TIMEOUT};
use super::health::ControllerState;
use super::predicate::Starts;
use super::watch::{TermEnd, Watching};
use super::watch_failures::WatchFailures;
use crate::events::{EventRecorder, Reporter};
use crate::leader;
use crate::names::NameKind;
use crate::observe::{ControllerInfo, ReconcileObserver};
use crate::shutdown::Step;

/// How long the final event flush (on shutdown, or at the end of a leadership term) retries
/// failed writes.
const FLUSH_BUDGET: Duration = Duration::from_secs(5);

impl<R: Reconciler> Controller<R> {
    /// Runs until shut down: by the signal given to [`Controller::shutdown_on`], else SIGTERM or
    /// Ctrl-C. In-flight passes get the shutdown grace period, then are abandoned (a status
    /// write already under way still completes with its events); event series are flushed
    /// before it returns.
    ///
    /// Its [state](Controller::readiness) is then [`ControllerState::Stopped`], or
    /// [`ControllerState::Failed`] when it returns an error, when its watch loop ended on its
    /// own, when it panics (the panic goes on unwinding) and when its future is dropped before
    /// it returned.
    ///
    /// # Errors
    /// [`ControllerError::InvalidName`] when the name or finalizer is not a qualified name,
    /// [`ControllerError::InvalidReporter`] when the reporting instance is invalid,
    /// [`ControllerError::DuplicateConditionType`] when two of its vocabularies declare one
    /// condition type.
    pub async fn run(self) -> Result<(), ControllerError> {
        let name = self.name();
        let mut end = RunEnd {
            state: self.state.clone(),
            controller: name.clone(),
            ended: false,
        };
        let run = std::panic::AssertUnwindSafe(self.run_loop()).catch_unwind();
        match run.await {
            Ok(Ok(RunOutcome::Stopped)) => end.set(ControllerState::Stopped),
            Ok(Ok(RunOutcome::LoopEnded)) => {
                let reason = "the watch loop ended on its own";
                tracing::error!(controller = %name, "{reason}");
                end.failed(reason.to_owned());
            }
            Ok(Err(error)) => {
                end.failed(crate::controller::ErrorChain(&error).to_string());
                return Err(error);
            }
            Err(panic) => {
                end.failed(format!(
                    "panicked: {}",
                    crate::panics::panic_message(&*panic)
                ));
                std::panic::resume_unwind(panic);
            }
        }
        Ok(())
    }

    async fn run_loop(mut self) -> Result<RunOutcome, ControllerError> {
        let reconcile_timeout = self.reconcile_timeout();
        let name: Arc<str> = self.name().into();
        NameKind::ControllerName.validate(&name)?;
        crate::vocabulary::Vocabulary::check_distinct(R::CONDITIONS)?;
        if let Some(finalizer) = R::FINALIZER {
            NameKind::Finalizer.validate(finalizer)?;
        }
        let recorder = match self.events {
            Events::Off => None,
            Events::Recorder(recorder) => Some(recorder),
            Events::Own(OwnRecorder {
                instance,
                flush_interval,
            }) => {
                let reporter = match instance {
                    Some(instance) => Reporter::new(&*name, instance)?,
                    None => Reporter::for_controller(&*name)?,
                };
                let recorder = EventRecorder::new(self.client.clone(), reporter)
                    .with_observers(self.observers.clone());
                Some(match flush_interval {
                    Some(interval) => recorder.with_flush_interval(interval),
                    None => recorder,
                })
            }
        };
        let relations = R::relations();
        self.observers.controller_registered(&ControllerInfo {
            name: name.clone(),
            steps: R::STEPS.to_vec(),
            owns: relations
                .iter()
                .filter(|r| r.role() == crate::relations::Role::Owned)
                .map(|r| r.kind().kind.as_str().into())
                .collect(),
        });
        let signal = self
            .shutdown
            .take()
            .unwrap_or_else(|| Box::pin(termination_signal()));
        let budget = self.budget.clone();
        // The shutdown budget is counted from the signal.
        let shutdown = async move {
            signal.await;
            budget.begin();
        };
        let children = Arc::new(super::context::ChildContext::new(&name, &relations));
        let context = Arc::new(Context {
            reconciler: self.reconciler,
            client: self.client.clone(),
            name,
            observers: self.observers,
            recorder: recorder.clone(),
            clock: self.clock,
            status_timeout: self.status_timeout,
            reconcile_timeout,
            memory: self.memory.clone(),
            effects: Effects::default(),
            cache: self.cache.subscribe(),
            fence: self
                .leader_election
                .as_ref()
                .map(leader::LeaderElection::fence)
                .or_else(|| self.shared_lease.as_ref().map(leader::Member::fence)),
            relations,
            children,
            queue: self.queue.clone(),
            follow_up_transitions: self.starts == Starts::RelevantChanges,
            observed_generation_dropped: Default::default(),
        });
        if let (Some(recorder), Some(fence)) = (&recorder, &context.fence) {
            recorder.fence_with(fence.clone());
        }
        let watching = Watching {
            client: self.client.clone(),
            context: context.clone(),
            watcher_config: self.watcher_config,
            scope: self.scope,
            starts: self.starts,
            resync: self.resync,
            concurrency: self.concurrency,
            grace: self.shutdown_grace,
            budget: self.budget.clone(),
            sync_timeout: self.sync_timeout,
            state: self.state.clone(),
            cache: self.cache,
            state_between_terms: if self.leader_election.is_some() || self.shared_lease.is_some() {
                ControllerState::Standby
            } else {
                ControllerState::Stopped
            },
            failures: Arc::new(WatchFailures::new(&context.name)),
            shared: self.shared_watches,
        };
        // Abandoned passes' status writes and events still run: the series are flushed after
        // them. With leader election this is the end of the term's work, before the lease is
        // given up: no write is sent after that.
        let budget = &self.budget;
        let settle_and_flush = || async {
            let settle = budget.bound(Step::Settle, SETTLE_TIMEOUT);
            if !context.effects.settled(settle).await {
                tracing::warn!(timeout = ?settle, "status writes and events of abandoned passes did not finish in time");
            }
            if let Some(recorder) = &recorder
                && let Err(error) = recorder
                    .flush_within(budget.bound(Step::Flush, FLUSH_BUDGET))
                    .await
            {
                tracing::warn!(%error, "could not flush event series on shutdown");
            }
        };
        match (self.leader_election, self.shared_lease) {
            (None, None) => {
                let end = watching.run(shutdown, None).await;
                settle_and_flush().await;
                Ok(match end {
                    TermEnd::Stopped => RunOutcome::Stopped,
                    TermEnd::LoopEnded => RunOutcome::LoopEnded,
                })
            }
            (None, Some(member)) => {
                // A standby waiting for the lease is ready.
                self.state.send_replace(ControllerState::Standby);
                let member = Leave(member);
                let warm = self.warm_standby.then(|| watching.warm());
                let mut shutdown = std::pin::pin!(shutdown.fuse());
                loop {
                    let term = tokio::select! {
                        // A shutdown ends the shared election too: stop, rather than take its
                        // end for a failure.
                        biased;
                        () = &mut shutdown => break,
                        term = member.0.next_term() => term,
                    };
                    let Some(term) = term else {
                        // The operator reports why the election ended.
                        tracing::error!(controller = %context.name, "the shared leader election ended; stopping");
                        break;
                    };
                    let stopped = tokio::select! {
                        end = watching.run(&mut shutdown, warm.as_ref()) => {
                            if end == TermEnd::LoopEnded {
                                tracing::error!(controller = %context.name, "the watch loop of this leadership term ended on its own");
                            }
                            true
                        }
                        () = member.0.ended(term) => {
                            tracing::warn!(controller = %context.name, "the shared lease was lost; abandoning in-flight passes");
                            false
                        }
                    };
                    // Before the lease is released (on shutdown), or while the fence is still
                    // open (the lease was lost): writes after that are refused.
                    settle_and_flush().await;
                    member.0.settled(term);
                    if stopped {
                        break;
                    }
                }
                Ok(RunOutcome::Stopped)
            }
            (Some(election), _) => {
                let election = election.with_budget(self.budget.clone());
                // A standby waiting for the lease is ready.
                self.state.send_replace(ControllerState::Standby);
                let warm = self.warm_standby.then(|| watching.warm());
                let (watching, warm) = (&watching, warm.as_ref());
                election
                    .run_while_leader(
                        shutdown,
                        |stopped| async move {
                            if watching.run(stopped, warm).await == TermEnd::LoopEnded {
                                tracing::error!(controller = %watching.context.name, "the watch loop of this leadership term ended on its own");
                            }
                        },
                        settle_and_flush,
                    )
                    .await
                    .map(|()| RunOutcome::Stopped)
                    .map_err(ControllerError::from)
            }
        }
    }
}

/// Leaves a shared lease when dropped (also when the run panics or its future is dropped), so
/// that the election waits for it no more.
struct Leave(leader::Member);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.stopped();
    }
}

/// How [`Controller::run_loop`] returned.
enum RunOutcome {
    /// Stopped as asked.
    Stopped,
    /// The watch loop ended on its own (without leader election, nothing restarts it).
    LoopEnded,
}

/// Sets a controller's final state when its run ends; when the run future is dropped before it
/// ended, [`ControllerState::Failed`].
struct RunEnd {
    state: watch::Sender<ControllerState>,
    controller: String,
    ended: bool,
}

impl RunEnd {
    fn set(&mut self, state: ControllerState) {
        self.ended = true;
        self.state.send_replace(state);
    }

    fn failed(&mut self, reason: String) {
        let controller = self.controller.clone();
        self.set(ControllerState::Failed { controller, reason });
    }
}

impl Drop for RunEnd {
    fn drop(&mut self) {
        if !self.ended {
            self.failed("its run future was dropped before it returned".to_owned());
        }
    }
}

/// SIGTERM (what Kubernetes sends a terminating pod) or Ctrl-C. After it, a second one exits the
/// process at once (status 1), as controller-runtime's manager does: a shutdown that hangs is
/// never the only way out.
pub(crate) async fn termination_signal() {
    first_termination_signal().await;
    tracing::info!("shutting down; a second SIGTERM or Ctrl-C exits at once");
    tokio::spawn(async {
        first_termination_signal().await;
        tracing::error!("a second termination signal: exiting without finishing the shutdown");
        std::process::exit(1);
    });
}

/// The next SIGTERM or Ctrl-C.
async fn first_termination_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
