//! The tree of one column: where each of its values sits in a record's bytes, and the
//! Arrow type it becomes, made from a dtype.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, TimeUnit as ArrowUnit};
use npy_core::dtype::{ByteOrder, DType, Scalar, ScalarType, TimeUnit};
use npy_core::{Error, ErrorKind, Result};

use super::keys::{DTYPE_KEY, ITEM};

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
    /// Of the rows of an N-d array (groups of `of` values, a row's items in C order), the
    /// items `start..start + len` of each row: one item (`field` `None`), or a list of
    /// them. Only [`crate::Layout::select`] makes it, to read a part of a row.
    Pick { of: usize, start: usize, len: usize, item: Box<Node>, field: Option<FieldRef> },
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
            Node::Pick { len, field: Some(field), .. } => DataType::FixedSizeList(field.clone(), *len as i32),
            Node::Pick { item, field: None, .. } => item.data_type(),
        }
    }
}

/// The runs of an element's bytes that the [`RESIDUE`] column keeps, in order, their
/// total size (the column's width per element), and the column's index in its layout's
/// schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Residue {
    pub(crate) slots: Vec<Slot>,
    pub(crate) width: usize,
    pub(crate) at: usize,
}

impl Residue {
    pub(crate) fn new(slots: Vec<Slot>, at: usize) -> Residue {
        let width = slots.iter().map(|s| s.len).sum();
        Residue { slots, width, at }
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

/// The tree of one column of this dtype.
pub(crate) fn node_of(dtype: &DType, days: bool) -> Result<Node> {
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

pub(crate) fn leaf_of(s: Scalar, days_as_int64: bool) -> Leaf {
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

pub(crate) fn leaf_type(s: Scalar, leaf: Leaf) -> DataType {
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
pub(crate) fn residue_slots(dtype: &DType) -> Vec<Slot> {
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
pub(crate) fn field_metadata(dtype: &DType, days_as_int64: bool) -> Option<HashMap<String, String>> {
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

pub(crate) fn with_meta(field: Field, meta: Option<HashMap<String, String>>) -> Field {
    match meta {
        Some(m) => field.with_metadata(m),
        None => field,
    }
}

pub(crate) fn checked_i32(n: usize, dtype: &DType) -> Result<i32> {
    i32::try_from(n)
        .map_err(|_| unsupported(dtype, &format!("{n} values in one Arrow list or binary is over i32::MAX")))
}

pub(crate) fn unsupported(dtype: &DType, reason: &str) -> Error {
    ErrorKind::UnsupportedDtype { descr: dtype.descr(), reason: reason.to_string() }.into()
}
