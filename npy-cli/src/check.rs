//! `npy check FILE...`: reads every byte of every array and member, as `gzip -t` and
//! `zip -T` do for theirs, and reports each problem found, going on to the next file.
//!
//! A problem is what makes NumPy (or this crate) refuse the file or read something else
//! than was written: a bad preamble or header, sizes that overflow, data shorter than the
//! header says, bytes after the data (NumPy ignores them), an archive whose directory and
//! local headers disagree, a bad CRC, a corrupt deflate stream, a member named `.npy` that
//! is not a `.npy` file, an object array whose pickle the restricted decoder refuses.
//!
//! Values NumPy itself writes and reads are warnings: `b1` bytes other than 0 and 1, `U`
//! code units that are not Unicode scalar values (`--strict` makes them problems).
//!
//! Bytes after the data of a `.npy` file may be an append's rows before its header counts
//! them. Then `check` tries the file's append lock (shared, without waiting; appenders
//! hold it exclusively for each append): held, the bytes are an append in progress, a
//! `note` line and not a problem; free, the file is checked again under it (the append
//! may just have finished), and bytes still there are an interrupted append's: a problem,
//! with the `npy append --recover adopt|trim` hint.
//!
//! Output: one line per finding on stdout (`FILE: [member 'M': ]problem: ...` or
//! `... warning: ...`), then `N files checked, M with problems`; nothing with `--quiet`.
//! Exit code 1 when a problem was found, else 0.
//!
//! Memory stays bounded: data is read in pieces of [`PIECE`] bytes (at least one element
//! when its values are checked); only object arrays are read whole (their pickle is
//! decoded).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use indicatif::ProgressBar;
use npy_core::dtype::DType;
use npy_core::npz::{self, MemberInfo, Reader, ReaderOptions};
use npy_core::scalar::{Invalid, ValueCheck};
use npy_core::{Error, ErrorKind, ReadOptions};

use crate::read_args::ReadArgs;

/// Bytes read per step.
const PIECE: usize = 4 << 20;

/// Read every byte of every array and member and report each problem; exit 1 if any.
///
/// Problems: headers and sizes, data shorter than the header says, bytes after the data,
/// an npz directory that disagrees with its local headers, bad CRCs and deflate data,
/// members named .npy that are not .npy files, pickles the restricted decoder refuses
/// (anything beyond NumPy's plain arrays). Warnings: b1 bytes other than 0 and 1, U
/// code units that are not Unicode scalar values (NumPy writes and reads them; --strict
/// makes them problems).
///
/// Bytes after a .npy file's data while another process appends to it (holds its
/// append lock, as `npy append` does) are an append in progress: a note, not a
/// problem; check does not wait for it. With the lock free the file is checked again
/// (the append may just have finished): bytes still there are an interrupted append's,
/// a problem (`npy append --recover adopt|trim` makes the file whole).
///
/// One line per finding on stdout (file, member, element and byte where known), then
/// `N files checked, M with problems`. Memory stays bounded whatever the file's size.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The .npy and .npz files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Count invalid b1 and U values as problems, not warnings.
    #[arg(long)]
    strict: bool,
    /// Print nothing; the exit code says whether a problem was found.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    read: ReadArgs,
}

/// Checks every file; exit code 1 when any holds a problem.
pub fn run(args: &Args) -> ExitCode {
    let read = &args.read.options();
    let mut report = Report::new(args.strict, args.quiet);
    for file in &args.files {
        report.start(file);
        if let Err(e) = check_file(file, read, &mut report) {
            report.problem(None, &e);
        }
        report.end();
    }
    report.summary();
    match report.output_failed.take() {
        Some(e) => crate::report::text(&format!("writing the report to stdout: {e}"), crate::report::FAILURE),
        None if report.files_with_problems > 0 => ExitCode::from(1),
        None => ExitCode::SUCCESS,
    }
}

/// Checks one file, an archive or a `.npy` file; findings go to `report`, the error
/// returned is a problem that stopped the check of the file.
fn check_file(path: &Path, read: &ReadOptions, report: &mut Report) -> Result<(), Error> {
    if npz::is_npz(path)? {
        check_npz(path, read, report)
    } else {
        check_npy(path, read, report)
    }
}

fn check_npy(path: &Path, read: &ReadOptions, report: &mut Report) -> Result<(), Error> {
    let Some(mut scanned) = scan_npy(path, read)? else { return Ok(()) };
    if scanned.after > 0 {
        // Bytes after the data: an append in progress, one that just finished, or one
        // that was interrupted. The append lock says which.
        match under_lock(path, || scan_npy(path, read))? {
            Locked::Held => {
                if let Some(invalid) = &scanned.invalid {
                    report.invalid(None, invalid, &scanned.dtype, scanned.start);
                }
                report.note(&format!(
                    "an append is in progress (another process holds the append lock): {} bytes after the \
                     array's data are rows it has not counted yet; the array was checked as its header says",
                    scanned.after
                ));
                return Ok(());
            }
            Locked::Free(None) => return Ok(()),
            Locked::Free(Some(again)) => scanned = again,
            Locked::Unknown => {}
        }
    }
    if let Some(invalid) = &scanned.invalid {
        report.invalid(None, invalid, &scanned.dtype, scanned.start);
    }
    if scanned.after > 0 {
        report.trailing(None, scanned.after, true);
    }
    Ok(())
}

/// What a scan of a `.npy` file found: its invalid values and the bytes after its data.
struct Scanned {
    dtype: DType,
    /// Where the data starts.
    start: u64,
    invalid: Option<Invalid>,
    after: u64,
}

/// Reads a `.npy` file through; `None` for an object array, whose pickle is checked whole
/// (bytes after its STOP are an error).
fn scan_npy(path: &Path, read: &ReadOptions) -> Result<Option<Scanned>, Error> {
    let reader = npy_core::NpyReader::from_path_with(path, read)?;
    if reader.header().dtype.has_object() {
        reader.read::<npy_core::Array<npy_core::Object>>()?;
        return Ok(None);
    }
    let len = std::fs::metadata(path).map_err(|e| Error::from(e).reading(path))?.len();
    let bar = crate::progress::bytes(len, "check");
    let dtype = reader.header().dtype.clone();
    let (start, data_len) = (reader.data_offset() as u64, reader.data_len() as u64);
    let mut src = crate::progress::counted(bar.as_ref(), reader.into_inner());
    let scanned = scan(&mut src, &dtype, data_len).map_err(|e| e.reading(path));
    let after = scanned.and_then(|invalid| {
        let after = io::copy(&mut src, &mut io::sink()).map_err(|e| Error::from(e).reading(path))?;
        Ok((invalid, after))
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let (invalid, after) = after?;
    Ok(Some(Scanned { dtype, start, invalid, after }))
}

/// What the append lock of a file said ([`under_lock`]).
enum Locked<T> {
    /// An appender holds it: an append is in progress.
    Held,
    /// It was free: what the closure found under it (no appender could start meanwhile).
    Free(T),
    /// The file system cannot say (no advisory locks).
    Unknown,
}

/// Runs `f` under a shared append lock on `path`, taken without waiting (appenders hold
/// it exclusively, per append: `npy_core::append`); [`Locked::Held`] if an appender holds
/// it. The lock is on the file the path names when `f` runs (taken again if a rewrite
/// replaced the file meanwhile).
fn under_lock<T>(path: &Path, f: impl FnOnce() -> Result<T, Error>) -> Result<Locked<T>, Error> {
    let mut tries = 0;
    let file = loop {
        let file = std::fs::File::open(path).map_err(|e| Error::from(e).reading(path))?;
        match file.try_lock_shared() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(Locked::Held),
            Err(std::fs::TryLockError::Error(_)) => return Ok(Locked::Unknown),
        }
        tries += 1;
        if npy_core::names_file(path, &file, true).map_err(|e| Error::from(e).reading(path))? || tries == 3 {
            break file;
        }
    };
    let found = f();
    let _ = file.unlock();
    found.map(Locked::Free)
}

fn check_npz(path: &Path, read: &ReadOptions, report: &mut Report) -> Result<(), Error> {
    let mut reader = npy_core::npz::Reader::from_path_with(path, ReaderOptions::new().read_options(read))?;
    let members = reader.members().to_vec();
    let bar = crate::progress::bytes(members.iter().map(|m| m.size).sum(), "check");
    let mut done = 0;
    for m in &members {
        check_member(&mut reader, m, bar.as_ref(), report);
        done += m.size;
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(())
}

type FileReader = io::BufReader<std::fs::File>;

/// Checks one member of an archive, reading it to its end (which checks its CRC).
fn check_member(reader: &mut Reader<FileReader>, m: &MemberInfo, bar: Option<&ProgressBar>, report: &mut Report) {
    let member = Some(m.member.as_str());
    // The part index, which npy's whole reads use and the streamed reads below do not.
    if let Err(e) = reader.check_part_index(&m.name) {
        return report.problem(member, &e);
    }
    if !m.member.ends_with(".npy") {
        if let Err(e) = read_through(reader, m, bar) {
            report.problem(member, &e);
        }
        return;
    }
    match reader.is_npy(&m.name) {
        Ok(true) => {}
        Ok(false) => {
            report.finding(member, true, "named .npy but not a .npy file (it does not start with NumPy's magic)");
            if let Err(e) = read_through(reader, m, bar) {
                report.problem(member, &e);
            }
            return;
        }
        Err(e) => return report.problem(member, &e),
    }
    let object = match reader.npy(&m.name).map(|npy| npy.header().dtype.has_object()) {
        Ok(object) => object,
        Err(e) => {
            report.problem(member, &e);
            // A bad header may come from bad data: the CRC says.
            if let Err(e) = read_through(reader, m, bar) {
                report.problem(member, &e);
            }
            return;
        }
    };
    if object {
        if let Err(e) = reader.read::<npy_core::Array<npy_core::Object>>(&m.name) {
            report.problem(member, &e);
        }
        return;
    }
    let npy = match reader.npy(&m.name) {
        Ok(npy) => npy,
        Err(e) => return report.problem(member, &e),
    };
    let dtype = npy.header().dtype.clone();
    let (start, data_len) = (npy.data_offset() as u64, npy.data_len() as u64);
    let mut src = crate::progress::counted(bar, npy.into_inner());
    let checked = scan(&mut src, &dtype, data_len)
        .and_then(|invalid| Ok((invalid, io::copy(&mut src, &mut io::sink()).map_err(Error::from)?)));
    match checked {
        Ok((invalid, after)) => {
            if let Some(invalid) = invalid {
                report.invalid(member, &invalid, &dtype, start);
            }
            if after > 0 {
                report.trailing(member, after, false);
            }
        }
        Err(e) => report.problem(member, &e),
    }
}

/// Reads member `m` to its end as bytes (checking its size and CRC).
fn read_through(reader: &mut Reader<FileReader>, m: &MemberInfo, bar: Option<&ProgressBar>) -> Result<u64, Error> {
    let src = reader.raw(&m.name)?;
    Ok(io::copy(&mut crate::progress::counted(bar, src), &mut io::sink())?)
}

/// Reads `len` data bytes of elements of `dtype` from `src` in pieces, checking their
/// values when the dtype holds `b1` or `U` values: the first invalid value and how many
/// elements hold one, if any.
///
/// # Errors
/// [`ErrorKind::Truncated`] when `src` ends early; errors of `src`.
fn scan(src: &mut impl Read, dtype: &DType, len: u64) -> Result<Option<Invalid>, Error> {
    let check = ValueCheck::new(dtype);
    // Whole elements per piece when values are checked (one, if larger than a piece).
    let piece = match &check {
        Some(c) => (PIECE / c.itemsize()).max(1) * c.itemsize(),
        None => PIECE,
    };
    let mut buf = vec![0u8; (piece as u64).min(len) as usize];
    let mut found: Option<Invalid> = None;
    let (mut done, mut element) = (0u64, 0u64);
    while done < len {
        let want = (len - done).min(buf.len() as u64) as usize;
        let got = read_full(src, &mut buf[..want])?;
        if got < want {
            return Err(ErrorKind::Truncated { expected: len, found: done + got as u64 }.into());
        }
        if let Some(check) = &check {
            if let Some(invalid) = check.check(&buf[..want], element) {
                match &mut found {
                    Some(first) => first.elements += invalid.elements,
                    None => found = Some(invalid),
                }
            }
            element += (want / check.itemsize()) as u64;
        }
        done += want as u64;
    }
    Ok(found)
}

/// Fills `buf` from `src` as far as it goes: fewer bytes only at its end.
fn read_full(src: &mut impl Read, buf: &mut [u8]) -> Result<usize, Error> {
    let mut got = 0;
    while got < buf.len() {
        match src.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(got)
}

/// The findings of the files checked so far, and where they are printed.
struct Report {
    /// `--strict`: invalid `b1` and `U` values are problems, not warnings.
    strict: bool,
    /// `--quiet` (or stdout closed): print nothing.
    quiet: bool,
    out: io::StdoutLock<'static>,
    /// The file being checked, and whether it has a problem / a warning so far.
    file: PathBuf,
    problem: bool,
    warning: bool,
    files: usize,
    files_with_problems: usize,
    files_with_warnings: usize,
    /// The first error writing to stdout (not a closed pipe: then printing stops and
    /// checking goes on, for the exit code).
    output_failed: Option<io::Error>,
}

impl Report {
    fn new(strict: bool, quiet: bool) -> Report {
        Report {
            strict,
            quiet,
            out: io::stdout().lock(),
            file: PathBuf::new(),
            problem: false,
            warning: false,
            files: 0,
            files_with_problems: 0,
            files_with_warnings: 0,
            output_failed: None,
        }
    }

    fn start(&mut self, file: &Path) {
        self.file = file.to_path_buf();
        (self.problem, self.warning) = (false, false);
    }

    fn end(&mut self) {
        self.files += 1;
        self.files_with_problems += usize::from(self.problem);
        self.files_with_warnings += usize::from(self.warning && !self.problem);
    }

    /// A finding in the current file (and `member`): a problem, or a warning.
    fn finding(&mut self, member: Option<&str>, problem: bool, what: &str) {
        if problem {
            self.problem = true;
        } else {
            self.warning = true;
        }
        let member = member.map(|m| format!("member '{m}': ")).unwrap_or_default();
        let severity = if problem { "problem" } else { "warning" };
        let line = format!("{}: {member}{severity}: {what}", self.file.display());
        self.print(&line);
    }

    /// An error of this crate as a problem: what it says, without the file (the line
    /// names it) and the member (named when `member` is given).
    fn problem(&mut self, member: Option<&str>, e: &Error) {
        let what = match e.kind() {
            ErrorKind::Npz { reason, member: Some(_), .. } => reason.clone(),
            _ => crate::report::what(e),
        };
        self.finding(member.or(e.member()), true, &what);
    }

    /// Invalid values of `dtype` whose data starts at byte `start` of the file or member.
    fn invalid(&mut self, member: Option<&str>, found: &Invalid, dtype: &DType, start: u64) {
        let byte = start + found.element * dtype.itemsize() as u64 + found.offset as u64;
        let of = if member.is_some() { "member" } else { "file" };
        let mut what = format!("invalid value at element {} (byte {byte} of the {of}): {}", found.element, found.error);
        if found.elements > 1 {
            what += &format!("; {} elements hold invalid values", found.elements);
        }
        if !self.strict {
            what += " (NumPy reads them as they are; --strict counts them as problems)";
        }
        self.finding(member, self.strict, &what);
    }

    /// `n` bytes after the data of a `.npy` file or member; `appendable` for a `.npy`
    /// file, whose tail may be an interrupted append's.
    fn trailing(&mut self, member: Option<&str>, n: u64, appendable: bool) {
        let s = if n == 1 { "" } else { "s" };
        let mut what = format!("{n} byte{s} after the array's data (NumPy ignores them)");
        if appendable {
            what += "; if an append was interrupted, npy append --recover adopt|trim adopts or trims them";
        }
        self.finding(member, true, &what);
    }

    /// A note on the current file: neither a problem nor a warning.
    fn note(&mut self, what: &str) {
        let line = format!("{}: note: {what}", self.file.display());
        self.print(&line);
    }

    fn summary(&mut self) {
        let s = if self.files == 1 { "" } else { "s" };
        let warned = match self.files_with_warnings {
            0 => String::new(),
            n => format!(", {n} with warnings only"),
        };
        let line = format!("{} file{s} checked, {} with problems{warned}", self.files, self.files_with_problems);
        self.print(&line);
    }

    fn print(&mut self, line: &str) {
        if self.quiet || self.output_failed.is_some() {
            return;
        }
        match writeln!(self.out, "{line}") {
            Ok(()) => {}
            // The reader stopped (`npy check * | head`): stop printing, keep checking.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => self.quiet = true,
            Err(e) => self.output_failed = Some(e),
        }
    }
}
