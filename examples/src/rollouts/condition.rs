//! The `UpToDate` condition of a `Rollout`.

/// Reasons of the `UpToDate` condition: whether the Rollout's Deployment runs the generation the
/// Rollout asks for, on every replica.
///
/// A generation is staged in the paused Deployment (its template recorded, nothing rolled out),
/// promoted by resuming the Deployment, and verified on the Deployment's status (every replica
/// updated and available, none old) — see [`reconciler`](super::reconciler).
///
/// Each reason fixes the status it implies; the event of a transition into it is a Warning for
/// False and Normal otherwise, except `WaitingForApproval`: a `gate` (the rollout waits for a
/// human), not a failure, so its event is Normal, its metric class `waiting`, and it pages nobody.
///
/// A rollout walks `Applying` → (`WaitingForApproval` →) `ReadyToPromote` → `Promoting` →
/// `Applied`; a new generation sends it back to `Applying` from anywhere. Only the declared
/// transitions compile: `pass.condition::<UpToDate>()` offers `to(..)` only for them.
#[kubeward::condition(type = "UpToDate")]
#[transitions(
    Applying -> WaitingForApproval | ReadyToPromote | FailedDeploy | RolloutTimeout,
    WaitingForApproval -> ReadyToPromote | Applying,
    ReadyToPromote -> Promoting | Applying,
    Promoting -> Applied | FailedDeploy | Applying,
    Applied -> Applying,
    FailedDeploy | RolloutTimeout -> Applying,
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpToDate {
    /// A new generation is being rendered and staged: applied to the paused Deployment, until
    /// the Deployment controller has recorded its template.
    #[reason(Unknown, initial)]
    Applying,
    /// The generation is staged in the paused Deployment; a human has to approve it.
    #[reason(False, gate)]
    WaitingForApproval,
    /// The generation is staged (and approved): it will be promoted next.
    #[reason(Unknown)]
    ReadyToPromote,
    /// The Deployment is resumed and rolls the generation out.
    #[reason(Unknown)]
    Promoting,
    /// The Deployment runs the current generation on every replica, all available.
    #[reason(True)]
    Applied,
    /// The generation stayed `Applying` (not staged) longer than `spec.timeoutSeconds`.
    #[reason(False)]
    RolloutTimeout,
    /// The generation cannot be deployed: its spec is invalid, a pod of it does not start (the
    /// kubelet cannot pull its image, its container keeps crashing), or its Deployment exceeded
    /// its progress deadline.
    #[reason(False)]
    FailedDeploy,
}
