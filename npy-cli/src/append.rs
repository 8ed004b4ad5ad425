//! `npy append TARGET MORE...`: growing a `.npy` file in place along its growth axis,
//! through `npy_core::append`.

use std::path::PathBuf;

use clap::ValueEnum;
use npy_core::append::{Appender, Recovery};
use npy_core::Result;

use crate::read_args::ReadArgs;

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
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The .npy file to grow.
    target: PathBuf,
    /// Files of the same dtype and other dims whose rows are appended, in order.
    more: Vec<PathBuf>,
    /// First make a file whose last append was interrupted whole: adopt the tail's
    /// whole rows, or trim the tail.
    #[arg(long, value_enum)]
    recover: Option<Recover>,
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
}

/// What `--recover` does with the tail of an interrupted append.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Recover {
    /// Its whole rows join the array.
    Adopt,
    /// It is cut off.
    Trim,
}

/// Appends the data of the `MORE` files to `TARGET` in place, in order, each synced before
/// the header counts it, each under the target's lock; first recovers an interrupted
/// append's tail when asked. Prints nothing; the error names the file at fault.
pub fn run(args: &Args) -> Result<()> {
    let mut appender = Appender::from_path_with(&args.target, &args.read.options())?;
    appender.in_place_only(args.in_place).wait(!args.no_wait);
    if let Some(r) = args.recover {
        let recovery = match r {
            Recover::Adopt => Recovery::Adopt,
            Recover::Trim => Recovery::Trim,
        };
        appender.recover_tail(recovery)?;
    }
    for file in &args.more {
        appender.append_file(file)?;
    }
    Ok(())
}
