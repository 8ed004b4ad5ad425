//! Object arrays of text as record batches (feature `formats`): what `np.save` writes for
//! NumPy 2's `StringDType` arrays, and plain object arrays of `str`.
//!
//! An object array (`'|O'`) whose values are all `str`, `None` or a float NaN (the
//! missing values of NumPy's `StringDType(na_object=None)` or `na_object=np.nan`, and of
//! pandas' object columns) becomes one Utf8 column, `values`, with null where a value is
//! missing (LargeUtf8 when its text is over 2 GiB). A 0-d array is one row; an N-d array
//! has a row per first index, each a `FixedSizeList` of the rest of the array in C order
//! (the `arrow.fixed_shape_tensor` extension's layout, as for numeric arrays). Any other
//! value (an int, bytes, a list...) is [`ErrorKind::UnsupportedDtype`] naming the element.
//!
//! The schema carries no `numpy.*` metadata (its `'|O'` dtype has no Arrow form): read
//! back, the column is text like any other Utf8 column. The pickle is decoded whole, within
//! the decoder's memory budget ([`npy_core::ReadOptions::max_object_bytes`]; by default 128
//! MiB plus 4 bytes per byte of pickle, so bounded by the file's size); the column's text
//! is no larger than the decoded values it is copied from.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, GenericStringArray, RecordBatch, RecordBatchIterator, RecordBatchReader,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use npy_core::object::Object;
use npy_core::{ErrorKind, NpyReader, Result};

use crate::options::ConvertOptions;
use crate::schema::{EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, ITEM, TENSOR_EXTENSION, VALUES};

/// The batches of an object array of text (see the module docs), read whole from `reader`.
///
/// # Errors
/// [`ErrorKind::UnsupportedDtype`] for a value that is not `str`, `None` or NaN, or a row
/// of more than `i32::MAX` values; the errors of [`NpyReader::read`] (a pickle that
/// is not an object array of plain values, or over the memory budget).
pub(crate) fn text_batches<R: Read>(
    reader: NpyReader<R>,
    options: &ConvertOptions,
) -> Result<Box<dyn RecordBatchReader + Send>> {
    let array = reader.read::<npy_core::Array<Object>>()?;
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
    let schema = Arc::new(Schema::new(vec![field]));
    let row_bytes = text_len.checked_div(rows).unwrap_or(0).saturating_add(4 * values.len() / rows.max(1));
    let per_batch = options.batch_rows_for(row_bytes);
    let batches: Vec<std::result::Result<RecordBatch, ArrowError>> = (0..rows)
        .step_by(per_batch)
        .map(|start| RecordBatch::try_new(schema.clone(), vec![column.slice(start, per_batch.min(rows - start))]))
        .collect();
    Ok(Box::new(RecordBatchIterator::new(batches, schema)))
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
