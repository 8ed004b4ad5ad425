//! [`shared_runtime`]: the tokio runtime a program with no runtime of its own waits on for
//! npy-store's async reads, one a process, fork-aware.

use std::sync::{Mutex, PoisonError};

use npy_core::{Error, Result};
use tokio::runtime::Runtime;

/// Worker threads of the shared runtime: its tasks wait on the network and hand blocking
/// file reads to tokio's blocking pool, so two keep a few hundred GETs in flight.
const WORKERS: usize = 2;

/// The process's shared runtime (two worker threads, named `npy-remote`), made on first
/// use: for callers that block on npy-store's async API (a Python binding, a training
/// loop, a command) and have no runtime of their own. A child process forked after its
/// parent made one has none of its threads (fork copies only the calling thread), so the
/// child's first call makes its own; the parent's is never dropped (its threads are gone
/// in the child, where dropping it would wait on them).
///
/// # Errors
/// [`npy_core::ErrorKind::Io`] when the runtime's threads cannot be started.
///
/// # Examples
/// ```
/// let runtime = npy_store::shared_runtime()?;
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("x.bin");
/// # std::fs::write(&path, b"0123")?;
/// # let path = path.to_str().unwrap();
/// let source = runtime.block_on(npy_store::Source::open(path))?;
/// assert_eq!(source.size(), 4);
/// assert!(std::ptr::eq(runtime, npy_store::shared_runtime()?), "one a process");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn shared_runtime() -> Result<&'static Runtime> {
    static RUNTIME: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut made = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((owner, runtime)) = *made {
        if owner == pid {
            return Ok(runtime);
        }
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(WORKERS).thread_name("npy-remote").enable_all();
    let runtime = builder.build().map_err(|e| Error::from(std::io::Error::other(format!("no runtime: {e}"))))?;
    let runtime: &'static Runtime = Box::leak(Box::new(runtime));
    *made = Some((pid, runtime));
    Ok(runtime)
}
