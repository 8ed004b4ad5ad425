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
    text(&line(e), code)
}

/// Prints `text`, one line already in the tool's terms, as the tool reports errors, and
/// returns `code` as the exit code: for errors that are not an [`Error`] (DataFusion's,
/// a write to stdout that failed, a feature this build lacks).
pub fn text(text: &str, code: u8) -> ExitCode {
    eprintln!("error: {}", text.replace('\n', " "));
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
    ("read the members one at a time (NpzTableOptions::members)", "convert one member at a time (--member NAME)"),
    ("Appender::recover adopts or trims them", "npy append --recover adopt|trim adopts or trims them"),
    ("trim the tail instead (Recovery::Trim)", "trim the tail instead (npy append --recover trim)"),
    ("(raise it with ReaderOptions::max_entries)", "(a limit of npy's npz reader)"),
    (
        "read it with Array::<Object>::read_npy or NpyReader::read::<Array<Object>> (npy_core::object)",
        "npy dump, head and check read it",
    ),
    ("(raise it with ReaderOptions::max_inflated_size)", "(a limit of npy's npz reader)"),
    ("(ReadOptions::max_object_bytes)", "(--max-object-bytes)"),
    ("raise the limit with ReadOptions::max_object_bytes", "raise the limit with --max-object-bytes"),
    ("(NpyReadOptions::map_local_files with MapContract::accept)", "(npy sql --map-local-files makes it)"),
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
        let e = npy_core::NpyReader::from_reader_with(&file[..], npy_core::ReadOptions::new().max_header_size(10_000))
            .unwrap_err();
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

    /// Rust paths in the libraries' messages that never reach a user of the tool, and why.
    const NOT_FOR_THE_TOOL: &[(&str, &str)] = &[
        ("ReadOptions::max_header_size", "`what` words HeaderTooLarge itself, with --max-header-size"),
        ("Reader::read", "read_1d's hint, for Rust callers reading a 1-D array: the tool reads arrays whole"),
        ("Reader::read_all", "read_1d's hint, as Reader::read"),
        ("MemberWriter::finish", "the tool writes members whole, never through MemberWriter"),
        ("BatchReader::from_map", "mapped_array's hint: the tool never calls mapped_array"),
    ];

    /// The string literals of a Rust source file outside comments and its `mod tests`:
    /// (line, text as written, escapes and all).
    fn literals(source: &str) -> Vec<(usize, String)> {
        let source = source.split("#[cfg(test)]\nmod tests").next().unwrap_or(source);
        let b = source.as_bytes();
        let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
        while i < b.len() {
            match b[i] {
                b'\n' => line += 1,
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                // A char literal ('"', '\'', 'x'), not a lifetime.
                b'\'' if b.get(i + 1) == Some(&b'\\') => {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                }
                b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
                b'"' => {
                    let (start, at) = (i + 1, line);
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                        line += usize::from(b[i - 1] == b'\n');
                    }
                    out.push((at, continued(&source[start..i.min(b.len())])));
                }
                _ => {}
            }
            i += 1;
        }
        out
    }

    /// A literal's text with its line continuations (`\` at the end of a line, then the
    /// next line's indentation) taken out, as Rust takes them out.
    fn continued(text: &str) -> String {
        let mut parts = text.split("\\\n");
        let mut out = parts.next().unwrap_or("").to_string();
        parts.for_each(|p| out.push_str(p.trim_start()));
        out
    }

    /// `Type::item` paths in `text` (an upper-case type, a lower-case item).
    fn rust_paths(text: &str) -> Vec<String> {
        let mut found = Vec::new();
        for (at, _) in text.match_indices("::") {
            let before = text[..at].rsplit(|c: char| !c.is_ascii_alphanumeric() && c != '_').next().unwrap_or("");
            let after = text[at + 2..].split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next().unwrap_or("");
            if before.starts_with(|c: char| c.is_ascii_uppercase())
                && after.starts_with(|c: char| c.is_ascii_lowercase())
            {
                found.push(format!("{before}::{after}"));
            }
        }
        found
    }

    #[test]
    fn the_literals_of_a_source_are_found() {
        let source = "let c = '\"'; // \"Not::this\"\nfoo(\"a Read::read_to_end\", 'x', \"b\\\"Ok::ok\\\" \\\n c\");";
        let found = literals(source);
        assert_eq!(found, [(2, "a Read::read_to_end".to_string()), (2, "b\\\"Ok::ok\\\" c".to_string())]);
        assert_eq!(rust_paths(&found[0].1), ["Read::read_to_end"]);
        assert_eq!(rust_paths("npz::Reader::read and std::mem, Vec::<u8>::new"), ["Reader::read"]);
    }

    /// Every Rust path in a message of the libraries the tool runs (`Type::method`, as
    /// hints name options) is said in flags by [`HINTS`], or is in [`NOT_FOR_THE_TOOL`]
    /// with the reason the tool's users never see it.
    #[test]
    fn every_rust_hint_of_the_libraries_is_said_in_flags() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut unsaid = Vec::new();
        let mut dirs: Vec<_> =
            ["npy-core/src", "npy-arrow/src", "npy-datafusion/src", "npy-store/src"].map(|d| root.join(d)).into();
        let mut files = 0;
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                files += 1;
                for (line, text) in literals(&std::fs::read_to_string(&path).unwrap()) {
                    for rust in rust_paths(&text) {
                        let said = HINTS.iter().any(|(hint, _)| hint.contains(&rust) && text.contains(hint));
                        if !said && !NOT_FOR_THE_TOOL.iter().any(|(r, _)| *r == rust) {
                            unsaid.push(format!("{}:{line}: {rust} in {text:?}", path.display()));
                        }
                    }
                }
            }
        }
        assert!(files > 50, "{files} source files found");
        assert!(
            unsaid.is_empty(),
            "Rust hints the tool does not say in flags (add them to HINTS):\n{}",
            unsaid.join("\n")
        );
    }
}
