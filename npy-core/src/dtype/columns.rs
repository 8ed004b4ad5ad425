//! A dtype's scalar leaves as columns: each field of a record (nested fields by dotted
//! path, through subarrays) with the dtype that takes it out of an element. Pure, no I/O.

use super::{DType, Field, Record, Scalar};
use crate::error::Result;

/// One scalar leaf of a dtype, named by its dotted path: `receiver.x` in a record,
/// `samples` for a subarray field (`dims` then holds its shape), the empty path for a
/// scalar dtype itself. Padding is not a column.
///
/// A [`crate::plan::Plan`] from the whole element's dtype to [`Column::extract`] gives the
/// leaf's values of each element, `dims` of them per element (in C order), in the leaf's
/// byte order; to [`Column::with_leaf`]`(leaf)` it gives them converted to `leaf` (its
/// native form, say).
///
/// # Examples
/// ```
/// use npy_core::dtype::DType;
///
/// let dt: DType = "[('id', '<u4'), ('pos', [('x', '>f8'), ('y', '>f8')]), ('gain', '<f4', (2,))]".parse()?;
/// let cols = dt.columns()?;
/// let paths: Vec<_> = cols.iter().map(|c| c.path.as_str()).collect();
/// assert_eq!(paths, ["id", "pos.x", "pos.y", "gain"]);
/// assert_eq!(cols[1].scalar.type_str(), ">f8");
/// assert_eq!(cols[3].dims, [2]);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The field names from the element to the leaf, joined by `.`; empty for a scalar
    /// dtype.
    pub path: String,
    /// The leaf's scalar type, as the dtype holds it (byte order included).
    pub scalar: Scalar,
    /// The shapes of the subarrays on the way to the leaf, outermost first, concatenated:
    /// the leaf's values per element.
    pub dims: Vec<usize>,
    /// The element's structure along the path only, ending in the leaf: a plan from the
    /// element's dtype to this yields the column's bytes.
    pub extract: DType,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Sub(Vec<usize>),
}

impl Column {
    /// [`Column::extract`] with the leaf replaced by `leaf`: what a plan from the element's
    /// dtype converts the column into (its native byte order, another type), or, as the
    /// source of a plan back into elements, a column stored as `leaf`.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Dtype`] when `leaf` makes a subarray on the path too large.
    pub fn with_leaf(&self, leaf: Scalar) -> Result<DType> {
        build_path(&self.steps, DType::Scalar(leaf))
    }

    /// How many of the leaf's values one element holds: the product of [`Column::dims`].
    pub fn per_element(&self) -> usize {
        self.dims.iter().product()
    }
}

impl DType {
    /// This dtype with every `b1` scalar read as `u1`, byte order and layout unchanged: a
    /// plan from it gives a boolean's byte as stored, as NumPy keeps it (NumPy reads any
    /// non-zero byte as `True`; a plan to `b1` checks for 0 or 1). The JavaScript and R
    /// packages decode booleans through it.
    ///
    /// # Errors
    /// Only for a record too large to rebuild (which a parsed dtype never is).
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::DType;
    ///
    /// let dt: DType = "[('ok', '|b1'), ('flags', '?', (2,))]".parse()?;
    /// assert_eq!(dt.bools_as_bytes()?.descr(), "[('ok', '|u1'), ('flags', '|u1', (2,))]");
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn bools_as_bytes(&self) -> Result<DType> {
        Ok(match self {
            DType::Scalar(s) => DType::Scalar(s.bool_as_byte()),
            DType::Record(r) => {
                let fields = r
                    .fields()
                    .iter()
                    .map(|f| Ok(Field { dtype: f.dtype.bools_as_bytes()?, ..f.clone() }))
                    .collect::<Result<Vec<_>>>()?;
                DType::Record(Record::new(fields, r.itemsize())?)
            }
            DType::SubArray(a) => DType::subarray(a.base().bools_as_bytes()?, a.shape().to_vec())?,
        })
    }

    /// The dtype's scalar leaves, in field order (depth first): see [`Column`].
    ///
    /// # Errors
    /// [`crate::ErrorKind::Dtype`] only for a record too large to describe one leaf of
    /// (which a parsed dtype never is).
    pub fn columns(&self) -> Result<Vec<Column>> {
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut Vec::new(), &mut Vec::new(), &mut out)?;
        Ok(out)
    }
}

fn build_path(steps: &[Step], leaf: DType) -> Result<DType> {
    steps.iter().rev().try_fold(leaf, |inner, step| match step {
        Step::Field(name) => {
            let size = inner.itemsize();
            Ok(DType::Record(Record::new(vec![Field::new(name.clone(), inner, 0)], size)?))
        }
        Step::Sub(shape) => DType::subarray(inner, shape.clone()),
    })
}

fn walk(
    dtype: &DType,
    names: &mut Vec<String>,
    dims: &mut Vec<usize>,
    steps: &mut Vec<Step>,
    out: &mut Vec<Column>,
) -> Result<()> {
    match dtype {
        DType::Scalar(s) => out.push(Column {
            path: names.join("."),
            scalar: *s,
            dims: dims.clone(),
            extract: build_path(steps, DType::Scalar(*s))?,
            steps: steps.clone(),
        }),
        DType::Record(r) => {
            for f in r.fields() {
                names.push(f.name.clone());
                steps.push(Step::Field(f.name.clone()));
                walk(&f.dtype, names, dims, steps, out)?;
                steps.pop();
                names.pop();
            }
        }
        DType::SubArray(a) => {
            let shape = a.flat_shape();
            let k = shape.len();
            dims.extend_from_slice(&shape);
            steps.push(Step::Sub(shape));
            walk(a.flat_base(), names, dims, steps, out)?;
            steps.pop();
            dims.truncate(dims.len() - k);
        }
    }
    Ok(())
}
