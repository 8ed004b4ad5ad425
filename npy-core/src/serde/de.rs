//! The deserializer over one element: its dtype and bytes as serde's data model sees them
//! (the table in the module documentation), scalars handed to visitors as the scalar codec
//! decodes them.

use std::cell::Cell;

use ::serde::de::value::{BorrowedStrDeserializer, SeqDeserializer};
use ::serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use ::serde::{Deserialize, Deserializer};

use super::error::{BResult, BridgeError};
use super::tree::{charge, node, prim, stride, Node, ZERO_SIZE_BUDGET};
use crate::dtype::{DType, Record, ScalarType};
use crate::error::Result;
use crate::scalar::{f16_to_f32, trim_nuls, Value as Prim};

/// Element `index` (for errors) of `dtype` from its bytes, which have the right length.
pub(super) fn element<'de, T: Deserialize<'de>>(dtype: &'de DType, bytes: &'de [u8], index: usize) -> Result<T> {
    let budget = Cell::new(ZERO_SIZE_BUDGET);
    T::deserialize(De { dtype, dims: &[], bytes, budget: &budget }).map_err(|e| e.into_error(Some(index)))
}

/// Hands a scalar to a visitor: `S` without its trailing NULs, `f2` as `f32`, complex
/// numbers as `(re, im)` pairs, long doubles as their bytes.
fn visit_prim<'de, V: Visitor<'de>>(p: Prim<'de>, v: V) -> BResult<V::Value> {
    match p {
        Prim::Bool(x) => v.visit_bool(x),
        Prim::I8(x) => v.visit_i8(x),
        Prim::I16(x) => v.visit_i16(x),
        Prim::I32(x) => v.visit_i32(x),
        Prim::I64(x) | Prim::DateTime(x, _) | Prim::TimeDelta(x, _) => v.visit_i64(x),
        Prim::U8(x) => v.visit_u8(x),
        Prim::U16(x) => v.visit_u16(x),
        Prim::U32(x) => v.visit_u32(x),
        Prim::U64(x) => v.visit_u64(x),
        Prim::F16(h) => v.visit_f32(f16_to_f32(h)),
        Prim::F32(x) => v.visit_f32(x),
        Prim::F64(x) => v.visit_f64(x),
        Prim::C64(re, im) => v.visit_seq(SeqDeserializer::new([re, im].into_iter())),
        Prim::C128(re, im) => v.visit_seq(SeqDeserializer::new([re, im].into_iter())),
        Prim::Bytes(b) => v.visit_borrowed_bytes(trim_nuls(b)),
        Prim::Void(b) => v.visit_borrowed_bytes(b),
        Prim::Str(s) => v.visit_string(s.into_owned()),
        Prim::LongDouble(b) => v.visit_byte_buf(b.to_vec()),
        Prim::LongComplex(b) => v.visit_byte_buf(b.to_vec()),
    }
}

/// A deserializer over one element (or a part of it): its dtype and bytes.
#[derive(Clone, Copy)]
struct De<'de, 'c> {
    dtype: &'de DType,
    /// Non-empty: an array level of `dtype` items of these dimensions.
    dims: &'de [usize],
    bytes: &'de [u8],
    budget: &'c Cell<usize>,
}

impl<'de, 'c> De<'de, 'c> {
    fn array(self, dtype: &'de DType, dims: &'de [usize]) -> BResult<ArraySeq<'de, 'c>> {
        let stride = stride(dtype, dims);
        charge(self.budget, dims[0], stride)?;
        Ok(ArraySeq { dtype, dims, bytes: self.bytes, stride, i: 0, budget: self.budget })
    }

    fn fields(self, r: &'de Record) -> Fields<'de, 'c> {
        Fields { record: r, bytes: self.bytes, i: 0, budget: self.budget }
    }
}

/// The items of a subarray level, as a sequence.
struct ArraySeq<'de, 'c> {
    dtype: &'de DType,
    dims: &'de [usize],
    bytes: &'de [u8],
    stride: usize,
    i: usize,
    budget: &'c Cell<usize>,
}

impl<'de> SeqAccess<'de> for ArraySeq<'de, '_> {
    type Error = BridgeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> BResult<Option<T::Value>> {
        let i = self.i;
        if i >= self.dims[0] {
            return Ok(None);
        }
        self.i += 1;
        let bytes = &self.bytes[i * self.stride..(i + 1) * self.stride];
        let de = De { dtype: self.dtype, dims: &self.dims[1..], bytes, budget: self.budget };
        seed.deserialize(de).map(Some).map_err(|e| e.index(i))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.dims[0] - self.i)
    }
}

/// The fields of a record, as a map (by name) or a sequence (positional).
struct Fields<'de, 'c> {
    record: &'de Record,
    bytes: &'de [u8],
    i: usize,
    budget: &'c Cell<usize>,
}

impl<'de> Fields<'de, '_> {
    fn value<T: DeserializeSeed<'de>>(&mut self, seed: T) -> BResult<Option<T::Value>> {
        let Some(f) = self.record.fields().get(self.i) else { return Ok(None) };
        self.i += 1;
        let bytes = &self.bytes[f.offset..f.offset + f.dtype.itemsize()];
        let de = De { dtype: &f.dtype, dims: &[], bytes, budget: self.budget };
        seed.deserialize(de).map(Some).map_err(|e| e.field(&f.name))
    }
}

impl<'de> MapAccess<'de> for Fields<'de, '_> {
    type Error = BridgeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> BResult<Option<K::Value>> {
        match self.record.fields().get(self.i) {
            Some(f) => seed.deserialize(BorrowedStrDeserializer::new(&f.name)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> BResult<V::Value> {
        self.value(seed)?.ok_or_else(|| BridgeError::mismatch("a value was asked for after the last field"))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.record.fields().len() - self.i)
    }
}

impl<'de> SeqAccess<'de> for Fields<'de, '_> {
    type Error = BridgeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> BResult<Option<T::Value>> {
        self.value(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.record.fields().len() - self.i)
    }
}

fn invalid_length(found: usize, wanted: usize) -> BridgeError {
    de::Error::invalid_length(found, &format!("a tuple of {wanted}").as_str())
}

impl<'de> Deserializer<'de> for De<'de, '_> {
    type Error = BridgeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> BResult<V::Value> {
        match node(self.dtype, self.dims) {
            Node::Array { dtype, dims } => visitor.visit_seq(self.array(dtype, dims)?),
            Node::Record(r) => visitor.visit_map(self.fields(r)),
            Node::Scalar(s) => visit_prim(prim(s, self.bytes)?, visitor),
        }
    }

    /// `S` as a str when it is UTF-8 (else bytes, which `String` refuses with a clear message).
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> BResult<V::Value> {
        match node(self.dtype, self.dims) {
            Node::Scalar(s) if matches!(s.ty(), ScalarType::Bytes(_)) => {
                let b = trim_nuls(&self.bytes[..s.itemsize()]);
                match std::str::from_utf8(b) {
                    Ok(text) => visitor.visit_borrowed_str(text),
                    Err(_) => visitor.visit_borrowed_bytes(b),
                }
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> BResult<V::Value> {
        self.deserialize_str(visitor)
    }

    /// Subarrays and records as sequences; `S`, `V` and long doubles as sequences of bytes.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> BResult<V::Value> {
        match node(self.dtype, self.dims) {
            Node::Array { dtype, dims } => visitor.visit_seq(self.array(dtype, dims)?),
            Node::Record(r) => visitor.visit_seq(self.fields(r)),
            Node::Scalar(s) => match prim(s, self.bytes)? {
                Prim::Bytes(b) => visitor.visit_seq(SeqDeserializer::new(trim_nuls(b).iter().copied())),
                Prim::Void(b) => visitor.visit_seq(SeqDeserializer::new(b.iter().copied())),
                Prim::LongDouble(b) => visitor.visit_seq(SeqDeserializer::new(b.into_iter())),
                Prim::LongComplex(b) => visitor.visit_seq(SeqDeserializer::new(b.into_iter())),
                p => visit_prim(p, visitor),
            },
        }
    }

    /// As [`De::deserialize_seq`], with the length checked: a tuple or array must have as
    /// many items as the subarray or record; `S n` gives all `n` bytes to `[u8; n]`.
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> BResult<V::Value> {
        match node(self.dtype, self.dims) {
            Node::Array { dims, .. } if dims[0] != len => Err(invalid_length(dims[0], len)),
            Node::Record(r) if r.fields().len() != len => Err(invalid_length(r.fields().len(), len)),
            Node::Scalar(s) if s.ty() == ScalarType::Bytes(len) => {
                visitor.visit_seq(SeqDeserializer::new(self.bytes[..len].iter().copied()))
            }
            _ => self.deserialize_seq(visitor),
        }
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, len: usize, visitor: V) -> BResult<V::Value> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> BResult<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> BResult<V::Value> {
        if self.dims.is_empty() && self.dtype.itemsize() == 0 {
            return visitor.visit_unit();
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> BResult<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> BResult<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    /// Unit variants: by name from `U`/`S` strings, by index from integers.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> BResult<V::Value> {
        let Node::Scalar(s) = node(self.dtype, self.dims) else {
            return Err(BridgeError::mismatch(format!(
                "enum {name} needs a string or an integer, found a record or subarray"
            )));
        };
        let index = |x: i128| {
            u32::try_from(x).map_err(|_| BridgeError::mismatch(format!("{x} is not a variant index of enum {name}")))
        };
        match prim(s, self.bytes)? {
            Prim::Str(text) => visitor.visit_enum(text.into_owned().into_deserializer()),
            Prim::Bytes(b) => match std::str::from_utf8(trim_nuls(b)) {
                Ok(text) => visitor.visit_enum(BorrowedStrDeserializer::new(text)),
                Err(_) => {
                    Err(BridgeError::mismatch(format!("bytes that are not UTF-8 cannot name a variant of enum {name}")))
                }
            },
            Prim::I8(x) => visitor.visit_enum(index(x.into())?.into_deserializer()),
            Prim::I16(x) => visitor.visit_enum(index(x.into())?.into_deserializer()),
            Prim::I32(x) => visitor.visit_enum(index(x.into())?.into_deserializer()),
            Prim::I64(x) => visitor.visit_enum(index(x.into())?.into_deserializer()),
            Prim::U8(x) => visitor.visit_enum(u32::from(x).into_deserializer()),
            Prim::U16(x) => visitor.visit_enum(u32::from(x).into_deserializer()),
            Prim::U32(x) => visitor.visit_enum(x.into_deserializer()),
            Prim::U64(x) => visitor.visit_enum(index(x.into())?.into_deserializer()),
            _ => Err(BridgeError::mismatch(format!("enum {name} cannot be read from {}", s.type_str()))),
        }
    }

    /// Skipped without decoding (fields a struct does not have).
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> BResult<V::Value> {
        visitor.visit_unit()
    }

    ::serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf map struct identifier
    }
}
