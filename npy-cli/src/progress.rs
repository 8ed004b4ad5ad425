//! Progress on stderr: the one helper every subcommand that works through large inputs
//! uses (`copy`, `check`, `dump`, and those to come: `convert`, `cat`, `stack`, ...).
//!
//! The convention:
//! - **a terminal only**: a bar is drawn only when stderr is a terminal and the input is
//!   large ([`THRESHOLD`]); otherwise there is no bar and nothing at all is written to
//!   stderr for progress, so scripts, pipes and CI see the same output as without it;
//! - **bytes**: the bar counts bytes of input (an npz member's bytes as they inflate), and
//!   moves as they are read ([`Counted`] around the reader, or `inc`), never by a whole
//!   member or file at once;
//! - **cleared**: the caller ends it with `finish_and_clear` on success and on failure
//!   alike, before printing anything, so messages start on a clean line and no bar is left
//!   behind.
//!
//! [`bytes`] makes the bar (`None` when none is to be shown); [`counted`] wraps a reader
//! so that reading advances it; [`tracked`] runs a call that reports progress to a callback.

use std::io::{self, IsTerminal, Read};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs smaller than this (64 MiB) are done too fast for a bar to help.
pub const THRESHOLD: u64 = 64 << 20;

/// A bar counting bytes up to `total`, labelled `message`, when stderr is a terminal and
/// `total` is at least [`THRESHOLD`]; `None` otherwise.
///
/// The caller advances it (`inc`, [`counted`]) and ends it with `finish_and_clear` on
/// success and failure alike, so that an error message starts on a clean line.
pub fn bytes(total: u64, message: &str) -> Option<ProgressBar> {
    if total < THRESHOLD || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{msg} [{wide_bar}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {eta}",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(message.to_string());
    Some(bar)
}

/// Runs `work` with a bar of [`bytes`]`(total, message)` that `work` moves by calling its
/// argument with the bytes done so far, and clears the bar when `work` returns, on success
/// and failure alike: for library calls that report progress through a callback.
pub fn tracked<T>(total: u64, message: &str, work: impl FnOnce(&mut dyn FnMut(u64)) -> T) -> T {
    let bar = bytes(total, message);
    let result = work(&mut |done| {
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}

/// `inner`, advancing `bar` (if any) by every byte read through it.
pub fn counted<R: Read>(bar: Option<&ProgressBar>, inner: R) -> Counted<'_, R> {
    Counted { inner, bar }
}

/// A reader that advances a bar by the bytes read through it ([`counted`]).
#[derive(Debug)]
pub struct Counted<'a, R> {
    inner: R,
    bar: Option<&'a ProgressBar>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = self.bar {
            bar.inc(n as u64);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracked_work_gives_its_result_and_may_report() {
        let got = tracked(10, "cat", |progress| {
            progress(4);
            progress(10);
            Err::<(), _>("failed")
        });
        assert_eq!(got, Err("failed"));
    }

    #[test]
    fn small_inputs_get_no_bar() {
        assert!(bytes(THRESHOLD - 1, "copy").is_none());
        assert!(bytes(0, "copy").is_none());
    }

    #[test]
    fn counted_readers_advance_the_bar_by_the_bytes_read() {
        let bar = ProgressBar::hidden();
        bar.set_length(10);
        let mut out = Vec::new();
        counted(Some(&bar), &b"0123456789"[..]).read_to_end(&mut out).unwrap();
        assert_eq!((out.len(), bar.position()), (10, 10));
        let mut out = Vec::new();
        counted(None, &b"abc"[..]).read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abc");
    }
}
