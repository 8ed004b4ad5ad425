//! Array shapes: the dimension limit and Python's repr of a shape tuple. Below the dtype
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
