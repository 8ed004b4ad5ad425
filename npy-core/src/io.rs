//! The one-call API: [`ReadNpy`] and [`WriteNpy`] (`Vec::<T>::read_npy(path)`,
//! `data.write_npy(path)`) for every element type and array, and [`DynArray`]'s typed
//! access, over the reader ([`NpyReader`]) and the writer. The top layer of the crate: the
//! array types ([`crate::array`]), object values ([`crate::object`]), the reader and the
//! writer all sit below it and never use it.
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::path::Path;

use crate::array::{storage_index, Array, DynArray, DynView};
use crate::error::{Error, ErrorKind, Result};
use crate::header::{shape_repr, Header};
use crate::object::{encode_npy, CheckedPickle, Encode, Object, ObjectArray};
use crate::options::{ReadOptions, WriteOptions};
use crate::read::NpyReader;
use crate::record::NpyRecord;
use crate::write::{self, NpyBytes};

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
    /// let path = std::env::temp_dir().join("levels.npy");
    /// vec![1.5f64, -2.0].write_npy(&path)?;
    /// assert_eq!(Vec::<f64>::read_npy(&path)?, [1.5, -2.0]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    fn read_npy(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_npy_reader(NpyReader::from_path(path)?)
    }

    /// Reads a `.npy` file with the given options (a header size limit, an object
    /// array's memory budget).
    ///
    /// # Errors
    /// As [`ReadNpy::read_npy`]; [`ErrorKind::HeaderTooLarge`] or [`ErrorKind::Pickle`]
    /// over the options' limits.
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, ErrorKind, ReadOptions};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("levels.npy");
    /// vec![1.5f64, -2.0].write_npy(&path)?;
    /// assert_eq!(Vec::<f64>::read_npy_with(&path, ReadOptions::new().max_header_size(1000))?, [1.5, -2.0]);
    /// let e = Vec::<f64>::read_npy_with(&path, ReadOptions::new().max_header_size(10)).unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::HeaderTooLarge { .. }), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn read_npy_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Self> {
        Self::from_npy_reader(NpyReader::from_path_with(path, options)?)
    }

    /// Reads `.npy` data from any reader (no `Seek` needed).
    ///
    /// # Errors
    /// As [`ReadNpy::read_npy`].
    fn read_npy_from(reader: impl Read) -> Result<Self> {
        Self::from_npy_reader(NpyReader::from_reader(reader)?)
    }

    /// Reads the data of an opened [`NpyReader`] (whose header has been read): what
    /// [`NpyReader::read`] calls, and the one method an implementation writes.
    ///
    /// # Errors
    /// As [`ReadNpy::read_npy`].
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self>;
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
    /// let path = std::env::temp_dir().join("ids.npy");
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
    /// To write a file, prefer [`WriteNpy::write_npy`]: besides being atomic, it reserves
    /// the file's blocks before writing, as `np.save` does (NumPy's `tofile` calls
    /// `fallocate`), which a writer cannot. On ext4, 1.2 GB through
    /// `write_npy_to(File::create(path)?)` over an old file took 0.77 s, against 0.27 s
    /// for `write_npy` and 0.23 s for `np.save` (the records bench, medians).
    ///
    /// # Errors
    /// [`ErrorKind::Io`] from the writer.
    fn write_npy_to<W: Write>(&self, writer: W) -> Result<W> {
        self.write_npy_to_with(writer, &WriteOptions::default())
    }

    /// Writes `.npy` data to any writer with the given options (a forced version, a byte
    /// order; `sync` is for paths) and returns it.
    ///
    /// # Errors
    /// As [`WriteNpy::write_npy_to`]; [`ErrorKind::Usage`] when the header does not fit a
    /// forced version.
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::ByteOrder;
    /// use npy_core::{prelude::*, WriteOptions};
    ///
    /// let file = [1i16, -2].write_npy_to_with(Vec::new(), WriteOptions::new().byte_order(ByteOrder::Big))?;
    /// assert_eq!(&file[file.len() - 4..], &[0, 1, 0xff, 0xfe]);
    /// assert_eq!(Vec::<i16>::read_npy_from(&file[..])?, [1, -2]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    fn write_npy_to_with<W: Write>(&self, writer: W, opts: &WriteOptions) -> Result<W>;

    /// Not public API: the `.npy` bytes of `self` as an npz member takes them, for
    /// [`crate::npz::Writer::add`]. The default writes them to memory first; this crate's
    /// arrays override it to hand over their header and stream their data (converted to the
    /// options' byte order) straight into the member, which the archive may compress on
    /// worker threads. The return type is unnameable outside the crate, so only this
    /// crate overrides it.
    #[doc(hidden)]
    fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
        let bytes = self.write_npy_to_with(Vec::new(), opts)?;
        Ok(NpyBytes::new(bytes.len() as u64, move |w| Ok(w.write_all(&bytes)?)))
    }
}

impl<T> WriteNpy for Vec<T>
where
    [T]: WriteNpy,
{
    /// Writes the vector as its slice writes.
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        self.as_slice().write_npy_with(path, opts)
    }

    fn write_npy_to_with<W: Write>(&self, writer: W, opts: &WriteOptions) -> Result<W> {
        self.as_slice().write_npy_to_with(writer, opts)
    }

    fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
        self.as_slice().__npy_bytes(opts)
    }
}

impl<T, const N: usize> WriteNpy for [T; N]
where
    [T]: WriteNpy,
{
    /// Writes the array as its slice writes.
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        self.as_slice().write_npy_with(path, opts)
    }

    fn write_npy_to_with<W: Write>(&self, writer: W, opts: &WriteOptions) -> Result<W> {
        self.as_slice().write_npy_to_with(writer, opts)
    }

    fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
        self.as_slice().__npy_bytes(opts)
    }
}

impl<R: Read> NpyReader<R> {
    /// Reads the data as any [`ReadNpy`] type: `Vec<T>` (a 1-D array), [`Array<T>`] (any
    /// shape, kept), [`DynArray`] (any dtype, raw), `Array<Object>` (an object array), or an
    /// ndarray array (feature `ndarray`). The one read of a whole array; see
    /// [`NpyReader::chunks`] for one chunk at a time.
    ///
    /// # Errors
    /// As the type's [`ReadNpy::from_npy_reader`]: [`ErrorKind::DtypeMismatch`] when the
    /// dtype cannot be read as the type, [`ErrorKind::WrongShape`] for `Vec` of an N-d
    /// array, [`ErrorKind::Usage`] if elements were already read, [`ErrorKind::Truncated`],
    /// [`ErrorKind::Io`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, NpyReader};
    ///
    /// let mut stream = Vec::new();
    /// [1i32, 2, 3].write_npy_to(&mut stream)?;
    /// Array::from_shape_vec(vec![1, 2], vec![0.5f32, 1.5])?.write_npy_to(&mut stream)?;
    /// let mut input = &stream[..];
    /// assert_eq!(NpyReader::from_reader(&mut input)?.read::<Vec<i32>>()?, [1, 2, 3]);
    /// let any = NpyReader::from_reader(&mut input)?.read::<DynArray>()?;
    /// assert_eq!((any.dtype().descr().as_str(), any.shape()), ("'<f4'", &[1, 2][..]));
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn read<V: ReadNpy>(self) -> Result<V> {
        V::from_npy_reader(self)
    }
}

impl DynArray {
    /// All elements in storage order as `T`, converting byte order and widening as
    /// a file read does (a `>f8` array gives native `f64`s).
    ///
    /// # Errors
    /// [`ErrorKind::DtypeMismatch`] when the dtype cannot be read as `T`;
    /// [`ErrorKind::InvalidValue`] for invalid `bool`/`char` values.
    pub fn to_vec<T: NpyRecord>(&self) -> Result<Vec<T>> {
        NpyReader::over_data(self.data(), self.header().clone())?.read_flat()
    }

    /// The element at a logical (C-style) index, whatever the storage order.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for an index of the wrong length or out of bounds; as
    /// [`DynArray::to_vec`] for the conversion.
    pub fn get<T: NpyRecord>(&self, index: &[usize]) -> Result<T> {
        let pos = storage_index(&self.header().shape, self.header().fortran_order, index)?;
        let size = self.header().dtype.itemsize();
        let one = Header::new(self.header().dtype.clone(), vec![1]);
        let mut v = NpyReader::over_data(&self.data()[pos * size..(pos + 1) * size], one)?.read_flat::<T>()?;
        v.pop().ok_or_else(|| Error::usage("no element"))
    }
}

impl ReadNpy for DynArray {
    /// Reads a file by a [`Loader`](crate::Loader): a small one by one `read`.
    fn read_npy_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Self> {
        crate::read::Loader::new_with(options).load(path)
    }

    /// As [`DynArray::read_npy_with`] with default options.
    fn read_npy(path: impl AsRef<Path>) -> Result<Self> {
        crate::read::Loader::new().load(path)
    }

    /// Reads any dtype but objects, as raw bytes that remember the file's version.
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        reader.read_dyn()
    }
}

impl WriteNpy for DynArray {
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        self.view().write_npy_with(path, opts)
    }

    fn write_npy_to_with<W: Write>(&self, writer: W, opts: &WriteOptions) -> Result<W> {
        self.view().write_npy_to_with(writer, opts)
    }
}

impl WriteNpy for DynView<'_> {
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        let path = path.as_ref();
        let prepare = || Ok::<_, Error>((self.encode_header(opts)?, write::dyn_plan(&self.header().dtype, opts)?));
        let (header, plan) = prepare().map_err(|e| e.writing(path))?;
        write::to_path(path, &header, opts.syncs(), |w| {
            // Blocks allocated at once, as for typed data; on ext4 this also spares the
            // rename over an old file the flush of delayed allocations (issue 44: 512 MB
            // replaced in 0.10 s median instead of 0.18 s; np.save's truncation, 0.18 s).
            crate::atomic::preallocate(w.as_file(), header.len() as u64 + self.data().len() as u64);
            write::write_dyn_data(w, header.len() as u64, plan.as_ref(), self.data())
        })
    }

    fn write_npy_to_with<W: Write>(&self, mut writer: W, opts: &WriteOptions) -> Result<W> {
        let header = self.encode_header(opts)?;
        let plan = write::dyn_plan(&self.header().dtype, opts)?;
        writer.write_all(&header)?;
        write::write_dyn_data(&mut writer, header.len() as u64, plan.as_ref(), self.data())?;
        Ok(writer)
    }

    /// The header, then the data streamed from the view's memory (converted to the options'
    /// byte order in pieces): an npz member of a large array is never copied whole (the
    /// default would write the whole `.npy` to memory first).
    fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
        let header = self.encode_header(opts)?;
        let plan = write::dyn_plan(&self.header().dtype, opts)?;
        let data = self.data();
        let len = header.len() as u64 + data.len() as u64;
        Ok(NpyBytes::new(len, move |w| {
            w.write_all(&header)?;
            write::write_dyn_data(w, header.len() as u64, plan.as_ref(), data)
        }))
    }
}

impl<T: NpyRecord> ReadNpy for Array<T> {
    /// Reads any shape, keeping shape and memory order.
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        reader.read_array()
    }
}

impl<T: NpyRecord> WriteNpy for Array<T> {
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        write::typed_to_path(path.as_ref(), self.header(), self.as_slice(), opts)
    }

    fn write_npy_to_with<W: Write>(&self, writer: W, opts: &WriteOptions) -> Result<W> {
        write::typed_to_writer(writer, self.header(), self.as_slice(), opts)
    }

    fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
        write::typed_bytes(self.header(), self.as_slice(), opts)
    }
}

impl<T: NpyRecord> ReadNpy for Vec<T> {
    /// Reads a 1-D file.
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        read_1d(reader, "Vec<T>::read_npy", "Array::<T>::read_npy")
    }
}

/// Reads a 1-D array as `Vec<T>`, `[U; N]` elements taking the file's last dims first
/// (`'<f4'` of shape (n, 3) is n `[f32; 3]`); for the error on other shapes, `what` names
/// the call and `instead` what reads them.
pub(crate) fn read_1d<T: NpyRecord, R: Read>(mut reader: NpyReader<R>, what: &str, instead: &str) -> Result<Vec<T>> {
    reader.regroup::<T>()?;
    let shape = &reader.header().shape;
    if shape.len() != 1 {
        return Err(ErrorKind::WrongShape {
            reason: format!(
                "the file holds an array of shape {}; {what} reads 1-D arrays: use {instead} for {}",
                shape_repr(shape),
                if shape.is_empty() { "0-d arrays" } else { "N-d arrays" }
            ),
        }
        .into());
    }
    reader.read_regrouped()
}

impl<T: NpyRecord> WriteNpy for [T] {
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        write::typed_to_path(path.as_ref(), Header::new(T::dtype(), vec![self.len()]), self, opts)
    }

    fn write_npy_to_with<W: Write>(&self, writer: W, opts: &WriteOptions) -> Result<W> {
        write::typed_to_writer(writer, Header::new(T::dtype(), vec![self.len()]), self, opts)
    }

    fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
        write::typed_bytes(Header::new(T::dtype(), vec![self.len()]), self, opts)
    }
}

// Object arrays: their data is a pickle (see `crate::object`).

fn write_to_path<T: Encode>(
    path: &Path,
    shape: &[usize],
    fortran_order: bool,
    data: &[T],
    opts: &WriteOptions,
) -> Result<()> {
    let (header, pickle) = encode_npy(shape, fortran_order, data)?;
    let (_, head) = header.encode(opts.forced_version())?;
    crate::write::to_path(path, &head, opts.syncs(), |file| Ok(file.write_all(&pickle)?))
}

fn write_to<W: Write, T: Encode>(
    mut writer: W,
    shape: &[usize],
    fortran_order: bool,
    data: &[T],
    opts: &WriteOptions,
) -> Result<W> {
    let (header, pickle) = encode_npy(shape, fortran_order, data)?;
    let (_, head) = header.encode(opts.forced_version())?;
    writer.write_all(&head)?;
    writer.write_all(&pickle)?;
    Ok(writer)
}

fn bytes_of<T: Encode>(
    shape: &[usize],
    fortran_order: bool,
    data: &[T],
    opts: &WriteOptions,
) -> Result<NpyBytes<'static>> {
    let (header, pickle) = encode_npy(shape, fortran_order, data)?;
    let (_, head) = header.encode(opts.forced_version())?;
    Ok(NpyBytes::new((head.len() + pickle.len()) as u64, move |w| {
        w.write_all(&head)?;
        Ok(w.write_all(&pickle)?)
    }))
}

/// `WriteNpy` for slices of element types that write as Python values.
macro_rules! write_objects {
    ($($t:ty),*) => {$(
        impl WriteNpy for [$t] {
            /// Writes a 1-D object array (`dtype=object`), as `np.save` does.
            fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
                write_to_path(path.as_ref(), &[self.len()], false, self, opts)
            }

            fn write_npy_to_with<W: Write>(&self, writer: W, opts: &WriteOptions) -> Result<W> {
                write_to(writer, &[self.len()], false, self, opts)
            }

            fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
                bytes_of(&[self.len()], false, self, opts)
            }
        }
    )*};
}

write_objects!(Object, String, &str, Option<String>, Option<&str>);

impl WriteNpy for Array<Object> {
    /// Writes an object array of any shape and order, as `np.save` does.
    fn write_npy_with(&self, path: impl AsRef<Path>, opts: &WriteOptions) -> Result<()> {
        write_to_path(path.as_ref(), self.shape(), self.fortran_order(), self.as_slice(), opts)
    }

    fn write_npy_to_with<W: Write>(&self, writer: W, opts: &WriteOptions) -> Result<W> {
        write_to(writer, self.shape(), self.fortran_order(), self.as_slice(), opts)
    }

    fn __npy_bytes(&self, opts: &WriteOptions) -> Result<NpyBytes<'_>> {
        bytes_of(self.shape(), self.fortran_order(), self.as_slice(), opts)
    }
}

impl ReadNpy for Array<Object> {
    /// Reads an object array of any shape, in the header's order.
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        reader.read_objects().map(ObjectArray::into_array)
    }
}

impl ReadNpy for CheckedPickle {
    /// Reads an object array's pickle, checked but not decoded.
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        reader.read_pickle()
    }
}

impl ReadNpy for ObjectArray {
    /// Reads an object array of any shape, in the header's order, with the `StringDType`
    /// NumPy had for it, if any.
    fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
        reader.read_objects()
    }
}

/// Checks that a file holds a 1-D array, for `Vec` reads.
fn one_d(shape: &[usize], what: &str) -> Result<()> {
    if shape.len() == 1 {
        return Ok(());
    }
    Err(ErrorKind::WrongShape {
        reason: format!(
            "the file holds an array of shape {}; {what}::read_npy reads 1-D arrays: use Array::<Object>::read_npy",
            shape_repr(shape)
        ),
    }
    .into())
}

macro_rules! read_objects {
    ($($t:ty),*) => {$(
        impl ReadNpy for Vec<$t> {
            /// Reads a 1-D object array; an element of another type is an
            /// [`ErrorKind::InvalidValue`] naming its index and Python type.
            fn from_npy_reader<R: Read>(reader: NpyReader<R>) -> Result<Self> {
                one_d(&reader.header().shape, stringify!(Vec<$t>))?;
                reader.read_object_vec()
            }
        }
    )*};
}

read_objects!(Object, String, Option<String>);

#[cfg(test)]
mod tests {
    use super::*;

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
