//! `npy convert IN OUT`

use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;
use npy_arrow::formats::{self, FileOptions, ParquetCompression};
use npy_arrow::ConvertOptions;
use npy_core::Result;

use crate::read_args::ReadArgs;
use crate::report;

/// Convert between .npy, .npz members, Arrow IPC (.arrow, .feather) and Parquet files,
/// formats by extension, streaming (bounded memory).
#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
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
    compression: Option<Compression>,
    /// Arrow data per row group of Parquet output, in bytes (default: 64 MiB). Row
    /// groups encode on worker threads, a few at once: memory is a few row groups.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    row_group_bytes: Option<u64>,
    #[command(flatten)]
    read: ReadArgs,
}

/// The long help of `npy convert`.
pub const HELP: &str = "\
Convert between .npy, .npz members, Arrow IPC files (.arrow, .feather) and Parquet
(.parquet), each format chosen by its file's extension, streaming in batches (bounded
memory whatever the file's size). The output appears only when complete.

An array becomes a table as npy-arrow maps it: a 1-D array of records has one column per
field (nested records as structs, subarrays as fixed-size lists); an array of scalars one
column, `values`; an N-d array one row per index of its first axis (a fixed-size list
with the arrow.fixed_shape_tensor extension). The .npy header is kept in the schema's
metadata, so that a file converted to Arrow or Parquet and back is the same file; with
--residue, byte for byte whatever its padding and b1 bytes hold. That header is used only
while it agrees with the columns (names, order, types), and the rows are always the
file's: a table another tool edited or made becomes the natural packed NumPy dtype of its
columns, each under its own name. Types other tools write map to NumPy's: large and view
strings to U, binaries to S, dictionaries to their values, lists of one length to
subarrays, Date64 to M8[ms], times of day to m8 (since midnight), decimals to f8.

Nulls: NumPy has no null, so a null becomes NaN in a float, decimal or complex column and
NaT in a datetime64 or timedelta64 column (dates, times and durations: the types that have
one); in any other column (integers, bool, text, bytes, records, list rows) a null is an
error naming the column and the row.

A whole .npz is a table of one column per member, as np.savez(path, **columns) makes
(members must share their first dim; each member's header kept in its field's metadata, so
an archive converted to Arrow or Parquet and back has the same members); a table written
to an .npz has a member per column. --member NAME reads or writes one member instead, as a
.npy file.

Object arrays: one of str (None or NaN where missing) becomes a Utf8 column; a ragged
array (1-d, every value a 1-d ndarray of one bool, integer, float, datetime64,
timedelta64, str or bytes type, or None) a List column of that type, a row per ndarray
(None a null row). Other object arrays cannot be converted, and a List column of rows of
different lengths does not convert back to .npy (NumPy's subarrays have one length).";

/// Parquet compression, as `--compression` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Compression {
    /// Snappy (as pyarrow).
    Snappy,
    /// Zstandard.
    Zstd,
    /// LZ4 (LZ4_RAW).
    Lz4,
    /// Gzip.
    Gzip,
    /// No compression.
    None,
}

/// Converts `input` to `output` (formats by extension), with a bar on a terminal for large
/// inputs; reports an error as the tool does and returns the exit code.
///
/// Exit code 2 only for a usage error of the command line (a file of no known format,
/// `--member` without an `.npz`, a Parquet flag for other output), found before anything
/// is read; every error of the conversion itself, whatever its kind, is about the files (1).
pub fn run(args: &Args) -> ExitCode {
    let (input, output) = (args.input.as_path(), args.output.as_path());
    let options = match options(args) {
        Ok(options) => options,
        Err(e) => return report::error(&e),
    };
    let size = std::fs::metadata(input).map(|m| m.len()).unwrap_or(0);
    let bar = crate::progress::bytes(size, "convert");
    let result = formats::convert_with(
        input,
        output,
        &mut |p| {
            if let Some(bar) = &bar {
                bar.set_position(p.bytes);
            }
        },
        &options,
    );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => report::error_as(&e, report::FAILURE),
    }
}

/// The conversion's options, or the usage error of the command line.
fn options(args: &Args) -> Result<FileOptions> {
    let (input, output) = (args.input.as_path(), args.output.as_path());
    let formats = (
        formats::Format::of(input).map_err(|e| e.reading(input))?,
        formats::Format::of(output).map_err(|e| e.writing(output))?,
    );
    if args.member.is_some() && formats.0 != formats::Format::Npz && formats.1 != formats::Format::Npz {
        let reason = "--member is for .npz archives, and neither file is one".to_string();
        return Err(npy_core::ErrorKind::Usage { reason }.into());
    }
    let mut convert = ConvertOptions::new();
    convert.residue(args.residue).days_as_int64(args.days_as_int64);
    if let Some(rows) = args.batch_rows {
        convert.batch_rows(usize::try_from(rows).unwrap_or(usize::MAX));
    }
    let mut options = FileOptions::new();
    options.read(&args.read.options()).convert(&convert);
    if let Some(m) = &args.member {
        options.member(m.clone());
    }
    let parquet_only = |flag: &str| -> Result<()> {
        if formats.1 != formats::Format::Parquet {
            let reason = format!("{flag} is for Parquet output, and '{}' is not a .parquet file", output.display());
            return Err(npy_core::ErrorKind::Usage { reason }.into());
        }
        Ok(())
    };
    if let Some(bytes) = args.row_group_bytes {
        parquet_only("--row-group-bytes")?;
        options.row_group_bytes(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
    if let Some(c) = args.compression {
        parquet_only("--compression")?;
        options.compression(match c {
            Compression::Snappy => ParquetCompression::Snappy,
            Compression::Zstd => ParquetCompression::Zstd,
            Compression::Lz4 => ParquetCompression::Lz4,
            Compression::Gzip => ParquetCompression::Gzip,
            Compression::None => ParquetCompression::None,
        });
    }
    Ok(options)
}
