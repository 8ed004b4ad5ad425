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
    error_as(e, code(e))
}

/// Prints `e` as the tool reports errors and returns `code` as the exit code: for
/// commands that know better than the error's kind whether it is about the command line
/// (`npy sql`, `npy convert`: a library's [`ErrorKind::Usage`] about a table's columns is
/// about the data there).
pub fn error_as(e: &Error, code: u8) -> ExitCode {
    if matches!(e.kind(), ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe) {
        return ExitCode::SUCCESS;
    }
    eprintln!("error: {}", line(e));
    ExitCode::from(code)
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
    flags(&what).replace('\n', " ")
}

/// Hints the libraries word for Rust users (an option's API), and what the tool's users
/// do instead.
const HINTS: &[(&str, &str)] = &[
    ("(convert with ConvertOptions::days_as_int64)", "(rerun with --days-as-int64)"),
    ("ConvertOptions::residue keeps such text", "--residue keeps such text"),
    ("read the members one at a time (NpzBatchReader::open_members)", "convert one member at a time (--member NAME)"),
    ("Appender::recover adopts or trims them", "npy append --recover adopt|trim adopts or trims them"),
    ("(ReadOptions::max_object_bytes)", "(--max-object-bytes)"),
    ("raise the limit with ReadOptions::max_object_bytes", "raise the limit with --max-object-bytes"),
];

/// `text` with the libraries' Rust hints said in the tool's flags.
pub fn flags(text: &str) -> String {
    let mut text = text.to_string();
    for (rust, tool) in HINTS {
        if text.contains(rust) {
            text = text.replace(rust, tool);
        }
    }
    text
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

    #[test]
    fn rust_hints_are_said_in_flags() {
        let e = Error::from(ErrorKind::InvalidValue {
            index: 0,
            reason: "datetime64[D] value 1000000000000 is outside Arrow's Date32 range \
                     (convert with ConvertOptions::days_as_int64)"
                .into(),
        });
        assert!(line(&e).ends_with("Date32 range (rerun with --days-as-int64)"), "{}", line(&e));
        let reason = "3 bytes follow the data (an interrupted append?): Appender::recover adopts or trims them".into();
        let e = Error::from(ErrorKind::Usage { reason });
        assert!(line(&e).ends_with(": npy append --recover adopt|trim adopts or trims them"), "{}", line(&e));
        for (rust, tool) in HINTS {
            assert!(!tool.contains("::"), "{tool}");
            assert!(flags(&format!("x {rust} y")) == format!("x {tool} y"));
        }
    }
}
