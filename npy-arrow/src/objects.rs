//! Object arrays as record batches ([`object_batches_with`]): arrays of text (what `np.save`
//! writes for NumPy 2's `StringDType` arrays, and plain object arrays of `str`), and
//! ragged arrays (`np.array([np.arange(3), np.arange(5)], dtype=object)`).
//!
//! An object array (`'|O'`) whose values are all `str`, `None` or a float NaN (the
//! missing values of NumPy's `StringDType(na_object=None)` or `na_object=np.nan`, and of
//! pandas' object columns) becomes one Utf8 column, `values`, with null where a value is
//! missing (LargeUtf8 when its text is over 2 GiB). A 0-d array is one row; an N-d array
//! has a row per first index, each a `FixedSizeList` of the rest of the array in C order
//! (the `arrow.fixed_shape_tensor` extension's layout, as for numeric arrays).
//!
//! A 1-d object array whose values are all 1-d ndarrays of one type (a ragged array) —
//! bool, integers, `float16/32/64`, `datetime64`, `timedelta64` (one unit), `str` or
//! `bytes` (of any widths) — becomes one List column, `values`, a row per ndarray holding
//! its elements as a 1-d array of that type converts them (Int64, Timestamp, Utf8...):
//! LargeList when the rows hold over `i32::MAX` elements in all, a null row where the
//! value is `None`. Rows of other dtypes (records, complex, long double), of other
//! shapes, of different types, or mixed with other values have no one Arrow list type:
//! they are [`ErrorKind::UnsupportedDtype`] naming the element, as is any other value
//! (an int, bytes, a list...): Arrow columns are typed, Python objects are not.
//!
//! The schema carries no `numpy.*` metadata (its `'|O'` dtype has no Arrow form): read
//! back, the column is like any other Utf8 or List column. The pickle is decoded whole,
//! within the decoder's memory budget ([`npy_core::ReadOptions::max_object_bytes`]; by
//! default 128 MiB plus 4 bytes per byte of pickle, so bounded by the file's size); the
//! column's values are no larger than the decoded values they are copied from.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, GenericListArray, GenericStringArray, RecordBatch, RecordBatchIterator,
    RecordBatchReader,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use npy_core::dtype::{ByteOrder, DType, Scalar, ScalarType};
use npy_core::header::Header;
use npy_core::object::Object;
use npy_core::{ErrorKind, NpyReader, Result};

use crate::options::ConvertOptions;
use crate::read::BatchReader;
use crate::schema::{EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, ITEM, TENSOR_EXTENSION, VALUES};

/// The batches of an object array (`'|O'`) read whole from `reader`, with `options`
/// (rows per batch, `days_as_int64`): one Utf8 column of text, or one List column of a
/// ragged array's rows. An object array of text (`str`, `None` or NaN) becomes Utf8, null
/// where a value is missing; a 1-d object array of 1-d ndarrays of one bool, integer,
/// float, datetime, timedelta, str or bytes type a List of that type, null where a value
/// is `None`. The schema has no `numpy.*` metadata: `'|O'` has no Arrow form.
///
/// # Errors
/// [`ErrorKind::UnsupportedDtype`] for any other value (naming the element), or a row of
/// more than `i32::MAX` values; the errors of [`NpyReader::read`] (a pickle the
/// restricted decoder refuses, or one over the memory budget).
///
/// # Examples
/// ```
/// use arrow_array::{Array, StringArray};
/// use npy_arrow::{object_batches_with, ConvertOptions};
/// use npy_core::object::Object;
/// use npy_core::prelude::*;
/// use npy_core::NpyReader;
///
/// let file = vec![Object::from("a"), Object::None].write_npy_to(Vec::new())?;
/// let reader = NpyReader::from_reader(&file[..])?;
/// let mut batches = object_batches_with(reader, &ConvertOptions::new())?;
/// let batch = batches.next().unwrap()?;
/// let text = batch.column(0).as_any().downcast_ref::<StringArray>().unwrap();
/// assert_eq!((text.value(0), text.is_null(1)), ("a", true));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn object_batches_with<R: Read>(
    reader: NpyReader<R>,
    options: &ConvertOptions,
) -> Result<Box<dyn RecordBatchReader + Send>> {
    let array = reader.read::<npy_core::Array<Object>>()?;
    match ragged_item(&array)? {
        Some(item) => list_batches(array, item, options),
        None => text_batches(array, options),
    }
}

/// The batches of an object array of text.
fn text_batches(array: npy_core::Array<Object>, options: &ConvertOptions) -> Result<Box<dyn RecordBatchReader + Send>> {
    let shape = array.shape().to_vec();
    let fortran = array.fortran_order() && shape.len() > 1;
    let values = array.as_slice();
    let mut text_len = 0usize;
    for (i, v) in values.iter().enumerate() {
        match v {
            Object::Str(s) => text_len = text_len.saturating_add(s.len()),
            Object::None => {}
            Object::Float(x) if x.is_nan() => {}
            other => {
                let reason = format!(
                    "element {i} (in storage order) is {} {}: only object arrays of str (None or NaN where a value is \
                     missing) convert to Arrow",
                    article(other.python_type()),
                    short(&other.repr())
                );
                return Err(ErrorKind::UnsupportedDtype { descr: "|O".to_string(), reason }.into());
            }
        }
    }
    // The values in C order, row after row.
    let in_c_order: Vec<Option<&str>> =
        (0..values.len()).map(|i| values[storage(i, &shape, fortran)].as_str()).collect();
    let column: ArrayRef = if i32::try_from(text_len).is_ok() {
        Arc::new(GenericStringArray::<i32>::from(in_c_order))
    } else {
        Arc::new(GenericStringArray::<i64>::from(in_c_order))
    };
    let rows = shape.first().copied().unwrap_or(1);
    let column = if shape.len() > 1 { rows_of(column, &shape)? } else { column };
    let field = match column.data_type() {
        DataType::FixedSizeList(..) => {
            let meta = HashMap::from([
                (EXTENSION_NAME_KEY.to_string(), TENSOR_EXTENSION.to_string()),
                (EXTENSION_METADATA_KEY.to_string(), serde_json::json!({ "shape": &shape[1..] }).to_string()),
            ]);
            Field::new(VALUES, column.data_type().clone(), false).with_metadata(meta)
        }
        other => Field::new(VALUES, other.clone(), true),
    };
    let row_bytes = text_len.checked_div(rows).unwrap_or(0).saturating_add(4 * values.len() / rows.max(1));
    Ok(batches_of(field, &column, row_bytes, options))
}

/// `column` (of `field`) cut into batches of [`ConvertOptions::batch_rows_for`] rows of
/// `row_bytes`.
fn batches_of(
    field: Field,
    column: &ArrayRef,
    row_bytes: usize,
    options: &ConvertOptions,
) -> Box<dyn RecordBatchReader + Send> {
    let schema = Arc::new(Schema::new(vec![field]));
    let (rows, per_batch) = (column.len(), options.batch_rows_for(row_bytes));
    let batches: Vec<std::result::Result<RecordBatch, ArrowError>> = (0..rows)
        .step_by(per_batch)
        .map(|start| RecordBatch::try_new(schema.clone(), vec![column.slice(start, per_batch.min(rows - start))]))
        .collect();
    Box::new(RecordBatchIterator::new(batches, schema))
}

/// The item type of a ragged array's list column: `None` when `array` is no ragged array
/// (not 1-d, or no value is an ndarray), else the one type every row converts to
/// (native byte order, the widest `str` or `bytes`).
///
/// # Errors
/// [`ErrorKind::UnsupportedDtype`] for a value of a ragged array that is not `None` or a
/// 1-d ndarray of a type shared by all rows (see the module docs).
fn ragged_item(array: &npy_core::Array<Object>) -> Result<Option<Scalar>> {
    let values = array.as_slice();
    if array.shape().len() != 1 || !values.iter().any(|v| matches!(v, Object::Array(_))) {
        return Ok(None);
    }
    let refuse = |i: usize, why: String| -> npy_core::Error {
        let reason = format!("element {i} {why}: a ragged array converts to an Arrow list column only when every row is a 1-d ndarray of one type (bool, integer, float16/32/64, datetime64, timedelta64, str or bytes), or None");
        ErrorKind::UnsupportedDtype { descr: "|O".to_string(), reason }.into()
    };
    let mut item: Option<(usize, Scalar)> = None;
    for (i, v) in values.iter().enumerate() {
        let a = match v {
            Object::None => continue,
            Object::Array(a) => a,
            other => return Err(refuse(i, format!("is {} {}", article(other.python_type()), short(&other.repr())))),
        };
        if a.shape().len() != 1 {
            return Err(refuse(i, format!("is an ndarray of shape {}", npy_core::header::shape_repr(a.shape()))));
        }
        let s = match a.dtype() {
            DType::Scalar(s) if listable(s.ty()) => *s,
            other => return Err(refuse(i, format!("is an ndarray of dtype {}", other.descr()))),
        };
        let native = Scalar::native(s.ty());
        item = match item {
            None => Some((i, native)),
            Some((first, t)) => match (t.ty(), s.ty()) {
                (ScalarType::Unicode(m), ScalarType::Unicode(n)) => {
                    Some((first, Scalar::native(ScalarType::Unicode(m.max(n)))))
                }
                (ScalarType::Bytes(m), ScalarType::Bytes(n)) => {
                    Some((first, Scalar::native(ScalarType::Bytes(m.max(n)))))
                }
                (a, b) if a == b => Some((first, t)),
                _ => {
                    let why =
                        format!("is an ndarray of dtype {} and element {first} of {}", s.type_str(), t.type_str());
                    return Err(refuse(i, why));
                }
            },
        };
    }
    Ok(item.map(|(_, t)| t))
}

/// Whether 1-d arrays of `ty` are a list column's items.
fn listable(ty: ScalarType) -> bool {
    matches!(
        ty,
        ScalarType::Bool
            | ScalarType::Int(_)
            | ScalarType::UInt(_)
            | ScalarType::Float(2 | 4 | 8)
            | ScalarType::DateTime(_)
            | ScalarType::TimeDelta(_)
            | ScalarType::Unicode(_)
            | ScalarType::Bytes(_)
    )
}

/// The batches of a ragged array whose rows all convert to `item`: one List (or
/// LargeList) column, the rows' elements converted as a 1-d array of `item` converts.
fn list_batches(
    array: npy_core::Array<Object>,
    item: Scalar,
    options: &ConvertOptions,
) -> Result<Box<dyn RecordBatchReader + Send>> {
    let rows = array.as_slice();
    let size = item.itemsize();
    let total: usize = rows.iter().map(|v| if let Object::Array(a) = v { a.len() } else { 0 }).sum();
    let mut data = Vec::with_capacity(total.saturating_mul(size));
    for v in rows {
        let Object::Array(a) = v else { continue };
        let Some(&from) = a.dtype().as_scalar() else { continue };
        let unit = from.ty().swap_unit();
        let swap = unit > 1 && from.order() != item.order() && from.order() != ByteOrder::NotApplicable;
        let from_size = from.itemsize();
        for k in 0..a.len() {
            let start = data.len();
            data.extend_from_slice(a.data().get(k * from_size..(k + 1) * from_size).unwrap_or(&[]));
            if swap {
                npy_core::scalar::swap_units(&mut data[start..], unit);
            }
            // A narrower str or bytes is padded with NULs, as NumPy widens it.
            data.resize(start + size, 0);
        }
    }
    let header = Header::new(DType::Scalar(item), vec![total]);
    let flat = npy_core::DynArray::new(header, data)?;
    let mut flat_options = ConvertOptions::new();
    flat_options.batch_rows(total.max(1)).days_as_int64(options.days_as_int64);
    let mut reader = BatchReader::from_dyn_with(flat, &flat_options)?;
    let item_type = reader.schema().field(0).data_type().clone();
    let values = match reader.next_batch()? {
        Some(batch) => batch.column(0).clone(),
        None => arrow_array::new_empty_array(&item_type),
    };
    let item_field = Arc::new(Field::new(ITEM, item_type, true));
    let lens = rows.iter().map(|v| if let Object::Array(a) = v { a.len() } else { 0 });
    let nulls = rows
        .iter()
        .any(Object::is_none)
        .then(|| NullBuffer::from(rows.iter().map(|v| !v.is_none()).collect::<Vec<bool>>()));
    let unsupported = |e: ArrowError| -> npy_core::Error {
        ErrorKind::UnsupportedDtype { descr: "|O".to_string(), reason: format!("a list column: {e}") }.into()
    };
    let column: ArrayRef = if i32::try_from(total).is_ok() {
        let offsets = OffsetBuffer::<i32>::from_lengths(lens);
        Arc::new(GenericListArray::<i32>::try_new(item_field, offsets, values, nulls).map_err(unsupported)?)
    } else {
        let offsets = OffsetBuffer::<i64>::from_lengths(lens);
        Arc::new(GenericListArray::<i64>::try_new(item_field, offsets, values, nulls).map_err(unsupported)?)
    };
    // Nullable whether or not a row is None, so files of one kind share one schema.
    let field = Field::new(VALUES, column.data_type().clone(), true);
    let row_bytes = (total.saturating_mul(size)).checked_div(rows.len()).unwrap_or(0).saturating_add(4);
    Ok(batches_of(field, &column, row_bytes, options))
}

/// `values` (in C order) as rows of `shape[1..]` each: a `FixedSizeList` of Utf8.
fn rows_of(values: ArrayRef, shape: &[usize]) -> Result<ArrayRef> {
    let width: usize = shape[1..].iter().product();
    let too_wide = || -> npy_core::Error {
        let reason = format!("rows of {width} values: Arrow's FixedSizeList holds at most {}", i32::MAX);
        ErrorKind::UnsupportedDtype { descr: "|O".to_string(), reason }.into()
    };
    let len = i32::try_from(width).map_err(|_| too_wide())?;
    let item = Arc::new(Field::new(ITEM, values.data_type().clone(), true));
    let list = FixedSizeListArray::try_new(item, len, values, None).map_err(|e| {
        let reason = format!("rows of {width} values: {e}");
        npy_core::Error::from(ErrorKind::UnsupportedDtype { descr: "|O".to_string(), reason })
    })?;
    Ok(Arc::new(list))
}

/// The storage position of the value at C-order position `i` of an array of `shape`.
fn storage(i: usize, shape: &[usize], fortran: bool) -> usize {
    if !fortran {
        return i;
    }
    // The multi-index of `i` in C order (last axis fastest), then its Fortran position
    // (first axis fastest).
    let (mut rest, mut at, mut stride) = (i, 0, 1);
    let mut index = vec![0; shape.len()];
    for (k, &n) in shape.iter().enumerate().rev() {
        index[k] = rest % n;
        rest /= n;
    }
    for (k, &n) in shape.iter().enumerate() {
        at += index[k] * stride;
        stride *= n;
    }
    at
}

/// "a" or "an" before a Python type name.
fn article(ty: &str) -> String {
    let an = ty.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {ty}", if an { "an" } else { "a" })
}

/// A value's repr, shortened for a message.
fn short(repr: &str) -> String {
    let mut out: String = repr.chars().take(60).collect();
    if repr.chars().count() > 60 {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use arrow_array::{Float32Array, ListArray, StringArray};

    use super::*;

    fn ndarray(descr: &str, len: usize, data: Vec<u8>) -> Object {
        Object::Array(Box::new(npy_core::DynArray::new(Header::new(descr.parse().unwrap(), vec![len]), data).unwrap()))
    }

    fn ucs4(text: &str, width: usize, big: bool) -> Vec<u8> {
        let mut units: Vec<u32> = text.chars().map(u32::from).collect();
        units.resize(width, 0);
        units.iter().flat_map(|u| if big { u.to_be_bytes() } else { u.to_le_bytes() }).collect()
    }

    fn batches(values: Vec<Object>) -> Result<Vec<RecordBatch>> {
        let array = npy_core::Array::from_shape_vec(vec![values.len()], values)?;
        let item = ragged_item(&array)?.expect("a ragged array");
        let mut options = ConvertOptions::new();
        options.batch_rows(2);
        Ok(list_batches(array, item, &options)?.map(|b| b.unwrap()).collect())
    }

    /// Rows of `str` of different widths and byte orders, and a missing row:
    /// `[np.array(['ab', 'c']), None, np.array(['wider'], dtype='>U5')]`.
    #[test]
    fn str_rows_widen_and_none_is_a_null_row() {
        let mut two = ucs4("ab", 2, false);
        two.extend(ucs4("c", 2, false));
        let rows = vec![ndarray("<U2", 2, two), Object::None, ndarray(">U5", 1, ucs4("wider", 5, true))];
        let got = batches(rows).unwrap();
        assert_eq!(got.len(), 2, "batches of 2 rows");
        let field = got[0].schema().field(0).clone();
        assert!(field.is_nullable());
        let mut rows = Vec::new();
        for batch in &got {
            let list = batch.column(0).as_any().downcast_ref::<ListArray>().unwrap();
            for i in 0..list.len() {
                rows.push(list.is_valid(i).then(|| {
                    let row = list.value(i);
                    let text = row.as_any().downcast_ref::<StringArray>().unwrap();
                    text.iter().map(|t| t.unwrap().to_string()).collect::<Vec<_>>()
                }));
            }
        }
        assert_eq!(rows, [Some(vec!["ab".to_string(), "c".to_string()]), None, Some(vec!["wider".to_string()])]);
    }

    /// `[np.array([1.5], dtype='>f4'), np.array([-2.0, 0.25], dtype='<f4')]`: big-endian rows
    /// are swapped to the item type's order.
    #[test]
    fn rows_of_either_byte_order_share_one_item_type() {
        let rows = vec![
            ndarray(">f4", 1, 1.5f32.to_be_bytes().to_vec()),
            ndarray("<f4", 2, [(-2.0f32).to_le_bytes(), 0.25f32.to_le_bytes()].concat()),
        ];
        let got = batches(rows).unwrap();
        let list = got[0].column(0).as_any().downcast_ref::<ListArray>().unwrap();
        let value = |i: usize| list.value(i).as_any().downcast_ref::<Float32Array>().unwrap().values().to_vec();
        assert_eq!((value(0), value(1)), (vec![1.5], vec![-2.0, 0.25]));
        assert_eq!(got[0].column(0).null_count(), 0, "no None, no nulls");
    }

    #[test]
    fn rows_of_other_types_or_shapes_name_the_element() {
        let bools = ndarray("|b1", 2, vec![1, 0]);
        let one = |rows: Vec<Object>| {
            let array = npy_core::Array::from_shape_vec(vec![rows.len()], rows).unwrap();
            ragged_item(&array).map(|item| item.map(|s| s.type_str()))
        };
        assert_eq!(one(vec![bools.clone(), Object::None]).unwrap().as_deref(), Some("|b1"));
        let e = one(vec![bools.clone(), ndarray("<i2", 1, vec![1, 0])]).unwrap_err();
        assert!(e.to_string().contains("element 1 is an ndarray of dtype <i2 and element 0 of |b1"), "{e}");
        let e = one(vec![bools.clone(), ndarray("<c8", 1, vec![0; 8])]).unwrap_err();
        assert!(e.to_string().contains("element 1 is an ndarray of dtype '<c8'"), "{e}");
        let e = one(vec![Object::from(1), bools]).unwrap_err();
        assert!(e.to_string().contains("element 0 is an int 1"), "{e}");
        // No ndarray at all: not a ragged array (the text path decides).
        assert_eq!(one(vec![Object::from("a")]).unwrap(), None);
    }
}
