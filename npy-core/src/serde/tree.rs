//! One element as a tree over its bytes: dtype levels with subarrays unwrapped, the bytes
//! of one item of a level, the budget of zero-size values, and scalar leaves through the
//! scalar codec. The deserializer, `Value`'s decoder and the encoder walk it alike.

use std::cell::Cell;

use super::error::{BResult, BridgeError};
use crate::dtype::{DType, Record, Scalar};
use crate::error::{Error, Result};
use crate::scalar::{self, ScalarError, Value as Prim};

/// Most values of zero size (e.g. items of a `V0` subarray) one element may decode into:
/// such values cost memory but no file bytes, so a hostile dtype could ask for billions.
pub(super) const ZERO_SIZE_BUDGET: usize = 1 << 16;

/// What a dtype (or one level of a subarray) is, subarray levels unwrapped.
pub(super) enum Node<'a> {
    /// `dims[0]` items of `dtype` with the remaining `dims`.
    Array {
        dtype: &'a DType,
        dims: &'a [usize],
    },
    Record(&'a Record),
    Scalar(&'a Scalar),
}

/// `dtype` seen through `dims` (non-empty: an array level of `dtype` items).
pub(super) fn node<'a>(mut dtype: &'a DType, mut dims: &'a [usize]) -> Node<'a> {
    loop {
        if !dims.is_empty() {
            return Node::Array { dtype, dims };
        }
        match dtype {
            DType::SubArray(a) => {
                dims = a.shape();
                dtype = a.base();
            }
            DType::Record(r) => return Node::Record(r),
            DType::Scalar(s) => return Node::Scalar(s),
        }
    }
}

/// Bytes of one item of an array level: the item dtype times the inner dims.
pub(super) fn stride(dtype: &DType, dims: &[usize]) -> usize {
    dims[1..].iter().product::<usize>() * dtype.itemsize()
}

/// Counts `n` items of an array level against the zero-size budget when they have no bytes.
pub(super) fn charge(budget: &Cell<usize>, n: usize, stride: usize) -> BResult<()> {
    if stride > 0 || n == 0 {
        return Ok(());
    }
    match budget.get().checked_sub(n) {
        Some(left) => {
            budget.set(left);
            Ok(())
        }
        None => Err(BridgeError::invalid(format!(
            "{n} items of zero size are more than the {ZERO_SIZE_BUDGET} one element may decode into"
        ))),
    }
}

/// One scalar through the scalar codec: invalid `b1` and `U` data is an invalid value,
/// the object dtype a mismatch.
pub(super) fn prim<'a>(s: &Scalar, b: &'a [u8]) -> BResult<Prim<'a>> {
    scalar::decode(*s, b).map_err(|e| match e {
        ScalarError::Bool(_) | ScalarError::CodePoint { .. } => BridgeError::invalid(e.to_string()),
        _ => BridgeError::mismatch(format!("unsupported scalar type {}", s.type_str())),
    })
}

pub(super) fn check_len(dtype: &DType, bytes: &[u8]) -> Result<()> {
    if bytes.len() != dtype.itemsize() {
        return Err(Error::usage(format!("{} bytes given for one element of {} bytes", bytes.len(), dtype.itemsize())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::error::ErrorKind;
    use crate::serde::dt;
    use crate::serde::{from_element, Value};

    #[test]
    fn zero_size_subarrays_have_a_budget() {
        // Records of no fields (a subarray of '|V0' is no NumPy dtype; the model can make one).
        let ok = dt("[('a', [], (3,))]");
        assert_eq!(Value::decode(&ok, &[]).unwrap().get("a"), Some(&Value::Array(vec![Value::Record(vec![]); 3])));
        let bomb = dt("[('a', [('b', [], (65536,))], (65536,))]");
        assert!(matches!(Value::decode(&bomb, &[]).unwrap_err().kind(), ErrorKind::InvalidValue { .. }));
        let v0 = crate::dtype::DType::subarray(dt("'|V0'"), vec![70000]).unwrap();
        let e = from_element::<Vec<Vec<Vec<u8>>>>(&v0, &[]);
        assert!(e.is_err());
    }
}
