//! The data of an object array read as the Python package reads it: with its long bytes
//! payloads left out (`SparsePickle`, gaps from 1 byte to 64 KiB, by the input's length),
//! then checked. A sparse check passes only what the check of the whole pickle passes,
//! with the same shape and length, and approves nothing past an offset whose payload it
//! needs.
#![no_main]

use std::ops::ControlFlow;

use libfuzzer_sys::fuzz_target;
use npy_core::object::{check_pickle_prefix_with, check_sparse_pickle_prefix_with, CheckProgress};
use npy_core::object::{SparseCheck, SparsePickle};
use npy_core::ReadOptions;

fuzz_target!(|data: &[u8]| {
    let pickle = data;
    let min_gap = [1, 8, 256, 64 << 10][data.len() % 4];
    let opts = ReadOptions::new();
    let full = check_pickle_prefix_with(pickle, |_| ControlFlow::Continue(()), &opts);
    let sparse = SparsePickle::read(std::io::Cursor::new(pickle), min_gap).expect("in memory");
    let mut last = 0;
    let checked = check_sparse_pickle_prefix_with(
        &sparse,
        |p| {
            if let CheckProgress::Checked(n) = p {
                last = n;
            }
            ControlFlow::Continue(())
        },
        &opts,
    );
    match (full, checked) {
        (Ok(full), Ok(SparseCheck::Passed(sparse))) => assert_eq!(full, sparse),
        (_, Ok(SparseCheck::NeedsGap(at))) => assert!(last as u64 <= at, "progress {last} past {at}"),
        (Err(_), Err(_)) => {}
        (full, sparse) => panic!("check {full:?}, sparse check {sparse:?}"),
    }
});
