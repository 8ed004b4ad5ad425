//! Arrow record batches → `.npy`, streamed.

use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef};
use npy_core::atomic::AtomicFile;
use npy_core::header::{Header, Version};
use npy_core::{scalar, Error, Result};

use crate::error::{bad_data, usage};
use crate::foreign::Canonical;
use crate::layout::codec::{self, Place};
use crate::layout::node::{Node, SlotKind};
use crate::layout::{self, Layout, RESIDUE, RESIDUE_KEY, SHAPE_KEY};
use crate::schema::{metadata_agrees, options_of, resolve, same_layout};

/// Takes record batches and writes one `.npy` array, without holding them.
///
/// The dtype, order and shape come from the schema's metadata when it has them and they
/// agree with the columns (a schema made by [`crate::schema_of`] or a
/// [`crate::BatchReader`]; see [`crate::header_of`]): the file written is then the original
/// one, byte for byte (padding bytes are written as zeros, as `np.save` of an array made by
/// NumPy has them; `b1` bytes as 0 or 1). Without such metadata the dtype is the columns'
/// natural packed one ([`crate::natural_dtype`]), the width of text columns the longest
/// value of the first batch (a longer value later is an error; for input whose longest
/// text comes later, [`BatchWriter::text_widths`] sets the widths). Either way the first
/// dim is the number of rows written, fixed in the header by [`BatchWriter::finish`] (as
/// `np.save` would write it: the header is written first with room for any length), so a
/// file whose rows were filtered after its metadata was made comes out right.
///
/// Columns of the types other tools write (large and view strings, dictionaries, lists of
/// one length, Date64, times, decimals) are cast first: [`crate::foreign`] says to what.
///
/// Nulls become NaN in float (and complex) columns and NaT in datetime and timedelta
/// columns; elsewhere they are an error naming the column and the element. Fortran-order
/// arrays of two dims or more (from metadata) are held until `finish`: their rows are
/// spread over the whole data, so they must get the rows the metadata's shape has.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Float64Array, RecordBatch, StringArray};
/// use npy_core::{prelude::*, DynArray};
///
/// let batch = RecordBatch::try_from_iter([
///     ("x", Arc::new(Float64Array::from(vec![Some(1.0), None])) as _),
///     ("name", Arc::new(StringArray::from(vec!["ab", "c"])) as _),
/// ])?;
/// let mut w = npy_arrow::BatchWriter::new(std::io::Cursor::new(Vec::new()), batch.schema())?;
/// w.write(&batch)?;
/// let file = w.finish()?.into_inner();
/// let array = DynArray::read_npy_from(&file[..])?;
/// assert_eq!(array.dtype().descr(), "[('x', '<f8'), ('name', '<U2')]");
/// assert_eq!(array.shape(), [2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BatchWriter<W: Write + Seek> {
    writer: W,
    schema: SchemaRef,
    state: Option<State>,
    rows: usize,
    buf: Vec<u8>,
    /// Casts foreign column types to canonical ones ([`crate::foreign`]).
    foreign: Canonical,
    /// Widths set before the first batch, kept until a batch gives the lists' lengths.
    widths: Option<Vec<usize>>,
}

impl<W: Write + Seek> std::fmt::Debug for BatchWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchWriter")
            .field("header", &self.state.as_ref().map(|s| &s.layout.header))
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

/// A writer whose header is decided.
struct State {
    layout: Layout,
    version: Version,
    /// Where the header starts, and its length (the same after the final shape is in).
    start: u64,
    header_len: usize,
    /// The rows a Fortran-order N-d array's shape has, which it must get: its data is held
    /// and laid out for them. `None` for the others, whose first dim is the rows written.
    expected: Option<usize>,
    /// The whole data of a Fortran-order N-d array, written at the end.
    held: Option<Vec<u8>>,
    /// Of a Fortran-order N-d array: the element offsets of a row's items from its first.
    fortran: Option<Vec<usize>>,
}

impl<W: Write + Seek> BatchWriter<W> {
    /// Starts an array at the writer's position, for batches of `schema`. With the header in
    /// the schema's metadata it is written now; without, at the first batch.
    ///
    /// # Errors
    /// Metadata that does not parse, columns of types with no NumPy dtype, and I/O errors.
    pub fn new(writer: W, schema: SchemaRef) -> Result<Self> {
        let foreign = Canonical::new(schema.clone());
        let mut w = BatchWriter { writer, schema, state: None, rows: 0, buf: Vec::new(), foreign, widths: None };
        if metadata_agrees(&w.schema) && !w.foreign.needs_rows() {
            w.start(&[])?;
        }
        Ok(w)
    }

    fn start(&mut self, widths: &[usize]) -> Result<()> {
        self.schema = self.foreign.schema()?;
        let found = resolve(&self.schema, 0, widths)?;
        let header = found.header;
        // A residue column means something only beside the header it was made with.
        let mut options = options_of(&self.schema);
        if !found.from_metadata {
            options.residue(false);
        }
        let layout = Layout::new_with(&header, None, &options)?;
        let start = self.writer.stream_position()?;
        let (version, head) = header.encode(found.version)?;
        self.writer.write_all(&head)?;
        let fortran = layout::fortran_rows(&layout);
        let held = header.fortran_order && layout.tensor;
        let expected = (held && self.schema.metadata().contains_key(SHAPE_KEY)).then(|| layout.rows());
        let held = if held { Some(zeroed(header.data_len()?)?) } else { None };
        self.state = Some(State { layout, version, start, header_len: head.len(), expected, held, fortran });
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Sets the width of each column's text instead of taking the first batch's longest
    /// value (see [`text_widths`]: one width a column, shared by a record column's text
    /// fields; 0 counts as 1): for a writer whose input was scanned or spooled first, so
    /// that no later value is too long. A schema whose metadata has a dtype that agrees with
    /// its columns keeps it, widths and all: then this does nothing.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`](npy_core::ErrorKind::Usage) after the first batch, or for
    /// another number of widths than the schema has columns; as [`BatchWriter::new`] for
    /// the header (I/O errors).
    ///
    /// # Examples
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::{RecordBatch, StringArray};
    /// use npy_core::DynArray;
    /// use npy_core::prelude::*;
    ///
    /// let batches = [["a", "bc"], ["defgh", "i"]].map(|names| {
    ///     RecordBatch::try_from_iter([("name", Arc::new(StringArray::from(names.to_vec())) as _)]).unwrap()
    /// });
    /// let widths = batches.iter().map(npy_arrow::write::text_widths).reduce(|a, b| {
    ///     a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect()
    /// });
    /// let mut w = npy_arrow::BatchWriter::new(std::io::Cursor::new(Vec::new()), batches[0].schema())?;
    /// w.text_widths(&widths.unwrap())?;
    /// for batch in &batches {
    ///     w.write(batch)?;
    /// }
    /// let array = DynArray::read_npy_from(&w.finish()?.into_inner()[..])?;
    /// assert_eq!((array.dtype().descr(), array.shape()), ("[('name', '<U5')]".to_string(), &[4][..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text_widths(&mut self, widths: &[usize]) -> Result<()> {
        if metadata_agrees(&self.schema) {
            return Ok(());
        }
        if self.state.is_some() {
            return Err(usage("text widths are set before the first batch".into()));
        }
        if widths.len() != self.schema.fields().len() {
            let reason = format!("{} text widths for {} columns", widths.len(), self.schema.fields().len());
            return Err(usage(reason));
        }
        let widths: Vec<usize> = widths.iter().map(|&w| w.max(1)).collect();
        if self.foreign.needs_rows() {
            // The header waits for the lists' lengths.
            self.widths = Some(widths);
            return Ok(());
        }
        self.start(&widths)
    }

    /// Writes a batch's rows. Columns of the types other tools write are cast first (see
    /// [`crate::foreign`]).
    ///
    /// # Errors
    /// A null list row, or a list of another length than the first row's (naming the
    /// column and the row); a batch whose columns do not match the schema's types; more rows than the
    /// metadata's shape has; values the dtype cannot hold (text too long, nulls without a
    /// NaN or NaT, naming the element); I/O errors.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = &*self.foreign.batch(batch, self.rows)?;
        if self.state.is_none() {
            if batch.num_rows() == 0 && self.foreign.needs_rows() {
                return Ok(());
            }
            let widths = self.widths.take().unwrap_or_else(|| text_widths(batch));
            self.start(&widths)?;
        }
        let Some(state) = &mut self.state else { unreachable!("started above") };
        let n = batch.num_rows();
        check_columns(&state.layout, batch)?;
        if let Some(expected) = state.expected {
            if self.rows + n > expected {
                return Err(fortran_rows(self.rows + n, expected));
            }
        }
        let itemsize = state.layout.header.dtype.itemsize();
        let row_elements = state.layout.row_elements;
        let first_row = if state.held.is_some() { self.rows } else { 0 };
        let pos = crate::pos::rows(first_row, n, row_elements, itemsize, state.fortran.as_deref());
        let out = match &mut state.held {
            Some(data) => data,
            None => {
                self.buf.clear();
                self.buf.resize(n * row_elements * itemsize, 0);
                &mut self.buf
            }
        };
        let place = Place { first: self.rows * row_elements, itemsize, lossy_text: false };
        let names = state.layout.schema.fields().iter().map(|f| f.name());
        for (((offset, node), column), name) in state.layout.columns.iter().zip(batch.columns()).zip(names) {
            let at = pos.shifted(*offset);
            let encoded = match node {
                Node::List { item, .. } if state.layout.tensor => match column.logical_nulls() {
                    Some(nulls) if nulls.null_count() > 0 => {
                        let row = self.rows + nulls.iter().position(|valid| !valid).unwrap_or(0);
                        return Err(bad_data(format!(
                            "column '{name}': row {row} is null, which the rows of a NumPy array cannot be"
                        )));
                    }
                    _ => codec::encode(item, column.as_fixed_size_list().values().as_ref(), out, &at, place),
                },
                _ => codec::encode(node, column.as_ref(), out, &at, place),
            };
            encoded.map_err(|e| codec::in_column(e, name))?;
        }
        if let Some(residue) = &state.layout.residue {
            // The bytes the columns do not carry, where they say what the column says (a
            // changed value wins over its old bytes).
            let column = batch.column(residue.at).as_fixed_size_binary();
            for (k, p) in pos.iter().enumerate() {
                let (row, item) = (k / row_elements, k % row_elements);
                let mut kept = &column.value(row)[item * residue.width..];
                for slot in &residue.slots {
                    let (bytes, rest) = kept.split_at(slot.len);
                    kept = rest;
                    let dst = &mut out[p + slot.at..p + slot.at + slot.len];
                    match slot.kind {
                        SlotKind::Padding => dst.copy_from_slice(bytes),
                        SlotKind::Bool if (bytes[0] != 0) == (dst[0] != 0) => dst[0] = bytes[0],
                        SlotKind::Bool => {}
                        SlotKind::Text(order) => {
                            let invalid = bytes.iter().any(|&b| b != 0);
                            if invalid && scalar::ucs4(dst, order).is_ok_and(|t| t == scalar::ucs4_lossy(bytes, order))
                            {
                                dst.copy_from_slice(bytes);
                            }
                        }
                    }
                }
            }
        }
        if state.held.is_none() {
            self.writer.write_all(&self.buf)?;
        }
        self.rows += n;
        Ok(())
    }

    /// Ends the array: writes held data, fixes the first dim in the header (or checks that
    /// the metadata's shape got all its rows), and returns the writer, positioned after the
    /// data.
    ///
    /// # Errors
    /// Fewer rows than the metadata's shape has; I/O errors.
    pub fn finish(mut self) -> Result<W> {
        if self.state.is_none() {
            self.start(&[])?;
        }
        let Some(state) = self.state.take() else { unreachable!("started above") };
        if let Some(data) = &state.held {
            self.writer.write_all(data)?;
        }
        let mut header: Header = state.layout.header.clone();
        match (state.expected, header.shape.first_mut()) {
            (Some(expected), _) if expected != self.rows => return Err(fortran_rows(self.rows, expected)),
            (Some(_), _) => {}
            (None, Some(first)) if *first != self.rows => {
                *first = self.rows;
                let (_, head) = header.encode(Some(state.version))?;
                if head.len() != state.header_len {
                    return Err(usage("the header grew while writing".into()));
                }
                let end = self.writer.stream_position()?;
                self.writer.seek(SeekFrom::Start(state.start))?;
                self.writer.write_all(&head)?;
                self.writer.seek(SeekFrom::Start(end))?;
            }
            (None, Some(_)) => {}
            (None, None) if self.rows != 1 => {
                return Err(bad_data(format!("{} rows for a 0-d array, which is one element", self.rows)));
            }
            (None, None) => {}
        }
        self.writer.flush()?;
        Ok(self.writer)
    }
}

/// `len` zero bytes, or an error when memory is short (the length comes from metadata).
fn zeroed(len: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| usage(format!("cannot hold the {len} bytes of a Fortran-order array in memory")))?;
    v.resize(len, 0);
    Ok(v)
}

/// The error of a Fortran-order N-d array given `rows` where its metadata's shape has
/// `expected`: its data is laid out for those.
fn fortran_rows(rows: usize, expected: usize) -> Error {
    bad_data(format!(
        "{rows} rows for a Fortran-order array whose shape in the schema's metadata has {expected}: \
         its layout needs them all (drop the schema's numpy.* metadata to write the rows in C order)"
    ))
}

/// The width a text column of `batch` needs, one a column: its longest text (characters of
/// Utf8, bytes of Binary, in lists and in a record's fields, which share it), at least 1.
/// What [`BatchWriter`] takes from its first batch; the largest over all the batches is
/// what [`BatchWriter::text_widths`] (and [`NpzBatchWriter::text_widths`]) take to write
/// batches whose longest text comes later.
///
/// [`NpzBatchWriter::text_widths`]: crate::NpzBatchWriter::text_widths
pub fn text_widths(batch: &RecordBatch) -> Vec<usize> {
    batch.columns().iter().map(|c| text_width(c.as_ref())).collect()
}

/// Whether writing batches of `schema` takes text widths from the data: its metadata has
/// no dtype that agrees with its columns (see [`crate::header_of`]) and a column holds Utf8 or Binary values (or their large, view and
/// dictionary forms; in lists and records too) whose field does not give their NumPy type.
pub fn needs_text_widths(schema: &Schema) -> bool {
    fn text(field: &arrow_schema::Field) -> bool {
        if crate::schema::dtype_hint(field).is_some() {
            return false;
        }
        match field.data_type() {
            DataType::Utf8 | DataType::Binary => true,
            DataType::LargeUtf8 | DataType::Utf8View | DataType::LargeBinary | DataType::BinaryView => true,
            DataType::Dictionary(_, values) => text(&arrow_schema::Field::new("", values.as_ref().clone(), true)),
            DataType::Struct(fields) => fields.iter().any(|f| text(f)),
            DataType::FixedSizeList(item, _)
            | DataType::List(item)
            | DataType::LargeList(item)
            | DataType::ListView(item)
            | DataType::LargeListView(item) => text(item),
            _ => false,
        }
    }
    !metadata_agrees(schema) && schema.fields().iter().any(|f| text(f))
}

/// The longest text in a column (characters of Utf8, bytes of Binary, in lists and in a
/// record's fields), at least 1: the width of its NumPy `U` or `S` type.
pub(crate) fn text_width(array: &dyn Array) -> usize {
    if !crate::foreign::is_canonical(array.data_type()) {
        // Measured in its canonical type; an array that cannot be cast is refused when written.
        return crate::foreign::canonical_array(array).map_or(1, |a| text_width(a.as_ref()));
    }
    let w = match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().flatten().map(|s| s.chars().count()).max().unwrap_or(0),
        DataType::Binary => array.as_binary::<i32>().iter().flatten().map(<[u8]>::len).max().unwrap_or(0),
        DataType::Struct(_) => array.as_struct().columns().iter().map(|c| text_width(c.as_ref())).max().unwrap_or(0),
        DataType::FixedSizeList(..) => text_width(array.as_fixed_size_list().values().as_ref()),
        _ => 0,
    };
    w.max(1)
}

fn check_columns(layout: &Layout, batch: &RecordBatch) -> Result<()> {
    let want = layout.schema();
    // A residue column is left out with the header it was made with (see `header_of`).
    let is_residue = |f: &arrow_schema::FieldRef| f.name() == RESIDUE && f.metadata().contains_key(RESIDUE_KEY);
    let extra = layout.residue.is_none() && batch.schema().fields().last().is_some_and(is_residue);
    if batch.num_columns() != want.fields().len() + usize::from(extra) {
        return Err(bad_data(format!(
            "a batch of {} columns for an array of {} ({})",
            batch.num_columns(),
            want.fields().len(),
            layout.header.dtype.descr()
        )));
    }
    for (f, got) in want.fields().iter().zip(batch.schema().fields()) {
        if !same_layout(f.data_type(), got.data_type()) {
            return Err(bad_data(format!(
                "column '{}' is {}, the array's dtype {} needs {}",
                got.name(),
                got.data_type(),
                layout.header.dtype.descr(),
                f.data_type()
            )));
        }
    }
    Ok(())
}

/// A [`BatchWriter`] to a path, atomic: the file replaces `path` only when
/// [`BatchFileWriter::finish`] succeeds; dropped before, it leaves nothing behind and any old
/// file untouched. Errors name the path.
#[derive(Debug)]
pub struct BatchFileWriter {
    inner: BatchWriter<io::BufWriter<AtomicFile>>,
    path: PathBuf,
}

impl BatchFileWriter {
    /// Starts writing to `path`.
    ///
    /// # Errors
    /// As [`BatchWriter::new`], and when the file cannot be created.
    pub fn create(path: impl AsRef<Path>, schema: SchemaRef) -> Result<Self> {
        let path = path.as_ref();
        let start = || BatchWriter::new(io::BufWriter::with_capacity(1 << 20, AtomicFile::create(path)?), schema);
        let inner = start().map_err(|e| e.writing(path))?;
        Ok(BatchFileWriter { inner, path: path.to_path_buf() })
    }

    /// Writes a batch's rows.
    ///
    /// # Errors
    /// As [`BatchWriter::write`], naming the path.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.inner.write(batch).map_err(|e| e.writing(&self.path))
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.inner.rows()
    }

    /// Sets the text widths before the first batch: [`BatchWriter::text_widths`].
    ///
    /// # Errors
    /// As [`BatchWriter::text_widths`], naming the path.
    pub fn text_widths(&mut self, widths: &[usize]) -> Result<()> {
        self.inner.text_widths(widths).map_err(|e| e.writing(&self.path))
    }

    /// Ends the array and moves the file into place (synced).
    ///
    /// # Errors
    /// As [`BatchWriter::finish`]; the target is untouched then.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        let finish = || self.inner.finish()?.into_inner().map_err(|e| Error::from(e.into_error()))?.commit(true);
        finish().map_err(|e| e.writing(&path))
    }
}
