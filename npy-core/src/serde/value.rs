//! `Value`, one element of any dtype as a dynamic value: decoded from a dtype and bytes, and
//! serialized as JSON-friendly data.

use std::cell::Cell;

use ::serde::ser::{Serialize, SerializeMap, Serializer};

use super::error::{BResult, BridgeError};
use super::tree::{charge, check_len, node, prim, stride, Node, ZERO_SIZE_BUDGET};
use crate::array::DynArray;
use crate::dtype::{DType, DateUnit};
use crate::error::{Error, Result};
use crate::scalar::{trim_nuls, Number, Value as Prim};

/// One element of any dtype, decoded: for files whose type is not known in advance.
///
/// Built by [`Value::decode`] (and [`Value::from_dyn`], [`values`](super::values)) from a dtype
/// and bytes, or by [`to_value`](super::to_value) from any `Serialize` value. Its `Serialize`
/// implementation gives JSON-friendly data: records as maps (field order kept), subarrays as
/// nested sequences, complex numbers as `[re, im]`, datetimes and timedeltas as their `i64`
/// count (NaT is `i64::MIN`), `S`, `V` and long doubles as bytes.
///
/// # Examples
/// ```
/// use npy_core::serde::Value;
/// use npy_core::DType;
///
/// let dtype: DType = "[('id', '<i4'), ('pos', '<f4', (2,)), ('name', '<U3')]".parse()?;
/// let mut bytes = 7i32.to_le_bytes().to_vec();
/// bytes.extend(1.5f32.to_le_bytes());
/// bytes.extend((-2.0f32).to_le_bytes());
/// bytes.extend([b'a' as u32, b'b' as u32, 0].iter().flat_map(|c| c.to_le_bytes()));
/// let v = Value::decode(&dtype, &bytes)?;
/// assert_eq!(v.get("id"), Some(&Value::Int(7)));
/// assert_eq!(v.get("pos"), Some(&Value::Array(vec![Value::Float(1.5), Value::Float(-2.0)])));
/// assert_eq!(v.get("name"), Some(&Value::Str("ab".into())));
/// assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"id":7,"pos":[1.5,-2.0],"name":"ab"}"#);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// `b1`.
    Bool(bool),
    /// `i1`–`i8`; from serde, any signed integer.
    Int(i64),
    /// `u1`–`u8`; from serde, any unsigned integer.
    UInt(u64),
    /// `f2`, `f4`, `f8` (exactly: every `f2` and `f4` is an `f64`).
    Float(f64),
    /// `c8`, `c16`: real and imaginary parts.
    Complex(f64, f64),
    /// `U n`, trailing NULs stripped; from serde, strings and chars.
    Str(String),
    /// `S n`, trailing NULs stripped (as NumPy shows them); from serde, bytes.
    Bytes(Vec<u8>),
    /// `M8[unit]`: a count of units since 1970-01-01 (NaT is `i64::MIN`).
    DateTime {
        /// The count.
        value: i64,
        /// The unit.
        unit: DateUnit,
    },
    /// `m8[unit]`: a count of units (NaT is `i64::MIN`).
    TimeDelta {
        /// The count.
        value: i64,
        /// The unit.
        unit: DateUnit,
    },
    /// `f16`: the 16 bytes of an x86 long double, little-endian (the 80-bit value in the
    /// first 10).
    LongDouble(Vec<u8>),
    /// `c32`: two long doubles (real, imaginary), each as in [`Value::LongDouble`].
    LongComplex(Vec<u8>),
    /// `V n`: the raw bytes.
    Void(Vec<u8>),
    /// A record: `(name, value)` for each field, in offset order; from serde, structs and
    /// maps.
    Record(Vec<(String, Value)>),
    /// A subarray level: a subarray of shape `(2, 3)` is an `Array` of 2 `Array`s of 3;
    /// from serde, sequences, tuples and arrays.
    Array(Vec<Value>),
}

impl Value {
    /// Decodes one element from its bytes as stored (`dtype.itemsize()` bytes, in the
    /// dtype's byte order).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`](crate::ErrorKind::Usage) when `bytes` is not one element long;
    /// [`ErrorKind::InvalidValue`](crate::ErrorKind::InvalidValue) (index 0) for `b1` bytes other
    /// than 0/1, invalid code points, and subarrays of more than 65,536 zero-size items.
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::{DateUnit, TimeUnit};
    /// use npy_core::serde::Value;
    /// use npy_core::DType;
    ///
    /// let dtype: DType = "'>M8[s]'".parse()?;
    /// let v = Value::decode(&dtype, &1_700_000_000i64.to_be_bytes())?;
    /// assert_eq!(v, Value::DateTime { value: 1_700_000_000, unit: DateUnit::new(TimeUnit::Seconds) });
    /// assert!(Value::decode(&"'|b1'".parse()?, &[2]).is_err());
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn decode(dtype: &DType, bytes: &[u8]) -> Result<Value> {
        check_len(dtype, bytes)?;
        decode_at(dtype, bytes, 0)
    }

    /// Decodes the element at storage index `index` (the position in the data, in the
    /// array's memory order) of a [`DynArray`].
    ///
    /// # Errors
    /// [`ErrorKind::Usage`](crate::ErrorKind::Usage) for an index past the end; as [`Value::decode`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::serde::Value;
    /// use npy_core::{DynArray, prelude::*};
    ///
    /// let file = Array::from_shape_vec_fortran(vec![2, 2], vec![1i8, 2, 3, 4])?.write_npy_to(Vec::new())?;
    /// let arr = DynArray::read_npy_from(&file[..])?;
    /// assert_eq!(Value::from_dyn(&arr, 1)?, Value::Int(2)); // storage order: [1, 2, 3, 4]
    /// assert!(Value::from_dyn(&arr, 4).is_err());
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn from_dyn(array: &DynArray, index: usize) -> Result<Value> {
        let (n, size) = (array.len(), array.dtype().itemsize());
        if index >= n {
            return Err(Error::usage(format!("element {index} is out of bounds for an array of {n} elements")));
        }
        decode_at(array.dtype(), &array.data()[index * size..(index + 1) * size], index)
    }

    /// The value of field `name`, if this is a record that has it.
    ///
    /// # Examples
    /// ```
    /// use npy_core::serde::Value;
    ///
    /// let v = Value::Record(vec![("x".into(), Value::Float(1.0))]);
    /// assert_eq!(v.get("x"), Some(&Value::Float(1.0)));
    /// assert_eq!(v.get("y"), None);
    /// assert_eq!(Value::Int(1).get("x"), None);
    /// ```
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Record(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The scalar values inside, in order, each with its path: field names joined by `.`,
    /// subarray indices as `[i]` (`receiver.x`, `samples[3]`, `m23[1][2]`); a scalar is
    /// its own only leaf, with an empty path. Columns for tables and CSV.
    ///
    /// # Examples
    /// ```
    /// use npy_core::serde::Value;
    ///
    /// let v = Value::Record(vec![
    ///     ("id".into(), Value::Int(7)),
    ///     ("pos".into(), Value::Array(vec![Value::Float(1.5), Value::Float(-2.0)])),
    ///     ("rx".into(), Value::Record(vec![("z".into(), Value::Float(0.25))])),
    /// ]);
    /// let leaves: Vec<(String, &Value)> = v.leaves();
    /// let paths: Vec<&str> = leaves.iter().map(|(p, _)| p.as_str()).collect();
    /// assert_eq!(paths, ["id", "pos[0]", "pos[1]", "rx.z"]);
    /// assert_eq!(leaves[2].1, &Value::Float(-2.0));
    /// assert_eq!(Value::Int(1).leaves(), [(String::new(), &Value::Int(1))]);
    /// ```
    pub fn leaves(&self) -> Vec<(String, &Value)> {
        fn walk<'v>(v: &'v Value, path: &mut String, out: &mut Vec<(String, &'v Value)>) {
            let len = path.len();
            match v {
                Value::Record(fields) => {
                    for (name, item) in fields {
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(name);
                        walk(item, path, out);
                        path.truncate(len);
                    }
                }
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        path.push_str(&format!("[{i}]"));
                        walk(item, path, out);
                        path.truncate(len);
                    }
                }
                scalar => out.push((path.clone(), scalar)),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut String::new(), &mut out);
        out
    }

    pub(super) fn kind(&self) -> &'static str {
        match self {
            Value::Bool(_) => "a bool",
            Value::Int(_) | Value::UInt(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Complex(..) => "a complex number",
            Value::Str(_) => "a string",
            Value::Bytes(_) => "bytes",
            Value::DateTime { .. } => "a datetime",
            Value::TimeDelta { .. } => "a timedelta",
            Value::LongDouble(_) => "a long double",
            Value::LongComplex(_) => "a long double complex",
            Value::Void(_) => "void bytes",
            Value::Record(_) => "a struct",
            Value::Array(_) => "a sequence",
        }
    }
}

pub(super) fn decode_at(dtype: &DType, bytes: &[u8], index: usize) -> Result<Value> {
    let budget = Cell::new(ZERO_SIZE_BUDGET);
    decode(dtype, &[], bytes, &budget).map_err(|e| e.into_error(Some(index)))
}

fn decode(dtype: &DType, dims: &[usize], bytes: &[u8], budget: &Cell<usize>) -> BResult<Value> {
    Ok(match node(dtype, dims) {
        Node::Array { dtype, dims } => {
            let (n, stride) = (dims[0], stride(dtype, dims));
            charge(budget, n, stride)?;
            let items = (0..n).map(|i| {
                decode(dtype, &dims[1..], &bytes[i * stride..(i + 1) * stride], budget).map_err(|e| e.index(i))
            });
            Value::Array(items.collect::<BResult<_>>()?)
        }
        Node::Record(r) => {
            let fields = r.fields().iter().map(|f| {
                let b = &bytes[f.offset..f.offset + f.dtype.itemsize()];
                Ok((f.name.clone(), decode(&f.dtype, &[], b, budget).map_err(|e| e.field(&f.name))?))
            });
            Value::Record(fields.collect::<BResult<_>>()?)
        }
        Node::Scalar(s) => match prim(s, bytes)? {
            Prim::Bool(x) => Value::Bool(x),
            Prim::DateTime(value, unit) => Value::DateTime { value, unit },
            Prim::TimeDelta(value, unit) => Value::TimeDelta { value, unit },
            Prim::Bytes(b) => Value::Bytes(trim_nuls(b).to_vec()),
            Prim::Str(s) => Value::Str(s.into_owned()),
            Prim::Void(b) => Value::Void(b.to_vec()),
            Prim::LongDouble(b) => Value::LongDouble(b.to_vec()),
            Prim::LongComplex(b) => Value::LongComplex(b.to_vec()),
            number => match number.number() {
                Some(Number::Int(x)) => Value::Int(x),
                Some(Number::UInt(x)) => Value::UInt(x),
                Some(Number::Float(x)) => Value::Float(x),
                Some(Number::Complex(re, im)) => Value::Complex(re, im),
                None => return Err(BridgeError::mismatch(format!("unsupported scalar type {}", s.type_str()))),
            },
        },
    })
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Value::Bool(x) => s.serialize_bool(*x),
            Value::Int(x) => s.serialize_i64(*x),
            Value::UInt(x) => s.serialize_u64(*x),
            Value::Float(x) => s.serialize_f64(*x),
            Value::Complex(re, im) => (re, im).serialize(s),
            Value::Str(x) => s.serialize_str(x),
            Value::Bytes(b) | Value::Void(b) | Value::LongDouble(b) | Value::LongComplex(b) => s.serialize_bytes(b),
            Value::DateTime { value, .. } | Value::TimeDelta { value, .. } => s.serialize_i64(*value),
            Value::Record(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (name, value) in fields {
                    map.serialize_entry(name, value)?;
                }
                map.end()
            }
            Value::Array(items) => items.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::serde::dt;

    #[test]
    fn scalars_decode_in_either_byte_order() {
        for (descr, bytes, want) in [
            ("'<i2'", vec![0xfe, 0xff], Value::Int(-2)),
            ("'>i2'", vec![0xff, 0xfe], Value::Int(-2)),
            ("'>u4'", vec![0, 0, 1, 2], Value::UInt(258)),
            ("'>f2'", vec![0x3c, 0x00], Value::Float(1.0)),
            ("'<f2'", vec![0x00, 0xc0], Value::Float(-2.0)),
            ("'>c8'", [1.5f32.to_be_bytes(), (-1f32).to_be_bytes()].concat(), Value::Complex(1.5, -1.0)),
            ("'|S4'", b"ab\0\0".to_vec(), Value::Bytes(b"ab".to_vec())),
            ("'|S4'", b"a\0b\0".to_vec(), Value::Bytes(b"a\0b".to_vec())),
            ("'>U2'", vec![0, 0, 0, 0xe9, 0, 0, 0, 0], Value::Str("é".into())),
            ("'|V2'", vec![0, 7], Value::Void(vec![0, 7])),
            (
                "'>m8[ms]'",
                (-5i64).to_be_bytes().to_vec(),
                Value::TimeDelta { value: -5, unit: DateUnit::new(crate::dtype::TimeUnit::Milliseconds) },
            ),
            ("'>f16'", (0u8..16).collect(), Value::LongDouble((0u8..16).rev().collect())),
        ] {
            assert_eq!(Value::decode(&dt(descr), &bytes).unwrap(), want, "{descr}");
        }
    }

    #[test]
    fn bad_data_is_an_invalid_value_naming_the_field() {
        let d = dt("[('a', '|u1'), ('b', [('c', '|b1', (2,))])]");
        let e = Value::decode(&d, &[0, 1, 5]).unwrap_err();
        let ErrorKind::InvalidValue { index: 0, reason } = e.kind() else { panic!("{e}") };
        assert_eq!(reason, "field 'b.c[1]': b1 byte 5 is not 0 or 1");
        let e = Value::decode(&dt("'<U2'"), &[0x41, 0, 0, 0, 0, 0xd8, 0, 0]).unwrap_err();
        assert!(e.to_string().contains("code point 0xd800 at position 1"), "{e}");
        assert!(matches!(Value::decode(&d, &[0, 1]).unwrap_err().kind(), ErrorKind::Usage { .. }));
    }
}
