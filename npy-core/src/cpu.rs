//! How many CPUs this process may use: large reads, writes and archives use a second
//! thread only when it would have a CPU of its own (see "Speed" in the crate docs).
#![forbid(unsafe_code)]

use std::num::NonZeroUsize;
use std::sync::OnceLock;

/// Whether a second thread would have a CPU of its own: large reads, writes and archives
/// then use one.
pub(crate) fn two_cpus() -> bool {
    cpus() > 1
}

/// How many CPUs this process may use (at least 1). Asked once: `available_parallelism`
/// reads cgroup files on Linux, too slow for every small write.
pub(crate) fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}
