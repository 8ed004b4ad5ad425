//! The `npy` tool, run as a user runs it (`env!("CARGO_BIN_EXE_npy")`): one module per
//! topic, in one test binary (fifteen were 324 MB and fifteen links in a debug build; this
//! one is 110 MB). Every test runs `npy` as child processes and measures their memory and
//! limits, never its own, so the topics can share a process: nextest runs each test in a
//! process of its own, `cargo test` several in threads of one.

mod support;

mod append;
mod bounds;
mod check;
mod cli;
mod compression;
mod convert;
mod corrupt;
mod dump;
mod killed;
mod memory;
mod pickle_rss;
mod schema;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "sql")]
mod sql_out;
mod stack;
