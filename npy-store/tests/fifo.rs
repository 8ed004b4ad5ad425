//! A FIFO among a directory's or a pattern's files, or named itself, given to every door
//! of npy-store that finds or opens files: each fails at once with an error naming the
//! FIFO, never waiting in `open(2)` for a writer that never comes, and never leaving the
//! FIFO out unsaid. Each door runs on a thread of its own, so that a hang fails the test
//! (after [`PATIENCE`]) instead of hanging the suite.
#![cfg(unix)]

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use npy_core::prelude::*;
use npy_store::{Shards, Table};

/// How long a door may take before it is taken to hang: long past the second an answer
/// takes, for a loaded machine.
const PATIENCE: Duration = Duration::from_secs(10);

/// A directory holding a good `.npy` file and the FIFO `fifo.npy` (its path second).
fn dir_with_fifo() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    (0..10i64).collect::<Vec<_>>().write_npy(dir.path().join("a.npy")).unwrap();
    let fifo = dir.path().join("fifo.npy");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo {}", fifo.display());
    (dir, fifo.to_str().unwrap().to_owned())
}

/// The error `door` gives, on a thread of its own, within [`PATIENCE`]: one naming the
/// FIFO and saying what it is.
fn refused(what: &str, door: impl FnOnce() -> Result<(), npy_core::Error> + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || tx.send(door()));
    let got = rx.recv_timeout(PATIENCE).unwrap_or_else(|_| panic!("{what}: no answer in {PATIENCE:?}: it hangs"));
    let e = got.expect_err(what).to_string();
    assert!(e.contains("fifo.npy") && e.contains("is a FIFO, not a file"), "{what}: {e}");
    assert!(started.elapsed() < PATIENCE, "{what}");
}

fn run<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap().block_on(f)
}

#[test]
fn every_door_refuses_a_fifo_at_once_naming_it() {
    let (dir, fifo) = dir_with_fifo();
    let dir_name = dir.path().to_str().unwrap().to_owned();
    let pattern = format!("{dir_name}/*.npy");
    // The finders list it (so that opening it fails), by a directory and by a pattern.
    for source in [&dir_name, &pattern] {
        let found = npy_store::find(source).unwrap();
        assert!(found.iter().any(|p| p == Path::new(&fifo)), "{source}: {found:?}");
        let found = run(npy_store::find_files(source)).unwrap();
        assert!(found.contains(&fifo), "{source}: {found:?}");
    }
    for source in [dir_name.clone(), pattern.clone(), fifo.clone()] {
        let name = source.clone();
        refused(&format!("Table::open({name})"), move || run(Table::open(&source)).map(|_| ()));
        let source = name.clone();
        refused(&format!("Shards::open({name})"), move || run(Shards::open(&[&source])).map(|_| ()));
    }
    let path = fifo.clone();
    refused("load_many", move || npy_store::many::load_many(&[&path], 2).remove(0).map(|_| ()));
    let path = fifo.clone();
    refused("Source::open", move || run(npy_store::Source::open(&path)).map(|_| ()));
    let path = fifo.clone();
    refused("Source::open_start", move || run(npy_store::Source::open_start(&path, 10)).map(|_| ()));
    // A store for it (the readers a caller's store serves, as Python's locate) and its
    // `file://` URL.
    let path = fifo.clone();
    refused("store_for", move || npy_store::store_for(&path).map(|_| ()));
    let url = format!("file://{fifo}");
    refused("Source::open(file://)", move || run(npy_store::Source::open(&url)).map(|_| ()));
}
