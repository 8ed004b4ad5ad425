//! The mapping of one array to Arrow columns, compiled once: [`Layout`].
//!
//! For each column a tree ([`node::Node`]) says where each value sits in a record's bytes
//! and the Arrow type it becomes; [`codec`] walks those trees, one pass per column over a
//! chunk of records, both ways. The schema's metadata keys live here, beneath both the
//! schema mapping (`crate::schema`) and the readers and writers, which all build on a
//! `Layout`. This module uses nothing of this crate but `pos`, `options` and `error`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use npy_core::dtype::DType;
use npy_core::header::{Header, Version};
use npy_core::{scalar, ErrorKind, Result};

use crate::error::arrow_error;
use crate::options::ConvertOptions;
use crate::pos::Pos;

pub(crate) mod codec;
mod keys;
pub(crate) mod node;
mod part;

pub use keys::{
    DESCR_KEY, DTYPE_KEY, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, FORTRAN_ORDER_KEY, ITEM, RESIDUE, RESIDUE_KEY,
    SHAPE_KEY, TENSOR_EXTENSION, VALUES, VERSION_KEY,
};

pub use part::{Part, Step};

use codec::Place;
use node::{checked_i32, field_metadata, node_of, residue_slots, unsupported, with_meta, Node, Residue, SlotKind};

/// A field's metadata.
type Metadata = HashMap<String, String>;

/// The whole mapping of one array: its columns, and how rows lie in the data.
#[derive(Debug, Clone)]
pub struct Layout {
    pub(crate) header: Header,
    pub(crate) columns: Vec<(usize, Node)>,
    /// Elements per row: 1, or the product of the dims after the first (N-d arrays).
    pub(crate) row_elements: usize,
    /// True when the rows are N-d slices (one `values` column of tensors).
    pub(crate) tensor: bool,
    /// The runs of an element's bytes the columns may not carry, when the [`RESIDUE`]
    /// column keeps them.
    pub(crate) residue: Option<Residue>,
    pub(crate) schema: SchemaRef,
}

/// Most rows that take no bytes in the file (zero-size elements such as `S0`, `V0` or an
/// empty record, or rows of an empty shape such as `(n, 0)`) an array may have to become
/// batches: i32::MAX. Their number is bounded by nothing but the header (a 128-byte file
/// can claim 10^18 of them), while every Arrow row takes bytes (offsets, validity, levels)
/// and time: a table of more is refused up front instead of spinning. npy-core's readers
/// (which give such an array at once, with no data) are not bound by it.
pub const MAX_EMPTY_ROWS: usize = i32::MAX as usize;

impl Layout {
    /// The layout of an array with this header. The schema keeps the header in its metadata
    /// (with `version`, when given, so that a forced version comes back too).
    ///
    /// # Errors
    /// [`ErrorKind::UnsupportedDtype`] for object dtypes, for sizes Arrow cannot hold
    /// (a `FixedSizeList` or `FixedSizeBinary` over `i32::MAX`), and for more than
    /// [`MAX_EMPTY_ROWS`] rows that take no bytes in the file.
    pub fn new(header: &Header, version: Option<Version>) -> Result<Layout> {
        Layout::new_with(header, version, &ConvertOptions::default())
    }

    /// As [`Layout::new`], with options (see [`ConvertOptions::days_as_int64`]).
    ///
    /// # Errors
    /// As [`Layout::new`].
    pub fn new_with(header: &Header, version: Option<Version>, options: &ConvertOptions) -> Result<Layout> {
        let days = options.days_as_int64;
        let dtype = &header.dtype;
        if dtype.has_object() {
            return Err(unsupported(dtype, "object arrays hold Python objects, not Arrow values"));
        }
        let row_elements: usize = header.shape.iter().skip(1).product();
        let rows = header.shape.first().copied().unwrap_or(1);
        if rows > MAX_EMPTY_ROWS && (dtype.itemsize() == 0 || row_elements == 0) {
            let reason = format!(
                "{rows} rows that take no bytes (zero-size elements or rows) are over {MAX_EMPTY_ROWS} \
                 (i32::MAX): nothing in the file bounds their number, and every Arrow row takes bytes"
            );
            return Err(unsupported(dtype, &reason));
        }
        let tensor = header.shape.len() > 1;
        let element_columns: Vec<(usize, Node, String, Option<Metadata>)> = match dtype {
            DType::Record(r) if !tensor => {
                let mut out = Vec::with_capacity(r.fields().len());
                for f in r.fields() {
                    let node = node_of(&f.dtype, days)?;
                    let meta = field_metadata(&f.dtype, days);
                    out.push((f.offset, node, f.name.clone(), meta));
                }
                out
            }
            _ => vec![(0, node_of(dtype, days)?, VALUES.to_string(), field_metadata(dtype, days))],
        };
        let mut columns = Vec::with_capacity(element_columns.len());
        let mut fields = Vec::with_capacity(element_columns.len());
        for (offset, node, name, meta) in element_columns {
            let (node, field) = if tensor {
                let item = Arc::new(with_meta(Field::new(ITEM, node.data_type(), true), meta));
                let len = checked_i32(row_elements, dtype)?;
                let mut tensor_meta = HashMap::new();
                tensor_meta.insert(EXTENSION_NAME_KEY.to_string(), TENSOR_EXTENSION.to_string());
                tensor_meta.insert(EXTENSION_METADATA_KEY.to_string(), tensor_metadata(&header.shape[1..]));
                let field =
                    Field::new(name, DataType::FixedSizeList(item.clone(), len), false).with_metadata(tensor_meta);
                // The tensor's items are placed by the reader and writer (C or Fortran
                // order), not by a stride: `stride` is unused for the top list.
                (Node::List { len: row_elements, stride: 0, item: Box::new(node), field: item }, field)
            } else {
                let field = with_meta(Field::new(name, node.data_type(), true), meta);
                (node, field)
            };
            columns.push((offset, node));
            fields.push(field);
        }
        let slots = residue_slots(dtype);
        let residue = (options.residue && !slots.is_empty()).then(|| Residue::new(slots, columns.len()));
        if let Some(r) = &residue {
            let width = checked_i32(r.width.saturating_mul(row_elements), dtype)?;
            let meta = HashMap::from([(RESIDUE_KEY.to_string(), "true".to_string())]);
            fields.push(Field::new(RESIDUE, DataType::FixedSizeBinary(width), false).with_metadata(meta));
        }
        let mut meta = HashMap::new();
        meta.insert(DESCR_KEY.to_string(), dtype.descr());
        meta.insert(FORTRAN_ORDER_KEY.to_string(), if header.fortran_order { "True" } else { "False" }.to_string());
        meta.insert(SHAPE_KEY.to_string(), serde_json::to_string(&header.shape).unwrap_or_default());
        if let Some(v) = version {
            let (major, minor) = v.number();
            meta.insert(VERSION_KEY.to_string(), format!("{major}.{minor}"));
        }
        let schema = Arc::new(Schema::new_with_metadata(fields, meta));
        Ok(Layout { header: header.clone(), columns, row_elements, tensor, residue, schema })
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The header the layout maps.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Rows of the whole array: the first dim, or 1 for a 0-d array.
    pub fn rows(&self) -> usize {
        self.header.shape.first().copied().unwrap_or(1)
    }

    /// Bytes of one row in the file: an element, or an N-d array's slice along the first
    /// axis.
    pub fn row_bytes(&self) -> usize {
        row_bytes(self)
    }

    /// For a Fortran-order array of two dims or more, whose rows are not contiguous: the
    /// element offsets of a row's items from its first, in C order of the row's dims (item
    /// `k` of row `i` is element `i + items[k]` of the data). `None` when rows are
    /// contiguous.
    pub fn fortran_items(&self) -> Option<Vec<usize>> {
        fortran_rows(self)
    }

    /// The layout that decodes this array's rows put into C order (each row's items one
    /// after another, in C order: see [`Layout::fortran_items`]), with this layout's
    /// schema: what a scan of a Fortran-order array that holds a block of rows at a time,
    /// not the whole data, decodes its blocks with. This layout for contiguous rows.
    pub fn c_ordered(&self) -> Layout {
        let mut c_ordered = self.clone();
        c_ordered.header.fortran_order = false;
        c_ordered
    }

    /// This layout with only some of its columns, `indices` into the schema's fields in the
    /// order wanted (the [`RESIDUE`] column, when kept, is one of them). Only those
    /// columns are decoded: a scan that needs one field of a wide record touches only that
    /// field's bytes. The schema keeps the metadata.
    ///
    /// # Errors
    /// As [`Layout::select`]: an index past the last field or given twice.
    ///
    /// # Examples
    /// ```
    /// use npy_core::header::Header;
    ///
    /// let header = Header::new("[('a', '<i4'), ('b', '<f8'), ('c', 'u1')]".parse()?, vec![2]);
    /// let layout = npy_arrow::Layout::new(&header, None)?.project(&[2, 0])?;
    /// let names: Vec<_> = layout.schema().fields().iter().map(|f| f.name().clone()).collect();
    /// assert_eq!(names, ["c", "a"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn project(&self, indices: &[usize]) -> Result<Layout> {
        self.select(&indices.iter().map(|&i| Part::whole(i)).collect::<Vec<_>>())
    }
}

/// `{"shape":[3,4]}`: the canonical extension's metadata for rows of this shape.
pub(crate) fn tensor_metadata(shape: &[usize]) -> String {
    serde_json::json!({ "shape": shape }).to_string()
}

impl Layout {
    /// Decodes `rows` rows starting at row `first` into a batch: `data` is the array's data
    /// from row `first` on (rows are contiguous in C order and in arrays of at most one
    /// dim), or, for a Fortran-order array of two dims or more, all of it. This is what a
    /// scan of a row range does with the range's bytes (see [`Layout::project`] for fewer
    /// columns).
    ///
    /// # Errors
    /// [`ErrorKind::Truncated`] when `data` holds fewer bytes than the rows need;
    /// [`ErrorKind::WrongShape`] for rows past the array's end; [`ErrorKind::InvalidValue`]
    /// for text that is not UCS-4
    /// and `M8[D]` days outside Date32.
    ///
    /// # Examples
    /// ```
    /// use arrow_array::{cast::AsArray, types::Float64Type};
    /// use npy_core::prelude::*;
    ///
    /// let file = (0..10).map(f64::from).collect::<Vec<_>>().write_npy_to(Vec::new())?;
    /// let reader = npy_core::NpyReader::from_reader(&file[..])?;
    /// let layout = npy_arrow::Layout::new(reader.header(), Some(reader.version()))?;
    /// let data = &file[reader.data_offset()..];
    /// // Rows 6..9, from the bytes of rows 6 on.
    /// let batch = layout.decode(&data[6 * layout.row_bytes()..], 6, 3)?;
    /// assert_eq!(batch.column(0).as_primitive::<Float64Type>().values().as_ref(), [6.0, 7.0, 8.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode(&self, data: &[u8], first: usize, rows: usize) -> Result<RecordBatch> {
        let fortran = self.checked_rows(data, first, rows)?;
        let base = if fortran.is_some() { 0 } else { first };
        decode_rows(self, data, first, base, rows, fortran.as_deref())
    }

    /// Decodes some of the rows from row `first` on into a batch: `at` holds their offsets
    /// from `first` (row `first + at[k]` is the batch's row `k`), and `data` is as for
    /// [`Layout::decode`] (the data from row `first` on, or all of it for a Fortran-order
    /// array of two dims or more). This is what a filtered scan does with the rows its
    /// predicate kept, for the columns the predicate did not need: their bytes are read only
    /// at those rows.
    ///
    /// # Errors
    /// As [`Layout::decode`], for the rows up to the last of `at`.
    ///
    /// # Examples
    /// ```
    /// use arrow_array::{cast::AsArray, types::Int64Type};
    /// use npy_core::prelude::*;
    ///
    /// let file = (0..10i64).collect::<Vec<_>>().write_npy_to(Vec::new())?;
    /// let reader = npy_core::NpyReader::from_reader(&file[..])?;
    /// let layout = npy_arrow::Layout::new(reader.header(), None)?;
    /// let data = &file[reader.data_offset()..];
    /// // Rows 4 and 7, from the bytes of rows 3 on.
    /// let batch = layout.decode_at(&data[3 * layout.row_bytes()..], 3, &[1, 4])?;
    /// assert_eq!(batch.column(0).as_primitive::<Int64Type>().values().as_ref(), [4, 7]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode_at(&self, data: &[u8], first: usize, at: &[usize]) -> Result<RecordBatch> {
        let span = at.iter().max().map_or(0, |&last| last.saturating_add(1));
        let fortran = self.checked_rows(data, first, span)?;
        let itemsize = self.header.dtype.itemsize();
        let pos = crate::pos::rows_at(first, at, self.row_elements, itemsize, fortran.as_deref());
        decode_pos(self, data, first, pos, at.len())
    }

    /// Checks that rows `first..first + rows` are in the array and that `data` (as
    /// [`Layout::decode`] takes it) holds their bytes; the Fortran offsets of a row's items
    /// for a Fortran-order N-d array, whose `data` is all of it.
    fn checked_rows(&self, data: &[u8], first: usize, rows: usize) -> Result<Option<Vec<usize>>> {
        if first.checked_add(rows).is_none_or(|end| end > self.rows()) {
            let reason =
                format!("rows {first}..{} asked of an array of {} rows", first.saturating_add(rows), self.rows());
            return Err(ErrorKind::WrongShape { reason }.into());
        }
        let fortran = fortran_rows(self);
        let needed = match fortran {
            Some(_) => self.rows() * row_bytes(self),
            None => rows * row_bytes(self),
        };
        if data.len() < needed {
            return Err(ErrorKind::Truncated { expected: needed as u64, found: data.len() as u64 }.into());
        }
        Ok(fortran)
    }
}

/// `rows` rows from row `first` on: `data` holds the array's data from row `base` on
/// (rows are contiguous), or all of it (`base` 0) for a Fortran-order N-d array, whose
/// rows' items sit at `fortran`'s offsets.
pub(crate) fn decode_rows(
    layout: &Layout,
    data: &[u8],
    first: usize,
    base: usize,
    rows: usize,
    fortran: Option<&[usize]>,
) -> Result<RecordBatch> {
    let itemsize = layout.header.dtype.itemsize();
    let pos = crate::pos::rows(first - base, rows, layout.row_elements, itemsize, fortran);
    decode_pos(layout, data, first, pos, rows)
}

/// `rows` rows from row `first` on whose elements are at `pos` in `data`.
fn decode_pos(layout: &Layout, data: &[u8], first: usize, pos: Pos, rows: usize) -> Result<RecordBatch> {
    let itemsize = layout.header.dtype.itemsize();
    let row_elements = layout.row_elements;
    let place = Place { first: first * row_elements, itemsize, lossy_text: layout.residue.is_some() };
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(layout.columns.len() + 1);
    // Each column's node and positions (a tensor column's items: the rows' elements).
    let parts: Vec<(&Node, Pos)> = (layout.columns.iter())
        .map(|(offset, node)| match node {
            Node::List { item, .. } if layout.tensor => (&**item, pos.shifted(*offset)),
            _ => (node, pos.shifted(*offset)),
        })
        .collect();
    let mut strided = codec::Strided::new(data, parts.iter().map(|(node, at)| (*node, at)))?;
    for ((_, column), (node, at)) in layout.columns.iter().zip(&parts) {
        let array = codec::decode(node, data, at, place, &mut strided)?;
        columns.push(match column {
            Node::List { len, field, .. } if layout.tensor => codec::list(field, *len, array, rows)?,
            _ => array,
        });
    }
    if let Some(residue) = &layout.residue {
        let mut buf = arrow_buffer::MutableBuffer::with_capacity(pos.count() * residue.width);
        for p in pos.iter() {
            for slot in &residue.slots {
                let bytes = &data[p + slot.at..p + slot.at + slot.len];
                match slot.kind {
                    SlotKind::Text(order) if scalar::check_ucs4(bytes, order).is_ok() => buf.extend_zeros(slot.len),
                    _ => buf.extend_from_slice(bytes),
                }
            }
        }
        let width = (residue.width * row_elements) as i32;
        let ty = arrow_schema::DataType::FixedSizeBinary(width);
        columns.insert(residue.at, codec::primitive(ty, buf, rows, None)?);
    }
    batch(layout, columns, rows)
}

pub(crate) fn batch(layout: &Layout, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(layout.schema(), columns, &options).map_err(arrow_error)
}

/// Of a Fortran-order N-d array, the element offsets of a row's items from its first.
pub(crate) fn fortran_rows(layout: &Layout) -> Option<Vec<usize>> {
    (layout.tensor && layout.header.fortran_order).then(|| fortran_offsets(&layout.header.shape))
}

/// Bytes of one row.
pub(crate) fn row_bytes(layout: &Layout) -> usize {
    layout.row_elements.saturating_mul(layout.header.dtype.itemsize())
}

/// Element offsets, from the row's first element, of the items of a row of a Fortran-order
/// array, in C order of the row's dims.
pub(crate) fn fortran_offsets(shape: &[usize]) -> Vec<usize> {
    let (first, rest) = shape.split_first().expect("N-d");
    // Fortran strides (in elements) of the dims after the first.
    let mut strides = Vec::with_capacity(rest.len());
    let mut step = *first;
    for &d in rest {
        strides.push(step);
        step *= d;
    }
    let count: usize = rest.iter().product();
    let mut out = Vec::with_capacity(count);
    let mut index = vec![0usize; rest.len()];
    for _ in 0..count {
        out.push(index.iter().zip(&strides).map(|(i, s)| i * s).sum());
        for k in (0..rest.len()).rev() {
            index[k] += 1;
            if index[k] < rest[k] {
                break;
            }
            index[k] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_offsets_walk_the_row_in_c_order() {
        // shape (2, 3, 4): item (i, j) of a row is at 2 * i + 6 * j.
        let off = fortran_offsets(&[2, 3, 4]);
        assert_eq!(off.len(), 12);
        assert_eq!(&off[..5], [0, 6, 12, 18, 2]);
    }
}
