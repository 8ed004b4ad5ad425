//! The ndarray bridge (feature `ndarray`): [`ndarray::Array`] of any dimension reads and
//! writes as `Vec<T>` does ([`ReadNpy`], [`WriteNpy`]), maps give [`ndarray::ArrayView`]s
//! in place, npz archives take and give ndarray arrays, and [`Array<T>`] converts to and
//! from [`ndarray::ArrayD`] by moving its data.
//!
//! Memory order is kept both ways, and nothing is reordered: a C-order file becomes a
//! standard-layout array and a Fortran-order file a Fortran (`.f()`) layout, the data
//! vector read moved into the array; a standard or Fortran-contiguous array writes its
//! buffer as it is, with the matching `fortran_order`. Any other array or view (a slice
//! with steps, permuted axes) writes its logical order, C order, as `np.save` writes
//! `np.ascontiguousarray(a)`, row by row, without a copy of the array.
//! An array with at most one dimension over 1 is both C- and Fortran-contiguous; it is
//! written with `fortran_order: False`, as `np.save` writes such an array (so a 1-D file
//! that says `True`, which `np.save` never writes, comes back with `False`, the same data).
//!
//! The names are those of `ndarray-npy`: `Array2::<f64>::read_npy(path)`,
//! `array.write_npy(path)` (and `read_npy_from`/`write_npy_to` over any reader and
//! writer). A file of another dimensionality than `D` is an [`ErrorKind::WrongShape`]
//! naming both; [`IxDyn`](type@ndarray::IxDyn) takes any.
//!
//! # Examples
//! ```
//! use ndarray::{array, Array2, ShapeBuilder};
//! use npy_core::prelude::*;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("grid.npy");
//! let a = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
//! a.write_npy(&path)?;
//! assert_eq!(Array2::<f64>::read_npy(&path)?, a);
//!
//! // A Fortran-order array writes its buffer with `fortran_order: True`, and reads back
//! // in that layout.
//! let f = Array2::from_shape_vec((2, 3).f(), vec![1u8, 4, 2, 5, 3, 6])?;
//! f.write_npy(&path)?;
//! let back = Array2::<u8>::read_npy(&path)?;
//! assert_eq!(back, array![[1u8, 2, 3], [4, 5, 6]]);
//! assert!(back.t().is_standard_layout());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
// `deny`, not `forbid`: ndarray's `s!` macro (used in the tests) allows `unsafe_code` inside.
#![deny(unsafe_code)]

use std::io::{BufWriter, Read, Write};
use std::path::Path;

use ndarray::{ArrayBase, ArrayD, ArrayView, ArrayViewMut, Data, Dimension, IxDyn, ShapeBuilder};

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::header::{shape_repr, Header};
use crate::io::{ReadNpy, WriteNpy};
#[cfg(not(target_family = "wasm"))]
use crate::mmap::{NpyMap, NpyMapMut};
use crate::options::{ReadOptions, WriteOptions};
use crate::plan::Plan;
use crate::read::NpyReader;
use crate::record::NpyRecord;
use crate::write::{to_path, typed_plan, typed_to_path, typed_to_writer, write_with_plan, NpyBytes};

/// Bytes buffered when an array that is not contiguous is written element by element.
const STRIDED_BUFFER: usize = 64 << 10;

/// Refuses a shape of another dimensionality than `D`'s, naming both.
fn check_ndim<D: Dimension>(shape: &[usize], what: &str) -> Result<()> {
    match D::NDIM {
        Some(n) if n != shape.len() => Err(ErrorKind::WrongShape {
            reason: format!(
                "{what} has shape {} ({}-d), but the ndarray type has {n} dimension{}: \
                 read it with {} or as ArrayD (IxDyn)",
                shape_repr(shape),
                shape.len(),
                if n == 1 { "" } else { "s" },
                match shape.len() {
                    0 => "Array0".to_string(),
                    k @ 1..=6 => format!("Array{k}"),
                    _ => "ArrayD".to_string(),
                },
            ),
        }
        .into()),
        _ => Ok(()),
    }
}

/// `data` (in storage order) as an array of `shape`: a standard layout, or a Fortran one
/// when `fortran_order`; the vector is moved in.
fn from_storage<T, D: Dimension>(shape: &[usize], fortran_order: bool, data: Vec<T>) -> Result<ndarray::Array<T, D>> {
    check_ndim::<D>(shape, "the array")?;
    let dim = IxDyn(shape);
    let made = if fortran_order { ArrayD::from_shape_vec(dim.f(), data) } else { ArrayD::from_shape_vec(dim, data) };
    let array = made.map_err(|e| Error::shape(shape, format!("ndarray refuses the shape: {e}")))?;
    array.into_dimensionality::<D>().map_err(|e| Error::shape(shape, format!("ndarray refuses the shape: {e}")))
}

/// A map's header as an array of `T`s: `[U; N]` elements take the file's last dims, as
/// the map's views do.
fn element_header<T: NpyRecord>(header: &Header) -> Header {
    header.grouped(&T::dtype()).unwrap_or_else(|| header.clone())
}

/// `data` viewed with `header`'s shape and order.
fn view_of<'a, T, D: Dimension>(header: &Header, data: &'a [T]) -> Result<ArrayView<'a, T, D>> {
    check_ndim::<D>(&header.shape, "the mapped array")?;
    let dim = IxDyn(&header.shape);
    let made =
        if header.fortran_order { ArrayView::from_shape(dim.f(), data) } else { ArrayView::from_shape(dim, data) };
    let view = made.map_err(|e| Error::shape(&header.shape, format!("ndarray refuses the shape: {e}")))?;
    view.into_dimensionality::<D>().map_err(|e| Error::shape(&header.shape, format!("ndarray refuses the shape: {e}")))
}

/// `data` viewed mutably with `header`'s shape and order.
fn view_mut_of<'a, T, D: Dimension>(header: &Header, data: &'a mut [T]) -> Result<ArrayViewMut<'a, T, D>> {
    check_ndim::<D>(&header.shape, "the mapped array")?;
    let dim = IxDyn(&header.shape);
    let made = if header.fortran_order {
        ArrayViewMut::from_shape(dim.f(), data)
    } else {
        ArrayViewMut::from_shape(dim, data)
    };
    let view = made.map_err(|e| Error::shape(&header.shape, format!("ndarray refuses the shape: {e}")))?;
    view.into_dimensionality::<D>().map_err(|e| Error::shape(&header.shape, format!("ndarray refuses the shape: {e}")))
}

/// How an array is written: its header, and its buffer when that is written as it is
/// (standard layout, or Fortran-contiguous); `None` writes the logical order row by row.
fn storage<T: NpyRecord, S: Data<Elem = T>, D: Dimension>(a: &ArrayBase<S, D>) -> (Header, Option<&[T]>) {
    let shape = a.shape().to_vec();
    if let Some(slice) = a.as_slice() {
        return (Header::new(T::dtype(), shape), Some(slice));
    }
    // A Fortran file of `[U; N]` elements would need their dims to vary fastest, which no
    // NumPy order gives (see `Header::folded`): such arrays write their logical order.
    let subarray = matches!(T::dtype(), DType::SubArray(_));
    match a.t().to_slice() {
        Some(slice) if !subarray => (Header { dtype: T::dtype(), fortran_order: true, shape }, Some(slice)),
        _ => (Header::new(T::dtype(), shape), None),
    }
}

/// Writes the data of `a` as [`storage`] says: the buffer in one go, else the rows of
/// the logical order (each row in one go when its elements are adjacent).
fn write_data<W: Write + ?Sized, T: NpyRecord, S: Data<Elem = T>, D: Dimension>(
    writer: &mut W,
    a: &ArrayBase<S, D>,
    buffer: Option<&[T]>,
    plan: &Plan,
) -> Result<()> {
    if let Some(slice) = buffer {
        return write_with_plan(writer, 0, plan, slice);
    }
    let mut out = BufWriter::with_capacity(STRIDED_BUFFER, writer);
    for row in a.rows() {
        match row.to_slice() {
            Some(slice) => write_with_plan(&mut out, 0, plan, slice)?,
            None => {
                for x in row.iter() {
                    write_with_plan(&mut out, 0, plan, std::slice::from_ref(x))?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

impl<T: NpyRecord, D: Dimension> ReadNpy for ndarray::Array<T, D> {
    /// Reads a file whose dimensionality is `D`'s (any for `IxDyn`), in its memory order:
    /// a Fortran-order file gives a Fortran layout. `[U; N]` elements take the file's last
    /// dims, as [`Vec<T>`]'s read does. Errors name the file.
    fn read_npy(path: impl AsRef<Path>) -> Result<Self> {
        Self::read_npy_with(path, &ReadOptions::default())
    }

    fn read_npy_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        Self::from_npy_reader(NpyReader::from_path_with(path, options)?).map_err(|e| e.reading(path))
    }

    fn from_npy_reader<R: Read>(mut reader: NpyReader<R>) -> Result<Self> {
        if reader.remaining() != reader.len() {
            return Err(Error::usage("reading an ndarray needs the whole array, but elements were already read"));
        }
        reader.regroup::<T>()?;
        let header = reader.header();
        check_ndim::<D>(&header.shape, "the array")?;
        let (shape, fortran_order) = (header.shape.clone(), header.fortran_order);
        from_storage(&shape, fortran_order, reader.read_regrouped::<T>()?)
    }
}

impl<T: NpyRecord, S: Data<Elem = T>, D: Dimension> WriteNpy for ArrayBase<S, D> {
    /// Writes an array, view or shared array of any dimensionality: its buffer as it is
    /// when it is standard or Fortran-contiguous (with the matching `fortran_order`), else
    /// its logical (C) order.
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        let path = path.as_ref();
        let (header, buffer) = storage(self);
        match buffer {
            Some(slice) => typed_to_path(path, header, slice, opts),
            None => {
                let prepare = || -> Result<_> {
                    let (header, plan) = typed_plan::<T>(header, opts)?;
                    Ok((header.encode(opts.forced_version())?.1, plan))
                };
                let (head, plan) = prepare().map_err(|e| e.writing(path))?;
                to_path(path, &head, opts.syncs(), |file| write_data(file, self, None, &plan))
            }
        }
    }

    fn write_npy_to_with<W: Write>(&self, mut writer: W, opts: &WriteOptions) -> Result<W> {
        let (header, buffer) = storage(self);
        match buffer {
            Some(slice) => typed_to_writer(writer, header, slice, opts),
            None => {
                let (header, plan) = typed_plan::<T>(header, opts)?;
                writer.write_all(&header.encode(opts.forced_version())?.1)?;
                write_data(&mut writer, self, None, &plan)?;
                Ok(writer)
            }
        }
    }

    fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
        let (header, buffer) = storage(self);
        let (header, plan) = typed_plan::<T>(header, opts)?;
        let head = header.encode(opts.forced_version())?.1;
        let len = head.len() as u64 + header.data_len()? as u64;
        Ok(NpyBytes::new(len, move |w| {
            w.write_all(&head)?;
            write_data(w, self, buffer, &plan)
        }))
    }
}

impl<T> From<Array<T>> for ArrayD<T> {
    /// Moves the data into an ndarray array of the same shape and memory order (a
    /// Fortran-order [`Array`] gives a Fortran layout); nothing is copied.
    ///
    /// # Examples
    /// ```
    /// use ndarray::ArrayD;
    /// use npy_core::Array;
    ///
    /// let a = Array::from_shape_vec_fortran(vec![2, 2], vec![1i32, 3, 2, 4])?;
    /// let ptr = a.as_slice().as_ptr();
    /// let nd = ArrayD::from(a);
    /// assert_eq!(nd[[0, 1]], 2);
    /// assert_eq!(nd.as_ptr(), ptr);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    fn from(a: Array<T>) -> ArrayD<T> {
        let (shape, fortran) = (a.shape().to_vec(), a.fortran_order());
        let dim = IxDyn(&shape);
        let data = a.into_vec();
        let made = if fortran { ArrayD::from_shape_vec(dim.f(), data) } else { ArrayD::from_shape_vec(dim, data) };
        // `Array` holds exactly the shape's element count, and its shape passed the check
        // ndarray makes (non-zero dims multiply to at most isize::MAX: `element_count`).
        made.unwrap_or_else(|e| unreachable!("an Array's shape is one ndarray takes: {e}"))
    }
}

impl<T, D: Dimension> TryFrom<ndarray::Array<T, D>> for Array<T> {
    type Error = crate::error::Error;

    /// Moves a standard or Fortran-contiguous array's data in (a Fortran layout gives a
    /// Fortran-order [`Array`]); any other layout is moved into C order, element by
    /// element.
    ///
    /// # Errors
    /// [`ErrorKind::Shape`](crate::ErrorKind::Shape) for more than 64 dimensions (NumPy's
    /// limit; an `IxDyn` array may have more).
    ///
    /// # Examples
    /// ```
    /// use ndarray::array;
    /// use npy_core::Array;
    ///
    /// let nd = array![[1u16, 2], [3, 4]].reversed_axes(); // Fortran-contiguous
    /// let a = Array::try_from(nd)?;
    /// assert!(a.fortran_order());
    /// assert_eq!(a.as_slice(), [1, 2, 3, 4]);
    /// assert_eq!(a.get(&[0, 1]), Some(&3));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    fn try_from(a: ndarray::Array<T, D>) -> Result<Array<T>, crate::error::Error> {
        let shape = a.shape().to_vec();
        let n = a.len();
        let fortran = if a.is_standard_layout() {
            Some(false)
        } else if a.t().is_standard_layout() {
            Some(true)
        } else {
            None
        };
        let Some(fortran) = fortran else {
            let data: Vec<T> = a.into_iter().collect();
            return Array::from_parts(data, shape, false);
        };
        // A contiguous array holds elements `offset..offset + n` of its vector.
        let (mut data, offset) = a.into_raw_vec_and_offset();
        let offset = offset.unwrap_or(0);
        data.truncate(offset + n);
        data.drain(..offset);
        Array::from_parts(data, shape, fortran)
    }
}

#[cfg(not(target_family = "wasm"))]
impl NpyMap {
    /// The data viewed in place as an [`ndarray::ArrayView`] of the file's shape and
    /// order (a Fortran-order file gives a Fortran layout), as [`NpyMap::view`] views it
    /// as a slice: zero-copy, `bool` and checked data validated first. `[U; N]` elements
    /// take the file's last dims (`'<f4'` of shape `(2, 5, 3)` is an `Ix2` view of
    /// `[f32; 3]`).
    ///
    /// # Errors
    /// As [`NpyMap::view`]; [`ErrorKind::WrongShape`] when the file's dimensionality is
    /// not `D`'s.
    ///
    /// # Examples
    /// ```
    /// use ndarray::{array, Ix2};
    /// use npy_core::{mmap::NpyMap, prelude::*};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("grid.npy");
    /// array![[1.5f32, 2.5], [3.5, 4.5]].write_npy(&path)?;
    /// // SAFETY: nothing modifies or truncates the file while it is mapped.
    /// let map = unsafe { NpyMap::from_path(&path)? };
    /// let view = map.view_nd::<f32, Ix2>()?;
    /// assert_eq!(view, array![[1.5f32, 2.5], [3.5, 4.5]]);
    /// assert_eq!(view.as_ptr(), map.view::<f32>()?.as_ptr());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view_nd<T: NpyRecord, D: Dimension>(&self) -> Result<ArrayView<'_, T, D>> {
        let header = element_header::<T>(self.header());
        check_ndim::<D>(&header.shape, "the mapped array")?;
        view_of(&header, self.view::<T>()?)
    }
}

#[cfg(not(target_family = "wasm"))]
impl NpyMapMut {
    /// The data viewed in place as an [`ndarray::ArrayView`] of the file's shape and
    /// order, as [`NpyMap::view_nd`].
    ///
    /// # Errors
    /// As [`NpyMap::view_nd`].
    pub fn view_nd<T: NpyRecord, D: Dimension>(&self) -> Result<ArrayView<'_, T, D>> {
        let header = element_header::<T>(self.header());
        check_ndim::<D>(&header.shape, "the mapped array")?;
        view_of(&header, self.view::<T>()?)
    }

    /// The data viewed in place as an [`ndarray::ArrayViewMut`] of the file's shape and
    /// order, for filling or updating the file with ndarray's operations; on the
    /// conditions of [`NpyMapMut::view_mut`].
    ///
    /// # Errors
    /// As [`NpyMapMut::view_mut`]; [`ErrorKind::WrongShape`] when the file's
    /// dimensionality is not `D`'s.
    ///
    /// # Examples
    /// ```
    /// use ndarray::{array, Array2, Ix2};
    /// use npy_core::{mmap::NpyMapMut, prelude::*};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("grid.npy");
    /// // SAFETY: no other process uses the file while it is mapped.
    /// let mut map = unsafe { NpyMapMut::create::<f64>(&path, vec![2, 3])? };
    /// let mut view = map.view_nd_mut::<f64, Ix2>()?;
    /// view.fill(1.0);
    /// view.column_mut(2).fill(7.0);
    /// map.flush()?;
    /// assert_eq!(Array2::<f64>::read_npy(&path)?, array![[1.0, 1.0, 7.0], [1.0, 1.0, 7.0]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view_nd_mut<T: NpyRecord, D: Dimension>(&mut self) -> Result<ArrayViewMut<'_, T, D>> {
        let header = element_header::<T>(self.header());
        check_ndim::<D>(&header.shape, "the mapped array")?;
        view_mut_of(&header, self.view_mut::<T>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npz::{self, Compression};
    use ndarray::{array, s, Array0, Array1, Array2, Array3, Ix2};

    #[test]
    fn more_dims_than_numpy_takes_are_an_error_not_a_panic() {
        let nd = ndarray::ArrayD::<u8>::zeros(ndarray::IxDyn(&[1; 65]));
        let e = Array::try_from(nd).err().unwrap_or_else(|| panic!("65 dims converted"));
        assert!(matches!(e.kind(), crate::error::ErrorKind::Shape { .. }), "{e}");
        assert!(Array::try_from(ndarray::ArrayD::<u8>::zeros(ndarray::IxDyn(&[1; 64]))).is_ok());
    }

    fn bytes_of<V: WriteNpy + ?Sized>(v: &V) -> Vec<u8> {
        v.write_npy_to(Vec::new()).unwrap()
    }

    #[test]
    fn c_and_fortran_files_keep_their_layout_without_copies() {
        let c = Array::from_shape_vec(vec![2, 3], (0..6u32).collect()).unwrap();
        let f = Array::from_shape_vec_fortran(vec![2, 3], vec![0u32, 3, 1, 4, 2, 5]).unwrap();
        let want = array![[0u32, 1, 2], [3, 4, 5]];
        for (a, fortran) in [(c, false), (f, true)] {
            let file = bytes_of(&a);
            let nd = Array2::<u32>::read_npy_from(&file[..]).unwrap();
            assert_eq!(nd, want);
            assert_eq!(nd.t().is_standard_layout(), fortran);
            assert_eq!(nd.is_standard_layout(), !fortran);
            // Written back: the same buffer, the same order, the same bytes.
            assert_eq!(bytes_of(&nd), file);
            let ptr = a.as_slice().as_ptr();
            let moved = ArrayD::from(a);
            assert_eq!(moved.as_ptr(), ptr);
            assert_eq!(moved, want.clone().into_dyn());
        }
    }

    #[test]
    fn non_contiguous_views_write_their_logical_order() {
        let a = Array3::from_shape_vec((3, 4, 5), (0..60i16).collect()).unwrap();
        for view in [a.slice(s![..;2, 1.., ..;-2]), a.slice(s![.., 1..3, ..]), a.view().permuted_axes([1, 0, 2])] {
            assert!(view.as_slice().is_none() && view.t().as_slice().is_none());
            assert_eq!(bytes_of(&view), bytes_of(&view.as_standard_layout()));
            let back = Array3::<i16>::read_npy_from(&bytes_of(&view)[..]).unwrap();
            assert_eq!(back, view);
        }
    }

    #[test]
    fn wrong_dimensionality_names_both() {
        let file = bytes_of(&array![[1.0f64, 2.0], [3.0, 4.0]]);
        let e = Array1::<f64>::read_npy_from(&file[..]).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::WrongShape { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("(2, 2)") && text.contains("2-d") && text.contains("1 dimension"), "{text}");
        assert!(text.contains("Array2"), "{text}");
        let e = Array0::<f64>::read_npy_from(&file[..]).unwrap_err();
        assert!(e.to_string().contains("0 dimensions"), "{e}");
        assert_eq!(ArrayD::<f64>::read_npy_from(&file[..]).unwrap().shape(), [2, 2]);
    }

    #[test]
    fn zero_d_arrays_round_trip() {
        let a = Array0::from_elem((), 2.5f32);
        let file = bytes_of(&a);
        assert_eq!(file, bytes_of(&Array::from_shape_vec(vec![], vec![2.5f32]).unwrap()));
        assert_eq!(Array0::<f32>::read_npy_from(&file[..]).unwrap(), a);
        let d = ArrayD::<f32>::read_npy_from(&file[..]).unwrap();
        assert_eq!(d.ndim(), 0);
        assert_eq!(d.first(), Some(&2.5));
    }

    #[test]
    fn subarray_elements_group_the_last_dims() {
        let file = bytes_of(&Array::from_shape_vec(vec![2, 2, 3], (0..12u8).collect()).unwrap());
        let a = Array2::<[u8; 3]>::read_npy_from(&file[..]).unwrap();
        assert_eq!(a.shape(), [2, 2]);
        assert_eq!(a[[1, 0]], [6, 7, 8]);
        assert_eq!(bytes_of(&a), file);
        // A Fortran layout of `[u8; 3]` cannot be stored as is: its logical order is.
        let f = a.t();
        let c = Array::from_shape_vec(vec![2, 2, 3], vec![0u8, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11]).unwrap();
        assert_eq!(bytes_of(&f), bytes_of(&c));
    }

    #[test]
    fn offset_and_strided_owned_arrays_convert() {
        let mut a = Array2::from_shape_vec((3, 2), (0..6u64).collect()).unwrap();
        a.slice_collapse(s![1.., ..]);
        let moved = Array::try_from(a).unwrap();
        assert_eq!((moved.shape(), moved.as_slice()), (&[2usize, 2][..], &[2u64, 3, 4, 5][..]));
        let b = Array2::from_shape_vec((2, 3), (0..6u64).collect()).unwrap().slice_move(s![.., ..;2]);
        let c = Array::try_from(b).unwrap();
        assert_eq!((c.fortran_order(), c.as_slice()), (false, &[0u64, 2, 3, 5][..]));
    }

    #[test]
    fn partially_read_reader_is_refused() {
        let file = bytes_of(&array![1i32, 2, 3]);
        let mut r = NpyReader::from_reader(&file[..]).unwrap();
        let mut one = [0i32; 1];
        r.read_into(&mut one).unwrap();
        let e = Array1::<i32>::from_npy_reader(r).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Usage { .. }), "{e}");
    }

    #[test]
    fn npz_members_take_and_give_ndarrays() {
        let a = array![[1.5f64, 2.5], [3.5, 4.5]];
        let mut w = npz::Writer::new(std::io::Cursor::new(Vec::new()));
        w.add("a", &a).unwrap();
        // Stored under Miri: zlib-rs 0.6 frees a Deflate's state through a reference it
        // protects (zlib-rs#491), UB in the dependency that Miri stops at.
        let deflated = if cfg!(miri) { Compression::Stored } else { Compression::Deflated { level: 6 } };
        w.add_with("t", &a.t(), deflated).unwrap();
        let mut r = npz::Reader::from_reader(w.finish().unwrap()).unwrap();
        assert_eq!(r.read::<ndarray::Array<f64, Ix2>>("a").unwrap(), a);
        let t = r.read::<ndarray::Array<f64, Ix2>>("t").unwrap();
        assert_eq!(t, a.t());
        assert!(t.t().is_standard_layout(), "a.t() is Fortran-contiguous, stored as such");
        let e = r.read::<ndarray::Array<f64, ndarray::Ix1>>("a").unwrap_err();
        assert!(e.to_string().contains("a.npy") && e.to_string().contains("(2, 2)"), "{e}");
    }
}
