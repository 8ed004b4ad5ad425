//! The write API: records serialized into a dtype (given or traced) and written as a `.npy`
//! file, stream or `DynArray`.

use std::io::{BufWriter, Write};
use std::path::Path;

use ::serde::ser::Serialize;

use super::encode::encode;
use super::read::{default_chunk, CHUNK_BYTES};
use super::ser::ValueSer;
use super::trace::trace_dtype;
use crate::array::DynArray;
use crate::dtype::DType;
use crate::error::Result;
use crate::header::Header;

/// The header for `n` records of `dtype` (a subarray dtype adds its shape to the array's)
/// and the dtype to encode each record with.
fn prepare<T: Serialize>(records: &[T], dtype: Option<&DType>) -> Result<(Header, DType)> {
    let dtype = match dtype {
        Some(d) => d.clone(),
        None => trace_dtype(records)?,
    };
    let mut shape = vec![records.len()];
    let base = match &dtype {
        DType::SubArray(a) => {
            shape.extend(a.flat_shape());
            a.flat_base().clone()
        }
        other => other.clone(),
    };
    let header = Header::new(base, shape);
    header.data_len()?;
    Ok((header, dtype))
}

/// Serializes each record into its bytes and writes them, a chunk at a time.
fn write_data<T: Serialize, W: Write + ?Sized>(records: &[T], dtype: &DType, writer: &mut W) -> Result<()> {
    let size = dtype.itemsize();
    let per = default_chunk(size);
    let mut buf = vec![0u8; per.min(records.len()) * size];
    for (c, chunk) in records.chunks(per).enumerate() {
        let bytes = &mut buf[..chunk.len() * size];
        bytes.fill(0);
        for (k, record) in chunk.iter().enumerate() {
            let out = &mut bytes[k * size..(k + 1) * size];
            record
                .serialize(ValueSer)
                .and_then(|v| encode(&v, dtype, &[], out))
                .map_err(|e| e.into_error(Some(c * per + k)))?;
        }
        writer.write_all(bytes)?;
    }
    Ok(())
}

/// Writes `records` as a `.npy` array of shape `(records.len(),)` to `writer` and returns
/// it. The dtype is `dtype` when given (fields matched by name, padding zeroed), else
/// traced from the records ([`trace_dtype`]); a subarray dtype adds its shape to the
/// array's (records of `[f32; 3]` give shape `(n, 3)`). The header is `np.save`'s.
///
/// Records are serialized and written a chunk at a time, so on an error the writer may
/// hold part of the array; [`to_path`] never leaves such a file.
///
/// # Errors
/// [`ErrorKind::Serde`](crate::ErrorKind::Serde) for a record that does not fit the dtype (a
/// missing or extra field, a value out of range, a string too long), naming the element and field;
/// as [`trace_dtype`] without a dtype; [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer.
///
/// # Examples
/// Writing into a dtype NumPy's side asked for, by field name:
/// ```
/// use npy_core::{DType, DynArray, prelude::*};
///
/// #[derive(serde::Serialize)]
/// struct Event {
///     mag: f64,
///     id: u32,
///     label: &'static str,
/// }
///
/// let dtype: DType = "[('id', '>u4'), ('', '|V4'), ('mag', '<f4'), ('label', '|S8')]".parse()?;
/// let file = npy_core::serde::to_writer(&[Event { mag: 4.5, id: 9, label: "quake" }], Some(&dtype), Vec::new())?;
/// let arr = DynArray::read_npy_from(&file[..])?;
/// assert_eq!(arr.dtype(), &dtype);
/// assert_eq!(&arr.data()[..4], &9u32.to_be_bytes());
/// assert_eq!(&arr.data()[4..8], &[0; 4]);
/// assert_eq!(&arr.data()[12..], b"quake\0\0\0");
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn to_writer<T: Serialize, W: Write>(records: &[T], dtype: Option<&DType>, mut writer: W) -> Result<W> {
    let (header, dtype) = prepare(records, dtype)?;
    writer.write_all(&header.encode(None)?.1)?;
    write_data(records, &dtype, &mut writer)?;
    Ok(writer)
}

/// Writes `records` as a `.npy` file, atomically (a temporary file renamed over `path`
/// when complete, synced first, as [`WriteNpy::write_npy`](crate::WriteNpy::write_npy)):
/// see [`to_writer`] for the dtype.
///
/// # Errors
/// As [`to_writer`]; on any error the file at `path` is untouched.
///
/// # Examples
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("pairs.npy");
/// // Tuples have no field names: traced, they are a 2-D array of their common type.
/// npy_core::serde::to_path(&[(1u8, 2.5f64), (3, 4.5)], None, &path)?;
/// assert_eq!(npy_core::NpyReader::from_path(&path)?.header().shape, [2, 2]);
/// let back: Vec<f64> = npy_core::serde::from_path(&path)?;
/// assert_eq!(back, [1.0, 2.5, 3.0, 4.5]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_path<T: Serialize>(records: &[T], dtype: Option<&DType>, path: impl AsRef<Path>) -> Result<()> {
    let (header, dtype) = prepare(records, dtype)?;
    let head = header.encode(None)?.1;
    crate::write::to_path(path.as_ref(), &head, true, |file| {
        let mut w = BufWriter::with_capacity(CHUNK_BYTES, file);
        write_data(records, &dtype, &mut w)?;
        w.flush()?;
        Ok(())
    })
}

/// Builds a [`DynArray`] of `records` in memory: see [`to_writer`] for the dtype. Reshape
/// it with [`DynArray::new`] and a header of another shape.
///
/// # Errors
/// As [`to_writer`].
///
/// # Examples
/// ```
/// use npy_core::header::Header;
/// use npy_core::DynArray;
///
/// let arr = npy_core::serde::to_dyn(&[1i32, 2, 3, 4, 5, 6], None)?;
/// assert_eq!(arr.dtype().descr(), "'<i8'");
/// let grid = DynArray::new(Header::new(arr.dtype().clone(), vec![2, 3]), arr.into_data())?;
/// assert_eq!(grid.get::<i64>(&[1, 0])?, 4);
/// # Ok::<(), npy_core::Error>(())
/// ```
pub fn to_dyn<T: Serialize>(records: &[T], dtype: Option<&DType>) -> Result<DynArray> {
    let (header, dtype) = prepare(records, dtype)?;
    let mut data = Vec::with_capacity(header.data_len()?);
    write_data(records, &dtype, &mut data)?;
    DynArray::new(header, data)
}
