//! The derive's model of its input: `#[npy(..)]` and `#[repr(..)]` attributes parsed into
//! plain values ([`attr`]), the input as containers, fields and variants ([`ast`]), and the
//! rules that the model must follow ([`check`]). Every error found along the way goes into
//! one [`Ctxt`], so that the user sees all of them at once.

pub(crate) mod ast;
pub(crate) mod attr;
pub(crate) mod check;
mod ctxt;

pub(crate) use ctxt::Ctxt;
