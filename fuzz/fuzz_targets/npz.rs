//! An `.npz` archive from arbitrary bytes: open it, list its members, and read every
//! member as a `DynArray` and as raw bytes.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use npy_core::npz;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = npz::Reader::from_reader(Cursor::new(data)) else { return };
    let _ = reader.members();
    let names = reader.names().to_vec();
    for name in &names {
        let _ = reader.is_npy(name);
        let _ = reader.read::<npy_core::DynArray>(name);
        let _ = reader.read_raw(name);
    }
});
