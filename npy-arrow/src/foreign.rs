//! Arrow types other tools write, mapped to the ones this crate writes as NumPy types.
//!
//! pyarrow, pandas, polars and DuckDB write Arrow and Parquet data in types that
//! [`crate::schema_of`] never makes: large and view strings, dictionaries (categoricals),
//! variable-length lists, times of day, decimals. The Arrow → NumPy writers
//! ([`crate::BatchWriter`], [`crate::NpzBatchWriter`] and the `.npy`/`.npz` targets of
//! `formats`) take them all: each batch is first cast to the *canonical* type of each
//! column, the one [`crate::schema_of`] gives for the NumPy type it stands for, and
//! [`crate::natural_dtype`] maps these foreign types as their canonical ones.
//!
//! | Arrow type | Canonical Arrow type | NumPy dtype |
//! |---|---|---|
//! | LargeUtf8, Utf8View | Utf8 | `<U n`, n the longest value (characters) |
//! | LargeBinary, BinaryView | Binary | `\|S n`, n the longest value (bytes) |
//! | Dictionary(k, v) | v's, decoded | v's |
//! | List, LargeList, ListView, LargeListView of n items in every row | FixedSizeList(n) | a subarray `(n,)` of the items' dtype (lists of lists: `(n, m, ...)`) |
//! | Date64 | Timestamp(ms) | `<M8[ms]` |
//! | Time32(s), Time32(ms), Time64(us), Time64(ns) | Duration of that unit | `<m8[s]`, `<m8[ms]`, `<m8[us]`, `<m8[ns]`: the time since midnight |
//! | Decimal32, Decimal64, Decimal128, Decimal256 | Float64 | `<f8`: the nearest double |
//!
//! These types are also mapped inside Structs (records) and FixedSizeLists (subarrays).
//! A Parquet LIST column read without an Arrow schema in the file (DuckDB's `FLOAT[8]`) is
//! a List, and maps so.
//!
//! - **Lists** take their length from the first row written: a row of another length is an
//!   error naming the column and the row (a NumPy subarray has one length). A file with no
//!   rows gives a subarray of length 0.
//! - **Decimals** become the double nearest to their exact value (correctly rounded): a
//!   double holds 15 to 17 significant digits, so decimals with more (Decimal128 has up to
//!   38) lose the rest, and values beyond ±1.8e308 (Decimal256 only) become ±inf.
//! - **Nulls** follow the rule of the NumPy type they become: NaN in float columns (so in
//!   decimal columns), NaT in datetime and timedelta columns (dates, times), an error naming
//!   the element elsewhere. A null dictionary key is a null of the values' type. A null
//!   *list* row is an error naming the column and the row; a null *item* follows the
//!   items' rule.
//!
//! # Examples
//! ```
//! use std::sync::Arc;
//! use arrow_array::builder::{ListBuilder, Float32Builder};
//! use arrow_array::{LargeStringArray, RecordBatch};
//! use arrow_schema::DataType;
//!
//! let mut list = ListBuilder::new(Float32Builder::new());
//! list.append_value([Some(1.0), Some(2.0)]);
//! list.append_value([Some(3.0), None]);
//! let batch = RecordBatch::try_from_iter([
//!     ("name", Arc::new(LargeStringArray::from(vec!["a", "bc"])) as _),
//!     ("xy", Arc::new(list.finish()) as _),
//! ])?;
//! let canonical = npy_arrow::foreign::canonical_batch(&batch)?;
//! assert_eq!(canonical.column(0).data_type(), &DataType::Utf8);
//! assert!(matches!(canonical.column(1).data_type(), DataType::FixedSizeList(_, 2)));
//! let dtype = npy_arrow::natural_dtype(&canonical.schema(), &[2, 1])?;
//! assert_eq!(dtype.descr(), "[('name', '<U2'), ('xy', '<f4', (2,))]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type, DurationMicrosecondType, DurationMillisecondType,
    DurationNanosecondType, DurationSecondType, Float64Type, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType,
};
use arrow_array::RecordBatchOptions;
use arrow_array::{Array, ArrayRef, FixedSizeListArray, GenericListArray, OffsetSizeTrait, RecordBatch, StructArray};
use arrow_schema::{DataType, FieldRef, Fields, Schema, SchemaRef, TimeUnit};
use npy_core::{ErrorKind, Result};

use crate::error::arrow_error;

/// The canonical type of `ty` (see the [module docs](self)): `ty` itself when it is one
/// this crate writes as it is, `None` when it holds a variable-length list, whose length
/// only the rows say.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use arrow_schema::{DataType, Field, TimeUnit};
/// use npy_arrow::foreign::canonical_type;
///
/// let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8View));
/// assert_eq!(canonical_type(&dict), Some(DataType::Utf8));
/// assert_eq!(canonical_type(&DataType::Time64(TimeUnit::Nanosecond)), Some(DataType::Duration(TimeUnit::Nanosecond)));
/// let list = DataType::List(Arc::new(Field::new("item", DataType::Float32, true)));
/// assert_eq!(canonical_type(&list), None);
/// ```
pub fn canonical_type(ty: &DataType) -> Option<DataType> {
    Some(match ty {
        DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::LargeBinary | DataType::BinaryView => DataType::Binary,
        DataType::Dictionary(_, values) => return canonical_type(values),
        DataType::Date64 => DataType::Timestamp(TimeUnit::Millisecond, None),
        DataType::Time32(u) | DataType::Time64(u) => DataType::Duration(*u),
        DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..) | DataType::Decimal256(..) => {
            DataType::Float64
        }
        DataType::List(_) | DataType::LargeList(_) | DataType::ListView(_) | DataType::LargeListView(_) => return None,
        DataType::FixedSizeList(item, n) => DataType::FixedSizeList(canonical_field(item)?, *n),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(canonical_field).collect::<Option<Fields>>()?),
        other => other.clone(),
    })
}

/// `field` with its canonical type ([`canonical_type`]), name, nullability and metadata
/// kept.
fn canonical_field(field: &FieldRef) -> Option<FieldRef> {
    let ty = canonical_type(field.data_type())?;
    Some(if &ty == field.data_type() { field.clone() } else { Arc::new(field.as_ref().clone().with_data_type(ty)) })
}

/// Whether `ty` is canonical: nothing in it is mapped.
pub(crate) fn is_canonical(ty: &DataType) -> bool {
    canonical_type(ty).as_ref() == Some(ty)
}

/// The batch with every column of a foreign type cast to its canonical type (see the
/// [module docs](self)); lists take the length of their first row.
///
/// # Errors
/// [`ErrorKind::InvalidValue`] naming the column and the row (the element) for a null list
/// row, or a list of another length than the first row's; a string column over the 2 GiB a Utf8
/// column holds.
pub fn canonical_batch(batch: &RecordBatch) -> Result<RecordBatch> {
    Ok(Canonical::new(batch.schema()).batch(batch, 0)?.into_owned())
}

/// One array cast to its canonical type, lists taking the length of their first row.
pub(crate) fn canonical_array(array: &dyn Array) -> Result<ArrayRef> {
    let at = At { column: String::new(), first_row: 0, per_row: 1 };
    canonical(&arrow_array::make_array(array.to_data()), None, &at)
}

/// Casts the batches of one stream to their canonical types, keeping the list lengths of
/// the first batch with rows for the rest and counting rows, so that errors name the row
/// of the whole stream.
#[derive(Debug, Clone)]
pub(crate) struct Canonical {
    /// The schema the batches come in.
    schema: SchemaRef,
    /// Whether some column is of a foreign type.
    foreign: bool,
    /// The canonical schema, once known: at once without variable lists, else at the first
    /// batch with rows.
    target: Option<SchemaRef>,
}

impl Canonical {
    pub(crate) fn new(schema: SchemaRef) -> Canonical {
        let foreign = !schema.fields().iter().all(|f| is_canonical(f.data_type()));
        let target = if foreign {
            let fields = schema.fields().iter().map(canonical_field).collect::<Option<Fields>>();
            fields.map(|f| Arc::new(Schema::new_with_metadata(f, schema.metadata().clone())))
        } else {
            Some(schema.clone())
        };
        Canonical { schema, foreign, target }
    }

    /// Whether the canonical schema waits for a batch with rows (a column holds lists of
    /// variable length).
    pub(crate) fn needs_rows(&self) -> bool {
        self.target.is_none()
    }

    /// The canonical schema: known, or with lists of length 0 before any row.
    pub(crate) fn schema(&self) -> Result<SchemaRef> {
        if let Some(target) = &self.target {
            return Ok(target.clone());
        }
        let empty = RecordBatch::new_empty(self.schema.clone());
        Ok(self.clone().batch(&empty, 0)?.schema())
    }

    /// `batch` in canonical types; `first_row` is the number of its first row in the
    /// stream (for errors).
    pub(crate) fn batch<'a>(&mut self, batch: &'a RecordBatch, first_row: usize) -> Result<Cow<'a, RecordBatch>> {
        if !self.foreign && batch.schema().fields().iter().all(|f| is_canonical(f.data_type())) {
            return Ok(Cow::Borrowed(batch));
        }
        let mut fields = Vec::with_capacity(batch.num_columns());
        let mut columns = Vec::with_capacity(batch.num_columns());
        for (i, (field, column)) in batch.schema().fields().iter().zip(batch.columns()).enumerate() {
            let want = self.target.as_ref().and_then(|t| t.fields().get(i)).map(|f| f.data_type());
            let at = At { column: field.name().clone(), first_row, per_row: 1 };
            let column = canonical(column, want, &at)?;
            fields.push(Arc::new(field.as_ref().clone().with_data_type(column.data_type().clone())));
            columns.push(column);
        }
        let schema = Arc::new(Schema::new_with_metadata(fields, batch.schema().metadata().clone()));
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        let out = RecordBatch::try_new_with_options(schema.clone(), columns, &options).map_err(arrow_error)?;
        if self.target.is_none() && batch.num_rows() > 0 {
            self.target = Some(schema);
        }
        Ok(Cow::Owned(out))
    }
}

/// Where an array lies in the stream, for errors: its column (a path for nested fields),
/// the stream's row of its first element, and its elements per row.
struct At {
    column: String,
    first_row: usize,
    per_row: usize,
}

impl At {
    fn error(&self, index: usize, what: &str) -> npy_core::Error {
        let row = self.first_row + index / self.per_row.max(1);
        let reason = format!("column '{}', row {row}: {what}", self.column);
        ErrorKind::InvalidValue { index: row, reason }.into()
    }

    fn nested(&self, name: &str, per_row: usize) -> At {
        At { column: format!("{}.{name}", self.column), first_row: self.first_row, per_row }
    }
}

/// `array` cast to its canonical type; `want`, when known, is that type (the list lengths
/// of earlier batches).
fn canonical(array: &ArrayRef, want: Option<&DataType>, at: &At) -> Result<ArrayRef> {
    let cast = |to: &DataType| arrow_cast::cast(array, to).map_err(arrow_error);
    Ok(match array.data_type() {
        ty if is_canonical(ty) => array.clone(),
        DataType::LargeUtf8 | DataType::Utf8View => cast(&DataType::Utf8)?,
        DataType::LargeBinary | DataType::BinaryView => cast(&DataType::Binary)?,
        // Decoded: each row its value, a null key a null (take on the values).
        DataType::Dictionary(_, values) => canonical(&cast(values)?, want, at)?,
        DataType::Date64 => cast(&DataType::Timestamp(TimeUnit::Millisecond, None))?,
        DataType::Time32(TimeUnit::Second) => {
            Arc::new(array.as_primitive::<Time32SecondType>().unary::<_, DurationSecondType>(i64::from))
        }
        DataType::Time32(_) => {
            Arc::new(array.as_primitive::<Time32MillisecondType>().unary::<_, DurationMillisecondType>(i64::from))
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            Arc::new(array.as_primitive::<Time64MicrosecondType>().unary::<_, DurationMicrosecondType>(|t| t))
        }
        DataType::Time64(_) => {
            Arc::new(array.as_primitive::<Time64NanosecondType>().unary::<_, DurationNanosecondType>(|t| t))
        }
        DataType::Decimal32(_, s) => {
            let s = *s;
            Arc::new(array.as_primitive::<Decimal32Type>().unary::<_, Float64Type>(|v| nearest(i128::from(v), s)))
        }
        DataType::Decimal64(_, s) => {
            let s = *s;
            Arc::new(array.as_primitive::<Decimal64Type>().unary::<_, Float64Type>(|v| nearest(i128::from(v), s)))
        }
        DataType::Decimal128(_, s) => {
            let s = *s;
            Arc::new(array.as_primitive::<Decimal128Type>().unary::<_, Float64Type>(|v| nearest(v, s)))
        }
        DataType::Decimal256(_, s) => {
            let s = *s;
            Arc::new(array.as_primitive::<Decimal256Type>().unary::<_, Float64Type>(|v| match v.to_i128() {
                Some(v) => nearest(v, s),
                None => parse_nearest(&v.to_string(), s),
            }))
        }
        // Views are rebuilt as lists (their rows may overlap or come in any order).
        DataType::ListView(item) => canonical(&cast(&DataType::List(item.clone()))?, want, at)?,
        DataType::LargeListView(item) => canonical(&cast(&DataType::LargeList(item.clone()))?, want, at)?,
        DataType::List(item) => fixed(array.as_list::<i32>(), item, want, at)?,
        DataType::LargeList(item) => fixed(array.as_list::<i64>(), item, want, at)?,
        DataType::FixedSizeList(item, n) => {
            let list = array.as_fixed_size_list();
            let want_item = match want {
                Some(DataType::FixedSizeList(w, _)) => Some(w.data_type()),
                _ => None,
            };
            let n = *n;
            let per_row = at.per_row * (n.max(1) as usize);
            let values = canonical(list.values(), want_item, &at.nested(item.name(), per_row))?;
            let field = Arc::new(item.as_ref().clone().with_data_type(values.data_type().clone()));
            let nulls = list.nulls().cloned();
            Arc::new(FixedSizeListArray::try_new_with_length(field, n, values, nulls, list.len()).map_err(arrow_error)?)
        }
        DataType::Struct(fields) => {
            let record = array.as_struct();
            let mut out_fields = Vec::with_capacity(fields.len());
            let mut columns = Vec::with_capacity(fields.len());
            for (i, (f, c)) in fields.iter().zip(record.columns()).enumerate() {
                let want_child = match want {
                    Some(DataType::Struct(w)) => w.get(i).map(|w| w.data_type()),
                    _ => None,
                };
                let c = canonical(c, want_child, &at.nested(f.name(), at.per_row))?;
                out_fields.push(Arc::new(f.as_ref().clone().with_data_type(c.data_type().clone())));
                columns.push(c);
            }
            let nulls = record.nulls().cloned();
            Arc::new(
                StructArray::try_new_with_length(out_fields.into(), columns, nulls, record.len())
                    .map_err(arrow_error)?,
            )
        }
        // Maps, unions and the like: left for the dtype mapping to refuse, by name.
        _ => array.clone(),
    })
}

/// A list column whose rows all have one length as a FixedSizeList of that length: the
/// length `want` has, else the first row's.
fn fixed<O: OffsetSizeTrait>(
    list: &GenericListArray<O>,
    item: &FieldRef,
    want: Option<&DataType>,
    at: &At,
) -> Result<ArrayRef> {
    if let Some(nulls) = list.logical_nulls() {
        if let Some(i) = nulls.iter().position(|valid| !valid) {
            return Err(at.error(i, "a null list, which a NumPy subarray cannot hold"));
        }
    }
    let (want_len, want_item) = match want {
        Some(DataType::FixedSizeList(w, n)) => (Some(*n as usize), Some(w.data_type())),
        _ => (None, None),
    };
    let offsets = list.value_offsets();
    let lengths = offsets.windows(2).map(|w| (w[1] - w[0]).as_usize());
    let len = want_len.or_else(|| lengths.clone().next()).unwrap_or(0);
    if let Some((i, n)) = lengths.enumerate().find(|&(_, n)| n != len) {
        let what = format!("a list of {n} items where the rows before have {len} (a NumPy subarray has one length)");
        return Err(at.error(i, &what));
    }
    let size = i32::try_from(len).map_err(|_| at.error(0, &format!("a list of {len} items, over i32::MAX")))?;
    let first = offsets.first().map_or(0, |o| o.as_usize());
    let values = list.values().slice(first, len * list.len());
    let values = canonical(&values, want_item, &at.nested(item.name(), at.per_row * len.max(1)))?;
    let field = Arc::new(item.as_ref().clone().with_data_type(values.data_type().clone()));
    let array = FixedSizeListArray::try_new_with_length(field, size, values, None, list.len()).map_err(arrow_error)?;
    Ok(Arc::new(array))
}

/// Exact powers of ten as doubles: 10^22 is the largest a double holds exactly.
const EXACT_POWERS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// The double nearest to `v * 10^-scale`: one correctly rounded operation on exact
/// operands when it can be, else the correctly rounded parse of its decimal text.
fn nearest(v: i128, scale: i8) -> f64 {
    const EXACT: i128 = 1 << 53;
    if (-EXACT..=EXACT).contains(&v) {
        let power = EXACT_POWERS.get(usize::from(scale.unsigned_abs()));
        match power {
            Some(p) if scale >= 0 => return v as f64 / p,
            Some(p) => return v as f64 * p,
            None => {}
        }
    }
    parse_nearest(&v.to_string(), scale)
}

/// The double nearest to `digits * 10^-scale` (`digits` an integer's decimal text).
fn parse_nearest(digits: &str, scale: i8) -> f64 {
    format!("{digits}e{}", -i32::from(scale)).parse().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_the_nearest_double() {
        assert_eq!(nearest(12345, 2), 123.45);
        assert_eq!(nearest(-1, 0), -1.0);
        assert_eq!(nearest(7, -3), 7000.0);
        assert_eq!(nearest(1, 30), 1e-30);
        // 38 digits: the double nearest to the decimal, not to a rounded quotient.
        let big = 12_345_678_901_234_567_890_123_456_789_012_345_678_i128;
        assert_eq!(nearest(big, 10), "1234567890123456789012345678.9012345678".parse::<f64>().unwrap());
        assert_eq!(nearest((1 << 53) + 1, 1), "900719925474099.3".parse::<f64>().unwrap());
        assert_eq!(parse_nearest("1", -127), 1e127);
    }
}
