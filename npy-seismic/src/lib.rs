//! Simon's seismic records: one family, written once, that the main job
//! (`examples/seismic.rs`), the root package's tests and benches, and npy-datafusion's tests
//! share.
//!
//! - [`Trace`]: a trace id, where its receiver stood (a nested [`Receiver`]), `t0`, `dt`,
//!   flags and 64 samples, in each layout NumPy writes: packed as `np.dtype([...])` lays it
//!   out ([`Trace`], whose memory is Rust's, so reads and writes convert), `align=True`
//!   ([`TraceAligned`], `#[repr(C)]`: its memory is the file's), packed in memory too
//!   ([`TracePacked`], `#[repr(C, packed)]`), and big-endian ([`TraceBe`],
//!   [`TraceBeAligned`]). [`Trace8`] and its layouts hold 8 samples: the project's
//!   fixtures `tests/data/record/trace_{packed,aligned}.npy`.
//! - [`Shot`]: a record with a text field (a station name), in three layouts, and [`Pick`],
//!   the other side of the SQL suite's join.
//!
//! Values: [`trace`] (record `i` of the main job and the benches), [`Trace8::sample`] and
//! [`shot`]. Every layout converts from every other of its family with `From`, field by
//! field.
#![forbid(unsafe_code)]

use npy_core::prelude::*;
use npy_core::types::Ucs4;

/// Samples per [`Trace`].
pub const SAMPLES: usize = 64;
/// Bytes of one [`Trace`] in NumPy's packed layout: 4 + (8 + 8 + 4) + 8 + 4 + 1 + 64 * 4.
pub const PACKED_SIZE: usize = 293;
/// Bytes of one [`TraceAligned`] (NumPy's `align=True` layout).
pub const ALIGNED_SIZE: usize = 304;

/// Declares the layouts of one record (the same fields, each layout with its own
/// attributes) and `From` both ways between the first, the family's canonical one, and
/// each other, field by field (nested records through their own family's `From`).
macro_rules! layouts {
    (
        fields { $($field:ident),* }
        $( $(#[$attr:meta])* struct $name:ident { $($f:ident: $t:ty,)* } )*
    ) => {
        $(
            #[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
            $(#[$attr])*
            pub struct $name { $(pub $f: $t,)* }
        )*
        layouts!(@from [$($name)*] { $($field),* });
    };
    (@from [$canonical:ident $($other:ident)*] $fields:tt) => {
        $( layouts!(@impl $canonical $other $fields); )*
    };
    (@impl $canonical:ident $other:ident { $($field:ident),* }) => {
        impl From<$canonical> for $other {
            fn from(r: $canonical) -> Self {
                $other { $($field: r.$field.into(),)* }
            }
        }
        impl From<$other> for $canonical {
            fn from(r: $other) -> Self {
                $canonical { $($field: r.$field.into(),)* }
            }
        }
    };
}

layouts! {
    fields { x, y, z }
    /// Where a receiver stood, in metres: NumPy's packed layout, Rust's memory layout.
    struct Receiver { x: f64, y: f64, z: f32, }
    /// [`Receiver`] in NumPy's `align=True` layout, which `#[repr(C)]` makes its memory too.
    #[npy(align)]
    #[repr(C)]
    struct ReceiverAligned { x: f64, y: f64, z: f32, }
    /// [`Receiver`] whose memory is NumPy's packed layout.
    #[npy(packed)]
    #[repr(C, packed)]
    struct ReceiverPacked { x: f64, y: f64, z: f32, }
    /// [`Receiver`], big-endian.
    #[npy(endian = "big")]
    struct ReceiverBe { x: f64, y: f64, z: f32, }
    /// [`ReceiverAligned`], big-endian.
    #[npy(align, endian = "big")]
    #[repr(C)]
    struct ReceiverBeAligned { x: f64, y: f64, z: f32, }
}

layouts! {
    fields { trace_id, receiver, t0, dt, flags, samples }
    /// One trace with [`SAMPLES`] samples, in NumPy's default packed layout (as
    /// `np.dtype([...])` lays it out); its memory is Rust's, so reads and writes convert.
    struct Trace {
        trace_id: i32, receiver: Receiver, t0: f64, dt: f32, flags: u8, samples: [f32; SAMPLES],
    }
    /// [`Trace`] in NumPy's `align=True` layout, which is also its memory layout
    /// (`#[repr(C)]`): reads and writes are single bulk copies, and maps view it in place.
    #[npy(align)]
    #[repr(C)]
    struct TraceAligned {
        trace_id: i32, receiver: ReceiverAligned, t0: f64, dt: f32, flags: u8, samples: [f32; SAMPLES],
    }
    /// [`Trace`] whose memory is NumPy's packed layout (`#[repr(C, packed)]`, checked by
    /// `#[npy(packed)]`): reads and writes of packed files are bulk copies.
    #[npy(packed)]
    #[repr(C, packed)]
    struct TracePacked {
        trace_id: i32, receiver: ReceiverPacked, t0: f64, dt: f32, flags: u8, samples: [f32; SAMPLES],
    }
    /// [`Trace`], big-endian.
    #[npy(endian = "big")]
    struct TraceBe {
        trace_id: i32, receiver: ReceiverBe, t0: f64, dt: f32, flags: u8, samples: [f32; SAMPLES],
    }
    /// [`TraceAligned`], big-endian.
    #[npy(align, endian = "big")]
    #[repr(C)]
    struct TraceBeAligned {
        trace_id: i32, receiver: ReceiverBeAligned, t0: f64, dt: f32, flags: u8, samples: [f32; SAMPLES],
    }
}

layouts! {
    fields { trace_id, receiver, t0, dt, flags, samples }
    /// A trace with 8 samples, packed: `tests/data/record/trace_packed.npy`.
    struct Trace8 {
        trace_id: i32, receiver: Receiver, t0: f64, dt: f32, flags: u8, samples: [f32; 8],
    }
    /// [`Trace8`], `align=True`: `tests/data/record/trace_aligned.npy`.
    #[npy(align)]
    #[repr(C)]
    struct Trace8Aligned {
        trace_id: i32, receiver: ReceiverAligned, t0: f64, dt: f32, flags: u8, samples: [f32; 8],
    }
    /// [`Trace8`] whose memory is NumPy's packed layout.
    #[npy(packed)]
    #[repr(C, packed)]
    struct Trace8Packed {
        trace_id: i32, receiver: ReceiverPacked, t0: f64, dt: f32, flags: u8, samples: [f32; 8],
    }
}

layouts! {
    fields { trace_id, receiver, t0, samples, station }
    /// A shot: a nested record, a time, 8 samples and a station name (packed).
    struct Shot {
        trace_id: i32, receiver: Receiver, t0: f64, samples: [f32; 8], station: Ucs4<4>,
    }
    /// [`Shot`], `align=True` (padding after `trace_id` and `receiver.z`).
    #[npy(align)]
    #[repr(C)]
    struct ShotAligned {
        trace_id: i32, receiver: ReceiverAligned, t0: f64, samples: [f32; 8], station: Ucs4<4>,
    }
    /// [`Shot`], big-endian.
    #[npy(endian = "big")]
    struct ShotBe {
        trace_id: i32, receiver: ReceiverBe, t0: f64, samples: [f32; 8], station: Ucs4<4>,
    }
}

/// A pick on a trace: the second table of the SQL suite's join.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
pub struct Pick {
    pub trace_id: i32,
    pub pick: f32,
}

/// Trace `i` of the main job and the benches. Every value is exact or one IEEE operation,
/// so a check in NumPy can compare with `==`: samples are `(i % 4096) + k / 64`, exact in
/// `f32`. (`trace_id` is `i` as `i32`: callers keep `i` below `i32::MAX`.)
pub fn trace(i: usize) -> TraceAligned {
    let mut samples = [0f32; SAMPLES];
    for (k, s) in samples.iter_mut().enumerate() {
        *s = (i % 4096) as f32 + k as f32 / 64.0;
    }
    TraceAligned {
        trace_id: i as i32,
        receiver: ReceiverAligned {
            x: 500_000.0 + (i % 1000) as f64 * 12.5,
            y: 6_200_000.0 + (i / 1000) as f64 * 25.0,
            z: -2.5,
        },
        t0: (i % 1000) as f64 * 0.001,
        dt: 0.004,
        flags: (i % 3) as u8,
        samples,
    }
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
}

/// The station names of [`shot`], cycled: widths 1 to 4, one not ASCII.
pub const STATIONS: [&str; 5] = ["A", "BB", "CCC", "DDDD", "é"];

/// Shot `i` (deterministic values, all distinct ids).
pub fn shot(i: usize) -> Shot {
    let f = i as f64;
    let samples = std::array::from_fn(|k| ((i * 7 + k * 13) % 101) as f32 - 50.0);
    Shot {
        trace_id: i as i32,
        receiver: Receiver { x: f * 0.5, y: -f, z: (i % 17) as f32 },
        t0: (i % 997) as f64 * 0.25 + 0.125,
        samples,
        station: Ucs4::new(STATIONS[i % STATIONS.len()]).expect("the stations fit U4"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_numpys() {
        assert_eq!(Trace::dtype().itemsize(), PACKED_SIZE);
        assert_eq!(TracePacked::dtype().itemsize(), PACKED_SIZE);
        assert_eq!(std::mem::size_of::<TracePacked>(), PACKED_SIZE);
        assert_eq!(TraceAligned::dtype().itemsize(), ALIGNED_SIZE);
        assert_eq!(std::mem::size_of::<TraceAligned>(), ALIGNED_SIZE);
        // Every field but the one-byte `flags` ('|u1') is big-endian.
        assert_eq!(TraceBe::dtype().descr().matches("'>").count(), 7);
    }

    #[test]
    fn layouts_convert_both_ways() {
        let t = trace(4097);
        let packed: TracePacked = Trace::from(t).into();
        assert_eq!(TraceAligned::from(Trace::from(packed)), t);
        assert_eq!(Trace::from(TraceBeAligned::from(Trace::from(t))), Trace::from(t));
        let s = shot(6);
        assert_eq!(Shot::from(ShotBe::from(s)), s);
        assert_eq!(Trace8::from(Trace8Aligned::from(Trace8::sample(3))), Trace8::sample(3));
    }
}
