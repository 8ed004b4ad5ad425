//! Reading an archive: [`ReaderOptions`] opens it once its directory passes the checks of
//! `directory`, [`Reader`] reads members by name, lazily, and [`MemberReader`] streams one
//! member's bytes, held to the size it claims, its CRC-32 checked at its end;
//! [`OwnedMemberReader`] does the same from a handle of its own (members side by side).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use zip::{CompressionMethod, ZipArchive};

use super::members::{member_info, MemberInfo};
use super::{directory, zip_err, Method, ReaderOptions};
#[cfg(doc)]
use crate::array::{Array, DynArray};
use crate::error::{Access, Error, ErrorKind, Result};
use crate::header::{shape_repr, FileKind};
use crate::io::ReadNpy;
use crate::object::FromObject;
#[cfg(doc)]
use crate::object::Object;
use crate::options::ReadOptions;
use crate::read::{NpyReader, Origin};

mod parallel;
mod piped;

use super::codec::{is_data_error, CodecReader};
#[cfg(not(any(target_family = "wasm", miri)))]
use super::{part_index, whole};

/// Most bytes reserved up front for a compressed member's [`Reader::read_raw`] that is not
/// inflated whole: twice its compressed size and 1 MiB at most (what any read may take on
/// a claim, `tests/hostile_npz.rs`), and no more than this; more grows as the data
/// actually decompresses.
const RAW_PREALLOC: u64 = 16 << 20;

/// Checks that the zip crate, which reads the members, sees the archive as the directory
/// check did: same entries, names, places, sizes and methods (a Unicode Path extra field,
/// say, would rename a member for it and not for NumPy).
fn agree<R: Read + Seek>(zip: &ZipArchive<R>, entries: &[directory::Entry]) -> Result<()> {
    if zip.len() != entries.len() || zip.has_duplicate_names() {
        return Err(Error::npz(
            None,
            format!("the zip reader finds {} entries where the central directory has {}", zip.len(), entries.len()),
        ));
    }
    for (i, e) in entries.iter().enumerate() {
        let z = zip.by_index_data(i).map_err(|err| zip_err(Some(&e.member), err))?;
        let same_method = matches!(
            (z.compression(), e.method),
            (CompressionMethod::Stored, Method::Stored)
                | (CompressionMethod::Deflated, Method::Deflated(_))
                | (CompressionMethod::Zstd, Method::Zstd)
        );
        if z.name_raw() != e.member.as_bytes() {
            return Err(Error::npz(
                Some(&e.member),
                format!(
                    "the zip reader names this entry b\"{}\" (from an extra field), unlike its header",
                    z.name_raw().escape_ascii()
                ),
            ));
        }
        if z.header_start() != e.header_start
            || z.compressed_size() != e.compressed_size
            || z.size() != e.size
            || z.crc32() != e.crc32
            || !same_method
            || z.encrypted()
        {
            return Err(Error::npz(Some(&e.member), "the zip reader reads this entry unlike its central directory"));
        }
    }
    Ok(())
}

/// Reads an `.npz` archive lazily: nothing but the directory is read until a member is
/// asked for.
///
/// # Hostile archives
/// Opening checks the archive's structure, so that every read after it either succeeds or
/// returns an error, without allocating for sizes the file cannot back:
/// - the central directory is authoritative; it must end where the end record (or zip64
///   end record) starts, the two records must agree, and its entries must fill it exactly;
///   archives split over disks, or with data before the archive, are refused;
/// - at most [`ReaderOptions::max_entries`] entries, and no more than the directory's
///   size can hold, checked before the directory is read;
/// - names are non-empty UTF-8 (the raw bytes; no code page is guessed) without NUL,
///   unique once one `.npy` is stripped, and no member's full name is another's array
///   name; names are keys, never paths;
/// - only stored, deflated and Zstandard (method 93) members, unencrypted; a stored
///   member's sizes agree, a compressed one claims no more than its codec can produce from
///   its bytes (deflate 1032 times, Zstandard 32,768 times); the compressed members claim at
///   most [`ReaderOptions::max_inflated_size`] in all;
/// - every local header is where the directory says, with the same name, method, CRC and
///   sizes; each member's header and data lie before the central directory and overlap no
///   other member's.
///
/// Reading a member decompresses exactly its claimed size: a stream that ends early or runs
/// past it is an [`ErrorKind::Npz`] error, as is a bad CRC once the member is read to its
/// end.
///
/// # Threads
/// An archive opened by path ([`Reader::from_path`], [`Reader::from_path_with`]) keeps a
/// second handle on its file, for reads at positions of their own. With it,
/// [`Reader::read_all`] and [`Reader::read_many`] read several
/// members at once on worker threads (one per CPU, [`ReaderOptions::threads`]), and a
/// compressed member of 4 MiB or more that is read alone ([`Reader::read`],
/// [`Reader::read_object_vec`], or a read of several that names one) is decompressed on a second
/// thread, a few pieces ahead of its CRC check and conversion. Threads are scoped to the
/// call. An archive read from any other `Read + Seek` is read on the caller's thread,
/// unless handles of its own are given ([`Reader::read_many_from`]).
#[derive(Debug)]
pub struct Reader<R: Read + Seek> {
    zip: ZipArchive<R>,
    entries: Vec<directory::Entry>,
    /// The entries as [`Reader::members`] gives them.
    members: Vec<MemberInfo>,
    names: Vec<String>,
    by_name: HashMap<String, usize>,
    options: ReadOptions,
    /// The path of an archive opened by path, which errors name.
    origin: Option<PathBuf>,
    /// A second handle on an archive opened by path, read at positions: members read on
    /// worker threads (`parallel`), or from a handle of their own.
    file: Option<File>,
    /// Most members read at once ([`ReaderOptions::threads`], at most one per CPU).
    threads: usize,
    /// [`ReaderOptions::max_inflated_size`]: also the most a read of several members
    /// decompresses.
    max_inflated: u64,
}

impl Reader<BufReader<File>> {
    /// Opens an archive with default [`ReaderOptions`].
    ///
    /// # Errors
    /// [`ErrorKind::Io`]; [`ErrorKind::Npz`] for a file that is not a valid zip archive
    /// or fails a check (see [`Reader`]).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        Reader::from_path_with(path, &ReaderOptions::default())
    }

    /// Opens the archive at `path` with the given options.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the file cannot be opened; as [`Reader::from_reader_with`].
    pub fn from_path_with(path: impl AsRef<Path>, options: &ReaderOptions) -> Result<Self> {
        let path = path.as_ref();
        let file = crate::file::open_file(path)?;
        Reader::from_file_with(file, path, options)
    }

    /// The archive in `file`, already open, at `path`, with default [`ReaderOptions`]: see
    /// [`Reader::from_file_with`].
    ///
    /// # Errors
    /// As [`Reader::from_reader_with`].
    pub fn from_file(file: File, path: impl AsRef<Path>) -> Result<Self> {
        Reader::from_file_with(file, path, &ReaderOptions::default())
    }

    /// The archive in `file`, already open, at `path` (which errors name): as
    /// [`Reader::from_path_with`] reads it, without opening it again (the file of
    /// [`Opened::Archive`](crate::Opened::Archive)).
    ///
    /// # Errors
    /// As [`Reader::from_reader_with`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::npz::{Reader, ReaderOptions, Writer};
    /// use npy_core::{Loader, Opened};
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("run.npz");
    /// let mut w = Writer::new(std::fs::File::create(&path)?);
    /// w.add("t", &[0.5f64, 1.5])?;
    /// w.finish()?;
    /// let Opened::Archive(file) = Loader::new().open(&path, true)? else { panic!("an archive") };
    /// let mut npz = Reader::from_file_with(file, &path, &ReaderOptions::new())?;
    /// assert_eq!(npz.read::<Vec<f64>>("t")?, [0.5, 1.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_file_with(file: File, path: impl AsRef<Path>, options: &ReaderOptions) -> Result<Self> {
        let path = path.as_ref();
        let open = || {
            // A second handle on the same open file, for reads at positions (workers). On
            // Windows those move the handles' shared cursor, which the zip reader never
            // relies on: it seeks to each member before reading it.
            let positional = file.try_clone().ok().filter(|_| cfg!(any(unix, windows)));
            let mut reader = Reader::from_reader_with(BufReader::with_capacity(64 << 10, file), options)?;
            reader.file = positional;
            Ok(reader)
        };
        let mut reader = open().map_err(|e: Error| e.reading(path))?;
        reader.origin = Some(path.to_path_buf());
        Ok(reader)
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Reads and checks the archive's directory from any `Read + Seek`, with default
    /// [`ReaderOptions`].
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] for an invalid archive, one that fails a check (see [`Reader`])
    /// or exceeds a default limit; [`ErrorKind::Io`] from the reader.
    pub fn from_reader(reader: R) -> Result<Self> {
        Reader::from_reader_with(reader, &ReaderOptions::default())
    }

    /// Reads and checks the archive's directory from any `Read + Seek` with the given
    /// options (see [`Reader`] for the checks).
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] for a file that is not a zip archive, an archive that fails a
    /// check or exceeds a limit; [`ErrorKind::Io`] from the reader.
    pub fn from_reader_with(mut reader: R, options: &ReaderOptions) -> Result<Self> {
        let entries = directory::read(&mut reader, options.limits())?;
        let zip = ZipArchive::new(reader).map_err(|e| zip_err(None, e))?;
        agree(&zip, &entries)?;
        let names = entries.iter().map(|e| e.key.clone()).collect();
        let by_name = entries.iter().enumerate().map(|(i, e)| (e.key.clone(), i)).collect();
        let members = entries.iter().map(member_info).collect();
        Ok(Reader {
            zip,
            entries,
            members,
            names,
            by_name,
            options: options.read_options.clone(),
            origin: None,
            file: None,
            threads: options.threads.unwrap_or_else(crate::cpu::cpus).min(crate::cpu::cpus()),
            max_inflated: options.max_inflated_size,
        })
    }

    /// The arrays' names, as NumPy's `NpzFile.files`: member names with one `.npy`
    /// stripped, in archive order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Details of every member, in archive order: the directory read and checked when the
    /// archive was opened, so this reads nothing and cannot fail.
    pub fn members(&self) -> &[MemberInfo] {
        &self.members
    }

    fn index(&self, name: &str) -> Result<usize> {
        self.by_name
            .get(name)
            .copied()
            .or_else(|| self.entries.iter().position(|e| e.member == name))
            .ok_or_else(|| Error::npz(Some(name), format!("no such array; the archive has {:?}", self.names)))
    }

    /// Opens member `name` as a `.npy` stream: its header is read, and the data can be
    /// read whole or in chunks ([`NpyReader::chunks`]). The CRC is checked when the
    /// member has been read to its end; [`Reader::read`] and friends do that. Kept beside
    /// [`Reader::read`]: a member larger than memory is read only this way, and its header
    /// can be looked at before deciding how to read it.
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] for an unknown name; as [`NpyReader::from_reader`] for the member's
    /// header.
    pub fn npy(&mut self, name: &str) -> Result<NpyReader<MemberReader<'_, R>>> {
        let options = self.options.clone();
        let path = self.origin.clone();
        let (file, size, present) = self.member(name)?;
        let origin = Origin { path, member: Some(file.member().to_string()) };
        options.open_member(file, size, present, origin)
    }

    /// Opens member `name` as a `.npy` stream read from `source`, another handle on this
    /// same archive (the file opened again, or a reader of it at a position of its own),
    /// which the stream owns. Unlike [`Reader::npy`], the stream does not borrow this
    /// reader: several members can be read side by side, each from its own handle. The
    /// member is read where this reader's checked directory places it, decompressed as its
    /// method says, and held to its size and CRC-32 as [`MemberReader`] holds it (a
    /// `source` that is not this archive fails those checks).
    ///
    /// # Errors
    /// As [`Reader::npy`]; errors of seeking `source`.
    ///
    /// # Examples
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::npz::{Compression, Reader, Writer};
    ///
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add("a", &[1u16, 2, 3])?;
    /// w.add_with("b", &[4.5f32, 5.5, 6.5], Compression::deflated())?;
    /// let bytes = w.finish()?.into_inner();
    /// let r = Reader::from_reader(Cursor::new(&bytes))?;
    /// let mut a = r.npy_from("a", Cursor::new(&bytes))?;
    /// let mut b = r.npy_from("b", Cursor::new(&bytes))?;
    /// let (mut xs, mut ys) = (Vec::new(), Vec::new());
    /// for _ in 0..3 {
    ///     a.read_raw(1, &mut xs)?;
    ///     b.read_raw(1, &mut ys)?;
    /// }
    /// assert_eq!((xs.len(), ys.len()), (6, 12));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn npy_from<S: Read + Seek>(&self, name: &str, source: S) -> Result<NpyReader<OwnedMemberReader<S>>> {
        let i = located(self.origin.as_deref(), "", self.index(name))?;
        self.members_at().npy_at(i, source)
    }

    /// The members as the checked directory places them, for reads from handles of their
    /// own: unlike the reader, which moves the zip reader's cursor, shared by threads.
    fn members_at(&self) -> Members<'_> {
        Members { entries: &self.entries, options: &self.options, origin: self.origin.as_deref() }
    }

    /// The reader of member `name`, its size, and whether that many bytes are known to
    /// be in the file (a stored member, whose range the directory checks placed there).
    fn member(&mut self, name: &str) -> Result<(MemberReader<'_, R>, u64, bool)> {
        let i = located(self.origin.as_deref(), "", self.index(name))?;
        self.member_at(i, false)
    }

    /// As [`Reader::member`], for member `i` of the directory: its bytes as the zip stores
    /// them, decompressed by npy-core's codec (as every other read of a member is), or
    /// inflated whole first when it is read `whole` ([`MemberData::whole`]).
    fn member_at(&mut self, i: usize, whole: bool) -> Result<(MemberReader<'_, R>, u64, bool)> {
        let data = stored_at(&mut self.zip, i, &self.entries[i], self.origin.as_deref())?;
        let e = &self.entries[i];
        let stored = e.method == Method::Stored;
        let data = if whole { MemberData::whole(e, data, self.threads) } else { MemberData::of(e, data) };
        let data = located(self.origin.as_deref(), &e.member, data)?;
        let origin = self.origin.as_deref();
        Ok((MemberReader(member_reader(e, origin.map(Path::to_path_buf), data)), e.size, stored))
    }

    /// Reads member `name` with `decode` (reading its last element checks the CRC).
    fn with_member<D: Decode>(&mut self, name: &str, decode: &D) -> Result<D::Value> {
        let i = located(self.origin.as_deref(), "", self.index(name))?;
        self.with_member_at(i, decode)
    }

    /// As [`Reader::with_member`], for member `i` of the directory: a deflated member that
    /// inflates whole from its bytes in memory (`inflates_whole`), a large compressed member
    /// of an archive opened by path decompressed on a second thread when there is a CPU for
    /// it (`piped`), any other through the zip reader's cursor on the archive.
    fn with_member_at<D: Decode>(&mut self, i: usize, decode: &D) -> Result<D::Value> {
        #[cfg(not(any(target_family = "wasm", miri)))]
        if inflates_whole(&self.entries[i]) {
            let (entries, origin) = (&self.entries, self.origin.as_deref());
            let data = stored_at(&mut self.zip, i, &entries[i], origin)?;
            let npy = Members { entries, options: &self.options, origin }.inflated(i, data, self.threads)?;
            return located(origin, &entries[i].member, decode.decode(npy));
        }
        if let Some(file) = &self.file {
            if self.threads > 1 && piped::worth_piping(&self.entries[i]) {
                return self.members_at().read_piped(i, FileAt { file, pos: 0 }, |npy| decode.decode(npy));
            }
        }
        let options = self.options.clone();
        let path = self.origin.clone();
        let (mut file, size, present) = self.member_at(i, true)?;
        let member = file.member().to_string();
        let origin = Origin { path: path.clone(), member: Some(member.clone()) };
        let reader = options.open_member(&mut file as &mut dyn Read, size, present, origin)?;
        located(path.as_deref(), &member, decode.decode(reader))
    }

    /// Reads member `name` as any type that reads a `.npy` file ([`ReadNpy`]): `Vec<T>` (a
    /// 1-D array), [`Array<T>`], [`DynArray`] (any dtype; it remembers the member's `.npy`
    /// version, so writing it back reproduces it), `Array<Object>` (an object array, its
    /// pickle decoded without executing anything: see [`crate::object`]), an ndarray array
    /// (feature `ndarray`). What `V::read_npy` gives for a file, errors naming the member.
    ///
    /// # Errors
    /// As [`Reader::npy`] and `V`'s [`ReadNpy::from_npy_reader`]; [`ErrorKind::Npz`] for a
    /// bad CRC.
    ///
    /// # Examples
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::{npz::{Reader, Writer}, Array, DynArray};
    ///
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add("m", &Array::from_shape_vec(vec![2, 2], vec![1u8, 2, 3, 4])?)?;
    /// w.add("v", &[1.5f64, 2.5])?;
    /// let mut r = Reader::from_reader(w.finish()?)?;
    /// assert_eq!(r.read::<Array<u8>>("m")?.get(&[1, 0]), Some(&3));
    /// assert_eq!(r.read::<DynArray>("m")?.shape(), [2, 2]);
    /// assert_eq!(r.read::<Vec<f64>>("v")?, [1.5, 2.5]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn read<V: ReadNpy>(&mut self, name: &str) -> Result<V> {
        self.with_member(name, &As::<V>(PhantomData))
    }

    /// Reads 1-D object array member `name` as `Vec<T>` (`String`, `Option<String>`,
    /// [`Object`], `i64`, ...: see [`FromObject`]). Kept beside [`Reader::read`]: `Vec<T>`
    /// of a `FromObject` type cannot be a [`ReadNpy`] type for every `T` (`Vec<i64>` reads
    /// numeric arrays).
    ///
    /// # Errors
    /// As [`Reader::read`]; [`ErrorKind::WrongShape`] for an array that is not
    /// 1-D; [`ErrorKind::InvalidValue`] naming the first element that is not a `T`.
    pub fn read_object_vec<T: FromObject>(&mut self, name: &str) -> Result<Vec<T>> {
        self.with_member(name, &ObjectVec::<T> { name, of: PhantomData })
    }

    /// Checks member `name`'s part index, when whole reads use it: a member npy compressed
    /// in parts on worker threads lists where each part starts (a central directory extra
    /// field, 0x706e), and [`Reader::read`] and the other whole reads decompress its parts
    /// at once by it, while streamed reads ([`Reader::npy`], [`Reader::raw`]) do not look
    /// at it. This decompresses the member as whole reads do, checking each part and the
    /// CRC-32: `true` when checked, `false` when the member has no index they use (none,
    /// or over 256 MiB). `npy check` calls it.
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] for an unknown name, an index that does not fit the member, a
    /// part that does not decompress to exactly its place, or a bad CRC.
    ///
    /// # Examples
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::npz::{Compression, Reader, Writer};
    ///
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.threads(2).compression(Compression::deflated());
    /// let big: Vec<f32> = (0..1u32 << 21).map(|i| (i as f32).sqrt()).collect();
    /// w.add("big", &big)?; // 8 MiB: two parts and a bit
    /// w.add("small", &[1u8, 2])?;
    /// let mut r = Reader::from_reader(w.finish()?)?;
    /// assert!(r.check_part_index("big")?);
    /// assert!(!r.check_part_index("small")?);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn check_part_index(&mut self, name: &str) -> Result<bool> {
        let origin = self.origin.clone();
        let i = located(origin.as_deref(), "", self.index(name))?;
        if self.entries[i].part_index.is_none() || !inflates_whole(&self.entries[i]) {
            return Ok(false);
        }
        let (mut file, _, _) = self.member_at(i, true)?;
        let member = file.member().to_string();
        located(origin.as_deref(), &member, io::copy(&mut file, &mut io::sink()).map_err(Error::from))?;
        Ok(true)
    }

    /// Reads any member's bytes as stored in the zip after decompression (for members that
    /// are not `.npy` files).
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] for an unknown name, a bad CRC, or compressed data that does
    /// not decompress to the member's size.
    pub fn read_raw(&mut self, name: &str) -> Result<Vec<u8>> {
        let origin = self.origin.clone();
        let i = located(origin.as_deref(), "", self.index(name))?;
        let compressed = self.entries[i].compressed_size;
        let (file, size, _) = self.member_at(i, true)?;
        let member = file.member().to_string();
        located(origin.as_deref(), &member, read_all(file, size, compressed))
    }

    /// Streams member `name`'s bytes (decompressed), for members too large to hold or to
    /// copy into another archive ([`super::Writer::add_raw_from`]). Reading it to its end
    /// (until `read` gives 0) checks that the data is the member's size and its CRC-32;
    /// [`MemberReader`] says how a failing check is reported.
    ///
    /// # Errors
    /// [`ErrorKind::Npz`] for an unknown name.
    ///
    /// # Examples
    /// ```
    /// use std::io::{Cursor, Read};
    /// use npy_core::npz::{Compression, Reader, Writer};
    ///
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add_raw_with("notes.txt", b"hello", Compression::deflated())?;
    /// let mut r = Reader::from_reader(w.finish()?)?;
    /// let mut text = String::new();
    /// r.raw("notes.txt")?.read_to_string(&mut text)?;
    /// assert_eq!(text, "hello");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn raw(&mut self, name: &str) -> Result<MemberReader<'_, R>> {
        Ok(self.member(name)?.0)
    }

    /// True when member `name` starts like a `.npy` file (else [`Reader::read_raw`]).
    ///
    /// # Errors
    /// As [`Reader::read_raw`].
    pub fn is_npy(&mut self, name: &str) -> Result<bool> {
        let origin = self.origin.clone();
        let (mut file, _, _) = self.member(name)?;
        let mut magic = [0u8; FileKind::PROBE_LEN];
        let got = crate::stream::read_full(&mut file, &mut magic);
        let member = file.member().to_string();
        let got = located(origin.as_deref(), &member, got)?;
        Ok(FileKind::of(&magic[..got]) == FileKind::Npy)
    }
}

/// What reading members from handles of their own needs of a [`Reader`]: where the checked
/// directory places them, the options for their headers and the archive's path (which
/// errors name). Shared by the threads of `parallel`.
#[derive(Debug, Clone, Copy)]
struct Members<'a> {
    entries: &'a [directory::Entry],
    options: &'a ReadOptions,
    origin: Option<&'a Path>,
}

impl Members<'_> {
    /// Member `i` (of the directory) as a `.npy` stream read from `source`, a handle on the
    /// archive ([`Reader::npy_from`]).
    fn npy_at<S: Read + Seek>(&self, i: usize, source: S) -> Result<NpyReader<OwnedMemberReader<S>>> {
        let e = &self.entries[i];
        let data = member_data(e, source).and_then(|data| MemberData::of(e, data));
        let data = located(self.origin, &e.member, data)?;
        self.npy_over(i, data)
    }

    /// Member `i` (of the directory), one that `inflates_whole`, as a `.npy` file over its
    /// bytes inflated whole from `data`, its stored bytes (its parts on up to `threads`
    /// threads): a read as [`DynArray`] takes those bytes for the array's.
    #[cfg(not(any(target_family = "wasm", miri)))]
    fn inflated<S: Read>(&self, i: usize, data: io::Take<S>, threads: usize) -> Result<NpyReader<io::Cursor<Vec<u8>>>> {
        let e = &self.entries[i];
        let bytes = located(self.origin, &e.member, inflate(e, data, threads))?;
        if crc32fast::hash(&bytes) != e.crc32 {
            let bad = Error::npz(Some(&e.member), "bad crc-32: the member's data is corrupt");
            return located(self.origin, "", Err(bad));
        }
        let origin = Origin { path: self.origin.map(Path::to_path_buf), member: Some(e.member.clone()) };
        let open = self.options.open_member(io::Cursor::new(bytes), e.size, true, origin);
        located(self.origin, &e.member, open).map(NpyReader::lending)
    }

    /// Member `i` as a `.npy` stream over `data`, its bytes as stored or decompressing.
    fn npy_over<S: Read>(&self, i: usize, data: MemberData<S>) -> Result<NpyReader<OwnedMemberReader<S>>> {
        self.open_npy(i, self.owned(i, data))
    }

    /// Member `i`'s bytes from `data`, held to its size and CRC-32.
    fn owned<S: Read>(&self, i: usize, data: MemberData<S>) -> OwnedMemberReader<S> {
        member_reader(&self.entries[i], self.origin.map(Path::to_path_buf), data)
    }

    /// Member `i` as a `.npy` stream over `reader`, which gives its bytes.
    fn open_npy<M: Read>(&self, i: usize, reader: M) -> Result<NpyReader<M>> {
        let e = &self.entries[i];
        let origin = Origin { path: self.origin.map(Path::to_path_buf), member: Some(e.member.clone()) };
        let open = self.options.open_member(reader, e.size, e.method == Method::Stored, origin);
        located(self.origin, &e.member, open)
    }
}

/// A handle on an archive opened by path that reads at a position of its own, on the
/// reader's second handle on the file: one per worker or member read, none moving
/// another's position.
struct FileAt<'a> {
    file: &'a File,
    pos: u64,
}

impl Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = crate::stream::read_at(self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for FileAt<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(pos) => Some(pos),
            SeekFrom::Current(by) => self.pos.checked_add_signed(by),
            SeekFrom::End(by) => self.file.metadata()?.len().checked_add_signed(by),
        };
        self.pos = pos.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the file's start"))?;
        Ok(self.pos)
    }
}

/// Member `e`'s bytes from `data`, held to its size and CRC-32, errors naming `origin`.
fn member_reader<S: Read>(e: &directory::Entry, origin: Option<PathBuf>, data: MemberData<S>) -> OwnedMemberReader<S> {
    OwnedMemberReader {
        data,
        member: e.member.clone(),
        codec: e.method.name(),
        origin,
        size: e.size,
        remaining: e.size,
        crc: crc32fast::Hasher::new(),
        want_crc: e.crc32,
    }
}

/// Whether member `e`, read whole, is decompressed whole first (`inflate`): a deflated
/// member within `whole`'s bounds, natively.
fn inflates_whole(e: &directory::Entry) -> bool {
    #[cfg(not(any(target_family = "wasm", miri)))]
    if matches!(e.method, Method::Deflated(_)) {
        return whole::inflates_whole(e.size, e.compressed_size);
    }
    let _ = e;
    false
}

/// Member `e`'s bytes decompressed whole from `data`, its stored bytes: by libdeflate,
/// straight into a buffer of the member's size, its parts (when its part index lists
/// them) on up to `threads` threads. Their size is checked; their CRC-32 is checked by
/// whoever reads them (`Members::inflated`, or the member's reader over `MemberData::Whole`).
#[cfg(not(any(target_family = "wasm", miri)))]
fn inflate<S: Read>(e: &directory::Entry, mut data: io::Take<S>, threads: usize) -> Result<Vec<u8>> {
    let bad = |why: String| Error::npz(Some(&e.member), why);
    // Both fit: the member's size is at most `WHOLE_MAX` and a multiple of its data's.
    let (size, compressed) = (e.size as usize, usize::try_from(e.compressed_size).unwrap_or(usize::MAX));
    let parts = match e.part_index.as_deref() {
        Some(body) => part_index::decode(body, size, compressed).map_err(bad)?,
        None => vec![part_index::Part { compressed: 0..compressed, data: 0..size }],
    };
    let mut stream = Vec::new();
    stream.try_reserve_exact(compressed).map_err(|_| crate::buffer::out_of_memory(compressed, 1))?;
    data.read_to_end(&mut stream)?;
    if stream.len() < compressed {
        return Err(bad(format!("its compressed data ends after {} of its {compressed} bytes", stream.len())));
    }
    whole::inflate(&stream, size, &parts, threads).map_err(bad)
}

/// The stored bytes of member `i`, `e` of the directory, read through `zip` (the archive
/// at `origin`, which errors name), where the directory placed them.
fn stored_at<'a, R: Read + Seek>(
    zip: &'a mut ZipArchive<R>,
    i: usize,
    e: &directory::Entry,
    origin: Option<&Path>,
) -> Result<io::Take<zip::read::ZipFile<'a, R>>> {
    let file = zip.by_index_raw(i).map_err(|err| zip_err(Some(&e.member), err));
    let file = located(origin, &e.member, file)?;
    if file.data_start() != Some(e.data_start) {
        let e = Error::npz(Some(&e.member), "the zip reader finds the member's data elsewhere");
        return located(origin, "", Err(e));
    }
    Ok(file.take(e.compressed_size))
}

/// The bytes of member `e` as the archive stores them, from `source`, a handle on it.
fn member_data<S: Read + Seek>(e: &directory::Entry, mut source: S) -> Result<io::Take<S>> {
    source.seek(SeekFrom::Start(e.data_start))?;
    Ok(source.take(e.compressed_size))
}

/// Reads a member's bytes (`size` of them, as it claims; `compressed` as stored) to its end.
fn read_all<R: Read + Seek>(mut file: MemberReader<'_, R>, size: u64, compressed: u64) -> Result<Vec<u8>> {
    // A stored member's bytes are in the file; a compressed one's claim is only trusted
    // as far as its data actually decompresses.
    // Growth is exact and capped at the declared size (never a doubling past it), and
    // fallible; the reader errors if the data decompresses past or short of that size.
    let size = usize::try_from(size).map_err(|_| Error::npz(None, "member larger than the address space"))?;
    let first = RAW_PREALLOC.min(compressed.saturating_mul(2).saturating_add(1 << 20)).max(compressed);
    let first = usize::try_from(first).unwrap_or(usize::MAX);
    let mut out: Vec<u8> = Vec::new();
    while out.len() < size {
        let want = (size - out.len()).min(out.len().max(first));
        out.try_reserve_exact(want).map_err(|_| crate::buffer::out_of_memory(want, 1))?;
        let start = out.len();
        out.resize(start + want, 0);
        let got = crate::stream::read_full(&mut file, &mut out[start..])?;
        out.truncate(start + got);
        if got < want {
            break;
        }
    }
    io::copy(&mut file, &mut io::sink())?;
    Ok(out)
}

/// `result`, its error naming the archive's path `origin` (if known) and `member` (if not
/// empty and not named already).
fn located<V>(origin: Option<&Path>, member: &str, result: Result<V>) -> Result<V> {
    result.map_err(|e| e.locate(origin, Access::Read, Some(member)))
}

/// How a member's `.npy` stream becomes a value, for a stream of any type (a member's
/// bytes inflated whole, decompressing, piped), which a closure cannot be generic over.
trait Decode {
    type Value;
    fn decode<S: Read>(&self, reader: NpyReader<S>) -> Result<Self::Value>;
}

/// A member as any `V` that reads a `.npy` file.
struct As<V>(PhantomData<fn() -> V>);

impl<V: ReadNpy> Decode for As<V> {
    type Value = V;
    fn decode<S: Read>(&self, reader: NpyReader<S>) -> Result<V> {
        V::from_npy_reader(reader)
    }
}

/// A 1-D object array member, `name`, as `Vec<T>` ([`Reader::read_object_vec`]).
struct ObjectVec<'a, T> {
    name: &'a str,
    of: PhantomData<fn() -> T>,
}

impl<T: FromObject> Decode for ObjectVec<'_, T> {
    type Value = Vec<T>;
    fn decode<S: Read>(&self, reader: NpyReader<S>) -> Result<Vec<T>> {
        let shape = &reader.header().shape;
        if shape.len() != 1 {
            let name = self.name;
            let reason =
                format!("array '{name}' has shape {}; use read::<Array<Object>> for N-d arrays", shape_repr(shape));
            return Err(ErrorKind::WrongShape { reason }.into());
        }
        reader.read_object_vec::<T>()
    }
}

/// A member being read ([`Reader::raw`], and under [`Reader::npy`]): its bytes as the zip
/// stores them, decompressed by npy-core's codec, held to the member's size.
///
/// Data that ends before the member's size or runs past it, corrupt compressed data, or
/// a CRC-32 that does not match once the member is read to its end, is an `io::Error` of
/// kind `InvalidData` carrying an [`ErrorKind::Npz`] that names the archive (when opened
/// by path) and the member: `npy_core::Error::from` gives it back.
pub struct MemberReader<'a, R: Read + Seek>(OwnedMemberReader<zip::read::ZipFile<'a, R>>);

impl<R: Read + Seek> std::fmt::Debug for MemberReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberReader").field("member", &self.0.member).field("remaining", &self.0.remaining).finish()
    }
}

impl<R: Read + Seek> MemberReader<'_, R> {
    /// The member's name in the zip.
    fn member(&self) -> &str {
        &self.0.member
    }
}

impl<R: Read + Seek> Read for MemberReader<'_, R> {
    /// Reads decompressed bytes; errors as [`MemberReader`] says.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

/// A member's bytes as stored in the archive: as they are, or decompressed, here or on a
/// second thread (`piped`), or decompressed whole before they are read.
enum MemberData<S: Read> {
    Stored(io::Take<S>),
    Decoded(CodecReader<io::Take<S>>),
    Piped(piped::Piped),
    Whole(io::Cursor<Vec<u8>>),
}

impl<S: Read> MemberData<S> {
    /// Member `e`'s stored bytes `data`, as they are or decompressing as its method says.
    fn of(e: &directory::Entry, data: io::Take<S>) -> Result<Self> {
        Ok(if e.method == Method::Stored {
            MemberData::Stored(data)
        } else {
            MemberData::Decoded(CodecReader::new(e.method, data)?)
        })
    }

    /// As [`MemberData::of`], for a member read whole: a deflated one of at most
    /// `whole::WHOLE_MAX` bytes (and `whole::WHOLE_RATIO_MAX` times its compressed bytes,
    /// or any of at most `whole::WHOLE_ANY_MAX`) is decompressed whole first (`inflate`),
    /// its parts on up to `threads` threads.
    fn whole(e: &directory::Entry, data: io::Take<S>, threads: usize) -> Result<Self> {
        #[cfg(not(any(target_family = "wasm", miri)))]
        if inflates_whole(e) {
            return inflate(e, data, threads).map(|bytes| MemberData::Whole(io::Cursor::new(bytes)));
        }
        let _ = threads;
        Self::of(e, data)
    }
}

/// A member being read from a handle of its own ([`Reader::npy_from`]): its bytes, held to
/// the member's size, its CRC-32 checked when it is read to its end.
///
/// Data that ends before the member's size or runs past it, corrupt compressed data, or
/// a CRC-32 that does not match is an `io::Error` of kind `InvalidData` carrying an
/// [`ErrorKind::Npz`] that names the archive (when opened by path) and the member, as for
/// [`MemberReader`].
pub struct OwnedMemberReader<S: Read> {
    data: MemberData<S>,
    member: String,
    /// The member's codec, which errors about its data name.
    codec: &'static str,
    /// The archive's path, if opened by path, which errors name.
    origin: Option<PathBuf>,
    /// The member's size, and the bytes of it not read yet.
    size: u64,
    remaining: u64,
    /// The CRC-32 of the bytes read so far, and the one the directory gives.
    crc: crc32fast::Hasher,
    want_crc: u32,
}

impl<S: Read> std::fmt::Debug for OwnedMemberReader<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedMemberReader").field("member", &self.member).field("remaining", &self.remaining).finish()
    }
}

impl<S: Read> OwnedMemberReader<S> {
    fn error(&self, reason: String, source: Option<io::Error>) -> io::Error {
        let e = match source {
            Some(source) => Error::npz_from(Some(&self.member), reason, source),
            None => Error::npz(Some(&self.member), reason),
        };
        io::Error::new(io::ErrorKind::InvalidData, e.locate(self.origin.as_deref(), Access::Read, None))
    }
}

impl<S: Read> Read for OwnedMemberReader<S> {
    /// Reads the member's bytes (decompressed). Errors as [`OwnedMemberReader`] says; errors of
    /// the source's own I/O as they are.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // Never more than the member has left (then one byte, to find its end).
        let want = buf.len().min(usize::try_from(self.remaining).unwrap_or(usize::MAX).max(1));
        let done = self.size - self.remaining;
        let (got, decompressed) = match &mut self.data {
            MemberData::Stored(data) => (data.read(&mut buf[..want]), false),
            MemberData::Decoded(data) => (data.read(&mut buf[..want]), true),
            MemberData::Piped(data) => (data.read(&mut buf[..want]), true),
            MemberData::Whole(data) => (data.read(&mut buf[..want]), false),
        };
        let n = match got {
            Ok(n) => n,
            Err(e) if decompressed && is_data_error(&e) => {
                let reason =
                    format!("the {} data is corrupt after {done} of the member's {} bytes", self.codec, self.size);
                return Err(self.error(reason, Some(e)));
            }
            Err(e) => return Err(e),
        };
        if n as u64 > self.remaining {
            return Err(self.error(format!("the data inflates past the member's size of {} bytes", self.size), None));
        }
        if n == 0 && want > 0 && self.remaining > 0 {
            return Err(self.error(format!("the data ends after {done} of the member's {} bytes", self.size), None));
        }
        self.crc.update(&buf[..n]);
        self.remaining -= n as u64;
        if n == 0 && want > 0 && self.crc.clone().finalize() != self.want_crc {
            return Err(self.error("bad crc-32: the member's data is corrupt".to_string(), None));
        }
        Ok(n)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::io::{Cursor, Write};
    use std::ops::Range;

    use super::*;
    use crate::npz::{local_header_ranges_with, Compression, Writer};

    /// An archive of two members, `a` stored and `b` as given (deflate is slow under Miri,
    /// and its drop there is UB in the dependency, zlib-rs#491: stored there).
    fn archive() -> Vec<u8> {
        let b = if cfg!(miri) { Compression::Stored } else { Compression::deflated() };
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add("a", &(0..100u32).collect::<Vec<_>>()).unwrap();
        w.add_with("b", &(0..100u64).map(|i| i * i).collect::<Vec<_>>(), b).unwrap();
        w.finish().unwrap().into_inner()
    }

    /// An archive's bytes where only `ranges` are known: a read outside them fails.
    #[derive(Debug)]
    struct Known<'a> {
        bytes: &'a [u8],
        ranges: Vec<Range<u64>>,
        pos: u64,
    }

    impl Read for Known<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.pos >= self.bytes.len() as u64 || buf.is_empty() {
                return Ok(0);
            }
            let Some(r) = self.ranges.iter().find(|r| r.contains(&self.pos)) else {
                return Err(io::Error::other(format!("byte {} was not fetched", self.pos)));
            };
            let n = buf.len().min((r.end - self.pos) as usize);
            buf[..n].copy_from_slice(&self.bytes[self.pos as usize..self.pos as usize + n]);
            self.pos += n as u64;
            Ok(n)
        }
    }

    impl Seek for Known<'_> {
        fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
            self.pos = match to {
                SeekFrom::Start(p) => p,
                SeekFrom::End(d) => (self.bytes.len() as u64).saturating_add_signed(d),
                SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
            };
            Ok(self.pos)
        }
    }

    #[test]
    fn the_end_and_the_local_header_ranges_are_all_an_opening_reads() {
        // Small members side by side, a large one between them, each method.
        let mut w = Writer::new(Cursor::new(Vec::new()));
        w.add("small", &[1u8, 2, 3]).unwrap();
        w.add_with("tiny", &[4u16], Compression::deflated()).unwrap();
        w.add("large", &vec![0.25f64; 50_000]).unwrap();
        w.add_with("after", &[5u32; 9], Compression::zstd()).unwrap();
        w.add("last", &[6i8]).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let len = bytes.len() as u64;
        let tail = len.saturating_sub((64 << 10) + 22)..len;
        let options = ReaderOptions::new();
        // The end alone tells the ranges; large's 400 KB keeps them apart.
        let mut end = Known { bytes: &bytes, ranges: vec![tail.clone()], pos: 0 };
        let ranges = local_header_ranges_with(&mut end, &options).unwrap();
        assert_eq!(ranges.len(), 2, "{ranges:?}");
        let mut known = Known { bytes: &bytes, ranges: [vec![tail.clone()], ranges].concat(), pos: 0 };
        let r = Reader::from_reader_with(&mut known, &options).unwrap();
        assert_eq!(r.names(), ["small", "tiny", "large", "after", "last"]);
        // Without them, the opening needs bytes it was not given.
        let mut bare = Known { bytes: &bytes, ranges: vec![tail], pos: 0 };
        let e = Reader::from_reader_with(&mut bare, &options).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("was not fetched"), "{e}");
    }

    #[test]
    fn members_read_side_by_side_from_handles_of_their_own() {
        let bytes = archive();
        let r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        let mut a = r.npy_from("a", Cursor::new(&bytes)).unwrap();
        let mut b = r.npy_from("b.npy", Cursor::new(&bytes)).unwrap();
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for _ in 0..10 {
            a.read_raw(10, &mut xs).unwrap();
            b.read_raw(10, &mut ys).unwrap();
        }
        let xs: Vec<u32> = xs.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        let ys: Vec<u64> = ys.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(xs, (0..100).collect::<Vec<_>>());
        assert_eq!(ys[99], 99 * 99);
        let e = r.npy_from("c", Cursor::new(&bytes)).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Npz { .. }), "{e}");
    }

    #[test]
    fn a_corrupt_member_read_from_its_own_handle_is_an_npz_error() {
        let bytes = archive();
        let r = Reader::from_reader(Cursor::new(&bytes)).unwrap();
        for name in ["a", "b"] {
            let i = r.index(name).unwrap();
            let e = &r.entries[i];
            let mut bad = bytes.clone();
            bad[(e.data_start + e.compressed_size - 2) as usize] ^= 0x21;
            let read = |source: &[u8]| -> Result<()> {
                let mut m = r.npy_from(name, Cursor::new(source))?;
                m.read_raw(100, &mut Vec::new())?;
                io::copy(&mut m.into_inner(), &mut io::sink())?;
                Ok(())
            };
            read(&bytes).unwrap();
            let err = read(&bad).unwrap_err();
            assert!(matches!(err.kind(), ErrorKind::Npz { .. }), "{name}: {err}");
            assert_eq!(err.member(), Some(format!("{name}.npy").as_str()), "{err}");
            // a source that ends early
            let err = read(&bytes[..(e.data_start + e.compressed_size / 2) as usize]).unwrap_err();
            assert!(matches!(err.kind(), ErrorKind::Npz { .. }), "{name}: {err}");
            assert_eq!(err.member(), Some(format!("{name}.npy").as_str()), "{err}");
        }
    }

    #[test]
    fn file_handles_read_and_seek_at_their_own_positions() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"0123456789").unwrap();
        let (mut a, mut b) = (FileAt { file: &file, pos: 0 }, FileAt { file: &file, pos: 0 });
        let mut buf = [0; 3];
        assert_eq!(b.seek(SeekFrom::End(-4)).unwrap(), 6);
        a.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"012");
        b.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"678");
        assert_eq!(a.seek(SeekFrom::Current(2)).unwrap(), 5);
        a.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"567");
        assert_eq!(b.read(&mut buf).unwrap(), 1);
        assert_eq!(b.read(&mut buf).unwrap(), 0);
        assert!(a.seek(SeekFrom::Current(-9)).is_err());
    }

    /// The local header and central directory entry of member `i` get CRC-32 `crc`.
    pub(super) fn set_crc(bytes: &mut [u8], reader: &Reader<impl Read + Seek>, i: usize, crc: u32) {
        let e = &reader.entries[i];
        let local = e.header_start as usize + 14;
        bytes[local..local + 4].copy_from_slice(&crc.to_le_bytes());
        let central = (0..bytes.len() - 46)
            .find(|&at| bytes[at..].starts_with(b"PK\x01\x02") && bytes[at + 46..].starts_with(e.member.as_bytes()))
            .unwrap();
        bytes[central + 16..central + 20].copy_from_slice(&crc.to_le_bytes());
    }
}
