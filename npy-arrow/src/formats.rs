//! Files of record batches (feature `formats`): `.npy`, one `.npz` member, Arrow IPC files
//! (`.arrow`, `.feather`) and Parquet (`.parquet`), opened as a [`RecordBatchReader`]
//! ([`FileBatchReader`]), written from batches atomically ([`Sink`]), and converted one into
//! another ([`convert`], [`convert_with`]), streaming in bounded memory.
//!
//! The format is chosen by the path's extension ([`Format::of`]). What a `.npy` becomes
//! (its schema, with the header in the metadata) is [`crate::schema`]'s mapping; IPC and
//! Parquet files keep that schema and its metadata (Parquet through the `ARROW:schema`
//! key arrow-rs embeds, which pyarrow reads too), so a `.npy` converted to either and back
//! is the original file, byte for byte (with [`ConvertOptions::residue`] when its padding
//! or `b1` bytes may hold anything).
//!
//! - `.npy`: [`BatchReader::from_path_with`] and [`BatchFileWriter`].
//! - `.npz`: the whole archive as one table, one column per member
//!   ([`NpzBatchReader`], [`NpzBatchWriter`]: members must share their first dim; each
//!   member's header in its field's metadata, so members come back byte for byte). With a
//!   member name ([`FileOptions::member`]): that member as a `.npy` file, streamed from a
//!   handle of its own (inflated as it goes); written, an archive of that one member
//!   (stored, as `np.savez`), spooled through a temporary file with no name beside it.
//! - `.arrow`, `.feather`: the Arrow IPC *file* format (not the stream format), batch by
//!   batch, as written.
//! - `.parquet`: batches of the options' row count; written with Snappy by default (as
//!   pyarrow), row groups of about [`DEFAULT_ROW_GROUP_BYTES`] of data, each encoded on a
//!   worker thread, up to one per CPU (at most 4) at once while the next is collected:
//!   memory stays bounded whatever the file's size or the rows' width (about
//!   `(1 + 2 × workers) ×` the row group size).
//!
//! # Examples
//! ```
//! use npy_arrow::formats::convert;
//! use npy_core::prelude::*;
//!
//! let dir = tempfile::tempdir()?;
//! let (npy, parquet, back) = (dir.path().join("a.npy"), dir.path().join("a.parquet"), dir.path().join("b.npy"));
//! vec![1.5f64, 2.5, 3.5].write_npy(&npy)?;
//! let done = convert(&npy, &parquet, &mut |_| {})?;
//! assert_eq!(done.rows, 3);
//! convert(&parquet, &back, &mut |_| {})?;
//! assert_eq!(std::fs::read(&back)?, std::fs::read(&npy)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Schema, SchemaRef};
use npy_core::atomic::AtomicFile;
use npy_core::{Error, ErrorKind, ReadOptions, Result};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::properties::WriterProperties;

use crate::error::{bad_data as invalid, from_arrow, from_parquet, usage};
use crate::guard;
use crate::npz::{NpzBatchReader, NpzBatchWriter, NpzTableOptions};
use crate::options::ConvertOptions;
use crate::parquet_write::ParquetWriter;
use crate::read::BatchReader;
use crate::schema::DESCR_KEY;
pub use crate::text_spool::{SpooledBatchReader, TextSpool};
use crate::write::{BatchFileWriter, BatchWriter};

/// Arrow data per Parquet row group by default: 64 MiB, however many rows that is. Row
/// groups are encoded on worker threads, several at once, so a write holds a few of them
/// (see [`Sink`]).
pub const DEFAULT_ROW_GROUP_BYTES: usize = 64 << 20;

/// The file formats, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// `.npy`: one NumPy array.
    Npy,
    /// `.npz`: a NumPy archive (one member of it: [`FileOptions::member`]).
    Npz,
    /// `.arrow`, `.feather`: an Arrow IPC file (Feather V2 is the same format).
    Ipc,
    /// `.parquet`: a Parquet file.
    Parquet,
}

/// Every extension known, with its format.
const EXTENSIONS: [(&str, Format); 5] = [
    ("npy", Format::Npy),
    ("npz", Format::Npz),
    ("arrow", Format::Ipc),
    ("feather", Format::Ipc),
    ("parquet", Format::Parquet),
];

impl Format {
    /// The format of a path, by its extension (case aside).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] naming the known extensions when the extension is none of
    /// them ([`FileBatchReader`] and [`Sink`] add the path, read or written).
    ///
    /// # Examples
    /// ```
    /// use npy_arrow::formats::Format;
    ///
    /// assert_eq!(Format::of("runs/a.Feather")?, Format::Ipc);
    /// assert_eq!(Format::of("a.parquet")?, Format::Parquet);
    /// assert!(Format::of("a.csv").unwrap_err().to_string().contains(".npy, .npz, .arrow, .feather, .parquet"));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn of(path: impl AsRef<Path>) -> Result<Format> {
        let path = path.as_ref();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        EXTENSIONS.iter().find(|(e, _)| *e == ext).map(|&(_, f)| f).ok_or_else(|| {
            let known: Vec<String> = EXTENSIONS.iter().map(|(e, _)| format!(".{e}")).collect();
            let what = if ext.is_empty() { "no extension".to_string() } else { format!("extension '.{ext}'") };
            Error::from(ErrorKind::Usage {
                reason: format!("unknown file format ({what}); the formats are {}", known.join(", ")),
            })
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Npy => "npy",
            Format::Npz => "npz",
            Format::Ipc => "Arrow IPC",
            Format::Parquet => "Parquet",
        })
    }
}

/// The compression of a Parquet file's pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ParquetCompression {
    /// Snappy (pyarrow's default, and ours).
    #[default]
    Snappy,
    /// Zstandard, at its default level.
    Zstd,
    /// LZ4 (the raw LZ4 that Parquet's `LZ4_RAW` names).
    Lz4,
    /// Gzip, at its default level.
    Gzip,
    /// None.
    None,
}

impl ParquetCompression {
    fn codec(self) -> parquet::basic::Compression {
        use parquet::basic::{Compression, GzipLevel, ZstdLevel};
        match self {
            ParquetCompression::Snappy => Compression::SNAPPY,
            ParquetCompression::Zstd => Compression::ZSTD(ZstdLevel::default()),
            ParquetCompression::Lz4 => Compression::LZ4_RAW,
            ParquetCompression::Gzip => Compression::GZIP(GzipLevel::default()),
            ParquetCompression::None => Compression::UNCOMPRESSED,
        }
    }
}

/// Settings of [`FileBatchReader::from_path_with`], [`Sink::create_with`] and [`convert_with`]. Defaults: those of
/// [`ConvertOptions`] and [`ReadOptions`], no member, Snappy, row groups of
/// [`DEFAULT_ROW_GROUP_BYTES`].
#[derive(Debug, Clone, Default)]
pub struct FileOptions {
    convert: ConvertOptions,
    read: ReadOptions,
    member: Option<String>,
    compression: ParquetCompression,
    row_group_bytes: Option<usize>,
}

impl FileOptions {
    /// The defaults.
    pub fn new() -> Self {
        FileOptions::default()
    }

    /// How `.npy` data becomes batches (rows per batch, Int64 days, the residue column);
    /// the rows per batch apply to Parquet input too.
    pub fn convert(&mut self, options: &ConvertOptions) -> &mut Self {
        self.convert = options.clone();
        self
    }

    /// How `.npy` files and members are read (the header size limit).
    pub fn read(&mut self, options: &ReadOptions) -> &mut Self {
        self.read = options.clone();
        self
    }

    /// The `.npz` member to read or write (`x` or `x.npy`), as a `.npy` file. Default: none
    /// (the whole archive, a column per member).
    pub fn member(&mut self, name: impl Into<String>) -> &mut Self {
        self.member = Some(name.into());
        self
    }

    /// The compression of Parquet output. Default: [`ParquetCompression::Snappy`].
    pub fn compression(&mut self, compression: ParquetCompression) -> &mut Self {
        self.compression = compression;
        self
    }

    /// The data per Parquet row group, in bytes (at least 1). Default:
    /// [`DEFAULT_ROW_GROUP_BYTES`].
    pub fn row_group_bytes(&mut self, bytes: usize) -> &mut Self {
        self.row_group_bytes = Some(bytes.max(1));
        self
    }
}

/// A file of any of the [formats](self) as record batches (see the module docs), with what
/// is known of its size up front, for progress: a [`RecordBatchReader`] and an `Iterator`
/// of batches, as [`BatchReader`] and [`NpzBatchReader`] (which it uses for `.npy` and
/// `.npz` files).
///
/// # Examples
/// ```
/// use npy_arrow::formats::{FileBatchReader, FileOptions};
/// use npy_core::npz::Writer;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.npz");
/// let mut w = Writer::create(&path)?;
/// w.add("x", &[1u16, 2, 3])?;
/// w.add("y", &[4u16, 5])?;
/// w.finish()?;
/// let reader = FileBatchReader::from_path_with(&path, FileOptions::new().member("y"))?;
/// assert_eq!(reader.rows(), Some(2));
/// let rows: usize = reader.map(|b| b.map(|b| b.num_rows())).sum::<Result<_, _>>()?;
/// assert_eq!(rows, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FileBatchReader {
    reader: Box<dyn RecordBatchReader + Send>,
    bytes: u64,
    rows: Option<u64>,
    batches: Option<u64>,
}

impl fmt::Debug for FileBatchReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileBatchReader")
            .field("schema", &self.reader.schema())
            .field("bytes", &self.bytes)
            .field("rows", &self.rows)
            .field("batches", &self.batches)
            .finish()
    }
}

impl FileBatchReader {
    /// Opens `path` as record batches, by its extension, with the default [`FileOptions`].
    /// Errors name the path (and the member).
    ///
    /// # Errors
    /// As [`FileBatchReader::from_path_with`].
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        FileBatchReader::from_path_with(path, &FileOptions::new())
    }

    /// Opens `path` as record batches, by its extension, with `options`. Errors name the
    /// path (and the member).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for an unknown extension and for [`FileOptions::member`] on a
    /// file that is not an `.npz`; [`ErrorKind::Npz`] for an archive whose members differ
    /// in length (read them one at a time); [`ErrorKind::UnsupportedDtype`] for object
    /// arrays; errors of opening and reading the file (an IPC or Parquet file that does not
    /// parse is an [`ErrorKind::Io`] of kind `InvalidData`). A corrupt IPC or Parquet file
    /// is refused before the readers allocate more than it can hold, and a panic inside
    /// them (opening the file or reading a batch) is such an error too, after which the
    /// reader ends ([`crate::guard`]).
    pub fn from_path_with(path: impl AsRef<Path>, options: &FileOptions) -> Result<Self> {
        let path = path.as_ref();
        let format = Format::of(path).map_err(|e| e.reading(path))?;
        let opened = match (format, &options.member) {
            (Format::Npz, Some(member)) => open_member(path, member, options),
            (Format::Npz, None) => open_archive(path, options),
            (Format::Npy, _) => open_npy(path, options),
            (Format::Ipc, _) => open_ipc(path),
            (Format::Parquet, _) => open_parquet(path, options),
        };
        opened.map_err(|e| e.reading(path))
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.reader.schema()
    }

    /// The input's size on disk, in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Rows in all, when the format says so up front (`.npy`, `.npz`, Parquet, and Arrow
    /// IPC files, whose batches' messages are read first).
    pub fn rows(&self) -> Option<u64> {
        self.rows
    }

    /// Batches in all, when the format says so up front (Arrow IPC files).
    pub fn batches(&self) -> Option<u64> {
        self.batches
    }
}

impl Iterator for FileBatchReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader.next()
    }
}

impl RecordBatchReader for FileBatchReader {
    fn schema(&self) -> SchemaRef {
        self.reader.schema()
    }
}

fn open_npy(path: &Path, options: &FileOptions) -> Result<FileBatchReader> {
    let reader = npy_core::NpyReader::from_path_with(path, &options.read)?;
    batches_of_npy(reader, path, options)
}

/// An `.npy` stream as a [`FileBatchReader`] of `path`'s size.
fn batches_of_npy<R: io::Read + Send + 'static>(
    reader: npy_core::NpyReader<R>,
    path: &Path,
    options: &FileOptions,
) -> Result<FileBatchReader> {
    let rows = reader.header().shape.first().copied().unwrap_or(1) as u64;
    // An object array of text (NumPy 2's StringDType files among them): one Utf8 column;
    // a ragged array: one List column.
    let reader: Box<dyn RecordBatchReader + Send> = if matches!(&reader.header().dtype, npy_core::dtype::DType::Scalar(s) if s.ty() == npy_core::dtype::ScalarType::Object)
    {
        crate::objects::object_batches_with(reader, &options.convert)?
    } else {
        Box::new(BatchReader::from_npy_reader_with(reader, &options.convert)?)
    };
    Ok(FileBatchReader { reader, bytes: file_len(path)?, rows: Some(rows), batches: None })
}

/// A whole archive as one table, a column per member ([`NpzBatchReader`]).
fn open_archive(path: &Path, options: &FileOptions) -> Result<FileBatchReader> {
    let mut table = NpzTableOptions::new();
    table.archive(&archive_options(options)).convert(&options.convert);
    let reader = NpzBatchReader::from_path_with(path, &table)?;
    let rows = reader.remaining_rows() as u64;
    Ok(FileBatchReader { reader: Box::new(reader), bytes: file_len(path)?, rows: Some(rows), batches: None })
}

fn npz_reader(path: &Path, options: &FileOptions) -> Result<npy_core::npz::Reader<BufReader<File>>> {
    npy_core::npz::Reader::from_path_with(path, &archive_options(options))
}

/// How archives are opened: members read with the options' [`ReadOptions`].
fn archive_options(options: &FileOptions) -> npy_core::npz::ReaderOptions {
    let mut o = npy_core::npz::ReaderOptions::new();
    o.read_options(&options.read);
    o
}

/// One member of an archive, streamed (inflated as it goes) from a handle of its own
/// ([`npy_core::npz::Reader::npy_from`]), so that the batches own their source.
fn open_member(path: &Path, member: &str, options: &FileOptions) -> Result<FileBatchReader> {
    let archive = npz_reader(path, options)?;
    let name = member.strip_suffix(".npy").unwrap_or(member);
    let source = BufReader::with_capacity(1 << 20, npy_core::open_file(path)?);
    let reader = archive.npy_from(name, source)?;
    let member = format!("{name}.npy");
    let mut input = batches_of_npy(reader, path, options).map_err(|e| e.in_member(&member))?;
    input.reader = Box::new(Located { inner: input.reader, member });
    Ok(input)
}

/// A file with no name (gone when closed, whatever ends the process), for a member on its
/// way in or out of an archive at `near`.
///
/// In `near`'s directory when it can be (so a large member does not fill a small `/tmp`,
/// or memory where `/tmp` is a tmpfs), else in the system's.
fn spool_file(near: &Path) -> Result<File> {
    let dir = match near.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    tempfile::tempfile_in(dir).or_else(|_| tempfile::tempfile()).map_err(|e| {
        let what = format!("cannot make a temporary file in {}: {e}", std::env::temp_dir().display());
        io::Error::new(e.kind(), what).into()
    })
}

/// A reader whose errors name an archive member.
struct Located {
    inner: Box<dyn RecordBatchReader + Send>,
    member: String,
}

impl Iterator for Located {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|r| {
            r.map_err(|e| ArrowError::ExternalError(Box::new(from_arrow(e, "reading").in_member(&self.member))))
        })
    }
}

impl RecordBatchReader for Located {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

fn open_ipc(path: &Path) -> Result<FileBatchReader> {
    let mut file = npy_core::open_file(path)?;
    let bytes = file.metadata()?.len();
    let rows = guard::check_ipc(&mut file, bytes)?;
    file.rewind()?;
    let source = BufReader::with_capacity(1 << 20, file);
    let reader = guard::catch("arrow-ipc", || arrow_ipc::reader::FileReader::try_new(source, None))?
        .map_err(|e| from_arrow(e, "not an Arrow IPC file"))?;
    let batches = Some(reader.num_batches() as u64);
    Ok(FileBatchReader {
        reader: Box::new(guard::Guarded::new(Box::new(reader), "arrow-ipc")),
        bytes,
        rows: Some(rows),
        batches,
    })
}

fn open_parquet(path: &Path, options: &FileOptions) -> Result<FileBatchReader> {
    let file = npy_core::open_file(path)?;
    let bytes = file.metadata()?.len();
    let checked = file.try_clone()?;
    let source = guard::BoundedFile::new(file, bytes);
    let builder =
        guard::catch("parquet", || ParquetRecordBatchReaderBuilder::try_new(source))?.map_err(from_parquet)?;
    guard::check_parquet(&checked, bytes, builder.metadata())?;
    let meta = builder.metadata().file_metadata();
    let schema = builder.schema().clone();
    let mut rows = meta.num_rows().max(0) as u64;
    if schema.fields().is_empty() {
        let kv = meta.key_value_metadata().into_iter().flatten().find(|kv| kv.key == ROWS_KEY);
        rows = kv.and_then(|kv| kv.value.as_deref()?.parse().ok()).unwrap_or(rows);
        // Rows of no bytes: however many the metadata says, at most 1024 batches of them.
        let batch_rows = (options.convert.batch_rows_for(0) as u64).max(rows.div_ceil(1024));
        let reader = NoColumns { schema, left: rows, batch_rows };
        return Ok(FileBatchReader { reader: Box::new(reader), bytes, rows: Some(rows), batches: None });
    }
    let batch_rows = options.convert.batch_rows_for(row_bytes(&schema));
    let reader = guard::catch("parquet", || builder.with_batch_size(batch_rows).build())?.map_err(from_parquet)?;
    // The reader's batches have the columns' fields but not the schema's metadata (the
    // header): they get the file's schema back.
    let restored = restored_schema(&schema);
    let reader: Box<dyn RecordBatchReader + Send> = if reader.schema() == restored {
        Box::new(reader)
    } else {
        Box::new(Restore { inner: Box::new(reader), schema: restored })
    };
    let reader = Box::new(guard::Guarded::new(reader, "parquet"));
    Ok(FileBatchReader { reader, bytes, rows: Some(rows), batches: None })
}

/// The rows of a table of no columns, in batches.
struct NoColumns {
    schema: SchemaRef,
    left: u64,
    batch_rows: u64,
}

impl Iterator for NoColumns {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let n = self.left.min(self.batch_rows.max(1));
        self.left -= n;
        let options = RecordBatchOptions::new().with_row_count(Some(n as usize));
        Some(RecordBatch::try_new_with_options(self.schema.clone(), vec![], &options))
    }
}

impl RecordBatchReader for NoColumns {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The bytes of a row of a schema that keeps a `.npy` header, else 0 (unknown).
fn row_bytes(schema: &Schema) -> usize {
    if !schema.metadata().contains_key(DESCR_KEY) {
        return 0;
    }
    match crate::schema::header_of(schema, 0, &[]) {
        Ok((h, _)) => h.shape.iter().skip(1).product::<usize>().saturating_mul(h.dtype.itemsize()),
        Err(_) => 0,
    }
}

/// Field metadata key marking a Binary column of Parquet that stands for a type Parquet
/// lacks, the value saying which: `fixed_size_binary` for `FixedSizeBinary(0)` (a `V0`
/// dtype; arrow-rs refuses to write one), `struct` for a `Struct` of no fields (a record
/// of no fields). Such columns are written as empty Binary values and read back as they
/// were.
pub const ZERO_WIDTH_KEY: &str = "numpy.zero_width";

/// File metadata key of Parquet files with no columns (a record of no fields): the number
/// of rows, which Parquet only counts in columns.
pub const ROWS_KEY: &str = "numpy.rows";

/// The schema of batches as Parquet stores them: `FixedSizeBinary(0)` fields (at any depth)
/// become Binary, marked with [`ZERO_WIDTH_KEY`]. `None` when nothing changes.
fn parquet_schema(schema: &Schema) -> Option<SchemaRef> {
    let fields: Vec<FieldRef> = schema.fields().iter().map(|f| map_field(f, true)).collect();
    let changed = fields.iter().zip(schema.fields()).any(|(a, b)| a != b);
    changed.then(|| Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// The schema of batches read from Parquet: the file's own (with the header in its
/// metadata, which the reader's batches lack), fields marked [`ZERO_WIDTH_KEY`] back to
/// `FixedSizeBinary(0)`.
fn restored_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<FieldRef> = schema.fields().iter().map(|f| map_field(f, false)).collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// `field` with zero-width binaries and empty structs as Parquet stores them
/// (`to_parquet`) or back.
fn map_field(field: &FieldRef, to_parquet: bool) -> FieldRef {
    let mut meta = field.metadata().clone();
    let mut mark = |what: &str| {
        meta.insert(ZERO_WIDTH_KEY.to_string(), what.to_string());
        DataType::Binary
    };
    let ty = match field.data_type() {
        DataType::FixedSizeBinary(0) if to_parquet => mark("fixed_size_binary"),
        DataType::Struct(fields) if to_parquet && fields.is_empty() => mark("struct"),
        DataType::Binary if !to_parquet && meta.contains_key(ZERO_WIDTH_KEY) => {
            match meta.remove(ZERO_WIDTH_KEY).as_deref() {
                Some("struct") => DataType::Struct(Default::default()),
                _ => DataType::FixedSizeBinary(0),
            }
        }
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(|f| map_field(f, to_parquet)).collect()),
        DataType::FixedSizeList(item, n) => DataType::FixedSizeList(map_field(item, to_parquet), *n),
        other => other.clone(),
    };
    if &ty == field.data_type() && meta == *field.metadata() {
        return field.clone();
    }
    Arc::new(Field::new(field.name(), ty, field.is_nullable()).with_metadata(meta))
}

/// `batch` with the columns of `schema` (the same but for zero-width binaries, see
/// [`ZERO_WIDTH_KEY`]).
fn with_schema(batch: &RecordBatch, schema: &SchemaRef) -> std::result::Result<RecordBatch, ArrowError> {
    let columns: Vec<ArrayRef> =
        batch.columns().iter().zip(schema.fields()).map(|(c, f)| retype(c, f.data_type())).collect::<Result<_, _>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(schema.clone(), columns, &options)
}

/// `array` as type `to`: the same, but for `FixedSizeBinary(0)` ↔ Binary of empty values
/// (at any depth).
fn retype(array: &ArrayRef, to: &DataType) -> std::result::Result<ArrayRef, ArrowError> {
    use arrow_array::cast::AsArray;
    use arrow_array::{BinaryArray, FixedSizeListArray, StructArray};
    if array.data_type() == to {
        return Ok(array.clone());
    }
    let nulls = array.logical_nulls();
    Ok(match (array.data_type(), to) {
        (DataType::FixedSizeBinary(0), DataType::Binary) | (DataType::Struct(_), DataType::Binary) => {
            let offsets = arrow_buffer::OffsetBuffer::new_zeroed(array.len());
            Arc::new(BinaryArray::try_new(offsets, arrow_buffer::Buffer::from(Vec::<u8>::new()), nulls)?)
        }
        (DataType::Binary, DataType::Struct(fields)) if fields.is_empty() => {
            empty_values(array)?;
            Arc::new(StructArray::try_new_with_length(fields.clone(), vec![], nulls, array.len())?)
        }
        (DataType::Binary, DataType::FixedSizeBinary(0)) => {
            empty_values(array)?;
            let data = arrow_data::ArrayData::builder(to.clone())
                .len(array.len())
                .add_buffer(arrow_buffer::Buffer::from(Vec::<u8>::new()))
                .nulls(nulls);
            arrow_array::make_array(data.build()?)
        }
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = array.as_struct();
            let children =
                s.columns().iter().zip(fields).map(|(c, f)| retype(c, f.data_type())).collect::<Result<_, _>>()?;
            Arc::new(StructArray::try_new_with_length(fields.clone(), children, s.nulls().cloned(), s.len())?)
        }
        (DataType::FixedSizeList(..), DataType::FixedSizeList(item, n)) => {
            let l = array.as_fixed_size_list();
            let values = retype(l.values(), item.data_type())?;
            Arc::new(FixedSizeListArray::try_new(item.clone(), *n, values, l.nulls().cloned())?)
        }
        (from, to) => {
            return Err(ArrowError::SchemaError(format!("a column of {from} where {to} was expected")));
        }
    })
}

/// Checks that a Binary column standing for a zero-width type holds no bytes.
fn empty_values(array: &ArrayRef) -> std::result::Result<(), ArrowError> {
    use arrow_array::cast::AsArray;
    if array.as_binary::<i32>().iter().flatten().any(|v| !v.is_empty()) {
        return Err(ArrowError::InvalidArgumentError(format!("a column marked {ZERO_WIDTH_KEY} holds bytes")));
    }
    Ok(())
}

/// A reader whose batches get another schema of the same values ([`with_schema`]).
struct Restore {
    inner: Box<dyn RecordBatchReader + Send>,
    schema: SchemaRef,
}

impl Iterator for Restore {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.inner.next()?.and_then(|b| with_schema(&b, &self.schema)))
    }
}

impl RecordBatchReader for Restore {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The size of `path` on disk.
fn file_len(path: &Path) -> Result<u64> {
    Ok(std::fs::metadata(path)?.len())
}

/// Where batches go: a file of one of the formats, written beside its path and moved into
/// place only by [`Sink::finish`]; dropped before, it leaves nothing behind and any old
/// file untouched. Errors name the path (and the member).
///
/// Text columns of `.npy` and `.npz` files are as wide as their longest value in any
/// batch: when the schema's metadata does not fix the dtype, the batches are spooled
/// ([`TextSpool`]) and written by `finish`, whose errors then include theirs.
///
/// # Examples
/// ```
/// use npy_arrow::formats::{FileBatchReader, Sink};
/// use npy_core::prelude::*;
///
/// let dir = tempfile::tempdir()?;
/// let (npy, arrow) = (dir.path().join("a.npy"), dir.path().join("a.arrow"));
/// vec![7i32, 8, 9].write_npy(&npy)?;
/// let input = FileBatchReader::from_path(&npy)?;
/// let mut sink = Sink::create(&arrow, input.schema())?;
/// for batch in input {
///     sink.write(&batch?)?;
/// }
/// assert!(!arrow.exists());
/// sink.finish()?;
/// assert!(arrow.exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Sink {
    to: To,
    path: PathBuf,
    rows: u64,
}

enum To {
    /// An `.npy`-family target whose text widths come from the data: the batches are
    /// spooled while their text is measured, and written by `finish`.
    Measured {
        spool: TextSpool,
        to: Box<To>,
    },
    Npy(BatchFileWriter),
    /// A whole archive, a member per column.
    Archive(Box<NpzBatchWriter>),
    Member {
        archive: Box<npy_core::npz::FileWriter>,
        member: String,
        spool: BatchWriter<BufWriter<File>>,
    },
    Ipc(arrow_ipc::writer::FileWriter<BufWriter<AtomicFile>>),
    Parquet {
        writer: Box<ParquetWriter<BufWriter<AtomicFile>>>,
        /// The schema as stored, when Parquet needs another ([`parquet_schema`]).
        stored: Option<SchemaRef>,
        /// Whether the schema has no columns (the rows are then counted in [`ROWS_KEY`]).
        no_columns: bool,
    },
}

impl fmt::Debug for To {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            To::Measured { .. } => "Measured",
            To::Npy(_) => "Npy",
            To::Archive(_) => "Npz",
            To::Member { .. } => "NpzMember",
            To::Ipc(_) => "Ipc",
            To::Parquet { .. } => "Parquet",
        })
    }
}

impl Sink {
    /// Starts a file at `path` for batches of `schema`, its format by the extension, with
    /// the default [`FileOptions`].
    ///
    /// # Errors
    /// As [`Sink::create_with`].
    pub fn create(path: impl AsRef<Path>, schema: SchemaRef) -> Result<Sink> {
        Sink::create_with(path, schema, &FileOptions::new())
    }

    /// Starts a file at `path` for batches of `schema`, its format by the extension, with
    /// `options` (the member, Parquet's compression and row groups).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for an unknown extension; as [`BatchWriter::new`] for `.npy`
    /// and `.npz` members, [`NpzBatchWriter::create`] for whole archives; when the file
    /// cannot be created.
    pub fn create_with(path: impl AsRef<Path>, schema: SchemaRef, options: &FileOptions) -> Result<Sink> {
        let path = path.as_ref();
        let text_schema = Arc::clone(&schema);
        let start = || -> Result<To> {
            let format = Format::of(path)?;
            Ok(match (format, &options.member) {
                (Format::Npz, Some(member)) => {
                    let archive = Box::new(npy_core::npz::Writer::create(path)?);
                    let name = member.strip_suffix(".npy").unwrap_or(member);
                    let spool = spool_file(path)?;
                    let spool = BatchWriter::new(BufWriter::with_capacity(1 << 20, spool), schema)?;
                    To::Member { archive, member: format!("{name}.npy"), spool }
                }
                (Format::Npz, None) => To::Archive(Box::new(NpzBatchWriter::create(path, schema)?)),
                (Format::Npy, _) => To::Npy(BatchFileWriter::create(path, schema)?),
                (Format::Ipc, _) => {
                    let out = BufWriter::with_capacity(1 << 20, AtomicFile::create(path)?);
                    To::Ipc(arrow_ipc::writer::FileWriter::try_new(out, &schema).map_err(|e| from_arrow(e, "writing"))?)
                }
                (Format::Parquet, _) => {
                    let props = WriterProperties::builder().set_compression(options.compression.codec()).build();
                    let stored = parquet_schema(&schema);
                    let no_columns = schema.fields().is_empty();
                    let out = BufWriter::with_capacity(1 << 20, AtomicFile::create(path)?);
                    let row_group = options.row_group_bytes.unwrap_or(DEFAULT_ROW_GROUP_BYTES);
                    let writer = ParquetWriter::new(out, stored.clone().unwrap_or(schema), props, row_group)?;
                    To::Parquet { writer: Box::new(writer), stored, no_columns }
                }
            })
        };
        // Text columns as wide as their longest value in any batch: measured first.
        let start = || -> Result<To> {
            let to = start()?;
            match to {
                To::Npy(_) | To::Archive(_) | To::Member { .. } if crate::write::needs_text_widths(&text_schema) => {
                    Ok(To::Measured { spool: TextSpool::new(&text_schema)?, to: Box::new(to) })
                }
                to => Ok(to),
            }
        };
        let to = start().map_err(|e| e.writing(path))?;
        Ok(Sink { to, path: path.to_path_buf(), rows: 0 })
    }

    /// Writes a batch.
    ///
    /// # Errors
    /// Batches that do not fit the file (see [`BatchWriter::write`]); I/O errors.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.to.write(batch).map_err(|e| e.writing(&self.path))?;
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Ends the file and moves it into place.
    ///
    /// # Errors
    /// As [`BatchWriter::finish`] (a `.npy` whose metadata's shape did not get all its
    /// rows); I/O errors. The target is untouched then, and nothing is left beside it.
    pub fn finish(self) -> Result<()> {
        let (path, rows) = (self.path, self.rows);
        self.to.finish(rows).map_err(|e| e.writing(&path))
    }
}

impl To {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        match self {
            To::Measured { spool, .. } => spool.write(batch),
            To::Npy(w) => w.write(batch),
            To::Archive(w) => w.write(batch),
            To::Member { spool, member, .. } => spool.write(batch).map_err(|e| e.in_member(member)),
            To::Ipc(w) => w.write(batch).map_err(|e| from_arrow(e, "writing")),
            // A table of no columns: only its rows are counted (see `finish`).
            To::Parquet { no_columns: true, .. } => Ok(()),
            To::Parquet { writer, stored: None, .. } => writer.write(batch.clone()),
            To::Parquet { writer, stored: Some(stored), .. } => match with_schema(batch, stored) {
                Ok(b) => writer.write(b),
                Err(e) => Err(from_arrow(e, "writing")),
            },
        }
    }

    /// Ends the file (of `rows` rows) and moves it into place.
    fn finish(self, rows: u64) -> Result<()> {
        match self {
            To::Measured { spool, to } => {
                let (widths, mut batches) = spool.finish()?;
                let mut to = *to;
                match &mut to {
                    To::Npy(w) => w.text_widths(&widths)?,
                    To::Archive(w) => w.text_widths(&widths)?,
                    To::Member { spool, member, .. } => spool.text_widths(&widths).map_err(|e| e.in_member(member))?,
                    _ => {}
                }
                while let Some(batch) = batches.next_batch()? {
                    to.write(&batch)?;
                }
                to.finish(rows)
            }
            To::Npy(w) => w.finish(),
            To::Archive(w) => w.finish(),
            To::Member { mut archive, member, spool } => {
                let buffered = spool.finish().map_err(|e| e.in_member(&member))?;
                let mut file = buffered.into_inner().map_err(|e| Error::from(e.into_error()))?;
                let size = file.stream_position()?;
                file.seek(SeekFrom::Start(0))?;
                let source = BufReader::with_capacity(1 << 20, file);
                archive.add_raw_from_with(&member, size, source, npy_core::npz::Compression::Stored)?;
                archive.finish()
            }
            To::Ipc(mut w) => {
                w.finish().map_err(|e| from_arrow(e, "writing"))?;
                let out = w.into_inner().map_err(|e| from_arrow(e, "writing"))?;
                out.into_inner().map_err(|e| Error::from(e.into_error()))?.commit(true)
            }
            To::Parquet { writer: mut w, no_columns, .. } => {
                if no_columns {
                    let kv = parquet::file::metadata::KeyValue::new(ROWS_KEY.to_string(), rows.to_string());
                    w.append_key_value_metadata(kv);
                }
                let out = w.finish()?;
                out.into_inner().map_err(|e| Error::from(e.into_error()))?.commit(true)
            }
        }
    }
}

/// How far a conversion has got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Rows written.
    pub rows: u64,
    /// Batches written.
    pub batches: u64,
    /// The input's bytes done, estimated from the rows (or batches) done out of all.
    pub bytes: u64,
    /// The input's size on disk.
    pub total_bytes: u64,
}

/// Converts `input` to `output`, each in the format its extension says, batch by batch,
/// with the default [`FileOptions`], calling `progress` after each batch. The output
/// appears only when complete.
///
/// # Errors
/// As [`convert_with`].
pub fn convert(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Progress> {
    convert_with(input, output, progress, &FileOptions::new())
}

/// Converts `input` to `output`, each in the format its extension says, batch by batch,
/// with `options`, calling `progress` after each batch. The output appears only when
/// complete.
///
/// # Errors
/// As [`FileBatchReader::from_path_with`] and [`Sink`]: errors name the file (and member)
/// at fault; [`ErrorKind::Usage`] for a member named when neither file is an `.npz`.
pub fn convert_with(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    progress: &mut dyn FnMut(Progress),
    options: &FileOptions,
) -> Result<Progress> {
    let (input, output) = (input.as_ref(), output.as_ref());
    let formats =
        (Format::of(input).map_err(|e| e.reading(input))?, Format::of(output).map_err(|e| e.writing(output))?);
    if options.member.is_some() && formats.0 != Format::Npz && formats.1 != Format::Npz {
        return Err(usage("a member is named, but neither file is an .npz archive".into()));
    }
    let reader = FileBatchReader::from_path_with(input, options)?;
    let (bytes, rows, batches) = (reader.bytes(), reader.rows(), reader.batches());
    let schema = with_rows(reader.schema(), rows);
    held_in_proportion(&schema, bytes).map_err(|e| e.reading(input))?;
    let mut sink = Sink::create_with(output, schema, options)?;
    let mut done = Progress { total_bytes: bytes, ..Progress::default() };
    for batch in reader {
        let batch = batch.map_err(|e| from_arrow(e, "reading").reading(input))?;
        sink.write(&batch)?;
        done.rows += batch.num_rows() as u64;
        done.batches += 1;
        done.bytes = match (rows, batches) {
            (Some(all), _) if all > 0 => scale(bytes, done.rows, all),
            (_, Some(all)) if all > 0 => scale(bytes, done.batches, all),
            _ => 0,
        };
        progress(done);
    }
    sink.finish()?;
    done.bytes = bytes;
    Ok(done)
}

/// `schema` with `rows` as the first dim of the shape in its metadata, when the input says
/// how many rows it has and the metadata says otherwise (rows filtered by a tool that kept
/// the metadata): a Fortran-order N-d array is laid out for its rows before they come.
fn with_rows(schema: SchemaRef, rows: Option<u64>) -> SchemaRef {
    let shape_key = crate::schema::SHAPE_KEY;
    let Some(shape) = schema.metadata().get(shape_key) else { return schema };
    let Ok(mut shape) = serde_json::from_str::<Vec<u64>>(shape) else { return schema };
    match (shape.first_mut(), rows) {
        (Some(first), Some(rows)) if *first != rows => *first = rows,
        _ => return schema,
    }
    let mut meta = schema.metadata().clone();
    meta.insert(shape_key.to_string(), serde_json::to_string(&shape).unwrap_or_default());
    Arc::new(Schema::new_with_metadata(schema.fields().clone(), meta))
}

/// Checks that an array held whole until its last row (a Fortran-order N-d array, laid out
/// for the rows in `schema`'s metadata: see [`BatchWriter`]) is in proportion to the
/// input's `bytes`, as [`crate::guard`] bounds what the readers inflate: at most
/// [`guard::MAX_PAGE_RATIO`] times the input, or [`guard::MAX_PAGE_BYTES`].
fn held_in_proportion(schema: &Schema, bytes: u64) -> Result<()> {
    let Ok(found) = crate::schema::resolve(schema, 0, &[]) else { return Ok(()) };
    let header = &found.header;
    if !(found.from_metadata && header.fortran_order && header.shape.len() > 1) {
        return Ok(());
    }
    let data = header.data_len()? as u64;
    let most = guard::MAX_PAGE_BYTES.max(bytes.saturating_mul(guard::MAX_PAGE_RATIO));
    if data > most {
        return Err(invalid(format!(
            "the schema's metadata describes a Fortran-order array of {data} bytes, which is held \
             whole to be written: more than a file of {bytes} bytes can hold ({most})"
        )));
    }
    Ok(())
}

/// `total * part / all`, at most `total`.
fn scale(total: u64, part: u64, all: u64) -> u64 {
    ((total as u128 * part.min(all) as u128) / all as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use npy_core::header::Header;

    #[test]
    fn a_held_array_must_be_in_proportion_to_its_input() {
        let fortran = |rows: usize| {
            let mut header = Header::new("<i4".parse().unwrap(), vec![rows, 4]);
            header.fortran_order = true;
            crate::schema::schema_of(&header).unwrap()
        };
        // 4 GB of rows declared by a file of 1,000 bytes: refused before anything is held.
        let e = held_in_proportion(&fortran(250_000_000), 1000).unwrap_err();
        assert!(e.to_string().contains("Fortran-order array of 4000000000 bytes"), "{e}");
        assert!(held_in_proportion(&fortran(1000), 1000).is_ok());
        assert!(held_in_proportion(&fortran(250_000_000), 4_000_000).is_ok());
        // A C-order array is streamed, whatever its size.
        let c = crate::schema::schema_of(&Header::new("<i4".parse().unwrap(), vec![250_000_000, 4])).unwrap();
        assert!(held_in_proportion(&c, 1000).is_ok());
    }
}
