//! The commands the Markdown files show, as CI runs them: their fenced blocks found by
//! language and content, and `sh` lines run as written from the checkout's root.

use std::ffi::OsStr;
use std::fs;
use std::process::Command;

use crate::project::{self, Result};

/// The text of the Markdown file `rel` (relative to the checkout's root).
pub fn read(rel: &str) -> Result<String> {
    fs::read_to_string(project::root().join(rel)).map_err(|e| format!("cannot read {rel}: {e}"))
}

/// The fenced code blocks of `markdown` whose info string is `lang` (```` ```sh ````), in
/// order: each block's text between its opening and closing fences, lines ending in `\n`.
/// Fences start a line (after spaces); a closing fence has no info string, so a ```` ```sh ````
/// line inside another block is its text; a block left open runs to the end of the text.
pub fn blocks<'a>(markdown: &'a str, lang: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut open: Option<(bool, usize)> = None;
    let mut at = 0;
    for line in markdown.split_inclusive('\n') {
        let fence = line.trim_start().strip_prefix("```").map(str::trim);
        match (open, fence) {
            (None, Some(info)) => open = Some((info == lang, at + line.len())),
            (Some((wanted, start)), Some("")) => {
                if wanted {
                    found.push(&markdown[start..at]);
                }
                open = None;
            }
            _ => {}
        }
        at += line.len();
    }
    if let Some((true, start)) = open {
        found.push(&markdown[start..]);
    }
    found
}

/// The first `lang` block of the Markdown file `rel` that `wanted` accepts.
///
/// # Errors
/// When the file cannot be read or has no such block (`what` says which was looked for).
pub fn block(rel: &str, lang: &str, what: &str, wanted: impl Fn(&str) -> bool) -> Result<String> {
    let text = read(rel)?;
    let found = blocks(&text, lang).into_iter().find(|block| wanted(block)).map(str::to_string);
    found.ok_or_else(|| format!("{rel} has no {lang} block of {what}"))
}

/// The commands of an `sh` block, as the shell reads them: its non-empty lines, each line
/// that ends in `\` joined with the next (backslash and newline kept, for the shell).
pub fn commands(block: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut pending = String::new();
    for line in block.lines() {
        pending.push_str(line);
        if line.ends_with('\\') {
            pending.push('\n');
        } else if !pending.trim().is_empty() {
            commands.push(std::mem::take(&mut pending));
        } else {
            pending.clear();
        }
    }
    if !pending.trim().is_empty() {
        commands.push(pending);
    }
    commands
}

/// Runs every command of `block` (from `rel`; see [`commands`]) as written, in order, each
/// in its own `bash -o pipefail -c` from the checkout's root with `path` as `PATH`; returns
/// how many ran.
///
/// # Errors
/// When a command fails or writes anything on stderr.
pub fn run_lines(rel: &str, block: &str, path: &OsStr) -> Result<usize> {
    let lines = commands(block);
    for line in &lines {
        project::step(line);
        let mut cmd = Command::new("bash");
        cmd.args(["-o", "pipefail", "-c", line]).current_dir(project::root()).env("PATH", path);
        let out = cmd.output().map_err(|e| format!("cannot run `{line}`: {e}"))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() || !stderr.is_empty() {
            return Err(format!("{rel} command `{line}`: {}; stderr: {}", out.status, stderr.trim_end()));
        }
    }
    println!("{} commands of {rel} ran as written", lines.len());
    Ok(lines.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_found_by_language_in_order() {
        let text = "# T\n```sh\nnpy info a\n```\ntext ```sh inline\n```text\nnpy no\n```\n\
                    ```python\nimport npy\n```\n```sh\n\nnpy check b\n```\n";
        assert_eq!(blocks(text, "sh"), ["npy info a\n", "\nnpy check b\n"]);
        assert_eq!(blocks(text, "python"), ["import npy\n"]);
        assert_eq!(blocks(text, "rust"), Vec::<&str>::new());
        // An empty block, and one left open at the end.
        assert_eq!(blocks("```sh\n```\n```sh\nls", "sh"), ["", "ls"]);
    }

    #[test]
    fn continued_lines_are_one_command() {
        let block = "npy info a\n\nnpy sql --table t=a \\\n    \"SELECT 1\"\nnpy check a \\\n";
        assert_eq!(commands(block), ["npy info a", "npy sql --table t=a \\\n    \"SELECT 1\"", "npy check a \\\n"]);
    }

    #[test]
    fn a_fence_inside_another_language_block_does_not_open_one() {
        let text = "```text\n```sh\n```\nnpy outside\n```sh\nnpy inside\n```\n";
        assert_eq!(blocks(text, "sh"), ["npy inside\n"]);
    }
}
