//! [`Ctxt`]: collects every error found in a derive input, so that all of them are reported
//! together, each at its own span.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// The errors found so far in one derive input.
///
/// Dropping it without calling [`Ctxt::check`] panics: an error must never be lost.
pub(crate) struct Ctxt {
    /// `None` once checked, so that a forgotten check is caught.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// A context with no errors yet.
    pub(crate) fn new() -> Self {
        Ctxt { errors: RefCell::new(Some(Vec::new())) }
    }

    /// Records an error spanning the tokens of `obj` (first to last token).
    pub(crate) fn error_spanned_by<A: ToTokens, T: Display>(&self, obj: A, msg: T) {
        self.push(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Records one of syn's parse errors.
    pub(crate) fn syn_error(&self, err: syn::Error) {
        self.push(err);
    }

    fn push(&self, err: syn::Error) {
        self.errors.borrow_mut().as_mut().expect("Ctxt used after check").push(err);
    }

    /// Consumes the context: `Err` with every recorded error combined, if there are any.
    pub(crate) fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.borrow_mut().take().expect("Ctxt checked twice").into_iter();
        let Some(mut combined) = errors.next() else { return Ok(()) };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("npy-derive forgot to check for errors");
        }
    }
}
