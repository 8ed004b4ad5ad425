//! The zip structure of an archive being opened, read and checked before any member is.
//!
//! The central directory is authoritative. It must end where the end record (or the zip64
//! end record) starts, so the archive has no bytes before it and no second directory; its
//! entries must fill it exactly. Each entry is checked on its own (name, method, flags,
//! sizes), then against its local header (signature, name, method, flags, CRC and sizes);
//! the members' header-and-data ranges must lie before the directory and not overlap.
//! Nothing is allocated for what the archive merely claims: the entry count is checked
//! against the limit and against the directory's size before the directory is read, and
//! the directory itself is bytes present in the file.

use std::collections::HashMap;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;

use super::Method;
use crate::error::{Error, Result};

/// Signatures and fixed lengths of the records read here (APPNOTE 4.3).
const EOCD_SIG: u32 = 0x0605_4b50;
const EOCD_LEN: usize = 22;
const LOCATOR_SIG: u32 = 0x0706_4b50;
const LOCATOR_LEN: u64 = 20;
const EOCD64_SIG: u32 = 0x0606_4b50;
const EOCD64_LEN: usize = 56;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const CENTRAL_LEN: usize = 46;
const LOCAL_SIG: u32 = 0x0403_4b50;
const LOCAL_LEN: usize = 30;
/// The zip64 extended information extra field.
const ZIP64_EXTRA: u16 = 0x0001;
/// The longest archive comment, which sits after the end record.
const MAX_COMMENT: usize = 0xffff;

/// General purpose flag bits.
const FLAG_ENCRYPTED: u16 = 1 << 0;
const FLAG_DATA_DESCRIPTOR: u16 = 1 << 3;
const FLAG_STRONG_ENCRYPTION: u16 = 1 << 6;
const FLAG_MASKED_HEADERS: u16 = 1 << 13;
const ENCRYPTION_FLAGS: u16 = FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_HEADERS;

/// Gaps up to this size between local headers read in file order are skipped by reading
/// rather than seeking, so a buffered reader keeps its buffer across small members.
const SKIP_BY_READING: u64 = 64 << 10;

/// What may be claimed; see `ReaderOptions`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_entries: usize,
    pub(super) max_inflated: u64,
}

/// One member, as the central directory says and its local header confirms.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// The name in the zip (raw bytes, valid UTF-8).
    pub(super) member: String,
    /// The name with one `.npy` stripped: the key `names()` lists.
    pub(super) key: String,
    /// The method, with a deflated member's option from the central directory's flags.
    pub(super) method: Method,
    pub(super) crc32: u32,
    pub(super) compressed_size: u64,
    pub(super) size: u64,
    pub(super) header_start: u64,
    pub(super) data_start: u64,
    /// The length of the central directory's extra field for it, without the part index
    /// (which only that directory holds; the local header's may differ): where its local
    /// header likely ends.
    central_extra: usize,
    /// The body of its part index (`part_index`), if the directory gives one.
    pub(super) part_index: Option<Box<[u8]>>,
}

impl Entry {
    fn data_end(&self) -> u64 {
        // Checked in `check_local`.
        self.data_start + self.compressed_size
    }
}

fn bad(reason: impl Into<String>) -> Error {
    Error::npz(None, reason)
}

fn bad_member(member: &str, reason: impl Into<String>) -> Error {
    Error::npz(Some(member), reason)
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

/// The name of a compression method, for messages.
pub(super) fn method_name(method: u16) -> &'static str {
    match method {
        0 => "stored",
        1 => "shrink",
        2..=5 => "reduce",
        6 => "implode",
        8 => "deflate",
        9 => "deflate64",
        10 => "pkware implode",
        12 => "bzip2",
        14 => "lzma",
        16 => "ibm z/os cmpsc",
        18 => "ibm terse",
        19 => "ibm lz77",
        93 => "zstandard",
        20 => "zstandard (the id before 2020)",
        94 => "mp3",
        95 => "xz",
        96 => "jpeg",
        97 => "wavpack",
        98 => "ppmd",
        99 => "aes encryption",
        _ => "unknown",
    }
}

/// A reader that knows its position, reading short forward gaps instead of seeking.
struct Cursor<'a, R> {
    inner: &'a mut R,
    pos: Option<u64>,
}

impl<R: Read + Seek> Cursor<'_, R> {
    /// Reads exactly `len` bytes at `offset`; `what` names them for the error when the
    /// file ends first.
    fn read_at(&mut self, offset: u64, len: usize, what: &dyn Fn() -> String) -> Result<Vec<u8>> {
        match self.pos {
            Some(pos) if offset >= pos && offset - pos <= SKIP_BY_READING => {
                let skipped = io::copy(&mut self.inner.by_ref().take(offset - pos), &mut io::sink())?;
                if skipped < offset - pos {
                    self.pos = None;
                    return Err(bad(format!("the file ends before {}", what())));
                }
            }
            _ => {
                self.inner.seek(SeekFrom::Start(offset))?;
            }
        }
        self.pos = None;
        let mut buf = Vec::new();
        let got = self.inner.by_ref().take(len as u64).read_to_end(&mut buf)?;
        if got < len {
            return Err(bad(format!("the file ends inside {}", what())));
        }
        self.pos = Some(offset + len as u64);
        Ok(buf)
    }
}

/// Where the central directory is, from the end record(s).
struct End {
    entries: u64,
    cd_offset: u64,
    cd_size: u64,
}

/// Reads and checks the archive's structure; returns its members in directory order.
pub(super) fn read<R: Read + Seek>(reader: &mut R, limits: Limits) -> Result<Vec<Entry>> {
    let file_len = reader.seek(SeekFrom::End(0))?;
    let mut cur = Cursor { inner: reader, pos: None };
    let (end, mut entries) = central(&mut cur, file_len, limits)?;
    for (i, e) in entries.iter_mut().enumerate() {
        check_local(&mut cur, e, i, end.cd_offset)?;
    }
    check_overlap(&entries)?;
    let inflated = entries
        .iter()
        .filter(|e| e.method != Method::Stored)
        .try_fold(0u64, |sum, e| sum.checked_add(e.size))
        .filter(|&sum| sum <= limits.max_inflated);
    if inflated.is_none() {
        let claimed: u128 = entries.iter().filter(|e| e.method != Method::Stored).map(|e| e.size as u128).sum();
        return Err(bad(format!(
            "the compressed members claim {claimed} bytes in all, over the limit of {} bytes \
             (raise it with ReaderOptions::max_inflated_size)",
            limits.max_inflated
        )));
    }
    Ok(entries)
}

/// Bytes allowed a local header's extra field beyond the central directory's for the same
/// member (a zip64 field of 20 bytes that only the local header has, as NumPy writes them).
const LOCAL_SLACK: u64 = 64;

/// The byte ranges [`read`] reads besides the archive's end and central directory: each
/// member's local header (its extra field allowed [`LOCAL_SLACK`] bytes beyond the central
/// directory's), ranges with gaps of at most [`SKIP_BY_READING`] between them merged, as
/// `read` reads through such gaps. Reads the end records and the directory only.
pub(super) fn local_header_ranges<R: Read + Seek>(reader: &mut R, limits: Limits) -> Result<Vec<Range<u64>>> {
    let file_len = reader.seek(SeekFrom::End(0))?;
    let mut cur = Cursor { inner: reader, pos: None };
    let (end, mut entries) = central(&mut cur, file_len, limits)?;
    entries.sort_by_key(|e| e.header_start);
    let mut ranges: Vec<Range<u64>> = Vec::new();
    for e in &entries {
        let len = LOCAL_LEN as u64 + e.member.len() as u64 + e.central_extra as u64 + LOCAL_SLACK;
        let range = e.header_start..e.header_start.saturating_add(len).min(end.cd_offset);
        match ranges.last_mut() {
            Some(last) if range.start <= last.end.saturating_add(SKIP_BY_READING) => last.end = last.end.max(range.end),
            _ => ranges.push(range),
        }
    }
    Ok(ranges)
}

/// Reads and checks the end records and the central directory (counts, sizes, names,
/// methods); returns where the directory is and its entries, their data not yet placed.
fn central<R: Read + Seek>(cur: &mut Cursor<'_, R>, file_len: u64, limits: Limits) -> Result<(End, Vec<Entry>)> {
    let end = find_end(cur, file_len)?;
    if end.entries > limits.max_entries as u64 {
        return Err(bad(format!(
            "the archive claims {} entries, over the limit of {} (raise it with ReaderOptions::max_entries)",
            end.entries, limits.max_entries
        )));
    }
    if end.entries.saturating_mul(CENTRAL_LEN as u64) > end.cd_size {
        return Err(bad(format!(
            "the central directory of {} bytes cannot hold the {} entries the end record claims",
            end.cd_size, end.entries
        )));
    }
    // The directory lies between the members and the end record: bytes present.
    let cd_len =
        usize::try_from(end.cd_size).map_err(|_| bad("the central directory does not fit in the address space"))?;
    let cd = cur.read_at(end.cd_offset, cd_len, &|| "the central directory".to_string())?;
    let entries = parse_central(&cd, end.entries as usize, end.cd_offset)?;
    check_names(&entries)?;
    Ok((end, entries))
}

/// Finds the end record (the last one whose comment fits in the file) and the zip64 end
/// record it points to, and checks that the directory ends where they start.
fn find_end<R: Read + Seek>(cur: &mut Cursor<'_, R>, file_len: u64) -> Result<End> {
    if file_len < EOCD_LEN as u64 {
        return Err(bad(format!("not a zip archive: {file_len} bytes is too short for its end record")));
    }
    let tail_len = file_len.min((EOCD_LEN + MAX_COMMENT) as u64) as usize;
    let tail_start = file_len - tail_len as u64;
    let tail = cur.read_at(tail_start, tail_len, &|| "the archive's last bytes".to_string())?;
    let at = (0..=tail_len - EOCD_LEN)
        .rev()
        .find(|&i| le32(&tail, i) == EOCD_SIG && i + EOCD_LEN + le16(&tail, i + 20) as usize <= tail_len)
        .ok_or_else(|| bad("not a zip archive: no end of central directory record"))?;
    let eocd = &tail[at..at + EOCD_LEN];
    let eocd_pos = tail_start + at as u64;
    let (disk, cd_disk) = (le16(eocd, 4), le16(eocd, 6));
    let (on_disk, total) = (le16(eocd, 8), le16(eocd, 10));
    let (cd_size, cd_offset) = (le32(eocd, 12), le32(eocd, 16));

    let locator_pos = eocd_pos.checked_sub(LOCATOR_LEN);
    let locator = match locator_pos {
        Some(pos) if pos >= tail_start && le32(&tail, (pos - tail_start) as usize) == LOCATOR_SIG => {
            let i = (pos - tail_start) as usize;
            Some(tail[i..i + LOCATOR_LEN as usize].to_vec())
        }
        Some(pos) => {
            let b = cur.read_at(pos, LOCATOR_LEN as usize, &|| "the zip64 end locator".to_string())?;
            (le32(&b, 0) == LOCATOR_SIG).then_some(b)
        }
        None => None,
    };
    let Some(locator) = locator else {
        if disk != 0 || cd_disk != 0 || on_disk != total {
            return Err(bad("archives split over several disks are not supported"));
        }
        let cd_offset = u64::from(cd_offset);
        let cd_size = u64::from(cd_size);
        if cd_offset.checked_add(cd_size) != Some(eocd_pos) {
            return Err(bad(format!(
                "the central directory (offset {cd_offset}, {cd_size} bytes) does not end where the end \
                 record starts (byte {eocd_pos}): data before the archive or a damaged directory"
            )));
        }
        return Ok(End { entries: u64::from(total), cd_offset, cd_size });
    };

    // Zip64: the locator points at the zip64 end record, which must end where it starts.
    let locator_pos = eocd_pos - LOCATOR_LEN;
    if le32(&locator, 4) != 0 || le32(&locator, 16) > 1 {
        return Err(bad("archives split over several disks are not supported"));
    }
    let eocd64_pos = le64(&locator, 8);
    if eocd64_pos.checked_add(EOCD64_LEN as u64).is_none_or(|end| end > locator_pos) {
        return Err(bad(format!(
            "the zip64 end record at byte {eocd64_pos} does not lie before its locator (byte {locator_pos})"
        )));
    }
    let rec = cur.read_at(eocd64_pos, EOCD64_LEN, &|| "the zip64 end record".to_string())?;
    if le32(&rec, 0) != EOCD64_SIG {
        return Err(bad(format!("no zip64 end record at byte {eocd64_pos}, where its locator points")));
    }
    if le64(&rec, 4).checked_add(eocd64_pos + 12) != Some(locator_pos) {
        return Err(bad("the zip64 end record does not end where its locator starts"));
    }
    let (disk64, cd_disk64) = (le32(&rec, 16), le32(&rec, 20));
    let (on_disk64, total64) = (le64(&rec, 24), le64(&rec, 32));
    let (cd_size64, cd_offset64) = (le64(&rec, 40), le64(&rec, 48));
    if disk64 != 0 || cd_disk64 != 0 || on_disk64 != total64 {
        return Err(bad("archives split over several disks are not supported"));
    }
    // A 32-bit field that is not saturated must agree with its zip64 value: readers that
    // trust one or the other must not see different archives.
    let agree16 = |v: u16, v64: u64| v == 0xffff || u64::from(v) == v64;
    let agree32 = |v: u32, v64: u64| v == 0xffff_ffff || u64::from(v) == v64;
    if !agree16(total, total64) || !agree16(on_disk, on_disk64) || !agree32(cd_size, cd_size64) {
        return Err(bad("the end record and the zip64 end record disagree"));
    }
    if !agree32(cd_offset, cd_offset64) {
        return Err(bad("the end record and the zip64 end record disagree"));
    }
    if cd_offset64.checked_add(cd_size64) != Some(eocd64_pos) {
        return Err(bad(format!(
            "the central directory (offset {cd_offset64}, {cd_size64} bytes) does not end where the zip64 \
             end record starts (byte {eocd64_pos}): data before the archive or a damaged directory"
        )));
    }
    Ok(End { entries: total64, cd_offset: cd_offset64, cd_size: cd_size64 })
}

/// Walks the extra fields of a header; `None` when they do not tile the area exactly.
fn extra_fields(extra: &[u8]) -> Option<Vec<(u16, &[u8])>> {
    let mut out = Vec::new();
    let mut rest = extra;
    while !rest.is_empty() {
        if rest.len() < 4 {
            return None;
        }
        let (id, len) = (le16(rest, 0), le16(rest, 2) as usize);
        let body = rest.get(4..4 + len)?;
        out.push((id, body));
        rest = &rest[4 + len..];
    }
    Some(out)
}

/// Replaces the saturated fields among `fields` (value, saturated?) with the zip64 extra
/// field's values, in order; `None` when the extra field is missing or short.
fn zip64_values(extra: &[(u16, &[u8])], fields: &mut [(u64, bool)]) -> Option<()> {
    if !fields.iter().any(|f| f.1) {
        return Some(());
    }
    let (_, body) = extra.iter().find(|(id, _)| *id == ZIP64_EXTRA)?;
    let mut at = 0;
    for (value, saturated) in fields.iter_mut() {
        if *saturated {
            *value = le64(body.get(at..at + 8)?, 0);
            at += 8;
        }
    }
    Some(())
}

/// Parses the central directory: exactly `count` entries filling all of `cd`.
fn parse_central(cd: &[u8], count: usize, cd_offset: u64) -> Result<Vec<Entry>> {
    let mut entries = Vec::with_capacity(count);
    let mut at = 0usize;
    for i in 0..count {
        let where_ = || format!("central directory entry {i} (byte {})", cd_offset + at as u64);
        let fixed = cd.get(at..at + CENTRAL_LEN).ok_or_else(|| bad(format!("{} is cut short", where_())))?;
        if le32(fixed, 0) != CENTRAL_SIG {
            return Err(bad(format!("{} has no central header signature", where_())));
        }
        let flags = le16(fixed, 8);
        let method = le16(fixed, 10);
        let crc32 = le32(fixed, 16);
        let (csize, size) = (le32(fixed, 20), le32(fixed, 24));
        let (name_len, extra_len, comment_len) =
            (le16(fixed, 28) as usize, le16(fixed, 30) as usize, le16(fixed, 32) as usize);
        let disk = le16(fixed, 34);
        let offset = le32(fixed, 42);
        let total = CENTRAL_LEN + name_len + extra_len + comment_len;
        let Some(record) = cd.get(at..at + total) else {
            return Err(bad(format!("{}: its name, extra field and comment run past the directory", where_())));
        };
        let raw_name = &record[CENTRAL_LEN..CENTRAL_LEN + name_len];
        let extra = &record[CENTRAL_LEN + name_len..CENTRAL_LEN + name_len + extra_len];
        let member = check_name(raw_name, i)?;
        let fields = extra_fields(extra).ok_or_else(|| bad_member(&member, "malformed extra fields"))?;
        let mut z = [
            (u64::from(size), size == u32::MAX),
            (u64::from(csize), csize == u32::MAX),
            (u64::from(offset), offset == u32::MAX),
            (u64::from(disk), disk == u16::MAX),
        ];
        zip64_values(&fields, &mut z).ok_or_else(|| {
            bad_member(&member, "sizes or offset need a zip64 extra field, which is missing or short")
        })?;
        let [(size, _), (compressed_size, _), (header_start, _), (disk, _)] = z;
        if disk != 0 {
            return Err(bad_member(&member, "archives split over several disks are not supported"));
        }
        let method = check_method(&member, flags, method)?;
        check_sizes(&member, method, compressed_size, size)?;
        let key = member.strip_suffix(super::NPY_SUFFIX).unwrap_or(&member).to_string();
        let part_index: Option<Box<[u8]>> =
            fields.iter().find(|(id, _)| *id == super::part_index::ID).map(|(_, body)| Box::from(*body));
        let central_extra = extra_len - part_index.as_ref().map_or(0, |body| 4 + body.len());
        entries.push(Entry {
            member,
            key,
            method,
            crc32,
            compressed_size,
            size,
            header_start,
            data_start: 0,
            central_extra,
            part_index,
        });
        at += total;
    }
    if at != cd.len() {
        return Err(bad(format!(
            "the central directory holds {} bytes after its {count} entries (the end record's count is wrong)",
            cd.len() - at
        )));
    }
    Ok(entries)
}

/// A member name must be non-empty, valid UTF-8 and free of NUL bytes (checked on the raw
/// bytes: no code page is guessed).
fn check_name(raw: &[u8], i: usize) -> Result<String> {
    if raw.is_empty() {
        return Err(bad(format!("central directory entry {i} has an empty name")));
    }
    let Ok(name) = std::str::from_utf8(raw) else {
        return Err(bad(format!("the name of entry {i} is not valid UTF-8: b\"{}\"", raw.escape_ascii())));
    };
    if name.contains('\0') {
        return Err(bad(format!("the name of entry {i} holds a NUL byte: {:?}", name)));
    }
    Ok(name.to_string())
}

/// Only unencrypted stored, deflated and Zstandard members are read: the method of one.
fn check_method(member: &str, flags: u16, method: u16) -> Result<Method> {
    if flags & ENCRYPTION_FLAGS != 0 || method == 99 {
        return Err(bad_member(member, "the member is encrypted; encrypted archives are not supported"));
    }
    Method::from_zip_id(method, flags).ok_or_else(|| {
        bad_member(
            member,
            format!(
                "compression method {method} ({}) not supported; only stored (0), deflate (8) \
                 and zstandard (93) are",
                method_name(method)
            ),
        )
    })
}

/// A stored member is its own size; a compressed one cannot decompress beyond its codec's
/// limit.
fn check_sizes(member: &str, method: Method, compressed_size: u64, size: u64) -> Result<()> {
    if method == Method::Stored && compressed_size != size {
        return Err(bad_member(
            member,
            format!("a stored member of {size} bytes cannot occupy {compressed_size} bytes in the archive"),
        ));
    }
    let ratio = method.max_ratio();
    if size > compressed_size.saturating_mul(ratio) {
        let (name, verb) = (method.name(), if method == Method::Zstd { "decompress" } else { "inflate" });
        return Err(bad_member(
            member,
            format!(
                "{compressed_size} bytes of {name} data cannot {verb} to the {size} bytes claimed \
                 ({name} expands at most {ratio} times)"
            ),
        ));
    }
    Ok(())
}

/// Names are keys: unique once one `.npy` is stripped, and no member's full name may be
/// another member's key (`x.npy` beside `x.npy.npy` would make `x.npy` mean either).
fn check_names(entries: &[Entry]) -> Result<()> {
    let mut keys: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        if keys.insert(&e.key, i).is_some() {
            return Err(bad_member(&e.member, format!("two members are named '{}'", e.key)));
        }
    }
    for (i, e) in entries.iter().enumerate() {
        if let Some(&j) = keys.get(e.member.as_str()).filter(|&&j| j != i) {
            return Err(bad_member(
                &e.member,
                format!("the name is ambiguous: it is also the array name of member '{}'", entries[j].member),
            ));
        }
    }
    Ok(())
}

/// Reads `e`'s local header and checks it against the directory; sets `e.data_start`.
fn check_local<R: Read + Seek>(cur: &mut Cursor<'_, R>, e: &mut Entry, i: usize, cd_offset: u64) -> Result<()> {
    let at = e.header_start;
    if at.checked_add(LOCAL_LEN as u64).is_none_or(|end| end > cd_offset) {
        return Err(bad_member(
            &e.member,
            format!("the local header at byte {at} does not lie before the central directory (byte {cd_offset})"),
        ));
    }
    let what = || format!("the local header of entry {i} (byte {at})");
    let fixed = cur.read_at(at, LOCAL_LEN, &what)?;
    if le32(&fixed, 0) != LOCAL_SIG {
        return Err(bad_member(&e.member, format!("no local header at byte {at}, where the directory points")));
    }
    let (flags, method, crc32) = (le16(&fixed, 6), le16(&fixed, 8), le32(&fixed, 14));
    let (csize, size) = (le32(&fixed, 18), le32(&fixed, 22));
    let (name_len, extra_len) = (le16(&fixed, 26) as usize, le16(&fixed, 28) as usize);
    let data_start = at + (LOCAL_LEN + name_len + extra_len) as u64;
    let Some(data_end) = data_start.checked_add(e.compressed_size).filter(|&end| end <= cd_offset) else {
        return Err(bad_member(
            &e.member,
            format!(
                "its data (byte {data_start}, {} bytes) runs past the start of the central directory (byte {cd_offset})",
                e.compressed_size
            ),
        ));
    };
    debug_assert!(data_end >= data_start);
    let var = cur.read_at(at + LOCAL_LEN as u64, name_len + extra_len, &what)?;
    let (name, extra) = var.split_at(name_len);
    if name != e.member.as_bytes() {
        return Err(bad_member(
            &e.member,
            format!("the local header names it b\"{}\", unlike the central directory", name.escape_ascii()),
        ));
    }
    if method != e.method.zip_id() {
        return Err(bad_member(
            &e.member,
            format!("the local header says compression method {method}, the central directory {}", e.method.zip_id()),
        ));
    }
    if flags & ENCRYPTION_FLAGS != 0 {
        return Err(bad_member(&e.member, "the member is encrypted; encrypted archives are not supported"));
    }
    let fields =
        extra_fields(extra).ok_or_else(|| bad_member(&e.member, "malformed extra fields in the local header"))?;
    // In a local header the zip64 field holds both sizes whenever either is saturated.
    let saturated = size == u32::MAX || csize == u32::MAX;
    let mut z = [(u64::from(size), saturated), (u64::from(csize), saturated)];
    if saturated && zip64_values(&fields, &mut z).is_none() {
        let mut by_field = [(u64::from(size), size == u32::MAX), (u64::from(csize), csize == u32::MAX)];
        zip64_values(&fields, &mut by_field)
            .ok_or_else(|| bad_member(&e.member, "the local header's zip64 extra field is missing or short"))?;
        z = by_field;
    }
    let [(size, _), (csize, _)] = z;
    // With a data descriptor (bit 3) the local header may leave CRC and sizes zero.
    let deferred = flags & FLAG_DATA_DESCRIPTOR != 0;
    let agrees = |local: u64, central: u64| local == central || deferred && local == 0;
    if !agrees(u64::from(crc32), u64::from(e.crc32)) || !agrees(csize, e.compressed_size) || !agrees(size, e.size) {
        return Err(bad_member(
            &e.member,
            format!(
                "the local header (crc {crc32:#010x}, {csize} bytes, {size} inflated) disagrees with the central \
                 directory (crc {:#010x}, {} bytes, {} inflated)",
                e.crc32, e.compressed_size, e.size
            ),
        ));
    }
    e.data_start = data_start;
    Ok(())
}

/// Members' local-header-and-data ranges must not overlap (each byte belongs to one member).
fn check_overlap(entries: &[Entry]) -> Result<()> {
    let mut order: Vec<&Entry> = entries.iter().collect();
    order.sort_unstable_by_key(|e| (e.header_start, e.data_end()));
    for w in order.windows(2) {
        if w[0].data_end() > w[1].header_start {
            return Err(bad_member(
                &w[1].member,
                format!(
                    "the member (bytes {}..{}) overlaps member '{}' (bytes {}..{})",
                    w[1].header_start,
                    w[1].data_end(),
                    w[0].member,
                    w[0].header_start,
                    w[0].data_end()
                ),
            ));
        }
    }
    Ok(())
}
