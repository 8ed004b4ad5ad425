//! An Arrow IPC file from arbitrary bytes through `npy convert X.arrow Y.npy`'s reader:
//! opened, every batch read and written to an in-memory `.npy`.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod convert_input;

fuzz_target!(|data: &[u8]| convert_input::convert(data, "arrow"));
