//! `.npz` archives ↔ one Arrow table: what `np.savez(path, **columns)` users have.
//!
//! An archive whose members share a length reads as one table ([`NpzBatchReader`]), one
//! column per member, in the archive's order, named as `np.load(path).files` names them
//! (`x.npy` → `x`). Each member is mapped as [`crate::BatchReader`] maps a `.npy` file, rows
//! along its first axis: a member of scalars is that column, an N-d member a column of
//! `FixedSizeList` tensors, a 1-D (or 0-d) record member one `Struct` column of its fields;
//! a 0-d member is one row. The column's field metadata keeps the member's header
//! ([`DESCR_KEY`], [`FORTRAN_ORDER_KEY`], [`SHAPE_KEY`], [`VERSION_KEY`]) and how it was
//! stored ([`COMPRESSION_KEY`]), so that [`NpzBatchWriter`] gives each member back byte for
//! byte.
//!
//! With [`ConvertOptions::residue`], a member whose dtype has bytes no column may carry
//! (padding, `b1` bytes, `U` text that is not valid) gets a sibling column right after its
//! own, named [`RESIDUE_PREFIX`] + the member's name (`numpy.residue.x`) and marked with
//! [`RESIDUE_KEY`], as the [`RESIDUE`] column of a `.npy` file is.
//!
//! Both ways stream: members are read side by side, each from its own position in the one
//! open archive (deflated ones inflated as they go, every member's CRC-32 checked at its
//! end); written, each column goes through a [`BatchWriter`] into a temporary file of its
//! own (the zip format needs a member's bytes in one piece), and `finish` copies them into
//! the archive. Memory: one batch and each member's buffers (16 KiB, and a deflated
//! member's inflate window of 32 KiB), whatever the archive's size (Fortran-order N-d
//! members are held whole, as [`crate::BatchReader`] holds them). Files: the reader opens
//! the archive once for all members; the writer keeps one temporary file open per member
//! until `finish` (an archive of more columns than the process may open files fails with
//! an I/O error).
//!
//! # Examples
//! ```
//! use arrow_array::{cast::AsArray, types::Float64Type};
//! use npy_core::npz::{Compression, DeflateOption, Method, Reader, Writer};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("table.npz");
//! let mut w = Writer::create(&path)?;
//! w.add("x", &[1.5f64, 2.5, 3.5])?;
//! w.add_with("n", &[7i32, 8, 9], Compression::deflated())?;
//! w.finish()?;
//!
//! let reader = npy_arrow::NpzBatchReader::from_path(&path)?;
//! let schema = reader.schema();
//! assert_eq!(schema.field(1).name(), "n");
//! let batches = reader.collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(batches[0].column(0).as_primitive::<Float64Type>().values(), &[1.5, 2.5, 3.5]);
//!
//! // Back to an archive: the same members, byte for byte.
//! let copy = dir.path().join("copy.npz");
//! let mut w = npy_arrow::NpzBatchWriter::create(&copy, schema)?;
//! for b in &batches {
//!     w.write(b)?;
//! }
//! w.finish()?;
//! let (mut a, mut b) = (Reader::from_path(&path)?, Reader::from_path(&copy)?);
//! assert_eq!(a.read_raw("n")?, b.read_raw("n")?);
//! assert_eq!(b.members()[1].compression, Some(Method::Deflated(DeflateOption::Normal)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef};
use npy_core::dtype::DType;
use npy_core::npz::{self, Compression, Method, OwnedMemberReader, ReaderOptions};
use npy_core::{Error, ErrorKind, Result};

use crate::error::{arrow_error, bad_data, usage};
use crate::layout::Layout;
use crate::options::ConvertOptions;
use crate::read::BatchReader;
use crate::schema::{DESCR_KEY, FORTRAN_ORDER_KEY, RESIDUE, RESIDUE_KEY, SHAPE_KEY, VALUES, VERSION_KEY};
use crate::write::BatchWriter;

/// Field metadata key: how the archive stored the member a column came from, `stored`,
/// `deflated` or `zstd` ([`NpzBatchWriter`] stores it so again unless told otherwise).
pub const COMPRESSION_KEY: &str = "numpy.npz.compression";
/// The start of the name of a member's residue column: `numpy.residue.<member>`.
pub const RESIDUE_PREFIX: &str = "numpy.residue.";

/// The keys of a member's header in its column's field metadata.
const HEADER_KEYS: [&str; 4] = [DESCR_KEY, FORTRAN_ORDER_KEY, SHAPE_KEY, VERSION_KEY];

/// Buffer of each member's reader and spool (large reads and writes bypass it).
const MEMBER_BUFFER: usize = 16 << 10;

/// Deflated members up to this size are compressed on the archive writer's worker threads
/// (staged in memory); larger ones stream in on the caller's thread.
const PARALLEL_LIMIT: u64 = 16 << 20;

/// The archive, read at a position of this reader's own: every member reads the one open
/// file, each where it stands.
struct Shared {
    file: Arc<File>,
    pos: u64,
}

impl Read for Shared {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut file = &*self.file;
        file.seek(SeekFrom::Start(self.pos))?;
        let n = file.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Shared {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let (base, delta) = match to {
            SeekFrom::Start(p) => (p, 0),
            SeekFrom::Current(d) => (self.pos, d),
            SeekFrom::End(d) => (self.file.metadata()?.len(), d),
        };
        self.pos = base
            .checked_add_signed(delta)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek to a negative or overflowing position"))?;
        Ok(self.pos)
    }
}

type MemberStream = OwnedMemberReader<BufReader<Shared>>;

/// One member being read: its batches, and how they become the table's columns.
struct Member {
    /// The member's name in the zip (`x.npy`), which errors name.
    member: String,
    reader: BatchReader<MemberStream>,
    columns: MemberColumns,
}

/// How one member of an archive becomes columns of the archive's table (see the [module
/// docs](self)): a record member is one `Struct` column, any other member one column, named
/// as `np.load(..).files` names the member, its header and compression in the field's
/// metadata; with [`ConvertOptions::residue`], the member's residue column follows it.
/// [`NpzBatchReader`] reads local archives with it; readers of archives elsewhere (object
/// storage) use it to give the same table.
///
/// # Examples
/// ```
/// use arrow_schema::DataType;
/// use npy_core::header::Header;
///
/// let header = Header::new("[('x', '<f8'), ('n', '<i2')]".parse()?, vec![3]);
/// let layout = npy_arrow::Layout::new(&header, None)?;
/// let member = npy_arrow::npz::MemberColumns::new("shots", &layout, None);
/// let [field] = member.fields() else { panic!() };
/// assert_eq!(field.name(), "shots");
/// assert!(matches!(field.data_type(), DataType::Struct(f) if f.len() == 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct MemberColumns {
    /// Of a record member, the fields its columns are grouped under (one `Struct`).
    record: Option<Fields>,
    /// Whether the member's batches end with a residue column.
    residue: bool,
    fields: Vec<Field>,
}

impl MemberColumns {
    /// The columns of member `name` (as `np.load(..).files` names it) whose batches
    /// `layout` makes, stored with `compression` (`None`: unknown, said as stored).
    pub fn new(name: &str, layout: &Layout, compression: Option<Method>) -> MemberColumns {
        let schema = layout.schema();
        let residue = layout.residue.is_some();
        let columns = &schema.fields()[..schema.fields().len() - usize::from(residue)];
        let mut meta: HashMap<String, String> = schema.metadata().clone();
        let compression = match compression {
            Some(Method::Deflated(_)) => "deflated",
            Some(Method::Zstd) => "zstd",
            _ => "stored",
        };
        meta.insert(COMPRESSION_KEY.to_string(), compression.to_string());
        let record = matches!(layout.header.dtype, DType::Record(_)) && !layout.tensor;
        let mut fields = Vec::with_capacity(2);
        fields.push(if record {
            Field::new(name, DataType::Struct(columns.into()), true).with_metadata(meta)
        } else {
            let [only] = columns else { unreachable!("a member of scalars or tensors is one column") };
            meta.extend(only.metadata().clone());
            Field::new(name, only.data_type().clone(), only.is_nullable()).with_metadata(meta)
        });
        if let Some(r) = schema.fields().last().filter(|_| residue) {
            let meta = HashMap::from([(RESIDUE_KEY.to_string(), "true".to_string())]);
            fields
                .push(Field::new(format!("{RESIDUE_PREFIX}{name}"), r.data_type().clone(), false).with_metadata(meta));
        }
        MemberColumns { record: record.then(|| columns.into()), residue, fields }
    }

    /// The table's fields for the member: its column, and its residue column when kept.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The table's columns of a batch of the member (as its layout makes them).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for a batch of another layout.
    pub fn columns(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        let rows = batch.num_rows();
        let (data, residue) = batch.columns().split_at(batch.num_columns().saturating_sub(usize::from(self.residue)));
        let mut out = Vec::with_capacity(self.fields.len());
        match &self.record {
            Some(fields) => {
                let s =
                    StructArray::try_new_with_length(fields.clone(), data.to_vec(), None, rows).map_err(arrow_error)?;
                out.push(Arc::new(s) as ArrayRef);
            }
            None => {
                let [only] = data else { return Err(usage(format!("{} columns for a member of one", data.len()))) };
                out.push(only.clone());
            }
        }
        out.extend(residue.iter().cloned());
        Ok(out)
    }
}

/// A [`RecordBatchReader`] over an `.npz` archive whose members share a length: one column
/// per member (see the [module docs](self)), batches of a chosen number of rows, the
/// members read side by side.
///
/// # Examples
/// ```
/// use npy_core::npz::Writer;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.npz");
/// let mut w = Writer::create(&path)?;
/// w.add("t", &[0.0f32, 0.5, 1.0, 1.5, 2.0])?;
/// w.add("v", &[1u8, 2, 3, 4, 5])?;
/// w.add("other", &[1u8, 2])?;
/// w.finish()?;
///
/// // Members of other lengths are refused, naming them...
/// let e = npy_arrow::NpzBatchReader::from_path(&path).unwrap_err();
/// assert!(e.to_string().contains("'other.npy': 2 rows, where member 't.npy' has 5"), "{e}");
/// // ...and read alone, or with their peers.
/// let mut options = npy_arrow::npz::NpzTableOptions::new();
/// options.members(&["t", "v"]).convert(npy_arrow::ConvertOptions::new().batch_rows(2));
/// let reader = npy_arrow::NpzBatchReader::from_path_with(&path, &options)?;
/// let rows: Vec<usize> = reader.map(|b| b.map(|b| b.num_rows())).collect::<Result<_, _>>()?;
/// assert_eq!(rows, [2, 2, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct NpzBatchReader {
    path: PathBuf,
    members: Vec<Member>,
    schema: SchemaRef,
    rows: usize,
    next: usize,
}

impl std::fmt::Debug for NpzBatchReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzBatchReader")
            .field("path", &self.path)
            .field("members", &self.members.iter().map(|m| &m.member).collect::<Vec<_>>())
            .field("rows", &self.rows)
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

/// Settings of an [`NpzBatchReader`]: which members make the table, how the archive is
/// read, how the members' data becomes batches. Defaults: every member, in archive order;
/// npy-core's default [`ReaderOptions`]; the default [`ConvertOptions`] (rows per batch:
/// [`ConvertOptions::batch_rows`], else as many as fit in
/// [`DEFAULT_BATCH_BYTES`](crate::read::DEFAULT_BATCH_BYTES) of all members' data, at most
/// [`DEFAULT_BATCH_ROWS`](crate::read::DEFAULT_BATCH_ROWS)).
#[derive(Debug, Clone, Default)]
pub struct NpzTableOptions {
    members: Option<Vec<String>>,
    archive: ReaderOptions,
    convert: ConvertOptions,
}

impl NpzTableOptions {
    /// The defaults.
    pub fn new() -> Self {
        NpzTableOptions::default()
    }

    /// The members that make the table, in that order: as `np.load(path).files` names
    /// them (`x`), or their full names in the zip (`x.npy`). Default: every member, in
    /// archive order.
    pub fn members(&mut self, names: &[&str]) -> &mut Self {
        self.members = Some(names.iter().map(|n| n.to_string()).collect());
        self
    }

    /// The archive's limits, and the options its members' headers are read with.
    /// Default: [`ReaderOptions::new`].
    pub fn archive(&mut self, options: &ReaderOptions) -> &mut Self {
        self.archive = options.clone();
        self
    }

    /// How the members' data becomes batches. Default: [`ConvertOptions::new`].
    pub fn convert(&mut self, options: &ConvertOptions) -> &mut Self {
        self.convert = options.clone();
        self
    }
}

impl NpzBatchReader {
    /// Opens every member of the archive at `path` as one table, with the default
    /// [`NpzTableOptions`]. Errors name the path (and the member).
    ///
    /// # Errors
    /// As [`NpzBatchReader::from_path_with`].
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        NpzBatchReader::from_path_with(path, &NpzTableOptions::new())
    }

    /// Opens the archive at `path` as one table, its members, limits and conversion as
    /// `options` say. Errors name the path (and the member).
    ///
    /// # Errors
    /// As [`npz::Reader::from_path`] and [`npz::Reader::npy_from`] (an unknown name, an archive
    /// or member header that fails a check); [`ErrorKind::UnsupportedDtype`] for object
    /// members; [`ErrorKind::Npz`] for members of different lengths (read them one at a
    /// time) and [`ErrorKind::Usage`] for a name given twice.
    pub fn from_path_with(path: impl AsRef<Path>, options: &NpzTableOptions) -> Result<Self> {
        let path = path.as_ref();
        NpzBatchReader::open_inner(path, options).map_err(|e| e.reading(path))
    }

    fn open_inner(path: &Path, table: &NpzTableOptions) -> Result<Self> {
        let (archive, options) = (&table.archive, &table.convert);
        let names = table.members.as_ref().map(|n| n.iter().map(String::as_str).collect::<Vec<&str>>());
        let names = names.as_deref();
        let index = npy_core::npz::Reader::from_path_with(path, archive)?;
        let file = Arc::new(npy_core::open_file(path)?);
        let infos = index.members();
        let names: Vec<&str> = match names {
            Some(n) => n.to_vec(),
            None => index.names().iter().map(String::as_str).collect(),
        };
        // Headers first: the batch size is the same for all members, from all their rows.
        let mut opened = Vec::with_capacity(names.len());
        let mut seen = HashSet::new();
        for name in names {
            let info = npz::MemberInfo::find(infos, name).ok_or_else(|| index_error(&index, name))?;
            if !seen.insert(info.member.as_str()) {
                return Err(usage(format!("member '{}' is asked for twice", info.member)));
            }
            let source = BufReader::with_capacity(MEMBER_BUFFER, Shared { file: file.clone(), pos: 0 });
            let npy = index.npy_from(&info.member, source)?;
            let layout =
                Layout::new_with(npy.header(), Some(npy.version()), options).map_err(|e| e.in_member(&info.member))?;
            opened.push((info, npy, layout));
        }
        if let Some((first, _, l)) = opened.first() {
            for (info, _, layout) in &opened[1..] {
                if layout.rows() != l.rows() {
                    let reason = format!(
                        "{} rows, where member '{}' has {}: an archive reads as one table only when its \
                         members share a length (a 0-d member is one row); read the members one at a \
                         time (NpzTableOptions::members)",
                        layout.rows(),
                        first.member,
                        l.rows()
                    );
                    return Err(ErrorKind::Npz { member: Some(info.member.clone()), reason, source: None }.into());
                }
            }
        }
        let row_bytes = opened
            .iter()
            .map(|(_, _, l)| l.row_elements.saturating_mul(l.header.dtype.itemsize()))
            .fold(0usize, usize::saturating_add);
        let rows = options.batch_rows_for(row_bytes);
        let mut options = options.clone();
        options.batch_rows(rows);
        let rows = opened.first().map_or(0, |(_, _, l)| l.rows());
        let mut fields = Vec::with_capacity(opened.len());
        let mut members = Vec::with_capacity(opened.len());
        for (info, npy, layout) in opened {
            let reader = BatchReader::from_npy_reader_with(npy, &options).map_err(|e| e.in_member(&info.member))?;
            let columns = MemberColumns::new(&info.name, &layout, info.compression);
            fields.extend(columns.fields().iter().cloned());
            members.push(Member { member: info.member.clone(), reader, columns });
        }
        let schema = Arc::new(Schema::new(fields));
        Ok(NpzBatchReader { path: path.to_path_buf(), members, schema, rows, next: 0 })
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows not yet returned.
    pub fn remaining_rows(&self) -> usize {
        self.rows - self.next
    }

    /// The next batch, or `None` after the last, with npy's error type.
    ///
    /// # Errors
    /// As [`BatchReader::next_batch`] for each member, naming the archive and the member;
    /// [`ErrorKind::Npz`] for a member whose data is corrupt (a bad CRC-32, found when the
    /// member has been read to its end).
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.next >= self.rows {
            return Ok(None);
        }
        let path = &self.path;
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.schema.fields().len());
        let mut rows = 0;
        for m in &mut self.members {
            let located = |e: Error| e.in_member(&m.member).reading(path);
            let batch = m.reader.next_batch().map_err(located)?;
            let batch = batch.ok_or_else(|| located(bad_data("the member ended before its rows".into())))?;
            rows = batch.num_rows();
            columns.extend(m.columns.columns(&batch).map_err(located)?);
        }
        self.next += rows;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)
            .map(Some)
            .map_err(|e| arrow_error(e).reading(path))
    }
}

/// The error of an unknown member name, as the archive's reader words it.
fn index_error<R: Read + Seek>(index: &npz::Reader<R>, name: &str) -> Error {
    ErrorKind::Npz {
        member: Some(name.to_string()),
        reason: format!("no such array; the archive has {:?}", index.names()),
        source: None,
    }
    .into()
}

impl Iterator for NpzBatchReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_batch() {
            Ok(batch) => batch.map(Ok),
            Err(e) => {
                // A failed batch ends the stream.
                self.next = self.rows;
                Some(Err(ArrowError::ExternalError(Box::new(e))))
            }
        }
    }
}

impl RecordBatchReader for NpzBatchReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// One member being written: the column it comes from and the `.npy` it is spooled to.
struct Spool {
    /// The member's name in the zip (`x.npy`).
    member: String,
    /// The batch's column it holds, and its residue column, if any.
    column: usize,
    residue: Option<usize>,
    /// Whether the column is a `Struct` whose fields are the columns of a record member.
    record: bool,
    /// The names of the member's columns (`values`, or a record's fields).
    names: Vec<String>,
    writer: SpoolWriter,
    compression: Compression,
}

/// A member's `.npy` writer, or what it needs to start at the first batch.
enum SpoolWriter {
    Started(Box<BatchWriter<BufWriter<File>>>),
    /// A `Struct` column of one field named `values`, without a member's header: a schema
    /// of that one field would stand for an array of scalars, so the writer starts with the
    /// record's descr, made when the first batch gives the field's text width.
    OneValuesField {
        file: File,
        field: Field,
    },
}

impl SpoolWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if let SpoolWriter::OneValuesField { .. } = self {
            self.start(crate::write::text_width(batch.column(0).as_ref()))?;
        }
        match self {
            SpoolWriter::Started(w) => w.write(batch),
            SpoolWriter::OneValuesField { .. } => unreachable!("started above"),
        }
    }

    fn finish(mut self) -> Result<File> {
        if let SpoolWriter::OneValuesField { .. } = self {
            self.start(1)?;
        }
        let SpoolWriter::Started(w) = self else { unreachable!("started above") };
        w.finish()?.into_inner().map_err(|e| Error::from(e.into_error()))
    }

    /// Starts the writer of a one-field record whose text is `width` wide.
    fn start(&mut self, width: usize) -> Result<()> {
        let SpoolWriter::OneValuesField { file, field } = self else { return Ok(()) };
        let dtype = crate::schema::natural_dtype(&Schema::new(vec![field.clone()]), &[width])?;
        let meta = HashMap::from([(DESCR_KEY.to_string(), dtype.descr())]);
        let schema = Arc::new(Schema::new_with_metadata(vec![field.clone()], meta));
        let file = file.try_clone()?;
        *self =
            SpoolWriter::Started(Box::new(BatchWriter::new(BufWriter::with_capacity(MEMBER_BUFFER, file), schema)?));
        Ok(())
    }
}

/// Takes record batches and writes an `.npz` archive, one member per column (see the
/// [module docs](self)), without holding them: each column is spooled to a temporary file
/// of its own in the target's directory, and [`NpzBatchWriter::finish`] assembles the
/// archive from them.
///
/// A column whose field metadata has a member's header (a schema from
/// [`NpzBatchReader`]) gives that member back byte for byte, compressed as the archive had
/// it ([`COMPRESSION_KEY`]); a column without (a schema made elsewhere, or the columns of
/// one `.npy` file from [`crate::BatchReader`]) becomes a member of its natural dtype
/// (see [`BatchWriter`]: a `Struct` column a 1-D record member, a `values`-like column a
/// 1-D array, a tensor column an N-d array), stored. A `.npy` file's [`RESIDUE`] column
/// has no member to go with and is left out; a [`RESIDUE_PREFIX`] column goes with its
/// member.
///
/// The archive is atomic: it replaces `path` only when `finish` succeeds. Dropped before,
/// or failing, it leaves no archive and no temporary file behind (the spools are unnamed
/// temporary files, gone once closed), and any old file untouched. Errors name the path
/// and the member.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Float32Array, RecordBatch, StringArray};
/// use npy_core::npz::Reader;
///
/// let batch = RecordBatch::try_from_iter([
///     ("x", Arc::new(Float32Array::from(vec![0.5, 1.5])) as _),
///     ("name", Arc::new(StringArray::from(vec!["a", "bcd"])) as _),
/// ])?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.npz");
/// let mut w = npy_arrow::NpzBatchWriter::create(&path, batch.schema())?;
/// w.write(&batch)?;
/// w.finish()?;
/// let mut r = Reader::from_path(&path)?;
/// assert_eq!(r.names(), ["x", "name"]);
/// assert_eq!(r.read::<Vec<f32>>("x")?, [0.5, 1.5]);
/// assert_eq!(r.read::<npy_core::DynArray>("name")?.dtype().descr(), "'<U3'");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct NpzBatchWriter {
    archive: npz::FileWriter,
    path: PathBuf,
    columns: usize,
    spools: Vec<Spool>,
    compression: Option<Compression>,
    rows: usize,
    /// Set when a batch failed: the members may differ in length since.
    failed: bool,
}

impl std::fmt::Debug for NpzBatchWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzBatchWriter")
            .field("path", &self.path)
            .field("members", &self.spools.iter().map(|s| &s.member).collect::<Vec<_>>())
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl NpzBatchWriter {
    /// Starts an archive at `path` for batches of `schema`.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the archive or a spool cannot be created (the directory does
    /// not exist or is not writable); [`ErrorKind::Usage`] for an empty or repeated column
    /// name, a residue column without its member or its member's header, and metadata
    /// that does not parse; as [`BatchWriter::new`] for each member.
    pub fn create(path: impl AsRef<Path>, schema: SchemaRef) -> Result<Self> {
        let path = path.as_ref();
        NpzBatchWriter::create_inner(path, &schema).map_err(|e| e.writing(path))
    }

    fn create_inner(path: &Path, schema: &Schema) -> Result<Self> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut archive = npz::Writer::create(path)?;
        archive.parallel_limit(PARALLEL_LIMIT);
        let is_residue = |f: &Field| f.metadata().contains_key(RESIDUE_KEY);
        let mut residues = HashMap::new();
        for (i, f) in schema.fields().iter().enumerate() {
            if let Some(member) = f.name().strip_prefix(RESIDUE_PREFIX).filter(|_| is_residue(f)) {
                residues.insert(member.to_string(), i);
            }
        }
        let mut spools: Vec<Spool> = Vec::new();
        let mut names = HashSet::new();
        for (column, field) in schema.fields().iter().enumerate() {
            if is_residue(field) && (field.name() == RESIDUE || field.name().starts_with(RESIDUE_PREFIX)) {
                continue;
            }
            let name = field.name();
            if name.is_empty() || !names.insert(name.as_str()) {
                return Err(usage(format!("column {column} is named {name:?}: a member needs a name of its own")));
            }
            let member = format!("{name}.npy");
            let residue = residues.remove(name.as_str()).map(|i| (i, schema.field(i)));
            let spool = spool(dir, field, column, residue).map_err(|e| e.in_member(&member))?;
            spools.push(Spool { member, ..spool });
        }
        if let Some(name) = residues.into_keys().next() {
            return Err(usage(format!("column '{RESIDUE_PREFIX}{name}' has no column '{name}' to go with")));
        }
        let columns = schema.fields().len();
        Ok(NpzBatchWriter {
            archive,
            path: path.to_path_buf(),
            columns,
            spools,
            compression: None,
            rows: 0,
            failed: false,
        })
    }

    /// Compresses every member so, whatever the columns' [`COMPRESSION_KEY`] says.
    /// Default: as that key says, [`Compression::Stored`] without it.
    pub fn compression(&mut self, compression: Compression) -> &mut Self {
        self.compression = Some(compression);
        self
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Sets the width of each column's text instead of taking the first batch's longest
    /// value, as [`BatchWriter::text_widths`] does (one width a column, from
    /// [`crate::write::text_widths`] over all the batches): a record column's text fields
    /// share it. Members whose header comes from their field's metadata keep it.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] after the first batch, or for
    /// another number of widths than the batches have columns; I/O errors writing a
    /// member's header. They name the path and the member.
    pub fn text_widths(&mut self, widths: &[usize]) -> Result<()> {
        let path = &self.path;
        if self.rows > 0 || self.failed {
            return Err(usage("text widths are set before the first batch".into()).writing(path));
        }
        if widths.len() != self.columns {
            let reason = format!("{} text widths for {} columns", widths.len(), self.columns);
            return Err(usage(reason).writing(path));
        }
        for s in &mut self.spools {
            let width = widths[s.column].max(1);
            let set = match &mut s.writer {
                SpoolWriter::Started(w) => w.text_widths(&vec![width; s.names.len()]),
                SpoolWriter::OneValuesField { .. } => s.writer.start(width),
            };
            set.map_err(|e| e.in_member(&s.member).writing(path))?;
        }
        Ok(())
    }

    /// Writes a batch's rows, each column to its member.
    ///
    /// # Errors
    /// As [`BatchWriter::write`], naming the path and the member; an invalid-data
    /// [`ErrorKind::Io`] for a batch of another number of columns and for null rows of a
    /// record column; [`ErrorKind::Usage`] after a batch failed (some members may have its
    /// rows, others not: the archive cannot be completed).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let path = &self.path;
        if self.failed {
            return Err(usage(FAILED.into()).writing(path));
        }
        if batch.num_columns() != self.columns {
            let reason = format!("a batch of {} columns for an archive of {}", batch.num_columns(), self.columns);
            return Err(bad_data(reason).writing(path));
        }
        let rows = batch.num_rows();
        for s in &mut self.spools {
            let one = member_batch(s, batch).and_then(|b| s.writer.write(&b));
            if let Err(e) = one {
                // The members before this one have the batch's rows (and this one may have
                // part of them, after an I/O error).
                self.failed = true;
                return Err(e.in_member(&s.member).writing(path));
            }
        }
        self.rows += rows;
        Ok(())
    }

    /// Ends every member and writes the archive, moving it into place (synced).
    ///
    /// # Errors
    /// As [`BatchWriter::finish`] for each member (fewer rows than its header's shape);
    /// I/O errors. The target is untouched then, and no temporary file is left.
    pub fn finish(self) -> Result<()> {
        let NpzBatchWriter { mut archive, path, spools, compression, failed, .. } = self;
        let assemble = || -> Result<()> {
            if failed {
                return Err(usage(FAILED.into()));
            }
            for s in spools {
                let member = s.member;
                let add = |archive: &mut npz::FileWriter| -> Result<()> {
                    let mut file = s.writer.finish()?;
                    let size = file.stream_position()?;
                    file.seek(SeekFrom::Start(0))?;
                    let source = BufReader::with_capacity(1 << 20, file);
                    archive.add_raw_from_with(&member, size, source, compression.unwrap_or(s.compression))
                };
                add(&mut archive).map_err(|e| e.in_member(&member))?;
            }
            archive.finish()
        };
        assemble().map_err(|e| e.writing(&path))
    }
}

/// Why a writer refuses to go on after a batch failed.
const FAILED: &str = "an earlier batch failed, leaving members of different lengths; the archive cannot be completed";

/// The spool of the member of `field` (column `column`, with residue column `residue`):
/// its `.npy` schema, writer and compression.
fn spool(dir: &Path, field: &Field, column: usize, residue: Option<(usize, &Field)>) -> Result<Spool> {
    let meta = field.metadata();
    let header: HashMap<String, String> =
        HEADER_KEYS.iter().filter_map(|&k| meta.get(k).map(|v| (k.to_string(), v.clone()))).collect();
    let mut own = meta.clone();
    own.retain(|k, _| !HEADER_KEYS.contains(&k.as_str()) && k != COMPRESSION_KEY);
    let compression = match meta.get(COMPRESSION_KEY).map(String::as_str) {
        None | Some("stored") => Compression::Stored,
        Some("deflated") => Compression::deflated(),
        Some("zstd") => Compression::zstd(),
        Some(other) => return Err(usage(format!("field metadata '{COMPRESSION_KEY}': cannot use {other:?}"))),
    };
    let (record, mut fields) = match field.data_type() {
        DataType::Struct(children) => (true, children.iter().map(|f| f.as_ref().clone()).collect::<Vec<_>>()),
        ty => (false, vec![Field::new(VALUES, ty.clone(), field.is_nullable()).with_metadata(own)]),
    };
    if let Some((_, r)) = residue {
        if !header.contains_key(DESCR_KEY) {
            let name = field.name();
            return Err(usage(format!(
                "column '{RESIDUE_PREFIX}{name}' goes with a member's header, which '{name}' lacks"
            )));
        }
        let meta = HashMap::from([(RESIDUE_KEY.to_string(), "true".to_string())]);
        fields.push(Field::new(RESIDUE, r.data_type().clone(), false).with_metadata(meta));
    }
    let names = fields.iter().map(|f| f.name().clone()).collect();
    let file = tempfile::tempfile_in(dir)?;
    let writer = match &fields[..] {
        [only] if record && only.name() == VALUES && !header.contains_key(DESCR_KEY) => {
            SpoolWriter::OneValuesField { file, field: only.clone() }
        }
        _ => {
            let schema = Arc::new(Schema::new_with_metadata(fields, header));
            SpoolWriter::Started(Box::new(BatchWriter::new(BufWriter::with_capacity(MEMBER_BUFFER, file), schema)?))
        }
    };
    Ok(Spool { member: String::new(), column, residue: residue.map(|(i, _)| i), record, names, writer, compression })
}

/// The batch of one member: its column (a record's fields, for a `Struct` column) and its
/// residue column, under the member's column names.
fn member_batch(s: &Spool, batch: &RecordBatch) -> Result<RecordBatch> {
    let column = batch.column(s.column);
    let mut arrays: Vec<ArrayRef> = if s.record {
        let Some(record) = column.as_struct_opt() else {
            return Err(bad_data(format!("column {} is {}, not the Struct of a record", s.column, column.data_type())));
        };
        if record.null_count() > 0 {
            let row = record.logical_nulls().and_then(|n| n.iter().position(|valid| !valid)).unwrap_or(0);
            return Err(bad_data(format!("row {row} of a record column is null, which a NumPy record cannot be")));
        }
        record.columns().to_vec()
    } else {
        vec![column.clone()]
    };
    arrays.extend(s.residue.map(|r| batch.column(r).clone()));
    if arrays.len() != s.names.len() {
        let reason = format!("a record column of {} fields for a member of {}", arrays.len(), s.names.len());
        return Err(bad_data(reason));
    }
    let fields: Vec<Field> =
        s.names.iter().zip(&arrays).map(|(n, a)| Field::new(n.clone(), a.data_type().clone(), true)).collect();
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), arrays, &options).map_err(arrow_error)
}
