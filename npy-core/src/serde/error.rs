//! Errors inside serde calls: a reason and the field path, turned into the crate's error
//! (with the element index) at the edge.

use std::fmt;

use ::serde::{de, ser};

use crate::error::{Error, ErrorKind};

#[derive(Debug)]
enum Seg {
    Field(String),
    Index(usize),
}

/// The error type of the bridge's serializers and deserializers.
#[derive(Debug)]
pub(super) struct BridgeError {
    path: Vec<Seg>,
    pub(super) reason: String,
    /// A bad value in the data (→ `InvalidValue`) rather than a type that does not fit.
    invalid: bool,
}

impl BridgeError {
    pub(super) fn invalid(reason: impl Into<String>) -> Self {
        BridgeError { path: Vec::new(), reason: reason.into(), invalid: true }
    }

    pub(super) fn mismatch(reason: impl Into<String>) -> Self {
        BridgeError { path: Vec::new(), reason: reason.into(), invalid: false }
    }

    /// The same error, one level further out: inside field `name`.
    pub(super) fn field(mut self, name: &str) -> Self {
        self.path.insert(0, Seg::Field(name.to_string()));
        self
    }

    /// The same error, one level further out: inside item `i` of a sequence.
    pub(super) fn index(mut self, i: usize) -> Self {
        self.path.insert(0, Seg::Index(i));
        self
    }

    pub(super) fn path(&self) -> String {
        let mut s = String::new();
        for seg in &self.path {
            match seg {
                Seg::Field(name) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(name);
                }
                Seg::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }

    /// The crate's error, for element `index` (storage order) if known.
    pub(super) fn into_error(self, index: Option<usize>) -> Error {
        let path = self.path();
        if self.invalid {
            let reason = if path.is_empty() { self.reason } else { format!("field '{path}': {}", self.reason) };
            return ErrorKind::InvalidValue { index: index.unwrap_or(0), reason }.into();
        }
        let mut at = Vec::new();
        if let Some(i) = index {
            at.push(format!("element {i}"));
        }
        if !path.is_empty() {
            at.push(format!("field '{path}'"));
        }
        let reason = if at.is_empty() { self.reason } else { format!("{}: {}", at.join(", "), self.reason) };
        ErrorKind::Serde { reason }.into()
    }
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path() {
            p if p.is_empty() => f.write_str(&self.reason),
            p => write!(f, "field '{p}': {}", self.reason),
        }
    }
}

impl std::error::Error for BridgeError {}

impl de::Error for BridgeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        BridgeError::mismatch(msg.to_string())
    }
}

impl ser::Error for BridgeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        BridgeError::mismatch(msg.to_string())
    }
}

pub(super) type BResult<T> = std::result::Result<T, BridgeError>;
