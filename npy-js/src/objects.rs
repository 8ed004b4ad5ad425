//! Object arrays both ways: the pickle `np.save` writes, decoded by npy-core's restricted
//! decoder (which never runs anything) into JavaScript values, and JavaScript values
//! pickled as `np.save` pickles the Python values they stand for.
//!
//! | Python | JavaScript |
//! |---|---|
//! | `None`, `bool`, `float`, `str` | `null`, `boolean`, `number`, `string` |
//! | `int` | `number` when it is a safe integer (at most 2^53 - 1 in magnitude), else `bigint` |
//! | `complex` | `{real, imag}` |
//! | `bytes`, `bytearray` | `Uint8Array` |
//! | `list`, `tuple`, `collections.deque` | `Array` |
//! | `set`, `frozenset` | `Set` |
//! | `dict`, `OrderedDict`, `Counter`, `defaultdict` | a plain object when every key is a `str`, else a `Map` |
//! | an `ndarray`, a NumPy scalar that no plain value stands for (`datetime64`, ...) | an `NpyArray` (0-d for a scalar) |
//! | a masked array (`np.ma.MaskedArray`) | `{pytype: "numpy.ma.MaskedArray", data, mask, fillValue}`: `NpyArray`s (`fillValue` `null` when none was set) |
//! | `datetime`'s, `zoneinfo.ZoneInfo`, `decimal.Decimal`, `fractions.Fraction`, `uuid.UUID`, paths, `range`, `slice`, a class | `{pytype, repr}`: the type's name and Python's `repr()` |
//!
//! Written, `number` is a Python `float`, `bigint` an `int`, `Map` and plain objects
//! `dict`s, `Array` a `list`, `Set` a `set`, `Uint8Array` `bytes`, an `NpyArray` an
//! `ndarray`.

use js_sys::{Array, BigInt, Function, Map, Object as JsObject, Reflect, Set, Uint8Array};
use npy_core::object::{Object, MAX_DEPTH};
use npy_core::prelude::*;
use npy_core::{DynArray, NpyReader, ReadOptions};
use wasm_bindgen::prelude::*;

use crate::error::{usage, JsResult, Located};
use crate::header::count;
use crate::js::object;

/// The values of an object array from its data (the pickle after the header):
/// `{shape, fortranOrder, values}`, the values in storage order, the shape and order the
/// pickle's own (which `np.load` keeps too). `array` makes an `NpyArray` of a `.npy`
/// file's bytes, for arrays and scalars inside. `max_object_bytes` bounds the memory the
/// values take (npy-core's `ReadOptions::max_object_bytes`).
///
/// # Errors
/// npy-core's: a pickle that would run code or build anything but the plain values it
/// knows, a budget exceeded, values nested too deep; all naming `name`.
#[wasm_bindgen(js_name = decodeObjects)]
pub fn decode_objects(
    data: &[u8],
    max_object_bytes: Option<f64>,
    array: &Function,
    name: Option<String>,
) -> JsResult<JsValue> {
    let name = name.as_deref();
    let mut options = ReadOptions::new();
    if let Some(max) = max_object_bytes {
        options.max_object_bytes(count(max, "maxObjectBytes")?);
    }
    let decoded = npy_core::object::from_pickle_with(data, &options).located(name)?;
    let values = decoded.as_slice().iter().map(|o| to_js(o, array)).collect::<JsResult<Array>>()?;
    Ok(object(&[
        ("shape", decoded.shape().iter().map(|&d| JsValue::from(d as f64)).collect::<Array>().into()),
        ("fortranOrder", decoded.fortran_order().into()),
        ("values", values.into()),
    ]))
}

/// The largest integer a JavaScript number holds exactly.
const SAFE: i64 = (1 << 53) - 1;

fn to_js(o: &Object, array: &Function) -> JsResult<JsValue> {
    let dict = |pairs: &[(Object, Object)]| -> JsResult<JsValue> {
        if pairs.iter().all(|(k, _)| matches!(k, Object::Str(_))) {
            let out = JsObject::new();
            for (k, v) in pairs {
                Reflect::set(&out, &to_js(k, array)?, &to_js(v, array)?)?;
            }
            Ok(out.into())
        } else {
            let out = Map::new();
            for (k, v) in pairs {
                out.set(&to_js(k, array)?, &to_js(v, array)?);
            }
            Ok(out.into())
        }
    };
    let npy = |bytes: npy_core::Result<Vec<u8>>| -> JsResult<JsValue> {
        let bytes = bytes.located(None)?;
        array.call1(&JsValue::NULL, &Uint8Array::from(&bytes[..]).into())
    };
    Ok(match o {
        Object::None => JsValue::NULL,
        Object::Bool(b) => (*b).into(),
        Object::Int(i) if (-SAFE..=SAFE).contains(i) => (*i as f64).into(),
        Object::Int(i) => BigInt::from(*i).into(),
        Object::BigInt(text) => BigInt::new(&text.as_str().into())?.into(),
        Object::Float(x) => (*x).into(),
        Object::Complex(re, im) => object(&[("real", (*re).into()), ("imag", (*im).into())]),
        Object::Str(s) => s.as_str().into(),
        Object::Bytes(b) | Object::ByteArray(b) => Uint8Array::from(&b[..]).into(),
        Object::List(items) | Object::Tuple(items) => {
            items.iter().map(|i| to_js(i, array)).collect::<JsResult<Array>>()?.into()
        }
        Object::Set(items) | Object::FrozenSet(items) => {
            let out = Set::new(&JsValue::UNDEFINED);
            for i in items {
                out.add(&to_js(i, array)?);
            }
            out.into()
        }
        Object::Dict(pairs) | Object::OrderedDict(pairs) | Object::Counter(pairs) => dict(pairs)?,
        Object::DefaultDict(d) => dict(&d.entries)?,
        Object::Deque(d) => d.items.iter().map(|i| to_js(i, array)).collect::<JsResult<Array>>()?.into(),
        Object::MaskedArray(m) => object(&[
            ("pytype", o.python_type().into()),
            ("data", to_js(&m.data, array)?),
            ("mask", npy(m.mask.write_npy_to(Vec::new()))?),
            ("fillValue", m.fill_value.as_ref().map_or(Ok(JsValue::NULL), |f| to_js(f, array))?),
        ]),
        Object::Array(a) | Object::Scalar(a) => npy(a.write_npy_to(Vec::new()))?,
        Object::ObjectArray(a) => npy(a.write_npy_to(Vec::new()))?,
        other => object(&[("pytype", other.python_type().into()), ("repr", other.repr().into())]),
    })
}

/// The `.npy` file `np.save` writes for an object array of `shape` (in Fortran order if
/// asked) whose elements, in storage order, are `values`. `array_bytes` gives the `.npy`
/// bytes of a value that is an `NpyArray` (and `undefined` for any other value).
///
/// # Errors
/// A value no Python value stands for (a function, a symbol, a `Date`: say what you
/// mean with a string or a number), values nested deeper than 256 levels (a value inside
/// itself), a count of values other than the shape's; each naming the element.
#[wasm_bindgen(js_name = encodeObjects)]
pub fn encode_objects(
    values: &Array,
    shape: Vec<f64>,
    fortran_order: bool,
    array_bytes: &Function,
) -> JsResult<Vec<u8>> {
    let shape = shape.into_iter().map(|d| count(d, "a dimension")).collect::<JsResult<Vec<_>>>()?;
    let objects = values
        .iter()
        .enumerate()
        .map(|(i, v)| from_js(&v, array_bytes, 0).map_err(|why| usage(format!("element {i}: {why}"))))
        .collect::<JsResult<Vec<_>>>()?;
    let array = if fortran_order {
        npy_core::Array::from_shape_vec_fortran(shape, objects)
    } else {
        npy_core::Array::from_shape_vec(shape, objects)
    }
    .located(None)?;
    array.write_npy_to(Vec::new()).located(None)
}

fn from_js(v: &JsValue, array_bytes: &Function, depth: usize) -> Result<Object, String> {
    if depth > MAX_DEPTH {
        return Err(format!("values nested deeper than {MAX_DEPTH} levels (a value inside itself?)"));
    }
    let inner = |v: &JsValue| from_js(v, array_bytes, depth + 1);
    if v.is_null() || v.is_undefined() {
        return Ok(Object::None);
    }
    if let Some(b) = v.as_bool() {
        return Ok(Object::Bool(b));
    }
    if let Some(x) = v.as_f64() {
        return Ok(Object::Float(x));
    }
    if let Some(s) = v.as_string() {
        return Ok(Object::Str(s));
    }
    if v.is_bigint() {
        let text: String =
            BigInt::from(v.clone()).to_string(10).map_err(|_| "a bigint that has no decimal text")?.into();
        return Ok(text.parse::<i64>().map_or(Object::BigInt(text), Object::Int));
    }
    if let Some(bytes) = v.dyn_ref::<Uint8Array>() {
        return Ok(Object::Bytes(bytes.to_vec()));
    }
    if let Some(items) = v.dyn_ref::<Array>() {
        return items.iter().map(|i| inner(&i)).collect::<Result<_, _>>().map(Object::List);
    }
    if let Some(set) = v.dyn_ref::<Set>() {
        let mut items = Vec::new();
        set.for_each(&mut |item, _, _| items.push(item));
        return items.iter().map(inner).collect::<Result<_, _>>().map(Object::Set);
    }
    if let Some(map) = v.dyn_ref::<Map>() {
        let mut pairs = Vec::new();
        map.for_each(&mut |value, key| pairs.push((key, value)));
        return pairs.iter().map(|(k, v)| Ok((inner(k)?, inner(v)?))).collect::<Result<_, String>>().map(Object::Dict);
    }
    if v.is_function() || v.is_symbol() {
        return Err("a function or symbol is no Python value".into());
    }
    let npy = array_bytes.call1(&JsValue::NULL, v).map_err(|e| format!("{e:?}"))?;
    if let Some(bytes) = npy.dyn_ref::<Uint8Array>() {
        return array_object(&bytes.to_vec());
    }
    let plain = JsObject::get_prototype_of(v);
    if plain.is_null() || plain == JsObject::get_prototype_of(&JsObject::new()) {
        let mut pairs = Vec::new();
        for entry in JsObject::entries(v.unchecked_ref()).iter() {
            let entry: Array = entry.unchecked_into();
            pairs.push((inner(&entry.get(0))?, inner(&entry.get(1))?));
        }
        return Ok(Object::Dict(pairs));
    }
    Err("only null, booleans, numbers, bigints, strings, Uint8Arrays, arrays, sets, maps, plain objects and \
         NpyArrays stand for Python values (a Date or a class instance does not)"
        .into())
}

/// An `NpyArray`'s `.npy` bytes as the value inside an object array.
fn array_object(bytes: &[u8]) -> Result<Object, String> {
    let reader = NpyReader::from_reader(bytes).map_err(|e| e.to_string())?;
    if reader.header().dtype.has_object() {
        let pickle = bytes.get(reader.data_offset()..).unwrap_or_default();
        let inner = npy_core::object::from_pickle(pickle).map_err(|e| e.to_string())?;
        Ok(Object::ObjectArray(Box::new(inner)))
    } else {
        Ok(Object::Array(Box::new(reader.read::<DynArray>().map_err(|e| e.to_string())?)))
    }
}
