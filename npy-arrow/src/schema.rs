//! The dtype model ↔ Arrow schemas.
//!
//! [`schema_of`] maps a `.npy` header (dtype, order, shape) to the Arrow schema its record
//! batches have, and keeps the header in the schema's metadata ([`DESCR_KEY`],
//! [`FORTRAN_ORDER_KEY`], [`SHAPE_KEY`], [`VERSION_KEY`]) so that writing the batches back
//! gives the original file. [`header_of`] goes back: from that metadata when present, else
//! from the columns' types (the natural packed NumPy dtype, see [`natural_dtype`]).
//!
//! The mapping is compiled once into a [`Layout`]: for each column, a tree
//! that says where each value sits in a record's bytes. `read` and `write` walk it, one
//! pass per column over a chunk of records.

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit as ArrowUnit};
use npy_core::dtype::{ByteOrder, DType, Record, Scalar, ScalarType, TimeUnit};
use npy_core::header::{Header, Version};
use npy_core::{Error, ErrorKind, Result};

use crate::layout::node::{node_of, unsupported};
use crate::layout::Layout;
pub use crate::layout::{
    DESCR_KEY, DTYPE_KEY, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, FORTRAN_ORDER_KEY, ITEM, MAX_EMPTY_ROWS, RESIDUE,
    RESIDUE_KEY, SHAPE_KEY, TENSOR_EXTENSION, VALUES, VERSION_KEY,
};
use crate::options::ConvertOptions;

/// NumPy's most dimensions (`NPY_MAXDIMS`), as npy-core's header parser allows.
const MAX_DIMS: usize = 64;

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
    let Ok(layout) = Layout::new_with(header, None, &options_of(schema)) else { return false };
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
    let mut options = ConvertOptions::new();
    options.days_as_int64(has_int_days(&DataType::Struct(schema.fields().clone()))).residue(residue);
    options
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

fn bad_meta(key: &str, value: &str) -> Error {
    ErrorKind::Usage { reason: format!("schema metadata '{key}': cannot use {value:?}") }.into()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

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
