//! `npy`: inspect, check, copy and convert NumPy `.npy`/`.npz` files (to and from Arrow IPC
//! and Parquet), and generate Rust structs that read them.
//!
//! # Conventions
//!
//! Every subcommand follows these, and the ones to come (`sql`, `append`, `cat`,
//! `stack`) will too:
//!
//! - **Streaming by default.** Data is read and written in bounded pieces, so memory stays
//!   small whatever the file's size (a 1 GiB file is copied, checked or dumped in tens of
//!   MB). Where a subcommand must hold an array whole (an object array's pickle is decoded
//!   whole), its help says so.
//! - **Outputs are atomic.** A file is written beside its target and renamed over it only
//!   when complete ([`npy_core::atomic::AtomicFile`], `npz::Writer::create`): a failed or
//!   interrupted run leaves the old file, and nothing beside it (a killed `stack split`, or
//!   `sql` COPY to a `.npz`, leaves a hidden directory that the next such run removes:
//!   [`npy_core::pending`]).
//! - **stdout is data, stderr is for people.** Results go to stdout; errors and progress to
//!   stderr. One progress helper ([`progress`]) draws a bar, moving by bytes, only when
//!   stderr is a terminal and the input is large; pipes, scripts and CI see nothing there.
//! - **One error reporter** ([`report`]): an error is one line, `error: reading 'f.npz',
//!   member 'x.npy': ...`, naming the file as the user gave it (and the member), saying
//!   what to do in flags (`--max-header-size N`), never in Rust APIs.
//! - **Exit codes:** 0 success; 1 an error about the data or files (for `check`: a problem
//!   found); 2 a usage error (a bad flag, or a request the file cannot answer as asked, such
//!   as an archive of several members without `--member`).
//! - **Common flags:** `--member NAME` picks an `.npz` member (not needed when it has one);
//!   `--max-header-size BYTES` on every subcommand that reads.
//!
//! # Rows and values (`dump`, `head`)
//!
//! `dump` and `head` give an array's rows as NumPy's `tolist()` does (an N-d array by its
//! first axis, in C order whatever the file's order) and each value as NumPy's `str()`
//! prints it, every leaf decoded by npy-core's scalar codec (`records`, `render`);
//! `npy dump --help` states the JSON mapping. C-order data streams in chunks (bounded
//! memory); Fortran-order files are read at positions a block of rows at a time,
//! Fortran-order npz members and object arrays are held whole.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use npy_core::ReadOptions;

mod append;
mod check;
mod convert;
mod copy;
mod dump;
mod head;
mod info;
mod npz;
mod progress;
mod records;
mod render;
mod report;
mod schema;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "sql")]
mod sql_text;
mod stack;

/// Inspect, copy and convert NumPy .npy/.npz files (Arrow IPC, Parquet); generate Rust structs that read them.
#[derive(Debug, Parser)]
#[command(name = "npy", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show what a file's headers say: version, header length, data offset, dtype, shape,
    /// order and sizes; for an .npz, each member's name, compression, sizes, dtype and shape.
    ///
    /// Reads headers only (fast on files of any size): the data, CRCs and pickles are not
    /// looked at. `npy check` reads everything.
    Info {
        /// The .npy or .npz file.
        file: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Show the first rows as a table: an N-d array's rows as rows, each value as NumPy
    /// prints it, nested fields as `a.b`.
    #[command(long_about = head::HELP)]
    Head {
        /// The .npy or .npz file.
        file: PathBuf,
        /// How many rows.
        #[arg(short = 'n', default_value_t = 10)]
        n: usize,
        /// The member of an .npz to show.
        #[arg(long)]
        member: Option<String>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Write every row to stdout as JSON lines or CSV, values as NumPy's tolist() and
    /// str() give them, streaming (bounded memory).
    #[command(long_about = dump::HELP)]
    Dump {
        /// The .npy or .npz file.
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = dump::Format::Json)]
        format: dump::Format,
        /// The member of an .npz to dump.
        #[arg(long)]
        member: Option<String>,
        /// For strict JSON parsers: NaN, inf and -inf as null, or as the strings "NaN",
        /// "Infinity", "-Infinity" (default: NaN, Infinity, -Infinity, as Python's json).
        #[arg(long, value_enum, value_name = "null|string")]
        strict_json: Option<dump::Strict>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Append the rows of .npy files to a .npy file in place (along its first axis, the
    /// last in Fortran order): each file's rows are written and synced, then the shape in
    /// the header's spare bytes counts them, so a crash leaves the old or the new array.
    ///
    /// Locking: each file's append (and --recover) holds an exclusive advisory lock on
    /// TARGET (flock) from before it reads the header until the header counts its rows, so
    /// several `npy append`s (and Rust appenders) onto one target take turns: every row
    /// lands once, whole. Another append waits for the lock (--no-wait: fail at once).
    /// Readers (np.load, npy) need no lock and never see a torn array. The lock does not
    /// cover writers that do not take it (npy-append-array, np.save over the file, memory
    /// maps writing it), nor network file systems, where advisory locks are weak: keep one
    /// appender per file there.
    Append {
        /// The .npy file to grow.
        target: PathBuf,
        /// Files of the same dtype and other dims whose rows are appended, in order.
        more: Vec<PathBuf>,
        /// First make a file whose last append was interrupted whole: adopt the tail's
        /// whole rows, or trim the tail.
        #[arg(long, value_enum)]
        recover: Option<append::Recover>,
        /// Fail instead of rewriting the whole file when its header has no room for the
        /// new shape (headers from writers that leave none).
        #[arg(long)]
        in_place: bool,
        /// Fail at once, instead of waiting, when another process is appending to TARGET
        /// (holds its lock).
        #[arg(long)]
        no_wait: bool,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Concatenate .npy files along their first axis (the last in Fortran order) into a
    /// new file, streaming, written atomically.
    Cat {
        /// The files, in order: the same dtype and other dims.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The file to write.
        #[arg(short, long, value_name = "OUT.npy")]
        output: PathBuf,
    },
    /// Dask npy stacks (directories of 0.npy, 1.npy, ... and an `info` pickle, as
    /// `dask.array.to_npy_stack` writes them and `from_npy_stack` reads them).
    #[command(subcommand)]
    Stack(StackCommand),
    /// Read a file through the dynamic API and write it back (bit-exact for NumPy files);
    /// an .npz keeps its member names, order and compression.
    Copy {
        /// The .npy or .npz file to read.
        input: PathBuf,
        /// Where to write (atomically: an existing file is replaced only on success).
        output: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Convert between .npy, .npz members, Arrow IPC (.arrow, .feather) and Parquet files,
    /// formats by extension, streaming (bounded memory).
    #[command(long_about = convert::HELP)]
    Convert {
        /// The file to read (.npy, .npz, .arrow, .feather, .parquet).
        input: PathBuf,
        /// Where to write (atomically: an existing file is replaced only on success).
        output: PathBuf,
        /// The .npz member to read or write, as a .npy file (default: the whole archive, a
        /// column per member).
        #[arg(long, value_name = "NAME")]
        member: Option<String>,
        /// Keep each row's padding, b1 bytes and U text that is not valid in a
        /// `numpy.residue` column, so that the file comes back byte for byte whatever they
        /// hold (default: tables without it; the file comes back with zero padding and b1
        /// bytes 0 or 1, and invalid U text is an error).
        #[arg(long)]
        residue: bool,
        /// Rows per batch read from .npy, .npz and Parquet (default: 65536, fewer for rows
        /// wider than 1 KiB: at most 64 MiB of data per batch); Arrow IPC files keep their
        /// batches.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        batch_rows: Option<u64>,
        /// Days (datetime64 of unit D) as Int64 instead of Date32 (which holds ±2^31 days;
        /// NumPy's go further).
        #[arg(long)]
        days_as_int64: bool,
        /// Compression of Parquet output (default: snappy, as pyarrow).
        #[arg(long, value_enum)]
        compression: Option<convert::Compression>,
        /// Arrow data per row group of Parquet output, in bytes (default: 64 MiB). Row
        /// groups encode on worker threads, a few at once: memory is a few row groups.
        #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
        row_group_bytes: Option<u64>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Read every byte of every array and member and report each problem; exit 1 if any.
    ///
    /// Problems: headers and sizes, data shorter than the header says, bytes after the data,
    /// an npz directory that disagrees with its local headers, bad CRCs and deflate data,
    /// members named .npy that are not .npy files, pickles the restricted decoder refuses
    /// (anything beyond NumPy's plain arrays). Warnings: b1 bytes other than 0 and 1, U
    /// code units that are not Unicode scalar values (NumPy writes and reads them; --strict
    /// makes them problems).
    ///
    /// Bytes after a .npy file's data while another process appends to it (holds its
    /// append lock, as `npy append` does) are an append in progress: a note, not a
    /// problem; check does not wait for it. With the lock free the file is checked again
    /// (the append may just have finished): bytes still there are an interrupted append's,
    /// a problem (`npy append --recover adopt|trim` makes the file whole).
    ///
    /// One line per finding on stdout (file, member, element and byte where known), then
    /// `N files checked, M with problems`. Memory stays bounded whatever the file's size.
    Check {
        /// The .npy and .npz files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Count invalid b1 and U values as problems, not warnings.
        #[arg(long)]
        strict: bool,
        /// Print nothing; the exit code says whether a problem was found.
        #[arg(short, long)]
        quiet: bool,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Show a file's dtype as a tree (fields, offsets, types); with --rust, as Rust structs
    /// with #[derive(NpyRecord)] that read the file and write it back.
    Schema {
        /// The .npy or .npz file.
        file: PathBuf,
        /// Print Rust source: one #[derive(NpyRecord)] struct per record.
        #[arg(long)]
        rust: bool,
        /// Name of the top-level struct (default: the file stem or member name in CamelCase).
        #[arg(long, value_name = "NAME", requires = "rust")]
        name: Option<String>,
        /// The .npz member to describe (default: all members; with --rust, the only one).
        #[arg(long, value_name = "NAME")]
        member: Option<String>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Run SQL over .npy/.npz files, directories and buckets (Apache DataFusion); print
    /// the result as a table, CSV or JSON lines, or write it to a file.
    #[cfg(feature = "sql")]
    #[command(long_about = sql::HELP)]
    Sql {
        /// The query, e.g. "SELECT count(*) FROM t".
        query: String,
        /// A table: NAME=LOCATION, a .npy or .npz file, a directory, or a URL (s3://...).
        /// Repeat for more tables.
        #[arg(long = "table", value_name = "NAME=LOCATION", value_parser = sql::table_arg)]
        tables: Vec<(String, String)>,
        /// A read setting for every table, as the OPTIONS of CREATE EXTERNAL TABLE ...
        /// STORED AS NPY: batch_rows=N, days_as_int64=true, residue=true. Repeat for more.
        #[arg(long = "option", value_name = "KEY=VALUE", value_parser = sql::option_arg)]
        options: Vec<(String, String)>,
        /// How to print the result.
        #[arg(long, value_enum, default_value_t = sql::Format::Table)]
        format: sql::Format,
        /// Write the result to this file instead (atomically; format by extension: .npy,
        /// .npz, .parquet, .arrow).
        #[arg(long, value_name = "FILE", conflicts_with = "format")]
        out: Option<PathBuf>,
        /// Run the query on a Ballista cluster started in this process (a scheduler and an
        /// executor on loopback) instead of in plain DataFusion.
        #[cfg(feature = "ballista")]
        #[arg(long)]
        ballista: bool,
    },
    /// `npy sql` in a build without the `sql` feature: says how to get it.
    #[cfg(not(feature = "sql"))]
    #[command(hide = true, disable_help_flag = true)]
    Sql {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Options for reading.
#[derive(Debug, Args)]
struct ReadArgs {
    /// Largest header accepted, in bytes (default 16 MiB, which every header NumPy writes
    /// for a record of up to hundreds of thousands of fields fits; NumPy's np.load
    /// defaults to 10000).
    #[arg(long, value_name = "BYTES")]
    max_header_size: Option<usize>,
    /// Most memory the values of an object array (dtype=object) may take, in bytes
    /// (default: 128 MiB plus 4 per byte of its pickle; millions of small values need more).
    #[arg(long, value_name = "BYTES")]
    max_object_bytes: Option<usize>,
}

impl ReadArgs {
    fn options(&self) -> ReadOptions {
        let mut opts = ReadOptions::new();
        if let Some(n) = self.max_header_size {
            opts.max_header_size(n);
        }
        if let Some(n) = self.max_object_bytes {
            opts.max_object_bytes(n);
        }
        opts
    }
}

/// `npy stack` subcommands.
#[derive(Debug, Subcommand)]
enum StackCommand {
    /// Split a .npy file into a Dask npy stack: blocks of N along an axis (the last one
    /// shorter) and the `info` pickle, streamed; the directory appears whole or not at all.
    /// A killed split leaves a hidden `.DIR.npy-stack.XXXXXX` beside DIR: the next split
    /// into the same parent directory removes it (never one a running split still writes).
    Split {
        /// The .npy file.
        file: PathBuf,
        /// The stack's directory (new, or empty).
        dir: PathBuf,
        /// Length of each block along the axis.
        #[arg(long, value_name = "N")]
        rows: usize,
        /// The axis the blocks follow one another on.
        #[arg(long, default_value_t = 0, value_name = "K")]
        axis: usize,
    },
    /// Join a Dask npy stack into one .npy file, streamed, written atomically. The `info`
    /// pickle is decoded without running anything in it; a stack without `info` is read
    /// from its blocks' headers.
    Join {
        /// The stack's directory.
        dir: PathBuf,
        /// The file to write.
        output: PathBuf,
        /// The stacking axis of a stack without `info` whose blocks all have one shape (by
        /// default the one axis their lengths differ on, else the first).
        #[arg(long, value_name = "K")]
        axis: Option<usize>,
    },
}

fn main() -> ExitCode {
    // A panic inside a third-party reader of a corrupt file is caught and reported as an
    // error naming the file (npy_arrow::guard); the default hook would print it first.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !npy_arrow::guard::catching() {
            default_hook(info);
        }
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(report::USAGE) } else { ExitCode::SUCCESS };
        }
    };
    let result = match &cli.command {
        #[cfg(not(feature = "sql"))]
        Command::Sql { .. } => {
            eprintln!(
                "error: this npy was built without SQL (the `sql` feature, off by default): \
                 cargo install --path npy-cli --features sql"
            );
            return ExitCode::from(report::USAGE);
        }
        #[cfg(feature = "sql")]
        Command::Sql {
            query,
            tables,
            options,
            format,
            out,
            #[cfg(feature = "ballista")]
            ballista,
        } => {
            let opts = sql::Options {
                query: query.clone(),
                tables: tables.clone(),
                options: options.clone(),
                format: *format,
                out: out.clone(),
                #[cfg(feature = "ballista")]
                ballista: *ballista,
            };
            return sql::run(&opts);
        }
        Command::Info { file, read } => info::run(file, &read.options()),
        Command::Check { files, strict, quiet, read } => {
            return check::run(files, &read.options(), check::Options { strict: *strict, quiet: *quiet });
        }
        Command::Append { target, more, recover, in_place, no_wait, read } => {
            let how = append::How { recover: *recover, in_place: *in_place, wait: !*no_wait };
            append::append(target, more, how, &read.options())
        }
        Command::Cat { inputs, output } => append::cat(inputs, output),
        Command::Stack(StackCommand::Split { file, dir, rows, axis }) => stack::split_file(file, dir, *rows, *axis),
        Command::Stack(StackCommand::Join { dir, output, axis }) => stack::join(dir, output, *axis),
        Command::Copy { input, output, read } => copy::run(input, output, &read.options()),
        Command::Convert {
            input,
            output,
            member,
            residue,
            batch_rows,
            days_as_int64,
            compression,
            row_group_bytes,
            read,
        } => {
            let opts = convert::Options {
                member: member.clone(),
                residue: *residue,
                batch_rows: batch_rows.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
                days_as_int64: *days_as_int64,
                compression: *compression,
                row_group_bytes: *row_group_bytes,
            };
            return convert::run(input, output, &read.options(), &opts);
        }
        Command::Head { file, n, member, read } => head::run(file, member.as_deref(), *n, &read.options()),
        Command::Dump { file, format, member, strict_json, read } => {
            dump::run(file, member.as_deref(), *format, *strict_json, &read.options())
        }
        Command::Schema { file, rust, name, member, read } => {
            let opts = schema::Options { rust: *rust, name: name.clone(), member: member.clone() };
            schema::run(file, &read.options(), &opts)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report::error(&e),
    }
}
