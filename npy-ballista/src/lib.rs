//! NumPy `.npy` and `.npz` tables on an [Apache Ballista](https://datafusion.apache.org/ballista)
//! cluster: the codecs that carry npy tables and scans through Ballista's plans, and an
//! in-process cluster for tests and the command line.
//!
//! A query on a Ballista context travels twice: the client sends its logical plan to the
//! scheduler, and the scheduler sends physical plan fragments to the executors. Plans
//! travel as protobuf; tables and scans that DataFusion does not know travel as blobs of
//! the *extension codecs* in the session config:
//!
//! - [`NpyLogicalCodec`]: an [`npy_datafusion::NpyTable`] (its kind, read options, URLs,
//!   file extension and partition columns; the schema travels beside it, so the scheduler
//!   lists the files but infers nothing) and an [`npy_datafusion::NpyFormatFactory`];
//!   everything else goes to Ballista's own codec.
//! - [`NpyPhysicalCodec`]: a `DataSourceExec` over an [`npy_datafusion::NpySource`] (its
//!   kind and options around DataFusion's own file scan message: files, row ranges,
//!   projection, limit, statistics), and a `DataSinkExec` into an [`npy_datafusion::NpySink`]
//!   (`COPY ... TO 'x.npy'` / `INSERT INTO` run on the executors).
//!   [`physical_codec`] puts it before Ballista's.
//!
//! Client, scheduler and every executor need the same codecs, the npy formats registered,
//! and object stores for the buckets the tables name: [`ballista_state`] builds such a
//! session state. [`standalone`] starts a scheduler and an executor in this process with
//! clones of it; [`remote`] connects to a running cluster of npy's processes.
//!
//! # A cluster of processes
//!
//! With feature `cluster`, this crate builds `npy-ballista-scheduler` and
//! `npy-ballista-executor`: Ballista 55's `ballista-scheduler` and `ballista-executor`
//! with npy's codecs, formats and object stores ([`scheduler_config`],
//! [`executor_config`]), taking the same flags, so Ballista's deployment docs apply as
//! written (`--help` says what differs). Object stores come from each process's
//! environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`), and local paths must mean the same files on
//! every machine. `npy sql --ballista df://host:50050` runs a query on such a cluster.
//!
//! # Examples
//!
//! ```no_run
//! # async fn run() -> datafusion::error::Result<()> {
//! use std::time::Duration;
//!
//! use datafusion::prelude::SessionConfig;
//! use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};
//!
//! let state = npy_ballista::ballista_state(SessionConfig::new())?;
//! let ctx = npy_ballista::standalone(state, Duration::from_secs(60)).await?;
//! ctx.register_npy("traces", "traces/", &NpyReadOptions::new()).await?;
//! let df = ctx.sql("SELECT receiver['x'], avg(t0) FROM traces GROUP BY 1").await?;
//! df.show().await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Wire format
//!
//! Every blob starts with the bytes `\x93npy-ballista`, a wire version (2) and a tag
//! (table, format, scan or sink), then a protobuf message. A blob of another version is refused
//! with an error that says so, never misread.
#![forbid(unsafe_code)]

mod cluster;
mod codec;
mod processes;
mod state;
mod wire;

pub use cluster::{remote, standalone};
pub use codec::{physical_codec, NpyLogicalCodec, NpyPhysicalCodec};
pub use processes::{executor_config, scheduler_config};
pub use state::ballista_state;
