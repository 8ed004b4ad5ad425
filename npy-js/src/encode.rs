//! JavaScript values to elements, a column at a time: the inverse of `decode`. Each
//! column's values (a typed array's bytes, strings, or void bytes) go through an npy-core
//! plan into their place in the elements; bytes no field covers stay zero, as `np.save`
//! writes a new array's padding.

use js_sys::{Array, JsString, Uint8Array};
use npy_core::dtype::{ByteOrder, DType, Scalar, ScalarType};
use npy_core::plan::Plan;
use npy_core::scalar::{f64_to_long_double, narrow_f16, widen};
use wasm_bindgen::prelude::*;

use crate::decode::{leaves, Leaf};
use crate::dtype::Output;
use crate::error::{times, usage, JsResult, Located};

/// Bytes of elements a piece should make.
const PIECE_BYTES: usize = 1 << 20;

/// Encodes JavaScript columns into elements of one dtype (see the module).
#[wasm_bindgen]
pub struct Encoder {
    itemsize: usize,
    leaves: Vec<Leaf>,
    /// A column's values as the plan's source, reused.
    buf: Vec<u8>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let paths: Vec<&str> = self.leaves.iter().map(|l| l.column().path.as_str()).collect();
        f.debug_struct("Encoder").field("itemsize", &self.itemsize).field("columns", &paths).finish()
    }
}

/// The scalar a column's plan starts from, given what JavaScript holds (`held`): the
/// same, but booleans (checked to be 0 or 1 as they go in), half floats held as
/// `Float32Array` values (rounded to halves first) and long doubles (widened first).
fn source_scalar(original: &Scalar, held: &Scalar) -> Scalar {
    let le = |ty| Scalar::new(ty, ByteOrder::Little);
    match original.ty() {
        ScalarType::Bool => le(ScalarType::Bool),
        ScalarType::Float(2) => le(ScalarType::Float(2)),
        _ => *held,
    }
}

#[wasm_bindgen]
impl Encoder {
    /// An encoder of elements of `descr` from every one of its columns, in dtype order.
    /// `float16`: half floats come as `Float16Array` bits, else as `Float32Array` values.
    ///
    /// # Errors
    /// A descr npy-core does not read; an object dtype (see `encodeObjects`).
    #[wasm_bindgen(constructor)]
    pub fn new(descr: &str, float16: bool) -> JsResult<Encoder> {
        let dtype: DType = descr.parse().located(None)?;
        let leaves = leaves(&dtype, None, float16, |column, held| {
            let from = column.with_leaf(source_scalar(&column.scalar, held))?;
            Plan::new_partial(&from, &dtype)
        })?;
        Ok(Encoder { itemsize: dtype.itemsize(), leaves, buf: Vec::new() })
    }

    /// How many elements a piece given to [`Encoder::encode`] should hold (at least 1).
    #[wasm_bindgen(getter, js_name = pieceElements)]
    pub fn piece_elements(&self) -> usize {
        (PIECE_BYTES / self.itemsize.max(1)).max(1)
    }

    /// The bytes of `count` elements made from `inputs`, one per column in dtype order:
    /// for a typed column a `Uint8Array` over its values' bytes, for strings a
    /// `string[]`, for void leaves a `Uint8Array` of their bytes, each holding exactly
    /// these elements' values.
    ///
    /// # Errors
    /// An input of another length; a boolean other than 0 or 1; a string too long for its
    /// field, or (for `S`) holding a character beyond U+00FF; all naming the column and
    /// element.
    pub fn encode(&mut self, count: u32, first: f64, inputs: &Array) -> JsResult<Vec<u8>> {
        let n = count as usize;
        let first = crate::header::count(first, "an element index")?;
        let mut out = vec![0u8; times(n, self.itemsize)?];
        for (i, leaf) in self.leaves.iter().enumerate() {
            let column = leaf.column();
            let per = column.per_element();
            let original = column.scalar;
            let size = original.itemsize();
            let input = inputs.get(i as u32);
            let name = if column.path.is_empty() { String::new() } else { format!(" '{}'", column.path) };
            self.buf.clear();
            match leaf.output() {
                Output::Typed(_) | Output::Void => {
                    let bytes: Uint8Array = input
                        .dyn_into()
                        .map_err(|_| usage(format!("column{name}: expected a Uint8Array of its bytes")))?;
                    // Bytes per value as JavaScript holds it: long doubles as doubles, half
                    // floats as Float32Array values where there is no Float16Array.
                    let held = match original.ty() {
                        ScalarType::Float(16) | ScalarType::Complex(32) => size / 2,
                        _ => leaf.scalar().itemsize(),
                    };
                    let want = times(times(n, per)?, held)?;
                    if bytes.length() as usize != want {
                        return Err(usage(format!(
                            "column{name}: {} bytes given for {n} elements, not {want}",
                            bytes.length()
                        )));
                    }
                    let raw = bytes.to_vec();
                    match original.ty() {
                        ScalarType::Float(16) | ScalarType::Complex(32) => {
                            for x in raw.as_chunks::<8>().0 {
                                self.buf.extend_from_slice(&f64_to_long_double(f64::from_le_bytes(*x)));
                            }
                        }
                        ScalarType::Float(2) if held == 4 => {
                            for x in raw.as_chunks::<4>().0 {
                                self.buf.extend_from_slice(&narrow_f16(widen(f32::from_le_bytes(*x))).to_le_bytes());
                            }
                        }
                        _ => self.buf = raw,
                    }
                }
                Output::Strings => {
                    let strings: Array =
                        input.dyn_into().map_err(|_| usage(format!("column{name}: expected an array of strings")))?;
                    let values = times(n, per)?;
                    if strings.length() as usize != values {
                        return Err(usage(format!("column{name}: {} strings given, not {}", strings.length(), values)));
                    }
                    for k in 0..values {
                        let element = first + k / per.max(1);
                        let s: JsString = strings
                            .get(k as u32)
                            .dyn_into()
                            .map_err(|_| usage(format!("element {element}{name}: not a string")))?;
                        let at = self.buf.len();
                        self.buf.resize(at + size, 0);
                        put_text(original.ty(), &s, &mut self.buf[at..]).map_err(|why| {
                            let js = js_sys::Error::new(&format!("element {element}{name}: {why}"));
                            let _ = js_sys::Reflect::set(&js, &"kind".into(), &"invalid_value".into());
                            JsValue::from(js)
                        })?;
                    }
                }
                Output::Objects => return Err(usage("an object array is written with encodeObjects")),
            }
            leaf.plan().run(&self.buf, &mut out, first).located(None).inspect_err(|e| {
                if !column.path.is_empty() {
                    let _ = js_sys::Reflect::set(e, &"field".into(), &column.path.as_str().into());
                }
            })?;
        }
        Ok(out)
    }
}

/// Writes string `s` as a `S` or `U` value into `out` (its itemsize, zeroed): each UTF-16
/// unit of an `S` value a byte (at most U+00FF: the bytes `decode` gives as chars), a `U`
/// value's code points (surrogate pairs joined, lone surrogates kept) as UCS-4.
fn put_text(ty: ScalarType, s: &JsString, out: &mut [u8]) -> Result<(), String> {
    let units: Vec<u16> = s.iter().collect();
    match ty {
        ScalarType::Unicode(n) => {
            let mut points = Vec::with_capacity(units.len());
            let mut i = 0;
            while i < units.len() {
                let u = u32::from(units[i]);
                let next = units.get(i + 1).map(|&v| u32::from(v));
                match (u, next) {
                    (0xd800..=0xdbff, Some(lo @ 0xdc00..=0xdfff)) => {
                        points.push(0x1_0000 + ((u - 0xd800) << 10) + (lo - 0xdc00));
                        i += 2;
                    }
                    _ => {
                        points.push(u);
                        i += 1;
                    }
                }
            }
            if points.len() > n {
                return Err(format!("{} characters do not fit U{n}", points.len()));
            }
            for (p, slot) in points.iter().zip(out.chunks_exact_mut(4)) {
                slot.copy_from_slice(&p.to_le_bytes());
            }
        }
        ScalarType::Bytes(n) => {
            if units.len() > n {
                return Err(format!("{} characters do not fit S{n}", units.len()));
            }
            for (u, slot) in units.iter().zip(out.iter_mut()) {
                *slot = u8::try_from(*u).map_err(|_| {
                    format!("character U+{u:04X} is not a byte: an S string holds characters up to U+00FF (use U)")
                })?;
            }
        }
        _ => {}
    }
    Ok(())
}
