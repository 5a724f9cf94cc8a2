//! An in-process Kubernetes API server for tests, served over HTTP on loopback so that an
//! unmodified `kube::Client`, `kube::runtime::Controller` and `kubectl` talk to it, and the pure
//! rules it applies (selectors, patches, server-side apply, RBAC, the events API).
//!
//! It reproduces what clients observe of kube-apiserver: server-owned metadata, one
//! cluster-wide resourceVersion, optimistic concurrency, the status subresource, patches,
//! finalizers, selectors, watches with their `410 Expired` and bookmarks, discovery, CRDs,
//! events in both API versions with a TTL; plus fault injection and a request log.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! let server = kubeward::testing::ApiServer::start().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! let created = cms.create(&PostParams::default(), &cm).await?;
//! assert!(created.metadata.uid.is_some());
//! # Ok(()) }
//! ```

pub mod apply;
pub mod events_api;
pub mod patch;
pub mod rbac;
pub mod selector;

mod api;
mod authz;
mod discovery;
mod faults;
mod kubeconfig;
mod requests;
mod resources;
mod server;
mod standin;
mod status;
mod store;
mod table;
mod watch;

pub use faults::{Fault, FaultAction, Faults, PathMatch};
pub use requests::{RequestLog, RequestRecord};
pub use server::{ApiServer, ApiServerBuilder, ServerError};
pub use status::ApiError;
