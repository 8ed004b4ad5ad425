//! `npy info FILE`

use std::io::Write;
use std::path::Path;

use npy_core::dtype::DType;
use npy_core::header::shape_repr;
use npy_core::{ReadOptions, Result};

/// Prints what the header of `file` says.
pub fn run(file: &Path, opts: &ReadOptions) -> Result<()> {
    if crate::npz::is_npz(file)? {
        return crate::npz::info(file, opts);
    }
    let reader = opts.open_path(file)?;
    let h = reader.header();
    let (major, minor) = reader.version().number();
    let mut out = std::io::stdout().lock();
    writeln!(out, "file:          {}", file.display())?;
    writeln!(out, "version:       {major}.{minor}")?;
    writeln!(out, "header length: {}", reader.header_len())?;
    writeln!(out, "data offset:   {}", reader.data_offset())?;
    writeln!(out, "descr:         {}", h.dtype.descr())?;
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
        return Ok(());
    }
    writeln!(out, "data bytes:    {}", reader.data_len())?;
    if let DType::Record(_) = &h.dtype {
        writeln!(out, "fields:")?;
        write_fields(&mut out, &h.dtype, "", 0)?;
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
