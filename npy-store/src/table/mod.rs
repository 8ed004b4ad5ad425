//! NumPy files as one table of Arrow record batches: [`Table`], the engine under
//! `npy.scan`, `npy.polars.scan_npy` and Rust programs that want "these files, these
//! columns, these rows" without a query engine. SQL's scan (npy-datafusion) shares its
//! reads of archives' members ([`MemberReads`]) and the decoders below it.
//!
//! A table is one `.npy` file, one `.npz` archive (its members as columns), a directory or
//! glob pattern of either kind with one dtype (read in path order), or one object at a URL.
//! A [`TableScan`] of it names the columns, or **parts** of them ([`Part`]: `samples[10]`,
//! `receiver.x`, decoded from their own bytes), the rows, and a [`Filter`](crate::filter::Filter) judged on
//! the few parts it reads before the others are decoded (in archives as in files). Its
//! batches come from threads of their own, a few pieces side by side, given out in row
//! order ([`TableScan::batches`]); no archive row comes out before its member passed its
//! size and CRC-32 checks, and a local file seen changed since the table opened it fails
//! the scan instead of answering wrong.
//!
//! # Examples
//! ```
//! use arrow_array::{cast::AsArray, types::Float64Type};
//! use npy_core::prelude::*;
//! use npy_store::table::{Table, TableOptions};
//!
//! let dir = tempfile::tempdir()?;
//! for (k, name) in ["a.npy", "b.npy"].iter().enumerate() {
//!     let rows: Vec<[f64; 3]> = (0..4).map(|r| [(k * 4 + r) as f64, 0.0, -1.0]).collect();
//!     rows.write_npy(dir.path().join(name))?;
//! }
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let table = Table::open_with(dir.path().to_str().unwrap(), &TableOptions::new()).await?;
//! assert_eq!((table.rows(), table.files().len()), (8, 2));
//!
//! // Item 0 of each row's three values, of rows 2..6 (across both files).
//! let mut scan = table.scan();
//! scan.columns(&["values[0]"])?.rows(2..6);
//! let got: Vec<f64> = (scan.batches()?)
//!     .map(|b| b.map(|b| b.column(0).as_primitive::<Float64Type>().values().to_vec()))
//!     .collect::<Result<Vec<_>, _>>()?
//!     .concat();
//! assert_eq!(got, [2.0, 3.0, 4.0, 5.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod files;
mod members;
mod names;
mod scan;

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::{Schema, SchemaRef};
use npy_arrow::{ConvertOptions, Layout, Part};
use npy_core::mmap::MapContract;
use npy_core::{Error, ErrorKind, Result};

pub use members::MemberReads;
pub use scan::{TableBatchReader, TableScan};

use crate::npz::RemoteNpz;
use crate::source::Source;

/// How a [`Table`] opens its files ([`Table::open_with`]).
#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    members: Option<Vec<String>>,
    convert: ConvertOptions,
    map: Option<MapContract>,
}

impl TableOptions {
    /// The defaults: every member of archives, npy-arrow's default conversions, files read.
    pub fn new() -> TableOptions {
        TableOptions::default()
    }

    /// The members of `.npz` archives that make the table (in that order). Default: all.
    pub fn members(&mut self, names: Vec<String>) -> &mut Self {
        self.members = Some(names);
        self
    }

    /// How columns convert to Arrow (days as Int64, rows per batch of archives).
    pub fn convert(&mut self, options: ConvertOptions) -> &mut Self {
        self.convert = options;
        self
    }

    /// Maps local `.npy` files' rows instead of reading them, under `contract` (the
    /// caller's `unsafe` [`MapContract::accept`]: nothing modifies or truncates the files
    /// while a scan reads them). Default: read.
    pub fn map(&mut self, contract: MapContract) -> &mut Self {
        self.map = Some(contract);
        self
    }
}

/// NumPy files as one table: their columns (a `.npy` file's as npy-arrow's [`Layout`] gives
/// them, an archive's members side by side) and their rows, one file after another. Cheap
/// to clone (the files are shared); scans of it are independent ([`Table::scan`]).
#[derive(Clone)]
pub struct Table {
    inner: Arc<Files>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("files", &self.files()).field("rows", &self.rows()).finish_non_exhaustive()
    }
}

struct Files {
    files: Vec<TableFile>,
    /// Every column of the files.
    schema: SchemaRef,
    convert: ConvertOptions,
    map: Option<MapContract>,
}

/// One file of a table.
struct TableFile {
    /// The file as the user named it (or as found under their directory or pattern).
    name: String,
    /// The file opened: a local file stamped, or an object pinned to the version read.
    source: Arc<Source>,
    rows: usize,
    kind: Contents,
}

/// What a table's file holds, as opened: a `.npy` read by rows, an archive, or an object
/// array decoded whole.
enum Contents {
    Npy {
        data_offset: u64,
        layout: Arc<Layout>,
    },
    Npz {
        npz: RemoteNpz,
    },
    /// An object array (text, or a ragged array's rows), decoded whole when the table was
    /// opened: its one column.
    Objects {
        column: ArrayRef,
    },
}

impl Table {
    /// The table of `source`, with default options ([`Table::open_with`]).
    ///
    /// # Errors
    /// As [`Table::open_with`].
    pub async fn open(source: &str) -> Result<Table> {
        Table::open_with(source, &TableOptions::new()).await
    }

    /// The table of `source`: a `.npy` file or `.npz` archive, a directory (its `.npy` or
    /// `.npz` files, recursively) or glob pattern of files of one kind and one dtype (in
    /// path order), an object at a URL ([`crate::store_for`]'s), or the objects under a URL
    /// prefix ending in `/` ([`crate::find_files`]). Each file's header (an
    /// archive's directory and members' headers) is read now; an object array is decoded
    /// whole now ([`npy_arrow::object_batches_with`]: text, ragged arrays).
    ///
    /// # Errors
    /// Naming the file: a missing one ([`ErrorKind::Io`] of kind `NotFound`); one that is
    /// not a NumPy file or is corrupt; files whose columns differ, a directory of both
    /// kinds or of neither, `members` given for `.npy` files ([`ErrorKind::Usage`]).
    pub async fn open_with(source: &str, options: &TableOptions) -> Result<Table> {
        let names = crate::find_files(source).await?;
        let mut tables = Vec::with_capacity(names.len());
        let mut schema: Option<(SchemaRef, String)> = None;
        for name in names {
            let (file, columns) = files::open(&name, options).await.map_err(|e| files::named(e, &name))?;
            match &schema {
                None => schema = Some((columns, name.clone())),
                Some((first, first_name)) if !files::same_columns(first, &columns) => {
                    let (now, then) = (files::describe(&columns), files::describe(first));
                    let reason = format!(
                        "its columns ({now}) are not those of '{first_name}' ({then}): a table's files share one dtype"
                    );
                    return Err(Error::from(ErrorKind::Usage { reason }).reading(&name));
                }
                Some(_) => {}
            }
            tables.push(file);
        }
        let (schema, _) = schema.expect("find gives a file or fails");
        let files = Files { files: tables, schema, convert: options.convert.clone(), map: options.map };
        Ok(Table { inner: Arc::new(files) })
    }

    /// Every column of the table.
    pub fn schema(&self) -> SchemaRef {
        self.inner.schema.clone()
    }

    /// The rows of all its files.
    pub fn rows(&self) -> usize {
        self.inner.files.iter().map(|f| f.rows).sum()
    }

    /// Its files, in row order, as named (or found).
    pub fn files(&self) -> Vec<&str> {
        self.inner.files.iter().map(|f| f.name.as_str()).collect()
    }

    /// The part of a column that `name` names, as [`Part::name`] writes it: a column's name
    /// (`t0`), a record field's (`receiver.x`), a subarray's or an N-d row's item
    /// (`samples[10]`; `samples[-1]` counts from the end, as NumPy does) or run of items
    /// (`samples[2:5]`, Python's slice of step 1, clamped as Python clamps, not empty).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`], naming the table's columns, for a name no column starts; one
    /// whose steps the column has not (a field its record has not, an index past the end).
    pub fn part(&self, name: &str) -> Result<Part> {
        names::part(&self.inner.schema, name)
            .map_err(|reason| Error::from(ErrorKind::Usage { reason: format!("{reason} in {}", self.title()) }))
    }

    /// Whether `name` starts with a column's name (so a [`Table::part`] error is about a
    /// step, not an unknown column).
    pub fn has_column_for(&self, name: &str) -> bool {
        names::column_of(&self.inner.schema, name).is_some()
    }

    /// A scan of every column and row, to narrow with [`TableScan`]'s setters.
    pub fn scan(&self) -> TableScan {
        TableScan::new(self.clone())
    }

    /// The table as error messages name it: its file, or its first and how many more.
    pub fn title(&self) -> String {
        match self.inner.files.as_slice() {
            [one] => format!("'{}'", one.name),
            files => format!("'{}' and {} more files", files[0].name, files.len() - 1),
        }
    }
}

/// The schema of `parts` of the columns of `schema`: whole columns as they are, parts
/// named by [`Part::name`].
fn parts_schema(schema: &Schema, parts: &[Part]) -> Result<SchemaRef> {
    let fields = (parts.iter())
        .map(|part| names::field(schema, part))
        .collect::<std::result::Result<Vec<_>, String>>()
        .map_err(|reason| Error::from(ErrorKind::Usage { reason }))?;
    Ok(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}
