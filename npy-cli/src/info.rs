//! `npy info FILE`

use std::io::Write;
use std::path::{Path, PathBuf};

use npy_core::dtype::DType;
use npy_core::header::shape_repr;
use npy_core::npz::{self, DeflateOption, Method, Reader};
use npy_core::{ReadOptions, Result};

use crate::read_args::ReadArgs;

/// Show what a file's headers say: version, header length, data offset, dtype, shape,
/// order and sizes; for an .npz, each member's name, compression, sizes, dtype and shape.
///
/// Reads headers only (fast on files of any size): the data, CRCs and pickles are not
/// looked at. `npy check` reads everything.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The .npy or .npz file.
    file: PathBuf,
    /// Print each descr whole. By default a descr that would run its line past 100
    /// columns (a record of many fields) is cut there, ending in `…`.
    #[arg(long)]
    full_descr: bool,
    #[command(flatten)]
    read: ReadArgs,
}

/// Columns a line of `npy info` keeps to unless `--full-descr`: a descr is cut to what the
/// rest of its line leaves (at least [`MIN_DESCR`] characters), the fields it lists being
/// shown one per line below it anyway.
const SCREEN: usize = 100;
/// The fewest characters of a descr shown, however wide the columns before it.
const MIN_DESCR: usize = 24;

/// `descr` as shown in `room` characters: whole when it fits or `full`, else its first
/// `room - 1` characters and `…`; `cut` is set when it was cut.
fn fit(descr: String, room: usize, full: bool, cut: &mut bool) -> String {
    let room = room.max(MIN_DESCR);
    if full || descr.chars().count() <= room {
        return descr;
    }
    *cut = true;
    let mut shown: String = descr.chars().take(room - 1).collect();
    shown.push('…');
    shown
}

/// The note under output whose descrs were cut.
const CUT_NOTE: &str = "(descrs cut to 100 columns: --full-descr prints them whole)";

/// Prints what the header of the file says.
pub fn run(args: &Args) -> Result<()> {
    let (file, opts) = (args.file.as_path(), &args.read.options());
    if npz::is_npz(file)? {
        return archive(file, opts, args.full_descr);
    }
    let reader = npy_core::NpyReader::from_path_with(file, opts)?;
    let h = reader.header();
    let (major, minor) = reader.version().number();
    let mut out = std::io::stdout().lock();
    writeln!(out, "file:          {}", file.display())?;
    writeln!(out, "version:       {major}.{minor}")?;
    writeln!(out, "header length: {}", reader.header_len())?;
    writeln!(out, "data offset:   {}", reader.data_offset())?;
    let mut cut = false;
    let label = "descr:         ";
    writeln!(out, "{label}{}", fit(h.dtype.descr(), SCREEN - label.len(), args.full_descr, &mut cut))?;
    writeln!(out, "shape:         {}", shape_repr(&h.shape))?;
    let order = if h.fortran_order { "fortran (column-major)" } else { "C (row-major)" };
    writeln!(out, "order:         {order}")?;
    writeln!(out, "itemsize:      {}", h.dtype.itemsize())?;
    writeln!(out, "elements:      {}", h.element_count()?)?;
    if h.dtype.has_object() {
        // The data is a pickle of the array, not `elements * itemsize` bytes.
        let pickle = std::fs::metadata(file)
            .map_err(|e| npy_core::Error::from(e).reading(file))?
            .len()
            .saturating_sub(reader.data_offset() as u64);
        writeln!(out, "data:          Python objects, pickled ({pickle} bytes; see `npy head`)")?;
        if cut {
            writeln!(out, "{CUT_NOTE}")?;
        }
        return Ok(());
    }
    writeln!(out, "data bytes:    {}", reader.data_len())?;
    if let DType::Record(_) = &h.dtype {
        writeln!(out, "fields:")?;
        write_fields(&mut out, &h.dtype, "", 0)?;
    }
    if cut {
        writeln!(out, "{CUT_NOTE}")?;
    }
    Ok(())
}

/// One line per field, nested fields as `a.b`, with offset and type.
fn write_fields(out: &mut impl Write, dtype: &DType, prefix: &str, base: usize) -> Result<()> {
    let Some(rec) = dtype.as_record() else { return Ok(()) };
    for f in rec.fields() {
        let name = format!("{prefix}{}", f.name);
        let at = base + f.offset;
        match &f.dtype {
            DType::Record(_) => {
                writeln!(out, "  {name:<24} @{at:<6} record ({} bytes)", f.dtype.itemsize())?;
                write_fields(out, &f.dtype, &format!("{name}."), at)?;
            }
            other => writeln!(out, "  {name:<24} @{at:<6} {}", other.descr())?,
        }
    }
    Ok(())
}

/// Lists the members of an archive: a table with a heading row, the descr last (cut to the
/// screen unless `full`).
fn archive(path: &Path, opts: &ReadOptions, full: bool) -> Result<()> {
    let mut reader = Reader::from_path_with(path, npy_core::npz::ReaderOptions::new().read_options(opts))?;
    let members = reader.members().to_vec();
    let mut rows =
        vec![["member", "compression", "stored bytes", "bytes", "order", "shape", "descr"].map(String::from)];
    for m in &members {
        // The method, and the deflate option its flags record where it is not the normal
        // one (Info-ZIP's `zip -9` records maximum, NumPy's zipfile always normal).
        let compression = match m.compression {
            Some(Method::Stored) => "stored",
            Some(Method::Deflated(DeflateOption::Normal)) => "deflated",
            Some(Method::Deflated(DeflateOption::Maximum)) => "deflated:maximum",
            Some(Method::Deflated(DeflateOption::Fast)) => "deflated:fast",
            Some(Method::Deflated(DeflateOption::SuperFast)) => "deflated:superfast",
            Some(Method::Zstd) => "zstd",
            None => "other",
        };
        let (descr, shape, order) = if reader.is_npy(&m.name)? {
            let npy = reader.npy(&m.name)?;
            let h = npy.header();
            (h.dtype.descr(), shape_repr(&h.shape), if h.fortran_order { "fortran" } else { "C" }.to_string())
        } else {
            ("(not a .npy member)".to_string(), String::new(), String::new())
        };
        let sizes = [m.compressed_size.to_string(), m.size.to_string()];
        let [stored, size] = sizes;
        rows.push([m.member.clone(), compression.to_string(), stored, size, order, shape, descr]);
    }
    let mut widths = [0usize; 7];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // A row is two spaces, then each cell and a space: the descr gets what is left.
    let before: usize = 2 + widths[..6].iter().map(|w| w + 1).sum::<usize>();
    let mut cut = false;
    for row in &mut rows[1..] {
        row[6] = fit(std::mem::take(&mut row[6]), SCREEN.saturating_sub(before), full, &mut cut);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "file:          {}", path.display())?;
    writeln!(out, "archive:       npz, {} member{}", members.len(), if members.len() == 1 { "" } else { "s" })?;
    for row in &rows {
        let mut line = String::from(" ");
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            // Sizes right-aligned, text left-aligned.
            line.push(' ');
            crate::render::push_padded(&mut line, cell, w, i == 2 || i == 3);
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    if cut {
        writeln!(out, "{CUT_NOTE}")?;
    }
    Ok(())
}
