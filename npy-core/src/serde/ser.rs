//! The serializer into `Value`: any `Serialize` value as the writers see it.

use std::fmt;

use ::serde::ser::{self, Serialize, Serializer};

use super::error::{BResult, BridgeError};
use super::value::Value;
use crate::error::Result;
use crate::scalar::widen;

/// Converts any `Serialize` value into a [`Value`] as the writers see it: structs and
/// maps become records, sequences arrays, integers `Int`/`UInt`, floats `Float`, chars
/// and strings `Str`, bytes `Bytes`, unit variants their name.
///
/// # Errors
/// [`ErrorKind::Serde`](crate::ErrorKind::Serde) for values NumPy has no type for: `None`, `()`,
/// unit structs, enum variants with data, map keys that are not strings, 128-bit integers past 64
/// bits.
///
/// # Examples
/// ```
/// use npy_core::serde::{to_value, Value};
///
/// #[derive(serde::Serialize)]
/// struct P {
///     x: f32,
///     tags: (u8, u8),
/// }
///
/// let v = to_value(&P { x: 0.5, tags: (1, 2) })?;
/// assert_eq!(
///     v,
///     Value::Record(vec![
///         ("x".into(), Value::Float(0.5)),
///         ("tags".into(), Value::Array(vec![Value::UInt(1), Value::UInt(2)])),
///     ])
/// );
/// assert!(to_value(&None::<i32>).is_err());
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value> {
    value.serialize(ValueSer).map_err(|e| e.into_error(None))
}

pub(super) struct ValueSer;

fn no_value(what: impl fmt::Display) -> BridgeError {
    BridgeError::mismatch(format!("{what} has no NumPy value"))
}

impl Serializer for ValueSer {
    type Ok = Value;
    type Error = BridgeError;
    type SerializeSeq = SeqSer;
    type SerializeTuple = SeqSer;
    type SerializeTupleStruct = SeqSer;
    type SerializeTupleVariant = ser::Impossible<Value, BridgeError>;
    type SerializeMap = MapSer;
    type SerializeStruct = MapSer;
    type SerializeStructVariant = ser::Impossible<Value, BridgeError>;

    fn serialize_bool(self, v: bool) -> BResult<Value> {
        Ok(Value::Bool(v))
    }

    fn serialize_i8(self, v: i8) -> BResult<Value> {
        Ok(Value::Int(v.into()))
    }

    fn serialize_i16(self, v: i16) -> BResult<Value> {
        Ok(Value::Int(v.into()))
    }

    fn serialize_i32(self, v: i32) -> BResult<Value> {
        Ok(Value::Int(v.into()))
    }

    fn serialize_i64(self, v: i64) -> BResult<Value> {
        Ok(Value::Int(v))
    }

    fn serialize_i128(self, v: i128) -> BResult<Value> {
        i64::try_from(v).map(Value::Int).map_err(|_| BridgeError::mismatch(format!("{v} does not fit in 64 bits")))
    }

    fn serialize_u8(self, v: u8) -> BResult<Value> {
        Ok(Value::UInt(v.into()))
    }

    fn serialize_u16(self, v: u16) -> BResult<Value> {
        Ok(Value::UInt(v.into()))
    }

    fn serialize_u32(self, v: u32) -> BResult<Value> {
        Ok(Value::UInt(v.into()))
    }

    fn serialize_u64(self, v: u64) -> BResult<Value> {
        Ok(Value::UInt(v))
    }

    fn serialize_u128(self, v: u128) -> BResult<Value> {
        u64::try_from(v).map(Value::UInt).map_err(|_| BridgeError::mismatch(format!("{v} does not fit in 64 bits")))
    }

    fn serialize_f32(self, v: f32) -> BResult<Value> {
        Ok(Value::Float(widen(v)))
    }

    fn serialize_f64(self, v: f64) -> BResult<Value> {
        Ok(Value::Float(v))
    }

    fn serialize_char(self, v: char) -> BResult<Value> {
        Ok(Value::Str(v.to_string()))
    }

    fn serialize_str(self, v: &str) -> BResult<Value> {
        Ok(Value::Str(v.to_string()))
    }

    fn serialize_bytes(self, v: &[u8]) -> BResult<Value> {
        Ok(Value::Bytes(v.to_vec()))
    }

    fn serialize_none(self) -> BResult<Value> {
        Err(no_value("None"))
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> BResult<Value> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> BResult<Value> {
        Err(no_value("()"))
    }

    fn serialize_unit_struct(self, name: &'static str) -> BResult<Value> {
        Err(no_value(format!("unit struct {name}")))
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> BResult<Value> {
        Ok(Value::Str(variant.to_string()))
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> BResult<Value> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> BResult<Value> {
        Err(no_value(format!("enum variant {name}::{variant} with data")))
    }

    fn serialize_seq(self, len: Option<usize>) -> BResult<SeqSer> {
        Ok(SeqSer { items: Vec::with_capacity(len.unwrap_or(0).min(4096)) })
    }

    fn serialize_tuple(self, len: usize) -> BResult<SeqSer> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> BResult<SeqSer> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> BResult<Self::SerializeTupleVariant> {
        Err(no_value(format!("enum variant {name}::{variant} with data")))
    }

    fn serialize_map(self, len: Option<usize>) -> BResult<MapSer> {
        Ok(MapSer { fields: Vec::with_capacity(len.unwrap_or(0).min(4096)), key: None })
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> BResult<MapSer> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> BResult<Self::SerializeStructVariant> {
        Err(no_value(format!("enum variant {name}::{variant} with data")))
    }
}

pub(super) struct SeqSer {
    items: Vec<Value>,
}

impl SeqSer {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> BResult<()> {
        let i = self.items.len();
        self.items.push(value.serialize(ValueSer).map_err(|e| e.index(i))?);
        Ok(())
    }
}

impl ser::SerializeSeq for SeqSer {
    type Ok = Value;
    type Error = BridgeError;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> BResult<()> {
        self.push(value)
    }

    fn end(self) -> BResult<Value> {
        Ok(Value::Array(self.items))
    }
}

impl ser::SerializeTuple for SeqSer {
    type Ok = Value;
    type Error = BridgeError;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> BResult<()> {
        self.push(value)
    }

    fn end(self) -> BResult<Value> {
        Ok(Value::Array(self.items))
    }
}

impl ser::SerializeTupleStruct for SeqSer {
    type Ok = Value;
    type Error = BridgeError;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> BResult<()> {
        self.push(value)
    }

    fn end(self) -> BResult<Value> {
        Ok(Value::Array(self.items))
    }
}

pub(super) struct MapSer {
    fields: Vec<(String, Value)>,
    key: Option<String>,
}

impl MapSer {
    fn push<T: ?Sized + Serialize>(&mut self, name: String, value: &T) -> BResult<()> {
        let v = value.serialize(ValueSer).map_err(|e| e.field(&name))?;
        self.fields.push((name, v));
        Ok(())
    }
}

impl ser::SerializeMap for MapSer {
    type Ok = Value;
    type Error = BridgeError;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> BResult<()> {
        match key.serialize(ValueSer)? {
            Value::Str(name) => {
                self.key = Some(name);
                Ok(())
            }
            other => {
                Err(BridgeError::mismatch(format!("map keys name fields and must be strings, not {}", other.kind())))
            }
        }
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> BResult<()> {
        let name = self.key.take().ok_or_else(|| BridgeError::mismatch("a map value came without its key"))?;
        self.push(name, value)
    }

    fn end(self) -> BResult<Value> {
        Ok(Value::Record(self.fields))
    }
}

impl ser::SerializeStruct for MapSer {
    type Ok = Value;
    type Error = BridgeError;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> BResult<()> {
        self.push(key.to_string(), value)
    }

    fn end(self) -> BResult<Value> {
        Ok(Value::Record(self.fields))
    }
}
