//! `.npy` arrays → Arrow record batches, streamed.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_buffer::Buffer;
use arrow_schema::{ArrowError, SchemaRef};
use npy_core::mmap::NpyMap;
use npy_core::{DynArray, ErrorKind, NpyReader, Result};

use crate::layout::codec;
use crate::layout::node::{Leaf, Node};
use crate::layout::{batch, decode_rows, fortran_rows, row_bytes, Layout};
use crate::options::ConvertOptions;

pub use crate::options::{DEFAULT_BATCH_BYTES, DEFAULT_BATCH_ROWS};

/// Where the reader's bytes come from.
enum Input<R> {
    /// Chunks of rows read as they are needed (C order, or at most one dim). The reader is
    /// boxed: it is most of the enum's size, and one allocation per file costs nothing.
    Stream { reader: Box<NpyReader<R>>, buf: Vec<u8> },
    /// The whole data, held (Fortran-order N-d files read from a stream, dynamic arrays).
    Held(Vec<u8>),
    /// A map: chunks are read in place; `zero_copy` is the data as one Arrow buffer when
    /// its values need no conversion (1-D native primitives).
    Map { map: Arc<NpyMap>, zero_copy: Option<Buffer> },
}

/// A [`RecordBatchReader`] over a `.npy` array: batches of a chosen number of rows along
/// the first axis (the last one shorter), made as they are asked for.
///
/// Memory: one batch and one chunk of raw rows, whatever the file's size, except for
/// Fortran-order arrays of two dims or more read from a stream, whose data is held (a row
/// is spread over the whole file); from a map they are read in place.
///
/// # Examples
/// ```
/// use arrow_array::{cast::AsArray, types::Int64Type};
/// use npy_core::prelude::*;
///
/// let file = (0..10i64).collect::<Vec<_>>().write_npy_to(Vec::new())?;
/// let mut options = npy_arrow::ConvertOptions::new();
/// options.batch_rows(4);
/// let reader = npy_arrow::BatchReader::from_npy_reader_with(npy_core::NpyReader::from_reader(&file[..])?, &options)?;
/// let lens: Vec<usize> = reader.map(|b| b.map(|b| b.num_rows())).collect::<Result<_, _>>()?;
/// assert_eq!(lens, [4, 4, 2]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BatchReader<R> {
    source: Input<R>,
    layout: Layout,
    batch_rows: usize,
    next: usize,
    /// Of a Fortran-order N-d array: the element offsets of a row's items from the row's
    /// first, in C order.
    fortran: Option<Vec<usize>>,
}

impl<R> std::fmt::Debug for BatchReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchReader")
            .field("header", &self.layout.header)
            .field("batch_rows", &self.batch_rows)
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl BatchReader<BufReader<File>> {
    /// Opens a `.npy` file, with the default [`ConvertOptions`]. Errors name the path.
    ///
    /// # Errors
    /// As [`BatchReader::from_path_with`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("x.npy");
    /// vec![1u8, 2, 3].write_npy(&path)?;
    /// let reader = npy_arrow::BatchReader::from_path(&path)?;
    /// assert_eq!(reader.remaining_rows(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        BatchReader::from_path_with(path, &ConvertOptions::new())
    }

    /// Opens a `.npy` file, with `options`. Errors name the path.
    ///
    /// # Errors
    /// Errors of opening the file and reading its header; as
    /// [`BatchReader::from_npy_reader_with`].
    pub fn from_path_with(path: impl AsRef<Path>, options: &ConvertOptions) -> Result<Self> {
        let path = path.as_ref();
        let open = || BatchReader::from_npy_reader_with(npy_core::NpyReader::from_path(path)?, options);
        open().map_err(|e| e.reading(path))
    }
}

impl<R: Read> BatchReader<R> {
    /// Batches from a reader whose header was read (with the header limits it was opened
    /// with), with the default [`ConvertOptions`]; the schema keeps the header (see
    /// [`crate::schema`]).
    ///
    /// # Errors
    /// As [`BatchReader::from_npy_reader_with`].
    pub fn from_npy_reader(reader: NpyReader<R>) -> Result<Self> {
        BatchReader::from_npy_reader_with(reader, &ConvertOptions::new())
    }

    /// Batches from a reader whose header was read, with `options`.
    ///
    /// # Errors
    /// [`ErrorKind::UnsupportedDtype`] for object arrays (and sizes Arrow cannot hold); for
    /// Fortran-order N-d arrays, errors of reading the data.
    pub fn from_npy_reader_with(mut reader: NpyReader<R>, options: &ConvertOptions) -> Result<Self> {
        let layout = Layout::new_with(reader.header(), Some(reader.version()), options)?;
        let source = if layout.header.fortran_order && layout.header.shape.len() > 1 {
            let mut data = Vec::new();
            let n = reader.len();
            reader.read_raw(n, &mut data)?;
            Input::Held(data)
        } else {
            Input::Stream { reader: Box::new(reader), buf: Vec::new() }
        };
        let rows = options.batch_rows_for(row_bytes(&layout));
        Ok(BatchReader::from_parts(source, layout, rows))
    }
}

impl BatchReader<std::io::Empty> {
    /// Batches of a dynamic array (its data is held), with the default [`ConvertOptions`].
    ///
    /// # Errors
    /// As [`BatchReader::from_dyn_with`].
    pub fn from_dyn(array: DynArray) -> Result<Self> {
        BatchReader::from_dyn_with(array, &ConvertOptions::new())
    }

    /// Batches of a dynamic array (its data is held), with `options`.
    ///
    /// # Errors
    /// [`ErrorKind::UnsupportedDtype`] for object arrays (and sizes Arrow cannot hold).
    pub fn from_dyn_with(array: DynArray, options: &ConvertOptions) -> Result<Self> {
        let layout = Layout::new_with(array.header(), array.version(), options)?;
        let rows = options.batch_rows_for(row_bytes(&layout));
        Ok(BatchReader::from_parts(Input::Held(array.into_data()), layout, rows))
    }

    /// Batches of a mapped array, read in place, with the default [`ConvertOptions`]. A 1-D
    /// array of native-order integers, floats or datetimes is not copied at all: its
    /// column's buffer is the map's data (each batch a slice of it), and the buffer keeps
    /// the map alive.
    ///
    /// # Errors
    /// As [`BatchReader::from_map_with`].
    ///
    /// # Examples
    /// ```
    /// use std::sync::Arc;
    /// use arrow_array::{cast::AsArray, types::Float64Type};
    /// use npy_core::{mmap::NpyMap, prelude::*};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("x.npy");
    /// vec![1.5f64, 2.5, 3.5].write_npy(&path)?;
    /// // SAFETY: nothing else writes the file while it is mapped.
    /// let map = Arc::new(unsafe { NpyMap::from_path(&path)? });
    /// let mut reader = npy_arrow::BatchReader::from_map(map.clone())?;
    /// let batch = reader.next().unwrap()?;
    /// let column = batch.column(0).as_primitive::<Float64Type>();
    /// assert_eq!(column.values().as_ref(), [1.5, 2.5, 3.5]);
    /// assert_eq!(column.values().as_ptr().cast::<u8>(), map.data().as_ptr()); // no copy
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_map(map: Arc<NpyMap>) -> Result<Self> {
        BatchReader::from_map_with(map, &ConvertOptions::new())
    }

    /// Batches of a mapped array, read in place, with `options` (see
    /// [`BatchReader::from_map`]).
    ///
    /// # Errors
    /// [`ErrorKind::UnsupportedDtype`] for object arrays (and sizes Arrow cannot hold).
    pub fn from_map_with(map: Arc<NpyMap>, options: &ConvertOptions) -> Result<Self> {
        let layout = Layout::new_with(map.header(), Some(map.version()), options)?;
        let zero_copy = zero_copy_buffer(&map, &layout);
        let rows = options.batch_rows_for(row_bytes(&layout));
        Ok(BatchReader::from_parts(Input::Map { map, zero_copy }, layout, rows))
    }
}

/// The map's data as one Arrow buffer, when the array is 1-D (or 0-d) of a native-order
/// type whose values Arrow takes as they are, and suitably aligned.
fn zero_copy_buffer(map: &Arc<NpyMap>, layout: &Layout) -> Option<Buffer> {
    let [(0, Node::Leaf(s, leaf))] = &layout.columns[..] else { return None };
    if !matches!(layout.header.dtype, npy_core::DType::Scalar(_)) {
        return None;
    }
    let plain = matches!(leaf, Leaf::Primitive | Leaf::Time) && s.ty() != npy_core::dtype::ScalarType::Bool;
    if layout.tensor || !plain || !s.is_native() || map.data().as_ptr().align_offset(s.itemsize()) != 0 {
        return None;
    }
    Some(Buffer::from(bytes::Bytes::from_owner(MapData(map.clone()))))
}

/// A map as the owner of an Arrow buffer over its data.
struct MapData(Arc<NpyMap>);

impl AsRef<[u8]> for MapData {
    fn as_ref(&self) -> &[u8] {
        self.0.data()
    }
}

impl<R> BatchReader<R> {
    fn from_parts(source: Input<R>, layout: Layout, batch_rows: usize) -> Self {
        let fortran = fortran_rows(&layout);
        BatchReader { source, layout, batch_rows: batch_rows.max(1), next: 0, fortran }
    }

    /// The header of the array.
    pub fn header(&self) -> &npy_core::header::Header {
        &self.layout.header
    }

    /// The layout (header ↔ schema mapping) the batches follow.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Rows not yet returned.
    pub fn remaining_rows(&self) -> usize {
        self.layout.rows() - self.next
    }
}

impl<R: Read> BatchReader<R> {
    /// The next batch, or `None` after the last, with npy's error type.
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] and I/O errors of the source; [`ErrorKind::InvalidValue`]
    /// for text that is not UCS-4 and `M8[D]` days outside Date32 (naming the element).
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let rows_total = self.layout.rows();
        if self.next >= rows_total {
            return Ok(None);
        }
        let first = self.next;
        let rows = self.batch_rows.min(rows_total - first);
        let row_elements = self.layout.row_elements;
        // The data, and the row index its first byte belongs to.
        if let Input::Map { zero_copy: Some(buffer), .. } = &self.source {
            let batch = self.zero_copy_batch(buffer.clone(), first, rows)?;
            self.next += rows;
            return Ok(Some(batch));
        }
        let (data, base): (&[u8], usize) = match &mut self.source {
            Input::Stream { reader, buf } => {
                buf.clear();
                reader.read_raw(rows * row_elements, buf)?;
                (&buf[..], first)
            }
            Input::Held(data) => held_rows(data, &self.layout, first),
            Input::Map { map, .. } => held_rows(map.data(), &self.layout, first),
        };
        let batch = decode_rows(&self.layout, data, first, base, rows, self.fortran.as_deref())?;
        self.next += rows;
        Ok(Some(batch))
    }

    fn zero_copy_batch(&self, buffer: Buffer, first: usize, rows: usize) -> Result<RecordBatch> {
        let (_, node) = &self.layout.columns[0];
        let Node::Leaf(s, _) = node else { unreachable!("zero copy is for leaves only") };
        let size = s.itemsize();
        let mut values = buffer.slice_with_length(first * size, rows * size);
        let nulls = if matches!(node, Node::Leaf(_, Leaf::Time)) {
            let v: &[i64] = values.typed_data();
            let nulls = v.contains(&i64::MIN).then(|| {
                arrow_buffer::NullBuffer::new(arrow_buffer::BooleanBuffer::collect_bool(rows, |i| v[i] != i64::MIN))
            });
            // Zeros under the nulls, as `convert` gives them (a copy, only when NaT is there).
            if nulls.is_some() {
                values = Buffer::from_vec(v.iter().map(|&x| if x == i64::MIN { 0 } else { x }).collect::<Vec<i64>>());
            }
            nulls
        } else {
            None
        };
        let column = codec::primitive(node.data_type(), values, rows, nulls)?;
        self.batch(vec![column], rows)
    }

    fn batch(&self, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
        batch(&self.layout, columns, rows)
    }
}

/// The held data from row `first` on (C order, at most one dim: rows are contiguous), or
/// all of it (Fortran N-d), with the row index its first byte belongs to.
fn held_rows<'d>(data: &'d [u8], layout: &Layout, first: usize) -> (&'d [u8], usize) {
    if layout.header.fortran_order && layout.tensor {
        return (data, 0);
    }
    let row_bytes = layout.row_elements * layout.header.dtype.itemsize();
    (&data[first * row_bytes..], first)
}

impl<R: Read> Iterator for BatchReader<R> {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_batch() {
            Ok(batch) => batch.map(Ok),
            Err(e) => {
                // A failed batch ends the stream.
                self.next = self.layout.rows();
                Some(Err(ArrowError::ExternalError(Box::new(e))))
            }
        }
    }
}

impl<R: Read> RecordBatchReader for BatchReader<R> {
    fn schema(&self) -> SchemaRef {
        self.layout.schema()
    }
}

/// The array of a mapped 1-D file of native-order integers, floats or datetimes, with no
/// copy: its buffer is the map's data and keeps the map alive.
///
/// # Errors
/// [`ErrorKind::NotViewable`] for other arrays (read them with [`BatchReader::from_map`]).
pub fn mapped_array(map: Arc<NpyMap>) -> Result<ArrayRef> {
    let rows = map.len();
    let reader = BatchReader::from_map_with(map, ConvertOptions::new().batch_rows(rows.max(1)))?;
    let Input::Map { zero_copy: Some(buffer), .. } = &reader.source else {
        return Err(ErrorKind::NotViewable {
            reason: format!(
                "{} of shape {:?} is not a 1-D native-order primitive array (use BatchReader::from_map)",
                reader.layout.header.dtype.descr(),
                reader.layout.header.shape
            ),
        }
        .into());
    };
    Ok(reader.zero_copy_batch(buffer.clone(), 0, reader.layout.rows())?.column(0).clone())
}
