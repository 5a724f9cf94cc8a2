//! One Lease for several controllers ([`Operator::with_leader_election`](crate::operator::Operator::with_leader_election)):
//! the election runs once, and every controller of the operator reconciles exactly while it is
//! held.
//!
//! Each time the lease is acquired a new **term** starts: every member controller starts a watch
//! term of its own. The term ends
//! - on shutdown: each controller stops gracefully (in-flight passes get their grace, their
//!   status writes and events land, its event series are flushed) and reports the term settled;
//!   the lease is released only once every member has — no member writes after the release;
//! - when the lease is lost: every member drops its passes at once (abandoned), settles what
//!   they left under way while the [`Fence`] is still open, and reports the term settled.

use std::sync::Arc;

use tokio::sync::watch;

use super::{Fence, LeaderElection, LeaderError};

/// The state shared between the election and its members.
#[derive(Debug)]
struct Terms {
    /// The term being led (its number), or `None` while the lease is not held.
    current: watch::Sender<Option<u64>>,
    /// Each member's last settled term; `None` once the member has stopped.
    settled: watch::Sender<Vec<Option<u64>>>,
    /// True once the election has ended (returned, failed, or was dropped): no term starts any
    /// more.
    over: watch::Sender<bool>,
}

// Run by the `Operator`, which needs the `prometheus` feature; the members are controllers.
#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
/// The election of a lease shared by several controllers: run it with [`SharedElection::run`];
/// each controller joins it with [`SharedElection::member`] before.
#[derive(Debug)]
pub(crate) struct SharedElection {
    election: LeaderElection,
    terms: Arc<Terms>,
}

/// A controller's membership of a [`SharedElection`].
#[derive(Debug, Clone)]
pub(crate) struct Member {
    terms: Arc<Terms>,
    fence: Fence,
    slot: usize,
}

#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
impl SharedElection {
    /// The election of `election`'s lease, with no members yet.
    pub(crate) fn new(election: LeaderElection) -> Self {
        Self {
            election,
            terms: Arc::new(Terms {
                current: watch::Sender::new(None),
                settled: watch::Sender::new(Vec::new()),
                over: watch::Sender::new(false),
            }),
        }
    }

    /// A new member (a controller that reconciles only while the lease is held).
    pub(crate) fn member(&self) -> Member {
        let mut slot = 0;
        self.terms.settled.send_modify(|settled| {
            slot = settled.len();
            settled.push(Some(0));
        });
        Member {
            terms: self.terms.clone(),
            fence: self.election.fence(),
            slot,
        }
    }

    /// Holds the lease whenever it can until `shutdown` completes, running a term of every
    /// member each time it holds it; see the [module](self).
    ///
    /// # Errors
    /// [`LeaderError`] when the election's configuration is invalid.
    pub(crate) async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> Result<(), LeaderError> {
        let terms = self.terms.clone();
        // The number of the last term started.
        let started = std::sync::atomic::AtomicU64::new(0);
        let started = &started;
        self.election
            .run_while_leader(
                shutdown,
                |stopped| {
                    let term = started.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    let terms = terms.clone();
                    async move {
                        terms.current.send_replace(Some(term));
                        // Dropped at once when the lease is lost: the members abandon the term.
                        let _ended = TermEnd(&terms.current);
                        stopped.await;
                        // Shut down: the members stop gracefully on the same signal; the term
                        // ends once each has settled it.
                        terms.all_settled(term).await;
                    }
                },
                || {
                    let terms = terms.clone();
                    let term = started.load(std::sync::atomic::Ordering::SeqCst);
                    async move { terms.all_settled(term).await }
                },
            )
            .await
    }
}

impl Drop for SharedElection {
    /// The election has ended, however it did (also when its task panicked or was aborted):
    /// the members wait for no further term.
    fn drop(&mut self) {
        self.terms.over.send_replace(true);
    }
}

/// Ends the current term when dropped.
#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
struct TermEnd<'a>(&'a watch::Sender<Option<u64>>);

impl Drop for TermEnd<'_> {
    fn drop(&mut self) {
        self.0.send_replace(None);
    }
}

#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
impl Terms {
    /// Waits until every member has settled `term` or stopped.
    async fn all_settled(&self, term: u64) {
        let mut settled = self.settled.subscribe();
        let _ = settled
            .wait_for(|members| members.iter().all(|m| m.is_none_or(|t| t >= term)))
            .await;
    }
}

impl Member {
    /// The fence of the shared lease: open while it is held.
    pub(crate) fn fence(&self) -> Fence {
        self.fence.clone()
    }

    /// Waits for the next term; its number, or `None` once the election has ended (it failed,
    /// returned, or was dropped): no term comes any more.
    pub(crate) async fn next_term(&self) -> Option<u64> {
        let mut current = self.terms.current.subscribe();
        let mut over = self.terms.over.subscribe();
        tokio::select! {
            biased;
            term = current.wait_for(Option::is_some) => term.ok().and_then(|t| *t),
            _ = over.wait_for(|over| *over) => None,
        }
    }

    /// Completes when `term` is no longer the one being led (the lease was lost, or the
    /// election ended it).
    pub(crate) async fn ended(&self, term: u64) {
        let mut current = self.terms.current.subscribe();
        let _ = current.wait_for(|t| *t != Some(term)).await;
    }

    /// This member has settled `term`: its writes are done.
    pub(crate) fn settled(&self, term: u64) {
        self.terms
            .settled
            .send_modify(|settled| settled[self.slot] = Some(term));
    }

    /// This member has stopped: the election waits for it no more.
    pub(crate) fn stopped(&self) {
        self.terms
            .settled
            .send_modify(|settled| settled[self.slot] = None);
    }
}

#[cfg(all(test, feature = "prometheus"))]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A client of a server that is never reached: the elections below end before any request.
    fn client() -> kube::Client {
        let url = "http://127.0.0.1:1".parse().expect("a valid URL");
        kube::Client::try_from(kube::Config::new(url)).expect("a client")
    }

    #[tokio::test]
    async fn a_member_waits_for_no_term_once_the_election_has_ended() {
        let election = LeaderElection::new(client(), "default", "operator", "pod").with_timings(
            Duration::from_secs(10),
            Duration::from_secs(10),
            Duration::from_secs(2),
        );
        let shared = SharedElection::new(election);
        let member = shared.member();
        let ended = shared.run(std::future::pending()).await;
        assert!(
            matches!(ended, Err(LeaderError::InvalidTimings { .. })),
            "{ended:?}"
        );
        // Bounded only so that a broken build fails instead of hanging.
        let next = tokio::time::timeout(Duration::from_secs(30), member.next_term()).await;
        assert_eq!(next.expect("next_term ends with the election"), None);
    }
}
