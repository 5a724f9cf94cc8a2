//! The vocabulary of observation: the [`Phase`] a pass works on, the [`Outcome`] it ends with,
//! the [`ObjectRef`] it works on and the [`StepName`]s it times.

use std::fmt;

use kube::Resource;
use kube::runtime::controller::Action;

use crate::names::{InvalidName, NameKind};

/// The stage of an object's life a pass works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// The finalizer is being added; no apply runs in the same pass.
    Init,
    /// The object exists and is not being deleted: converge it.
    Apply,
    /// The object is being deleted: release what it owns.
    Cleanup,
    /// Cleanup completed: the finalizer is being removed.
    Delete,
}

impl Phase {
    /// Every phase, in lifecycle order.
    pub const ALL: [Phase; 4] = [Phase::Init, Phase::Apply, Phase::Cleanup, Phase::Delete];

    /// The phase as a metric label value and log field.
    pub const fn as_str(self) -> &'static str {
        match self {
            Phase::Init => "init",
            Phase::Apply => "apply",
            Phase::Cleanup => "cleanup",
            Phase::Delete => "delete",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a pass or step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// Converged: the pass returned `Ok` and waits for the next change.
    Completed,
    /// Not converged yet: the pass returned `Ok` and asked to be requeued.
    Waiting,
    /// The reconciler chose not to act (for example, the object is suspended).
    Skipped,
    /// The pass or step returned an error (including failures to add or remove the finalizer).
    Failed,
    /// The pass or step was dropped before it finished: shutdown, lost leadership, a timeout.
    Abandoned,
}

impl Outcome {
    /// Every outcome.
    pub const ALL: [Outcome; 5] = [
        Outcome::Completed,
        Outcome::Waiting,
        Outcome::Skipped,
        Outcome::Failed,
        Outcome::Abandoned,
    ];

    /// The outcomes a step can have (steps are never waiting or skipped).
    pub const STEP: [Outcome; 3] = [Outcome::Completed, Outcome::Failed, Outcome::Abandoned];

    /// The outcome as a metric label value and log field.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Waiting => "waiting",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::Abandoned => "abandoned",
        }
    }

    /// Classifies the result of a pass: `Err` is [`Failed`](Outcome::Failed) whatever the
    /// override; an `Ok` pass takes `override_outcome` when the reconciler set one, else
    /// [`Completed`](Outcome::Completed) for [`Action::await_change`] and
    /// [`Waiting`](Outcome::Waiting) for a requeue.
    ///
    /// A controller that requeues as a periodic resync after converging shows as waiting unless
    /// it overrides the outcome with `Completed`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube::runtime::controller::Action;
    /// use kubeward::observe::Outcome;
    ///
    /// let done: Result<Action, ()> = Ok(Action::await_change());
    /// assert_eq!(Outcome::of_pass(&done, None), Outcome::Completed);
    /// let requeue: Result<Action, ()> = Ok(Action::requeue(Duration::from_secs(5)));
    /// assert_eq!(Outcome::of_pass(&requeue, None), Outcome::Waiting);
    /// assert_eq!(Outcome::of_pass(&requeue, Some(Outcome::Skipped)), Outcome::Skipped);
    /// let failed: Result<Action, ()> = Err(());
    /// assert_eq!(Outcome::of_pass(&failed, Some(Outcome::Completed)), Outcome::Failed);
    /// ```
    pub fn of_pass<E>(result: &Result<Action, E>, override_outcome: Option<Outcome>) -> Outcome {
        match result {
            Err(_) => Outcome::Failed,
            Ok(_) if override_outcome.is_some() => override_outcome.unwrap_or(Outcome::Completed),
            Ok(action) if *action == Action::await_change() => Outcome::Completed,
            Ok(_) => Outcome::Waiting,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a pass [failed](Outcome::Failed): the `reason` label of
/// `kubeward_reconcile_errors_total`, which breaks the failed passes down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureReason {
    /// The reconciler returned an error worth retrying: retried with backoff.
    Error,
    /// The reconciler returned a [terminal](crate::Terminal) error: not retried until the object
    /// changes.
    Terminal,
    /// The pass ran past its [reconcile timeout](crate::controller::Controller::with_reconcile_timeout)
    /// and was abandoned: retried with backoff.
    Timeout,
    /// The reconciler panicked: retried with backoff.
    Panic,
    /// The runtime's own write for the pass failed (the status write, a finalizer patch):
    /// retried with backoff.
    Write,
}

impl FailureReason {
    /// Every reason.
    pub const ALL: [FailureReason; 5] = [
        FailureReason::Error,
        FailureReason::Terminal,
        FailureReason::Timeout,
        FailureReason::Panic,
        FailureReason::Write,
    ];

    /// The reason as a metric label value and log field.
    pub const fn as_str(self) -> &'static str {
        match self {
            FailureReason::Error => "error",
            FailureReason::Terminal => "terminal",
            FailureReason::Timeout => "timeout",
            FailureReason::Panic => "panic",
            FailureReason::Write => "write",
        }
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The id of one reconcile pass, random (a version 4 UUID, as controller-runtime's
/// `reconcileID`): on the pass's `reconcile` span and in its [`PassRecord`](super::PassRecord),
/// so the log lines and traces of one pass can be told from those of the next over the same
/// object. Never a metric label (it would make a series per pass).
///
/// ```
/// use kubeward::observe::ReconcileId;
/// let id = ReconcileId::random();
/// assert_ne!(id, ReconcileId::random());
/// let text = id.to_string();
/// assert_eq!(text.len(), 36);
/// assert_eq!(&text[14..15], "4", "version 4");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReconcileId(u128);

impl ReconcileId {
    /// A new random id.
    pub fn random() -> Self {
        let bits = rand::random::<u128>();
        // RFC 9562: version 4 (random) in bits 48..52, variant 0b10 in bits 64..66.
        let bits = (bits & !(0xf << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62);
        Self(bits)
    }
}

impl fmt::Display for ReconcileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = format!("{:032x}", self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    }
}

/// The object a pass works on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    /// `apiVersion` of the object, such as `demo.kubeward.dev/v1`.
    pub api_version: String,
    /// `kind` of the object, such as `Rollout`.
    pub kind: String,
    /// Namespace, `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// UID, when the object has been stored by the API server.
    pub uid: Option<String>,
}

impl ObjectRef {
    /// The reference of a typed object.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::ObjectMeta;
    /// use kubeward::observe::ObjectRef;
    ///
    /// let cm = ConfigMap {
    ///     metadata: ObjectMeta { name: Some("web".into()), namespace: Some("demo".into()), ..Default::default() },
    ///     ..Default::default()
    /// };
    /// let object = ObjectRef::from_resource(&cm);
    /// assert_eq!(object.to_string(), "ConfigMap demo/web");
    /// ```
    pub fn from_resource<K>(object: &K) -> Self
    where
        K: Resource<DynamicType = ()>,
    {
        let meta = object.meta();
        Self {
            api_version: K::api_version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            namespace: meta.namespace.clone(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone(),
        }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{} {namespace}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// A validated step name: lowercase letters, digits, `_` and `-`, at most 63 bytes.
///
/// Step names are `'static` on purpose: they become metric label values, and a fixed set of
/// names keeps the metric's cardinality bounded. Declare them as constants, which validates them
/// at compile time:
///
/// ```
/// use kubeward::observe::StepName;
/// const RENDER: StepName = StepName::from_static("render");
/// assert_eq!(RENDER.as_str(), "render");
/// ```
///
/// ```compile_fail
/// use kubeward::observe::StepName;
/// const BAD: StepName = StepName::from_static("Render Manifest"); // rejected by the compiler
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepName(&'static str);

impl StepName {
    /// A step name checked at compile time when used in a `const`; panics on an invalid name
    /// otherwise (use [`StepName::new`] for names not known at compile time).
    pub const fn from_static(name: &'static str) -> Self {
        let bytes = name.as_bytes();
        assert!(
            !bytes.is_empty() && bytes.len() <= crate::limits::STEP_NAME_MAX_BYTES,
            "a step name must be 1 to 63 bytes long"
        );
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            assert!(
                b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-',
                "a step name must consist of lowercase letters, digits, '_' or '-'"
            );
            i += 1;
        }
        Self(name)
    }

    /// A step name checked at run time.
    ///
    /// ```
    /// use kubeward::observe::StepName;
    /// assert!(StepName::new("deploy").is_ok());
    /// assert!(StepName::new("Deploy!").is_err());
    /// ```
    pub fn new(name: &'static str) -> Result<Self, InvalidName> {
        NameKind::StepName.validate(name)?;
        Ok(Self(name))
    }

    /// The name.
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
