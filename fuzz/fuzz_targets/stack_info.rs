//! A Dask npy stack's `info` file: any bytes through the restricted pickle decoder, as
//! `npy_core::stack::Stack::from_path` reads it. Whatever decodes is pickled again; that pickle
//! must decode to the same info and pickle to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_core::stack::StackInfo;

fuzz_target!(|data: &[u8]| {
    if let Ok(info) = StackInfo::from_pickle(data) {
        let pickle = info.to_pickle().expect("an info that was decoded cannot be pickled");
        let back = StackInfo::from_pickle(&pickle).unwrap_or_else(|e| panic!("our own info does not decode: {e}"));
        assert_eq!(back, info);
        assert_eq!(back.to_pickle().expect("a decoded info cannot be pickled"), pickle);
    }
});
