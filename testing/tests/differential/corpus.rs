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
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
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
