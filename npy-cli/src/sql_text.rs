//! `npy sql`'s result as `npy dump` and `npy head` write values: each Arrow value that
//! has a NumPy type in NumPy's `str()` (floats in NumPy's digits, `nan`, bytes as
//! `b'ab'`, datetimes in ISO text), JSON as `npy dump` writes it (NaN, Infinity,
//! -Infinity by default; datetimes as ISO strings, timedeltas as counts), and CSV and
//! table cells flattened as `npy dump --format csv` names them: `receiver.x` for a struct's
//! fields, `samples[0]` for a fixed-size list's items. A null is an empty cell, or `null`
//! in JSON; a variable-length list or a map is one cell, its JSON text.

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{
    DataType, Field, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, Schema,
    TimeUnit as ArrowUnit, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use npy_core::dtype::{DType, DateUnit, ScalarType, TimeUnit};
use npy_core::scalar::Value;
use npy_core::Object;

use crate::render::{self, NonFinite};

/// The name of every cell of a row (CSV and table columns): fields as `a.b`, fixed-size
/// list items as `a[0]`.
pub fn column_names(schema: &Schema) -> Vec<String> {
    let mut names = Vec::new();
    for f in schema.fields() {
        leaf_names(f, f.name().clone(), &mut names);
    }
    names
}

fn leaf_names(field: &Field, name: String, out: &mut Vec<String>) {
    match flattened(field) {
        Some(DataType::Struct(children)) => {
            for c in children {
                leaf_names(c, format!("{name}.{}", c.name()), out);
            }
        }
        Some(DataType::FixedSizeList(item, n)) => {
            for i in 0..*n {
                leaf_names(item, format!("{name}[{i}]"), out);
            }
        }
        _ => out.push(name),
    }
}

/// How many cells a value of `field` takes.
fn leaf_count(field: &Field) -> usize {
    match flattened(field) {
        Some(DataType::Struct(children)) => children.iter().map(|c| leaf_count(c)).sum(),
        Some(DataType::FixedSizeList(item, n)) => leaf_count(item) * usize::try_from(*n).unwrap_or(0),
        _ => 1,
    }
}

/// The type of `field` when its value is several cells: a struct or a fixed-size list,
/// unless the field is one NumPy scalar (a complex number's two parts).
fn flattened(field: &Field) -> Option<&DataType> {
    match field.data_type() {
        t @ (DataType::Struct(_) | DataType::FixedSizeList(..)) if numpy_scalar(field).is_none() => Some(t),
        _ => None,
    }
}

/// The NumPy scalar type a field's `numpy.dtype` metadata says its values are (complex,
/// long double, datetimes in units Arrow lacks), as npy-arrow writes it.
fn numpy_scalar(field: &Field) -> Option<ScalarType> {
    let descr = field.metadata().get(npy_arrow::schema::DTYPE_KEY)?;
    match descr.parse::<DType>().ok()? {
        DType::Scalar(s) => Some(s.ty()),
        _ => None,
    }
}

/// Pushes the cell text of every leaf of row `i` of `array` (a column of `field`).
pub fn cells(field: &Field, array: &dyn Array, i: usize, out: &mut Vec<String>) {
    if is_null(array, i) {
        out.extend(std::iter::repeat_n(String::new(), leaf_count(field)));
        return;
    }
    match flattened(field) {
        Some(DataType::Struct(children)) => {
            let s = array.as_struct();
            for (k, c) in children.iter().enumerate() {
                cells(c, s.column(k).as_ref(), i, out);
            }
        }
        Some(DataType::FixedSizeList(item, n)) => {
            let l = array.as_fixed_size_list();
            let start = l.value_offset(i) as usize;
            for j in 0..usize::try_from(*n).unwrap_or(0) {
                cells(item, l.values().as_ref(), start + j, out);
            }
        }
        _ => out.push(cell(field, array, i)),
    }
}

/// Whether value `i` is null (every value of a column of type Null is, which has no null
/// buffer).
fn is_null(array: &dyn Array, i: usize) -> bool {
    array.is_null(i) || array.data_type() == &DataType::Null
}

/// One value's cell text: NumPy's `str()` where it has a NumPy type.
fn cell(field: &Field, array: &dyn Array, i: usize) -> String {
    if let Some(text) = numpy_text(field, array, i) {
        return text;
    }
    match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => string(array, i).unwrap_or_default().to_string(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            Object::Bytes(binary(array, i).unwrap_or_default().to_vec()).repr()
        }
        DataType::List(_) | DataType::LargeList(_) | DataType::ListView(_) | DataType::Map(..) => {
            let mut text = String::new();
            json_value(field, array, i, NonFinite::Python, &mut text);
            text
        }
        _ => match value(array, i) {
            Some(v) => v.to_string(),
            None => display(array, i),
        },
    }
}

/// The text of a value whose field's metadata says its NumPy type (complex, long double,
/// datetimes in units Arrow lacks).
fn numpy_text(field: &Field, array: &dyn Array, i: usize) -> Option<String> {
    let v = match (numpy_scalar(field)?, array.data_type()) {
        (ScalarType::Complex(8), DataType::FixedSizeList(..)) => {
            let parts = array.as_fixed_size_list().value(i);
            let p = parts.as_primitive_opt::<Float32Type>()?;
            Value::C64(p.value(0), p.value(1))
        }
        (ScalarType::Complex(16), DataType::FixedSizeList(..)) => {
            let parts = array.as_fixed_size_list().value(i);
            let p = parts.as_primitive_opt::<Float64Type>()?;
            Value::C128(p.value(0), p.value(1))
        }
        (ScalarType::Float(16), DataType::FixedSizeBinary(16)) => {
            Value::LongDouble(array.as_fixed_size_binary().value(i).try_into().ok()?)
        }
        (ScalarType::DateTime(unit), DataType::Int64) => {
            Value::DateTime(array.as_primitive::<Int64Type>().value(i), unit)
        }
        (ScalarType::TimeDelta(unit), DataType::Int64) => {
            Value::TimeDelta(array.as_primitive::<Int64Type>().value(i), unit)
        }
        _ => return None,
    };
    Some(v.to_string())
}

fn string(array: &dyn Array, i: usize) -> Option<&str> {
    match array.data_type() {
        DataType::Utf8 => Some(array.as_string::<i32>().value(i)),
        DataType::LargeUtf8 => Some(array.as_string::<i64>().value(i)),
        DataType::Utf8View => Some(array.as_string_view().value(i)),
        _ => None,
    }
}

fn binary(array: &dyn Array, i: usize) -> Option<&[u8]> {
    match array.data_type() {
        DataType::Binary => Some(array.as_binary::<i32>().value(i)),
        DataType::LargeBinary => Some(array.as_binary::<i64>().value(i)),
        DataType::BinaryView => Some(array.as_binary_view().value(i)),
        _ => None,
    }
}

/// The NumPy scalar of a value of an Arrow type that has one.
fn value(array: &dyn Array, i: usize) -> Option<Value<'_>> {
    let unit = |u: &ArrowUnit| {
        DateUnit::new(match u {
            ArrowUnit::Second => TimeUnit::Seconds,
            ArrowUnit::Millisecond => TimeUnit::Milliseconds,
            ArrowUnit::Microsecond => TimeUnit::Microseconds,
            ArrowUnit::Nanosecond => TimeUnit::Nanoseconds,
        })
    };
    Some(match array.data_type() {
        DataType::Boolean => Value::Bool(array.as_boolean().value(i)),
        DataType::Int8 => Value::I8(array.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => Value::I16(array.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => Value::I32(array.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => Value::I64(array.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Value::U8(array.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => Value::U16(array.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => Value::U32(array.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => Value::U64(array.as_primitive::<UInt64Type>().value(i)),
        DataType::Float16 => Value::F16(array.as_primitive::<Float16Type>().value(i).to_bits()),
        DataType::Float32 => Value::F32(array.as_primitive::<Float32Type>().value(i)),
        DataType::Float64 => Value::F64(array.as_primitive::<Float64Type>().value(i)),
        DataType::FixedSizeBinary(_) => Value::Void(array.as_fixed_size_binary().value(i)),
        DataType::Date32 => Value::DateTime(
            i64::from(array.as_primitive::<datafusion::arrow::datatypes::Date32Type>().value(i)),
            DateUnit::new(TimeUnit::Days),
        ),
        DataType::Date64 => Value::DateTime(
            array.as_primitive::<datafusion::arrow::datatypes::Date64Type>().value(i),
            DateUnit::new(TimeUnit::Milliseconds),
        ),
        // NumPy's datetimes have no time zone: a zoned timestamp is Arrow's text.
        DataType::Timestamp(u, None) => Value::DateTime(timestamp(array, i), unit(u)),
        DataType::Duration(u) => Value::TimeDelta(duration(array, i), unit(u)),
        _ => return None,
    })
}

fn timestamp(array: &dyn Array, i: usize) -> i64 {
    use datafusion::arrow::datatypes::{
        TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
    };
    match array.data_type() {
        DataType::Timestamp(ArrowUnit::Second, _) => array.as_primitive::<TimestampSecondType>().value(i),
        DataType::Timestamp(ArrowUnit::Millisecond, _) => array.as_primitive::<TimestampMillisecondType>().value(i),
        DataType::Timestamp(ArrowUnit::Microsecond, _) => array.as_primitive::<TimestampMicrosecondType>().value(i),
        _ => array.as_primitive::<TimestampNanosecondType>().value(i),
    }
}

fn duration(array: &dyn Array, i: usize) -> i64 {
    use datafusion::arrow::datatypes::{
        DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    };
    match array.data_type() {
        DataType::Duration(ArrowUnit::Second) => array.as_primitive::<DurationSecondType>().value(i),
        DataType::Duration(ArrowUnit::Millisecond) => array.as_primitive::<DurationMillisecondType>().value(i),
        DataType::Duration(ArrowUnit::Microsecond) => array.as_primitive::<DurationMicrosecondType>().value(i),
        _ => array.as_primitive::<DurationNanosecondType>().value(i),
    }
}

/// Arrow's text of a value of a type NumPy lacks (decimals, times of day, intervals).
fn display(array: &dyn Array, i: usize) -> String {
    match ArrayFormatter::try_new(array, &FormatOptions::default()) {
        Ok(f) => f.value(i).to_string(),
        Err(e) => format!("<{e}>"),
    }
}

/// Writes row `i` of the columns of `schema` as one JSON object, as `npy dump` writes a
/// record.
pub fn json_row(schema: &Schema, columns: &[std::sync::Arc<dyn Array>], i: usize, nf: NonFinite, out: &mut String) {
    out.push('{');
    for (k, (field, column)) in schema.fields().iter().zip(columns).enumerate() {
        if k > 0 {
            out.push(',');
        }
        render::json_string(field.name(), out);
        out.push(':');
        json_value(field, column.as_ref(), i, nf, out);
    }
    out.push('}');
}

fn json_value(field: &Field, array: &dyn Array, i: usize, nf: NonFinite, out: &mut String) {
    if is_null(array, i) {
        out.push_str("null");
        return;
    }
    match (numpy_scalar(field), array.data_type()) {
        (Some(ScalarType::DateTime(unit)), DataType::Int64) => {
            let v = Value::DateTime(array.as_primitive::<Int64Type>().value(i), unit);
            return render::json_string(&v.to_string(), out);
        }
        (Some(ScalarType::Float(16)), DataType::FixedSizeBinary(16)) => {
            if let Ok(bytes) = array.as_fixed_size_binary().value(i).try_into() {
                return float(&Value::LongDouble(bytes), nf, out);
            }
        }
        _ => {}
    }
    match array.data_type() {
        DataType::Struct(children) => {
            let s = array.as_struct();
            out.push('{');
            for (k, c) in children.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                render::json_string(c.name(), out);
                out.push(':');
                json_value(c, s.column(k).as_ref(), i, nf, out);
            }
            out.push('}');
        }
        DataType::FixedSizeList(item, n) => {
            let l = array.as_fixed_size_list();
            let start = l.value_offset(i) as usize;
            items(item, l.values().as_ref(), start..start + usize::try_from(*n).unwrap_or(0), nf, out);
        }
        DataType::List(item) => {
            let l = array.as_list::<i32>();
            let o = l.value_offsets();
            items(item, l.values().as_ref(), o[i] as usize..o[i + 1] as usize, nf, out);
        }
        DataType::LargeList(item) => {
            let l = array.as_list::<i64>();
            let o = l.value_offsets();
            items(item, l.values().as_ref(), o[i] as usize..o[i + 1] as usize, nf, out);
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            render::json_string(string(array, i).unwrap_or_default(), out)
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            render::json_string(&Object::Bytes(binary(array, i).unwrap_or_default().to_vec()).repr(), out)
        }
        _ => match value(array, i) {
            Some(Value::Bool(b)) => out.push_str(if b { "true" } else { "false" }),
            Some(v @ (Value::F16(_) | Value::F32(_) | Value::F64(_))) => float(&v, nf, out),
            Some(Value::TimeDelta(count, _)) => out.push_str(&count.to_string()),
            Some(v @ (Value::DateTime(..) | Value::Void(_))) => render::json_string(&v.to_string(), out),
            Some(v) => out.push_str(&v.to_string()),
            // Decimals as numbers; other types NumPy lacks as Arrow's text.
            None => {
                let text = display(array, i);
                if render::is_json_number(&text) {
                    out.push_str(&text);
                } else {
                    render::json_string(&text, out);
                }
            }
        },
    }
}

fn items(item: &Field, values: &dyn Array, range: std::ops::Range<usize>, nf: NonFinite, out: &mut String) {
    out.push('[');
    for (k, j) in range.enumerate() {
        if k > 0 {
            out.push(',');
        }
        json_value(item, values, j, nf, out);
    }
    out.push(']');
}

/// A float as `npy dump` writes it (its digits are always a JSON number or NaN/Infinity).
fn float(v: &Value<'_>, nf: NonFinite, out: &mut String) {
    if render::json_float(v, nf, out).is_err() {
        render::json_string(&v.to_string(), out);
    }
}
