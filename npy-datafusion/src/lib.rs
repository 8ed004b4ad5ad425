//! NumPy `.npy` and `.npz` files as [Apache DataFusion](https://datafusion.apache.org)
//! tables: SQL over directories and buckets of arrays.
//!
//! A directory of `.npy` files of one dtype is a table: a record dtype's fields are its
//! columns (nested records are structs, sub-arrays fixed-size lists), a row per element.
//! The schema comes from the files' headers (one small ranged read each), `count(*)` from
//! their shapes alone, and a scan decodes only the columns a query uses, splitting large
//! files into row ranges for parallel scans. An `.npz` archive is a table whose columns are
//! its members.
//!
//! - [`SessionContextNpyExt`]: `ctx.register_npy(name, path, options)`, `register_npz`,
//!   `read_npy`.
//! - [`register`]: `CREATE EXTERNAL TABLE t STORED AS NPY LOCATION 'dir/'` (and `NPZ`),
//!   `OPTIONS` as in [`NpyReadOptions`].
//! - [`NpyTable`], [`NpyFormat`], [`NpySource`]: the table provider, file format and scan,
//!   for engines that ship plans (Ballista).
//! - Writing: `COPY (SELECT ...) TO 'out.npy'` (or `'out.npz'`, a member per column),
//!   `COPY ... TO 'dir/' STORED AS NPY` (a directory of files) and `INSERT INTO t SELECT
//!   ...` (a new file in the table's directory), through [`NpySink`].
#![forbid(unsafe_code)]

mod context;
mod format;
mod opener;
mod options;
mod schema;
pub mod sink;
mod source;
mod table;

pub use context::{register, SessionContextNpyExt};
pub use format::{Kind, NpyFormat, NpyFormatFactory};
pub use options::NpyReadOptions;
pub use sink::NpySink;
pub use source::NpySource;
pub use table::{NpyTable, NpyTableFactory};

/// npy's error as DataFusion's (it stays reachable through `source()` / downcasting).
pub(crate) fn npy_error(error: npy_core::Error) -> datafusion::error::DataFusionError {
    datafusion::error::DataFusionError::External(Box::new(error))
}
