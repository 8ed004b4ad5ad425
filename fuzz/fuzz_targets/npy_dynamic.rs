//! A whole `.npy` file of any dtype, read as a `DynArray` with the default options and
//! with a 1 MiB header limit. Whatever reads is written back and must read back equal
//! (header and data; the version may change when the header no longer fits it). The
//! read back has no header limit: a header written back may be longer than the one read
//! (`repr` escapes control characters in field names).
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_core::prelude::*;
use npy_core::{DynArray, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let opts = {
        let mut opts = ReadOptions::new();
        opts.max_header_size(1 << 20);
        opts
    };
    if let Ok(arr) = DynArray::read_npy_from(data) {
        round_trip(&arr);
    }
    if let Ok(arr) = npy_core::NpyReader::from_reader_with(data, &opts).and_then(|reader| reader.read::<DynArray>()) {
        round_trip(&arr);
    }
});

fn round_trip(arr: &DynArray) {
    let file = arr.write_npy_to(Vec::new()).expect("a DynArray that was read cannot be written back");
    let back = npy_core::NpyReader::from_reader_with(&file[..], ReadOptions::new().max_header_size(usize::MAX))
        .and_then(|reader| reader.read::<DynArray>())
        .unwrap_or_else(|e| panic!("a DynArray written back does not read: {e}"));
    assert_eq!(back.header(), arr.header(), "header changed in a write and read");
    assert_eq!(back.data(), arr.data(), "data changed in a write and read");
}
