//! Dask npy stacks (`npy_core::stack`): the stacks Dask wrote into `tests/data/stack`
//! (`xtask/golden.py`: `da.to_npy_stack` of each `<case>.npy`, with and without `info`)
//! read back as NumPy's arrays, their `info` decoded and written again byte for byte; the
//! project's Trace records written as stacks and read back. The stacks written here are
//! left in `target/stack-check` beside their arrays, where CI's `xtask/stack_check.py` has
//! Dask compute over them on a `LocalCluster`.

use npy_seismic::{Trace8, Trace8Aligned};

use std::fs;
use std::path::{Path, PathBuf};

use npy_core::prelude::*;
use npy_core::stack::{write_stack_with, Stack, StackInfo, StackOptions, StackWriter, INFO};
use npy_core::{Array, DynArray};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stack")
}

/// `target/stack-check`, where CI's Dask check finds stacks and the arrays they hold.
fn check_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/stack-check");
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The fixture's sidecar: what Dask was asked for.
struct Case {
    name: String,
    axis: usize,
    chunks: Vec<Vec<usize>>,
    descr: String,
    info: bool,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for entry in fs::read_dir(data()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let json: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let chunks = json["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_array().unwrap().iter().map(|n| n.as_u64().unwrap() as usize).collect())
            .collect();
        out.push(Case {
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            axis: json["axis"].as_u64().unwrap() as usize,
            chunks,
            descr: json["dtype"].as_str().unwrap().to_string(),
            info: json["info"].as_bool().unwrap(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(out.len() >= 10, "the Dask fixtures are missing: {}", out.len());
    out
}

/// Whether two arrays hold the same elements, whatever their orders.
fn same(a: &DynArray, b: &DynArray) -> bool {
    if a.dtype() != b.dtype() || a.shape() != b.shape() {
        return false;
    }
    if a.fortran_order() == b.fortran_order() || a.shape().iter().filter(|&&d| d > 1).count() <= 1 {
        return a.data() == b.data();
    }
    // Orders differ: element by element.
    let size = a.dtype().itemsize();
    let n = a.shape().len();
    let mut strides_c = vec![1usize; n];
    for d in (0..n - 1).rev() {
        strides_c[d] = strides_c[d + 1] * a.shape()[d + 1];
    }
    let mut strides_f = vec![1usize; n];
    for d in 1..n {
        strides_f[d] = strides_f[d - 1] * a.shape()[d - 1];
    }
    let (cs, fs) = if a.fortran_order() { (&strides_f, &strides_c) } else { (&strides_c, &strides_f) };
    (0..a.len()).all(|i| {
        let idx: Vec<usize> = (0..n).map(|d| i / strides_c[d] % a.shape()[d]).collect();
        let at = |s: &[usize]| idx.iter().zip(s).map(|(i, s)| i * s).sum::<usize>() * size;
        a.data()[at(cs)..at(cs) + size] == b.data()[at(fs)..at(fs) + size]
    })
}

#[test]
fn stacks_dask_wrote_read_as_numpy_arrays() {
    let tmp = tempfile::tempdir().unwrap();
    for case in cases() {
        let dir = data().join(&case.name);
        let stack = Stack::from_path(&dir).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(stack.has_info(), case.info, "{}", case.name);
        assert_eq!(stack.axis(), case.axis, "{}", case.name);
        assert_eq!(stack.info().chunks, case.chunks, "{}", case.name);
        assert_eq!(stack.dtype().descr(), case.descr, "{}", case.name);
        let numpy = DynArray::read_npy(data().join(format!("{}.npy", case.name))).unwrap();
        let ours = stack.read::<DynArray>().unwrap();
        assert!(same(&ours, &numpy), "{}", case.name);
        // Joined into one file, streamed.
        let joined = tmp.path().join("joined.npy");
        stack.join(&joined, &mut |_| {}).unwrap();
        assert!(same(&DynArray::read_npy(&joined).unwrap(), &numpy), "{}", case.name);
        // Block by block.
        let mut rows = 0;
        for i in 0..stack.len() {
            let block = stack.read_block::<DynArray>(i).unwrap();
            assert_eq!(block.shape()[case.axis], case.chunks[case.axis][i]);
            rows += block.shape()[case.axis];
        }
        assert_eq!(rows, numpy.shape()[case.axis]);
    }
}

#[test]
fn dask_info_files_are_written_again_byte_for_byte() {
    let mut equal = Vec::new();
    for case in cases().iter().filter(|c| c.info) {
        let bytes = fs::read(data().join(&case.name).join(INFO)).unwrap();
        let info = StackInfo::from_pickle(&bytes).unwrap();
        if info.to_pickle().unwrap() == bytes {
            equal.push(case.name.as_str().to_string());
        } else {
            // Dask pickles the dtype of the array it was given: `align=True` (its state
            // says so) and field names written in Python source (one object each) are not
            // what `np.load` makes of a file, and so not what a stack of files says.
            assert!(case.name.starts_with("record"), "{}: info differs", case.name);
        }
    }
    assert!(equal.len() >= 10, "{equal:?}");
}

/// A stack left for CI beside the array it holds.
fn leave(name: &str, dir_of: impl FnOnce(&Path) -> StackInfo, whole: &dyn Fn(&Path)) {
    let check = check_dir();
    let dir = check.join(name);
    let _ = fs::remove_dir_all(&dir);
    dir_of(&dir);
    whole(&check.join(format!("{name}.npy")));
}

#[test]
fn records_written_as_stacks_read_back_and_are_left_for_dask() {
    let traces: Vec<Trace8> = (0..1000).map(Trace8::sample).collect();
    // Streamed, in uneven batches: blocks of 128 records.
    leave(
        "api_trace_packed",
        |dir| {
            let mut w = StackWriter::<Trace8>::create(dir, &[], 128).unwrap();
            for batch in traces.chunks(77) {
                w.extend(batch).unwrap();
            }
            let info = w.finish().unwrap();
            assert_eq!(info.chunks[0].len(), 8);
            let stack = Stack::from_path(dir).unwrap();
            assert_eq!(stack.read::<Array<Trace8>>().unwrap().into_vec(), traces);
            assert_eq!(stack.read_block::<Array<Trace8>>(7).unwrap().as_slice(), &traces[896..]);
            info
        },
        &|path| traces.write_npy(path).unwrap(),
    );
    // Aligned records (padding in the dtype), read back as the packed layout.
    let aligned: Vec<Trace8Aligned> = traces.iter().copied().map(Trace8Aligned::from).collect();
    leave(
        "api_trace_aligned",
        |dir| {
            let info = write_stack_with(aligned.as_slice(), dir, StackOptions::new().block_len(300)).unwrap();
            assert_eq!(info.chunks, [vec![300, 300, 300, 100]]);
            assert_eq!(Stack::from_path(dir).unwrap().read::<Array<Trace8>>().unwrap().into_vec(), traces);
            info
        },
        &|path| aligned.write_npy(path).unwrap(),
    );
    // Plain arrays along each axis, in both orders.
    let cube = Array::from_shape_vec(vec![6, 5, 4], (0..120).map(|v| f64::from(v) * 0.5 - 7.0).collect()).unwrap();
    let fcube = Array::from_shape_vec_fortran(vec![6, 5, 4], (0..120i32).map(|v| v * 3 - 100).collect()).unwrap();
    for axis in 0..3 {
        leave(
            &format!("api_f8_axis{axis}"),
            |dir| {
                let info = write_stack_with(&cube, dir, StackOptions::new().axis(axis).block_len(2)).unwrap();
                assert_eq!(Stack::from_path(dir).unwrap().read::<Array<f64>>().unwrap().into_vec(), cube.as_slice());
                info
            },
            &|path| cube.write_npy(path).unwrap(),
        );
        leave(
            &format!("api_i4_fortran_axis{axis}"),
            |dir| write_stack_with(&fcube, dir, StackOptions::new().axis(axis).block_len(3)).unwrap(),
            &|path| fcube.write_npy(path).unwrap(),
        );
    }
}
