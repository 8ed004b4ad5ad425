//! npy's tables on Ballista: a standalone cluster in this process ([`cluster`]) and, with
//! the `cluster` feature, npy's scheduler and executors as processes ([`processes`]). One
//! test binary: each one linked DataFusion and Ballista again (hundreds of MB and a long link).

mod support;

mod cluster;
#[cfg(feature = "cluster")]
mod processes;
