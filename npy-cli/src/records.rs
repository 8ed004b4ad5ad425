//! Records of a file as dynamic values: the input of `npy head` and `npy dump`.
//!
//! Object arrays (`|O`) are decoded whole by npy-core's restricted pickle decoder (never
//! running any code) and their elements given as [`Object`]s.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use npy_core::literal::Literal;
use npy_core::npz::Reader;
use npy_core::serde::{values, Value};
use npy_core::{Error, NpyReader, Object, ReadOptions, Result};

/// One element of a file: a value of a plain dtype, or a Python object of an object array.
#[derive(Debug)]
pub enum Element {
    Value(Value),
    Object(Object),
}

/// Calls `each` on every record of `file` (or of `member` of an `.npz`), in storage
/// order, reading `chunk` records at a time (an object array at once); `each` returns
/// `false` to stop early. `started` gets the data size in bytes before the first record
/// (0 for an object array, decoded before any element is shown).
pub fn for_each(
    file: &Path,
    member: Option<&str>,
    opts: &ReadOptions,
    chunk: usize,
    started: impl FnOnce(u64),
    each: impl FnMut(Element) -> Result<bool>,
) -> Result<()> {
    if crate::npz::is_npz(file)? {
        let mut archive = Reader::open(file)?;
        archive.read_options(opts.clone());
        let name = match member {
            Some(m) => m.to_string(),
            None => match archive.names() {
                [only] => only.clone(),
                names => {
                    return Err(Error::from(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!(
                            "the archive has {} members ({}): choose one with --member",
                            names.len(),
                            names.join(", ")
                        ),
                    )))
                }
            },
        };
        let reader = archive.npy(&name)?;
        drain(reader, chunk, started, each)
    } else {
        let reader: NpyReader<BufReader<File>> = opts.open_path(file)?;
        drain(reader, chunk, started, each)
    }
}

fn drain<R: std::io::Read>(
    reader: NpyReader<R>,
    chunk: usize,
    started: impl FnOnce(u64),
    mut each: impl FnMut(Element) -> Result<bool>,
) -> Result<()> {
    if reader.header().dtype.has_object() {
        started(0);
        for object in reader.read_objects()?.into_vec() {
            if !each(Element::Object(object))? {
                break;
            }
        }
        return Ok(());
    }
    started(reader.data_len() as u64);
    for value in values(reader, chunk) {
        if !each(Element::Value(value?))? {
            break;
        }
    }
    Ok(())
}

/// A value as one cell of a table or CSV: strings as they are, byte strings as Python
/// shows them (`b'LINE-001'`), floats in their shortest form (`nan`, `inf` spelled out),
/// the rest as their JSON text.
pub fn cell(value: &Value) -> String {
    match value {
        Value::Str(s) => s.clone(),
        Value::Bytes(b) => Literal::Bytes(b.clone()).repr(),
        Value::Float(f) => float_text(*f),
        Value::Complex(re, im) => format!("({}, {})", float_text(*re), float_text(*im)),
        other => serde_json::to_string(other).unwrap_or_else(|e| format!("<{e}>")),
    }
}

/// The shortest text that reads back as `f`; values that are `f32`s (from `<f4` fields)
/// in the `f32`'s shortest form, so `0.004` stays `0.004`.
fn float_text(f: f64) -> String {
    if f.is_nan() {
        "nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if (f as f32) as f64 == f {
        format!("{}", f as f32)
    } else {
        format!("{f}")
    }
}

/// The leaves of a record (`a.b`, `samples[3]`), or `value` for a scalar element.
pub fn columns(value: &Value) -> Vec<(String, &Value)> {
    let leaves = value.leaves();
    if leaves.len() == 1 && leaves[0].0.is_empty() {
        return vec![("value".to_string(), leaves[0].1)];
    }
    leaves
}

/// An element's columns as (name, cell text): the leaves of a record, or one `value`
/// column (an object as Python shows it, a `str` as it is).
pub fn cells(element: &Element) -> Vec<(String, String)> {
    match element {
        Element::Value(value) => columns(value).into_iter().map(|(name, v)| (name, cell(v))).collect(),
        Element::Object(Object::Str(s)) => vec![("value".to_string(), s.clone())],
        Element::Object(object) => vec![("value".to_string(), object.repr())],
    }
}

/// `None` as `null`; bools, ints and floats as JSON numbers (non-finite floats as `null`,
/// as for other dtypes); ints beyond 64 bits as their decimal string; complex as
/// `[re, im]`; bytes as an array of numbers (as `S` fields); lists and tuples as arrays;
/// dicts as objects when every key is a `str`, else as arrays of `[key, value]` pairs.
pub fn object_json(object: &Object) -> serde_json::Value {
    use serde_json::Value as J;
    let float = |f: f64| serde_json::Number::from_f64(f).map_or(J::Null, J::Number);
    match object {
        Object::None => J::Null,
        Object::Bool(b) => J::Bool(*b),
        Object::Int(i) => J::from(*i),
        Object::BigInt(digits) => J::String(digits.clone()),
        Object::Float(f) => float(*f),
        Object::Complex(re, im) => J::Array(vec![float(*re), float(*im)]),
        Object::Str(s) => J::String(s.clone()),
        Object::Bytes(b) => J::Array(b.iter().map(|&x| J::from(x)).collect()),
        Object::List(items) | Object::Tuple(items) => J::Array(items.iter().map(object_json).collect()),
        Object::Dict(pairs) => {
            if pairs.iter().all(|(k, _)| matches!(k, Object::Str(_))) {
                let map = pairs.iter().map(|(k, v)| (k.as_str().unwrap_or_default().to_string(), object_json(v)));
                J::Object(map.collect())
            } else {
                J::Array(pairs.iter().map(|(k, v)| J::Array(vec![object_json(k), object_json(v)])).collect())
            }
        }
    }
}
