//! `save()` of NumPy's values inside an object array: ndarrays of any dtype, object arrays,
//! and NumPy scalars, as NumPy 2's `__reduce__` gives them.
//!
//! An ndarray is `_reconstruct(ndarray, (0,), b'b')` then `BUILD` with `(1, shape, dtype,
//! is_fortran, data)`: `is_fortran` when the array is Fortran- but not C-contiguous (more
//! than one axis longer than 1, none empty), `data` its bytes in that order (`tobytes()`;
//! an object array's values as a list, in C order). A scalar is `scalar(dtype, bytes)`.

use super::{Encoder, Names, Saved, APPEND, APPENDS, BATCH, BUILD, EMPTY_LIST, MARK, NEWFALSE, NEWTRUE, REDUCE};
use crate::array::{Array, DynArray};
use crate::dtype::{ByteOrder, DType, Scalar, ScalarType};
use crate::object::pickle::mask_dtype;
use crate::object::MaskedArray;
use crate::object::Object;

impl Encoder {
    /// `save_reduce` of `_reconstruct(ndarray, (0,), b'b')`, memoised (the first part of
    /// every ndarray's pickle, the top-level array's too).
    pub(super) fn save_reconstruct(&mut self) -> Saved {
        self.boundary();
        self.save_global("numpy._core.multiarray", "_reconstruct");
        self.save_tuple(3, |e| {
            e.save_global("numpy", "ndarray");
            e.save_tuple(1, |e| {
                e.save_int(0);
                Ok(())
            })?;
            e.save_bytes_shared(b"b");
            Ok(())
        })?;
        self.op(REDUCE);
        self.memoize();
        Ok(())
    }

    /// An ndarray of any dtype but object.
    pub(super) fn save_ndarray(&mut self, array: &DynArray) -> Saved {
        let shape = array.shape();
        if shape.iter().any(|&d| i64::try_from(d).is_err()) {
            return Err("an ndarray with a dimension beyond i64".to_string());
        }
        let fortran = is_fortran(shape, array.fortran_order());
        self.save_reconstruct()?;
        self.save_tuple(5, |e| {
            e.save_int(1);
            e.save_shape(shape)?;
            e.save_dtype(array.dtype())?;
            e.save_op(if fortran { NEWTRUE } else { NEWFALSE });
            // The stored bytes: C order, or Fortran order when `is_fortran` (with at most
            // one axis longer than 1, both orders are the same bytes).
            e.save_bytes_shared(array.data());
            Ok(())
        })?;
        self.op(BUILD);
        Ok(())
    }

    /// An object array inside an object array: its values as a list, in C order.
    pub(super) fn save_object_ndarray(&mut self, array: &Array<Object>, depth: usize) -> Saved {
        let shape = array.shape();
        if shape.iter().any(|&d| i64::try_from(d).is_err()) {
            return Err("an ndarray with a dimension beyond i64".to_string());
        }
        let fortran = is_fortran(shape, array.fortran_order());
        self.save_reconstruct()?;
        self.save_tuple(5, |e| {
            e.save_int(1);
            e.save_shape(shape)?;
            e.save_dtype(&DType::Scalar(Scalar::new(ScalarType::Object, ByteOrder::NotApplicable)))?;
            e.save_op(if fortran { NEWTRUE } else { NEWFALSE });
            e.boundary();
            e.op(EMPTY_LIST);
            e.memoize();
            let order = crate::shape::c_order(shape, array.fortran_order());
            let items = array.as_slice();
            match items.len() {
                0 => {}
                1 => {
                    e.object(&items[0], depth + 1)?;
                    e.op(APPEND);
                }
                n => {
                    for start in (0..n).step_by(BATCH) {
                        e.op(MARK);
                        for c in start..(start + BATCH).min(n) {
                            e.object(&items[order(c)], depth + 1)?;
                        }
                        e.op(APPENDS);
                    }
                }
            }
            Ok(())
        })?;
        self.op(BUILD);
        Ok(())
    }

    /// A masked array: `MaskedArray.__reduce__` gives `(_mareconstruct, (MaskedArray,
    /// ndarray, (0,), 'b'), (1, shape, dtype, is_fortran, data, mask, fill_value))`.
    pub(super) fn save_masked_array(&mut self, m: &MaskedArray, depth: usize) -> Saved {
        let (shape, fortran_order, dtype) = match &m.data {
            Object::Array(a) => (a.shape(), a.fortran_order(), Some(a.dtype())),
            Object::ObjectArray(a) => (a.shape(), a.fortran_order(), None),
            other => return Err(format!("a masked array whose data is {}, not an ndarray", other.python_type())),
        };
        let want = match dtype {
            Some(d) => mask_dtype(d).ok_or_else(|| format!("a masked array of dtype {}", d.descr()))?,
            None => DType::native(ScalarType::Bool),
        };
        if m.mask.shape() != shape || m.mask.dtype() != &want {
            return Err(format!(
                "a masked array whose mask is of shape {} and dtype {}, not the data's shape {} and dtype {}",
                crate::header::shape_repr(m.mask.shape()),
                m.mask.dtype().descr(),
                crate::header::shape_repr(shape),
                want.descr()
            ));
        }
        if is_fortran(shape, fortran_order) != is_fortran(shape, m.mask.fortran_order()) {
            return Err("a masked array whose mask is not in its data's order".to_string());
        }
        if m.mask.data().iter().any(|&b| b > 1) {
            return Err("a masked array whose mask holds a byte other than 0 or 1".to_string());
        }
        if let Some(fill) = &m.fill_value {
            let ok = match fill {
                Object::Array(f) => f.shape().is_empty(),
                Object::ObjectArray(f) => f.shape().is_empty(),
                _ => false,
            };
            if !ok {
                return Err("a masked array whose fill_value is not a 0-d ndarray".to_string());
            }
        }
        if shape.iter().any(|&d| i64::try_from(d).is_err()) {
            return Err("an ndarray with a dimension beyond i64".to_string());
        }
        let fortran = is_fortran(shape, fortran_order);
        self.boundary();
        self.save_global_named("numpy.ma.core", "_mareconstruct", Names::Python);
        self.save_tuple(4, |e| {
            e.save_global_named("numpy.ma", "MaskedArray", Names::Python);
            e.save_global("numpy", "ndarray");
            match e.masked_shape {
                Some(i) => {
                    e.boundary();
                    e.get(i);
                }
                None => {
                    e.save_tuple(1, |e| {
                        e.save_int(0);
                        Ok(())
                    })?;
                    e.masked_shape = Some(e.memo - 1);
                }
            }
            e.save_value_str("b");
            Ok(())
        })?;
        self.op(REDUCE);
        self.memoize();
        self.save_tuple(7, |e| {
            e.save_int(1);
            e.save_shape(shape)?;
            match &m.data {
                Object::Array(a) => {
                    e.save_dtype(a.dtype())?;
                    e.save_op(if fortran { NEWTRUE } else { NEWFALSE });
                    e.save_bytes_shared(a.data());
                }
                Object::ObjectArray(a) => {
                    e.save_dtype(&DType::Scalar(Scalar::new(ScalarType::Object, ByteOrder::NotApplicable)))?;
                    e.save_op(if fortran { NEWTRUE } else { NEWFALSE });
                    e.save_object_list(a, depth)?;
                }
                _ => unreachable!("checked above"),
            }
            e.save_bytes_shared(m.mask.data());
            match &m.fill_value {
                None => e.save_op(super::NONE),
                Some(fill) => e.object(fill, depth + 1)?,
            }
            Ok(())
        })?;
        self.op(BUILD);
        Ok(())
    }

    /// An object array's values as the list its state holds, in C order.
    fn save_object_list(&mut self, array: &Array<Object>, depth: usize) -> Saved {
        self.boundary();
        self.op(EMPTY_LIST);
        self.memoize();
        let order = crate::shape::c_order(array.shape(), array.fortran_order());
        let items = array.as_slice();
        match items.len() {
            0 => {}
            1 => {
                self.object(&items[0], depth + 1)?;
                self.op(APPEND);
            }
            n => {
                for start in (0..n).step_by(BATCH) {
                    self.op(MARK);
                    for c in start..(start + BATCH).min(n) {
                        self.object(&items[order(c)], depth + 1)?;
                    }
                    self.op(APPENDS);
                }
            }
        }
        Ok(())
    }

    /// A NumPy scalar: `scalar(dtype, bytes)`. Any fixed-size dtype but str and bytes (whose
    /// scalars are `Object::Str` and `Object::Bytes`) and subarrays (which have no scalar).
    pub(super) fn save_scalar(&mut self, array: &DynArray) -> Saved {
        if !array.shape().is_empty() {
            return Err(format!(
                "a NumPy scalar is a 0-d array, not one of shape {}",
                crate::header::shape_repr(array.shape())
            ));
        }
        let dtype = array.dtype();
        match dtype {
            DType::Scalar(s) if matches!(s.ty(), ScalarType::Unicode(_) | ScalarType::Bytes(_)) => {
                return Err(format!(
                    "a NumPy scalar of dtype {} (write np.str_ and np.bytes_ values as str and bytes)",
                    s.type_str()
                ));
            }
            DType::SubArray(_) => return Err("a NumPy scalar of a subarray dtype (NumPy has none)".to_string()),
            _ => {}
        }
        self.boundary();
        self.save_global("numpy._core.multiarray", "scalar");
        self.save_tuple(2, |e| {
            e.save_dtype(dtype)?;
            e.save_bytes_shared(array.data());
            Ok(())
        })?;
        self.op(REDUCE);
        self.memoize();
        Ok(())
    }
}

/// NumPy's `is_fortran` of an array stored in `fortran` order: Fortran- and not
/// C-contiguous, which needs more than one axis longer than 1 and none empty.
fn is_fortran(shape: &[usize], fortran: bool) -> bool {
    fortran && !shape.contains(&0) && shape.iter().filter(|&&d| d > 1).count() > 1
}
