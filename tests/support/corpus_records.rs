//! Rust types for the record files of NumPy's corpus (`../shared/corpus/public/record`
//! and `.../struct`), one per file layout, shared by `tests/records.rs` (typed reads and
//! byte-exact writes) and `tests/serde.rs` (the same files through serde); the traces are
//! in `trace.rs`. Included with `#[path]`; each test binary uses some of them.
#![allow(dead_code, non_snake_case)]

use half::f16;
use npy_core::prelude::*;
use npy_core::types::unit::{Millis, Nanos, Seconds};
use npy_core::types::{Bytes, DateTime64, TimeDelta64, Ucs4, Void};
use num_complex::Complex;

#[derive(NpyRecord)]
#[npy(align)]
#[repr(C)]
pub struct NestedB {
    pub c: i64,
    pub d: u8,
}

#[derive(NpyRecord)]
#[npy(align)]
#[repr(C)]
pub struct AlignedNested {
    pub a: i8,
    pub b: NestedB,
    pub e: [i16; 3],
}

#[derive(NpyRecord)]
#[npy(align)]
#[repr(C)]
pub struct FlatAlignedCorpus {
    pub a: u8,
    pub b: f64,
    pub c: i16,
    pub d: i32,
    pub e: u8,
}

#[derive(NpyRecord)]
pub struct FlatPacked {
    pub id: i32,
    pub x: f64,
    pub flag: bool,
    pub code: Bytes<4>,
    pub name: Ucs4<3>,
    pub c: Complex<f32>,
}

#[derive(NpyRecord)]
pub struct EmptyStruct {
    pub x: f64,
    pub y: Bytes<3>,
}

#[derive(NpyRecord)]
#[npy(align)]
#[repr(C)]
pub struct EmptyAligned {
    pub x: u8,
    pub y: f64,
}

#[derive(NpyRecord)]
pub struct Escaped {
    #[npy(rename = "it's")]
    pub a: i16,
    #[npy(rename = "say \"hi\"")]
    pub b: i16,
    #[npy(rename = "both'\"")]
    pub c: i16,
    #[npy(rename = "back\\slash")]
    pub d: i16,
    #[npy(rename = "tab\tnl\n")]
    pub e: i16,
    #[npy(rename = "nbsp\u{a0}")]
    pub f: i16,
}

#[derive(NpyRecord)]
#[allow(non_snake_case)]
pub struct KitchenSink {
    pub b: bool,
    pub i1: i8,
    pub u1: u8,
    #[npy(endian = "big")]
    pub i2: i16,
    pub u2: u16,
    pub i4: i32,
    #[npy(endian = "big")]
    pub u4: u32,
    #[npy(endian = "big")]
    pub i8: i64,
    pub u8: u64,
    pub f2: f16,
    #[npy(endian = "big")]
    pub f4: f32,
    pub f8: f64,
    #[npy(endian = "big")]
    pub c8: Complex<f32>,
    pub c16: Complex<f64>,
    pub M: DateTime64<Nanos>,
    #[npy(endian = "big")]
    pub m: TimeDelta64<Seconds>,
    pub S: Bytes<5>,
    pub U: Ucs4<3>,
    pub V: Void<3>,
    #[npy(endian = "big")]
    pub Ua: [Ucs4<2>; 2],
}

#[derive(NpyRecord)]
pub struct Latin1 {
    #[npy(rename = "café")]
    pub cafe: i32,
    #[npy(rename = "naïve")]
    pub naive: f16,
}

#[derive(NpyRecord)]
#[allow(non_snake_case)]
pub struct MixedCorpus {
    pub le_i4: i32,
    #[npy(endian = "big")]
    pub be_i4: i32,
    pub le_f8: f64,
    #[npy(endian = "big")]
    pub be_f8: f64,
    #[npy(endian = "big")]
    pub be_c8: Complex<f32>,
    #[npy(endian = "big")]
    pub be_u2: u16,
    pub le_M8: DateTime64<Millis>,
    #[npy(endian = "big")]
    pub be_U2: Ucs4<2>,
}

#[derive(NpyRecord)]
pub struct RG {
    pub r: f32,
    pub g: f32,
}

#[derive(NpyRecord)]
#[npy(align)]
#[repr(C)]
pub struct KV {
    pub k: u8,
    pub v: f64,
}

#[derive(NpyRecord)]
pub struct AB {
    pub a: i32,
    #[npy(endian = "big")]
    pub b: f64,
}

#[derive(NpyRecord)]
pub struct AbcF {
    pub a: i32,
    #[npy(endian = "big")]
    pub b: f64,
    pub c: Bytes<3>,
}

#[derive(NpyRecord, Clone, Copy)]
pub struct Zw {
    #[npy(endian = "big")]
    pub z: i16,
    pub w: Ucs4<2>,
}

#[derive(NpyRecord, Clone, Copy)]
pub struct PtY {
    pub x: f32,
    pub y: Zw,
}

#[derive(NpyRecord, Clone, Copy)]
pub struct G {
    pub g: i8,
}

#[derive(NpyRecord)]
pub struct StructInSubarray {
    pub id: u16,
    pub pts: [PtY; 2],
    pub grid: [[G; 2]; 2],
}

#[derive(NpyRecord)]
pub struct Sub1 {
    pub one: [f64; 1],
    pub plane: [[u8; 2]; 2],
    pub deep: [[[i16; 2]; 1]; 2],
}

#[derive(NpyRecord)]
pub struct SubFields {
    pub v3: [f32; 3],
    #[npy(endian = "big")]
    pub m23: [[i16; 3]; 2],
    pub s: [Bytes<2>; 2],
    pub t: f64,
}

#[derive(NpyRecord)]
pub struct TitlesCorpus {
    #[npy(title = "Trace identifier")]
    pub tid: i32,
    #[npy(title = "Amplitude (counts)", endian = "big")]
    pub amp: f32,
    pub plain: u8,
}

#[derive(NpyRecord)]
pub struct Unicode3 {
    #[npy(rename = "温度")]
    pub temperature: f32,
    #[npy(rename = "地震")]
    pub quake: i16,
    #[npy(rename = "α")]
    pub alpha: u8,
}

#[derive(NpyRecord)]
pub struct ZeroDStruct {
    pub x: f64,
    pub y: [i32; 2],
}

#[derive(NpyRecord)]
pub struct N3 {
    pub c: u8,
    pub d: f16,
}

#[derive(NpyRecord)]
pub struct N2 {
    #[npy(endian = "big")]
    pub b: i64,
    pub l3: N3,
}

#[derive(NpyRecord)]
pub struct N1 {
    pub a: f32,
    pub l2: N2,
}

#[derive(NpyRecord)]
pub struct Nested3 {
    pub top: i16,
    pub l1: N1,
    pub tail: bool,
}

#[derive(NpyRecord)]
#[npy(itemsize = 32)]
pub struct OffsetsGaps {
    #[npy(offset = 4)]
    pub a: i32,
    #[npy(offset = 16)]
    pub b: f64,
    #[npy(offset = 25)]
    pub c: u8,
}

#[derive(NpyRecord, Debug)]
#[npy(align)]
#[repr(C)]
pub struct Junk {
    pub a: u8,
    pub b: f64,
    pub c: i16,
}

#[derive(NpyRecord, Debug)]
#[npy(itemsize = 16)]
pub struct GapJunk {
    #[npy(offset = 2)]
    pub a: i16,
    #[npy(offset = 8, endian = "big")]
    pub b: f32,
}

#[derive(NpyRecord, Debug)]
pub struct SomeChannels {
    pub seismic_channel_0000_value: f64,
    pub seismic_channel_1999_value: f64,
}
