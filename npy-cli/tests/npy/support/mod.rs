//! What the topics share: running `npy`, where the fixtures are, NumPy's corpus and the
//! peak memory of a child ([`rss`]).

#![allow(dead_code)] // Each topic uses what it needs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../../../tests/support/corpus.rs"]
pub mod corpus;
pub mod rss;

/// Runs `npy ARGS` to its end and returns what it printed.
pub fn npy<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_npy")).args(args).output().expect("run npy")
}

/// Asserts `npy` succeeded, showing its stderr if not.
pub fn ok(output: &Output) {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// `p` as UTF-8 (the tests' temporary paths are).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A file of the workspace's NumPy-made fixtures (`tests/data`).
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data").join(rel)
}
