//! Procedural macros for kubeward.
//!
//! The `#[reconciler]`, `#[step]` and `#[condition]` attributes live here; they expand onto the
//! public items of the `kubeward` runtime crate and its hidden `__private` module. Use them
//! through `kubeward` (`#[kubeward::reconciler]`), which re-exports them.
//!
//! Each macro has a parse (`ast`), a validation (`valid`) and an expansion (`expand`) module;
//! this file only converts between `proc_macro` and `proc_macro2` token streams.

extern crate proc_macro;

mod condition;
mod reconciler;
mod step;
mod terminal;
mod util;

use proc_macro::TokenStream;

/// Declares a condition vocabulary on an enum: one unit variant per reason, each with the status
/// it implies, and the transitions allowed between them.
///
/// ```rust,ignore
/// #[kubeward::condition(type = "UpToDate")]          // `type` defaults to the enum's name
/// #[transitions(
///     Applied -> Applying | WaitingForApproval,
///     WaitingForApproval | FailedDeploy -> Applying,
///     Applying -> Applied | FailedDeploy,
/// )]
/// pub enum UpToDate {
///     #[reason(Unknown, initial)]      Applying,      // start states: `initial`, else the first reason
///     #[reason(False, gate)]           WaitingForApproval, // a human gate: Normal, class `waiting`
///     #[reason(True)]                  Applied,
///     #[reason(False)]                 FailedDeploy,  // False -> Warning unless overridden
/// }
/// ```
///
/// `event = Normal | Warning` overrides a reason's event type (the healthy `NotStalled` of a
/// kstatus-style `Stalled` condition is `#[reason(False, event = Normal)]`, its failure
/// `#[reason(True, event = Warning)]`). `gate` marks a reason that parks the object until a
/// human acts: its event is Normal and only gates are classed `waiting` in the object metrics,
/// which the generated alert rules leave alone; a False, Normal reason that is not a gate is a
/// healthy state (`done`).
///
/// Generates, beside the enum:
/// - a module named after it (`up_to_date`) holding `VOCABULARY` (the runtime data), a unit type
///   per reason (`up_to_date::Applying`), the typed `State` and its `Now<R>` values;
/// - `impl kubeward::vocabulary::ConditionType for UpToDate`, so `pass.condition::<UpToDate>()`
///   returns an `up_to_date::State`: `Absent(now)` (offers the start states), one value per
///   reason (offers the declared targets and staying put) and `Unrecognized(now)` (a reason an
///   older version wrote; offers the start states). `now.to(up_to_date::Applying, "message")`
///   returns the `DesiredCondition` to pass to `pass.set(..)`; `now` derefs to the stored
///   condition (`now.message()`, `now.since()`);
/// - `UpToDate::Applied.reason()`, `.status()`, `.event_type()`, `.declaration()` and
///   `UpToDate::mermaid()`.
///
/// Compile errors, each at the offending token: invalid condition type or reason (the API
/// server's rules; reasons also at most 128 bytes, as they become event reasons), a `gate` with
/// `event = Warning`, a transition
/// endpoint that is not a reason, duplicate reasons or transitions, a reason unreachable from the
/// start states, and an undeclared transition at its use (`now.to(..)`), naming the condition,
/// both reasons and the allowed targets. `crate = "path"` reaches the runtime through a facade.
#[proc_macro_attribute]
pub fn condition(args: TokenStream, input: TokenStream) -> TokenStream {
    condition::condition(args.into(), input.into()).into()
}

/// Times a fn as a named step of the current reconcile pass; outside a pass it only runs the fn.
///
/// ```rust,ignore
/// #[kubeward::step("deploy")]
/// async fn deploy(&self, manifest: &Manifest) -> Result<(), Error> { /* ... */ }
///
/// #[kubeward::step("render")]
/// fn render(rollout: &Rollout) -> anyhow::Result<Manifest> { /* ... */ }
/// ```
///
/// The signature is re-emitted as written; the body runs inside `kubeward::__private::step` (or
/// `try_step`, `step_sync`, `try_step_sync`). A fn without a receiver also gets a hidden const
/// beside it naming its step, which `#[reconciler(steps(..))]` reads (so `#[step]` does not go on
/// an associated fn without `self` in a trait impl, where no such const may stand). A return type written `Result<..>` or
/// `path::Result<..>` makes an `Err` a failed step. The name (lowercase letters, digits, `_`,
/// `-`: it is a metric label value) is checked at compile time. A sync fn that returns a future
/// (`impl Future<..>`, `Pin<Box<dyn Future<..>>>`, `BoxFuture<..>`) is a compile error: the step
/// would time building the future, not running it; make it an `async fn`.
///
/// Inside a `#[kubeward::reconciler]` body, `#[step("name")]` also goes on a statement:
/// `let m = render(r)?;` times `render(r)` (the `?` still returns from the enclosing fn) and
/// `self.deploy(&m).await?;` times the awaited future. Without `?` (`let r = f().await;`) the
/// step fails when the value is an `Err`, and completes for any other value. `?`, `.await` and
/// `return` elsewhere in
/// such a statement are compile errors: move that code into a `#[step]` fn.
#[proc_macro_attribute]
pub fn step(args: TokenStream, input: TokenStream) -> TokenStream {
    step::step(args.into(), input.into()).into()
}

/// Generates a `kubeward::Reconciler` from a declaration on an impl block (`async fn apply`,
/// optional `async fn cleanup`) or on a single async reconcile fn.
///
/// ```rust,ignore
/// #[kubeward::reconciler(
///     resource = Rollout,                            // required
///     controller = "demo.kubeward.dev/rollouts",     // required: reportingController, metric label
///     finalizer = "demo.kubeward.dev/cleanup",       // required with `cleanup`
///     conditions(UpToDate),                          // the vocabularies it manages (object metrics)
///     steps(render, helpers::deploy),                // `#[step]` fns outside the impl it calls
///     error = Error,                                 // when not readable from `Result<Action, E>`
///     timeout = "30s",                               // reconcile timeout of a pass (ms, s, m, h)
///     info(image = "spec.image"),                    // fields as labels of `kubeward_object_info`
///     kstatus(current_at(up_to_date::WaitingForApproval), stalled_after = 5), // or `kstatus = false`
///     owns(Deployment, Service, whole(ConfigMap)),   // children: watched, applied, pruned
///     watches(Pod, map = pod_rollout, labels = "demo.kubeward.dev/rollout"), // one per kind
///     reads(annotations("demo.kubeward.dev/approved-generation")), // the labels/annotations read
///     crate = "::my_facade::kubeward",               // when kubeward is re-exported
/// )]
/// impl Rollouts {
///     async fn apply(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> { .. }
///     async fn cleanup(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> { .. }
/// }
///
/// #[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/web-config")]
/// pub async fn web_config(cm: &ConfigMap, pass: &mut Pass<ConfigMap>) -> Result<Action, Error> { .. }
/// // generates `pub struct WebConfig;` (the fn's visibility) implementing `Reconciler`
///
/// #[kubeward::reconciler(resource = TenantQuota, controller = "demo.kubeward.dev/quotas")]
/// async fn quotas(q: &TenantQuota, pass: &mut Pass<TenantQuota>, cx: &Context) -> Result<Action, Error> { .. }
/// // generates `struct Quotas { .. }` with `Quotas::new(context: Context)`: each pass borrows it
/// // (a `kube::Client`, shared state), so the fn can touch other objects
/// ```
///
/// The keys:
///
/// - `resource` (required): the kind reconciled, a `kube::Resource`.
/// - `controller` (required): the controller's name, `domain/name`: events'
///   `reportingController`, the `controller` metric label.
/// - `finalizer`: a qualified name; required with `cleanup`, which runs before it is removed.
/// - `conditions(C, ..)`: the `#[kubeward::condition]` vocabularies the controller manages: their
///   per-object metrics and the compile-time check of `pass.condition::<C>()`.
/// - `steps(f, ..)`: `#[step]` fns outside the impl that it calls, so that their step names are
///   declared (and initialised in the metrics) up front.
/// - `error = E`: the error type, when it cannot be read from `Result<Action, E>`.
/// - `timeout = "30s"`: each pass is abandoned after this long (`ms`, `s`, `m`, `h`).
/// - `info(label = "path", ..)`: spec or status fields as labels of one `kubeward_object_info`
///   series per object (`kubeward::info`); labels are Prometheus label names, not `controller`,
///   `namespace` or `name`.
/// - `kstatus`: the kstatus conditions (`Ready`, `Reconciling`, `Stalled`) derived from the
///   declared ones, on by default (`kubeward::kstatus`): `current_at(reason, ..)` lists the gates
///   deploy tools should treat as done, `stalled_after = n` reports `Stalled` after n failed
///   passes in a row, `kstatus = false` opts out.
/// - `owns(Kind, whole(Kind), ..)`: the children the controller applies through its passes,
///   watched (by metadata, or whole with `whole(..)`), pruned, their changes starting their
///   owner's pass (`kubeward::relations`).
/// - `watches(Kind, map = f, labels = "..", fields = "..")`: a kind whose objects start the
///   passes of the objects `f` maps them to (`fn(&Kind, &Store<Resource>) -> impl
///   IntoIterator<Item = ObjectRef<Resource>>`, an `Option` too); the key repeats, once per
///   kind; `labels`/`fields` are selectors of what is watched.
/// - `reads(labels(".."), annotations(".."))`: the labels and annotations a pass reads: a change
///   of one of them, and of no other, starts a pass.
/// - `crate = "path"`: reach the runtime through a facade that re-exports kubeward.
///
/// The rollout example (`examples/src/rollouts/reconciler.rs`) uses most of them together; the
/// guide (`docs/reconciler.md`, `docs/children-and-watches.md`, `docs/kstatus.md`) shows each at
/// work.
///
/// Generates the `Reconciler` impl (`NAME`, `FINALIZER`, `CONDITIONS`, `RECONCILE_TIMEOUT`,
/// `STEPS`: every `#[step]`
/// name on the methods and statements and of the fns in `steps(..)`, and every hook the impl
/// writes: `apply`, `cleanup`, `is_suspended`, `failure_event`, `error_backoff`),
/// `fn controller(self, client) -> Controller<Self>` (events on, reporting as `controller`) and
/// `fn rbac_rules(leader_election: bool) -> Vec<PolicyRule>`. `#[step]` on statements is
/// rewritten here (attributes on statements are unstable in Rust).
///
/// Compile errors, each at its token: unknown keys (with "did you mean" one edit away), missing
/// `resource`/`controller`, invalid controller name, finalizer or step name, duplicate step names
/// (across statements, methods and the fns in `steps(..)`), a fn in `steps(..)` without
/// `#[step]`, `pass.condition::<C>()` in the impl for a `C` not in `conditions(..)`, two
/// vocabularies in `conditions(..)` with the same condition type (naming both), a missing
/// `apply`, a method with a hook's name and another signature (the message names the hook's), and
/// `cleanup` without a finalizer.
#[proc_macro_attribute]
pub fn reconciler(args: TokenStream, input: TokenStream) -> TokenStream {
    reconciler::reconciler(args.into(), input.into()).into()
}

/// Implements `kubeward::Terminal` for an error enum or struct: which of its errors are
/// permanent, so that a pass failing with one is not retried until the object changes.
///
/// ```rust,ignore
/// #[derive(Debug, thiserror::Error, kubeward::Terminal)]
/// pub enum RenderError {
///     #[terminal]                                    // permanent for this spec
///     #[error("image reference {image:?} has no tag")]
///     InvalidImage { image: String },
///     #[error("registry unreachable")]               // not marked: retried with backoff
///     Unreachable(#[source] std::io::Error),
/// }
///
/// #[derive(Debug, thiserror::Error, kubeward::Terminal)]
/// pub enum Error {
///     #[error("cannot deploy generation {generation}")]
///     Render { generation: i64, #[source] source: RenderError },  // asks its source
///     #[error(transparent)]
///     Api(#[from] kube::Error),
/// }
/// ```
///
/// `#[terminal]` on a variant (or on a struct) makes it terminal. Any other variant asks its
/// source — the field marked `#[source]` or `#[from]`, else the field named `source`, else the
/// only field of an `#[error(transparent)]` variant — when the source's type implements
/// `Terminal`; without such a source it is not terminal. `#[terminal(crate = "path")]` on the type
/// reaches the runtime through a facade. Compile errors: `#[terminal]` on an enum itself,
/// arguments to a variant's `#[terminal]`, a union.
#[proc_macro_derive(Terminal, attributes(terminal))]
pub fn terminal(input: TokenStream) -> TokenStream {
    terminal::terminal(input.into()).into()
}
