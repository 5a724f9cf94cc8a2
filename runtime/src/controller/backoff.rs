//! The default retry policy: exponential backoff with jitter, per object (by uid), for failed
//! passes and conflicts alike, reset on success.

use std::time::Duration;

/// The first retry delay.
pub const BACKOFF_BASE: Duration = Duration::from_millis(500);
/// The longest retry delay.
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// The delay before retrying an object after its `attempt`-th consecutive failure (1-based):
/// [`BACKOFF_BASE`] doubled per attempt up to [`BACKOFF_MAX`], with "equal jitter" (a uniformly
/// random value in the upper half of that delay), so failures of many objects at once spread out
/// instead of retrying in lockstep.
///
/// ```
/// use std::time::Duration;
/// use kubeward::controller::backoff_delay;
/// let first = backoff_delay(1);
/// assert!(first >= Duration::from_millis(250) && first <= Duration::from_millis(500));
/// assert!(backoff_delay(40) <= Duration::from_secs(300));
/// ```
pub fn backoff_delay(attempt: u32) -> Duration {
    let exponent = attempt.saturating_sub(1).min(20);
    let ceiling = BACKOFF_BASE.saturating_mul(1 << exponent).min(BACKOFF_MAX);
    let half = ceiling / 2;
    half + half.mul_f64(rand::random::<f64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum_with_jitter_in_the_upper_half() {
        for attempt in 1..=30u32 {
            let ceiling = BACKOFF_BASE
                .saturating_mul(1 << (attempt - 1).min(20))
                .min(BACKOFF_MAX);
            for _ in 0..20 {
                let delay = backoff_delay(attempt);
                assert!(
                    delay >= ceiling / 2 && delay <= ceiling,
                    "attempt {attempt}: {delay:?}"
                );
            }
        }
        assert_eq!(
            BACKOFF_BASE.saturating_mul(1 << 10).min(BACKOFF_MAX),
            BACKOFF_MAX
        );
    }
}
