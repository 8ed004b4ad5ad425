//! Failures as R errors: every message names the file (and member) it is about. The R
//! wrappers give them as conditions of class `npy_error`; a panic never reaches R
//! (extendr's wrappers catch it and raise an R error instead).

use std::fmt;

/// Why a call failed, as the R error's message.
#[derive(Debug)]
pub struct Failure(pub String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

impl From<npy_core::Error> for Failure {
    fn from(e: npy_core::Error) -> Self {
        Failure(e.to_string())
    }
}

impl From<extendr_api::Error> for Failure {
    fn from(e: extendr_api::Error) -> Self {
        Failure(e.to_string())
    }
}

/// A failure of the caller's arguments.
pub fn usage(message: impl Into<String>) -> Failure {
    Failure(message.into())
}

/// Prefixes `what` (a file, or a file's member) to a failure that does not name it yet.
pub trait Located<T> {
    /// The result, its failure naming `what`.
    fn at(self, what: &str) -> Result<T, Failure>;
}

impl<T, E: Into<Failure>> Located<T> for Result<T, E> {
    fn at(self, what: &str) -> Result<T, Failure> {
        self.map_err(|e| {
            let Failure(message) = e.into();
            if message.contains(what) {
                Failure(message)
            } else {
                Failure(format!("{what}: {message}"))
            }
        })
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure(e.to_string())
    }
}
