//! Items the macros expand onto. Not a public API: names and signatures change without notice.

pub use ::core;
pub use ::k8s_openapi;
pub use ::kube;
pub use ::std;
