//! The worker threads that compress deflated members while the caller goes on: a member's
//! bytes are staged in memory and compressed on a thread of their own; the writer takes
//! the results back oldest first, so members are appended in the order they were added.
//! Dropped, the pool tells its workers to stop and joins them.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use zip::write::{SimpleFileOptions, ZipFileBuilder};
use zip::PreparedZipFile;

use super::zip_err;
use crate::error::{Error, Result};

/// A deflated member being compressed on a worker thread.
type Job = (String, JoinHandle<zip::result::ZipResult<PreparedZipFile>>);

/// The workers compressing deflated members; dropped, they are told to stop and joined.
#[derive(Default)]
pub(super) struct Workers {
    jobs: VecDeque<Job>,
    cancel: Arc<AtomicBool>,
}

impl Workers {
    /// How many members are being compressed or wait, compressed, to be taken.
    pub(super) fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether no member is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Compresses `staged`, the data of `member`, on a new worker thread.
    pub(super) fn spawn(&mut self, member: String, options: SimpleFileOptions, staged: Vec<u8>) {
        let name = member.clone();
        let cancel = Arc::clone(&self.cancel);
        // Waits on nothing: it compresses and returns, or stops at the next piece once
        // told to (`Workers::drop`).
        let job = std::thread::spawn(move || {
            let mut builder = ZipFileBuilder::new(&name, options)?;
            // Cut as a member streamed into the archive is (`CODEC_PIECE`): the same bytes.
            for piece in staged.chunks(super::write::CODEC_PIECE) {
                if cancel.load(Ordering::Relaxed) {
                    return Err(io::Error::new(io::ErrorKind::Interrupted, "the archive was dropped").into());
                }
                builder.write_all(piece)?;
            }
            builder.finish()
        });
        self.jobs.push_back((member, job));
    }

    /// Waits for the oldest pending member: its name and the compressed member, or the
    /// error that stopped it; `None` when no member is pending.
    pub(super) fn join_oldest(&mut self) -> Option<(String, Result<PreparedZipFile>)> {
        let (member, job) = self.jobs.pop_front()?;
        let prepared = job
            .join()
            .map_err(|_| Error::npz(Some(&member), "the compression thread panicked"))
            .and_then(|done| done.map_err(|e| zip_err(Some(&member), e)));
        Some((member, prepared))
    }
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
