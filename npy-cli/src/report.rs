//! How the tool reports an error: the one place that turns an [`Error`] into what the user
//! reads and the exit code.
//!
//! - One line on stderr: `error: ` then where (`reading 'a.npz', member 'x.npy': `, the
//!   file as the user named it, never a temporary file) then what happened, in the tool's
//!   terms: a limit says which flag raises it, not which Rust API.
//! - Exit code 1 for an error about the data or the files ([`FAILURE`]), 2 for a usage
//!   error: a bad flag or argument, or a request the file cannot answer as asked, such
//!   as no `--member` for an archive of several ([`USAGE`]).
//! - A reader that stopped early (`npy dump f | head`) is not an error: exit 0, silent.

use std::process::ExitCode;

use npy_core::{Error, ErrorKind};

/// Exit code of an error about the data or the files.
pub const FAILURE: u8 = 1;
/// Exit code of a usage error (as clap's own usage errors).
pub const USAGE: u8 = 2;

/// Prints `e` as the tool reports errors and returns the exit code.
pub fn error(e: &Error) -> ExitCode {
    if matches!(e.kind(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe) {
        return ExitCode::SUCCESS;
    }
    eprintln!("error: {}", line(e));
    ExitCode::from(code(e))
}

/// The exit code for `e`.
pub fn code(e: &Error) -> u8 {
    match e.kind() {
        ErrorKind::Usage { .. } => USAGE,
        _ => FAILURE,
    }
}

/// `e` in one line, in the tool's terms (without the `error: ` label).
pub fn line(e: &Error) -> String {
    let full = e.to_string();
    // The library's text says where, then what; only the "what" is rephrased.
    let place = full.strip_suffix(e.kind().to_string().as_str()).unwrap_or("");
    format!("{place}{}", what(e)).replace('\n', " ")
}

/// What happened, in the tool's terms, without saying where (for reports that say it
/// their own way, as `npy check`'s).
pub fn what(e: &Error) -> String {
    let what = match e.kind() {
        ErrorKind::HeaderTooLarge { len, limit } => format!(
            "header is {len} bytes, over the limit of {limit} bytes (rerun with --max-header-size {})",
            len.next_multiple_of(1024)
        ),
        kind => kind.to_string(),
    };
    what.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_limit_is_said_in_flags() {
        let mut file = b"\x93NUMPY\x02\x00".to_vec();
        file.extend_from_slice(&20_000u32.to_le_bytes());
        let e = npy_core::ReadOptions::new().max_header_size(10_000).open(&file[..]).unwrap_err();
        let e = e.reading("wide.npy");
        assert_eq!(
            line(&e),
            "reading 'wide.npy': header is 20000 bytes, over the limit of 10000 bytes \
             (rerun with --max-header-size 20480)"
        );
        assert_eq!(code(&e), FAILURE);
    }
}
