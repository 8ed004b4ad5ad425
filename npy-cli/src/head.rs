//! `npy head FILE [-n N] [--member NAME]`
//!
//! The first rows of an array as a table, rows as `npy dump` gives them: a 1-D array's
//! elements, an N-d array's items of the first axis (a `(4, 3)` array shows 4 rows of
//! 3 columns), a 0-d array's one value. Each cell is NumPy's `str()` of one value, as
//! in `npy dump --format csv`; columns are named as CSV names them.

use std::io::Write;
use std::path::PathBuf;

use npy_core::Result;

use crate::read_args::ReadArgs;
use crate::records::{self, At, Element, RowShape, Sink};
use crate::render;

/// The long help of `npy head`.
pub const HELP: &str = "\
Show the first rows of an array as a table.

Rows are NumPy's arr.tolist() items, as npy dump writes them: a 1-D array's elements,
an N-d array's items of its first axis (a (4, 3) array shows 4 rows of 3 columns, in C
order whatever the file's order), a 0-d array's one value. Each cell is NumPy's str() of
one value (True, 0.004, b'LINE-001', 2020-01-01, 5 seconds, nan); columns are named
a.b for nested fields, samples[3] for subarray items, [j] and [j].field for the items
of an N-d array's rows, value for a plain 1-D array. Reading stops after the rows shown.
A row of more than 1,000 cells shows its first elements that fit in 1,000 (at least one),
then a column … for the rest (npy dump writes them all).";

/// Show the first rows as a table: an N-d array's rows as rows, each value as NumPy
/// prints it, nested fields as `a.b`.
#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// The .npy or .npz file.
    file: PathBuf,
    /// How many rows.
    #[arg(short = 'n', default_value_t = 10)]
    n: usize,
    /// The member of an .npz to show.
    #[arg(long)]
    member: Option<String>,
    #[command(flatten)]
    read: ReadArgs,
}

/// Most cells of a row shown (the elements past them are skipped, not read into memory).
const MAX_CELLS: usize = 1000;

/// Prints the first `-n` rows of the file (or of `--member` of an `.npz`) as a table.
///
/// # Errors
/// As [`records::read_with`].
pub fn run(args: &Args) -> Result<()> {
    let n = args.n;
    let mut table = Table { n, layout: None, header: Vec::new(), rows: Vec::new(), row: None, shown: usize::MAX };
    if n > 0 {
        records::read_with(&args.file, args.member.as_deref(), None, &mut table, &args.read.options())?;
    }
    let Table { header, rows, .. } = table;
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let idx_width = rows.len().saturating_sub(1).to_string().len().max(1);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let line = |out: &mut dyn Write, first: &str, cells: &[String]| -> std::io::Result<()> {
        let mut text = String::new();
        render::push_padded(&mut text, first, idx_width, true);
        for (c, &w) in cells.iter().zip(&widths) {
            text.push_str("  ");
            render::push_padded(&mut text, c, w, true);
        }
        writeln!(out, "{text}")
    };
    line(&mut out, "#", &header)?;
    for (i, row) in rows.iter().enumerate() {
        line(&mut out, &i.to_string(), row)?;
    }
    out.flush()?;
    Ok(())
}

/// The first `n` rows' cells, and the column names.
struct Table {
    n: usize,
    layout: Option<RowShape>,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// The cells of the row being read.
    row: Option<Vec<String>>,
    /// Elements of each row shown; a column `…` stands for the rest.
    shown: usize,
}

impl Sink for Table {
    fn begin(&mut self, layout: &RowShape) -> Result<()> {
        let cells = layout.dtype.as_ref().map_or(1, records::element_steps).max(1);
        self.shown = (MAX_CELLS / cells).max(1);
        render::column_names_upto(layout, self.shown, &mut |name| self.header.push(name));
        if layout.row_len() > self.shown {
            self.header.push("…".to_string());
        }
        self.layout = Some(layout.clone());
        Ok(())
    }

    fn row_elements(&self) -> usize {
        self.shown
    }

    fn element(&mut self, at: At, element: Element<'_>) -> Result<()> {
        let Some(layout) = &self.layout else { return Ok(()) };
        let row = self.row.get_or_insert_with(Vec::new);
        match (element, &layout.dtype) {
            (Element::Raw(bytes), Some(dtype)) => {
                render::leaf_texts(dtype, bytes, &mut |text| row.push(text)).map_err(|bad| bad.at(at, layout))?
            }
            (Element::Object(object), _) => row.push(render::object_cell(object)),
            (Element::Raw(_), None) => {}
        }
        Ok(())
    }

    fn end_row(&mut self, _row: usize) -> Result<bool> {
        let mut row = self.row.take().unwrap_or_default();
        if self.layout.as_ref().is_some_and(|l| l.row_len() > self.shown) {
            row.push("…".to_string());
        }
        self.rows.push(row);
        Ok(self.rows.len() < self.n)
    }
}
