//! How Go reads and prints what kube-apiserver answers with, for the texts quoted word for word
//! in its errors and bodies:
//!
//! - [`scanner`]: `encoding/json`'s syntax errors;
//! - [`json`]: `encoding/json`'s type errors and escaping;
//! - [`fmt`]: `fmt`'s verbs (`%q`, `%v`, `%s`, `%+v`, `%T`) and `encoding/json`'s bytes of a
//!   merge-patched document;
//! - [`time`]: `time.Parse` of the two layouts Kubernetes times use, and the text written back.
//!
//! The typed decoder's view of the built-in kinds' Go structs is [`crate::validation::gotypes`].

pub(crate) mod fmt;
pub(crate) mod json;
pub(crate) mod scanner;
pub(crate) mod time;
