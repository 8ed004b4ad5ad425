//! A derived record type read from arbitrary `.npy` bytes, whole (`read::<Vec<_>>`) and in
//! chunks of 7 (`records`). The type has a nested record, a `bool`, a `U2` string, a
//! `[f32; 3]` subarray, a `#[repr(u8)]` enum and a big-endian field, so every check the
//! reader makes on values (bools, chars, discriminants) and every conversion (byte order,
//! widening, fields matched by name) is reachable.
//!
//! Checked beyond "never panics": when the whole read succeeds, the chunked read gives
//! the same records, and writing them and reading them back gives them again (compared
//! as written bytes, so NaNs compare equal).
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_core::prelude::*;
use npy_core::NpyReader;

mod record_type;
use record_type::Trace;

fn bytes(records: &[Trace]) -> Vec<u8> {
    records.write_npy_to(Vec::new()).expect("records that were read cannot be written")
}

fuzz_target!(|data: &[u8]| {
    let whole = NpyReader::from_reader(data).and_then(|reader| reader.read::<Vec<Trace>>());
    let mut chunked = Vec::new();
    let chunks = NpyReader::from_reader(data).and_then(|reader| reader.chunks::<Trace>(7));
    let chunked_ok = match chunks {
        Ok(chunks) => chunks.into_iter().all(|chunk| chunk.map(|c| chunked.extend(c)).is_ok()),
        Err(_) => false,
    };
    if let Ok(whole) = whole {
        assert!(chunked_ok, "read succeeds but chunks(7) fails");
        let file = bytes(&whole);
        assert_eq!(bytes(&chunked), file, "chunks(7) reads other records than read");
        let back = NpyReader::from_reader(&file[..])
            .and_then(|reader| reader.read::<Vec<Trace>>())
            .unwrap_or_else(|e| panic!("records written back do not read: {e}"));
        assert_eq!(bytes(&back), file, "records change in a write and read");
    }
});
