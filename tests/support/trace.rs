//! The seismic trace record, in each layout the tests read and write: a trace id, where its
//! receiver stood, t0, dt, flags and its samples. The layouts differ on purpose, each as
//! NumPy writes it:
//!
//! - [`Trace`]: NumPy's default packed layout (`np.dtype([...])`), so reads and writes
//!   convert; [`TraceAligned`]: `align=True`, which `#[repr(C)]` makes the memory layout
//!   too (maps view it in place, as `examples/seismic.rs` writes it);
//! - [`TraceBe`], [`TraceBeAligned`]: the same two, big-endian;
//! - [`Trace8`], [`Trace8Aligned`]: 8 samples instead of 64, the project's fixtures
//!   (`tests/data/record/trace_{packed,aligned}.npy`); [`Trace8Packed`]: the packed one
//!   whose memory is the packed layout (`#[repr(C, packed)]`).
//!
//! Included with `#[path = "support/trace.rs"] mod trace;`; each test binary uses some of
//! them. (`tests/serde.rs` keeps its serde mirror, benches and examples their own copies:
//! an example or a bench reads best whole.)
#![allow(dead_code)]

use npy_core::prelude::*;

/// Where a receiver stood, in metres (packed).
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
pub struct Receiver {
    pub x: f64,
    pub y: f64,
    pub z: f32,
}

/// [`Receiver`] in NumPy's `align=True` layout.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
pub struct ReceiverAligned {
    pub x: f64,
    pub y: f64,
    pub z: f32,
}

/// [`Receiver`], big-endian.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(endian = "big")]
pub struct ReceiverBe {
    pub x: f64,
    pub y: f64,
    pub z: f32,
}

/// [`ReceiverAligned`], big-endian.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align, endian = "big")]
#[repr(C)]
pub struct ReceiverBeAligned {
    pub x: f64,
    pub y: f64,
    pub z: f32,
}

/// One trace with 64 samples, packed.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
pub struct Trace {
    pub trace_id: i32,
    pub receiver: Receiver,
    pub t0: f64,
    pub dt: f32,
    pub flags: u8,
    pub samples: [f32; 64],
}

/// One trace with 64 samples in NumPy's `align=True` layout, which is its memory layout.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
pub struct TraceAligned {
    pub trace_id: i32,
    pub receiver: ReceiverAligned,
    pub t0: f64,
    pub dt: f32,
    pub flags: u8,
    pub samples: [f32; 64],
}

/// [`Trace`], big-endian.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(endian = "big")]
pub struct TraceBe {
    pub trace_id: i32,
    pub receiver: ReceiverBe,
    pub t0: f64,
    pub dt: f32,
    pub flags: u8,
    pub samples: [f32; 64],
}

/// [`TraceAligned`], big-endian.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align, endian = "big")]
#[repr(C)]
pub struct TraceBeAligned {
    pub trace_id: i32,
    pub receiver: ReceiverBeAligned,
    pub t0: f64,
    pub dt: f32,
    pub flags: u8,
    pub samples: [f32; 64],
}

/// A trace with 8 samples, packed (`tests/data/record/trace_packed.npy`).
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
pub struct Trace8 {
    pub trace_id: i32,
    pub receiver: Receiver,
    pub t0: f64,
    pub dt: f32,
    pub flags: u8,
    pub samples: [f32; 8],
}

/// A trace with 8 samples, `align=True` (`tests/data/record/trace_aligned.npy`).
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
pub struct Trace8Aligned {
    pub trace_id: i32,
    pub receiver: ReceiverAligned,
    pub t0: f64,
    pub dt: f32,
    pub flags: u8,
    pub samples: [f32; 8],
}

/// [`Receiver`] whose memory is NumPy's packed layout.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(packed)]
#[repr(C, packed)]
pub struct ReceiverPacked {
    pub x: f64,
    pub y: f64,
    pub z: f32,
}

/// [`Trace8`] whose memory is NumPy's packed layout (`#[repr(C, packed)]`): reads and
/// writes of `tests/data/record/trace_packed.npy` are bulk copies.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(packed)]
#[repr(C, packed)]
pub struct Trace8Packed {
    pub trace_id: i32,
    pub receiver: ReceiverPacked,
    pub t0: f64,
    pub dt: f32,
    pub flags: u8,
    pub samples: [f32; 8],
}

impl Trace8 {
    /// The `i`-th trace of the tests that make their own (appends, stacks): every field
    /// different from record to record.
    pub fn sample(i: i32) -> Trace8 {
        Trace8 {
            trace_id: 1000 + i,
            receiver: Receiver { x: f64::from(i) * 12.5, y: -f64::from(i), z: i as f32 / 8.0 },
            t0: f64::from(i) * 0.001,
            dt: 0.002,
            flags: (i % 3) as u8,
            samples: std::array::from_fn(|k| (i * 8 + k as i32) as f32 / 16.0),
        }
    }

    /// The same trace in the `align=True` layout.
    pub fn aligned(&self) -> Trace8Aligned {
        let r = self.receiver;
        Trace8Aligned {
            trace_id: self.trace_id,
            receiver: ReceiverAligned { x: r.x, y: r.y, z: r.z },
            t0: self.t0,
            dt: self.dt,
            flags: self.flags,
            samples: self.samples,
        }
    }
}
