//! The corpus's vocabulary: a case is a named sequence of requests.

use http::Method;
use serde_json::{Value, json};

/// One request of a case. Every `NS` in its path, headers and body is replaced by the case's
/// namespace before it is sent (and the namespace by `NS` in the answer).
#[derive(Clone)]
pub struct Step {
    pub method: Method,
    pub path: String,
    pub content_type: &'static str,
    pub body: Option<Value>,
    /// Extra request headers (`Impersonate-User`, `Accept`, `Content-Encoding`, ...).
    pub headers: Vec<(&'static str, String)>,
    /// Re-send the request (every 100 ms, for up to 20 s) until the answer satisfies this; for
    /// state a server reaches in its own time (a CRD served, a namespace finalised, garbage
    /// collected). The last answer is compared.
    pub until: Option<fn(u16, &Value) -> bool>,
    /// Values of the raw (not normalised) answer to remember: `(name, JSON pointer)`. Every
    /// later step of the case has `name` in its path (percent-encoded), headers and body
    /// replaced by the value — a resourceVersion to watch from, a continue token, a uid.
    pub remember: Vec<(&'static str, &'static str)>,
}

impl Step {
    /// The same request with one more header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The same request sent as another user (`Impersonate-User`; the corpus's client may
    /// impersonate anyone on both servers).
    #[allow(clippy::wrong_self_convention)] // named after kubectl's `--as`
    pub fn as_user(self, user: &str) -> Self {
        self.header("Impersonate-User", user)
    }

    /// The same request, remembering the string (or the JSON text) at `pointer` of its answer
    /// as `name` for the case's later steps; `name` should be a token no path or body holds
    /// otherwise (e.g. `$RV`).
    pub fn remember(mut self, name: &'static str, pointer: &'static str) -> Self {
        self.remember.push((name, pointer));
        self
    }

    /// The same request, repeated until `done` holds for its answer.
    pub fn until(mut self, done: fn(u16, &Value) -> bool) -> Self {
        self.until = Some(done);
        self
    }
}

/// A named sequence of requests, each answer compared. Names are unique in the corpus: the
/// accepted list refers to cases by name.
pub struct Case {
    pub name: String,
    /// Requests sent first, their answers not compared: fixtures several cases share (a CRD
    /// installed once and waited for, then found existing by the next case).
    pub setup: Vec<Step>,
    pub steps: Vec<Step>,
}

impl Case {
    pub fn new(name: impl Into<String>, steps: Vec<Step>) -> Self {
        Case {
            name: name.into(),
            setup: Vec::new(),
            steps,
        }
    }

    /// The same case, after `setup` (whose answers are not compared).
    pub fn after(mut self, setup: Vec<Step>) -> Self {
        self.setup = setup;
        self
    }
}

/// A JSON request.
pub fn step(method: Method, path: impl Into<String>, body: Option<Value>) -> Step {
    Step {
        method,
        path: path.into(),
        content_type: "application/json",
        body,
        headers: Vec::new(),
        until: None,
        remember: Vec::new(),
    }
}

/// The media type of a server-side apply patch.
pub const APPLY: &str = "application/apply-patch+yaml";
/// The media type of a strategic merge patch.
pub const SMP: &str = "application/strategic-merge-patch+json";
/// The media type of a JSON merge patch.
pub const MERGE: &str = "application/merge-patch+json";
/// The media type of a JSON patch.
pub const JSON_PATCH: &str = "application/json-patch+json";
/// The `Accept` of a meta.k8s.io/v1 Table.
pub const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// A GET of `path`.
pub fn get(path: impl Into<String>) -> Step {
    step(Method::GET, path, None)
}

/// A POST of `body` to `path`.
pub fn post(path: impl Into<String>, body: Value) -> Step {
    step(Method::POST, path, Some(body))
}

/// A PUT of `body` to `path`.
pub fn put(path: impl Into<String>, body: Value) -> Step {
    step(Method::PUT, path, Some(body))
}

/// A DELETE of `path`.
pub fn delete(path: impl Into<String>) -> Step {
    step(Method::DELETE, path, None)
}

/// A GET of `path` as a Table.
pub fn table(path: impl Into<String>) -> Step {
    get(path).header("Accept", TABLE)
}

/// A JSON merge patch of the object at `path`.
pub fn merge_patch(path: impl Into<String>, body: Value) -> Step {
    patch(path, MERGE, body)
}

/// A merge patch of the status subresource of the object at `one`.
pub fn status_patch(one: &str, body: Value) -> Step {
    merge_patch(format!("{one}/status"), body)
}

/// A server-side apply of `body` to the object at `one` as field manager `manager`.
pub fn apply_as(one: &str, manager: &str, body: Value) -> Step {
    patch(format!("{one}?fieldManager={manager}"), APPLY, body)
}

/// The namespace's `default` ServiceAccount, which mounts no token (no service-account
/// controller runs on either tier).
pub fn service_account() -> Step {
    post(
        "/api/v1/namespaces/NS/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "default"}, "automountServiceAccountToken": false}),
    )
}

/// A kind whose cases write one object `w` in its collection: the requests of it.
pub trait Resource: Copy {
    /// The path of the kind's objects (in `NS` where namespaced).
    fn collection(self) -> String;

    /// A valid object `w`, with `extra` merged in.
    fn object(self, extra: Value) -> Value;

    /// The path of `w`.
    fn one(self) -> String {
        format!("{}/w", self.collection())
    }

    fn create(self, body: Value) -> Step {
        post(self.collection(), body)
    }

    /// Creates the valid object `w`.
    fn created(self) -> Step {
        self.create(self.object(json!({})))
    }

    fn get(self) -> Step {
        get(self.one())
    }

    fn put(self, body: Value) -> Step {
        put(self.one(), body)
    }

    fn merge_patch(self, body: Value) -> Step {
        merge_patch(self.one(), body)
    }

    /// A merge patch of `w`'s status subresource.
    fn status(self, body: Value) -> Step {
        status_patch(&self.one(), body)
    }

    fn apply(self, manager: &str, body: Value) -> Step {
        apply_as(&self.one(), manager, body)
    }

    /// The kind's objects as a Table.
    fn table(self) -> Step {
        table(self.collection())
    }
}

/// The media type of a protobuf body.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// A request whose body is protobuf (`body`, the envelope included), as client-go's typed
/// clients send it. The body is carried as hex and sent as the bytes, with no `NS` substitution
/// (a length-prefixed encoding would not survive it): the namespace goes in the path.
pub fn protobuf(method: Method, path: impl Into<String>, body: &[u8]) -> Step {
    let hex = body.iter().map(|b| format!("{b:02x}")).collect();
    Step {
        content_type: PROTOBUF,
        body: Some(Value::String(hex)),
        ..step(method, path, None)
    }
}

/// The bytes of a [`protobuf`] step's hex body.
pub fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex written by protobuf()"))
        .collect()
}

/// A PATCH of the given patch content type.
pub fn patch(path: impl Into<String>, content_type: &'static str, body: Value) -> Step {
    Step {
        content_type,
        ..step(Method::PATCH, path, Some(body))
    }
}

/// A ConfigMap named `name`, with `extra` merged into it.
pub fn config_map(name: &str, extra: Value) -> Value {
    merged(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
        extra,
    )
}

/// `object` with `extra` merged in (see [`merge`]).
pub fn merged(mut object: Value, extra: Value) -> Value {
    merge(&mut object, extra);
    object
}

/// Merges `patch` into `target` (objects key by key; anything else replaces).
pub fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k).or_insert(Value::Null), v);
            }
        }
        (t, p) => *t = p,
    }
}

/// Percent-encodes a query parameter value.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
