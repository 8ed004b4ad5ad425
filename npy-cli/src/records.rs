//! Records of a file as dynamic values: the input of `npy head` and `npy dump`.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use npy_core::literal::Literal;
use npy_core::npz::Reader;
use npy_core::serde::{values, Value};
use npy_core::{Error, NpyReader, ReadOptions, Result};

/// Calls `each` on every record of `file` (or of `member` of an `.npz`), in storage
/// order, reading `chunk` records at a time; `each` returns `false` to stop early.
/// `started` gets the data size in bytes before the first record.
pub fn for_each(
    file: &Path,
    member: Option<&str>,
    opts: &ReadOptions,
    chunk: usize,
    started: impl FnOnce(u64),
    each: impl FnMut(Value) -> Result<bool>,
) -> Result<()> {
    if crate::npz::is_npz(file)? {
        let mut archive = Reader::open(file)?;
        archive.read_options(opts.clone());
        let name = match member {
            Some(m) => m.to_string(),
            None => match archive.names() {
                [only] => only.clone(),
                names => {
                    return Err(Error::from(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!(
                            "the archive has {} members ({}): choose one with --member",
                            names.len(),
                            names.join(", ")
                        ),
                    )))
                }
            },
        };
        let reader = archive.npy(&name)?;
        drain(reader, chunk, started, each)
    } else {
        let reader: NpyReader<BufReader<File>> = opts.open_path(file)?;
        drain(reader, chunk, started, each)
    }
}

fn drain<R: std::io::Read>(
    reader: NpyReader<R>,
    chunk: usize,
    started: impl FnOnce(u64),
    mut each: impl FnMut(Value) -> Result<bool>,
) -> Result<()> {
    started(reader.data_len() as u64);
    for value in values(reader, chunk) {
        if !each(value?)? {
            break;
        }
    }
    Ok(())
}

/// A value as one cell of a table or CSV: strings as they are, byte strings as Python
/// shows them (`b'LINE-001'`), floats in their shortest form (`nan`, `inf` spelled out),
/// the rest as their JSON text.
pub fn cell(value: &Value) -> String {
    match value {
        Value::Str(s) => s.clone(),
        Value::Bytes(b) => Literal::Bytes(b.clone()).repr(),
        Value::Float(f) => float_text(*f),
        Value::Complex(re, im) => format!("({}, {})", float_text(*re), float_text(*im)),
        other => serde_json::to_string(other).unwrap_or_else(|e| format!("<{e}>")),
    }
}

/// The shortest text that reads back as `f`; values that are `f32`s (from `<f4` fields)
/// in the `f32`'s shortest form, so `0.004` stays `0.004`.
fn float_text(f: f64) -> String {
    if f.is_nan() {
        "nan".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if (f as f32) as f64 == f {
        format!("{}", f as f32)
    } else {
        format!("{f}")
    }
}

/// The leaves of a record (`a.b`, `samples[3]`), or `value` for a scalar element.
pub fn columns(value: &Value) -> Vec<(String, &Value)> {
    let leaves = value.leaves();
    if leaves.len() == 1 && leaves[0].0.is_empty() {
        return vec![("value".to_string(), leaves[0].1)];
    }
    leaves
}
