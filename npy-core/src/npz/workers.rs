//! The worker threads that compress members while the caller goes on: a member's bytes are
//! staged in memory and compressed on a thread of their own (a large deflated one on
//! several: `parts`); the writer takes the results back oldest first, so members
//! are appended in the order they were added. Dropped, the pool tells its workers to stop
//! and joins them.
//!
//! The newest member is held, not started, until another comes: then it goes to a worker
//! while the caller stages the next, and the last one is compressed on the caller's thread
//! when taken, so an archive of one small member costs no thread (NumPy's time for it is a
//! fraction of a millisecond).

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use zip::write::{SimpleFileOptions, ZipFileBuilder};
use zip::PreparedZipFile;

use super::parts::{self, Unfinished};
use super::{zip_err, Compression};
use crate::error::{Error, Result};

/// Bytes a compressed member's data is handed to its codec in. The compressed bytes can
/// depend on how the input is cut (zlib-rs's deflate, in WebAssembly, measured: a 1.2 MB
/// member deflated to 10,946 bytes streamed, its header then 256 KiB pieces, and to 10,903
/// staged in 1 MiB pieces; zlib and libzstd give the same bytes both ways), so every way
/// a member goes (streamed, staged on a worker, written a few elements at a time) cuts it
/// alike: pieces of this size counted from its start, then the rest. Cache-sized, so the
/// codec's per-byte work runs on data the copy before it left in cache.
pub(super) const CODEC_PIECE: usize = 256 << 10;

/// A member compressed on worker threads.
pub(super) enum Compressed {
    /// Compressed by the zip writer's codec, as when streamed into the archive.
    Prepared(PreparedZipFile),
    /// Deflated in parts, its final block still to come.
    Unfinished(SimpleFileOptions, Unfinished),
}

/// A member being compressed on a worker thread.
type Job = (String, JoinHandle<zip::result::ZipResult<Compressed>>);

/// A staged member, to be compressed.
struct Staged {
    member: String,
    compression: Compression,
    options: SimpleFileOptions,
    data: Vec<u8>,
    /// Threads a member long enough to cut may take (`parts`).
    threads: usize,
}

/// The workers compressing members; dropped, they are told to stop and joined.
#[derive(Default)]
pub(super) struct Workers {
    jobs: VecDeque<Job>,
    /// The newest member, not started yet: see the module docs.
    held: Option<Staged>,
    cancel: Arc<AtomicBool>,
}

impl Workers {
    /// How many members are pending: being compressed, compressed and waiting to be taken,
    /// or held.
    pub(super) fn len(&self) -> usize {
        self.jobs.len() + usize::from(self.held.is_some())
    }

    /// Whether no member is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes `data`, the staged data of `member`, to compress: it is held until the next
    /// member comes, then compressed on a worker thread, or on the caller's when it is taken
    /// first.
    pub(super) fn add(
        &mut self,
        member: String,
        compression: Compression,
        options: SimpleFileOptions,
        data: Vec<u8>,
        threads: usize,
    ) {
        if let Some(held) = self.held.take() {
            let cancel = Arc::clone(&self.cancel);
            let member = held.member.clone();
            // Waits on nothing (its part threads end as it does): it compresses and
            // returns, or stops at the next piece once told to (`Workers::drop`).
            let job = std::thread::spawn(move || compress(held, &cancel));
            self.jobs.push_back((member, job));
        }
        self.held = Some(Staged { member, compression, options, data, threads });
    }

    /// Waits for the oldest pending member (compressing it here if it is the held one): its
    /// name and the compressed member, or the error that stopped it; `None` when no member
    /// is pending.
    pub(super) fn join_oldest(&mut self) -> Option<(String, Result<Compressed>)> {
        let Some((member, job)) = self.jobs.pop_front() else {
            let held = self.held.take()?;
            let member = held.member.clone();
            let compressed = compress(held, &self.cancel).map_err(|e| zip_err(Some(&member), e));
            return Some((member, compressed));
        };
        let compressed = job
            .join()
            .map_err(|_| Error::npz(Some(&member), "the compression thread panicked"))
            .and_then(|done| done.map_err(|e| zip_err(Some(&member), e)));
        Some((member, compressed))
    }
}

/// Compresses a staged member: deflated in parts when it is long enough to cut or to
/// choose an encoder for (`parts`), else by the zip writer's codec, as when streamed into
/// the archive.
fn compress(staged: Staged, cancel: &AtomicBool) -> zip::result::ZipResult<Compressed> {
    let Staged { member, compression, options, data, threads } = staged;
    if let Some(level) = parts::deflate_level(compression, data.len() as u64) {
        let unfinished = parts::deflate(&data, level, threads, cancel)?;
        return Ok(Compressed::Unfinished(options, unfinished));
    }
    let mut builder = ZipFileBuilder::new(&member, options)?;
    // Cut as a member streamed into the archive is (`CODEC_PIECE`): the same bytes.
    for piece in data.chunks(CODEC_PIECE) {
        if cancel.load(Ordering::Relaxed) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "the archive was dropped").into());
        }
        builder.write_all(piece)?;
    }
    builder.finish().map(Compressed::Prepared)
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        for (_, job) in self.jobs.drain(..) {
            // Its result (an error, or a member nobody will append) is of no use now.
            let _ = job.join();
        }
    }
}
