//! npy-core's errors as JavaScript `Error`s: the message npy-core writes (naming the file
//! and member), with `kind` (the [`ErrorKind`] variant, in snake case) and `member`
//! properties, which the package's `NpyError` takes over.

use js_sys::Reflect;
use npy_core::{Error, ErrorKind};
use wasm_bindgen::JsValue;

/// What a call into this crate returns: a value, or a JavaScript `Error`.
pub type JsResult<T> = Result<T, JsValue>;

/// The variant of `kind`, as JavaScript's `NpyError.kind` names it.
fn kind_name(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Io(_) => "io",
        ErrorKind::Format { .. } => "format",
        ErrorKind::HeaderTooLarge { .. } => "header_too_large",
        ErrorKind::Header { .. } => "header",
        ErrorKind::Dtype { .. } => "dtype",
        ErrorKind::UnsupportedDtype { .. } => "unsupported_dtype",
        ErrorKind::Shape { .. } => "shape",
        ErrorKind::DtypeMismatch { .. } => "dtype_mismatch",
        ErrorKind::WrongShape { .. } => "wrong_shape",
        ErrorKind::Truncated { .. } => "truncated",
        ErrorKind::InvalidValue { .. } => "invalid_value",
        ErrorKind::Pickle { .. } => "pickle",
        ErrorKind::NotViewable { .. } => "not_viewable",
        ErrorKind::Npz { .. } => "npz",
        ErrorKind::Usage { .. } => "usage",
        _ => "other",
    }
}

/// `error` as a JavaScript `Error`, read from `name` (the file, `Blob` or URL, as the
/// caller names it) when one is given.
pub fn js_error(error: Error, name: Option<&str>) -> JsValue {
    let error = match name {
        Some(name) if error.path().is_none() => error.reading(name),
        _ => error,
    };
    let js = js_sys::Error::new(&error.to_string());
    // Setting a property of a fresh Error cannot fail; were it to, the message still says
    // what happened.
    let _ = Reflect::set(&js, &"kind".into(), &kind_name(error.kind()).into());
    if let Some(member) = error.member() {
        let _ = Reflect::set(&js, &"member".into(), &member.into());
    }
    js.into()
}

/// npy-core results as this crate's, errors named after `name`.
pub trait Located<T> {
    /// `self`, its error a JavaScript `Error` read from `name`.
    fn located(self, name: Option<&str>) -> JsResult<T>;
}

impl<T> Located<T> for npy_core::Result<T> {
    fn located(self, name: Option<&str>) -> JsResult<T> {
        self.map_err(|e| js_error(e, name))
    }
}

/// `a * b`, a count of bytes or values, computed without wrapping: an error when it
/// passes what this 32-bit module addresses (`usize` is 32 bits on wasm32).
pub fn times(a: usize, b: usize) -> JsResult<usize> {
    a.checked_mul(b).ok_or_else(|| usage(format!("{a} times {b} is more than this 32-bit module addresses")))
}

/// A usage error (a caller's argument that cannot be): a JavaScript `Error` of kind `usage`.
pub fn usage(message: impl std::fmt::Display) -> JsValue {
    let js = js_sys::Error::new(&message.to_string());
    let _ = Reflect::set(&js, &"kind".into(), &"usage".into());
    js.into()
}
