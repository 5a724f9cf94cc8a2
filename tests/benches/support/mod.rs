//! What the benchmarks of real controller work share (`lifecycle`, `scale`): the workload (a
//! custom resource, its child ConfigMap, its `Ready` condition and the stages it walks), the
//! kubeward controller that runs it, the anchor (a hand-written kube-runtime controller doing
//! the same work), the driver that creates, edits and deletes objects, the tally of the server's
//! request log, and a counting allocator.
//!
//! Each bench target uses a part of it.
#![allow(dead_code)]

pub mod alloc;
pub mod anchor;
pub mod drive;
pub mod requests;
pub mod scrape;
pub mod ward;
pub mod workload;
