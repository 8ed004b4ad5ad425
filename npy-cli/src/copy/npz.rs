//! `npy copy` of an `.npz` archive, member by member.

use std::io::Read;
use std::path::Path;

use npy_core::npz::{Compression, Method, Reader, Writer};
use npy_core::{Error, ReadOptions, Result};

/// Bytes of compressed members staged in memory at once, over all compression threads:
/// members up to this size divided by the threads are compressed in parallel, larger ones
/// as they stream in (so a copy's memory stays bounded whatever the archive holds).
const STAGED: u64 = 16 << 20;

/// Rewrites an archive, streaming member by member: same member names, order and
/// compression (or `compression` for every member, if given); `.npy` members are written as `read::<DynArray>` + `add` write them (the
/// header re-encoded keeping its version, the data copied as it is), object arrays through
/// the object API (decoded whole), other members copied as bytes. Every member is read to
/// its end, so its CRC is checked.
pub(super) fn copy(input: &Path, output: &Path, opts: &ReadOptions, compression: Option<Compression>) -> Result<()> {
    let mut reader = Reader::from_path_with(input, npy_core::npz::ReaderOptions::new().read_options(opts))?;
    let mut writer = Writer::create(output)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    writer.parallel_limit(STAGED / threads);
    let members = reader.members().to_vec();
    // A bar (on a terminal, for large archives) that advances as members' bytes are read.
    let bar = crate::progress::bytes(members.iter().map(|m| m.size).sum(), "copy");
    let result = (|| {
        let mut done = 0;
        for m in members {
            let compression = compression.or(m.compression.map(Method::compression)).unwrap_or(Compression::Stored);
            if m.member.ends_with(".npy") && reader.is_npy(&m.name)? {
                let npy = reader.npy(&m.name)?;
                if npy.header().dtype.has_object() {
                    drop(npy);
                    let array = reader.read::<npy_core::Array<npy_core::Object>>(&m.name)?;
                    writer.add_with(&m.name, &array, compression)?;
                } else {
                    let (_, head) = npy.header().encode_keeping(npy.version())?;
                    let data_len = npy.data_len() as u64;
                    let mut data = npy.into_inner();
                    let source = crate::progress::counted(bar.as_ref(), (&head[..]).chain((&mut data).take(data_len)));
                    writer.add_raw_from_with(&m.member, head.len() as u64 + data_len, source, compression)?;
                    // The rest (bytes after the array, dropped as `read::<DynArray>` drops them),
                    // read for the member's CRC check at its end.
                    std::io::copy(&mut data, &mut std::io::sink()).map_err(Error::from)?;
                }
            } else {
                let mut data = reader.raw(&m.member)?;
                let source = crate::progress::counted(bar.as_ref(), &mut data);
                writer.add_raw_from_with(&m.member, m.size, source, compression)?;
                // Reaching the end checks the CRC.
                std::io::copy(&mut data, &mut std::io::sink()).map_err(Error::from)?;
            }
            done += m.size;
            if let Some(bar) = &bar {
                bar.set_position(done);
            }
        }
        writer.finish()
    })();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}
