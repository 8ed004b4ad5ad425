//! Headers both ways: a file's first bytes to what JavaScript's `NpyArray` describes, and a
//! dtype, shape and order to the bytes `np.save` writes before the data.

use npy_core::dtype::DType;
use npy_core::header::{Header, Version};
use npy_core::{HeaderPrefix, ReadOptions};
use wasm_bindgen::prelude::*;

use crate::dtype::{columns_tree, tree};
use crate::error::{usage, JsResult, Located};
use crate::js::Json;

/// Reads the header from the first bytes of a file of `file_length` bytes (`prefix` may
/// be all of them). Returns, as JSON text, `{need: n}` when the header needs the first `n` bytes and
/// `prefix` holds fewer; else `{version, dataOffset, header, descr, dtype, columns,
/// fortranOrder, shape, dataLength, python2}`: `header` is the text after the length
/// field as written (the dict, padding and newline), `dataLength` the bytes the data
/// takes (`null` for an object array, whose data is a pickle), `python2` whether the text
/// needed Python 2's `L` suffixes (NumPy warns of those).
///
/// `ranges`: the caller reads the data by ranges (`open`), so it may be larger than this
/// 32-bit module holds at once: up to 2^53 bytes (npy-core's `Header::data_len_u64`),
/// given exactly as a number. Otherwise the caller holds the data (`load`, an array made
/// of rows) and it must be under 2 GiB (`Header::data_len`).
///
/// # Errors
/// npy-core's, naming `name`: not a `.npy` file, a bad or oversized header (beyond
/// `max_header_size` bytes, 16 MiB by default), a header that claims more data than
/// `file_length` holds, or (unless `ranges`) data of 2 GiB or more.
#[wasm_bindgen(js_name = readHeader)]
pub fn read_header(
    prefix: &[u8],
    file_length: f64,
    max_header_size: Option<f64>,
    float16: bool,
    name: Option<String>,
    ranges: bool,
) -> JsResult<String> {
    let name = name.as_deref();
    let mut options = ReadOptions::new();
    if let Some(max) = max_header_size {
        options.max_header_size(count(max, "maxHeaderSize")?);
    }
    let file_length = length(file_length, "the file's length")?;
    let (header, version, data_offset) = match HeaderPrefix::parse_with(prefix, file_length, &options).located(name)? {
        HeaderPrefix::NeedBytes(n) => return Ok(Json::Obj(vec![("need", Json::Num(n as f64))]).text()),
        HeaderPrefix::Complete { header, version, data_offset } => (header, version, data_offset),
    };
    let text = prefix.get(version.preamble_len()..data_offset).unwrap_or_default();
    let header_text: String = match version {
        Version::V3_0 => String::from_utf8_lossy(text).into_owned(),
        _ => text.iter().map(|&b| char::from(b)).collect(),
    };
    // Lengths up to 2^53 are exact as numbers.
    let data_length = match (header.dtype.has_object(), ranges) {
        (true, _) => Json::Null,
        (false, true) => Json::Num(header.data_len_u64().located(name)? as f64),
        (false, false) => Json::Num(header.data_len().located(name)? as f64),
    };
    let (major, minor) = version.number();
    let columns = header.dtype.columns().located(name)?;
    Ok(Json::Obj(vec![
        ("version", Json::nums([usize::from(major), usize::from(minor)])),
        ("dataOffset", Json::Num(data_offset as f64)),
        ("header", header_text.into()),
        ("descr", header.dtype.descr().into()),
        ("dtype", tree(&header.dtype)),
        ("columns", columns_tree(&columns, float16)),
        ("fortranOrder", Json::Bool(header.fortran_order)),
        ("shape", Json::nums(header.shape.iter().copied())),
        ("dataLength", data_length),
        ("python2", Json::Bool(Header::needs_python2(version, text))),
    ])
    .text())
}

/// The preamble and header `np.save` writes for an array of `descr` (header descr text:
/// `'<f8'`, `<f8` or a record's list), `shape` and order: in `version` (`[major, minor]`)
/// if it fits there, else in the oldest version that fits, as NumPy chooses.
///
/// # Errors
/// A descr NumPy would not read, a shape whose size overflows, or a header that fits no
/// version.
#[wasm_bindgen(js_name = encodeHeader)]
pub fn encode_header(descr: &str, shape: Vec<f64>, fortran_order: bool, version: Option<Vec<u8>>) -> JsResult<Vec<u8>> {
    let dtype: DType = descr.parse().located(None)?;
    let shape = shape.into_iter().map(|d| count(d, "a dimension")).collect::<JsResult<Vec<_>>>()?;
    let header = Header { dtype, fortran_order, shape };
    header.data_len().located(None)?;
    let version = match version.as_deref() {
        None => None,
        Some(&[major, minor]) => Some(
            Version::from_number(major, minor)
                .ok_or_else(|| usage(format!("unknown .npy version {major}.{minor}: 1.0, 2.0 and 3.0 are known")))?,
        ),
        Some(other) => return Err(usage(format!("a version is [major, minor], not {other:?}"))),
    };
    let encoded = match version {
        Some(v) => header.encode_keeping(v),
        None => header.encode(None),
    };
    Ok(encoded.located(None)?.1)
}

/// `x` as a count of something (a size, a length): a whole number from 0 up to 2^53.
pub fn count(x: f64, what: &str) -> JsResult<usize> {
    if x.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&x) && x <= usize::MAX as f64 {
        Ok(x as usize)
    } else {
        Err(usage(format!("{what} must be a whole number from 0 up, not {x}")))
    }
}

/// `x` as a length in bytes of a file or object: a whole number from 0 up to 2^53.
pub fn length(x: f64, what: &str) -> JsResult<u64> {
    if x.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&x) {
        Ok(x as u64)
    } else {
        Err(usage(format!("{what} must be a whole number from 0 up, not {x}")))
    }
}

/// A dtype given as text (a type string, a record's descr) as `readHeader` describes a
/// file's, as JSON text: `{descr, dtype, columns, objects}`, `objects` true for the object
/// dtype.
///
/// # Errors
/// A descr npy-core does not read.
#[wasm_bindgen(js_name = describeDtype)]
pub fn describe_dtype(descr: &str, float16: bool) -> JsResult<String> {
    let dtype: DType = descr.parse().located(None)?;
    if matches!(dtype, DType::SubArray(_)) {
        return Err(usage(format!(
            "{descr} is a subarray dtype: give the array its base dtype and put the subarray's dims in its shape"
        )));
    }
    let columns = dtype.columns().located(None)?;
    Ok(Json::Obj(vec![
        ("descr", dtype.descr().into()),
        ("dtype", tree(&dtype)),
        ("columns", columns_tree(&columns, float16)),
        ("objects", Json::Bool(dtype.has_object())),
    ])
    .text())
}
