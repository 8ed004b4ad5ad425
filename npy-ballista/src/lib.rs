//! npy-ballista (issue 17, being built).
#![forbid(unsafe_code)]

mod cluster;
mod state;

pub use cluster::{remote, standalone};
pub use state::ballista_state;
