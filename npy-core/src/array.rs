//! The array types: [`DynArray`] (any dtype, raw bytes) and [`Array<T>`] (typed, N-d), and
//! the [`ReadNpy`] / [`WriteNpy`] traits that give `Vec<T>::read_npy(path)` and
//! `data.write_npy(path)`.
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::path::Path;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::header::{element_count, shape_repr, Header, Version};
use crate::read::{NpyReader, ReadOptions};
use crate::record::NpyRecord;
use crate::write::{self, WriteOptions};

/// Types that can be read from a `.npy` file.
pub trait ReadNpy: Sized {
    /// Reads a `.npy` file.
    ///
    /// # Errors
    /// Any [`crate::ErrorKind`] describing why the file cannot be read as `Self`.
    ///
    /// # Examples
    /// ```
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("a.npy");
    /// vec![1.5f64, -2.0].write_npy(&path)?;
    /// assert_eq!(Vec::<f64>::read_npy(&path)?, [1.5, -2.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn read_npy(path: impl AsRef<Path>) -> Result<Self> {
        Self::read_npy_with(ReadOptions::new().open_path(path)?)
    }

    /// Reads `.npy` data from any reader (no `Seek` needed).
    ///
    /// # Errors
    /// As [`ReadNpy::read_npy`].
    fn read_npy_from(reader: impl Read) -> Result<Self> {
        Self::read_npy_with(NpyReader::new(reader)?)
    }

    /// Reads the data of an opened [`NpyReader`].
    ///
    /// # Errors
    /// As [`ReadNpy::read_npy`].
    fn read_npy_with<R: Read>(reader: NpyReader<R>) -> Result<Self>;
}

/// Types that can be written as a `.npy` file.
pub trait WriteNpy {
    /// Writes a `.npy` file atomically: to a temporary file in the same directory that is
    /// synced and renamed over `path` only when complete, so a failed write (or a crash)
    /// leaves any old file intact. [`WriteOptions::sync`] can skip the sync.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] from the file system.
    ///
    /// # Examples
    /// ```
    /// use npy_core::prelude::*;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("ids.npy");
    /// [7u32, 8, 9].write_npy(&path)?;
    /// assert_eq!(std::fs::read(&path)?.len(), 128 + 12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn write_npy(&self, path: impl AsRef<Path>) -> Result<()> {
        self.write_npy_with(path, &WriteOptions::default())
    }

    /// Writes a `.npy` file with the given options (e.g. a forced version).
    ///
    /// # Errors
    /// As [`WriteNpy::write_npy`]; [`ErrorKind::Usage`] when the header does not fit a
    /// forced version.
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()>;

    /// Writes `.npy` data to any writer and returns it.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] from the writer.
    fn write_npy_to<W: Write>(&self, writer: W) -> Result<W>;
}

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

    /// All elements in storage order as `T`, converting byte order and widening as
    /// [`crate::plan::Plan`] does (a `>f8` array gives native `f64`s).
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] when the dtype cannot be read as `T`;
    /// [`ErrorKind::InvalidValue`] for invalid `bool`/`char` values.
    pub fn to_vec<T: NpyRecord>(&self) -> Result<Vec<T>> {
        NpyReader::over_data(&self.data[..], self.header.clone())?.read_vec()
    }

    /// The element at a logical (C-style) index, whatever the storage order.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for an index of the wrong length or out of bounds; as
    /// [`DynArray::to_vec`] for the conversion.
    pub fn get<T: NpyRecord>(&self, index: &[usize]) -> Result<T> {
        let pos = storage_index(&self.header.shape, self.header.fortran_order, index)?;
        let size = self.header.dtype.itemsize();
        let one = Header::new(self.header.dtype.clone(), vec![1]);
        let mut v = NpyReader::over_data(&self.data[pos * size..(pos + 1) * size], one)?.read_vec::<T>()?;
        v.pop().ok_or_else(|| Error::usage("no element"))
    }
}

impl ReadNpy for DynArray {
    fn read_npy_with<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        reader.read_dyn()
    }
}

impl WriteNpy for DynArray {
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        let header = self.encode_header(opts)?;
        write::to_path(path.as_ref(), &header, opts.syncs(), |w| w.write_all(&self.data).map_err(Into::into))
    }

    fn write_npy_to<W: Write>(&self, mut writer: W) -> Result<W> {
        let header = self.encode_header(&WriteOptions::default())?;
        writer.write_all(&header)?;
        writer.write_all(&self.data)?;
        Ok(writer)
    }
}

impl DynArray {
    /// Header bytes: a forced version if given, else the version read (if the header still
    /// fits it), else NumPy's choice.
    pub(crate) fn encode_header(&self, opts: &WriteOptions) -> Result<Vec<u8>> {
        if let Some(v) = opts.forced_version() {
            return Ok(self.header.encode(Some(v))?.1);
        }
        if let Some(v) = self.version {
            if let Ok((_, bytes)) = self.header.encode(Some(v)) {
                return Ok(bytes);
            }
        }
        Ok(self.header.encode(None)?.1)
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

impl<T: NpyRecord> ReadNpy for Array<T> {
    fn read_npy_with<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        reader.read_array()
    }
}

impl<T: NpyRecord> WriteNpy for Array<T> {
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        write::typed_to_path(path.as_ref(), self.header(), &self.data, opts)
    }

    fn write_npy_to<W: Write>(&self, writer: W) -> Result<W> {
        write::typed_to_writer(writer, self.header(), &self.data)
    }
}

impl<T: NpyRecord> Array<T> {
    fn header(&self) -> Header {
        Header { dtype: T::dtype(), fortran_order: self.fortran_order, shape: self.shape.clone() }
    }
}

impl<T: NpyRecord> ReadNpy for Vec<T> {
    /// Reads a 1-D file.
    fn read_npy_with<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        let shape = &reader.header().shape;
        if shape.len() != 1 {
            return Err(ErrorKind::WrongShape {
                reason: format!(
                    "the file holds an array of shape {}; Vec<T>::read_npy reads 1-D arrays: use Array::<T>::read_npy for {}",
                    shape_repr(shape),
                    if shape.is_empty() { "0-d arrays" } else { "N-d arrays" }
                ),
            }
            .into());
        }
        reader.read_vec()
    }
}

impl<T: NpyRecord> WriteNpy for [T] {
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        write::typed_to_path(path.as_ref(), Header::new(T::dtype(), vec![self.len()]), self, opts)
    }

    fn write_npy_to<W: Write>(&self, writer: W) -> Result<W> {
        write::typed_to_writer(writer, Header::new(T::dtype(), vec![self.len()]), self)
    }
}

/// Storage position of a logical index.
fn storage_index(shape: &[usize], fortran: bool, index: &[usize]) -> Result<usize> {
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

    #[test]
    fn vec_read_refuses_2d_with_advice() {
        let a = Array::from_shape_vec(vec![2, 2], vec![1u8, 2, 3, 4]).unwrap();
        let bytes = a.write_npy_to(Vec::new()).unwrap();
        let e = Vec::<u8>::read_npy_from(&bytes[..]).unwrap_err();
        assert!(e.to_string().contains("Array::<T>::read_npy"), "{e}");
        assert_eq!(Array::<u8>::read_npy_from(&bytes[..]).unwrap(), a);
    }

    #[test]
    fn big_endian_dyn_gives_native_values() {
        let h = Header::new(">f8".parse().unwrap(), vec![2]);
        let mut data = 1.25f64.to_be_bytes().to_vec();
        data.extend_from_slice(&(-3.0f64).to_be_bytes());
        let arr = DynArray::new(h, data).unwrap();
        assert_eq!(arr.to_vec::<f64>().unwrap(), [1.25, -3.0]);
        assert_eq!(arr.get::<f64>(&[1]).unwrap(), -3.0);
        assert!(arr.get::<f64>(&[2]).is_err());
        assert!(arr.to_vec::<f32>().is_err());
    }
}
