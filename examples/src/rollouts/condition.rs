//! The `UpToDate` condition of a `Rollout`.

/// Reasons of the `UpToDate` condition: whether the live ConfigMap runs the generation the
/// Rollout asks for.
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
    /// The candidate of a new generation is being rendered, applied and verified.
    #[reason(Unknown, initial)]
    Applying,
    /// The candidate is staged and verified; a human has to approve the generation.
    #[reason(False, gate)]
    WaitingForApproval,
    /// The candidate is verified (and approved): it will be promoted next.
    #[reason(Unknown)]
    ReadyToPromote,
    /// The candidate is being copied to the live ConfigMap.
    #[reason(Unknown)]
    Promoting,
    /// The live ConfigMap runs the current generation.
    #[reason(True)]
    Applied,
    /// The generation stayed `Applying` longer than `spec.timeoutSeconds`.
    #[reason(False)]
    RolloutTimeout,
    /// The generation cannot be deployed (its image does not resolve, its candidate vanished).
    #[reason(False)]
    FailedDeploy,
}
