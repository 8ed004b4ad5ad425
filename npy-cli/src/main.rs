//! `npy`: inspect, check, copy and convert NumPy `.npy`/`.npz` files (to and from Arrow IPC
//! and Parquet), and generate Rust structs that read them.
//!
//! # Conventions
//!
//! Every subcommand follows these:
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
// Denied, not forbidden: `sql`'s `promised` accepts the maps' contract for `--map-local-files`.
#![deny(unsafe_code)]

// Each subcommand is a module with its own `Args` (its flags, whose doc comments are its
// help) and `run`; this file only dispatches. Beneath them: `read_args` (the flags every
// reading subcommand shares), `records` and `render` (rows and values for `dump`, `head`
// and `sql`), `progress`, `report`.
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod append;
mod cat;
mod check;
mod convert;
mod copy;
mod dump;
mod head;
mod info;
mod progress;
mod read_args;
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

/// The subcommands, in the order `npy --help` lists them.
#[derive(Debug, Subcommand)]
enum Command {
    Info(info::Args),
    Head(head::Args),
    Dump(dump::Args),
    Append(append::Args),
    Cat(cat::Args),
    #[command(subcommand)]
    Stack(stack::Args),
    Copy(copy::Args),
    Convert(convert::Args),
    Check(check::Args),
    Schema(schema::Args),
    #[cfg(feature = "sql")]
    Sql(sql::Args),
    /// `npy sql` in a build without the `sql` feature: says how to get it.
    #[cfg(not(feature = "sql"))]
    #[command(hide = true, disable_help_flag = true)]
    Sql {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
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
        Command::Info(args) => info::run(args),
        Command::Head(args) => head::run(args),
        Command::Dump(args) => dump::run(args),
        Command::Append(args) => append::run(args),
        Command::Cat(args) => cat::run(args),
        Command::Stack(args) => stack::run(args),
        Command::Copy(args) => copy::run(args),
        Command::Schema(args) => schema::run(args),
        // These report their own errors: their exit code depends on when the error came.
        Command::Convert(args) => return convert::run(args),
        Command::Check(args) => return check::run(args),
        #[cfg(feature = "sql")]
        Command::Sql(args) => return sql::run(args),
        #[cfg(not(feature = "sql"))]
        Command::Sql { .. } => {
            let text = "this npy was built without SQL (the `sql` feature, off by default): \
                        cargo install --path npy-cli --features sql";
            return report::text(text, report::USAGE);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report::error(&e),
    }
}
