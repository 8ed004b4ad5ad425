//! Array shapes: the dimension limit, Python's repr of a shape tuple and the C-order walk
//! of a Fortran-order array. Below the dtype
//! model, the header codec and the error type, which all speak of shapes (and so depend on
//! nothing in the crate). Public through [`crate::header`].

/// Most dimensions an array may have (NumPy 2's `NPY_MAXDIMS`).
pub const MAX_DIMS: usize = 64;

/// Python's repr of a shape tuple: `()`, `(3,)`, `(3, 4)`.
pub fn shape_repr(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// The storage index of the element at C-order position `c`, for an array of `shape` in
/// Fortran order or not.
pub(crate) fn c_order(shape: &[usize], fortran: bool) -> impl Fn(usize) -> usize + '_ {
    move |c| {
        if !fortran || shape.len() < 2 {
            return c;
        }
        // Digits of `c` in C order (last axis fastest), weighed by Fortran strides.
        let mut rest = c;
        let mut index = [0usize; MAX_DIMS];
        for (k, &d) in shape.iter().enumerate().rev() {
            index[k] = rest % d;
            rest /= d;
        }
        let mut pos = 0;
        for (k, &d) in shape.iter().enumerate().rev() {
            pos = pos * d + index[k];
        }
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_order_maps_to_fortran_storage() {
        let f = c_order(&[2, 3], true);
        assert_eq!((0..6).map(&f).collect::<Vec<_>>(), [0, 2, 4, 1, 3, 5]);
        let f = c_order(&[2, 3, 4], true);
        assert_eq!(f(23), 23); // the last element stays last
        assert_eq!(f(1), 6); // (0, 0, 1): index 0 + 2 * (0 + 3 * 1)
        assert_eq!(c_order(&[2, 3], false)(4), 4);
    }
}
