//! The dtype model ↔ Arrow schemas.
//!
//! [`schema_of`] maps a `.npy` header (dtype, order, shape) to the Arrow schema its record
//! batches have, and keeps the header in the schema's metadata ([`DESCR_KEY`],
//! [`FORTRAN_ORDER_KEY`], [`SHAPE_KEY`], [`VERSION_KEY`]) so that writing the batches back
//! gives the original file. [`header_of`] goes back: from that metadata when present, else
//! from the columns' types (the natural packed NumPy dtype, see [`natural_dtype`]).
//!
//! The mapping is compiled once into a [`Layout`]: for each column, a tree that says where
//! each value sits in a record's bytes. `read` and `write` walk it, one pass per column over
//! a chunk of records.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit as ArrowUnit};
use npy_core::dtype::{ByteOrder, DType, Record, Scalar, ScalarType, TimeUnit};
use npy_core::header::{Header, Version};
use npy_core::{Error, ErrorKind, Result};

use crate::ConvertOptions;

/// Schema metadata key: the original `descr`, as the header's Python literal (`'<f8'`,
/// `[('a', '<i4'), ('', '|V4')]`).
pub const DESCR_KEY: &str = "numpy.descr";
/// Schema metadata key: the original `fortran_order`, `True` or `False`.
pub const FORTRAN_ORDER_KEY: &str = "numpy.fortran_order";
/// Schema metadata key: the original shape, a JSON list (`[3, 4]`; `[]` for 0-d).
pub const SHAPE_KEY: &str = "numpy.shape";
/// Schema metadata key: the `.npy` format version of the original file (`1.0`, `2.0`,
/// `3.0`).
pub const VERSION_KEY: &str = "numpy.version";
/// Field metadata key: the NumPy type string of a column whose Arrow type does not say it
/// alone: complex (`<c16`), long double (`<f16`), datetimes in units Arrow lacks
/// (`<M8[25s]`, `<m8[D]`, `<M8`).
pub const DTYPE_KEY: &str = "numpy.dtype";
/// The name of the one column of an array of scalars (and of an N-d array's rows).
pub const VALUES: &str = "values";
/// Arrow's canonical extension name for fixed-shape tensors.
pub const TENSOR_EXTENSION: &str = "arrow.fixed_shape_tensor";
/// Field metadata key of an Arrow extension's name.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// Field metadata key of an Arrow extension's metadata.
pub const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";
/// The name of the column of each row's bytes that the other columns may not carry
/// (padding, `b1` bytes, `U` text that is not valid), made with [`ConvertOptions::residue`].
pub const RESIDUE: &str = "numpy.residue";
/// Field metadata key marking the [`RESIDUE`] column (value `true`).
pub const RESIDUE_KEY: &str = "numpy.residue";
/// The name of the item field of the `FixedSizeList`s this crate makes.
pub const ITEM: &str = "item";

/// NumPy's most dimensions (`NPY_MAXDIMS`), as npy-core's header parser allows.
const MAX_DIMS: usize = 64;

/// A field's metadata.
type Metadata = HashMap<String, String>;

/// Where the values of one column (or of a nested part of it) sit in a record's bytes, and
/// the Arrow type they become.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// One scalar at the element's position.
    Leaf(Scalar, Leaf),
    /// A record: each field at its offset from the element's position.
    Struct(Vec<(usize, Node)>, Fields),
    /// `len` values `stride` bytes apart from the element's position (a subarray's first
    /// dim, or a complex number's two parts).
    List { len: usize, stride: usize, item: Box<Node>, field: FieldRef },
}

/// The Arrow form of one scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Leaf {
    /// Bool, integers, `f2`/`f4`/`f8`: the value's bytes in native order.
    Primitive,
    /// A datetime or timedelta as an `i64` Timestamp, Duration or Int64, NaT as null.
    Time,
    /// `M8[D]` as Date32 (days as `i32`), NaT as null.
    Date32,
    /// `S n`: Binary, trailing NULs stripped.
    Bytes,
    /// `U n`: Utf8, trailing NULs stripped.
    Text,
    /// `V n`: FixedSizeBinary, the bytes as stored; long doubles: FixedSizeBinary of their
    /// bytes in native byte order (a big-endian file's swapped), each part's for complex.
    Raw,
}

impl Node {
    pub(crate) fn data_type(&self) -> DataType {
        match self {
            Node::Leaf(s, leaf) => leaf_type(*s, *leaf),
            Node::Struct(_, fields) => DataType::Struct(fields.clone()),
            Node::List { len, field, .. } => DataType::FixedSizeList(field.clone(), *len as i32),
        }
    }
}

/// The runs of an element's bytes that the [`RESIDUE`] column keeps, in order, and their
/// total size (the column's width per element).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Residue {
    pub(crate) slots: Vec<Slot>,
    pub(crate) width: usize,
}

impl Residue {
    fn new(slots: Vec<Slot>) -> Residue {
        let width = slots.iter().map(|s| s.len).sum();
        Residue { slots, width }
    }
}

/// One run of an element's bytes in the [`RESIDUE`] column: `len` bytes at offset `at`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Slot {
    pub(crate) at: usize,
    pub(crate) len: usize,
    pub(crate) kind: SlotKind,
}

/// What a [`Slot`] holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SlotKind {
    /// Padding between and after a record's fields: kept as it is.
    Padding,
    /// A `b1` byte: kept as it is (NumPy reads any nonzero byte as True).
    Bool,
    /// A `U` element: its code units when some are not chars (the column then holds the
    /// text with U+FFFD for each of them), zeros when the column holds it exactly.
    Text(ByteOrder),
}

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
        Layout::with_options(header, version, &ConvertOptions::default())
    }

    /// As [`Layout::new`], with options (see [`ConvertOptions::days_as_int64`]).
    ///
    /// # Errors
    /// As [`Layout::new`].
    pub fn with_options(header: &Header, version: Option<Version>, options: &ConvertOptions) -> Result<Layout> {
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
        let residue = (options.residue && !slots.is_empty()).then(|| Residue::new(slots));
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
        crate::read::row_bytes(self)
    }

    /// This layout with only some of its columns, `indices` into the schema's fields in the
    /// order wanted (the [`RESIDUE`] column, when kept, is the last field). Only those
    /// columns are decoded: a scan that needs one field of a wide record touches only that
    /// field's bytes. The schema keeps the metadata.
    ///
    /// # Errors
    /// [`ErrorKind::WrongShape`] for an index past the last field or given twice.
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
        let all = self.schema.fields().len();
        let mut seen = vec![false; all];
        for &i in indices {
            if i >= all || std::mem::replace(&mut seen[i], true) {
                let why = if i >= all { format!("the schema has {all} fields") } else { "given twice".to_string() };
                return Err(ErrorKind::WrongShape { reason: format!("projection of field {i}: {why}") }.into());
            }
        }
        let columns = indices.iter().filter_map(|&i| self.columns.get(i).cloned()).collect();
        let residue = self.residue.clone().filter(|_| indices.contains(&self.columns.len()));
        let schema = Arc::new(self.schema.project(indices).map_err(crate::convert::arrow_error)?);
        Ok(Layout { columns, residue, schema, ..self.clone() })
    }
}

/// The Arrow schema of an array with this header, its metadata holding the header (see the
/// module docs).
///
/// # Errors
/// As [`Layout::new`].
///
/// # Examples
/// ```
/// use arrow_schema::DataType;
/// use npy_core::header::Header;
///
/// let header = Header::new("[('x', '<f4'), ('t', '>M8[us]')]".parse()?, vec![10]);
/// let schema = npy_arrow::schema_of(&header)?;
/// assert_eq!(schema.field(0).data_type(), &DataType::Float32);
/// assert_eq!(schema.field(1).name(), "t");
/// assert_eq!(schema.metadata()["numpy.descr"], "[('x', '<f4'), ('t', '>M8[us]')]");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn schema_of(header: &Header) -> Result<SchemaRef> {
    Ok(Layout::new(header, None)?.schema)
}

/// The header a schema stands for.
///
/// The columns are the truth and the `numpy.*` metadata a hint: the header in the metadata
/// ([`DESCR_KEY`], [`FORTRAN_ORDER_KEY`], [`SHAPE_KEY`], [`VERSION_KEY`]) is used only when
/// it agrees with the columns present: the same columns, in the same order, of the same
/// names (nested fields too) and types ([`header_agrees`]). Then its first dim is a hint too
/// (`rows` when it has no [`SHAPE_KEY`]): a writer fixes it to the rows it gets. Otherwise,
/// as for a schema without metadata (say, a file another tool edited: rows filtered, columns
/// dropped, added, reordered, renamed or cast), the header is the natural packed dtype of
/// the columns (see [`natural_dtype`]) and a shape of `rows` (times the tensor shape of a
/// `values` tensor column), and the metadata is ignored. No column's values are ever
/// written under another column's name. Also returns the version the metadata asks for,
/// when its header is used.
///
/// # Errors
/// [`ErrorKind::Shape`] for a shape whose sizes overflow; [`ErrorKind::UnsupportedDtype`]
/// for columns of types with no NumPy dtype, and for the object dtype.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use arrow_schema::Schema;
/// use npy_core::header::Header;
///
/// let header = Header::new("[('a', '>f8'), ('b', '>f8')]".parse()?, vec![50]);
/// let schema = npy_arrow::schema_of(&header)?;
/// // The metadata agrees with the columns: it is the header (the first dim a hint).
/// assert_eq!(npy_arrow::header_of(&schema, 0, &[])?.0, header);
/// // Columns reordered by another tool, the metadata kept: the columns win.
/// let swapped = Schema::new_with_metadata(
///     vec![schema.field(1).clone(), schema.field(0).clone()],
///     schema.metadata().clone(),
/// );
/// let (h, _) = npy_arrow::header_of(&swapped, 40, &[])?;
/// assert_eq!((h.dtype.descr(), h.shape), ("[('b', '<f8'), ('a', '<f8')]".to_string(), vec![40]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn header_of(schema: &Schema, rows: usize, widths: &[usize]) -> Result<(Header, Option<Version>)> {
    let found = resolve(schema, rows, widths)?;
    Ok((found.header, found.version))
}

/// What [`header_of`] finds, and whether it comes from the metadata.
#[derive(Debug)]
pub(crate) struct Resolved {
    pub(crate) header: Header,
    pub(crate) version: Option<Version>,
    /// True when the header is the metadata's (which agrees with the columns).
    pub(crate) from_metadata: bool,
}

/// [`header_of`], saying where the header comes from.
pub(crate) fn resolve(schema: &Schema, rows: usize, widths: &[usize]) -> Result<Resolved> {
    let found = match metadata_header(schema, rows) {
        Some((header, version)) => Resolved { header, version, from_metadata: true },
        None => Resolved { header: column_header(schema, rows, widths)?, version: None, from_metadata: false },
    };
    // Sizes that overflow are refused as in a file's header.
    found.header.data_len()?;
    if found.header.dtype.has_object() {
        return Err(unsupported(&found.header.dtype, "object arrays hold Python objects, not Arrow values"));
    }
    Ok(found)
}

/// The header of the columns alone: their natural dtype, `rows` of them (a `values` column
/// alone: an array of its type; a `values` tensor column: rows of its shape).
fn column_header(schema: &Schema, rows: usize, widths: &[usize]) -> Result<Header> {
    let fields = schema.fields();
    if let [only] = &fields[..] {
        if only.name() == VALUES {
            if let Some(dims) = tensor_shape(only)? {
                let DataType::FixedSizeList(item, _) = only.data_type() else {
                    return Err(bad_meta(EXTENSION_NAME_KEY, TENSOR_EXTENSION));
                };
                if dims.len() >= MAX_DIMS {
                    return Err(bad_meta(EXTENSION_METADATA_KEY, &format!("{} dims", dims.len())));
                }
                let dtype = dtype_of_field(item, widths.first().copied().unwrap_or(1))?;
                let shape = std::iter::once(rows).chain(dims).collect();
                return Ok(Header::new(dtype, shape));
            }
            let dtype = dtype_of_field(only, widths.first().copied().unwrap_or(1))?;
            return Ok(Header::new(dtype, vec![rows]));
        }
    }
    Ok(Header::new(natural_dtype(schema, widths)?, vec![rows]))
}

/// The header in `schema`'s metadata, with its version, when it parses and agrees with
/// the columns ([`header_agrees`]); `None` otherwise.
fn metadata_header(schema: &Schema, rows: usize) -> Option<(Header, Option<Version>)> {
    let meta = schema.metadata();
    let dtype: DType = meta.get(DESCR_KEY)?.parse().ok()?;
    let fortran_order = match meta.get(FORTRAN_ORDER_KEY).map(String::as_str) {
        None | Some("False") => false,
        Some("True") => true,
        Some(_) => return None,
    };
    let shape = match (meta.get(SHAPE_KEY), &schema.fields()[..]) {
        (Some(s), _) => serde_json::from_str::<Vec<usize>>(s).ok()?,
        // A lone tensor column gives the dims after the first.
        (None, [only]) if only.name() == VALUES => {
            std::iter::once(rows).chain(tensor_shape(only).ok().flatten().unwrap_or_default()).collect()
        }
        (None, _) => vec![rows],
    };
    let version = match meta.get(VERSION_KEY).map(String::as_str) {
        None => None,
        Some("1.0") => Some(Version::V1_0),
        Some("2.0") => Some(Version::V2_0),
        Some("3.0") => Some(Version::V3_0),
        Some(_) => return None,
    };
    let header = Header { dtype, fortran_order, shape };
    header_agrees(&header, schema).then_some((header, version))
}

/// Whether the writers take the header from `schema`'s metadata: it agrees with the
/// columns as the writers cast them ([`crate::foreign`]). Otherwise they make it from the
/// columns, text widths and all.
pub(crate) fn metadata_agrees(schema: &Schema) -> bool {
    let cast =
        |f: &FieldRef| crate::foreign::canonical_type(f.data_type()).map(|t| f.as_ref().clone().with_data_type(t));
    let Some(fields) = schema.fields().iter().map(cast).collect::<Option<Vec<Field>>>() else { return false };
    metadata_header(&Schema::new_with_metadata(fields, schema.metadata().clone()), 0).is_some()
}

/// Whether `header` describes `schema`'s columns: the columns [`Layout`] makes of it (with
/// the options the schema's columns show: Int64 days, a residue column) are those of
/// `schema`, in order, of the same names (nested fields too) and types (time zones,
/// nullability and list item names aside; an Int64 may stand for a time type, as readers
/// without its unit give it), and a tensor column has the header's row shape.
pub fn header_agrees(header: &Header, schema: &Schema) -> bool {
    if header.shape.len() > MAX_DIMS || header.data_len().is_err() {
        return false;
    }
    let Ok(layout) = Layout::with_options(header, None, &options_of(schema)) else { return false };
    fields_agree(layout.schema.fields(), schema.fields())
}

/// Whether two lists of fields agree, name by name and type by type (see [`header_agrees`]).
fn fields_agree(want: &Fields, got: &Fields) -> bool {
    want.len() == got.len() && want.iter().zip(got).all(|(w, g)| w.name() == g.name() && field_agrees(w, g))
}

/// Whether `got`'s type (and tensor shape, if it has one) agrees with `want`'s.
fn field_agrees(want: &Field, got: &Field) -> bool {
    let tensor = |f: &Field| f.metadata().get(EXTENSION_METADATA_KEY).cloned();
    if got.metadata().contains_key(EXTENSION_NAME_KEY) && tensor(want) != tensor(got) {
        return false;
    }
    match (want.data_type(), got.data_type()) {
        (DataType::Struct(w), DataType::Struct(g)) => fields_agree(w, g),
        (DataType::FixedSizeList(w, n), DataType::FixedSizeList(g, m)) => n == m && field_agrees(w, g),
        (w, g) => same_layout(w, g),
    }
}

/// Whether two Arrow types hold values the same way: names of nested fields, nullability
/// and time zones aside, and an Int64 standing for a time type.
pub(crate) fn same_layout(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Struct(x), DataType::Struct(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_layout(x.data_type(), y.data_type()))
        }
        (DataType::FixedSizeList(x, n), DataType::FixedSizeList(y, m)) => {
            n == m && same_layout(x.data_type(), y.data_type())
        }
        (DataType::Timestamp(x, _), DataType::Timestamp(y, _)) => x == y,
        // The count of the header's unit, as readers without the unit give it (pyarrow
        // reads a Parquet `datetime64[s]` column, which Parquet has no unit for, as int64).
        (DataType::Timestamp(..) | DataType::Duration(_), DataType::Int64) => true,
        _ => a == b,
    }
}

/// The options a schema's columns were made with: Int64 days when its `M8[D]` columns are
/// Int64, the residue column when its last column is one.
pub(crate) fn options_of(schema: &Schema) -> ConvertOptions {
    let residue = schema.fields().last().is_some_and(|f| f.name() == RESIDUE && f.metadata().contains_key(RESIDUE_KEY));
    ConvertOptions::new().days_as_int64(has_int_days(&DataType::Struct(schema.fields().clone()))).residue(residue)
}

/// True when a field in `ty` is an Int64 of days (its `numpy.dtype` says `M8[D]`).
fn has_int_days(ty: &DataType) -> bool {
    let days = |f: &Field| f.metadata().get(DTYPE_KEY).is_some_and(|d| d.ends_with("M8[D]"));
    match ty {
        DataType::Struct(fields) => fields.iter().any(|f| days(f) || has_int_days(f.data_type())),
        DataType::FixedSizeList(item, _) => days(item) || has_int_days(item.data_type()),
        _ => false,
    }
}

/// `schema` as the schema of a result derived from a table (a query's, a filter's): the
/// table's header in its metadata kept only when it agrees with the result's columns
/// ([`header_agrees`]: then it is their dtype, padding and byte order included), and its
/// shape, order and version dropped whatever they say (a derived result has rows of its
/// own, and a C-order layout); every other metadata key kept. What SQL results are written
/// from, so that they never carry a table's stale header.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use arrow_schema::Schema;
/// use npy_arrow::schema::{derived_schema, DESCR_KEY, SHAPE_KEY};
/// use npy_core::header::Header;
///
/// let table = npy_arrow::schema_of(&Header::new("[('a', '>i4'), ('b', '<f8')]".parse()?, vec![9]))?;
/// let all = derived_schema(&table);
/// assert_eq!(all.metadata()[DESCR_KEY], "[('a', '>i4'), ('b', '<f8')]");
/// assert!(!all.metadata().contains_key(SHAPE_KEY));
/// let one = Schema::new_with_metadata(vec![table.field(1).clone()], table.metadata().clone());
/// assert!(derived_schema(&one).metadata().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn derived_schema(schema: &Schema) -> SchemaRef {
    let mut meta = schema.metadata().clone();
    let keep_descr = metadata_header(schema, 0).is_some();
    meta.retain(|k, _| {
        !matches!(k.as_str(), FORTRAN_ORDER_KEY | SHAPE_KEY | VERSION_KEY) && (keep_descr || k != DESCR_KEY)
    });
    Arc::new(Schema::new_with_metadata(schema.fields().clone(), meta))
}

/// The natural packed NumPy dtype of a schema's columns, as a record (one field per
/// column, in order, no padding). `widths[i]` is the width (bytes for Binary, characters for
/// Utf8) of column `i`'s text: of its values, or of every text field nested in it (a
/// Struct's, a list's items); missing widths are 1.
///
/// A [`RESIDUE`] column is left out: it means something only with the schema's metadata.
/// A field's [`DTYPE_KEY`] metadata is used when the Arrow type that dtype maps to holds
/// values as the field's type does (a complex `<c16` on a FixedSizeList of 2 Float64, a
/// `<M8[25s]` on an Int64); on a field of another type (changed by a tool that kept the
/// metadata) it is ignored and the dtype comes from the type.
///
/// Arrow types map as [`schema_of`] maps them the other way, and the types other tools
/// write as their canonical ones ([`crate::foreign`]):
///
/// | Arrow type | NumPy dtype |
/// |---|---|
/// | Boolean | `\|b1` |
/// | Int8 ... Int64, UInt8 ... UInt64, Float16/32/64 | `\|i1` ... `<i8`, `\|u1` ... `<u8`, `<f2`/`<f4`/`<f8` |
/// | Timestamp, Duration (any time zone) | `<M8[unit]`, `<m8[unit]` |
/// | Date32, Date64 | `<M8[D]`, `<M8[ms]` |
/// | Time32, Time64 | `<m8[unit]`: the time since midnight |
/// | Decimal32/64/128/256 | `<f8`: the nearest double |
/// | Utf8, LargeUtf8, Utf8View | `<U n` |
/// | Binary, LargeBinary, BinaryView | `\|S n` |
/// | FixedSizeBinary(n) | `\|V n` |
/// | Dictionary(k, v) | v's dtype (the values, decoded) |
/// | FixedSizeList(n) | a subarray `(n,)` (a complex number when its field says so with [`DTYPE_KEY`]) |
/// | Struct | a packed record |
///
/// Lists of variable length (List, LargeList, ListView, LargeListView) become subarrays
/// whose length comes from their rows, which a schema does not have: give the schema of a
/// batch cast by [`crate::foreign::canonical_batch`] (the writers do that).
///
/// # Errors
/// [`ErrorKind::UnsupportedDtype`] for a column of another type (variable-length lists,
/// unions, maps, ...).
pub fn natural_dtype(schema: &Schema, widths: &[usize]) -> Result<DType> {
    let mut fields = Vec::with_capacity(schema.fields().len());
    for (i, f) in schema.fields().iter().enumerate() {
        if f.name() == RESIDUE && f.metadata().contains_key(RESIDUE_KEY) {
            continue;
        }
        fields.push((f.name().clone(), dtype_of_field(f, widths.get(i).copied().unwrap_or(1))?));
    }
    Ok(DType::Record(Record::packed(fields)?))
}

/// The dtype of one Arrow field: its [`DTYPE_KEY`] when present and fitting its type, else
/// from its type (a foreign type as its canonical one, see [`crate::foreign`]).
fn dtype_of_field(field: &Field, width: usize) -> Result<DType> {
    let Some(ty) = crate::foreign::canonical_type(field.data_type()) else {
        return Err(ErrorKind::UnsupportedDtype {
            descr: format!("Arrow {} (column '{}')", field.data_type(), field.name()),
            reason: "a list's length comes from its rows: the writers take it from the first row".into(),
        }
        .into());
    };
    if let Some(hint) = dtype_hint(field) {
        return Ok(hint);
    }
    let le = ByteOrder::Little;
    let scalar = |ty| Ok(DType::Scalar(Scalar::new(ty, le)));
    let time = |u: &ArrowUnit| {
        npy_core::dtype::DateUnit::new(match u {
            ArrowUnit::Second => TimeUnit::Seconds,
            ArrowUnit::Millisecond => TimeUnit::Milliseconds,
            ArrowUnit::Microsecond => TimeUnit::Microseconds,
            ArrowUnit::Nanosecond => TimeUnit::Nanoseconds,
        })
    };
    match &ty {
        DataType::Boolean => scalar(ScalarType::Bool),
        DataType::Int8 => scalar(ScalarType::Int(1)),
        DataType::Int16 => scalar(ScalarType::Int(2)),
        DataType::Int32 => scalar(ScalarType::Int(4)),
        DataType::Int64 => scalar(ScalarType::Int(8)),
        DataType::UInt8 => scalar(ScalarType::UInt(1)),
        DataType::UInt16 => scalar(ScalarType::UInt(2)),
        DataType::UInt32 => scalar(ScalarType::UInt(4)),
        DataType::UInt64 => scalar(ScalarType::UInt(8)),
        DataType::Float16 => scalar(ScalarType::Float(2)),
        DataType::Float32 => scalar(ScalarType::Float(4)),
        DataType::Float64 => scalar(ScalarType::Float(8)),
        DataType::Timestamp(u, _) => scalar(ScalarType::DateTime(time(u))),
        DataType::Duration(u) => scalar(ScalarType::TimeDelta(time(u))),
        DataType::Date32 => scalar(ScalarType::DateTime(npy_core::dtype::DateUnit::new(TimeUnit::Days))),
        DataType::Binary => scalar(ScalarType::Bytes(width)),
        DataType::Utf8 => scalar(ScalarType::Unicode(width)),
        DataType::FixedSizeBinary(n) => scalar(ScalarType::Void(*n as usize)),
        DataType::FixedSizeList(item, n) => {
            let base = dtype_of_field(item, width)?;
            // Nested lists are one subarray of several dims, as NumPy folds them.
            let (base, mut shape) = match base {
                DType::SubArray(a) => (a.base().clone(), a.shape().to_vec()),
                other => (other, Vec::new()),
            };
            shape.insert(0, *n as usize);
            DType::subarray(base, shape)
        }
        DataType::Struct(fields) => {
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                out.push((f.name().clone(), dtype_of_field(f, width)?));
            }
            Ok(DType::Record(Record::packed(out)?))
        }
        other => Err(ErrorKind::UnsupportedDtype {
            descr: format!("Arrow {other} (column '{}')", field.name()),
            reason: "no NumPy dtype holds it".into(),
        }
        .into()),
    }
}

/// The dtype a field's [`DTYPE_KEY`] gives, when it parses and its Arrow type (either form
/// of `M8[D]`) holds values as the field's (canonical) type does: a tool that changed the
/// column may have kept a stale one.
pub(crate) fn dtype_hint(field: &Field) -> Option<DType> {
    let hint = field.metadata().get(DTYPE_KEY)?.parse::<DType>().ok()?;
    let ty = crate::foreign::canonical_type(field.data_type())?;
    let fits = |days| node_of(&hint, days).is_ok_and(|n| same_layout(&n.data_type(), &ty));
    (fits(false) || fits(true)).then_some(hint)
}

/// The tensor shape of a field with the `arrow.fixed_shape_tensor` extension, if it has it
/// and it agrees with the field's list length (a tool may have changed the column and kept
/// the metadata: then the field is read as the FixedSizeList it is).
fn tensor_shape(field: &Field) -> Result<Option<Vec<usize>>> {
    if field.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) != Some(TENSOR_EXTENSION) {
        return Ok(None);
    }
    let text = field.metadata().get(EXTENSION_METADATA_KEY).map_or("", String::as_str);
    let value: serde_json::Value = serde_json::from_str(text).map_err(|_| bad_meta(EXTENSION_METADATA_KEY, text))?;
    let shape = value
        .get("shape")
        .and_then(|s| serde_json::from_value::<Vec<usize>>(s.clone()).ok())
        .ok_or_else(|| bad_meta(EXTENSION_METADATA_KEY, text))?;
    if value.get("permutation").is_some() {
        return Err(bad_meta(EXTENSION_METADATA_KEY, "a permutation (only C-order tensors are read)"));
    }
    match field.data_type() {
        DataType::FixedSizeList(_, n)
            if shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) != Some(*n as usize) =>
        {
            Ok(None)
        }
        _ => Ok(Some(shape)),
    }
}

/// `{"shape":[3,4]}`: the canonical extension's metadata for rows of this shape.
fn tensor_metadata(shape: &[usize]) -> String {
    serde_json::json!({ "shape": shape }).to_string()
}

/// The tree of one column of this dtype.
fn node_of(dtype: &DType, days: bool) -> Result<Node> {
    Ok(match dtype {
        DType::Scalar(s) => match s.ty() {
            ScalarType::Complex(n @ (8 | 16)) => {
                let half = n as usize / 2;
                let part = Scalar::new(ScalarType::Float(half as u8), s.order());
                let item = Arc::new(Field::new(ITEM, leaf_type(part, Leaf::Primitive), false));
                Node::List { len: 2, stride: half, item: Box::new(Node::Leaf(part, Leaf::Primitive)), field: item }
            }
            ScalarType::Object => return Err(unsupported(dtype, "object fields hold Python objects")),
            _ => {
                let leaf = leaf_of(*s, days);
                if leaf == Leaf::Raw {
                    checked_i32(s.itemsize(), dtype)?;
                }
                Node::Leaf(*s, leaf)
            }
        },
        DType::Record(r) => {
            let mut children = Vec::with_capacity(r.fields().len());
            let mut fields = Vec::with_capacity(r.fields().len());
            for f in r.fields() {
                let node = node_of(&f.dtype, days)?;
                fields.push(with_meta(
                    Field::new(f.name.clone(), node.data_type(), true),
                    field_metadata(&f.dtype, days),
                ));
                children.push((f.offset, node));
            }
            Node::Struct(children, fields.into())
        }
        DType::SubArray(a) => {
            let (first, rest) = a.shape().split_first().expect("a subarray has dims");
            let inner = DType::subarray(a.base().clone(), rest.to_vec())?;
            let item_node = node_of(&inner, days)?;
            checked_i32(*first, dtype)?;
            let item = Arc::new(with_meta(Field::new(ITEM, item_node.data_type(), true), field_metadata(&inner, days)));
            Node::List { len: *first, stride: inner.itemsize(), item: Box::new(item_node), field: item }
        }
    })
}

fn leaf_of(s: Scalar, days_as_int64: bool) -> Leaf {
    match s.ty() {
        ScalarType::Bool | ScalarType::Int(_) | ScalarType::UInt(_) => Leaf::Primitive,
        ScalarType::Float(2 | 4 | 8) => Leaf::Primitive,
        ScalarType::DateTime(u) if u.unit == TimeUnit::Days && u.multiple == 1 && !days_as_int64 => Leaf::Date32,
        ScalarType::DateTime(_) | ScalarType::TimeDelta(_) => Leaf::Time,
        ScalarType::Bytes(_) => Leaf::Bytes,
        ScalarType::Unicode(_) => Leaf::Text,
        _ => Leaf::Raw,
    }
}

/// The Arrow unit of a datetime unit Arrow has (`s`, `ms`, `us`, `ns`, multiple 1).
pub(crate) fn arrow_unit(s: Scalar) -> Option<ArrowUnit> {
    let (ScalarType::DateTime(u) | ScalarType::TimeDelta(u)) = s.ty() else { return None };
    if u.multiple != 1 {
        return None;
    }
    Some(match u.unit {
        TimeUnit::Seconds => ArrowUnit::Second,
        TimeUnit::Milliseconds => ArrowUnit::Millisecond,
        TimeUnit::Microseconds => ArrowUnit::Microsecond,
        TimeUnit::Nanoseconds => ArrowUnit::Nanosecond,
        _ => return None,
    })
}

fn leaf_type(s: Scalar, leaf: Leaf) -> DataType {
    match (leaf, s.ty()) {
        (Leaf::Primitive, ScalarType::Bool) => DataType::Boolean,
        (Leaf::Primitive, ScalarType::Int(1)) => DataType::Int8,
        (Leaf::Primitive, ScalarType::Int(2)) => DataType::Int16,
        (Leaf::Primitive, ScalarType::Int(4)) => DataType::Int32,
        (Leaf::Primitive, ScalarType::Int(_)) => DataType::Int64,
        (Leaf::Primitive, ScalarType::UInt(1)) => DataType::UInt8,
        (Leaf::Primitive, ScalarType::UInt(2)) => DataType::UInt16,
        (Leaf::Primitive, ScalarType::UInt(4)) => DataType::UInt32,
        (Leaf::Primitive, ScalarType::UInt(_)) => DataType::UInt64,
        (Leaf::Primitive, ScalarType::Float(2)) => DataType::Float16,
        (Leaf::Primitive, ScalarType::Float(4)) => DataType::Float32,
        (Leaf::Primitive, _) => DataType::Float64,
        (Leaf::Time, ScalarType::DateTime(_)) => match arrow_unit(s) {
            Some(u) => DataType::Timestamp(u, None),
            None => DataType::Int64,
        },
        (Leaf::Time, _) => match arrow_unit(s) {
            Some(u) => DataType::Duration(u),
            None => DataType::Int64,
        },
        (Leaf::Date32, _) => DataType::Date32,
        (Leaf::Bytes, _) => DataType::Binary,
        (Leaf::Text, _) => DataType::Utf8,
        (Leaf::Raw, _) => DataType::FixedSizeBinary(s.itemsize() as i32),
    }
}

/// The runs of an element's bytes no column may carry exactly, in order: padding (gaps
/// between and after a record's fields), `b1` bytes (NumPy reads any nonzero byte as True)
/// and `U` elements (NumPy keeps code units that are not chars; Utf8 cannot).
fn residue_slots(dtype: &DType) -> Vec<Slot> {
    fn padding(from: usize, to: usize, out: &mut Vec<Slot>) {
        if to > from {
            out.push(Slot { at: from, len: to - from, kind: SlotKind::Padding });
        }
    }
    fn walk(dtype: &DType, at: usize, out: &mut Vec<Slot>) {
        match dtype {
            DType::Scalar(s) => match s.ty() {
                ScalarType::Bool => out.push(Slot { at, len: 1, kind: SlotKind::Bool }),
                ScalarType::Unicode(_) if s.itemsize() > 0 => {
                    out.push(Slot { at, len: s.itemsize(), kind: SlotKind::Text(s.order()) })
                }
                _ => {}
            },
            DType::SubArray(a) => {
                let size = a.base().itemsize();
                for i in 0..a.len() {
                    walk(a.base(), at + i * size, out);
                }
            }
            DType::Record(r) => {
                // Padding is what no field covers (fields may come in any offset order).
                let mut spans: Vec<(usize, usize)> =
                    r.fields().iter().map(|f| (f.offset, f.offset + f.dtype.itemsize())).collect();
                spans.sort_unstable();
                let mut end = 0;
                for (from, to) in spans {
                    padding(at + end, at + from, out);
                    end = end.max(to);
                }
                padding(at + end, at + r.itemsize(), out);
                for f in r.fields() {
                    walk(&f.dtype, at + f.offset, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(dtype, 0, &mut out);
    out.sort_unstable_by_key(|s| s.at);
    out
}

/// [`DTYPE_KEY`] for the dtypes whose Arrow type does not say them alone.
fn field_metadata(dtype: &DType, days_as_int64: bool) -> Option<HashMap<String, String>> {
    let DType::Scalar(s) = dtype else { return None };
    let needs = match s.ty() {
        ScalarType::Complex(_) => true,
        ScalarType::Float(n) => n > 8,
        ScalarType::DateTime(_) | ScalarType::TimeDelta(_) => {
            arrow_unit(*s).is_none() && leaf_of(*s, days_as_int64) != Leaf::Date32
        }
        _ => false,
    };
    needs.then(|| HashMap::from([(DTYPE_KEY.to_string(), s.type_str())]))
}

fn with_meta(field: Field, meta: Option<HashMap<String, String>>) -> Field {
    match meta {
        Some(m) => field.with_metadata(m),
        None => field,
    }
}

fn checked_i32(n: usize, dtype: &DType) -> Result<i32> {
    i32::try_from(n)
        .map_err(|_| unsupported(dtype, &format!("{n} values in one Arrow list or binary is over i32::MAX")))
}

fn unsupported(dtype: &DType, reason: &str) -> Error {
    ErrorKind::UnsupportedDtype { descr: dtype.descr(), reason: reason.to_string() }.into()
}

fn bad_meta(key: &str, value: &str) -> Error {
    ErrorKind::Usage { reason: format!("schema metadata '{key}': cannot use {value:?}") }.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(descr: &str, shape: Vec<usize>) -> Layout {
        Layout::new(&Header::new(descr.parse().unwrap(), shape), None).unwrap()
    }

    #[test]
    fn rows_of_no_bytes_are_bounded() {
        let new = |descr: &str, shape: Vec<usize>| Layout::new(&Header::new(descr.parse().unwrap(), shape), None);
        for (descr, row) in
            [("|S0", vec![]), ("<U0", vec![]), ("[]", vec![]), ("[('a', '<i4', (0,))]", vec![]), ("<f8", vec![0])]
        {
            let at = |rows: usize| [vec![rows], row.clone()].concat();
            assert_eq!(new(descr, at(MAX_EMPTY_ROWS)).unwrap().rows(), MAX_EMPTY_ROWS, "{descr}");
            let e = new(descr, at(MAX_EMPTY_ROWS + 1)).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{descr}: {e}");
            assert!(e.to_string().contains("2147483648 rows that take no bytes"), "{e}");
        }
        // Rows that take bytes are bounded by the file.
        assert_eq!(new("<f8", vec![MAX_EMPTY_ROWS + 1]).unwrap().rows(), MAX_EMPTY_ROWS + 1);
    }

    #[test]
    fn records_map_to_one_column_per_field_without_padding() {
        let l = layout("[('a', '<i4'), ('', '|V4'), ('b', [('c', '>f8'), ('d', ('<u2', (2, 3)))])]", vec![5]);
        let s = l.schema();
        assert_eq!(s.fields().len(), 2);
        assert_eq!(s.field(0).data_type(), &DataType::Int32);
        let DataType::Struct(inner) = s.field(1).data_type() else { panic!("{s:?}") };
        assert_eq!(inner[0].data_type(), &DataType::Float64);
        let DataType::FixedSizeList(outer, 2) = inner[1].data_type() else { panic!("{inner:?}") };
        let DataType::FixedSizeList(leaf, 3) = outer.data_type() else { panic!("{outer:?}") };
        assert_eq!(leaf.data_type(), &DataType::UInt16);
    }

    #[test]
    fn scalars_and_tensors() {
        let s = layout("<c8", vec![4]).schema();
        assert_eq!(s.field(0).name(), VALUES);
        assert_eq!(s.field(0).metadata()[DTYPE_KEY], "<c8");
        let s = layout(">u2", vec![2, 3, 4]).schema();
        let f = s.field(0);
        assert_eq!(f.metadata()[EXTENSION_NAME_KEY], TENSOR_EXTENSION);
        assert_eq!(f.metadata()[EXTENSION_METADATA_KEY], r#"{"shape":[3,4]}"#);
        let DataType::FixedSizeList(item, 12) = f.data_type() else { panic!("{f:?}") };
        assert_eq!(item.data_type(), &DataType::UInt16);
        assert_eq!(s.metadata()[SHAPE_KEY], "[2,3,4]");
        assert_eq!(layout("<f8", vec![]).rows(), 1);
    }

    #[test]
    fn time_units() {
        let t = |d: &str| layout(d, vec![1]).schema().field(0).data_type().clone();
        assert_eq!(t("<M8[us]"), DataType::Timestamp(ArrowUnit::Microsecond, None));
        assert_eq!(t(">m8[s]"), DataType::Duration(ArrowUnit::Second));
        assert_eq!(t("<M8[D]"), DataType::Date32);
        assert_eq!(t("<M8[25s]"), DataType::Int64);
        assert_eq!(t("<m8[D]"), DataType::Int64);
        assert_eq!(layout("<M8", vec![1]).schema().field(0).metadata()[DTYPE_KEY], "<M8");
    }

    #[test]
    fn headers_come_back_from_metadata_or_from_the_columns() {
        let h = Header { dtype: "[('a', '>i2'), ('', '|V2')]".parse().unwrap(), fortran_order: false, shape: vec![7] };
        let l = Layout::new(&h, Some(Version::V2_0)).unwrap();
        assert_eq!(header_of(&l.schema(), 0, &[]).unwrap(), (h, Some(Version::V2_0)));
        let bare = Schema::new(l.schema().fields().clone());
        let (natural, v) = header_of(&bare, 3, &[]).unwrap();
        assert_eq!((natural.dtype.descr(), natural.shape, v), ("[('a', '<i2')]".to_string(), vec![3], None));
        let tensor = Schema::new(layout("<f4", vec![2, 3]).schema().fields().clone());
        let (h, _) = header_of(&tensor, 5, &[]).unwrap();
        assert_eq!((h.dtype.descr(), h.shape), ("'<f4'".to_string(), vec![5, 3]));
        let text = Schema::new(vec![Field::new("s", DataType::Utf8, true), Field::new("b", DataType::Binary, true)]);
        assert_eq!(natural_dtype(&text, &[3, 2]).unwrap().descr(), "[('s', '<U3'), ('b', '|S2')]");
        let huge = Schema::new_with_metadata(
            vec![Field::new("values", DataType::Int8, true)],
            HashMap::from([
                (DESCR_KEY.to_string(), "'|i1'".to_string()),
                (SHAPE_KEY.to_string(), format!("[{}, {}, 4]", usize::MAX / 2, usize::MAX / 2)),
            ]),
        );
        // Metadata that cannot be the columns' header is ignored: the columns say what they are.
        let (h, _) = header_of(&huge, 4, &[]).unwrap();
        assert_eq!((h.dtype.descr(), h.shape), ("'|i1'".to_string(), vec![4]));
        let union = Schema::new(vec![Field::new("l", DataType::Interval(arrow_schema::IntervalUnit::DayTime), true)]);
        assert!(matches!(natural_dtype(&union, &[]).unwrap_err().kind(), ErrorKind::UnsupportedDtype { .. }));
    }
}
