//! `npy copy IN OUT`

use std::path::Path;

use npy_core::prelude::*;
use npy_core::{ReadOptions, Result};

/// Reads `input` through the dynamic API and writes it to `output`, keeping its version.
pub fn run(input: &Path, output: &Path, opts: &ReadOptions) -> Result<()> {
    let array = opts.open_path(input)?.read_dyn()?;
    array.write_npy(output)
}
