//! The data of an object array: any bytes through the restricted pickle decoder, with the
//! default limits. Whatever decodes is pickled again; that pickle must decode to an array
//! that pickles to the same bytes (floats are compared by their bits, so NaNs too).
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_core::object::{from_pickle_with, to_pickle};
use npy_core::ReadOptions;

fuzz_target!(|data: &[u8]| {
    let opts = ReadOptions::new();
    if let Ok(array) = from_pickle_with(data, &opts) {
        let pickle = to_pickle(&array).expect("an array that was decoded cannot be pickled");
        let back = from_pickle_with(&pickle, &opts).unwrap_or_else(|e| panic!("our own pickle does not decode: {e}"));
        assert_eq!((back.shape(), back.fortran_order()), (array.shape(), array.fortran_order()));
        let again = to_pickle(&back).expect("a decoded array cannot be pickled");
        assert_eq!(again, pickle, "pickling is not stable across a decode");
    }
});
