//! `npy dump FILE --format json|csv [--member NAME]`

use std::io::{BufWriter, Write};
use std::path::Path;

use npy_core::{ReadOptions, Result};

use crate::records::{cells, for_each, object_json, Element};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON object (or value) per line.
    Json,
    /// A header row of leaf field names, then one row per record.
    Csv,
}

/// Records read per step: memory stays bounded whatever the file's size.
const CHUNK: usize = 4096;

/// Writes every record to stdout, streaming.
pub fn run(file: &Path, member: Option<&str>, format: Format, opts: &ReadOptions) -> Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut bar = None;
    let mut first = true;
    let result = for_each(
        file,
        member,
        opts,
        CHUNK,
        |bytes| bar = crate::progress::bytes(bytes, "dump"),
        |element| {
            match format {
                Format::Json => {
                    match &element {
                        Element::Value(value) => serde_json::to_writer(&mut out, value),
                        Element::Object(object) => serde_json::to_writer(&mut out, &object_json(object)),
                    }
                    .map_err(std::io::Error::from)?;
                    out.write_all(b"\n")?;
                }
                Format::Csv => {
                    let cols = cells(&element);
                    if first {
                        let names: Vec<String> = cols.iter().map(|(n, _)| csv_field(n)).collect();
                        writeln!(out, "{}", names.join(","))?;
                    }
                    let texts: Vec<String> = cols.iter().map(|(_, text)| csv_field(text)).collect();
                    writeln!(out, "{}", texts.join(","))?;
                }
            }
            first = false;
            Ok(true)
        },
    );
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    result?;
    out.flush()?;
    Ok(())
}

/// RFC 4180 quoting: fields with a comma, quote or line break are quoted, quotes doubled.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
