//! Reads every fixture NumPy made (tests/data, see `cargo xtask golden`) and checks it.
