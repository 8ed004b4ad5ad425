//! `#[derive(NpyRecord)]` for `npy-core`: Rust structs as NumPy record dtypes.
//!
//! The derive itself lands with the record issue; this crate holds its place in the
//! workspace so that `npy-core` can depend on it behind its `derive` feature.
#![forbid(unsafe_code)]
