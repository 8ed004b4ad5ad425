//! The WebAssembly half of npy's JavaScript package (`npy-js/`): npy-core's codecs for
//! JavaScript. JavaScript does the I/O and holds the typed arrays; this crate parses and
//! writes headers ([`header`]), describes dtypes ([`dtype`]), converts elements to and from
//! JavaScript columns through npy-core's plans ([`decode`], [`encode`]), decodes and writes
//! object arrays without running a pickle ([`objects`]), reads and writes archives
//! ([`npz`]) and writes values as NumPy prints them ([`text`]). Errors are JavaScript
//! `Error`s carrying npy-core's messages ([`error`]).
//!
//! Built by `cargo xtask js` for `wasm32-unknown-unknown` and bound by `wasm-bindgen`; the
//! package's README is the user's manual.

#![forbid(unsafe_code)]

pub mod decode;
pub mod dtype;
pub mod encode;
pub mod error;
pub mod header;
mod js;
pub mod npz;
pub mod objects;
pub mod panic;
pub mod text;
