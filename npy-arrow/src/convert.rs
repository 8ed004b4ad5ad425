//! The one conversion engine between raw NumPy elements and Arrow arrays, both ways.
//!
//! A column's [`Node`] tree is walked once per chunk: each node gets the byte positions of
//! its values in the chunk (one `usize` per value) and makes (or fills from) one Arrow
//! array in one pass over them. Values that need no conversion (native byte order
//! primitives, raw bytes) are copied in bulk; byte order, NaT, text and bools go through
//! the one scalar codec, [`npy_core::scalar`].

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Date32Type;
use arrow_array::{make_array, Array, ArrayRef, BooleanArray, Date32Array, FixedSizeListArray, StructArray};
use arrow_buffer::{BooleanBuffer, MutableBuffer, NullBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use npy_core::dtype::{Scalar, ScalarType};
use npy_core::scalar::{self, Value};
use npy_core::{Error, ErrorKind, Result};

use crate::pos::Pos;
use crate::schema::{Leaf, Node};

/// Where values sit: the byte positions of one node's values in the chunk, and how to name
/// an element in errors (`first + position / itemsize`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    pub(crate) first: usize,
    pub(crate) itemsize: usize,
    /// Whether `U` values that are not valid text are read with U+FFFD for each code unit
    /// that is not a char (the residue column keeps their bytes) instead of refused.
    pub(crate) lossy_text: bool,
}

impl Place {
    fn invalid(&self, pos: usize, reason: impl Into<String>) -> Error {
        let index = self.first + pos.checked_div(self.itemsize).unwrap_or(0);
        ErrorKind::InvalidValue { index, reason: reason.into() }.into()
    }
}

/// The Arrow array of `node`'s values at `pos` in `data`.
pub(crate) fn decode(node: &Node, data: &[u8], pos: &Pos, place: Place) -> Result<ArrayRef> {
    match node {
        Node::Leaf(s, leaf) => decode_leaf(*s, *leaf, node.data_type(), data, pos, place),
        Node::Struct(children, fields) => {
            let mut arrays = Vec::with_capacity(children.len());
            for (offset, child) in children {
                arrays.push(decode(child, data, &pos.shifted(*offset), place)?);
            }
            let array =
                StructArray::try_new_with_length(fields.clone(), arrays, None, pos.count()).map_err(arrow_error)?;
            Ok(Arc::new(array))
        }
        Node::List { len, stride, item, field } => {
            let items = decode(item, data, &pos.items(*len, *stride), place)?;
            list(field, *len, items, pos.count())
        }
    }
}

/// A `FixedSizeList` of `rows` lists of `len` items.
pub(crate) fn list(field: &arrow_schema::FieldRef, len: usize, items: ArrayRef, rows: usize) -> Result<ArrayRef> {
    let array =
        FixedSizeListArray::try_new_with_length(field.clone(), len as i32, items, None, rows).map_err(arrow_error)?;
    Ok(Arc::new(array))
}

/// The values' bytes side by side, in native order: one bulk copy when they are contiguous.
fn gather(s: Scalar, data: &[u8], pos: &Pos) -> MutableBuffer {
    let size = s.itemsize();
    let mut buf = MutableBuffer::from_len_zeroed(pos.count() * size);
    let out = buf.as_slice_mut();
    match pos.count() {
        0 => {}
        _ if pos.contiguous(size) => {
            let p = pos.get(0);
            out.copy_from_slice(&data[p..p + out.len()]);
        }
        _ => match size {
            1 => gather_fixed::<1>(out, data, pos),
            2 => gather_fixed::<2>(out, data, pos),
            4 => gather_fixed::<4>(out, data, pos),
            8 => gather_fixed::<8>(out, data, pos),
            _ => pos.for_each(|k, p| out[k * size..(k + 1) * size].copy_from_slice(&data[p..p + size])),
        },
    }
    if !s.is_native() {
        scalar::swap_units(out, s.ty().swap_unit());
    }
    buf
}

/// [`gather`]'s strided copy for values of `N` bytes: a fixed-size move per value.
fn gather_fixed<const N: usize>(out: &mut [u8], data: &[u8], pos: &Pos) {
    pos.for_each(|k, p| {
        let v: &[u8; N] = data[p..p + N].try_into().expect("N bytes");
        out[k * N..(k + 1) * N].copy_from_slice(v);
    });
}

/// Writes values of `N` bytes, side by side in `src`, at `pos` in `out`.
fn scatter_fixed<const N: usize>(src: &[u8], out: &mut [u8], pos: &Pos) {
    pos.for_each(|k, p| {
        let v: &[u8; N] = src[k * N..(k + 1) * N].try_into().expect("N bytes");
        out[p..p + N].copy_from_slice(v);
    });
}

fn decode_leaf(s: Scalar, leaf: Leaf, ty: DataType, data: &[u8], pos: &Pos, place: Place) -> Result<ArrayRef> {
    let n = pos.count();
    let size = s.itemsize();
    match leaf {
        Leaf::Primitive if s.ty() == ScalarType::Bool => {
            // NumPy reads any nonzero byte as True.
            let bits = BooleanBuffer::collect_bool(n, |i| {
                matches!(scalar::decode_lenient(s, &data[pos.get(i)..]), Ok(Value::Bool(true)))
            });
            Ok(Arc::new(BooleanArray::new(bits, None)))
        }
        Leaf::Primitive | Leaf::Raw => primitive(ty, gather(s, data, pos), n, None),
        Leaf::Time => {
            let buf = gather(s, data, pos);
            let nulls = nat_nulls(buf.typed_data::<i64>());
            primitive(ty, buf, n, nulls)
        }
        Leaf::Date32 => {
            let buf = gather(s, data, pos);
            let days = buf.typed_data::<i64>();
            let nulls = nat_nulls(days);
            let mut out = Vec::with_capacity(n);
            for (k, &d) in days.iter().enumerate() {
                let v = match i32::try_from(d) {
                    Ok(v) => v,
                    Err(_) if d == i64::MIN => 0,
                    Err(_) => {
                        return Err(place.invalid(
                            pos.get(k),
                            format!(
                                "datetime64[D] value {d} is outside Arrow's Date32 range \
                                 (convert with ConvertOptions::days_as_int64)"
                            ),
                        ))
                    }
                };
                out.push(v);
            }
            Ok(Arc::new(Date32Array::new(ScalarBuffer::from(out), nulls)))
        }
        Leaf::Bytes => {
            let mut b = BinaryBuilder::with_capacity(n, n * size);
            for p in pos.iter() {
                b.append_value(scalar::trim_nuls(&data[p..p + size]));
            }
            Ok(Arc::new(b.finish()))
        }
        Leaf::Text => {
            let mut b = StringBuilder::with_capacity(n, n * size / 4);
            for p in pos.iter() {
                let bytes = &data[p..p + size];
                match scalar::ucs4(bytes, s.order()) {
                    Ok(text) => b.append_value(text),
                    Err(_) if place.lossy_text => b.append_value(scalar::ucs4_lossy(bytes, s.order())),
                    Err(e) => {
                        let hint = "Utf8 cannot hold it; ConvertOptions::residue keeps such text";
                        return Err(place.invalid(p, format!("{e} ({hint})")));
                    }
                }
            }
            Ok(Arc::new(b.finish()))
        }
    }
}

/// Nulls where a datetime is NaT (`i64::MIN`); `None` when there is none.
fn nat_nulls(values: &[i64]) -> Option<NullBuffer> {
    if !values.contains(&i64::MIN) {
        return None;
    }
    Some(NullBuffer::new(BooleanBuffer::collect_bool(values.len(), |i| values[i] != i64::MIN)))
}

/// An array of a fixed-width type over `buf`.
pub(crate) fn primitive(
    ty: DataType,
    buf: impl Into<arrow_buffer::Buffer>,
    n: usize,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef> {
    let data = ArrayData::builder(ty).len(n).add_buffer(buf.into()).nulls(nulls).build().map_err(arrow_error)?;
    Ok(make_array(data))
}

/// Writes `array`'s values at `pos` in `out` (zeroed: padding and text tails stay zero).
pub(crate) fn encode(node: &Node, array: &dyn Array, out: &mut [u8], pos: &Pos, place: Place) -> Result<()> {
    if array.len() != pos.count() {
        return Err(usage(format!("an array of {} values where {} are expected", array.len(), pos.count())));
    }
    match node {
        Node::Leaf(s, leaf) => encode_leaf(*s, *leaf, array, out, pos, place),
        Node::Struct(children, _) => {
            refuse_nulls(array, "a struct")?;
            let array = array.as_struct();
            for ((offset, child), column) in children.iter().zip(array.columns()) {
                encode(child, column.as_ref(), out, &pos.shifted(*offset), place)?;
            }
            Ok(())
        }
        Node::List { len, stride, item, .. } => {
            refuse_nulls(array, "a fixed-size list")?;
            let values = array.as_fixed_size_list().values();
            encode(item, values.as_ref(), out, &pos.items(*len, *stride), place)
        }
    }
}

fn refuse_nulls(array: &dyn Array, what: &str) -> Result<()> {
    if array.null_count() > 0 {
        return Err(usage(format!("{what} column has nulls, which a NumPy array cannot hold")));
    }
    Ok(())
}

fn encode_leaf(s: Scalar, leaf: Leaf, array: &dyn Array, out: &mut [u8], pos: &Pos, place: Place) -> Result<()> {
    let size = s.itemsize();
    let unit = s.ty().swap_unit();
    let swap = |dst: &mut [u8]| {
        if !s.is_native() {
            scalar::swap_units(dst, unit);
        }
    };
    // What a null becomes: NaT for datetimes, NaN for floats; an error for the rest.
    let null_bytes = |p: usize| -> Result<Vec<u8>> {
        Ok(match s.ty() {
            ScalarType::DateTime(_) | ScalarType::TimeDelta(_) => i64::MIN.to_ne_bytes().to_vec(),
            ScalarType::Float(2) => 0x7e00u16.to_ne_bytes().to_vec(),
            ScalarType::Float(4) => f32::NAN.to_ne_bytes().to_vec(),
            ScalarType::Float(8) => f64::NAN.to_ne_bytes().to_vec(),
            _ => {
                return Err(place.invalid(
                    p,
                    format!("null in a column of {}, which has no NaN or NaT to stand for it", s.type_str()),
                ))
            }
        })
    };
    let encode_value = |v: Value<'_>, p: usize, out: &mut [u8]| {
        scalar::encode(&v, s, &mut out[p..p + size]).map_err(|e| place.invalid(p, e.to_string()))
    };
    let is_null = |i: usize| array.is_null(i);
    match leaf {
        Leaf::Primitive if s.ty() == ScalarType::Bool => {
            let values = array.as_boolean();
            for (i, p) in pos.iter().enumerate() {
                if is_null(i) {
                    return Err(place.invalid(p, "null in a bool column, which has no NaN to stand for it"));
                }
                out[p] = u8::from(values.value(i));
            }
        }
        Leaf::Primitive | Leaf::Raw | Leaf::Time => {
            let data = array.to_data();
            let bytes = &data.buffers()[0].as_slice()[data.offset() * size..];
            match size {
                _ if pos.count() == 0 => {}
                _ if pos.contiguous(size) => {
                    let (p, len) = (pos.get(0), pos.count() * size);
                    out[p..p + len].copy_from_slice(&bytes[..len]);
                }
                1 => scatter_fixed::<1>(bytes, out, pos),
                2 => scatter_fixed::<2>(bytes, out, pos),
                4 => scatter_fixed::<4>(bytes, out, pos),
                8 => scatter_fixed::<8>(bytes, out, pos),
                _ => pos.for_each(|k, p| out[p..p + size].copy_from_slice(&bytes[k * size..(k + 1) * size])),
            }
            if let Some(nulls) = array.logical_nulls() {
                for i in nulls.iter().enumerate().filter_map(|(i, valid)| (!valid).then_some(i)) {
                    let p = pos.get(i);
                    out[p..p + size].copy_from_slice(&null_bytes(p)?);
                }
            }
            if !s.is_native() {
                for p in pos.iter() {
                    swap(&mut out[p..p + size]);
                }
            }
        }
        Leaf::Date32 => {
            let values = array.as_primitive::<Date32Type>();
            for (i, p) in pos.iter().enumerate() {
                let day = if is_null(i) { i64::MIN } else { i64::from(values.value(i)) };
                let dst = &mut out[p..p + size];
                dst.copy_from_slice(&day.to_ne_bytes());
                swap(dst);
            }
        }
        Leaf::Bytes => {
            let values = array.as_binary::<i32>();
            for (i, p) in pos.iter().enumerate() {
                if is_null(i) {
                    return Err(place.invalid(p, "null in a bytes column"));
                }
                encode_value(Value::Bytes(values.value(i)), p, out)?;
            }
        }
        Leaf::Text => {
            let values = array.as_string::<i32>();
            for (i, p) in pos.iter().enumerate() {
                if is_null(i) {
                    return Err(place.invalid(p, "null in a text column"));
                }
                encode_value(Value::Str(Cow::Borrowed(values.value(i))), p, out)?;
            }
        }
    }
    Ok(())
}

pub(crate) fn arrow_error(e: arrow_schema::ArrowError) -> Error {
    usage(format!("arrow: {e}"))
}

pub(crate) fn usage(reason: String) -> Error {
    ErrorKind::Usage { reason }.into()
}
