//! The stored members of one table of a local archive read together ([`Together`]): each
//! block of rows, every member's bytes for it in one blocking task, where each member read
//! its own in a task of its own, one after the other, from a file it opened itself.

use std::ops::Range;
use std::sync::Arc;

use npy_core::Result;
use tokio::sync::Mutex;

use crate::error::io_error;
use crate::source::{read_full_at, Source};

/// The bytes one member's scan reads: from its data start, `len` bytes (the member's data,
/// or its asked rows where they reach past it), `block` at a time (a batch's rows).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) data_start: u64,
    pub(crate) len: u64,
    pub(crate) block: u64,
}

/// Stored members of one archive whose scans advance block by block in step (a table's
/// columns). Where the archive is a local file, it is opened once and each read fetches,
/// besides the bytes the asking member wants, the next block of every other member that
/// has less than a block left, in one blocking task of positioned reads: one task a block
/// of rows instead of one a member. A member holds at most two blocks read ahead. Where
/// the archive is an object of a remote store, each member reads alone, as it would
/// without this.
pub(crate) struct Together {
    /// The archive.
    source: Arc<Source>,
    spans: Vec<Span>,
    state: Mutex<State>,
}

enum State {
    /// Not opened yet.
    Unopened,
    /// Each member reads its own bytes.
    Alone,
    /// A local file of `size` bytes (`None` while a read has it: a read dropped before its
    /// end takes it along, and the members' next reads fail); of each member, the bytes
    /// read so far (from its data start) and those not taken yet.
    Local { file: Option<Arc<std::fs::File>>, size: u64, read: Vec<u64>, ready: Vec<Ready> },
}

/// What a member's scan reads from.
pub(crate) enum Opened {
    /// Its own GET, as a member alone.
    Alone,
    /// [`Together::with_next`], from a local file of `size` bytes.
    Local { size: u64 },
}

impl Together {
    /// The reads of members `spans` of the archive `source`.
    pub(crate) fn new(source: Arc<Source>, spans: Vec<Span>) -> Together {
        Together { source, spans, state: Mutex::new(State::Unopened) }
    }

    /// Whether the archive is a local file read together, still the file opened (else
    /// each member reads alone, and reports it as it would alone).
    pub(crate) async fn open(&self) -> Opened {
        let mut state = self.state.lock().await;
        if let State::Unopened = *state {
            *state = State::Alone;
            if let Some(file) = self.source.file().filter(|_| self.source.unchanged().is_ok()) {
                let n = self.spans.len();
                let (read, ready) = (vec![0; n], (0..n).map(|_| Ready::default()).collect());
                let size = self.source.size();
                *state = State::Local { file: Some(file.clone()), size, read, ready };
            }
        }
        match &*state {
            State::Local { size, .. } => Opened::Local { size: *size },
            _ => Opened::Alone,
        }
    }

    /// `f` of member `index`'s next `need` bytes, or `None` when the file ends before them
    /// (it shrank since it was opened). Reads, when the member has fewer ready, its next
    /// `need` or block of bytes (the larger) and the next block of every other member with
    /// less than a block ready, in one blocking task, into buffers each member keeps (as a
    /// file's scan keeps its block's: no fresh pages a block).
    pub(crate) async fn with_next<R>(
        &self,
        index: usize,
        need: usize,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>> {
        let mut state = self.state.lock().await;
        let State::Local { file, read, ready, .. } = &mut *state else {
            return Err(io_error("an archive's members were read together from no file".into()));
        };
        if ready[index].len() < need {
            let mut plan: Vec<(usize, Range<u64>)> = Vec::new();
            for (j, span) in self.spans.iter().enumerate() {
                let want = if j == index {
                    span.block.max((need - ready[j].len()) as u64)
                } else if (ready[j].len() as u64) < span.block {
                    span.block
                } else {
                    0
                };
                let n = want.min(span.len.saturating_sub(read[j]));
                if n > 0 {
                    let at = span.data_start + read[j];
                    plan.push((j, at..at + n));
                }
            }
            let taken = file.take().ok_or_else(|| io_error("a read of the archive's members failed before".into()))?;
            // Each planned member's buffer goes along, its ready bytes first.
            let buffers: Vec<Ready> = plan.iter().map(|(j, _)| std::mem::take(&mut ready[*j])).collect();
            let ranges: Vec<Range<u64>> = plan.iter().map(|(_, r)| r.clone()).collect();
            let runs = tokio::task::spawn_blocking(move || {
                let mut buffers = buffers;
                let done = read_into(&taken, &ranges, &mut buffers);
                (taken, buffers, done)
            });
            let (taken, buffers, done) =
                runs.await.map_err(|e| io_error(format!("a read of the archive's members failed: {e}")))?;
            for ((j, _), buffer) in plan.iter().zip(buffers) {
                ready[*j] = buffer;
            }
            // A failed read leaves the members' counts behind their buffers: the file is
            // dropped, so every later read fails too.
            for ((j, _), got) in plan.iter().zip(done?) {
                read[*j] += got as u64;
            }
            *file = Some(taken);
        }
        if ready[index].len() < need {
            return Ok(None);
        }
        Ok(Some(f(ready[index].take(need))))
    }
}

/// A member's bytes read and not taken yet: `bytes[at..]`, its buffer kept for the next
/// read.
#[derive(Default)]
pub(crate) struct Ready {
    bytes: Vec<u8>,
    at: usize,
}

impl Ready {
    fn len(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// The next `n` bytes (there are as many).
    fn take(&mut self, n: usize) -> &[u8] {
        let from = self.at;
        self.at += n;
        &self.bytes[from..from + n]
    }

    /// Room for more: the bytes not taken moved to the front.
    fn compact(&mut self) {
        self.bytes.drain(..self.at);
        self.at = 0;
    }
}

/// Each of `ranges` of `file` appended to its buffer of `buffers` (compacted first), as
/// many bytes as the file holds of it (one cut short stops the reads): how many each got.
fn read_into(file: &std::fs::File, ranges: &[Range<u64>], buffers: &mut [Ready]) -> std::io::Result<Vec<usize>> {
    let mut got = Vec::with_capacity(ranges.len());
    for (range, buffer) in ranges.iter().zip(buffers) {
        buffer.compact();
        let (old, n) = (buffer.bytes.len(), (range.end - range.start) as usize);
        buffer.bytes.resize(old + n, 0);
        let read = read_full_at(file, &mut buffer.bytes[old..], range.start)?;
        buffer.bytes.truncate(old + read);
        got.push(read);
        if read < n {
            break;
        }
    }
    Ok(got)
}
