//! The real backend of a [`Cluster`](crate::Cluster): a control plane built from Kubernetes'
//! own binaries, behind the fault proxy.

mod assets;
mod control_plane;
mod kwok;
mod process;
mod proxy;
mod simulated;

pub use assets::ASSETS_VARIABLE;
pub(crate) use assets::Assets;
pub(crate) use control_plane::{ADMIN_USER, ControlPlane};
pub(crate) use proxy::Proxy;
pub(crate) use simulated::set_kubelet_running;
