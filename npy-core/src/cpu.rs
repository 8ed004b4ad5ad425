//! How many CPUs this process may use: large reads, writes and archives use a second
//! thread only when it would have a CPU of its own (see "Speed" in the crate docs). On
//! WebAssembly no thread is started: there is one CPU, whatever a caller asks for.
#![forbid(unsafe_code)]

use std::num::NonZeroUsize;
use std::sync::OnceLock;

/// Whether a second thread would have a CPU of its own: large reads, writes and archives
/// then use one.
pub(crate) fn two_cpus() -> bool {
    cpus() > 1
}

/// How many CPUs this process may use (at least 1; 1 on WebAssembly). Asked once:
/// `available_parallelism` reads cgroup files on Linux, too slow for every small write.
pub(crate) fn cpus() -> usize {
    if cfg!(target_family = "wasm") {
        return 1;
    }
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}

/// The threads a job may use when its caller asks for `asked`: at least 1, and 1 where no
/// thread can be started (WebAssembly).
pub(crate) fn threads(asked: usize) -> usize {
    if cfg!(target_family = "wasm") {
        1
    } else {
        asked.max(1)
    }
}
