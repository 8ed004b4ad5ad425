//! `npy copy IN OUT`

use std::path::Path;

use npy_core::prelude::*;
use npy_core::{ReadOptions, Result};

/// Reads `input` through the dynamic API and writes it to `output`, keeping its version
/// (an `.npz` member by member).
pub fn run(input: &Path, output: &Path, opts: &ReadOptions) -> Result<()> {
    if crate::npz::is_npz(input)? {
        return crate::npz::copy(input, output, opts);
    }
    let array = opts.open_path(input)?.read_dyn()?;
    array.write_npy(output)
}
