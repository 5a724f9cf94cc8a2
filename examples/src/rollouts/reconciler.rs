//! The rollout reconciler, written with `#[kubeward::reconciler]` and `#[step]`.
//!
//! One pass makes at most one transition of `UpToDate`, so every stage is its own status write
//! and its own event, and `kubectl describe` tells the whole story:
//!
//! | from | pass does | to |
//! |---|---|---|
//! | any, at an older generation | — | `Applying` |
//! | `Applying` | render, apply, verify the candidate | `WaitingForApproval` (Manual, not approved), `ReadyToPromote`, `FailedDeploy` (render refused), `RolloutTimeout` |
//! | `WaitingForApproval` | read the approval annotation | `ReadyToPromote` |
//! | `ReadyToPromote` | — | `Promoting` |
//! | `Promoting` | promote the candidate to the live ConfigMap, prune the candidate | `Applied`, `FailedDeploy` (candidate gone) |
//! | `FailedDeploy` | render again (the image may exist by now) | `Applying` |
//!
//! A pass that fails returns the error as well as setting the condition: the runtime writes the
//! condition, publishes its transition event once, and publishes the error as a `ReconcileFailed`
//! Warning whose repeats (the retries with backoff) aggregate into one event series.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kubeward::clock::{SharedClock, SystemClock};
use kubeward::{Action, Pass};

use super::children::{self, RenderError};
use super::condition::{UpToDate, up_to_date};
use super::resource::{APPROVED_GENERATION, Rollout};

/// The controller's name: events' `reportingController` and the `controller` metric label.
pub const CONTROLLER: &str = "demo.kubeward.dev/rollouts";
/// The finalizer that keeps a deleted Rollout until its children are deleted.
pub const FINALIZER: &str = "demo.kubeward.dev/cleanup";
/// How soon the next stage of a rollout runs by default.
pub const DEFAULT_STAGE_DELAY: Duration = Duration::from_secs(2);

/// Why a pass failed. Terminal when its [`RenderError`] is (the derive asks the source).
#[derive(Debug, thiserror::Error, kubeward::Terminal)]
pub enum Error {
    /// The generation cannot be rendered; it stays `FailedDeploy` until it renders (a missing
    /// image, retried with backoff) or the spec changes (an invalid one: terminal, not retried).
    #[error("cannot deploy generation {generation}")]
    Render {
        /// The generation that failed.
        generation: i64,
        /// Why.
        #[source]
        source: RenderError,
    },
    /// The candidate ConfigMap disappeared between verification and promotion.
    #[error("candidate ConfigMap {name} was deleted before it could be promoted")]
    CandidateGone {
        /// Its name.
        name: String,
    },
    /// A request to the API server failed; the pass is retried with backoff.
    #[error("API request failed")]
    Api(#[from] kube::Error),
    /// A child could not be applied or deleted; the pass is retried with backoff.
    #[error("could not write a child ConfigMap")]
    Child(#[from] kubeward::children::ChildError),
}

/// The rollout operator. It reads and writes its children through each pass (`owns(ConfigMap)`),
/// so it holds no client of its own.
pub struct Rollouts {
    stage_delay: Duration,
    clock: SharedClock,
}

impl Default for Rollouts {
    fn default() -> Self {
        Self::new()
    }
}

impl Rollouts {
    /// A rollout operator with the default stage delay and the system clock.
    pub fn new() -> Self {
        Self {
            stage_delay: DEFAULT_STAGE_DELAY,
            clock: Arc::new(SystemClock),
        }
    }

    /// Runs the next stage of a rollout `delay` after the previous one (default
    /// [`DEFAULT_STAGE_DELAY`]; the scripted scenario uses a few milliseconds).
    #[must_use]
    pub fn with_stage_delay(mut self, delay: Duration) -> Self {
        self.stage_delay = delay;
        self
    }

    /// Measures rollout timeouts with `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }
}

#[kubeward::reconciler(
    resource = Rollout,
    controller = "demo.kubeward.dev/rollouts",
    finalizer = "demo.kubeward.dev/cleanup",
    conditions(UpToDate),
    info(image = "spec.image"),
    owns(ConfigMap),
    // The one annotation a pass reads: its change (an approval) starts a pass; a change of any
    // other label or annotation, or of the status, starts none.
    reads(annotations("demo.kubeward.dev/approved-generation")),
)]
impl Rollouts {
    async fn apply(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> {
        use up_to_date::{
            Applied, Applying, FailedDeploy, Promoting, ReadyToPromote, RolloutTimeout, State,
            WaitingForApproval,
        };

        if rollout.spec.suspend {
            pass.skip("suspended");
            return Ok(Action::await_change());
        }
        let generation = rollout.metadata.generation.unwrap_or_default();
        let name = rollout.name_any();
        let next = Action::requeue(self.stage_delay);
        let state = pass.condition::<UpToDate>();

        // A new generation (re)starts the rollout, whatever stage the previous one was in.
        if state.stored().observed_generation() != Some(generation) {
            let message = format!(
                "rolling out generation {generation}: {} with {} replicas",
                rollout.spec.image, rollout.spec.replicas
            );
            // Every state may go back to `Applying` (`#[transitions]` declares it from each one,
            // and it is the start state), so the run-time-checked `try_to` covers them all.
            if let Some(restart) = state.try_to(UpToDate::Applying, message) {
                pass.set(restart);
            }
            return Ok(next);
        }

        match state {
            State::Applying(now) => {
                let timeout = Duration::from_secs(rollout.spec.timeout_seconds);
                if let Some(since) = now.since()
                    && self.clock.now().duration_since(since).as_secs_f64() > timeout.as_secs_f64()
                {
                    pass.set(now.to(
                        RolloutTimeout,
                        format!(
                            "generation {generation} was not ready within {}s",
                            timeout.as_secs()
                        ),
                    ));
                    return Ok(Action::await_change());
                }
                let candidate = match self.render(rollout) {
                    Ok(candidate) => candidate,
                    Err(source) => {
                        pass.set(now.to(FailedDeploy, source.to_string()));
                        return Err(Error::Render { generation, source });
                    }
                };
                #[step("apply")]
                pass.apply_child(&candidate).await?;
                #[step("verify")]
                let stored = children::candidate(pass, rollout).await?;
                if !stored.is_some_and(|c| children::is_current(&c, rollout)) {
                    return Ok(next);
                }
                if rollout.approved() {
                    pass.set(now.to(
                        ReadyToPromote,
                        format!("generation {generation} is staged and verified"),
                    ));
                    return Ok(next);
                }
                pass.set(now.to(
                    WaitingForApproval,
                    format!(
                        "generation {generation} is staged as ConfigMap {}; approve it with: \
                         kubectl annotate rollout {name} {APPROVED_GENERATION}={generation} --overwrite",
                        children::candidate_name(&name),
                    ),
                ));
                Ok(Action::await_change())
            }
            State::WaitingForApproval(now) => {
                if !rollout.approved() {
                    return Ok(Action::await_change());
                }
                pass.set(now.to(
                    ReadyToPromote,
                    format!("generation {generation} was approved"),
                ));
                Ok(next)
            }
            State::ReadyToPromote(now) => {
                pass.set(now.to(
                    Promoting,
                    format!(
                        "promoting generation {generation} to ConfigMap {}",
                        children::live_name(&name)
                    ),
                ));
                Ok(next)
            }
            State::Promoting(now) => match self.promote(rollout, pass).await? {
                Some(live) => {
                    // The live ConfigMap is the one child a converged Rollout wants: the
                    // promoted candidate is pruned (and with it any child no generation wants).
                    pass.prune_children::<ConfigMap>(&[&children::live_name(&name)])
                        .await?;
                    let image = children::image_of(&live).unwrap_or_default().to_owned();
                    pass.set(now.to(
                        Applied,
                        format!(
                            "generation {generation} is live: {image} with {} replicas",
                            rollout.spec.replicas
                        ),
                    ));
                    pass.set_status_field("liveImage", image);
                    Ok(Action::await_change())
                }
                None => {
                    let error = Error::CandidateGone {
                        name: children::candidate_name(&name),
                    };
                    pass.set(now.to(FailedDeploy, error.to_string()));
                    Err(error)
                }
            },
            State::FailedDeploy(now) => match self.render(rollout) {
                // The image resolves now: start over.
                Ok(_) => {
                    pass.set(now.to(
                        Applying,
                        format!("retrying generation {generation}: it renders now"),
                    ));
                    Ok(next)
                }
                // Still failing: the condition stays, the failure event's series grows.
                Err(source) => Err(Error::Render { generation, source }),
            },
            // Converged: the live ConfigMap stays as promoted (a deleted or edited one starts
            // this pass, `owns(ConfigMap)`, and is applied again); wait for a new generation.
            State::Applied(_) => {
                #[step("restore")]
                self.restore_live(rollout, pass).await?;
                Ok(Action::await_change())
            }
            // Timed out: wait for a new generation.
            State::RolloutTimeout(_) => Ok(Action::await_change()),
            // At the current generation, the condition has a reason of this vocabulary.
            State::Absent(_) | State::Unrecognized(_) => Ok(next),
        }
    }

    async fn cleanup(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> {
        #[step("delete")]
        children::delete_all(pass, rollout).await?;
        Ok(Action::await_change())
    }

    /// Whether the Rollout is suspended (for the `kubeward_object_suspended` metric).
    fn is_suspended(rollout: &Rollout) -> bool {
        rollout.spec.suspend
    }

    /// Renders the candidate ConfigMap of the current generation.
    #[step("render")]
    fn render(&self, rollout: &Rollout) -> Result<ConfigMap, RenderError> {
        children::render(rollout)
    }

    /// Copies the verified candidate to the live ConfigMap; `None` when the candidate is gone.
    #[step("promote")]
    async fn promote(
        &self,
        rollout: &Rollout,
        pass: &Pass<Rollout>,
    ) -> Result<Option<ConfigMap>, Error> {
        let Some(candidate) = children::candidate(pass, rollout).await? else {
            return Ok(None);
        };
        let live = children::promoted(&candidate, rollout);
        pass.apply_child(&live).await?;
        Ok(Some(live))
    }

    /// Applies the live ConfigMap of the promoted generation again: a no-op while it is as
    /// promoted, the restore when it was deleted or edited.
    async fn restore_live(&self, rollout: &Rollout, pass: &Pass<Rollout>) -> Result<(), Error> {
        let generation = rollout.metadata.generation.unwrap_or_default();
        let rendered =
            children::render(rollout).map_err(|source| Error::Render { generation, source })?;
        pass.apply_child(&children::promoted(&rendered, rollout))
            .await?;
        Ok(())
    }
}
