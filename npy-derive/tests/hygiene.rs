//! The derive's output names everything by absolute path: it compiles without the prelude,
//! next to user items that shadow prelude names, and through `#[npy(crate = "..")]`.
#![no_implicit_prelude]
#![allow(dead_code, non_camel_case_types)]

// Shadows of what an expansion might name unqualified.
struct Option;
struct Some;
struct None;
struct Result;
struct Ok;
struct Err;
struct String;
struct Vec;
struct Default;
struct From;
struct usize;
struct bool;
struct u8;
mod core {}
mod std {}

mod renamed {
    pub use ::npy_core as npy;
}

use ::npy_core::NpyRecord;

#[derive(NpyRecord)]
#[npy(endian = "big", crate = "crate::renamed::npy")]
struct Named {
    #[npy(rename = "x-pos", title = "Position", endian = "little")]
    x: ::core::primitive::f64,
    n: ::core::primitive::u32,
    kind: Kind,
    #[npy(skip)]
    label: ::std::string::String,
}

#[derive(NpyRecord)]
#[npy(itemsize = 16)]
struct Tuple(#[npy(offset = 2)] ::core::primitive::i16, #[npy(offset = 8)] ::core::primitive::f32);

#[derive(NpyRecord)]
struct Generic<T, L> {
    value: T,
    #[npy(skip)]
    label: L,
}

#[derive(NpyRecord)]
#[npy(align)]
#[repr(C)]
struct Window<const N: ::core::primitive::usize> {
    flag: ::core::primitive::u8,
    samples: [::core::primitive::f32; N],
}

#[derive(NpyRecord, Clone, Copy)]
#[npy(endian = "big", crate = "::npy_core")]
#[repr(u16)]
enum Kind {
    A = 1,
    B = 2,
}

#[derive(NpyRecord)]
struct Unit;

#[derive(NpyRecord, Clone, Copy)]
#[npy(packed)]
#[repr(C, packed)]
struct Packed<const N: ::core::primitive::usize> {
    flag: ::core::primitive::u8,
    samples: [::core::primitive::f32; N],
}

#[derive(NpyRecord)]
#[repr(C, packed)]
struct PackedSkip {
    flag: ::core::primitive::u8,
    #[npy(skip)]
    label: ::std::string::String,
}

#[::core::prelude::v1::test]
fn every_form_expands_without_the_prelude() {
    ::core::assert_eq!(
        <Named as NpyRecord>::dtype().descr(),
        "[(('Position', 'x-pos'), '<f8'), ('n', '>u4'), ('kind', '>u2')]"
    );
    ::core::assert_eq!(
        <Tuple as NpyRecord>::dtype().descr(),
        "[('', '|V2'), ('f0', '<i2'), ('', '|V4'), ('f1', '<f4'), ('', '|V4')]"
    );
    ::core::assert_eq!(
        <Generic<::core::primitive::i8, ::std::string::String> as NpyRecord>::dtype().descr(),
        "[('value', '|i1')]"
    );
    ::core::assert_eq!(
        <Window<3> as NpyRecord>::dtype().descr(),
        "[('flag', '|u1'), ('', '|V3'), ('samples', '<f4', (3,))]"
    );
    ::core::assert_eq!(<Kind as NpyRecord>::dtype().descr(), "'>u2'");
    ::core::assert_eq!(<Unit as NpyRecord>::dtype().descr(), "[]");
    ::core::assert_eq!(<Packed<3> as NpyRecord>::dtype().descr(), "[('flag', '|u1'), ('samples', '<f4', (3,))]");
    ::core::assert_eq!(<PackedSkip as NpyRecord>::dtype().descr(), "[('flag', '|u1')]");
    const _: () = ::core::assert!(<Named as NpyRecord>::NEEDS_CHECK && <Named as NpyRecord>::HAS_SKIPPED);
    const _: () = ::core::assert!(<Packed<3> as NpyRecord>::BULK && !<PackedSkip as NpyRecord>::BULK);
}
