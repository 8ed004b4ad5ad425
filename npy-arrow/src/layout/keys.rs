//! The metadata keys and names of the schemas a [`Layout`](super::Layout) makes.

/// Schema metadata key: the original `descr`, as the header's Python literal (`'<f8'`,
/// `[('a', '<i4'), ('', '|V4')]`).
pub const DESCR_KEY: &str = "numpy.descr";
/// Schema metadata key: the original `fortran_order`, `True` or `False`.
pub const FORTRAN_ORDER_KEY: &str = "numpy.fortran_order";
/// Schema metadata key: the original shape, a JSON list (`[3, 4]`; `[]` for 0-d).
pub const SHAPE_KEY: &str = "numpy.shape";
/// Schema metadata key: the `.npy` format version of the original file (`1.0`, `2.0`,
/// `3.0`).
pub const VERSION_KEY: &str = "numpy.version";
/// Field metadata key: the NumPy type string of a column whose Arrow type does not say it
/// alone: complex (`<c16`), long double (`<f16`), datetimes in units Arrow lacks
/// (`<M8[25s]`, `<m8[D]`, `<M8`).
pub const DTYPE_KEY: &str = "numpy.dtype";
/// The name of the one column of an array of scalars (and of an N-d array's rows).
pub const VALUES: &str = "values";
/// Arrow's canonical extension name for fixed-shape tensors.
pub const TENSOR_EXTENSION: &str = "arrow.fixed_shape_tensor";
/// Field metadata key of an Arrow extension's name.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// Field metadata key of an Arrow extension's metadata.
pub const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";
/// The name of the column of each row's bytes that the other columns may not carry
/// (padding, `b1` bytes, `U` text that is not valid), made with [`ConvertOptions::residue`](crate::ConvertOptions::residue).
pub const RESIDUE: &str = "numpy.residue";
/// Field metadata key marking the [`RESIDUE`] column (value `true`).
pub const RESIDUE_KEY: &str = "numpy.residue";
/// The name of the item field of the `FixedSizeList`s this crate makes.
pub const ITEM: &str = "item";
