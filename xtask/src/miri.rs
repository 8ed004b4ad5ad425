//! `cargo xtask miri`: npy-core's unit tests under Miri, which reports undefined behaviour
//! (out-of-bounds or uninitialized reads, aliasing violations, data races) and deadlocks
//! in what they reach: `read.rs`' buffers, fills and two-thread conversions, `write.rs`'
//! byte views and piece threads, `record.rs`' plans, `types.rs`, `atomic.rs`, and the safe
//! code around them. `mmap.rs` (memory maps) and the zip calls of `npz/` are out of
//! Miri's reach. The integration tests are not run: they take minutes each under Miri,
//! and `tests/npz.rs` stops at a Stacked Borrows report inside the zlib-rs dependency
//! (dropping its `Deflate`), not in this project's code.
//!
//! Runs `cargo +nightly miri test -p npy-core --lib --all-features`, so it needs the
//! nightly toolchain with Miri (`rustup toolchain install nightly --component miri
//! rust-src`); it is not a CI step for that reason. `MIRIFLAGS` (after any the caller
//! set):
//! - `-Zmiri-disable-isolation`: the tests read and write temporary files;
//! - `-Zmiri-num-cpus=2`: Miri reports one CPU by default, and the threaded paths (the
//!   piece maker of `write_pieces`, ...) only run with two.
//!
//! What Miri cannot run is compiled out or skipped under `cfg(miri)`: `madvise`,
//! `sysconf` and `fallocate` (foreign functions) are compiled out; tests of memory maps,
//! of tens of megabytes of data, or of safe code that would take minutes under Miri are
//! `#[cfg_attr(miri, ignore = "reason")]`, and list as ignored with their reason. About
//! two minutes on these machines.

use crate::project::{self, Result};

const USAGE: &str = "usage: cargo xtask miri";

/// The Miri flags the tests need.
const MIRIFLAGS: &str = "-Zmiri-disable-isolation -Zmiri-num-cpus=2";

pub fn run(args: &[&str]) -> Result<()> {
    if !args.is_empty() {
        return Err(format!("unknown arguments {args:?}; {USAGE}"));
    }
    let flags = match std::env::var("MIRIFLAGS") {
        Ok(theirs) if !theirs.trim().is_empty() => format!("{theirs} {MIRIFLAGS}"),
        _ => MIRIFLAGS.to_string(),
    };
    project::step(&format!("MIRIFLAGS='{flags}' cargo +nightly miri test -p npy-core --lib --all-features"));
    // The rustup proxy, not `$CARGO` (the toolchain running xtask): `+nightly` picks the
    // toolchain that has Miri.
    let mut cmd = std::process::Command::new("cargo");
    cmd.current_dir(project::root()).env_remove("RUSTUP_TOOLCHAIN").env("MIRIFLAGS", &flags).args([
        "+nightly",
        "miri",
        "test",
        "-p",
        "npy-core",
        "--lib",
        "--all-features",
    ]);
    let start = std::time::Instant::now();
    project::run(&mut cmd).map_err(|e| {
        format!("{e}; Miri needs the nightly toolchain: rustup toolchain install nightly --component miri rust-src")
    })?;
    println!("miri: npy-core's unit tests passed in {:.0} s", start.elapsed().as_secs_f64());
    Ok(())
}
