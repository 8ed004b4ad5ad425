//! The record type of the `record` fuzz target, shared with `tests/fuzz_regressions.rs`
//! (`#[path]`), so the regression tests replay inputs against exactly the fuzzed type: a
//! nested record, a `bool`, a `U2` string, a `[f32; 3]` subarray, a `#[repr(u8)]` enum and
//! a big-endian field.

use npy_core::prelude::*;
use npy_core::types::Ucs4;

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
pub enum Kind {
    Shot = 1,
    Receiver = 5,
    Noise,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
pub struct Position {
    pub x: f64,
    pub y: f32,
}

#[derive(NpyRecord, Debug, Clone, PartialEq)]
pub struct Trace {
    pub id: u32,
    pub live: bool,
    pub code: Ucs4<2>,
    pub gain: [f32; 3],
    pub kind: Kind,
    #[npy(endian = "big")]
    pub rate: i64,
    pub at: Position,
}
