//! Elements to JavaScript values, a column at a time: each scalar leaf of the dtype (a
//! record's field, through nested records and subarrays; a plain array's one leaf) goes
//! through an npy-core plan to its little-endian value, then into the caller's typed array,
//! or becomes strings or byte arrays. JavaScript pushes the elements in pieces of about a
//! MiB, so a 300 MB file needs no second copy of itself in this module's memory.

use js_sys::{Array, JsString, Uint8Array};
use npy_core::dtype::{Column, DType, Scalar, ScalarType};
use npy_core::plan::Plan;
use npy_core::scalar::{long_double_to_f64, trim_nuls};
use wasm_bindgen::prelude::*;

use crate::dtype::{output, Output};
use crate::error::{times, usage, JsResult, Located};

/// Bytes of elements a piece should hold, so the plans' output stays in cache.
const PIECE_BYTES: usize = 1 << 20;

/// One column being decoded.
pub(crate) struct Leaf {
    column: Column,
    /// The leaf as converted: little-endian, in the type JavaScript holds.
    scalar: Scalar,
    output: Output,
    plan: Plan,
}

/// Decodes elements of one dtype into JavaScript arrays, a column at a time (see the
/// module). Made once per array read, and given its elements a piece at a time.
#[wasm_bindgen]
pub struct Decoder {
    itemsize: usize,
    leaves: Vec<Leaf>,
    /// The plans' output, reused.
    buf: Vec<u8>,
    /// Long doubles as doubles, reused.
    doubles: Vec<u8>,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let paths: Vec<&str> = self.leaves.iter().map(|l| l.column.path.as_str()).collect();
        f.debug_struct("Decoder").field("itemsize", &self.itemsize).field("columns", &paths).finish()
    }
}

#[wasm_bindgen]
impl Decoder {
    /// A decoder of elements of `descr` into the columns at `paths` (all of them, in
    /// dtype order, when `None`). `float16`: the platform has `Float16Array`.
    ///
    /// # Errors
    /// A descr npy-core does not read, a path the dtype lacks, an object dtype (whose data
    /// is a pickle: see `decodeObjects`).
    ///
    /// With `as_written`, each column's values keep the type the dtype gives them (byte
    /// order included: `>f8` stays `>f8`) and go, whatever their type, to a `Uint8Array`
    /// of their bytes: a record's field as a plain array of its own.
    #[wasm_bindgen(constructor)]
    pub fn new(descr: &str, paths: Option<Vec<String>>, float16: bool, as_written: bool) -> JsResult<Decoder> {
        let dtype: DType = descr.parse().located(None)?;
        let raw = dtype.bools_as_bytes().located(None)?;
        let mut leaves = leaves(&dtype, paths, float16, |column, scalar| {
            let leaf = if as_written { column.scalar.bool_as_byte() } else { *scalar };
            Plan::new(&raw, &column.with_leaf(leaf)?)
        })?;
        if as_written {
            for leaf in &mut leaves {
                leaf.scalar = leaf.column.scalar;
                leaf.output = Output::Void;
            }
        }
        Ok(Decoder { itemsize: dtype.itemsize(), leaves, buf: Vec::new(), doubles: Vec::new() })
    }

    /// How many elements a piece given to [`Decoder::decode`] should hold (at least 1).
    #[wasm_bindgen(getter, js_name = pieceElements)]
    pub fn piece_elements(&self) -> usize {
        (PIECE_BYTES / self.itemsize.max(1)).max(1)
    }

    /// Decodes `count` elements, whose bytes are `input`, into `outputs` (one per column,
    /// as the constructor's paths): for a typed column a `Uint8Array` over the bytes of
    /// the typed array its values go to, for strings a `string[]`, for void leaves a
    /// `Uint8Array` of their bytes. The values go to element `at` on (times the values
    /// one element holds).
    ///
    /// # Errors
    /// `input` that is not `count` whole elements, an output too small, a `U` code unit
    /// beyond Unicode (naming the element, as NumPy refuses to make a `str` of it).
    pub fn decode(&mut self, input: &[u8], count: u32, at: f64, outputs: &Array) -> JsResult<()> {
        let n = count as usize;
        if times(n, self.itemsize)? != input.len() {
            return Err(usage(format!("{} bytes are not {n} elements of {} bytes", input.len(), self.itemsize)));
        }
        let at = crate::header::count(at, "an element index")?;
        for (i, leaf) in self.leaves.iter().enumerate() {
            let per = leaf.column.per_element();
            let size = leaf.scalar.itemsize();
            let bytes = times(times(n, per)?, size)?;
            self.buf.clear();
            self.buf.resize(bytes, 0);
            leaf.plan.run(input, &mut self.buf, at).located(None)?;
            let out = outputs.get(i as u32);
            let first = times(at, per)?;
            match leaf.output {
                Output::Typed(_) => {
                    let (values, value_size) = match leaf.scalar.ty() {
                        ScalarType::Float(16) | ScalarType::Complex(32) => {
                            self.doubles.clear();
                            for long in self.buf.as_chunks::<16>().0 {
                                self.doubles.extend_from_slice(&long_double_to_f64(long).to_le_bytes());
                            }
                            (&self.doubles, size / 2)
                        }
                        _ => (&self.buf, size),
                    };
                    let dest: Uint8Array =
                        out.dyn_into().map_err(|_| usage("a typed column's output is not a Uint8Array"))?;
                    let start = times(first, value_size)?;
                    let end = start.saturating_add(values.len());
                    if end > dest.length() as usize {
                        return Err(usage(format!(
                            "the output of column {i} holds {} bytes, not {end}",
                            dest.length()
                        )));
                    }
                    dest.subarray(start as u32, end as u32).copy_from(values);
                }
                Output::Void => {
                    let dest: Uint8Array =
                        out.dyn_into().map_err(|_| usage("a void column's output is not a Uint8Array"))?;
                    let start = times(first, size)?;
                    if start.saturating_add(bytes) > dest.length() as usize {
                        return Err(usage(format!("the output of column {i} is too small")));
                    }
                    dest.subarray(start as u32, (start + bytes) as u32).copy_from(&self.buf);
                }
                Output::Strings => {
                    let dest: Array = out.dyn_into().map_err(|_| usage("a string column's output is not an Array"))?;
                    let mut units = Vec::new();
                    for k in 0..times(n, per)? {
                        let value = &self.buf[k * size..(k + 1) * size];
                        units.clear();
                        text_units(leaf.scalar.ty(), value, &mut units)
                            .map_err(|cp| beyond_unicode(&leaf.column.path, (first + k) / per.max(1), cp))?;
                        dest.set((first + k) as u32, JsString::from_char_code(&units).into());
                    }
                }
                Output::Objects => {
                    return Err(usage("an object array's data is a pickle: decode it with decodeObjects"))
                }
            }
        }
        Ok(())
    }
}

/// The leaves of `dtype` at `paths` (all when `None`), each with the plan `plan` makes
/// from its column and its converted scalar.
pub(crate) fn leaves(
    dtype: &DType,
    paths: Option<Vec<String>>,
    float16: bool,
    plan: impl Fn(&Column, &Scalar) -> npy_core::Result<Plan>,
) -> JsResult<Vec<Leaf>> {
    let columns = dtype.columns().located(None)?;
    let chosen: Vec<Column> = match paths {
        None => columns,
        Some(paths) => paths
            .iter()
            .map(|p| {
                columns.iter().find(|c| &c.path == p).cloned().ok_or_else(|| {
                    let known: Vec<String> = columns.iter().map(|c| format!("'{}'", c.path)).collect();
                    usage(format!("no field '{p}' in dtype {}: its fields are {}", dtype.descr(), known.join(", ")))
                })
            })
            .collect::<JsResult<_>>()?,
    };
    chosen
        .into_iter()
        .map(|column| {
            let (scalar, output) = output(&column.scalar, float16);
            if output == Output::Objects {
                return Err(usage("an object array's data is a pickle: decode it with decodeObjects"));
            }
            let plan = plan(&column, &scalar).located(None)?;
            Ok(Leaf { column, scalar, output, plan })
        })
        .collect()
}

/// A string value's UTF-16 code units: an `S` value's bytes (each a char, as latin-1), a
/// `U` value's UCS-4 units (little-endian), trailing NULs dropped as NumPy drops them.
/// Lone surrogates stay (JavaScript strings hold them, as Python's do).
///
/// # Errors
/// The first code unit beyond U+10FFFF.
fn text_units(ty: ScalarType, value: &[u8], units: &mut Vec<u16>) -> Result<(), u32> {
    match ty {
        ScalarType::Unicode(_) => {
            let (points, _) = value.as_chunks::<4>();
            let end = points.iter().rposition(|p| *p != [0; 4]).map_or(0, |i| i + 1);
            for p in &points[..end] {
                let cp = u32::from_le_bytes(*p);
                match cp {
                    0..=0xffff => units.push(cp as u16),
                    0x1_0000..=0x10_ffff => {
                        let v = cp - 0x1_0000;
                        units.extend([0xd800 | (v >> 10) as u16, 0xdc00 | (v & 0x3ff) as u16]);
                    }
                    _ => return Err(cp),
                }
            }
        }
        _ => units.extend(trim_nuls(value).iter().map(|&b| u16::from(b))),
    }
    Ok(())
}

fn beyond_unicode(path: &str, element: usize, cp: u32) -> JsValue {
    let field = if path.is_empty() { String::new() } else { format!(" field '{path}'") };
    let js = js_sys::Error::new(&format!(
        "element {element}{field}: code unit {cp:#x} is beyond Unicode (U+10FFFF), so no string holds it \
         (NumPy cannot make a str of it either); the element's bytes are in the array's `bytes`"
    ));
    let _ = js_sys::Reflect::set(&js, &"kind".into(), &"invalid_value".into());
    js.into()
}

impl Leaf {
    /// The column this leaf is.
    pub(crate) fn column(&self) -> &Column {
        &self.column
    }

    /// The scalar JavaScript holds its values as (little-endian).
    pub(crate) fn scalar(&self) -> &Scalar {
        &self.scalar
    }

    /// What JavaScript holds its values in.
    pub(crate) fn output(&self) -> Output {
        self.output
    }

    /// The plan between the element and this leaf.
    pub(crate) fn plan(&self) -> &Plan {
        &self.plan
    }
}
