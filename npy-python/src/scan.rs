//! `npy.scan`: npy-store's [`Table`] (`.npy` files or `.npz` archives as one table of
//! Arrow record batches) handed to DuckDB, polars, pyarrow and pandas through the Arrow
//! PyCapsule interface (`__arrow_c_stream__`, by pyo3-arrow). The engine is npy-store's
//! ([`TableScan`]: parts of columns, rows, filters judged in files and archives, pieces
//! made side by side on threads of their own); this is its glue: names to parts, Python's
//! predicate to a [`Filter`], and waits with the GIL released.

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, RecordBatch, StructArray};
use arrow_schema::{Field, SchemaRef};
use npy_arrow::{ConvertOptions, Part};
use npy_core::mmap::MapContract;
use npy_store::filter::{Filter, KeepError, Kept};
use npy_store::table::{TableBatchReader, TableScan};
use npy_store::{Table, TableOptions};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use pyo3_arrow::ffi::{to_schema_pycapsule, to_stream_pycapsule, ArrayIterator};
use pyo3_arrow::{PyRecordBatch, PySchema};

use crate::errors::to_python;

/// A table over NumPy files, given to Arrow consumers as fresh, independent streams.
#[pyclass(module = "npy._npy", name = "Scan", frozen)]
pub(crate) struct Scan {
    scan: TableScan,
    schema: SchemaRef,
}

impl Scan {
    fn new(scan: TableScan) -> PyResult<Scan> {
        let schema = scan.schema().map_err(to_python)?;
        Ok(Scan { scan, schema })
    }

    /// The parts that `names` name, failing on an unknown column with `KeyError` naming
    /// the columns there are, on a part the column has not with `ValueError`.
    fn parts(&self, names: &[String]) -> PyResult<Vec<Part>> {
        let table = self.scan.table();
        (names.iter())
            .map(|name| {
                table.part(name).map_err(|e| {
                    if table.has_column_for(name) {
                        return PyValueError::new_err(e.to_string());
                    }
                    let schema = table.schema();
                    let known: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                    PyKeyError::new_err(format!("no column {name:?} in {}: its columns are {known:?}", table.title()))
                })
            })
            .collect()
    }
}

#[pymethods]
impl Scan {
    /// The Arrow schema of the rows given (a pyo3-arrow `Schema`; `pyarrow.schema(s)`
    /// takes it).
    #[getter]
    fn schema(&self) -> PySchema {
        PySchema::new(self.schema.clone())
    }

    /// The rows given (before any filter of a consumer).
    #[getter]
    fn num_rows(&self) -> usize {
        self.scan.row_range().len()
    }

    /// The names of the columns given.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }

    /// The files read, in row order.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.scan.table().files().into_iter().map(str::to_string).collect()
    }

    /// The same files with other columns (or parts of columns: `samples[10]`,
    /// `receiver.x`) and rows (`None`: all columns; rows `start..stop` of all the files'
    /// rows, already clamped by the caller), and rows per batch (`None`: as before).
    #[pyo3(signature = (columns, start, stop, batch_rows = None))]
    fn select(
        &self,
        columns: Option<Vec<String>>,
        start: usize,
        stop: usize,
        batch_rows: Option<usize>,
    ) -> PyResult<Scan> {
        if batch_rows == Some(0) {
            return Err(PyValueError::new_err("batch_rows must be at least 1"));
        }
        let mut scan = self.scan.clone();
        match columns {
            Some(names) => scan.parts(self.parts(&names)?),
            None => scan.parts((0..self.scan.table().schema().fields().len()).map(Part::whole).collect()),
        };
        scan.rows(start..stop);
        if let Some(rows) = batch_rows {
            scan.batch_rows(rows);
        }
        Scan::new(scan)
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        Ok(to_schema_pycapsule(py, self.schema.as_ref())?)
    }

    /// A new stream of the rows, independent of every other (consumers may ask more than
    /// once); `requested_schema` casts where Arrow can, as the PyCapsule interface says.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let batches = self.scan.batches().map_err(to_python)?;
        let schema = self.schema.clone();
        let arrays = batches.map(|batch| Ok(Arc::new(StructArray::from(batch?)) as ArrayRef));
        let field = Field::new_struct("", schema.fields().clone(), false).with_metadata(schema.metadata().clone());
        let reader = Box::new(ArrayIterator::new(arrays, Arc::new(field)));
        Ok(to_stream_pycapsule(py, reader, requested_schema)?)
    }

    /// The rows as an iterator of record batches (each has `__arrow_c_array__`), waiting
    /// for them with the GIL released. With `predicate`, a callable given a record batch
    /// of columns (or parts) `predicate_columns`, read first, that returns a NumPy bool
    /// array, only the rows it keeps are given, their other columns read at those rows
    /// only (in `.npy` files and in archives alike).
    #[pyo3(signature = (predicate_columns = None, predicate = None))]
    fn batches(&self, predicate_columns: Option<Vec<String>>, predicate: Option<Py<PyAny>>) -> PyResult<BatchIter> {
        let mut scan = self.scan.clone();
        if let Some(callable) = predicate {
            let parts = self.parts(&predicate_columns.unwrap_or_default())?;
            let callable = Arc::new(callable);
            scan.filter(Filter::new(parts, move |batch| keep(&callable, batch)));
        }
        let batches = scan.batches().map_err(to_python)?;
        Ok(BatchIter { batches: std::sync::Mutex::new(Some(batches)) })
    }

    fn __len__(&self) -> usize {
        self.scan.row_range().len()
    }

    fn __repr__(&self) -> String {
        let columns: Vec<String> =
            self.schema.fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect();
        let rows = self.scan.row_range().len();
        format!("npy.Scan({}, {rows} rows, columns [{}])", self.scan.table().title(), columns.join(", "))
    }
}

/// The rows of `batch` that Python's predicate keeps.
fn keep(callable: &Py<PyAny>, batch: &RecordBatch) -> Result<Kept, KeepError> {
    let rows = batch.num_rows();
    let kept = Python::attach(|py| -> PyResult<BooleanArray> {
        let out = callable.call1(py, (PyRecordBatch::new(batch.clone()),))?;
        let mask: PyReadonlyArray1<'_, bool> = out.extract(py)?;
        if mask.len()? != rows {
            return Err(PyValueError::new_err(format!("the predicate gave {} values for {rows} rows", mask.len()?)));
        }
        Ok(BooleanArray::from(mask.as_slice()?.to_vec()))
    })?;
    Ok(Kept::of(&kept))
}

/// The Python iterator of [`Scan::batches`].
#[pyclass(module = "npy._npy", name = "ScanBatches")]
pub(crate) struct BatchIter {
    batches: std::sync::Mutex<Option<TableBatchReader>>,
}

#[pymethods]
impl BatchIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyRecordBatch>> {
        let mut guard = self.batches.lock().map_err(|_| PyValueError::new_err("the scan's iterator failed before"))?;
        let Some(batches) = guard.as_mut() else { return Ok(None) };
        match py.detach(|| batches.next_batch()) {
            Some(Ok(batch)) => Ok(Some(PyRecordBatch::new(batch))),
            Some(Err(e)) => {
                *guard = None;
                Err(to_python(e))
            }
            None => {
                *guard = None;
                Ok(None)
            }
        }
    }
}

/// The maps' contract, accepted for the caller who asked for maps.
#[allow(unsafe_code)]
pub(crate) fn maps_accepted() -> MapContract {
    // SAFETY: only for `npy.scan(..., map_local_files=True)` and `npy.open(...,
    // map_local_files=True)`, whose documentation gives the contract (as np.load's
    // mmap_mode does): nothing modifies or truncates the files while a stream or the lazy
    // array reads them, or the process may die of SIGBUS. A change that does happen is
    // still reported (the file's stamp: after the batch that saw it, or before the read).
    unsafe { MapContract::accept() }
}

/// Opens `source` (a `.npy` or `.npz` file, a directory, or a glob pattern) as a table.
#[pyfunction]
#[pyo3(signature = (source, members = None, batch_rows = None, days_as_int64 = false, map_local_files = false))]
pub(crate) fn open_scan(
    py: Python<'_>,
    source: String,
    members: Option<Vec<String>>,
    batch_rows: Option<usize>,
    days_as_int64: bool,
    map_local_files: bool,
) -> PyResult<Scan> {
    let mut convert = ConvertOptions::new();
    convert.days_as_int64(days_as_int64);
    if let Some(rows) = batch_rows {
        if rows == 0 {
            return Err(PyValueError::new_err("batch_rows must be at least 1"));
        }
        convert.batch_rows(rows);
    }
    let mut options = TableOptions::new();
    options.convert(convert);
    if let Some(members) = members {
        options.members(members);
    }
    if map_local_files {
        options.map(maps_accepted());
    }
    let table = py
        .detach(|| {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(Table::open_with(&source, &options))
        })
        .map_err(to_python)?;
    let mut scan = table.scan();
    if let Some(rows) = batch_rows {
        scan.batch_rows(rows);
    }
    Scan::new(scan)
}
