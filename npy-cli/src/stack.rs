//! `npy stack split FILE DIR --rows N [--axis K]` and `npy stack join DIR OUT.npy`: Dask npy
//! stacks (`da.to_npy_stack` / `da.from_npy_stack` directories), through `npy_core::stack`.

use std::path::Path;

use npy_core::header::shape_repr;
use npy_core::stack::{split, Stack};
use npy_core::Result;

/// Splits `input` into a stack in `dir` of `rows` along `axis`, with a progress bar on a
/// terminal for large inputs; prints the blocks written.
pub fn split_file(input: &Path, dir: &Path, rows: usize, axis: usize) -> Result<()> {
    let total = std::fs::metadata(input).map(|m| m.len()).unwrap_or(0);
    let info = crate::progress::tracked(total, "split", |progress| split(input, dir, axis, rows, progress))?;
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

/// Joins the stack in `dir` (with or without `info`; `axis` for a stack without one whose
/// blocks are all alike) into `output`, atomically and streamed.
pub fn join(dir: &Path, output: &Path, axis: Option<usize>) -> Result<()> {
    let stack = match axis {
        Some(a) => Stack::from_path_along(dir, a)?,
        None => Stack::from_path(dir)?,
    };
    let total: u64 =
        (0..stack.len()).filter_map(|i| std::fs::metadata(stack.block_path(i)).ok()).map(|m| m.len()).sum();
    crate::progress::tracked(total, "join", |progress| stack.join(output, progress)).map(|_| ())
}
