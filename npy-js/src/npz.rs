//! Archives: a directory read and checked by npy-core's `npz::members_with` from whatever bytes
//! JavaScript has fetched (asking for more where it needs them), members decoded as their
//! bytes are pushed in, and archives written by npy-core's `npz::Writer`.

use std::io::{self, Cursor, Read, Seek, SeekFrom};

use js_sys::{Function, Uint8Array};
use npy_core::npz::{members_with, Compression, MemberDecoder, MemberInfo, Method, ReaderOptions, Writer};
use npy_core::ReadOptions;
use wasm_bindgen::prelude::*;

use crate::error::{js_error, usage, JsResult, Located};
use crate::header::{count, length};
use crate::js::Json;

/// Bytes asked of a synchronous reader at a time, past those it was given.
const BLOCK: u64 = 64 << 10;

/// Some byte ranges of an archive of a known length, as `Read + Seek`: a read outside
/// them asks `read` (a synchronous JavaScript reader, for bytes in memory), or, without
/// one, fails and records where, for the caller to fetch those bytes and try again.
struct Sparse {
    len: u64,
    pos: u64,
    /// Sorted by start, not overlapping.
    ranges: Vec<(u64, Vec<u8>)>,
    read: Option<Function>,
    missed: Option<u64>,
}

impl Sparse {
    fn add(&mut self, start: u64, bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        let at = self.ranges.partition_point(|(s, _)| *s < start);
        self.ranges.insert(at, (start, bytes));
    }

    /// The parts of `start..end` that no range given holds.
    fn missing(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut at = start;
        while at < end {
            match self.find(at) {
                Some(have) => at += have.len() as u64,
                None => {
                    let next = self.ranges.iter().map(|(s, _)| *s).filter(|&s| s > at).min().unwrap_or(end).min(end);
                    out.push((at, next));
                    at = next;
                }
            }
        }
        out
    }

    fn find(&self, pos: u64) -> Option<&[u8]> {
        let i = self.ranges.partition_point(|(s, _)| *s <= pos).checked_sub(1)?;
        let (start, bytes) = &self.ranges[i];
        bytes.get((pos - start) as usize..).filter(|rest| !rest.is_empty())
    }
}

impl Read for Sparse {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        if self.find(self.pos).is_none() {
            let end = (self.pos + BLOCK).min(self.len);
            let got = match &self.read {
                Some(read) => read.call2(&JsValue::NULL, &(self.pos as f64).into(), &(end as f64).into()),
                None => {
                    self.missed = Some(self.pos);
                    return Err(io::Error::other("bytes not fetched yet"));
                }
            };
            let bytes = got.ok().and_then(|b| b.dyn_into::<Uint8Array>().ok()).map(|b| b.to_vec());
            match bytes {
                Some(b) if !b.is_empty() => self.add(self.pos, b),
                _ => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the reader gave no bytes")),
            }
        }
        let have = self.find(self.pos).unwrap_or_default();
        let n = have.len().min(buf.len());
        buf[..n].copy_from_slice(&have[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Sparse {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

/// Opens an archive's directory from the bytes JavaScript gives it (see the module).
#[wasm_bindgen]
pub struct NpzOpener {
    sparse: Sparse,
    options: ReaderOptions,
    name: Option<String>,
}

impl std::fmt::Debug for NpzOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzOpener").field("len", &self.sparse.len).field("name", &self.name).finish_non_exhaustive()
    }
}

#[wasm_bindgen]
impl NpzOpener {
    /// An opener of an archive of `byte_length` bytes, named `name` in errors, with
    /// npy-core's limits (`max_entries`, `max_inflated_size`, and `max_header_size` for
    /// members' headers), each at its default when `None`.
    ///
    /// # Errors
    /// A length or limit that is not a whole number.
    #[wasm_bindgen(constructor)]
    pub fn new(
        byte_length: f64,
        name: Option<String>,
        max_entries: Option<f64>,
        max_inflated_size: Option<f64>,
        max_header_size: Option<f64>,
    ) -> JsResult<NpzOpener> {
        let mut options = ReaderOptions::new();
        if let Some(n) = max_entries {
            options.max_entries(count(n, "maxEntries")?);
        }
        if let Some(n) = max_inflated_size {
            options.max_inflated_size(length(n, "maxInflatedSize")?);
        }
        if let Some(n) = max_header_size {
            options.read_options(ReadOptions::new().max_header_size(count(n, "maxHeaderSize")?));
        }
        let len = length(byte_length, "the archive's length")?;
        Ok(NpzOpener { sparse: Sparse { len, pos: 0, ranges: Vec::new(), read: None, missed: None }, options, name })
    }

    /// Gives the opener the archive's bytes from `start`.
    pub fn add(&mut self, start: f64, bytes: Vec<u8>) -> JsResult<()> {
        let start = length(start, "a start")?;
        if start + bytes.len() as u64 > self.sparse.len {
            return Err(usage("bytes past the archive's end"));
        }
        self.sparse.add(start, bytes);
        Ok(())
    }

    /// The byte ranges the opening reads besides the archive's end, where the bytes given
    /// so far do not hold them (its members' local headers, npy-core's
    /// `npz::local_header_ranges_with`): `{need: start}` when the directory itself needs bytes
    /// from `start` (give a block from there and ask again), else `{ranges: [[start, end],
    /// ...]}`, to fetch all at once and give before [`NpzOpener::open`].
    ///
    /// # Errors
    /// npy-core's, naming the archive: not a zip archive, a bad end record or directory.
    #[wasm_bindgen(js_name = headerRanges)]
    pub fn header_ranges(&mut self) -> JsResult<String> {
        self.sparse.missed = None;
        self.sparse.pos = 0;
        let ranges = npy_core::npz::local_header_ranges_with(&mut self.sparse, &self.options);
        let ranges = match (ranges, self.sparse.missed) {
            (_, Some(start)) => return Ok(Json::Obj(vec![("need", Json::Num(start as f64))]).text()),
            (ranges, None) => ranges.located(self.name.as_deref())?,
        };
        let missing = ranges
            .iter()
            .flat_map(|r| self.sparse.missing(r.start, r.end))
            .map(|(start, end)| Json::Arr(vec![Json::Num(start as f64), Json::Num(end as f64)]))
            .collect();
        Ok(Json::Obj(vec![("ranges", Json::Arr(missing))]).text())
    }

    /// Reads and checks the directory: `{need: start}` when it needs bytes from `start`
    /// that were not given (give a block from there and call again), else `{members}`:
    /// each `{name, member, compression, compressedSize, size, dataStart, crc32}` (`name`
    /// as NumPy's `NpzFile.files` lists it). With `read` (a function `(start, end) =>
    /// Uint8Array`), bytes not given are read from it instead.
    ///
    /// # Errors
    /// npy-core's, naming the archive: not a zip archive, a check failed, a limit passed.
    pub fn open(&mut self, read: Option<Function>) -> JsResult<String> {
        self.sparse.read = read;
        self.sparse.missed = None;
        self.sparse.pos = 0;
        let opened = members_with(&mut self.sparse, &self.options);
        self.sparse.read = None;
        let members = match (opened, self.sparse.missed) {
            (_, Some(start)) => return Ok(Json::Obj(vec![("need", Json::Num(start as f64))]).text()),
            (opened, None) => opened.located(self.name.as_deref())?,
        };
        Ok(Json::Obj(vec![("members", Json::Arr(members.iter().map(member_info).collect()))]).text())
    }
}

fn member_info(m: &MemberInfo) -> Json {
    let compression = match m.compression {
        Some(Method::Stored) => "stored",
        Some(Method::Zstd) => "zstd",
        _ => "deflate",
    };
    let opt = |x: Option<u64>| x.map_or(Json::Null, |v| Json::Num(v as f64));
    Json::Obj(vec![
        ("name", m.name.as_str().into()),
        ("member", m.member.as_str().into()),
        ("compression", compression.into()),
        ("compressedSize", Json::Num(m.compressed_size as f64)),
        ("size", Json::Num(m.size as f64)),
        ("dataStart", opt(m.data_start)),
        ("crc32", opt(m.crc32.map(u64::from))),
    ])
}

/// A member's bytes decoded as JavaScript pushes them in (npy-core's `MemberDecoder`):
/// decompressed, counted and checked. JavaScript pushes a piece of stored bytes, then
/// pulls what it decodes to until a pull gives nothing, then pushes the next piece.
#[wasm_bindgen]
pub struct MemberStream {
    decoder: MemberDecoder,
    /// The piece pushed last, and how much of it the decoder used.
    input: Vec<u8>,
    used: usize,
    buf: Vec<u8>,
    archive: Option<String>,
}

impl std::fmt::Debug for MemberStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberStream").field("decoder", &self.decoder).finish_non_exhaustive()
    }
}

/// Bytes a pull gives at most.
const STEP: usize = 1 << 20;

#[wasm_bindgen]
impl MemberStream {
    /// A stream of `member` (its name in the zip) of archive `archive`, compressed as
    /// `compression` says (`"stored"`, `"deflate"` or `"zstd"`), that holds `size` bytes
    /// whose CRC-32 is `crc32`.
    ///
    /// # Errors
    /// An unknown compression; libzstd unable to make its decoder.
    #[wasm_bindgen(constructor)]
    pub fn new(
        member: String,
        compression: &str,
        size: f64,
        crc32: Option<u32>,
        archive: Option<String>,
    ) -> JsResult<MemberStream> {
        let info = MemberInfo {
            name: member.strip_suffix(".npy").unwrap_or(&member).to_string(),
            compression: Some(Compression::named(compression, None).located(archive.as_deref())?.method()),
            compressed_size: 0,
            size: length(size, "a member's size")?,
            data_start: None,
            crc32,
            member,
        };
        let decoder = MemberDecoder::new(&info).located(archive.as_deref())?;
        Ok(MemberStream { decoder, input: Vec::new(), used: 0, buf: vec![0; STEP], archive })
    }

    /// Gives the stream the member's next stored bytes.
    ///
    /// # Errors
    /// The piece pushed before is not used up yet (pull until a pull gives nothing).
    pub fn push(&mut self, input: &[u8]) -> JsResult<()> {
        if self.used < self.input.len() {
            return Err(usage("a member stream was pushed bytes before it had used the last ones"));
        }
        self.input.clear();
        self.input.extend_from_slice(input);
        self.used = 0;
        Ok(())
    }

    /// Decodes what it can of the bytes pushed into `out` from byte `at` on, at most a
    /// MiB: the bytes given, 0 when it needs the next piece (or, after the last, once it
    /// has given everything). `out` must have room for a MiB, or for the rest of the
    /// member's size when that is less.
    ///
    /// # Errors
    /// npy-core's, naming the archive and member: data the method cannot decode, more
    /// bytes than the member's size; `out` without the room.
    pub fn pull(&mut self, out: &Uint8Array, at: f64) -> JsResult<f64> {
        let at = length(at, "an offset")?;
        loop {
            let (u, m) =
                self.decoder.decode(&self.input[self.used..], &mut self.buf).located(self.archive.as_deref())?;
            self.used += u;
            if m > 0 {
                let end = at + m as u64;
                if end > u64::from(out.length()) {
                    return Err(usage("a member stream's output has no room for what it decoded"));
                }
                out.subarray(at as u32, end as u32).copy_from(&self.buf[..m]);
                return Ok(m as f64);
            }
            if u == 0 {
                if self.used < self.input.len() {
                    let e = npy_core::ErrorKind::Usage { reason: "the member's decoder made no progress".into() };
                    return Err(js_error(e.into(), self.archive.as_deref()));
                }
                return Ok(0.0);
            }
        }
    }

    /// Checks the member once all its bytes were pushed and pulled: its size and CRC-32.
    ///
    /// # Errors
    /// npy-core's, naming the archive and member.
    pub fn finish(&self) -> JsResult<()> {
        self.decoder.finish().located(self.archive.as_deref())
    }
}

/// Writes an archive in memory with npy-core's `npz::Writer`: members named and
/// compressed as `np.savez` and `np.savez_compressed` do, or with Zstandard.
#[wasm_bindgen]
pub struct NpzWriter {
    writer: Option<Writer<Cursor<Vec<u8>>>>,
}

impl std::fmt::Debug for NpzWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzWriter").field("finished", &self.writer.is_none()).finish()
    }
}

#[wasm_bindgen]
impl NpzWriter {
    /// An empty archive.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> NpzWriter {
        NpzWriter { writer: Some(Writer::new(Cursor::new(Vec::new()))) }
    }

    /// Adds array `name` (member `name.npy`) whose `.npy` bytes are `npy`, compressed as
    /// `compression` (`"stored"`, `"deflate"` or `"zstd"`) at `level` (its default when
    /// `None`).
    ///
    /// # Errors
    /// An unknown compression or a level out of its range, a name used before or empty,
    /// an archive already finished.
    pub fn add(&mut self, name: &str, npy: &[u8], compression: &str, level: Option<f64>) -> JsResult<()> {
        let level = level.map(|l| if l.fract() == 0.0 { l as i64 } else { -1 });
        let compression = Compression::named(compression, level).located(None)?;
        let writer = self.writer.as_mut().ok_or_else(|| usage("the archive is finished"))?;
        writer.add_raw_with(&format!("{name}.npy"), npy, compression).located(None)
    }

    /// The archive's bytes; the writer is finished.
    ///
    /// # Errors
    /// An archive already finished.
    pub fn finish(&mut self) -> JsResult<Vec<u8>> {
        let writer = self.writer.take().ok_or_else(|| usage("the archive is finished"))?;
        Ok(writer.finish().located(None)?.into_inner())
    }
}
