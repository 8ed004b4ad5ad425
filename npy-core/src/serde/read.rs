//! The read API: elements of a reader, a file or a `DynArray` deserialized into `T`s or
//! decoded into `Value`s, all at once or chunk by chunk.

use std::io::Read;
use std::marker::PhantomData;
use std::path::Path;

use ::serde::de::DeserializeOwned;
use ::serde::Deserialize;

use super::de::element;
use super::tree::{check_len, ZERO_SIZE_BUDGET};
use super::value::{decode_at, Value};
use crate::array::DynArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::read::NpyReader;

/// Bytes of records read (or written) per step when the caller gives no chunk length.
pub(super) const CHUNK_BYTES: usize = 1 << 20;

/// Records per chunk for about [`CHUNK_BYTES`] of data.
pub(super) fn default_chunk(itemsize: usize) -> usize {
    (CHUNK_BYTES / itemsize.max(1)).max(1)
}

/// Refuses to collect more zero-size elements than one element's budget of zero-size
/// values: they would cost memory for no data bytes.
fn check_zero_size(dtype: &DType, shape: &[usize], len: usize) -> Result<()> {
    if dtype.itemsize() == 0 && len > ZERO_SIZE_BUDGET {
        return Err(Error::shape(shape, format!("{len} elements of a zero-size dtype are too many to deserialize")));
    }
    Ok(())
}

/// Deserializes one element from its bytes as stored (`dtype.itemsize()` bytes, file byte
/// order), e.g. one record of a memory map's data. `T` may borrow from `bytes` (`&str`
/// for UTF-8 `S` fields, `&[u8]` for `S` and `V` fields) and from the dtype (field names).
///
/// # Errors
/// [`ErrorKind::Usage`](crate::ErrorKind::Usage) when `bytes` is not one element long; otherwise as
/// [`from_npy_reader`] (the element index is 0).
///
/// # Examples
/// ```
/// use npy_core::DType;
///
/// let dtype: DType = "[('id', '>u2'), ('code', '|S3')]".parse()?;
/// let (id, code): (u16, &str) = npy_core::serde::from_element(&dtype, b"\x01\x02ab\0")?;
/// assert_eq!((id, code), (0x0102, "ab"));
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn from_element<'de, T: Deserialize<'de>>(dtype: &'de DType, bytes: &'de [u8]) -> Result<T> {
    check_len(dtype, bytes)?;
    element(dtype, bytes, 0)
}

/// Reads all (remaining) elements of an opened reader into `T`s, in storage order,
/// reading the data in chunks of about 1 MiB (only the `T`s are held).
///
/// # Errors
/// [`ErrorKind::InvalidValue`](crate::ErrorKind::InvalidValue) for invalid data (`b1` bytes other
/// than 0/1, invalid code points); [`ErrorKind::Serde`](crate::ErrorKind::Serde) when `T` does not
/// match the dtype (a missing field, a type serde cannot convert);
/// [`ErrorKind::Truncated`](crate::ErrorKind::Truncated) and
/// [`ErrorKind::Io`](crate::ErrorKind::Io) from the reader;
/// [`ErrorKind::Shape`](crate::ErrorKind::Shape) for more than 65,536 elements of a zero-size
/// dtype.
///
/// # Examples
/// ```
/// use npy_core::{prelude::*, NpyReader};
///
/// #[derive(NpyRecord)]
/// struct Sample {
///     t: f64,
///     v: [f32; 2],
///     ok: bool,
/// }
///
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Mine {
///     ok: bool,
///     v: Vec<f64>,
/// }
///
/// let file = [Sample { t: 0.5, v: [1.0, 2.0], ok: true }].write_npy_to(Vec::new())?;
/// let got: Vec<Mine> = npy_core::serde::from_npy_reader(NpyReader::from_reader(&file[..])?)?;
/// assert_eq!(got, [Mine { ok: true, v: vec![1.0, 2.0] }]);
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn from_npy_reader<T: DeserializeOwned, R: Read>(reader: NpyReader<R>) -> Result<Vec<T>> {
    let h = reader.header();
    check_zero_size(&h.dtype, &h.shape, reader.remaining())?;
    let chunk = default_chunk(h.dtype.itemsize());
    let mut out = Vec::with_capacity(reader.remaining().min(chunk));
    for item in iter(reader, chunk) {
        out.push(item?);
    }
    Ok(out)
}

/// Reads a `.npy` file into `T`s, in storage order (default [`ReadOptions`](crate::ReadOptions)).
///
/// # Errors
/// As [`from_npy_reader`]; as [`NpyReader::from_path_with`] for the file and its header.
///
/// # Examples
/// ```
/// use std::collections::BTreeMap;
/// use npy_core::prelude::*;
///
/// #[derive(NpyRecord)]
/// struct Row {
///     a: i32,
///     b: f64,
/// }
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("rows.npy");
/// vec![Row { a: 1, b: 0.5 }].write_npy(&path)?;
/// let rows: Vec<BTreeMap<String, f64>> = npy_core::serde::from_path(&path)?;
/// assert_eq!(rows[0]["a"], 1.0);
/// assert_eq!(rows[0]["b"], 0.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn from_path<T: DeserializeOwned>(path: impl AsRef<Path>) -> Result<Vec<T>> {
    from_npy_reader(NpyReader::from_path(path)?)
}

/// Deserializes every element of a [`DynArray`], in storage order. `T` may borrow from the
/// array (`&str`, `&[u8]`).
///
/// # Errors
/// As [`from_npy_reader`].
///
/// # Examples
/// ```
/// use npy_core::{DynArray, prelude::*};
///
/// let file = [1.5f32, -2.0].write_npy_to(Vec::new())?;
/// let arr = DynArray::read_npy_from(&file[..])?;
/// let v: Vec<f64> = npy_core::serde::from_dyn(&arr)?;
/// assert_eq!(v, [1.5, -2.0]);
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn from_dyn<'a, T: Deserialize<'a>>(array: &'a DynArray) -> Result<Vec<T>> {
    let (dtype, size, n) = (array.dtype(), array.dtype().itemsize(), array.len());
    check_zero_size(dtype, array.shape(), n)?;
    (0..n).map(|i| element(dtype, &array.data()[i * size..(i + 1) * size], i)).collect()
}

/// Raw elements of a reader, read `chunk_len` at a time into one reused buffer.
#[derive(Debug)]
struct Chunks<R> {
    reader: NpyReader<R>,
    chunk_len: usize,
    buf: Vec<u8>,
    /// Elements in `buf`, and the next one to hand out.
    len: usize,
    next: usize,
    /// Storage index of `buf`'s first element.
    first: usize,
    failed: bool,
}

impl<R: Read> Chunks<R> {
    fn new(reader: NpyReader<R>, chunk_len: usize) -> Self {
        let first = reader.len() - reader.remaining();
        Chunks { reader, chunk_len: chunk_len.max(1), buf: Vec::new(), len: 0, next: 0, first, failed: false }
    }

    /// The next element: its storage index, the dtype and its bytes.
    fn next_element(&mut self) -> Option<Result<(usize, &DType, &[u8])>> {
        if self.failed {
            return None;
        }
        if self.next == self.len {
            if self.reader.remaining() == 0 {
                return None;
            }
            self.first += self.len;
            self.buf.clear();
            match self.reader.read_raw(self.chunk_len, &mut self.buf) {
                Ok(k) => (self.len, self.next) = (k, 0),
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
        let dtype = &self.reader.header().dtype;
        let (i, size) = (self.next, dtype.itemsize());
        self.next += 1;
        Some(Ok((self.first + i, dtype, &self.buf[i * size..(i + 1) * size])))
    }

    /// Bounds on the elements still to come: those buffered (and at least one more result
    /// if the reader has more, which a read error may turn into the last), and all.
    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.failed {
            return (0, Some(0));
        }
        let buffered = self.len - self.next;
        let left = self.reader.remaining();
        (buffered + left.min(1), Some(buffered + left))
    }
}

/// Deserializes elements one by one, reading the data in chunks of `chunk_len` elements:
/// only one chunk of raw bytes is held, for arrays larger than memory or to start early.
///
/// An element that does not deserialize gives an `Err` and the iteration goes on with the
/// next; an I/O error (or truncated data) ends it.
///
/// # Examples
/// ```
/// use npy_core::{prelude::*, NpyReader};
///
/// let file = (0..10i64).collect::<Vec<_>>().write_npy_to(Vec::new())?;
/// let mut sum = 0;
/// for v in npy_core::serde::iter::<i64, _>(NpyReader::from_reader(&file[..])?, 4) {
///     sum += v?;
/// }
/// assert_eq!(sum, 45);
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn iter<T: DeserializeOwned, R: Read>(reader: NpyReader<R>, chunk_len: usize) -> Iter<R, T> {
    Iter { chunks: Chunks::new(reader, chunk_len), _marker: PhantomData }
}

/// Elements deserialized one by one from chunked reads: see [`iter`].
#[derive(Debug)]
pub struct Iter<R, T> {
    chunks: Chunks<R>,
    _marker: PhantomData<fn() -> T>,
}

impl<R: Read, T: DeserializeOwned> Iterator for Iter<R, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        Some(self.chunks.next_element()?.and_then(|(i, dtype, bytes)| element(dtype, bytes, i)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<R, T> Iter<R, T> {
    /// The reader, positioned after the last chunk read (to read what follows the array).
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, NpyReader};
    ///
    /// let mut stream = [1u8, 2].write_npy_to(Vec::new())?;
    /// [7u16].write_npy_to(&mut stream)?;
    /// let mut it = npy_core::serde::iter::<u8, _>(NpyReader::from_reader(&stream[..])?, 8);
    /// assert_eq!(it.by_ref().collect::<Result<Vec<_>, _>>()?, [1, 2]);
    /// let rest = it.into_inner().into_inner();
    /// assert_eq!(NpyReader::from_reader(rest)?.read::<Vec<u16>>()?, [7]);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn into_inner(self) -> NpyReader<R> {
        self.chunks.reader
    }
}

/// Decodes elements one by one into [`Value`]s, reading the data in chunks of
/// `chunk_len` elements (only one chunk of raw bytes is held): for files of unknown type.
///
/// An element that does not decode gives an `Err` and the iteration goes on with the
/// next; an I/O error (or truncated data) ends it.
///
/// # Examples
/// ```
/// use npy_core::serde::Value;
/// use npy_core::{prelude::*, NpyReader};
///
/// let file = [1u16, 2, 3].write_npy_to(Vec::new())?;
/// let values = npy_core::serde::values(NpyReader::from_reader(&file[..])?, 2).collect::<Result<Vec<_>, _>>()?;
/// assert_eq!(values, [Value::UInt(1), Value::UInt(2), Value::UInt(3)]);
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn values<R: Read>(reader: NpyReader<R>, chunk_len: usize) -> Values<R> {
    Values { chunks: Chunks::new(reader, chunk_len) }
}

/// Elements decoded one by one from chunked reads: see [`values`].
#[derive(Debug)]
pub struct Values<R> {
    chunks: Chunks<R>,
}

impl<R: Read> Iterator for Values<R> {
    type Item = Result<Value>;

    fn next(&mut self) -> Option<Result<Value>> {
        Some(self.chunks.next_element()?.and_then(|(i, dtype, bytes)| decode_at(dtype, bytes, i)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<R> Values<R> {
    /// The reader, positioned after the last chunk read (to read what follows the array).
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, NpyReader};
    ///
    /// let file = [1u8, 2, 3].write_npy_to(Vec::new())?;
    /// let mut vals = npy_core::serde::values(NpyReader::from_reader(&file[..])?, 2);
    /// vals.next();
    /// // The first chunk (2 elements) was read; one remains in the reader.
    /// assert_eq!(vals.into_inner().remaining(), 1);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn into_inner(self) -> NpyReader<R> {
        self.chunks.reader
    }
}
