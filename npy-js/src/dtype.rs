//! The dtype model as a JavaScript tree: what `NpyArray.dtype` holds, and the columns of a
//! dtype (its scalar leaves) with the typed array each becomes.

use npy_core::dtype::{ByteOrder, Column, DType, Scalar, ScalarType};
use npy_core::literal::Literal;

use crate::js::Json;

/// A dtype as a tree of plain objects: `{kind: "scalar", str: "<f8", ...}`, `{kind:
/// "record", fields, padding, ...}` or `{kind: "subarray", base, shape, ...}`, each with
/// its `descr` (the text a header holds) and `itemsize`.
pub fn tree(dtype: &DType) -> Json {
    let mut entries: Vec<(&'static str, Json)> = vec![
        (
            "kind",
            match dtype {
                DType::Scalar(_) => "scalar",
                DType::Record(_) => "record",
                DType::SubArray(_) => "subarray",
            }
            .into(),
        ),
        ("descr", dtype.descr().into()),
        ("itemsize", Json::Num(dtype.itemsize() as f64)),
    ];
    match dtype {
        DType::Scalar(s) => entries.extend(scalar_entries(s)),
        DType::Record(r) => {
            let fields = r
                .fields()
                .iter()
                .map(|f| {
                    let title = match &f.title {
                        None => Json::Null,
                        Some(Literal::Str(t)) => t.as_str().into(),
                        Some(other) => other.repr().into(),
                    };
                    Json::Obj(vec![
                        ("name", f.name.as_str().into()),
                        ("title", title),
                        ("offset", Json::Num(f.offset as f64)),
                        ("dtype", tree(&f.dtype)),
                    ])
                })
                .collect();
            // The bytes no field covers, in order: NumPy's ('', '|Vn') entries.
            let mut padding = Vec::new();
            let mut end = 0;
            for f in r.fields() {
                if f.offset > end {
                    padding.push(gap(end, f.offset));
                }
                end = end.max(f.offset + f.dtype.itemsize());
            }
            if r.itemsize() > end {
                padding.push(gap(end, r.itemsize()));
            }
            entries.extend([("fields", Json::Arr(fields)), ("padding", Json::Arr(padding))]);
        }
        DType::SubArray(a) => {
            entries.extend([("base", tree(a.base())), ("shape", Json::nums(a.shape().iter().copied()))]);
        }
    }
    Json::Obj(entries)
}

fn gap(start: usize, end: usize) -> Json {
    Json::Obj(vec![("offset", Json::Num(start as f64)), ("size", Json::Num((end - start) as f64))])
}

/// A scalar's `str` (`<f8`), `type` (kind and size, no byte order: `f8`, `U5`, `M8`),
/// `byteOrder` and, for datetimes, `unit`.
fn scalar_entries(s: &Scalar) -> Vec<(&'static str, Json)> {
    let text = s.type_str();
    let ty = text.get(1..).unwrap_or_default();
    let (ty, unit) = match ty.split_once('[') {
        Some((ty, unit)) => (ty, Some(unit.trim_end_matches(']'))),
        None => (ty, None),
    };
    let order = match s.order() {
        ByteOrder::Little => "<",
        ByteOrder::Big => ">",
        _ => "|",
    };
    let mut entries = vec![("str", text.as_str().into()), ("type", ty.into()), ("byteOrder", order.into())];
    if let Some(unit) = unit {
        entries.push(("unit", unit.into()));
    } else if matches!(s.ty(), ScalarType::DateTime(_) | ScalarType::TimeDelta(_)) {
        entries.push(("unit", "generic".into()));
    }
    entries
}

/// What one scalar leaf becomes in JavaScript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// A typed array of this name, the leaf's values converted to it (in little-endian
    /// byte order): `Float64Array`, `BigInt64Array`, ...
    Typed(&'static str),
    /// `string[]`: `S` (each byte a char) and `U` (UCS-4) leaves.
    Strings,
    /// `Uint8Array[]`: `V` leaves, each element's bytes.
    Void,
    /// Any JavaScript values: `O` (a pickle, decoded whole).
    Objects,
}

impl Output {
    /// The name JavaScript's decoder knows it by.
    pub fn name(self) -> &'static str {
        match self {
            Output::Typed(t) => t,
            Output::Strings => "string",
            Output::Void => "void",
            Output::Objects => "object",
        }
    }
}

/// How a leaf of `scalar` is given to JavaScript: the scalar its bytes are converted to
/// (little-endian, or as they are) and the array that holds them. Half floats are
/// `Float16Array` bits where the platform has that type (`float16`), else `Float32Array`
/// values; long doubles are the nearest doubles; booleans their bytes.
pub fn output(scalar: &Scalar, float16: bool) -> (Scalar, Output) {
    let le = |ty| Scalar::new(ty, ByteOrder::Little);
    let typed = |ty, name| (le(ty), Output::Typed(name));
    match scalar.ty() {
        ScalarType::Bool => typed(ScalarType::UInt(1), "Uint8Array"),
        ScalarType::Int(1) => typed(ScalarType::Int(1), "Int8Array"),
        ScalarType::Int(2) => typed(ScalarType::Int(2), "Int16Array"),
        ScalarType::Int(4) => typed(ScalarType::Int(4), "Int32Array"),
        ScalarType::Int(_) => typed(ScalarType::Int(8), "BigInt64Array"),
        ScalarType::UInt(1) => typed(ScalarType::UInt(1), "Uint8Array"),
        ScalarType::UInt(2) => typed(ScalarType::UInt(2), "Uint16Array"),
        ScalarType::UInt(4) => typed(ScalarType::UInt(4), "Uint32Array"),
        ScalarType::UInt(_) => typed(ScalarType::UInt(8), "BigUint64Array"),
        ScalarType::Float(2) if float16 => typed(ScalarType::Float(2), "Float16Array"),
        ScalarType::Float(2) | ScalarType::Float(4) => typed(ScalarType::Float(4), "Float32Array"),
        // Long doubles are converted by the decoder itself, from their 16 bytes.
        ScalarType::Float(16) => typed(ScalarType::Float(16), "Float64Array"),
        ScalarType::Float(_) => typed(ScalarType::Float(8), "Float64Array"),
        ScalarType::Complex(8) => typed(ScalarType::Complex(8), "Float32Array"),
        ScalarType::Complex(32) => typed(ScalarType::Complex(32), "Float64Array"),
        ScalarType::Complex(_) => typed(ScalarType::Complex(16), "Float64Array"),
        ty @ (ScalarType::DateTime(_) | ScalarType::TimeDelta(_)) => typed(ty, "BigInt64Array"),
        ty @ (ScalarType::Bytes(_) | ScalarType::Unicode(_)) => (le(ty), Output::Strings),
        ty @ ScalarType::Void(_) => (le(ty), Output::Void),
        ScalarType::Object => (*scalar, Output::Objects),
    }
}

/// Values per leaf element in its JavaScript array: 2 for complex numbers (real and
/// imaginary interleaved), else 1.
pub fn lanes(scalar: &Scalar) -> usize {
    if matches!(scalar.ty(), ScalarType::Complex(_)) {
        2
    } else {
        1
    }
}

/// The columns of `dtype` as JavaScript describes them: `{path, dtype, dims, output,
/// lanes}` (`dtype` the leaf's tree, `output` the array it becomes, see [`output`]).
pub fn columns_tree(columns: &[Column], float16: bool) -> Json {
    Json::Arr(
        columns
            .iter()
            .map(|c| {
                let (_, out) = output(&c.scalar, float16);
                Json::Obj(vec![
                    ("path", c.path.as_str().into()),
                    ("dtype", tree(&DType::Scalar(c.scalar))),
                    ("dims", Json::nums(c.dims.iter().copied())),
                    ("output", out.name().into()),
                    ("lanes", Json::Num(lanes(&c.scalar) as f64)),
                ])
            })
            .collect(),
    )
}
