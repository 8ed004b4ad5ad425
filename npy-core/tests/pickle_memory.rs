//! The restricted pickle decoder's memory, measured: a counting global allocator records
//! the peak of live heap bytes while hostile pickles of a few MB are decoded (as object
//! arrays and as Dask `info` dicts), and the peak must stay within the documented default
//! bound, 128 MiB plus 4 bytes per pickle byte (see `npy_core::object`).
//!
//! Each test holds [`SERIAL`] throughout, so no other test's allocations mix in.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use npy_core::object::{from_pickle, from_pickle_with, to_pickle, Object};
use npy_core::prelude::*;
use npy_core::stack::StackInfo;
use npy_core::ReadOptions;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so
// `System`'s guarantees hold; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, passed on as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` and `layout` come from this allocator, as `dealloc` requires.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `realloc`'s contract, passed on as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Counted as copy-then-free (old and new both live): what a small realloc does,
            // and more than a large one (glibc moves its pages) takes.
            grew(new_size);
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Held by each test for its whole run: the counters are global.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The documented default bound of the decoder's heap for a pickle of `len` bytes.
fn bound(len: usize) -> usize {
    (128 << 20) + 4 * len
}

/// Runs `decode` and returns the peak of heap bytes it added over what was live before.
fn peak_of<T>(decode: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let out = decode();
    (out, PEAK.load(Relaxed) - before)
}

/// The pickle of a 1-element object array whose element `items` pushes (protocol 2),
/// as NumPy 1.x wrote it.
fn array_of(items: &[u8]) -> Vec<u8> {
    let mut p =
        b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R(K\x01K\x01\x85".to_vec();
    p.extend_from_slice(
        b"cnumpy\ndtype\nU\x02O8K\x00K\x01\x87R(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tbI00\n](",
    );
    p.extend_from_slice(items);
    p.extend_from_slice(b"etb.");
    p
}

/// The pickle of a Dask `info`-like dict `{'x': <what items pushes>}`.
fn info_of(items: &[u8]) -> Vec<u8> {
    let mut p = b"\x80\x02}U\x01x".to_vec();
    p.extend_from_slice(items);
    p.extend_from_slice(b"s.");
    p
}

/// `n` copies of `unit`.
fn run(unit: &[u8], n: usize) -> Vec<u8> {
    unit.repeat(n)
}

/// A LONG_BINGET of memo entry `i`.
fn get(i: u32) -> Vec<u8> {
    let mut g = vec![b'j'];
    g.extend_from_slice(&i.to_le_bytes());
    g
}

const MB: usize = 1 << 20;

/// Hostile element payloads of about `size` bytes each, by name.
fn hostile(size: usize) -> Vec<(&'static str, Vec<u8>)> {
    let half = size / 2;
    // Lists nested through the memo, each put in the one before while still empty (the
    // depth known while decoding stays 2): n empty memoised lists, then list i + 1
    // appended to list i; the element is list 0.
    let chain_len = size / 16;
    let mut chain = run(b"]\x940", chain_len);
    for i in 0..chain_len as u32 - 1 {
        chain.extend_from_slice(&get(i));
        chain.extend_from_slice(&get(i + 1));
        chain.extend_from_slice(b"a0");
    }
    chain.extend_from_slice(&get(0));
    // [L, L] with L = [M, M] ...: 2^40 values as a tree.
    let mut doubling = b"(NNl\x940".to_vec();
    for i in 0..40 {
        doubling.push(b'(');
        doubling.extend_from_slice(&get(i));
        doubling.extend_from_slice(&get(i));
        doubling.extend_from_slice(b"l\x940");
    }
    doubling.extend_from_slice(&get(40));
    // One shared str in a list, many times (each copy is a new String).
    let mut shared = b"X\x00\x00\x04\x00".to_vec();
    shared.extend_from_slice(&[b'a'; 0x400 << 8]);
    shared.extend_from_slice(b"\x940(");
    shared.extend_from_slice(&run(&get(0), (size - shared.len()) / 5));
    shared.push(b'l');
    // A sparse memo: every PUT past a gap.
    let mut sparse = Vec::new();
    for i in 0..(size / 7) as u32 {
        sparse.extend_from_slice(b"N");
        sparse.push(b'r');
        sparse.extend_from_slice(&(i * 2 + 1).to_le_bytes());
        sparse.push(b'0');
    }
    sparse.push(b'N');
    // A huge declared length with little behind it (BINUNICODE8, BINBYTES8).
    let mut claim = b"\x8d".to_vec();
    claim.extend_from_slice(&(1u64 << 40).to_le_bytes());
    claim.extend_from_slice(&run(b"a", size));
    // A dtype whose two fields are the dtype before it, 31 levels over: 2^31 fields if
    // copied (`V0` keeps every size 0). Memo 0 is numpy.dtype, memo 1 the last dtype.
    let mut dtype =
        b"cnumpy\ndtype\nq\x00U\x02V0\x89\x88\x87R(K\x03U\x01|NNNJ\x00\x00\x00\x00K\x01K\x00tbq\x01".to_vec();
    for _ in 0..31 {
        dtype.extend_from_slice(
            b"h\x00U\x02V0\x89\x88\x87R(K\x03U\x01|N(U\x01aU\x01bt}(U\x01ah\x01K\x00\x86U\x01bh\x01K\x00\x86uK\x00K\x01K\x10tbq\x01",
        );
    }
    vec![
        ("a dtype of a memoised dtype, doubled", dtype),
        ("nested lists", [run(b"]", half), run(b"a", half - 1)].concat()),
        ("nested tuples", [b")".to_vec(), run(b"\x85", size)].concat()),
        ("nested dicts", [b"}".to_vec(), run(b"N}", half), run(b"s", half)].concat()),
        ("lists nested through the memo", chain),
        ("a memoised list doubled 40 times", doubling),
        ("a shared str repeated", shared),
        ("one-item lists", [b"(".to_vec(), run(b"]Na", size / 3), b"l".to_vec()].concat()),
        ("a dict of many entries", [b"}(".to_vec(), run(b"K\x01N", size / 3), b"u".to_vec()].concat()),
        ("a run of MARK", [run(b"(", size), b"N".to_vec()].concat()),
        ("a run of None on the stack", [b"(".to_vec(), run(b"N", size), b"l".to_vec()].concat()),
        ("a run of memoised None", [b"(".to_vec(), run(b"N\x94", size / 2), b"l".to_vec()].concat()),
        ("a sparse memo", sparse),
        ("a huge declared length", claim),
        ("a protocol 0 str", [b"V".to_vec(), run(b"\xe9", size), b"\n".to_vec()].concat()),
    ]
}

#[test]
fn hostile_pickles_stay_within_the_documented_bound() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut report = Vec::new();
    for (name, items) in hostile(4 * MB) {
        for (kind, pickle) in [("object array", array_of(&items)), ("info dict", info_of(&items))] {
            let (result, peak) = if kind == "object array" {
                peak_of(|| from_pickle(&pickle).map(drop))
            } else {
                peak_of(|| StackInfo::from_pickle(&pickle).map(drop))
            };
            if kind == "object array" {
                // The same under a fixed budget of 4 MiB: at most twice that.
                let fixed_budget = ReadOptions::new().max_object_bytes(4 * MB).clone();
                let (_, fixed) = peak_of(|| from_pickle_with(&pickle, &fixed_budget).map(drop));
                eprintln!("{name}: under a fixed 4 MiB budget: peak {:.1} MB", fixed as f64 / 1e6);
                assert!(fixed <= 8 * MB, "{name}: peak {fixed} under a 4 MiB budget");
            }
            let line = format!(
                "{name} ({kind}, {:.1} MB): peak {:.1} MB, bound {:.1} MB: {}",
                pickle.len() as f64 / 1e6,
                peak as f64 / 1e6,
                bound(pickle.len()) as f64 / 1e6,
                result.as_ref().map_or_else(|e| e.to_string().chars().take(90).collect::<String>(), |()| "ok".into())
            );
            assert!(peak <= bound(pickle.len()), "over the bound: {line}");
            report.push(line);
        }
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn valid_arrays_decode_within_the_bound() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Object arrays as NumPy writes them: short strs, None, small lists.
    let strs: Vec<Object> = (0..400_000).map(|i| Object::from(format!("s{i}"))).collect();
    let nones = vec![Object::None; 1 << 18];
    let lists: Vec<Object> = (0..200_000).map(|i| Object::List(vec![Object::Int(i), Object::None])).collect();
    for (name, values) in [("strs", strs), ("None", nones), ("lists", lists)] {
        let n = values.len();
        let pickle = to_pickle(&Array::from_shape_vec(vec![n], values).unwrap()).unwrap();
        let (result, peak) = peak_of(|| from_pickle(&pickle));
        let array = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(array.as_slice().len(), n);
        eprintln!("{name}: {} bytes of pickle, peak {:.1} MB", pickle.len(), peak as f64 / 1e6);
        assert!(peak <= bound(pickle.len()), "{name}: peak {peak} over {}", bound(pickle.len()));
    }
}
