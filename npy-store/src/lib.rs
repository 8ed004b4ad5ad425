//! NumPy `.npy` and `.npz` files in object storage, through the
//! [`object_store`](https://docs.rs/object_store) crate: local files, S3 and S3-compatible
//! servers, Google Cloud Storage, Azure and plain HTTP.
//!
//! A `.npy` object is read as a scan format: its header from one small ranged read (the
//! same request also says how large the object is), and any rows `a..b` from one more
//! ranged read, since rows have a fixed size.
//!
//! - [`RemoteNpy`]: a `.npy` object; the array or rows `a..b` as any of npy-core's
//!   [`ReadNpy`](npy_core::ReadNpy) types ([`RemoteNpy::read`], [`RemoteNpy::read_rows`]:
//!   `Vec<T>`, `Array<T>`, `DynArray`, ...) or Arrow batches ([`RemoteNpy::read_batch`],
//!   [`RemoteNpy::batches`]).
//! - [`RemoteNpz`]: an `.npz` archive, its directory from its tail; members read as
//!   npy-core's [`npz::Reader`](npy_core::npz::Reader) reads them ([`RemoteNpz::read`],
//!   [`RemoteNpz::members`], [`RemoteNpz::names`]), stored ones as [`RemoteNpy`],
//!   compressed ones decompressed as their bytes arrive.
//!
//! Objects in a store are opened with `from_store(store, location)`, as npy-core's files
//! with `from_path(path)`; every call that takes options is the same name plus `_with`,
//! the options last, and the plain name uses the defaults.
//! - [`RowScan`]: the one engine of rows as record batches, which DataFusion's scan uses
//!   too; every stream of batches here is a [`BatchStream`]. A [`filter::Filter`] has
//!   it (and an archive's or a table's scan) judge rows on a few columns before it decodes
//!   the others.
//! - [`Table`]: NumPy files (a file, an archive, a directory or glob of them, a URL) as
//!   one table; a [`TableScan`](table::TableScan) of parts of its columns, rows and a
//!   filter, its batches from threads of their own in row order: the engine under
//!   `npy.scan` and `npy.polars.scan_npy`.
//! - [`Shards`]: many `.npy` files (or stored members) as one array along axis 0, a batch of
//!   rows in any order gathered in one call ([`Shards::gather`]): a training loop's reads,
//!   from local files (`pread`, or maps under a [`MapContract`](npy_core::mmap::MapContract))
//!   or objects at URLs (ranged GETs side by side). Example: `examples/train_batches.rs`.
//! - [`store_for`]: the store of a path or URL (`s3://`, `gs://`, `az://`, `http(s)://`
//!   under the features `aws`, `gcp`, `azure`, `http`); [`find`] and [`find_files`]: the
//!   files a path, a directory, a glob pattern or a URL prefix names, one rule for every
//!   door (Python's too); [`Source`]: the one source of bytes, a local file or an object
//!   pinned to its version, read by ranges.
//! - [`many::load_many`]: thousands of small `.npy` files read on a few threads
//!   (`npy.load_many`'s), each by npy-core's [`Loader`](npy_core::Loader); under it
//!   [`many::in_order`], many reads on a few threads, their results handed over in order.
//!
//! The decoding is npy-core's and npy-arrow's (one header codec, one scalar codec); this
//! crate only moves bytes. Its functions are async, on tokio; a program with no runtime of
//! its own blocks on them with [`shared_runtime`] (one a process, made again in a forked
//! worker).
//!
//! # Examples
//! ```
//! use std::sync::Arc;
//! use npy_core::prelude::*;
//! use npy_store::RemoteNpy;
//! use object_store::{memory::InMemory, path::Path, ObjectStore, ObjectStoreExt};
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
//! let location = Path::from("runs/x.npy");
//! let file = (0..10).map(f64::from).collect::<Vec<_>>().write_npy_to(Vec::new())?;
//! store.put(&location, file.into()).await?;
//!
//! let npy = RemoteNpy::from_store(store, &location).await?;
//! assert_eq!(npy.read_rows::<Vec<f64>>(2..5).await?, [2.0, 3.0, 4.0]);
//! let batch = npy.read_batch(2..5, None).await?;
//! assert_eq!(batch.num_rows(), 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod filter;
mod find;
mod fortran_blocks;
pub mod header;
pub mod many;
pub mod npz;
pub mod remote;
pub mod rows;
mod runtime;
pub mod shards;
pub mod source;
mod stamp;
mod stream;
pub mod table;
mod together;
mod upload;
pub mod url;

pub use find::{find, find_files, find_in_store};
pub use fortran_blocks::WHOLE_FORTRAN_BYTES;
pub use header::{fetch_header, fetch_header_with, NpyObject, HEADER_PREFIX};
pub use npz::checked::HOLD_BYTES;
pub use npz::{RemoteNpz, NPZ_TAIL};
pub use remote::RemoteNpy;
pub use rows::RowScan;
pub use runtime::shared_runtime;
pub use shards::{Shards, ShardsOptions};
pub use source::Source;
pub use stream::BatchStream;
pub use table::{Table, TableOptions};
pub use upload::{upload, PART_BYTES};
pub use url::{is_url, store_for, StoreLocation};
