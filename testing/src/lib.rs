//! # kubeward-testing
//!
//! An in-process Kubernetes API server for tests, served over HTTP on loopback so that an
//! unmodified `kube::Client`, `kube::runtime::Controller` and `kubectl` talk to it. Use it as a
//! dev-dependency to test a controller end to end without a cluster:
//!
//! ```toml
//! [dev-dependencies]
//! kubeward-testing = "0.1"
//! ```
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! let server = kubeward_testing::ApiServer::start().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! let created = cms.create(&PostParams::default(), &cm).await?;
//! assert!(created.metadata.uid.is_some());
//! # Ok(()) }
//! ```
//!
//! # What behaves like kube-apiserver
//!
//! - **Metadata**: `uid`, `creationTimestamp`, `generateName` (prefix + 5 random characters),
//!   `managedFields` for every write; custom resources (and CRDs) start at `generation` 1, which
//!   bumps when anything outside `metadata` changes (`status` excluded when the status
//!   subresource is on) and when `deletionTimestamp` is set.
//! - **One cluster-wide resourceVersion**, a string of a number, increasing with every write.
//!   A write that changes nothing is not a write: same resourceVersion, no watch event.
//! - **Validation** (apimachinery `objectmeta.go`, core and coordination validation), 422
//!   `Invalid` with `details.causes[].field` and upstream's messages: names per kind (DNS-1123
//!   subdomain; label for namespaces), `generateName`, label keys and values, annotations
//!   (256 KiB in all), owner references (uid required, one controller), finalizer names;
//!   ConfigMap keys, 1 MiB of data, a key in both `data` and `binaryData`, `immutable`; Secret
//!   `type` defaulting to `Opaque` and immutable, `stringData` folded into `data`, typed secrets'
//!   required keys; Lease durations. Undecodable fields (bad base64, Lease times) are 400 as the
//!   decoder answers. Request bodies over 3 MiB are 413.
//! - **Optimistic concurrency**: PUT with a stale resourceVersion is 409 Conflict; a PUT of a
//!   custom resource (or its status) without one is 422 `must be specified for an update`
//!   (built-ins update unconditionally); a PUT of a missing event creates it (201); a PATCH
//!   conflicts only if it carries `metadata.resourceVersion`. DELETE preconditions (uid,
//!   resourceVersion) are honoured. `dryRun=All` answers without storing.
//! - **Status subresource** (CRD strategy, `apiextensions-apiserver` `strategy.go`): main-resource
//!   writes keep the stored status; `/status` writes keep everything but `status` — including
//!   labels and annotations, exactly as the CRD `statusStrategy.PrepareForUpdate` copies the old
//!   object. Creates drop `status`.
//! - **PATCH**: `json-patch+json` (a `test` of a missing path against `null` passes, as kube-runtime's
//!   `finalizer` relies on), `merge-patch+json`, `apply-patch+yaml` (server-side apply with
//!   conflicts and `force`; `fieldManager` required: 422 `PatchOptions` Invalid as
//!   `ValidatePatchOptions` answers), `strategic-merge-patch+json` is 415 for custom resources;
//!   for built-in kinds it is **accepted and applied as a merge patch** (the maps of the kinds
//!   served here merge the same way; `$patch` directives and list merge keys are not modelled).
//! - **Finalizers**: DELETE sets `deletionTimestamp` (+ `deletionGracePeriodSeconds: 0`) and
//!   answers the object; the object goes when its finalizers become empty; new finalizers on a
//!   deleting object are 422. Without finalizers custom resources answer the deleted object,
//!   built-ins a `Status` of `Success`.
//! - **LIST**: `metadata.resourceVersion` always; `limit`/`continue` (opaque token, 410 Expired
//!   once compacted; `remainingItemCount` only without selectors);
//!   `labelSelector`; `fieldSelector` on `metadata.name`/`metadata.namespace` and, for events,
//!   the `involvedObject.*`/`regarding.*`, `reason`, `type`, `source`, `reportingComponent`
//!   fields (`field label not supported: X` otherwise).
//! - **WATCH**: JSON lines flushed at once; resourceVersion unset or `0` replays the current state
//!   as ADDED; `N` replays the retained changes after `N`; older than the retained history is
//!   HTTP 200 then an `ERROR` event with a 410 `Expired` Status; objects entering or leaving a
//!   selector are ADDED/DELETED; `allowWatchBookmarks` (periodic BOOKMARKs), `timeoutSeconds`,
//!   streaming lists (`sendInitialEvents=true` + `resourceVersionMatch=NotOlderThan`: initial
//!   ADDED events, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"`).
//!   [`ApiServer::compact`] drops the history and ends open watches with `ERROR 410`, so watchers
//!   relist.
//! - **Discovery and CRDs**: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>[/<v>]` (legacy
//!   documents; kubectl falls back to them from aggregated discovery); a minimal `/openapi/v3`
//!   so `kubectl create` delegates field validation to the server. A CRD (POSTed or
//!   [`ApiServer::install_crd`]) is Established and NamesAccepted at once and served at each
//!   served version, scope and status subresource as declared. `kubectl get` gets Tables;
//!   metadata-only clients get `PartialObjectMetadata` (lists, gets and watches).
//! - **Custom resources follow their CRD's structural schema** (apiextensions-apiserver): on
//!   create, update, patch and apply, of the object and of its status, unknown fields are pruned
//!   (kept under `x-kubernetes-preserve-unknown-fields` and in embedded resources' envelopes) and
//!   `default`s applied (also on read, for defaults added later); values are validated with
//!   kube-openapi's messages as 422 Invalid causes — `type`, `nullable`, `enum`, `required`,
//!   `minimum`/`maximum` (and exclusive), `multipleOf`, `minLength`/`maxLength`, `pattern`,
//!   `format` (the string formats apiextensions checks; `isbn*` and `creditcard` are accepted
//!   unchecked), `min`/`maxItems`, `min`/`maxProperties`, `x-kubernetes-int-or-string`,
//!   `x-kubernetes-embedded-resource` (`apiVersion` and `kind` required), list types `set` and
//!   `map` (duplicates rejected) — then `x-kubernetes-validations` CEL rules (the `cel` crate with
//!   the strings, lists and math extensions) with `message`, `messageExpression`, `reason`,
//!   `fieldPath` and transition rules on `oldSelf`, skipped after a blocking error as upstream
//!   does. Updates ratchet: a value equal to its stored counterpart (correlated by property
//!   name and list-map keys) is not re-validated, so rules a CRD tightens later bind only what
//!   changes. A CRD whose rule or pattern does not compile is 422. `fieldValidation=Strict` answers
//!   400 naming unknown and duplicate fields (`strict decoding error: unknown field
//!   "spec.foo"`), `Warn` (the default) sends `Warning: 299 - "unknown field \"spec.foo\""`,
//!   `Ignore` prunes silently; duplicate JSON keys are reported for every kind.
//! - **Built-ins**: namespaces (`default`, `kube-system`, `kube-public`, `kube-node-lease` exist;
//!   creating in a missing namespace is 404), configmaps, secrets, serviceaccounts, leases,
//!   events in `events.k8s.io/v1` and `v1` from one store (validation of each version, the core
//!   field mapping), with a TTL (default 1 h) re-armed by every write.
//! - **Authentication**: bearer tokens configured with [`ApiServerBuilder::token`] name users and
//!   groups (service accounts get theirs, everyone `system:authenticated`); once any are
//!   configured, an unknown or missing token is 401 `Unauthorized` (or `system:anonymous` with
//!   [`ApiServerBuilder::anonymous_auth`]), and [`ApiServer::client`] carries an administrator
//!   token. Without configured tokens, requests without a known token are `system:admin` in
//!   `system:masters`. [`ApiServer::client_as`] mints a token for any user;
//!   [`ApiServer::write_kubeconfig_with_token`] writes a kubeconfig bearing one (kube-rs sends it;
//!   kubectl sends credentials only over TLS, so with kubectl use `--as`).
//! - **Impersonation**: `Impersonate-User`, `-Group`, `-Uid` and `-Extra-*` headers (kubectl
//!   `--as`, `--as-group`), each value checked with the `impersonate` verb on `users`, `groups`,
//!   `serviceaccounts`, `uids` or `userextras/<key>` and refused with upstream's 403 message;
//!   groups without a user are 400.
//! - **Authorization** as `--authorization-mode=RBAC` decides: `system:masters` may do anything;
//!   everyone else is authorized by the Roles, ClusterRoles, RoleBindings and
//!   ClusterRoleBindings (`rbac.authorization.k8s.io/v1`) stored in the server — validated and
//!   defaulted as upstream — with the real 403 messages (`: RBAC: clusterrole… "x" not found`
//!   appended when a bound role is missing). A fresh server stores `cluster-admin` (bound to
//!   `system:masters`), `system:discovery`, `system:public-info-viewer` and `system:basic-user`.
//!   Non-resource requests (discovery, `/version`) are authorized too. Clients from
//!   [`ApiServer::client_with_rules`] are decided by their own rules only (non-resource requests
//!   unchecked). The `OwnerReferencesPermissionEnforcement` admission (blocking an owner's
//!   deletion needs `update` on its `finalizers`; changing an object's owner references needs
//!   `delete` on it) applies to everyone but `system:masters`, on creates, updates and merge
//!   patches. Writing a role or binding that grants more than the writer holds is 403 (`user
//!   "u" (groups=[…]) is attempting to grant RBAC permissions not currently held:` and the
//!   missing rules) unless the writer may `escalate` the role or `bind` the bound one.
//! - **Self reviews**: `SelfSubjectAccessReview`, `SelfSubjectRulesReview` and
//!   `SelfSubjectReview` answer with the same decisions and rules, so `kubectl auth can-i`
//!   (`--list`) and `kubectl auth whoami` work, with `--as` too.
//! - **Errors** are `Status` objects with the real reason, code, details and message.
//! - **Content types**: JSON everywhere; YAML request bodies for creates, updates and apply
//!   patches; protobuf request bodies for ConfigMap, Secret and Namespace (what
//!   `kubectl create configmap|secret|namespace` sends), the RBAC kinds and the self reviews;
//!   responses are JSON.
//!
//! # Alert rules
//!
//! [`assert_alert_rules`] checks the rules `kubeward::alerts` generates for a controller with
//! `promtool`: they load, their scenarios pass, and removing any guard fails its scenario.
//!
//! # What is not modelled
//!
//! - Of CRD schemas: the warnings upstream sends for CEL failures it ratchets (here they pass
//!   silently), `allOf`/`anyOf`/`oneOf`/`not`, `optionalOldSelf`, CEL cost
//!   budgets and Kubernetes' own CEL libraries (quantity, URL, IP, `format` functions); the
//!   validation of a CRD's schema beyond compiling its rules and patterns.
//! - Conversion between CRD versions (objects are served at the requested version as stored).
//! - Garbage collection of owner references, propagation policies, graceful deletion periods;
//!   deleting a namespace deletes its contents at once (no `Terminating` phase); deleting a CRD
//!   deletes its objects at once.
//! - Watch caches' consistency rules beyond the above (`resourceVersionMatch` on lists is
//!   ignored: lists are always served from the latest state; continue tokens expire (410) only
//!   across [`ApiServer::compact`], not by the history limit),
//!   protobuf beyond those kinds, `/api/v1/watch/...` legacy paths, aggregated discovery.
//! - Of access control: TLS and so client certificates (the server is plain HTTP, so kubectl
//!   sends no kubeconfig credentials to it); service-account tokens issued by the server
//!   (TokenRequest) — tokens are configured or minted by the test; ClusterRole aggregation
//!   (`aggregationRule` is stored, not resolved) and the aggregated `admin`/`edit`/`view` roles;
//!   SubjectAccessReview and LocalSubjectAccessReview; the `Node` authorizer.

#![deny(missing_docs)]

mod alert_rules;
mod api;
mod apply;
mod auth;
mod authz;
mod discovery;
mod events_api;
mod faults;
mod handler;
mod kubeconfig;
mod metrics;
mod openapi;
mod patch;
mod protobuf;
mod rbac;
mod requests;
mod resources;
mod routes;
mod schema;
mod selector;
mod server;
mod shared;
mod status;
mod store;
mod table;
mod validation;
mod wait;
mod watch;
mod yaml;

pub use alert_rules::assert_alert_rules;
pub use faults::{Fault, FaultAction, Faults, PathMatch};
pub use metrics::{Sample, metric_samples, metric_value};
pub use requests::{RequestLog, RequestRecord};
pub use server::{ApiServer, ApiServerBuilder, ServerError};
pub use status::ApiError;
pub use wait::{ConditionMatch, EventMatch, WaitError, wait_for_condition, wait_for_event};
