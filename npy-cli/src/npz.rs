//! `.npz` archives in `npy info` and `npy copy`.

use std::io::Read;
use std::path::Path;

use npy_core::npz::{Compression, Reader, Writer};
use npy_core::{Error, ReadOptions, Result};

/// True when the file starts like a zip archive (an `.npz`).
pub fn is_npz(path: &Path) -> Result<bool> {
    let sniff = || -> std::io::Result<bool> {
        let mut magic = [0u8; 4];
        let mut file = std::fs::File::open(path)?;
        let mut got = 0;
        while got < 4 {
            match file.read(&mut magic[got..])? {
                0 => break,
                k => got += k,
            }
        }
        Ok(got == 4 && (magic == *b"PK\x03\x04" || magic == *b"PK\x05\x06"))
    };
    sniff().map_err(|e| Error::from(e).reading(path))
}

/// Rewrites an archive: same member names, order and compression; `.npy` members are
/// read and written back through the dynamic API, other members copied as bytes.
pub fn copy(input: &Path, output: &Path, opts: &ReadOptions) -> Result<()> {
    let mut reader = Reader::open(input)?;
    reader.read_options(opts.clone());
    let mut writer = Writer::create(output)?;
    let members = reader.members()?;
    // A bar (on a terminal, for large archives) that advances member by member.
    let bar = crate::progress::bytes(members.iter().map(|m| m.size).sum(), "copy");
    let result = (|| {
        for m in members {
            let compression = m.compression.unwrap_or(Compression::Stored);
            if m.member.ends_with(".npy") && reader.is_npy(&m.name)? {
                if reader.npy(&m.name)?.header().dtype.has_object() {
                    let array = reader.read_objects(&m.name)?;
                    writer.add_object_array_with(&m.name, &array, compression)?;
                } else {
                    let array = reader.read_dyn(&m.name)?;
                    writer.add_dyn_with(&m.name, &array, compression)?;
                }
            } else {
                let bytes = reader.read_raw(&m.member)?;
                writer.add_raw(&m.member, &bytes, compression)?;
            }
            if let Some(bar) = &bar {
                bar.inc(m.size);
            }
        }
        writer.finish()
    })();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}
