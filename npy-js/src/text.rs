//! Values as NumPy prints them, for a table of rows: each cell is NumPy's `str()` of one
//! row's part of one field (`str(a[i]["t0"])`, `str(a[i]["samples"])`), written by
//! npy-core's scalar codec (one value) or its array printing (a subarray, an N-d row);
//! an object array's cell is Python's `str()` of its element.

use js_sys::{Array, JsString};
use npy_core::dtype::{ByteOrder, DType, Scalar, ScalarType};
use npy_core::header::Header;
use npy_core::plan::Plan;
use npy_core::scalar::decode_lenient;
use npy_core::{DynArray, Object, ReadOptions};
use wasm_bindgen::prelude::*;

use crate::error::{times, usage, JsResult, Located};
use crate::header::count;

/// One leaf of the table: its scalar, the plan that takes its bytes out of an element (its
/// type as written, booleans as bytes, so that any byte is shown as NumPy shows it), and
/// the dims of its values in a row (the row's, then the leaf's subarray's).
struct Cell {
    path: String,
    scalar: Scalar,
    plan: Plan,
    dims: Vec<usize>,
}

/// Writes rows of one array as NumPy prints them (see the module).
#[wasm_bindgen]
pub struct Texts {
    itemsize: usize,
    /// Elements in a row: the product of the shape after its first dim.
    per_row: usize,
    cells: Vec<Cell>,
    /// Whether each scalar of a cell's array is a cell of its own (CSV), else one cell.
    expand: bool,
    buf: Vec<u8>,
}

impl std::fmt::Debug for Texts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Texts").field("itemsize", &self.itemsize).field("columns", &self.cells.len()).finish()
    }
}

#[wasm_bindgen]
impl Texts {
    /// A writer of the rows of an array of `descr` whose rows are `row_dims` (the shape
    /// after its first dim; empty for a 1-D array), one column per scalar leaf of the
    /// dtype in field order; with `expand`, one per scalar of each leaf's values in a row
    /// (`samples[0]`, `samples[1]`, ...: a table of numbers, as a CSV file wants).
    ///
    /// # Errors
    /// A descr npy-core does not read; an object dtype (see [`object_texts`]).
    #[wasm_bindgen(constructor)]
    pub fn new(descr: &str, row_dims: Vec<f64>, expand: bool) -> JsResult<Texts> {
        let dtype: DType = descr.parse().located(None)?;
        let row_dims = row_dims.into_iter().map(|d| count(d, "a dimension")).collect::<JsResult<Vec<_>>>()?;
        let raw = dtype.bools_as_bytes().located(None)?;
        let cells = dtype
            .columns()
            .located(None)?
            .into_iter()
            .map(|c| {
                if c.scalar.ty() == ScalarType::Object {
                    return Err(usage("an object array's rows are written by objectTexts"));
                }
                let leaf = c.scalar.bool_as_byte();
                let plan = Plan::new(&raw, &c.with_leaf(leaf).located(None)?).located(None)?;
                Ok(Cell { path: c.path.clone(), scalar: c.scalar, plan, dims: [row_dims.as_slice(), &c.dims].concat() })
            })
            .collect::<JsResult<_>>()?;
        Ok(Texts { itemsize: dtype.itemsize(), per_row: row_dims.iter().product(), cells, expand, buf: Vec::new() })
    }

    /// The columns' names: the leaves' dotted paths (`value` for a plain array's), each
    /// scalar of a leaf's values behind its index when expanded (`samples[3]`, `[1][0]`).
    pub fn names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for cell in &self.cells {
            let base =
                if cell.path.is_empty() && (!self.expand || cell.dims.is_empty()) { "value" } else { &cell.path };
            if !self.expand || cell.dims.is_empty() {
                names.push(base.to_string());
                continue;
            }
            let mut index = vec![0; cell.dims.len()];
            for _ in 0..cell.dims.iter().product::<usize>() {
                let brackets: String = index.iter().map(|i| format!("[{i}]")).collect();
                names.push(format!("{base}{brackets}"));
                for k in (0..index.len()).rev() {
                    index[k] += 1;
                    if index[k] < cell.dims[k] {
                        break;
                    }
                    index[k] = 0;
                }
            }
        }
        names
    }

    /// The cells of `count` rows whose bytes (in C order) are `input`: an array per row,
    /// of a string per column.
    ///
    /// # Errors
    /// `input` that is not `count` rows; a value NumPy cannot print (a `U` code unit
    /// beyond Unicode, a datetime of generic unit), naming the row.
    pub fn rows(&mut self, input: &[u8], count: u32, first: f64) -> JsResult<Array> {
        let n = count as usize;
        let row_bytes = times(self.per_row, self.itemsize)?;
        if times(n, row_bytes)? != input.len() {
            return Err(usage(format!("{} bytes are not {n} rows of {row_bytes} bytes", input.len())));
        }
        let first = crate::header::count(first, "a row index")?;
        let rows = Array::new();
        for r in 0..n {
            let row = &input[r * row_bytes..(r + 1) * row_bytes];
            let cells = Array::new();
            for cell in &self.cells {
                let size = cell.scalar.itemsize();
                let values: usize = cell.dims.iter().product();
                self.buf.clear();
                self.buf.resize(values * size, 0);
                cell.plan.run(row, &mut self.buf, 0).located(None)?;
                let scalar = |bytes: &[u8]| -> JsResult<JsValue> {
                    let refused = |e: String| usage(format!("row {}: {e} (NumPy cannot print it either)", first + r));
                    if let ScalarType::Unicode(_) = cell.scalar.ty() {
                        return unicode_text(cell.scalar.order(), bytes).map(JsValue::from).map_err(refused);
                    }
                    decode_lenient(cell.scalar, bytes)
                        .map(|v| JsValue::from(v.to_string()))
                        .map_err(|e| refused(e.to_string()))
                };
                if cell.dims.is_empty() {
                    cells.push(&scalar(&self.buf)?);
                } else if self.expand {
                    for k in 0..values {
                        cells.push(&scalar(&self.buf[k * size..(k + 1) * size])?);
                    }
                } else {
                    let header = Header::new(DType::Scalar(cell.scalar), cell.dims.clone());
                    let array = DynArray::new(header, self.buf.clone()).located(None)?;
                    cells.push(&Object::Array(Box::new(array)).str().into());
                }
            }
            rows.push(&cells);
        }
        Ok(rows)
    }
}

/// A `U` value as Python's `str` of it (its trailing NULs dropped), as UTF-16: a lone
/// surrogate a Python `str` holds stays one in a JavaScript string, where Rust's `String`
/// cannot hold it. A code unit beyond Unicode has no `str` (NumPy fails on it too).
fn unicode_text(order: ByteOrder, bytes: &[u8]) -> Result<JsString, String> {
    let units = bytes.chunks_exact(4).map(|c| {
        let c = [c[0], c[1], c[2], c[3]];
        if order == ByteOrder::Big {
            u32::from_be_bytes(c)
        } else {
            u32::from_le_bytes(c)
        }
    });
    let units: Vec<u32> = units.collect();
    let end = units.iter().rposition(|&u| u != 0).map_or(0, |i| i + 1);
    let mut utf16 = Vec::with_capacity(end);
    for (i, &u) in units[..end].iter().enumerate() {
        match u {
            0..=0xFFFF => utf16.push(u as u16),
            0x1_0000..=0x10_FFFF => {
                let v = u - 0x1_0000;
                utf16.extend([0xD800 | (v >> 10) as u16, 0xDC00 | (v & 0x3FF) as u16]);
            }
            _ => return Err(format!("code point {u:#x} at position {i} is beyond Unicode")),
        }
    }
    Ok(JsString::from_char_code(&utf16))
}

/// The cells of an object array's rows, from its data (the pickle after the header),
/// decoded as `decodeObjects` decodes it: per row along the first dim, Python's `str()` of
/// the element (a 1-D array), or NumPy's `str()` of the row (an N-d array's, an array of
/// objects itself).
///
/// # Errors
/// As `decodeObjects`.
#[wasm_bindgen(js_name = objectTexts)]
pub fn object_texts(data: &[u8], max_object_bytes: Option<f64>, name: Option<String>) -> JsResult<Vec<String>> {
    let mut options = ReadOptions::new();
    if let Some(max) = max_object_bytes {
        options.max_object_bytes(count(max, "maxObjectBytes")?);
    }
    let decoded = npy_core::object::from_pickle_with(data, &options).located(name.as_deref())?;
    let shape = decoded.shape().to_vec();
    if shape.len() <= 1 {
        return Ok(decoded.as_slice().iter().map(Object::str).collect());
    }
    let (rows, rest) = (shape[0], &shape[1..]);
    let per_row: usize = rest.iter().product();
    // Element (r, k) of the C order, where the values are stored: k counts the rest of the
    // dims in C order; a Fortran-order array stores element (i0, i1, ...) at i0 + n0 i1 + ...
    let values = decoded.as_slice();
    let stored = |r: usize, k: usize| -> usize {
        if !decoded.fortran_order() {
            return r * per_row + k;
        }
        let mut index = k;
        let mut at = 0;
        let mut stride = rows;
        let mut dims = Vec::with_capacity(rest.len());
        for &d in rest.iter().rev() {
            dims.push(index % d.max(1));
            index /= d.max(1);
        }
        for (d, i) in rest.iter().zip(dims.iter().rev()) {
            at += i * stride;
            stride *= d;
        }
        r + at
    };
    (0..rows)
        .map(|r| {
            let row: Vec<Object> = (0..per_row).map(|k| values[stored(r, k)].clone()).collect();
            let array = npy_core::Array::from_shape_vec(rest.to_vec(), row).located(None)?;
            Ok(Object::ObjectArray(Box::new(array)).str())
        })
        .collect()
}
