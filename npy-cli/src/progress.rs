//! A progress bar on stderr for subcommands that work through large inputs (`npy copy`).
//!
//! The bar is drawn only when stderr is a terminal and the input is large; otherwise there
//! is no bar and nothing at all is written to stderr, so scripts and pipes see the same
//! output as without it.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs smaller than this (64 MiB) are done too fast for a bar to help.
pub const THRESHOLD: u64 = 64 << 20;

/// A bar counting bytes up to `total`, labelled `message`, when stderr is a terminal and
/// `total` is at least [`THRESHOLD`]; `None` otherwise.
///
/// The caller advances it (`inc`, or `wrap_read`/`wrap_write` around a stream) and ends
/// it with `finish_and_clear` on success and failure alike, so that an error message
/// starts on a clean line.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_inputs_get_no_bar() {
        assert!(bytes(THRESHOLD - 1, "copy").is_none());
        assert!(bytes(0, "copy").is_none());
    }
}
