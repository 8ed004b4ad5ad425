//! NumPy's `repr()` of the arrays and NumPy scalars an object array holds
//! ([`Object::Array`], [`Object::ObjectArray`], [`Object::Scalar`]), for
//! [`Object::repr`]: `array([0, 1, 2])`, `np.datetime64('2020-01-02')`.
//!
//! Elements are written by the scalar codec's `Display` (NumPy's `str()` of each), in C
//! order, nested one list per dimension, with `dtype=` after them unless the dtype is
//! one NumPy's repr leaves implicit (`int64`, `float64`, `complex128`, `bool`, `str_`).

use crate::array::{Array, DynArray};
use crate::dtype::{ByteOrder, DType, ScalarType};
use crate::object::Object;
use crate::repr;
use crate::scalar::{self, Value};

/// The NumPy type name of a scalar of `dtype`, as `type(x)` qualifies it.
pub(super) fn scalar_type_name(dtype: &DType) -> &'static str {
    match dtype.as_scalar().map(|s| s.ty()) {
        Some(ScalarType::DateTime(_)) => "numpy.datetime64",
        Some(ScalarType::TimeDelta(_)) => "numpy.timedelta64",
        Some(ScalarType::Float(_)) => "numpy.longdouble",
        Some(ScalarType::Complex(_)) => "numpy.clongdouble",
        Some(ScalarType::Bool) => "numpy.bool",
        Some(ScalarType::Int(_) | ScalarType::UInt(_)) => "numpy.integer",
        Some(ScalarType::Bytes(_)) => "numpy.bytes_",
        Some(ScalarType::Unicode(_)) => "numpy.str_",
        Some(ScalarType::Object) => "numpy.object_",
        Some(ScalarType::Void(_)) | None => "numpy.void",
    }
}

/// The text of one element at byte `offset` of `a`'s data, as `str()` gives it.
fn element_text(dtype: &DType, bytes: &[u8], out: &mut String) {
    match dtype {
        DType::Scalar(s) => match scalar::decode(*s, bytes) {
            Ok(Value::Str(text)) => repr::write_str(&text, out),
            Ok(v) => out.push_str(&v.to_string()),
            Err(_) => out.push('?'),
        },
        DType::Record(record) => {
            let fields: Vec<String> = record
                .fields()
                .iter()
                .map(|f| {
                    let mut t = String::new();
                    let at = f.offset;
                    let size = f.dtype.itemsize();
                    match bytes.get(at..at + size) {
                        Some(b) => element_text(&f.dtype, b, &mut t),
                        None => t.push('?'),
                    }
                    t
                })
                .collect();
            out.push('(');
            out.push_str(&fields.join(", "));
            if fields.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        DType::SubArray(sub) => {
            let inner = sub.base();
            let size = inner.itemsize();
            out.push('[');
            for i in 0..sub.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                match bytes.get(i * size..(i + 1) * size) {
                    Some(b) => element_text(inner, b, out),
                    None => out.push('?'),
                }
            }
            out.push(']');
        }
    }
}

/// Whether NumPy's repr leaves the dtype out (`int64`, `float64`, `complex128`, `bool`,
/// and every native `str_`).
fn implicit_dtype(dtype: &DType) -> bool {
    let Some(s) = dtype.as_scalar() else { return false };
    let native = matches!(s.order(), ByteOrder::NotApplicable) || s.is_native();
    native
        && matches!(
            s.ty(),
            ScalarType::Int(8)
                | ScalarType::Float(8)
                | ScalarType::Complex(16)
                | ScalarType::Bool
                | ScalarType::Unicode(_)
        )
}

/// Writes the elements of `shape` (C-order index `i` gives the text) as nested lists.
fn write_nested(shape: &[usize], text: &mut dyn FnMut(usize, &mut String), out: &mut String) {
    fn go(shape: &[usize], base: usize, text: &mut dyn FnMut(usize, &mut String), out: &mut String) {
        match shape {
            [] => text(base, out),
            [n, rest @ ..] => {
                let stride: usize = rest.iter().product();
                out.push('[');
                for i in 0..*n {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    go(rest, base + i * stride, text, out);
                }
                out.push(']');
            }
        }
    }
    go(shape, 0, text, out);
}

/// `repr()` of an ndarray of any dtype but object.
pub(super) fn write_array(a: &DynArray, out: &mut String) {
    let dtype = a.dtype();
    let size = dtype.itemsize();
    let shape = a.shape();
    let storage = crate::shape::c_order(shape, a.fortran_order());
    out.push_str("array(");
    let data = a.data();
    write_nested(
        shape,
        &mut |c, out| {
            let at = storage(c) * size;
            element_text(dtype, &data[at..at + size], out);
        },
        out,
    );
    if !implicit_dtype(dtype) || a.shape().contains(&0) {
        out.push_str(", dtype=");
        out.push_str(&dtype.descr());
    }
    out.push(')');
}

/// `repr()` of an object array.
pub(super) fn write_object_array(a: &Array<Object>, out: &mut String) {
    let shape = a.shape();
    let storage = crate::shape::c_order(shape, a.fortran_order());
    let items = a.as_slice();
    out.push_str("array(");
    write_nested(shape, &mut |c, out| items[storage(c)].write_repr(out), out);
    out.push_str(", dtype=object)");
}

/// `repr()` of a NumPy scalar kept as a 0-d array.
pub(super) fn write_scalar(a: &DynArray, out: &mut String) {
    let dtype = a.dtype();
    let name = scalar_type_name(dtype).trim_start_matches("numpy.");
    let mut text = String::new();
    element_text(dtype, a.data(), &mut text);
    match dtype.as_scalar().map(|s| s.ty()) {
        Some(ScalarType::DateTime(_) | ScalarType::TimeDelta(_)) => {
            out.push_str("np.");
            out.push_str(name);
            out.push('(');
            repr::write_str(&text, out);
            out.push(')');
        }
        Some(ScalarType::Void(_)) | None => {
            out.push_str("np.void(");
            out.push_str(&text);
            out.push_str(", dtype=");
            out.push_str(&dtype.descr());
            out.push(')');
        }
        _ => {
            out.push_str("np.");
            out.push_str(name);
            out.push('(');
            repr::write_str(&text, out);
            out.push(')');
        }
    }
}
