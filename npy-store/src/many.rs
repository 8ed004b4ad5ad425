//! Many small reads on a few threads, their results handed to the caller in order
//! ([`in_order`]), and [`load_many`], thousands of small `.npy` files read that way: what
//! `npy.load_many` reads with.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use npy_core::{DynArray, Error, Loader, ReadOptions, Result};

/// [`load_many_with`] with default [`ReadOptions`].
///
/// # Examples
/// ```
/// use npy_core::prelude::*;
/// use npy_core::DynArray;
///
/// let dir = tempfile::tempdir()?;
/// let paths: Vec<_> = (0..100).map(|i| dir.path().join(format!("sample{i:03}.npy"))).collect();
/// for (i, path) in paths.iter().enumerate() {
///     vec![i as f64; 240].write_npy(path)?;
/// }
/// let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
/// // Each file's own result; here the first error (naming its file) ends the run.
/// let arrays: Vec<DynArray> = npy_store::many::load_many(&paths, threads).into_iter().collect::<Result<_, _>>()?;
/// assert_eq!(arrays.len(), 100);
/// assert_eq!(arrays[42].to_vec::<f64>()?, [42.0; 240]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load_many<P: AsRef<Path> + Sync>(paths: &[P], threads: usize) -> Vec<Result<DynArray>> {
    load_many_with(paths, threads, &ReadOptions::default())
}

/// The arrays of the `.npy` files at `paths`, in order, each as [`Loader::load`] gives it
/// (a small file by one `read`, its header parsed once for a run of files that share it),
/// read on up to `threads` threads (this one too). Every file is read, whatever the others
/// give: each result is its own file's array or error, naming it.
pub fn load_many_with<P: AsRef<Path> + Sync>(
    paths: &[P],
    threads: usize,
    options: &ReadOptions,
) -> Vec<Result<DynArray>> {
    let mut loaded = Vec::with_capacity(paths.len());
    let read =
        |i: usize, loader: &mut Option<Loader>| loader.get_or_insert_with(|| Loader::new_with(options)).load(&paths[i]);
    in_order(paths.len(), threads, usize::MAX, read, |ready| loaded.extend(ready));
    let panicked = |path: &P| Error::from(std::io::Error::other("its read panicked")).reading(path);
    loaded.into_iter().zip(paths).map(|(got, path)| got.unwrap_or_else(|| Err(panicked(path)))).collect()
}

/// Runs `read(i, state)` for every `i` in `0..count` on up to `threads` threads, the
/// calling thread one of them, each thread taking the next `i` not taken and keeping a
/// `state` of its own (`S::default()` at first: a header it may reuse for the next file,
/// say). Results go to `take` on the calling thread, in order, as they become ready:
/// between every `per_turn` reads of its own (so what `take` does, under a lock such as
/// Python's, overlaps the other threads' reads), and the rest once all are done.
///
/// A read that panics gives `None` (its thread's `state` starts over), every other read
/// still runs, and the panic goes no further: the caller decides what becomes of that
/// input (`npy.load_many` reads it again the general way). So no thread is lost, and none
/// waits on another: `take` gets exactly `count` results.
///
/// # Examples
/// ```
/// use npy_store::many::in_order;
///
/// let mut got = Vec::new();
/// in_order(
///     100,
///     4,
///     8,
///     |i, calls: &mut usize| {
///         *calls += 1;
///         assert_ne!(i, 42, "a read that fails badly");
///         i * i
///     },
///     |ready| got.extend(ready),
/// );
/// assert_eq!(got.len(), 100);
/// assert_eq!(got[41], Some(41 * 41));
/// assert_eq!(got[42], None);
/// ```
pub fn in_order<T, S>(
    count: usize,
    threads: usize,
    per_turn: usize,
    read: impl Fn(usize, &mut S) -> T + Sync,
    mut take: impl FnMut(Vec<Option<T>>),
) where
    T: Send,
    S: Default,
{
    let next = AtomicUsize::new(0);
    // Each read's result once done (`Some`): `None` inside where it panicked.
    let slots: Vec<Mutex<Option<Option<T>>>> = (0..count).map(|_| Mutex::new(None)).collect();
    // Does up to `most` reads not taken yet; false once none are left.
    let work = |most: usize, state: &mut S| {
        for _ in 0..most {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                return false;
            }
            let got = std::panic::catch_unwind(AssertUnwindSafe(|| read(i, state))).ok();
            if got.is_none() {
                *state = S::default();
            }
            *slots[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(got);
        }
        true
    };
    let mut given = 0;
    // Hands `take` the results ready from the first not given on (with `all`, every one).
    let mut hand = |all: bool| {
        let mut ready = Vec::new();
        while given < count {
            match slots[given].lock().unwrap_or_else(PoisonError::into_inner).take() {
                Some(got) => ready.push(got),
                // Every read is done once the threads are joined: never here.
                None if all => ready.push(None),
                None => break,
            }
            given += 1;
        }
        if !ready.is_empty() {
            take(ready);
        }
    };
    let helpers = threads.min(count).saturating_sub(1);
    std::thread::scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|| {
                let mut state = S::default();
                while work(usize::MAX, &mut state) {}
            });
        }
        let mut state = S::default();
        while work(per_turn.max(1), &mut state) {
            hand(false);
        }
    });
    hand(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every result comes once, in order, whatever the threads; a panicking read gives
    /// `None` at its place only, on whichever thread it ran, and nothing waits.
    #[test]
    fn results_come_in_order_and_a_panic_is_a_none_in_its_place() {
        for threads in [1, 2, 3, 8] {
            for count in [0, 1, 5, 100, 1000] {
                let mut got = Vec::new();
                let mut turns = 0;
                in_order(
                    count,
                    threads,
                    7,
                    |i, seen: &mut Vec<usize>| {
                        // Each thread's state is its own: only its reads, ascending.
                        assert!(seen.last().is_none_or(|&last| last < i));
                        seen.push(i);
                        assert!(i % 97 != 13, "injected into read {i}");
                        i * 3
                    },
                    |ready| {
                        turns += 1;
                        got.extend(ready);
                    },
                );
                let want: Vec<_> = (0..count).map(|i| (i % 97 != 13).then_some(i * 3)).collect();
                assert_eq!(got, want, "{threads} threads, {count} reads");
                assert!(count == 0 || turns >= 1);
            }
        }
    }

    /// Every file's own array or error, in order, on any number of threads.
    #[test]
    fn load_many_gives_each_file_its_array_or_its_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for i in 0..50u32 {
            let path = dir.path().join(format!("s{i:02}.npy"));
            match i % 10 {
                3 => std::fs::write(&path, b"\x93NUMPY not an array").unwrap(),
                7 => {}
                _ => npy_core::WriteNpy::write_npy(&vec![i; i as usize], &path).unwrap(),
            }
            paths.push(path);
        }
        for threads in [1, 3] {
            let got = load_many(&paths, threads);
            assert_eq!(got.len(), paths.len());
            for (i, (got, path)) in got.iter().zip(&paths).enumerate() {
                match (i % 10, got) {
                    (3 | 7, Err(e)) => assert!(e.to_string().contains(&*path.to_string_lossy()), "{e}"),
                    (_, Ok(array)) => assert_eq!(array.to_vec::<u32>().unwrap(), vec![i as u32; i]),
                    (_, got) => panic!("file {i}: {got:?}"),
                }
            }
        }
    }

    /// With one thread, results come in turns of `per_turn` as they are read.
    #[test]
    fn the_calling_thread_hands_results_over_between_turns() {
        let mut sizes = Vec::new();
        in_order(20, 1, 8, |i, (): &mut ()| i, |ready| sizes.push(ready.len()));
        assert_eq!(sizes, [8, 8, 4]);
    }
}
