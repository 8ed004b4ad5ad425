//! `#[derive(NpyRecord)]` for `npy-core`: Rust structs as NumPy record dtypes.
//!
//! Use it through `npy_core`, which re-exports it (default feature `derive`):
//!
//! ```
//! use npy_core::prelude::*;
//!
//! #[derive(NpyRecord, Debug, PartialEq)]
//! struct Shot {
//!     id: i32,
//!     t0: f64,
//!     samples: [f32; 4],
//! }
//!
//! assert_eq!(Shot::dtype().descr(), "[('id', '<i4'), ('t0', '<f8'), ('samples', '<f4', (4,))]");
//! let shots = vec![Shot { id: 7, t0: 1.5, samples: [0.0, 0.5, 1.0, 0.5] }];
//! let file = shots.write_npy_to(Vec::new())?;
//! assert_eq!(Vec::<Shot>::read_npy_from(&file[..])?, shots);
//! # Ok::<(), npy_core::Error>(())
//! ```
//!
//! # What derives it
//! - **Structs** with named fields, tuple structs (fields named `f0`, `f1`, … as NumPy
//!   names fields given without names) and unit or empty structs (dtype `[]`). Every stored
//!   field's type must implement `NpyRecord`: primitives, `char`, `[T; N]` (nested arrays
//!   give one multi-dimensional subarray: `[[i16; 3]; 2]` is `('m', '<i2', (2, 3))`), the
//!   types of `npy_core::types`, and other derived records (nested record fields). A field
//!   type that does not is reported at the field.
//! - **Generic structs**: type parameters (each stored field type that involves a parameter
//!   gets a `FieldType: NpyRecord` bound, each skipped one `FieldType: Default`, each type
//!   parameter `'static`) and const parameters (`samples: [f32; N]`). Lifetime parameters
//!   are refused: records are built from bytes and own their data.
//! - **Fieldless enums with an integer repr** (`#[repr(u8)]`, `u16`, `u32`, `u64`, `usize`,
//!   `i8`, `i16`, `i32`, `i64`, `isize`): stored as that integer; a read refuses values that
//!   are not a discriminant (`value 9 is not a discriminant of Kind`).
//!
//! Unions, enums with data or without an integer repr, and lifetime parameters are compile
//! errors.
//!
//! # Layout
//! By default the written dtype is **packed**, as NumPy's `np.dtype([...])`: fields back to
//! back in declaration order, whatever Rust's memory layout (Rust may reorder fields; the
//! reader and writer convert, field by field, by name).
//!
//! `#[npy(align)]` on a `#[repr(C)]` struct writes NumPy's `align=True` layout instead: the
//! offsets are Rust's (`offset_of!`), the itemsize is `size_of::<Self>()`, and the padding
//! shows in the descr as NumPy writes it (`('', '|V4')`). Nested records match NumPy's
//! `align=True` exactly when they are `#[npy(align)]` too (NumPy aligns a packed nested
//! dtype to 1 byte, Rust to its fields' alignment).
//!
//! `#[repr(C, packed)]` makes the memory of a struct NumPy's packed layout itself: declare
//! nested records `#[repr(C, packed)]` too, and add `#[npy(packed)]` to have the compiler
//! check that every field sits where it is written, in the machine's byte order, and that
//! nothing else takes memory. Reads and writes of such structs are one bulk copy, as for
//! `#[npy(align)]` structs, and maps give `&[T]` views of any packed file (alignment 1).
//! Their fields may be unaligned, so Rust lets you copy them (`let t0 = trace.t0;`) but not
//! borrow them (`&trace.t0` is error E0793); `#[derive(Debug, PartialEq)]` need `Clone +
//! Copy` on them. A field type with skipped fields of its own cannot be nested in one.
//!
//! Which to pick for speed: the layout of the files. NumPy writes packed records unless
//! asked for `align=True`: `#[repr(C, packed)]` + `#[npy(packed)]` reads and writes those
//! at the speed of plain arrays; a default (Rust layout) struct converts field by field;
//! `#[npy(align)]` matches `align=True` files.
//!
//! Reading matches fields by name, so a file written with one layout (or by NumPy, with
//! fields in another order, other byte orders, extra fields, or safely widened types) reads
//! into a struct with another; a field the file lacks is an `ErrorKind::DtypeMismatch`
//! naming it.
//!
//! # Container attributes
//! `#[npy(..)]` on the struct or enum:
//!
//! | attribute | meaning |
//! |---|---|
//! | `align` | NumPy's `align=True` layout; needs `#[repr(C)]`; not with `offset`/`itemsize` (structs only) |
//! | `endian = "big"` / `"little"` / `"native"` | byte order of every field's scalars that sets none itself; nested records keep their own (on an enum: its integer) |
//! | `itemsize = N` | total bytes of a packed record; the gap after the last field is padding (structs only) |
//! | `packed` | asserts at compile time that the struct's memory is its written packed layout (one bulk copy); needs `#[repr(C, packed)]` (structs only) |
//! | `crate = "path"` | where `npy_core` is, default `::npy_core` (for re-exports and renames) |
//! | `pyo3` | also rust-numpy's `Element` (crate `npy-pyo3`): `Vec<T>` to NumPy without a copy, NumPy records as `&[T]`; needs `Copy`, no `skip`ped fields and no `char` or enum fields (structs only) |
//!
//! ```text
//! #[derive(NpyRecord)]
//! #[npy(align)]
//! #[repr(C)]
//! struct Receiver { x: f64, y: f64, z: f32 }
//! // [('x', '<f8'), ('y', '<f8'), ('z', '<f4'), ('', '|V4')]
//!
//! #[derive(NpyRecord)]
//! #[npy(endian = "big")]
//! struct Header { version: u16, receiver: Receiver, flags: [u32; 2] }
//! // [('version', '>u2'), ('receiver', [('x', '<f8'), ...]), ('flags', '>u4', (2,))]
//!
//! #[derive(NpyRecord)]
//! #[npy(endian = "big")]
//! #[repr(i16)]
//! enum Level { Low = -1, High = 1 }
//! // '>i2'
//! ```
//!
//! # Field attributes
//! `#[npy(..)]` on a field:
//!
//! | attribute | meaning |
//! |---|---|
//! | `rename = "x-pos"` | the NumPy field name (default: the Rust name, `r#` removed, or `f0`, `f1`, …) |
//! | `title = "Trace identifier"` | NumPy's field title: the descr entry becomes `(('Trace identifier', 'tid'), '<i4')` |
//! | `endian = "big"` / `"little"` / `"native"` | byte order of the whole field, nested records and subarrays included |
//! | `offset = N` | packed layout only: the field's byte offset; later fields continue from it; offsets must increase |
//! | `skip` | not stored: absent from the dtype, `Default::default()` after a read; alone only |
//!
//! ```text
//! #[derive(NpyRecord)]
//! #[npy(itemsize = 32)]
//! struct Sparse {
//!     #[npy(offset = 4, title = "Amplitude")]
//!     a: i32,
//!     #[npy(offset = 16, endian = "big", rename = "b-val")]
//!     b: f64,
//!     c: u8,
//!     #[npy(skip)]
//!     cache: String,
//! }
//! // [('', '|V4'), (('Amplitude', 'a'), '<i4'), ('', '|V8'), ('b-val', '>f8'), ('c', '|u1'), ('', '|V7')]
//! ```
//!
//! # Compile errors
//! All mistakes in one input are reported together, each at its attribute or field: unknown
//! and duplicate attributes, bad `endian` values, two fields with one NumPy name (or a title
//! equal to a name or title, which NumPy refuses), `skip` with another field attribute,
//! `align` without `#[repr(C)]`, with `offset`/`itemsize` or with `#[repr(packed)]`,
//! `packed` without `#[repr(C, packed)]`, and unsupported inputs. An
//! `offset` that overlaps the field before it, or an `itemsize` smaller than the fields, is
//! a const-evaluation error at the attribute, as are `packed`'s findings (a field whose
//! type is not laid out as written, another byte order, a gap) and a field of a
//! `#[repr(packed)]` struct whose type has skipped fields; for generic structs it is raised
//! when the type is used with concrete parameters, by `cargo build` (`cargo check` does not
//! evaluate it).
#![forbid(unsafe_code)]

mod expand;
mod internals;

use proc_macro::TokenStream;

/// Implements `npy_core::NpyRecord`: the dtype a struct or fieldless enum is written as, and
/// how its memory is read back. See the crate documentation for the attributes.
#[proc_macro_derive(NpyRecord, attributes(npy))]
pub fn derive_npy_record(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}
