//! `npy cat A B... -o OUT`: `.npy` files concatenated along their growth axis into a new
//! file, through `npy_core::append::concatenate`.

use std::path::PathBuf;

use npy_core::append::concatenate;
use npy_core::Result;

/// Concatenate .npy files along their first axis (the last in Fortran order) into a
/// new file, streaming, written atomically.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The files, in order: the same dtype and other dims.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The file to write.
    #[arg(short, long, value_name = "OUT.npy")]
    output: PathBuf,
}

/// Concatenates the inputs into the output (atomically, streamed), with a progress bar on
/// a terminal for large inputs.
pub fn run(args: &Args) -> Result<()> {
    let inputs = &args.inputs;
    let total: u64 = inputs.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    crate::progress::tracked(total, "cat", |progress| concatenate(inputs, &args.output, progress)).map(|_| ())
}
