//! Access through credentials, in kube-apiserver's filter order: authentication ([`authn`]: who
//! the bearer token names, 401 otherwise), impersonation ([`impersonation`]: who the request acts
//! as), authorization ([`authorizer`]: `system:masters`, then RBAC over the stored Roles,
//! ClusterRoles and bindings, resolved by [`resolver`]), then the self reviews ([`reviews`]) that
//! ask the same questions; writes of roles and bindings are checked for
//! privilege escalation ([`escalation`]). A fresh server stores the default roles of [`bootstrap`]; [`tls`] serves
//! https and authenticates client certificates.

pub(crate) mod authn;
pub(crate) mod authorizer;
pub(crate) mod bootstrap;
pub(crate) mod escalation;
pub(crate) mod impersonation;
pub(crate) mod resolver;
pub(crate) mod reviews;
pub(crate) mod tls;
pub(crate) mod user;
