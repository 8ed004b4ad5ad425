//! NumPy `.npy` and `.npz` files as [Apache DataFusion](https://datafusion.apache.org)
//! tables: SQL over directories and buckets of arrays.
//!
//! A directory of `.npy` files of one dtype (in its folders too, the files
//! `npy_store::find` gives every door) is a table: a record dtype's fields are its
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
//! - [`StoreRegistry`]: buckets' object stores made when a query first names them, from the
//!   URL and the environment, for runtimes that cannot register stores per table.
//! - Writing: `COPY (SELECT ...) TO 'out.npy'` (or `'out.npz'`, a member per column),
//!   `COPY ... TO 'dir/' STORED AS NPY` (a directory of files) and `INSERT INTO t SELECT
//!   ...` (a new file in the table's directory), through [`NpySink`].
//!
//! Tables are the files' values, never converted in place: byte order, padding and text
//! are decoded by npy-arrow (the one scalar codec), each file's header is checked against
//! the table's when it is scanned, and a file that no longer matches is an error naming
//! it. SQL arrays are 1-based: `samples[1]` is NumPy's `samples[:, 0]`.
//!
//! Files are checked as npy-core's readers check them, so that no query answers from a
//! file that `npy check` or NumPy refuse: an empty (0-byte) file, which DataFusion's listing
//! skips, is an error naming it, as is a file shorter than its header says. Every `.npz`
//! member a query reads, stored or deflated, is hashed as it is read, and its size and
//! CRC-32 are checked before any of its rows reach the query: an archive's batches are held
//! until its members' ends passed (up to 64 MiB of members), and larger members are checked
//! by a read of their own first (their bytes read twice). A query that reads no member,
//! `count(*)`, checks every member, so it reads the whole archive; a query of some members
//! checks those it reads.
//!
//! # Examples
//! ```
//! use datafusion::arrow::array::AsArray;
//! use datafusion::arrow::datatypes::Float64Type;
//! use datafusion::prelude::SessionContext;
//! use npy_core::prelude::*;
//! use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};
//!
//! #[derive(NpyRecord, Clone, Copy)]
//! struct Pick {
//!     trace: i32,
//!     t: f64,
//! }
//!
//! let dir = tempfile::tempdir()?;
//! vec![Pick { trace: 1, t: 0.5 }, Pick { trace: 2, t: 1.5 }].write_npy(dir.path().join("a.npy"))?;
//! vec![Pick { trace: 3, t: 4.0 }].write_npy(dir.path().join("b.npy"))?;
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let ctx = SessionContext::new();
//! ctx.register_npy("picks", dir.path().to_str().unwrap(), &NpyReadOptions::new()).await?;
//! let batches = ctx.sql("SELECT avg(t) FROM picks WHERE trace > 1").await?.collect().await?;
//! assert_eq!(batches[0].column(0).as_primitive::<Float64Type>().value(0), 2.75);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod context;
mod error;
mod format;
mod kind;
mod listing;
mod opener;
mod options;
mod parts;
mod placement;
mod schema;
pub mod sink;
mod source;
mod stores;
mod table;

pub use context::{register, SessionContextNpyExt};
pub use format::{NpyFormat, NpyFormatFactory};
pub use kind::Kind;
pub use options::NpyReadOptions;
pub use placement::PartsToScan;
pub use sink::NpySink;
pub use source::NpySource;
pub use stores::StoreRegistry;
pub use table::{NpyTable, NpyTableFactory};
