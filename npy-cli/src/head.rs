//! `npy head FILE [-n N]`

use std::io::Write;
use std::path::Path;

use npy_core::{ReadOptions, Result};

use crate::records::{cells, for_each};

/// Prints the first `n` records as a table: one column per leaf field (`a.b`).
pub fn run(file: &Path, member: Option<&str>, n: usize, opts: &ReadOptions) -> Result<()> {
    let mut header: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for_each(
        file,
        member,
        opts,
        n.clamp(1, 4096),
        |_| {},
        |element| {
            let cols = cells(&element);
            if header.is_empty() {
                header = cols.iter().map(|(name, _)| name.clone()).collect();
            }
            rows.push(cols.into_iter().map(|(_, text)| text).collect());
            Ok(rows.len() < n)
        },
    )?;
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let idx_width = rows.len().saturating_sub(1).to_string().len().max(1);
    let mut out = std::io::stdout().lock();
    let line = |out: &mut std::io::StdoutLock<'_>, first: &str, cells: &[String]| -> std::io::Result<()> {
        write!(out, "{first:>idx_width$}")?;
        for (c, w) in cells.iter().zip(&widths) {
            write!(out, "  {c:>w$}")?;
        }
        writeln!(out)
    };
    line(&mut out, "#", &header)?;
    for (i, row) in rows.iter().enumerate() {
        line(&mut out, &i.to_string(), row)?;
    }
    Ok(())
}
