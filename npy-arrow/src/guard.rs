//! Guards around the third-party readers of Arrow IPC and Parquet files (feature
//! `formats`): what they may allocate is bounded by the file's length, checked before they
//! read, and a panic inside one becomes an error.
//!
//! arrow-ipc and parquet trust the sizes a file declares: an IPC block of 137 GB is
//! allocated before it is read, a Parquet page claiming 1 GB uncompressed is allocated
//! before it is inflated, and a buffer that does not fit its body panics. So, before they
//! read a file, [`FileBatchReader`](crate::formats::FileBatchReader) checks:
//!
//! - **Arrow IPC**: the footer and every block it lists (dictionaries and record batches:
//!   offset, metadata and body) lie inside the file, and each block's metadata describes
//!   buffers inside its body; a compressed buffer (LZ4, zstd) claims an uncompressed
//!   length within the bounds of Parquet pages below.
//! - **Parquet**: every column chunk lies inside the file, every read the reader makes is
//!   bounded by the file ([`ChunkReader`] over the file), and every page header of every
//!   chunk declares a compressed size inside the chunk and an uncompressed size of at most
//!   [`MAX_PAGE_BYTES`], or, above it, at most [`MAX_PAGE_RATIO`] times its compressed
//!   size.
//!
//! As the last line of defence, the readers run under `catch_unwind`: a panic
//! while opening the file or reading a batch is an error (an [`ErrorKind::Io`] of kind
//! `InvalidData` saying which reader panicked and its message, named by the caller's
//! `reading(path)`), and the reader that panicked is dropped, never used again.
//!
//! The panic still goes through the process's panic hook, which by default prints it to
//! stderr; [`catching`] tells a hook that the panic will be caught (the `npy` tool's hook
//! stays quiet then, so a corrupt file gives one `error: reading '...'` line).
//!
//! [`ErrorKind::Io`]: npy_core::ErrorKind::Io

use std::any::Any;
use std::cell::Cell;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::panic::{self, AssertUnwindSafe};

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use bytes::Bytes;
use npy_core::{Error, Result};
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::{ChunkReader, Length};

/// Uncompressed bytes a Parquet page (or a compressed buffer of an Arrow IPC file) may
/// claim whatever its compressed size: 64 MiB (the writers of arrow-rs, pyarrow and DuckDB
/// aim for pages of about 1 MiB; pyarrow writes IPC batches of 64Ki rows).
pub const MAX_PAGE_BYTES: u64 = 64 << 20;

/// Above [`MAX_PAGE_BYTES`], how many times its compressed size a Parquet page (or a
/// compressed IPC buffer) may claim uncompressed: 1032, deflate's most (Snappy's is about 21, LZ4's 255); a larger page
/// compressed more (zstd, Brotli) is refused as implausible.
pub const MAX_PAGE_RATIO: u64 = 1032;

thread_local! {
    /// How many [`catch`] calls are running on this thread.
    static CATCHING: Cell<u32> = const { Cell::new(0) };
}

/// Whether a panic on this thread now would be caught by the guard (and become an error):
/// for a panic hook that should stay quiet then.
///
/// # Examples
/// ```
/// let default = std::panic::take_hook();
/// std::panic::set_hook(Box::new(move |info| {
///     if !npy_arrow::guard::catching() {
///         default(info)
///     }
/// }));
/// # let _ = std::panic::take_hook();
/// ```
pub fn catching() -> bool {
    CATCHING.with(|c| c.get() > 0)
}

/// Runs `f`, a call into the third-party reader `who` (`"arrow-ipc"`, `"parquet"`),
/// turning a panic into an [`ErrorKind::Io`](npy_core::ErrorKind::Io) of kind
/// `InvalidData` with the panic's message.
pub(crate) fn catch<T>(who: &str, f: impl FnOnce() -> T) -> Result<T> {
    CATCHING.with(|c| c.set(c.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(c.get() - 1));
    result.map_err(|payload| panicked(who, payload.as_ref()))
}

/// The error for a panic of `who` with `payload`.
fn panicked(who: &str, payload: &(dyn Any + Send)) -> Error {
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    invalid(format!("the {who} reader failed on this file (it panicked: {message})"))
}

fn invalid(reason: String) -> Error {
    io::Error::new(io::ErrorKind::InvalidData, reason).into()
}

/// A reader whose batches are read under [`catch`]: a panic is an error, after which the
/// inner reader is dropped and no batch follows.
pub(crate) struct Guarded {
    inner: Option<Box<dyn RecordBatchReader + Send>>,
    schema: SchemaRef,
    who: &'static str,
}

impl Guarded {
    /// Guards `inner`, a reader of `who` (see [`catch`]).
    pub(crate) fn new(inner: Box<dyn RecordBatchReader + Send>, who: &'static str) -> Guarded {
        Guarded { schema: inner.schema(), inner: Some(inner), who }
    }
}

impl Iterator for Guarded {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = self.inner.as_mut()?;
        match catch(self.who, || inner.next()) {
            Ok(next) => next,
            Err(e) => {
                // Its state is unknown: it is not used again. Dropping it could panic too.
                let inner = self.inner.take();
                let _ = catch(self.who, move || drop(inner));
                Some(Err(ArrowError::ExternalError(Box::new(e))))
            }
        }
    }
}

impl RecordBatchReader for Guarded {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The magic at both ends of an Arrow IPC file.
const ARROW_MAGIC: &[u8; 6] = b"ARROW1";

/// Checks, before arrow-ipc reads `file` (`len` bytes), that its footer and the blocks it
/// lists lie inside the file and that each block's buffers lie inside its body, so that
/// the reader allocates nothing larger than the file and slices no buffer out of range.
/// Returns the rows of its record batches, as their messages say.
pub(crate) fn check_ipc(file: &mut File, len: u64) -> Result<u64> {
    // "ARROW1", 2 bytes of padding, ..., the footer, its length (4 bytes), "ARROW1".
    if len < 8 + 10 {
        return Err(invalid(format!("not an Arrow IPC file: {len} bytes, too short")));
    }
    let mut tail = [0u8; 10];
    file.seek(SeekFrom::Start(len - 10))?;
    file.read_exact(&mut tail)?;
    if &tail[4..] != ARROW_MAGIC {
        return Err(invalid("not an Arrow IPC file: it does not end with ARROW1".into()));
    }
    let footer_len = i32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let end = u64::try_from(footer_len)
        .ok()
        .and_then(|n| (len - 10).checked_sub(n).filter(|&start| start >= 8))
        .ok_or_else(|| invalid(format!("Arrow IPC footer of {footer_len} bytes in a file of {len}")))?;
    let mut footer = vec![0u8; footer_len as usize];
    file.seek(SeekFrom::Start(end))?;
    file.read_exact(&mut footer)?;
    let footer = arrow_ipc::root_as_footer(&footer).map_err(|e| invalid(format!("Arrow IPC footer: {e}")))?;
    if footer.schema().is_none() {
        return Err(invalid("Arrow IPC footer without a schema".into()));
    }
    let dictionaries = footer.dictionaries().into_iter().flatten();
    let batches = footer.recordBatches().into_iter().flatten();
    let mut rows = 0u64;
    for (i, block) in dictionaries.chain(batches).enumerate() {
        let (offset, meta, body) = (block.offset(), block.metaDataLength(), block.bodyLength());
        let fits = u64::try_from(offset).ok().zip(u64::try_from(meta).ok()).zip(u64::try_from(body).ok()).and_then(
            |((offset, meta), body)| offset.checked_add(meta)?.checked_add(body).filter(|&e| e <= end).map(|_| ()),
        );
        if fits.is_none() || meta < 8 {
            return Err(invalid(format!(
                "Arrow IPC block {i} (offset {offset}, metadata {meta} bytes, body {body}) is not inside \
                 the file's {end} bytes of blocks"
            )));
        }
        let block_rows = check_ipc_block(file, offset as u64, meta as usize, body as u64)
            .map_err(|reason| invalid(format!("Arrow IPC block {i} at byte {offset}: {reason}")))?;
        rows = rows.saturating_add(block_rows);
    }
    Ok(rows)
}

/// Checks that the message of the block at `offset` (`meta` bytes of metadata, inside the
/// file) describes buffers inside its `body` bytes; the rows of a record batch (0 for a
/// dictionary batch).
fn check_ipc_block(file: &mut File, offset: u64, meta: usize, body: u64) -> std::result::Result<u64, String> {
    let mut bytes = vec![0u8; meta];
    file.seek(SeekFrom::Start(offset)).map_err(|e| e.to_string())?;
    file.read_exact(&mut bytes).map_err(|e| e.to_string())?;
    // An optional continuation marker (0xFFFFFFFF), a length, the message.
    let start = if bytes[..4] == [0xFF; 4] { 8 } else { 4 };
    let message = arrow_ipc::root_as_message(&bytes[start..]).map_err(|e| format!("its metadata: {e}"))?;
    if message.bodyLength() < 0 || message.bodyLength() as u64 > body {
        return Err(format!("its message has a body of {} bytes, its block {body}", message.bodyLength()));
    }
    let rows = message.header_as_record_batch().map_or(0, |b| u64::try_from(b.length()).unwrap_or(0));
    let batch = match message.header_as_record_batch() {
        Some(batch) => Some(batch),
        None => message.header_as_dictionary_batch().and_then(|d| d.data()),
    };
    let compressed = batch.is_some_and(|b| b.compression().is_some());
    for buffer in batch.and_then(|b| b.buffers()).into_iter().flatten() {
        let (at, n) = (buffer.offset(), buffer.length());
        let inside = u64::try_from(at).ok().zip(u64::try_from(n).ok()).and_then(|(at, n)| at.checked_add(n));
        if inside.is_none_or(|e| e > body) {
            return Err(format!("a buffer of {n} bytes at {at} is not inside its body of {body} bytes"));
        }
        // A compressed buffer starts with its length uncompressed (-1: not compressed),
        // which arrow-ipc allocates before it inflates.
        if compressed && n >= 8 {
            let mut prefix = [0u8; 8];
            file.seek(SeekFrom::Start(offset + meta as u64 + at as u64)).map_err(|e| e.to_string())?;
            file.read_exact(&mut prefix).map_err(|e| e.to_string())?;
            let claimed = i64::from_le_bytes(prefix);
            let allowed = MAX_PAGE_BYTES.max((n as u64 - 8).saturating_mul(MAX_PAGE_RATIO));
            if claimed > 0 && claimed as u64 > allowed {
                return Err(format!(
                    "a buffer of {n} bytes at {at} claims {claimed} bytes uncompressed (at most \
                     {MAX_PAGE_BYTES}, or {MAX_PAGE_RATIO} times its size, are read)"
                ));
            }
        }
    }
    Ok(rows)
}

/// A Parquet file whose reads are bounded by its length: a read past its end is an error
/// before anything is allocated for it.
pub(crate) struct BoundedFile {
    file: File,
    len: u64,
}

impl BoundedFile {
    /// `file`, of `len` bytes.
    pub(crate) fn new(file: File, len: u64) -> BoundedFile {
        BoundedFile { file, len }
    }

    fn check(&self, start: u64, length: u64) -> parquet::errors::Result<()> {
        match start.checked_add(length) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(ParquetError::EOF(format!(
                "a read of {length} bytes at byte {start}, past the end of the file ({} bytes)",
                self.len
            ))),
        }
    }
}

impl Length for BoundedFile {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for BoundedFile {
    type T = io::Take<io::BufReader<File>>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        self.check(start, 0)?;
        // Reads stop at the length the file had when opened.
        Ok(self.file.get_read(start)?.take(self.len - start))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.check(start, length as u64)?;
        self.file.get_bytes(start, length)
    }
}

/// Checks, before the parquet reader reads `file` (`len` bytes, of metadata `meta`), that
/// every column chunk lies inside the file and that every page header in it declares sizes
/// the reader may allocate (see the module docs).
pub(crate) fn check_parquet(file: &File, len: u64, meta: &ParquetMetaData) -> Result<()> {
    for (g, group) in meta.row_groups().iter().enumerate() {
        for column in group.columns() {
            let name = column.column_path().string();
            let place = || format!("column '{name}' of row group {g}");
            let start = column.dictionary_page_offset().unwrap_or(column.data_page_offset());
            let size = column.compressed_size();
            let end = u64::try_from(start).ok().zip(u64::try_from(size).ok()).and_then(|(s, n)| s.checked_add(n));
            if end.is_none_or(|end| end > len) {
                return Err(invalid(format!(
                    "Parquet {}: {size} bytes at byte {start}, not inside the file ({len} bytes)",
                    place()
                )));
            }
            check_pages(file, start as u64, size as u64)
                .map_err(|reason| invalid(format!("Parquet {}: {reason}", place())))?;
        }
    }
    Ok(())
}

/// The most bytes of a page header read to find its sizes; a longer header (large
/// statistics) is left to the reader.
const HEADER_WINDOW: u64 = 64 << 10;

/// Walks the page headers of the column chunk of `size` bytes at `start` (inside the file).
fn check_pages(file: &File, start: u64, size: u64) -> std::result::Result<(), String> {
    let mut reader = file.try_clone().map_err(|e| e.to_string())?;
    let mut window = Vec::new();
    let mut at = 0;
    while at < size {
        // Most headers take a few dozen bytes; statistics can make them longer.
        let mut page = None;
        for most in [512, HEADER_WINDOW] {
            let want = (size - at).min(most);
            window.resize(want as usize, 0);
            reader.seek(SeekFrom::Start(start + at)).map_err(|e| e.to_string())?;
            reader.read_exact(&mut window).map_err(|e| e.to_string())?;
            page = PageSizes::parse(&window);
            if page.is_some() || want < most {
                break;
            }
        }
        // A header that does not parse here is the reader's to report.
        let Some(page) = page else { return Ok(()) };
        let (compressed, uncompressed) = (page.compressed, page.uncompressed);
        let next = u64::try_from(compressed).ok().and_then(|c| (at + page.header_len as u64).checked_add(c));
        let Some(next) = next.filter(|&next| next <= size) else {
            return Err(format!(
                "the page at byte {} claims {compressed} bytes, beyond its chunk's {size}",
                start + at
            ));
        };
        let allowed = MAX_PAGE_BYTES.max((compressed as u64).saturating_mul(MAX_PAGE_RATIO));
        if u64::try_from(uncompressed).map_or(true, |u| u > allowed) {
            return Err(format!(
                "the page at byte {} claims {uncompressed} bytes uncompressed from {compressed} \
                 (at most {MAX_PAGE_BYTES}, or {MAX_PAGE_RATIO} times the compressed size, are read)",
                start + at
            ));
        }
        at = next;
    }
    Ok(())
}

/// What a Parquet page header (Thrift compact protocol) says of the page's sizes.
#[derive(Debug, PartialEq, Eq)]
struct PageSizes {
    uncompressed: i32,
    compressed: i32,
    /// The header's own length in bytes.
    header_len: usize,
}

impl PageSizes {
    /// The sizes in the header at the start of `bytes`; `None` if it does not parse within
    /// them or lacks a size.
    fn parse(bytes: &[u8]) -> Option<PageSizes> {
        let mut input = Compact { bytes, at: 0 };
        let (mut uncompressed, mut compressed) = (None, None);
        let mut id: i16 = 0;
        loop {
            let head = input.byte()?;
            if head == 0 {
                break;
            }
            let ty = head & 0x0F;
            id = match head >> 4 {
                0 => i16::try_from(unzigzag(input.varint()?)).ok()?,
                delta => id.checked_add(i16::from(delta))?,
            };
            match (id, ty) {
                (2, 5) => uncompressed = Some(i32::try_from(unzigzag(input.varint()?)).ok()?),
                (3, 5) => compressed = Some(i32::try_from(unzigzag(input.varint()?)).ok()?),
                _ => input.skip(ty, 0)?,
            }
        }
        Some(PageSizes { uncompressed: uncompressed?, compressed: compressed?, header_len: input.at })
    }
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// A cursor over Thrift compact-protocol bytes.
struct Compact<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Compact<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    fn advance(&mut self, n: u64) -> Option<()> {
        let n = usize::try_from(n).ok()?;
        self.at = self.at.checked_add(n).filter(|&at| at <= self.bytes.len())?;
        Some(())
    }

    /// Skips a value of compact type `ty`, nested `depth` deep.
    fn skip(&mut self, ty: u8, depth: u32) -> Option<()> {
        if depth > 32 {
            return None;
        }
        match ty {
            // Booleans of struct fields are in their type; bytes, doubles.
            1 | 2 => Some(()),
            3 => self.advance(1),
            4..=6 => self.varint().map(drop),
            7 => self.advance(8),
            8 => {
                let n = self.varint()?;
                self.advance(n)
            }
            9 | 10 => {
                let head = self.byte()?;
                let n = match head >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                let elem = head & 0x0F;
                for _ in 0..n {
                    // A boolean element is a byte of its own.
                    if elem == 1 || elem == 2 {
                        self.advance(1)?;
                    } else {
                        self.skip(elem, depth + 1)?;
                    }
                }
                Some(())
            }
            11 => {
                let n = self.varint()?;
                if n == 0 {
                    return Some(());
                }
                let kinds = self.byte()?;
                for _ in 0..n {
                    self.skip_element(kinds >> 4, depth)?;
                    self.skip_element(kinds & 0x0F, depth)?;
                }
                Some(())
            }
            12 => loop {
                let head = self.byte()?;
                if head == 0 {
                    return Some(());
                }
                if head >> 4 == 0 {
                    self.varint()?;
                }
                self.skip(head & 0x0F, depth + 1)?;
            },
            _ => None,
        }
    }

    /// Skips an element of a map, where a boolean is a byte of its own.
    fn skip_element(&mut self, ty: u8, depth: u32) -> Option<()> {
        if ty == 1 || ty == 2 {
            self.advance(1)
        } else {
            self.skip(ty, depth + 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that panics on its second batch.
    struct Panics {
        schema: SchemaRef,
        calls: u32,
    }

    impl Iterator for Panics {
        type Item = std::result::Result<RecordBatch, ArrowError>;

        fn next(&mut self) -> Option<Self::Item> {
            self.calls += 1;
            assert!(self.calls < 2, "index out of bounds: the len is 3 but the index is 7");
            Some(Ok(RecordBatch::new_empty(self.schema.clone())))
        }
    }

    impl RecordBatchReader for Panics {
        fn schema(&self) -> SchemaRef {
            self.schema.clone()
        }
    }

    #[test]
    fn a_panic_is_an_error_and_the_reader_is_dropped() {
        let schema = SchemaRef::new(arrow_schema::Schema::empty());
        let mut guarded = Guarded::new(Box::new(Panics { schema, calls: 0 }), "test");
        assert!(guarded.next().unwrap().is_ok());
        assert!(!catching());
        let Some(Err(ArrowError::ExternalError(e))) = guarded.next() else { panic!("an error expected") };
        let e = e.downcast::<Error>().unwrap();
        let text = e.to_string();
        assert!(text.contains("the test reader failed on this file (it panicked: index out of bounds"), "{text}");
        assert!(guarded.inner.is_none());
        assert!(guarded.next().is_none());
        assert!(!catching());
    }

    #[test]
    fn catch_passes_values_and_counts() {
        assert!(catch("test", catching).unwrap());
        let e = catch("parquet", || -> u8 { panic!("{}", String::from("boom")) }).unwrap_err();
        assert_eq!(io::Error::from(e).kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn page_sizes_of_a_compact_header() {
        // type (i32) 0, uncompressed 100, compressed 40, crc 7, then a data page header
        // (struct: num_values 10, encoding 0, with a nested statistics struct holding a
        // binary of 3 bytes and a bool), stop.
        let header = [
            0x15, 0x00, 0x15, 0xC8, 0x01, 0x15, 0x50, 0x15, 0x0E, 0x1C, 0x15, 0x14, 0x15, 0x00, 0x1C, 0x18, 0x03, b'a',
            b'b', b'c', 0x11, 0x00, 0x00, 0x00,
        ];
        let sizes = PageSizes::parse(&header).unwrap();
        assert_eq!(sizes, PageSizes { uncompressed: 100, compressed: 40, header_len: header.len() });
        assert_eq!(PageSizes::parse(&header[..10]), None);
        assert_eq!(PageSizes::parse(&[0x15, 0x00, 0x00]), None);
    }
}
