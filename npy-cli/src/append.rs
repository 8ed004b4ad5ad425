//! `npy append TARGET MORE...` and `npy cat A B... -o OUT`: growing `.npy` files along their
//! growth axis, through `npy_core::append`.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use npy_core::append::{concatenate, Appender, Recovery};
use npy_core::{ReadOptions, Result};

/// What `--recover` does with the tail of an interrupted append.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Recover {
    /// Its whole rows join the array.
    Adopt,
    /// It is cut off.
    Trim,
}

/// How `npy append` appends: the flags.
#[derive(Debug, Clone, Copy)]
pub struct How {
    /// Recover an interrupted append's tail first.
    pub recover: Option<Recover>,
    /// Fail instead of rewriting a header without room.
    pub in_place: bool,
    /// Wait for another appender's lock (else fail at once).
    pub wait: bool,
}

/// Appends the data of `more` to `target` in place, in order, each synced before the
/// header counts it, each under the target's lock; first recovers an interrupted append's
/// tail when asked. Prints nothing; the error names the file at fault.
pub fn append(target: &Path, more: &[PathBuf], how: How, read: &ReadOptions) -> Result<()> {
    let mut appender = Appender::from_path_with(target, read)?;
    appender.in_place_only(how.in_place).wait(how.wait);
    if let Some(r) = how.recover {
        let recovery = match r {
            Recover::Adopt => Recovery::Adopt,
            Recover::Trim => Recovery::Trim,
        };
        appender.recover_tail(recovery)?;
    }
    for file in more {
        appender.append_file(file)?;
    }
    Ok(())
}

/// Concatenates `inputs` into `output` (atomically, streamed), with a progress bar on a
/// terminal for large inputs.
pub fn cat(inputs: &[PathBuf], output: &Path) -> Result<()> {
    let total: u64 = inputs.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    crate::progress::tracked(total, "cat", |progress| concatenate(inputs, output, progress)).map(|_| ())
}
