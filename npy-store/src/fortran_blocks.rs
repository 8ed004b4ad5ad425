//! Rows of a Fortran-order array of two dims or more, which are not contiguous in its data:
//! item `k` of row `i` is element `i + items[k]` ([`Layout::fortran_items`]). A scan of one
//! larger than [`WHOLE_FORTRAN_BYTES`] reads a block of rows at a time into C order, one
//! run of the block's rows per item, and decodes it with [`Layout::c_ordered`]: it holds a
//! block, never the array. A local file's runs are read where they are, a remote object's
//! by ranged GETs, and a compressed member's from a temporary file it is decompressed into first.

use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::sync::Arc;

use crate::error::io_error;
use crate::source::Source;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use npy_arrow::Layout;
use npy_core::{Error, ErrorKind, Result};

/// Bytes of a Fortran-order array's data up to which a scan reads it whole (one read, the
/// rows decoded from memory); larger data is read a block of rows at a time.
pub const WHOLE_FORTRAN_BYTES: u64 = 64 << 20;

/// Where a Fortran-order array's runs are read from.
pub(crate) enum BlocksFrom {
    /// A local file (or the temporary file a compressed member was decompressed into).
    File(Arc<std::fs::File>),
    /// An object, read by ranged GETs on the condition of its ETag.
    Object(Arc<Source>),
}

/// A Fortran-order array's data at byte `data_start` of its file or object, and where the
/// items of a row are.
pub(crate) struct FortranBlocks {
    from: BlocksFrom,
    data_start: u64,
    /// Element offsets of a row's items from its first, in C order.
    items: Vec<usize>,
    itemsize: u64,
}

impl FortranBlocks {
    /// The blocks of `layout`'s rows (a Fortran-order array of two dims or more: `None`
    /// otherwise) from the data at byte `data_start` of `from`.
    pub(crate) fn new(from: BlocksFrom, data_start: u64, layout: &Layout) -> Option<FortranBlocks> {
        let items = layout.fortran_items()?;
        let itemsize = layout.header().dtype.itemsize() as u64;
        Some(FortranBlocks { from, data_start, items, itemsize })
    }

    /// Rows `first..first + n`, one after another, each row's items in C order.
    pub(crate) async fn block(&self, first: usize, n: usize) -> Result<Vec<u8>> {
        let (k, size) = (self.items.len(), self.itemsize as usize);
        let run = n as u64 * self.itemsize;
        let ranges: Vec<Range<u64>> = (self.items.iter())
            .map(|&o| {
                let at = self.data_start + (first as u64 + o as u64) * self.itemsize;
                at..at + run
            })
            .collect();
        let runs: Vec<Bytes> = match &self.from {
            BlocksFrom::File(file) => {
                let (file, ranges) = (file.clone(), ranges.clone());
                let read = tokio::task::spawn_blocking(move || read_runs(&file, &ranges));
                read.await.map_err(|e| io_error(format!("the read of rows {first}..{} failed: {e}", first + n)))??
            }
            BlocksFrom::Object(source) => {
                let size = source.size();
                if let Some(past) = ranges.iter().find(|r| r.end > size) {
                    let (expected, found) = (past.end - self.data_start, size.saturating_sub(self.data_start));
                    return Err(ErrorKind::Truncated { expected, found }.into());
                }
                source.read_ranges(&ranges).await?.into_iter().map(Bytes::from).collect()
            }
        };
        let mut block = vec![0u8; n * k * size];
        for (item, (run, range)) in runs.iter().zip(&ranges).enumerate() {
            if (run.len() as u64) < range.end - range.start {
                let found = range.start - self.data_start + run.len() as u64;
                return Err(ErrorKind::Truncated { expected: range.end - self.data_start, found }.into());
            }
            for (row, value) in run.chunks_exact(size).take(n).enumerate() {
                let at = (row * k + item) * size;
                block[at..at + size].copy_from_slice(value);
            }
        }
        Ok(block)
    }
}

/// The bytes of each of `ranges` of `file`, as many as it holds of each (a file cut short
/// gives short runs, which the caller reports).
fn read_runs(file: &std::fs::File, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
    let mut file = file;
    let mut runs = Vec::with_capacity(ranges.len());
    for range in ranges {
        let mut run = Vec::with_capacity((range.end - range.start) as usize);
        file.seek(SeekFrom::Start(range.start))?;
        file.take(range.end - range.start).read_to_end(&mut run)?;
        runs.push(Bytes::from(run));
    }
    Ok(runs)
}

/// Bytes written to the temporary file at a time.
const SPOOL_BYTES: usize = 8 << 20;

/// A compressed member's data decompressed into a temporary file (unnamed, in the system's
/// temporary directory: removed when dropped, also when the process is killed): `pending`,
/// then every chunk of `chunks`, whose end checks the member's size and CRC-32, so that an
/// error there is the spool's. The temporary file's own errors (a full disk) are passed
/// through `located`, which names the member (the stream's errors name it already).
pub(crate) async fn spool(
    pending: &[u8],
    mut chunks: BoxStream<'static, Result<Bytes>>,
    located: impl Fn(Error) -> Error,
) -> Result<std::fs::File> {
    let spool_error =
        |e: std::io::Error| located(io_error(format!("decompressing the member into a temporary file: {e}")));
    let mut file = tempfile::tempfile().map_err(spool_error)?;
    let mut buf = pending.to_vec();
    let mut ended = false;
    while !ended {
        // The buffer filled to SPOOL_BYTES (or the stream's end), then written out.
        while buf.len() < SPOOL_BYTES {
            match chunks.next().await {
                Some(chunk) => buf.extend_from_slice(&chunk?),
                None => {
                    ended = true;
                    break;
                }
            }
        }
        let write = tokio::task::spawn_blocking(move || file.write_all(&buf).map(|()| (file, buf)));
        let joined = write.await.map_err(|e| io_error(format!("a write of the temporary file failed: {e}")));
        let joined = joined.map_err(&located)?;
        let (written, mut spent) = joined.map_err(spool_error)?;
        spent.clear();
        (file, buf) = (written, spent);
    }
    Ok(file)
}
