//! Columns: a record type's fields as one array each, named by their dotted paths.
//! [`Writer::add_columns`] writes them, [`Reader::read_columns`] rebuilds the records.
//!
//! A record dtype's scalar leaves ([`DType::columns`]) are the columns: each with the dtype
//! that takes it out of a record (a plan from the record to it), and the same path with
//! another leaf, to put a column of another scalar type back into records.

use std::io::{Read, Seek, Write};

use super::{npy_member, Reader, Writer};
use crate::array::DynArray;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::header::{shape_repr, Header};
use crate::plan::Plan;
use crate::read::build_vec;
use crate::record::{native_dtype_of, NpyRecord};
use crate::write::write_with_plan;

impl<W: Write + Seek> Writer<W> {
    /// Adds one array per field of a record type: `trace_id`, `receiver.x`, … (nested
    /// fields by dotted path; a subarray field `[f32; 64]` gives an `(n, 64)` array, and a
    /// subarray of records `[Pt; 3]` gives `pts.x` of shape `(n, 3)`). Skipped fields and
    /// padding are not written. [`Reader::read_columns`] rebuilds the records.
    ///
    /// In Python: `pandas.DataFrame(dict(np.load(f)))` for flat records.
    ///
    /// # Errors
    /// As [`Writer::add`].
    ///
    /// # Examples
    /// ```
    /// use std::io::Cursor;
    /// use npy_core::npz::{Reader, Writer};
    /// use npy_core::NpyRecord;
    ///
    /// #[derive(NpyRecord, Debug, PartialEq)]
    /// struct Pos { x: f64, y: f64 }
    /// #[derive(NpyRecord, Debug, PartialEq)]
    /// struct Station { id: u32, pos: Pos, gain: [f32; 2] }
    ///
    /// let stations = vec![Station { id: 1, pos: Pos { x: 0.5, y: 1.5 }, gain: [1.0, 2.0] }];
    /// let mut w = Writer::new(Cursor::new(Vec::new()));
    /// w.add_columns(&stations)?;
    /// let mut r = Reader::from_reader(w.finish()?)?;
    /// assert_eq!(r.names(), ["id", "pos.x", "pos.y", "gain"]);
    /// assert_eq!(r.read::<npy_core::Array<f32>>("gain")?.shape(), [1, 2]);
    /// assert_eq!(r.read_columns::<Station>()?, stations);
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn add_columns<T: NpyRecord>(&mut self, records: &[T]) -> Result<()> {
        self.add_columns_prefixed("", records)
    }

    /// As [`Writer::add_columns`], with member names `prefix.field` (an empty prefix adds
    /// none), so several record types can share one archive.
    ///
    /// # Errors
    /// As [`Writer::add`].
    pub fn add_columns_prefixed<T: NpyRecord>(&mut self, prefix: &str, records: &[T]) -> Result<()> {
        let native = self.located("", native_dtype_of::<T>())?;
        let cols = T::dtype().columns();
        for col in self.located("", cols)? {
            let name = prefixed(prefix, &col.path);
            let result = (|| {
                let plan = Plan::new(&native, &col.extract)?;
                let mut shape = vec![records.len()];
                shape.extend_from_slice(&col.dims);
                let header = Header::new(DType::Scalar(col.scalar), shape);
                let head = header.encode(None)?.1;
                let member = self.member_name(&name)?;
                let total = head.len() as u64 + header.data_len()? as u64;
                self.write_member(member, self.compression, total, |w| {
                    w.write_all(&head)?;
                    write_with_plan(w, 0, &plan, records)
                })
            })();
            self.located(&npy_member(&name), result)?;
        }
        Ok(())
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Rebuilds records from an archive written by [`Writer::add_columns`].
    ///
    /// # Errors
    /// [`ErrorKind::Npz`](crate::ErrorKind::Npz) for a missing column or columns of different lengths; as
    /// [`Reader::read`] for each column (dtypes convert as for any read).
    pub fn read_columns<T: NpyRecord>(&mut self) -> Result<Vec<T>> {
        self.read_columns_prefixed("")
    }

    /// As [`Reader::read_columns`] for columns written with a prefix.
    ///
    /// # Errors
    /// As [`Reader::read_columns`].
    pub fn read_columns_prefixed<T: NpyRecord>(&mut self, prefix: &str) -> Result<Vec<T>> {
        let native = native_dtype_of::<T>()?;
        let mut loaded = Vec::new();
        let mut n = None;
        for col in T::dtype().columns()? {
            let name = prefixed(prefix, &col.path);
            let arr = self.read::<DynArray>(&name)?;
            let Some(file_scalar) = arr.dtype().as_scalar().copied() else {
                return Err(Error::npz(Some(&name), format!("column has dtype {}, not a scalar", arr.dtype())));
            };
            let (len, dims) = arr.shape().split_first().map_or((1, &[][..]), |(l, d)| (*l, d));
            if dims != col.dims.as_slice() || arr.fortran_order() && arr.shape().iter().filter(|&&d| d > 1).count() > 1
            {
                return Err(Error::npz(
                    Some(&name),
                    format!("column has shape {}, expected (n, {:?}) in C order", shape_repr(arr.shape()), col.dims),
                ));
            }
            if *n.get_or_insert(len) != len {
                return Err(Error::npz(Some(&name), format!("column has {len} rows, others {}", n.unwrap_or(0))));
            }
            let src = col.with_leaf(file_scalar)?;
            let plan = Plan::new_partial(&src, &native)?;
            loaded.push((name, arr, plan));
        }
        let n = n.unwrap_or(0);
        build_vec::<T>(n, |out| {
            for (_, arr, plan) in &loaded {
                plan.run(arr.data(), out, 0)?;
            }
            Ok(())
        })
    }
}

fn prefixed(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_string()
    } else {
        format!("{prefix}.{path}")
    }
}
