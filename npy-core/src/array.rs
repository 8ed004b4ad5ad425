//! The array types: [`DynArray`] (any dtype, raw bytes; [`DynView`] borrows them) and
//! [`Array<T>`] (typed, N-d), as
//! data: shapes, orders, indexing. Reading and writing them is [`crate::io`]'s
//! ([`ReadNpy`](crate::ReadNpy), [`WriteNpy`](crate::WriteNpy)), as are
//! [`DynArray::to_vec`] and [`DynArray::get`], which convert through the reader.
#![forbid(unsafe_code)]

use crate::dtype::DType;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Error, Result};
use crate::header::{element_count, shape_repr, Header, Version};
use crate::options::WriteOptions;
use crate::record::NpyRecord;

/// An array of any dtype: its header and its data bytes as stored (C or Fortran order,
/// file byte order).
///
/// Writing it back reproduces a NumPy file byte for byte: the header is re-encoded as
/// `np.save` encodes it, in the version the file had.
///
/// # Examples
/// ```
/// use npy_core::{DynArray, prelude::*};
///
/// let mut file = Vec::new();
/// [1.0f64, 2.0, 3.0].write_npy_to(&mut file)?;
/// let arr = DynArray::read_npy_from(&file[..])?;
/// assert_eq!(arr.dtype().descr(), "'<f8'");
/// assert_eq!(arr.shape(), [3]);
/// assert_eq!(arr.get::<f64>(&[2])?, 3.0);
/// let mut again = Vec::new();
/// arr.write_npy_to(&mut again)?;
/// assert_eq!(again, file);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DynArray {
    header: Header,
    data: Vec<u8>,
    version: Option<Version>,
}

impl DynArray {
    /// An array from a header and its data bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] when `data` is not exactly the header's byte count;
    /// [`ErrorKind::UnsupportedDtype`] for the object dtype (see [`crate::object`]).
    pub fn new(header: Header, data: Vec<u8>) -> Result<DynArray> {
        DynArray::from_parts(header, data, None)
    }

    pub(crate) fn from_parts(header: Header, data: Vec<u8>, version: Option<Version>) -> Result<DynArray> {
        DynView::new(header.clone(), &data)?;
        Ok(DynArray { header, data, version })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The dtype.
    pub fn dtype(&self) -> &DType {
        &self.header.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.header.shape
    }

    /// True when the data is in Fortran (column-major) order.
    pub fn fortran_order(&self) -> bool {
        self.header.fortran_order
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data
            .len()
            .checked_div(self.header.dtype.itemsize())
            .unwrap_or_else(|| element_count(&self.header.shape).unwrap_or(0))
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The data bytes as stored.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The data bytes, consuming the array.
    pub fn into_data(self) -> Vec<u8> {
        self.data
    }

    /// The version the array was read with, which writing keeps when the header fits it.
    pub fn version(&self) -> Option<Version> {
        self.version
    }
}

impl DynArray {
    /// The array borrowed as a [`DynView`], which writes and appends it.
    pub fn view(&self) -> DynView<'_> {
        DynView { header: self.header.clone(), data: &self.data, version: self.version }
    }
}

impl<'a> From<&'a DynArray> for DynView<'a> {
    fn from(array: &'a DynArray) -> DynView<'a> {
        array.view()
    }
}

/// An array of any dtype whose data bytes someone else owns (a NumPy array's buffer, a
/// map): what [`DynArray`] is, borrowed. Writing it ([`WriteNpy`](crate::WriteNpy)) and
/// appending it ([`Appender::append_dyn`](crate::append::Appender::append_dyn)) copy
/// nothing first.
///
/// # Examples
/// ```
/// use npy_core::{header::Header, DType, DynArray, DynView, prelude::*};
///
/// let data = [1u8, 2, 3, 4];
/// let view = DynView::new(Header::new("<u2".parse::<DType>()?, vec![2]), &data)?;
/// let file = view.write_npy_to(Vec::new())?;
/// assert_eq!(Vec::<u16>::read_npy_from(&file[..])?, [0x0201, 0x0403]);
/// assert_eq!(DynArray::read_npy_from(&file[..])?.view().data(), data);
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct DynView<'a> {
    header: Header,
    data: &'a [u8],
    version: Option<Version>,
}

impl<'a> DynView<'a> {
    /// A view of `data` under `header`.
    ///
    /// # Errors
    /// As [`DynArray::new`]: [`ErrorKind::Usage`] when `data` is not exactly the header's
    /// byte count; [`ErrorKind::UnsupportedDtype`] for the object dtype.
    pub fn new(header: Header, data: &'a [u8]) -> Result<DynView<'a>> {
        crate::dtype::refuse_objects(&header.dtype)?;
        let want = header.data_len()?;
        if data.len() != want {
            return Err(Error::usage(format!(
                "{} data bytes given for shape {} of {} (needs {want})",
                data.len(),
                shape_repr(&header.shape),
                header.dtype.descr()
            )));
        }
        Ok(DynView { header, data, version: None })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The data bytes as stored.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Header bytes (the dtype in the byte order `opts` ask for): a forced version if
    /// given, else the version read (if the header still fits it), else NumPy's choice.
    pub(crate) fn encode_header(&self, opts: &WriteOptions) -> Result<Vec<u8>> {
        let header = Header { dtype: opts.written_dtype(&self.header.dtype), ..self.header.clone() };
        if let Some(v) = opts.forced_version() {
            return Ok(header.encode(Some(v))?.1);
        }
        if let Some(v) = self.version {
            if let Ok((_, bytes)) = header.encode(Some(v)) {
                return Ok(bytes);
            }
        }
        Ok(header.encode(None)?.1)
    }
}

/// A typed N-d array: elements in storage order, a shape, and the order flag.
///
/// # Examples
/// ```
/// use npy_core::prelude::*;
///
/// let a = Array::from_shape_vec(vec![2, 3], (0..6).map(|i| i as f32).collect())?;
/// let mut file = Vec::new();
/// a.write_npy_to(&mut file)?;
/// let b = Array::<f32>::read_npy_from(&file[..])?;
/// assert_eq!(b.shape(), [2, 3]);
/// assert_eq!(b.get(&[1, 2]), Some(&5.0));
/// # Ok::<(), npy_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Array<T> {
    data: Vec<T>,
    shape: Vec<usize>,
    fortran_order: bool,
}

impl<T> Array<T> {
    /// A C-order array of the given shape.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] when `data.len()` is not the product of `shape`;
    /// [`ErrorKind::Shape`] for more than 64 dimensions.
    pub fn from_shape_vec(shape: Vec<usize>, data: Vec<T>) -> Result<Array<T>> {
        Array::from_parts(data, shape, false)
    }

    /// A Fortran-order (column-major) array: `data` lists the first axis fastest.
    ///
    /// # Errors
    /// As [`Array::from_shape_vec`].
    pub fn from_shape_vec_fortran(shape: Vec<usize>, data: Vec<T>) -> Result<Array<T>> {
        Array::from_parts(data, shape, true)
    }

    pub(crate) fn from_parts(data: Vec<T>, shape: Vec<usize>, fortran_order: bool) -> Result<Array<T>> {
        if shape.len() > crate::header::MAX_DIMS {
            return Err(Error::shape(&shape, "more than 64 dimensions"));
        }
        let n = element_count(&shape)?;
        if n != data.len() {
            return Err(Error::usage(format!(
                "{} elements given for shape {} ({n} needed)",
                data.len(),
                shape_repr(&shape)
            )));
        }
        Ok(Array { data, shape, fortran_order })
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// True when the data is in Fortran order.
    pub fn fortran_order(&self) -> bool {
        self.fortran_order
    }

    /// The elements in storage order.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements in storage order, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The elements in storage order, consuming the array.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// The element at a logical (C-style) index, whatever the storage order.
    pub fn get(&self, index: &[usize]) -> Option<&T> {
        storage_index(&self.shape, self.fortran_order, index).ok().and_then(|i| self.data.get(i))
    }
}

impl<T: NpyRecord> Array<T> {
    /// The header that describes this array as `T`.
    pub(crate) fn header(&self) -> Header {
        Header { dtype: T::dtype(), fortran_order: self.fortran_order, shape: self.shape.clone() }
    }
}

/// Storage position of a logical index.
pub(crate) fn storage_index(shape: &[usize], fortran: bool, index: &[usize]) -> Result<usize> {
    if index.len() != shape.len() {
        return Err(Error::usage(format!(
            "index of {} dimensions for an array of shape {}",
            index.len(),
            shape_repr(shape)
        )));
    }
    // Bounds first: then no dim is zero, the strides are partial products of the element
    // count, and (the shape being checked, see `Header::data_len`) nothing overflows.
    if shape.iter().zip(index).any(|(&d, &i)| i >= d) {
        return Err(Error::usage(format!("index {index:?} out of bounds for shape {}", shape_repr(shape))));
    }
    let mut pos = 0usize;
    let mut stride = 1usize;
    let dims: Box<dyn Iterator<Item = (&usize, &usize)>> =
        if fortran { Box::new(shape.iter().zip(index)) } else { Box::new(shape.iter().zip(index).rev()) };
    for (&d, &i) in dims {
        pos += i * stride;
        stride *= d;
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_index_c_and_fortran() {
        assert_eq!(storage_index(&[2, 3], false, &[1, 2]).unwrap(), 5);
        assert_eq!(storage_index(&[2, 3], true, &[1, 2]).unwrap(), 5);
        assert_eq!(storage_index(&[2, 3], true, &[1, 0]).unwrap(), 1);
        assert_eq!(storage_index(&[2, 3], false, &[1, 0]).unwrap(), 3);
        assert_eq!(storage_index(&[], false, &[]).unwrap(), 0);
        assert!(storage_index(&[2, 3], false, &[2, 0]).is_err());
        assert!(storage_index(&[2, 3], false, &[0]).is_err());
        // A zero axis after huge ones: out of bounds, never a stride overflow.
        let huge = 1 << 62;
        assert!(storage_index(&[0, huge, huge], false, &[0, 0, 0]).is_err());
        assert!(storage_index(&[huge, huge, 0], true, &[0, 0, 0]).is_err());
    }
}
