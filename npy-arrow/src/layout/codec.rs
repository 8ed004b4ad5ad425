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
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use npy_core::dtype::{Scalar, ScalarType};
use npy_core::scalar::{self, Value};
use npy_core::{Error, ErrorKind, Result, ZeroedBytes};

use super::node::{Leaf, Node};
use crate::error::{arrow_error, bad_data, usage};
use crate::pos::Pos;

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

/// The Arrow array of `node`'s values at `pos` in `data`; its fixed-width values come from
/// `strided`, in the order [`Strided::new`] copied them.
pub(crate) fn decode(node: &Node, data: &[u8], pos: &Pos, place: Place, strided: &mut Strided) -> Result<ArrayRef> {
    match node {
        Node::Leaf(s, leaf) => decode_leaf(*s, *leaf, node.data_type(), data, pos, place, strided),
        Node::Struct(children, fields) => {
            let mut arrays = Vec::with_capacity(children.len());
            for (offset, child) in children {
                arrays.push(decode(child, data, &pos.shifted(*offset), place, strided)?);
            }
            let array =
                StructArray::try_new_with_length(fields.clone(), arrays, None, pos.count()).map_err(arrow_error)?;
            Ok(Arc::new(array))
        }
        Node::List { len, stride, item, field } => {
            let items = decode(item, data, &pos.items(*len, *stride), place, strided)?;
            list(field, *len, items, pos.count())
        }
        Node::Pick { of, start, len, item, field } => {
            let items = decode(item, data, &pos.pick(*of, *start, *len), place, strided)?;
            match field {
                Some(field) => list(field, *len, items, pos.count() / of),
                None => Ok(items),
            }
        }
    }
}

/// The fixed-width values of a chunk's columns (bools and dates aside), copied out of their
/// strided places column by column into one allocation before any array is made: one set
/// of huge pages, faulted in on a second CPU as it fills ([`ZeroedBytes::fill_by`]), where
/// a buffer per column would fault in small pages (12% faster for Simon's traces). The
/// arrays are slices of it, as Arrow IPC readers slice a batch's body: a column kept alone keeps its batch's
/// allocation alive, and `get_array_memory_size` counts that allocation for each column
/// (`get_slice_memory_size` gives each column's own bytes).
#[derive(Debug)]
pub(crate) struct Strided {
    buffer: Buffer,
    /// Offset and length of each leaf's bytes, in the order `decode` takes them.
    spans: std::vec::IntoIter<(usize, usize)>,
}

impl Strided {
    /// Copies the fixed-width values of each column (`node` at `pos`), in order.
    ///
    /// # Errors
    /// Out of memory.
    pub(crate) fn new<'a>(data: &[u8], columns: impl IntoIterator<Item = (&'a Node, &'a Pos)>) -> Result<Strided> {
        let mut jobs = Vec::new();
        for (node, pos) in columns {
            leaves(node, pos.clone(), &mut jobs);
        }
        let mut spans = Vec::with_capacity(jobs.len());
        let mut total = 0;
        for (s, pos) in &jobs {
            let len = pos.count() * s.itemsize();
            spans.push((total, len));
            total += len.next_multiple_of(64);
        }
        let mut bytes = ZeroedBytes::new(total)?;
        bytes.fill_by(|out| match row_block(&jobs) {
            // Rows a block at a time, every leaf's values of a block before the next
            // block, so that the records read stay in the CPU's cache across the leaves.
            Some((rows, block)) => {
                for first in (0..rows).step_by(block) {
                    let n = block.min(rows - first);
                    for ((s, pos), &(at, _)) in jobs.iter().zip(&spans) {
                        let Pos::Grid { start, outer, inner, len: group, .. } = *pos else { continue };
                        let sub = Pos::Grid { start: start + first * outer, outer, n, inner, len: group };
                        let per_row = group * s.itemsize();
                        let from = at + first * per_row;
                        copy_strided_into(*s, data, &sub, &mut out[from..from + n * per_row]);
                    }
                }
            }
            None => {
                for ((s, pos), &(at, len)) in jobs.iter().zip(&spans) {
                    copy_strided_into(*s, data, pos, &mut out[at..at + len]);
                }
            }
        });
        Ok(Strided { buffer: Buffer::from_vec(bytes.into_words()), spans: spans.into_iter() })
    }

    /// The next leaf's bytes, `len` of them.
    fn take(&mut self, len: usize) -> Result<Buffer> {
        match self.spans.next() {
            Some((at, n)) if n == len => Ok(self.buffer.slice_with_length(at, len)),
            _ => Err(usage("internal error: strided values taken out of order".to_string())),
        }
    }
}

/// Rows per block of 256 KiB of records, and the rows, when every job is a grid over the
/// same rows (a C-order chunk with no lists nested in lists); `None` otherwise.
fn row_block(jobs: &[(Scalar, Pos)]) -> Option<(usize, usize)> {
    let mut rows = None;
    let mut stride = 1;
    for (_, pos) in jobs {
        let Pos::Grid { n, outer, .. } = *pos else { return None };
        if *rows.get_or_insert(n) != n {
            return None;
        }
        stride = stride.max(outer);
    }
    Some((rows?, ((256 << 10) / stride).max(1)))
}

/// Whether a leaf's values are copied into [`Strided`]: the fixed-width ones that Arrow
/// holds as stored (bools are bits, `M8[D]` days narrow to Date32, text varies).
fn is_strided(s: Scalar, leaf: Leaf) -> bool {
    match leaf {
        Leaf::Primitive => s.ty() != ScalarType::Bool,
        Leaf::Raw | Leaf::Time => true,
        Leaf::Date32 | Leaf::Bytes | Leaf::Text => false,
    }
}

/// Adds to `jobs` the leaves of `node` at `pos` whose values [`Strided`] copies, in
/// [`decode`]'s order.
fn leaves(node: &Node, pos: Pos, jobs: &mut Vec<(Scalar, Pos)>) {
    match node {
        Node::Leaf(s, leaf) if is_strided(*s, *leaf) => jobs.push((*s, pos)),
        Node::Leaf(..) => {}
        Node::Struct(children, _) => {
            for (offset, child) in children {
                leaves(child, pos.shifted(*offset), jobs);
            }
        }
        Node::List { len, stride, item, .. } => leaves(item, pos.items(*len, *stride), jobs),
        Node::Pick { of, start, len, item, .. } => leaves(item, pos.pick(*of, *start, *len), jobs),
    }
}

/// A `FixedSizeList` of `rows` lists of `len` items.
pub(crate) fn list(field: &arrow_schema::FieldRef, len: usize, items: ArrayRef, rows: usize) -> Result<ArrayRef> {
    let array =
        FixedSizeListArray::try_new_with_length(field.clone(), len as i32, items, None, rows).map_err(arrow_error)?;
    Ok(Arc::new(array))
}

/// The values' bytes side by side, in native order, in memory allocated as npy's reads
/// allocate theirs ([`ZeroedBytes`]: huge pages when large): one bulk copy when the values
/// are contiguous, one copy per group when each group's values are (a subarray's items
/// in each record), else one per value.
fn copy_strided(s: Scalar, data: &[u8], pos: &Pos) -> Result<Buffer> {
    let size = s.itemsize();
    let len = pos.count() * size;
    let mut bytes = ZeroedBytes::new(len)?;
    bytes.fill_by(|out| copy_strided_into(s, data, pos, out));
    Ok(Buffer::from_vec(bytes.into_words()).slice_with_length(0, len))
}

/// [`copy_strided`] into `out`, which holds exactly the values' bytes.
fn copy_strided_into(s: Scalar, data: &[u8], pos: &Pos, out: &mut [u8]) {
    let size = s.itemsize();
    let len = out.len();
    match *pos {
        _ if len == 0 => {}
        _ if pos.contiguous(size) => {
            let p = pos.get(0);
            out.copy_from_slice(&data[p..p + len]);
        }
        Pos::Grid { start, outer, inner, len: group, .. } if group > 1 && inner == size => {
            let run = group * size;
            for (i, dst) in out.chunks_exact_mut(run).enumerate() {
                let p = start + i * outer;
                dst.copy_from_slice(&data[p..p + run]);
            }
        }
        _ => match size {
            1 => copy_fixed::<1>(out, data, pos),
            2 => copy_fixed::<2>(out, data, pos),
            4 => copy_fixed::<4>(out, data, pos),
            8 => copy_fixed::<8>(out, data, pos),
            _ => {
                let mut dst = out.chunks_exact_mut(size);
                pos.for_each(|_, p| {
                    if let Some(d) = dst.next() {
                        d.copy_from_slice(&data[p..p + size]);
                    }
                });
            }
        },
    }
    if !s.is_native() {
        scalar::swap_units(out, s.ty().swap_unit());
    }
}

/// [`copy_strided`] for values of `N` bytes: a fixed-size move per value.
fn copy_fixed<const N: usize>(out: &mut [u8], data: &[u8], pos: &Pos) {
    let mut dst = out.chunks_exact_mut(N);
    // A field of every record (the common case) as one run of records: the loop then has
    // no position arithmetic or bounds check of its own, which a scan that is bound by
    // memory latency pays for (a third of the time of a copy of two fields of mapped
    // 292-byte records, measured).
    if let Pos::Grid { start, outer, n, len: 1, .. } = *pos {
        if outer >= N && n > 0 && start + (n - 1) * outer + N <= data.len() {
            let records = data[start..].chunks(outer);
            for (d, record) in dst.zip(records) {
                let v: &[u8; N] = record[..N].try_into().expect("N bytes");
                d.copy_from_slice(v);
            }
            return;
        }
    }
    pos.for_each(|_, p| {
        let v: &[u8; N] = data[p..p + N].try_into().expect("N bytes");
        if let Some(d) = dst.next() {
            d.copy_from_slice(v);
        }
    });
}

/// Writes values of `N` bytes, side by side in `src`, at `pos` in `out`.
fn scatter_fixed<const N: usize>(src: &[u8], out: &mut [u8], pos: &Pos) {
    pos.for_each(|k, p| {
        let v: &[u8; N] = src[k * N..(k + 1) * N].try_into().expect("N bytes");
        out[p..p + N].copy_from_slice(v);
    });
}

fn decode_leaf(
    s: Scalar,
    leaf: Leaf,
    ty: DataType,
    data: &[u8],
    pos: &Pos,
    place: Place,
    strided: &mut Strided,
) -> Result<ArrayRef> {
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
        Leaf::Primitive | Leaf::Raw => primitive(ty, strided.take(n * size)?, n, None),
        Leaf::Time => {
            let buf = strided.take(n * size)?;
            match nat_nulls(buf.typed_data::<i64>()) {
                // Zeros under the nulls, not NaT's i64::MIN: Arrow leaves those values
                // undefined, but some readers convert them anyway (DuckDB 2.0 fails on a
                // Duration of i64::MIN under a null).
                Some(nulls) => {
                    let values: Vec<i64> =
                        buf.typed_data::<i64>().iter().map(|&v| if v == i64::MIN { 0 } else { v }).collect();
                    primitive(ty, Buffer::from_vec(values), n, Some(nulls))
                }
                None => primitive(ty, buf, n, None),
            }
        }
        Leaf::Date32 => {
            let buf = copy_strided(s, data, pos)?;
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
        return Err(bad_data(format!("an array of {} values where {} are expected", array.len(), pos.count())));
    }
    match node {
        Node::Leaf(s, leaf) => encode_leaf(*s, *leaf, array, out, pos, place),
        Node::Struct(children, _) => {
            refuse_nulls(array, "a record (struct)", pos, place)?;
            let array = array.as_struct();
            for ((offset, child), column) in children.iter().zip(array.columns()) {
                encode(child, column.as_ref(), out, &pos.shifted(*offset), place)?;
            }
            Ok(())
        }
        Node::List { len, stride, item, .. } => {
            refuse_nulls(array, "a subarray (fixed-size list)", pos, place)?;
            let values = array.as_fixed_size_list().values();
            encode(item, values.as_ref(), out, &pos.items(*len, *stride), place)
        }
        Node::Pick { .. } => Err(usage("a part of a row's items cannot be written: write whole rows".to_string())),
    }
}

/// An error naming the first null of `array` (values at `pos`), whose type has no null.
fn refuse_nulls(array: &dyn Array, what: &str, pos: &Pos, place: Place) -> Result<()> {
    let first = array.logical_nulls().and_then(|n| n.iter().position(|valid| !valid));
    match first.and_then(|i| pos.iter().nth(i)) {
        Some(p) => Err(place.invalid(p, format!("null in {what}, which has no NaN or NaT to stand for it"))),
        None => Ok(()),
    }
}

/// `e` naming the column its value is in (`column 'x': ...`); other errors as they are.
pub(crate) fn in_column(e: Error, name: &str) -> Error {
    match e.kind() {
        ErrorKind::InvalidValue { index, reason } => {
            ErrorKind::InvalidValue { index: *index, reason: format!("column '{name}': {reason}") }.into()
        }
        _ => e,
    }
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
