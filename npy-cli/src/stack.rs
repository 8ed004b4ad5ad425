//! `npy stack split FILE DIR --rows N [--axis K]` and `npy stack join DIR OUT.npy`: Dask npy
//! stacks (`da.to_npy_stack` / `da.from_npy_stack` directories), through `npy_core::stack`.

use std::path::PathBuf;

use npy_core::header::shape_repr;
use npy_core::stack::{split_with, Stack, StackOptions};
use npy_core::Result;

/// Dask npy stacks (directories of 0.npy, 1.npy, ... and an `info` pickle, as
/// `dask.array.to_npy_stack` writes them and `from_npy_stack` reads them).
#[derive(Debug, clap::Subcommand)]
pub enum Args {
    /// Split a .npy file into a Dask npy stack: blocks of N along an axis (the last one
    /// shorter) and the `info` pickle, streamed; the directory appears whole or not at all.
    /// A killed split leaves a hidden `.DIR.npy-stack.XXXXXX` beside DIR: the next split
    /// into the same parent directory removes it (never one a running split still writes).
    Split(SplitArgs),
    /// Join a Dask npy stack into one .npy file, streamed, written atomically. The `info`
    /// pickle is decoded without running anything in it; a stack without `info` is read
    /// from its blocks' headers.
    Join(JoinArgs),
}

/// `npy stack split`.
#[derive(Debug, clap::Args)]
pub struct SplitArgs {
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
}

/// `npy stack join`.
#[derive(Debug, clap::Args)]
pub struct JoinArgs {
    /// The stack's directory.
    dir: PathBuf,
    /// The file to write.
    output: PathBuf,
    /// The stacking axis of a stack without `info` whose blocks all have one shape (by
    /// default the one axis their lengths differ on, else the first).
    #[arg(long, value_name = "K")]
    axis: Option<usize>,
}

/// Runs `npy stack split` or `npy stack join`.
pub fn run(args: &Args) -> Result<()> {
    match args {
        Args::Split(args) => split_file(args),
        Args::Join(args) => join(args),
    }
}

/// Splits the file into a stack in the directory, `--rows` along `--axis`, with a
/// progress bar on a terminal for large inputs; prints the blocks written.
fn split_file(args: &SplitArgs) -> Result<()> {
    let (dir, rows) = (&args.dir, args.rows);
    let total = std::fs::metadata(&args.file).map(|m| m.len()).unwrap_or(0);
    let options = StackOptions::new().axis(args.axis).block_len(rows).clone();
    let info = crate::progress::tracked(total, "split", |progress| split_with(&args.file, dir, progress, &options))?;
    let lens = &info.chunks[info.axis];
    println!(
        "{}: {} block{} of up to {rows} along axis {} of {}",
        dir.display(),
        lens.len(),
        if lens.len() == 1 { "" } else { "s" },
        info.axis,
        shape_repr(&info.shape())
    );
    Ok(())
}

/// Joins the stack in the directory (with or without `info`; `--axis` for a stack without
/// one whose blocks are all alike) into the output, atomically and streamed.
fn join(args: &JoinArgs) -> Result<()> {
    let mut options = StackOptions::new();
    if let Some(axis) = args.axis {
        options.axis(axis);
    }
    let stack = Stack::from_path_with(&args.dir, &options)?;
    let total: u64 =
        (0..stack.len()).filter_map(|i| std::fs::metadata(stack.block_path(i)).ok()).map(|m| m.len()).sum();
    crate::progress::tracked(total, "join", |progress| stack.join(&args.output, progress)).map(|_| ())
}
