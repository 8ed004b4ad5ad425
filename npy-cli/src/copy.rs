//! `npy copy IN OUT`: a `.npy` file here, an `.npz` archive member by member in [`npz`].

mod npz;

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use npy_core::atomic::AtomicFile;
use npy_core::prelude::*;
use npy_core::{Error, ErrorKind, NpyReader, Result};

use crate::read_args::ReadArgs;

/// Read a file through the dynamic API and write it back (bit-exact for NumPy files);
/// an .npz keeps its member names, order and compression (or takes --compression).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The .npy or .npz file to read.
    input: PathBuf,
    /// Where to write (atomically: an existing file is replaced only on success).
    output: PathBuf,
    /// Compress every member of the output archive so (an .npz only; default: each member
    /// as in the input).
    #[arg(long, value_enum)]
    compression: Option<Method>,
    /// The level of --compression: deflate 1 (fastest) to 9 (smallest), default 6 as
    /// np.savez_compressed; zstd 1 to 22, default 8; none for stored.
    #[arg(long, requires = "compression")]
    level: Option<u32>,
    #[command(flatten)]
    read: ReadArgs,
}

/// How `--compression` compresses an archive's members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// No compression, as np.savez: members can be memory-mapped.
    Stored,
    /// Deflate (zip method 8), as np.savez_compressed.
    Deflate,
    /// Zstandard (zip method 93): quicker and smaller than deflate; np.load reads it on
    /// Python 3.14+, or 3.11-3.13 after `import zipfile_zstd`.
    Zstd,
}

impl Args {
    /// The compression `--compression` and `--level` ask for, if any: npy-core's
    /// `Compression::named` checks the level and gives the defaults, as it does for Python.
    fn compression(&self) -> Result<Option<npy_core::npz::Compression>> {
        let Some(method) = self.compression else { return Ok(None) };
        let name = match method {
            Method::Stored => "stored",
            Method::Deflate => "deflate",
            Method::Zstd => "zstd",
        };
        npy_core::npz::Compression::named(name, self.level.map(i64::from)).map(Some)
    }
}

/// Bytes copied per step: memory stays bounded whatever the file's size.
const PIECE: usize = 1 << 20;

/// Copies the input to the output as `read::<DynArray>` + `write_npy` would (an `.npz` member by
/// member: see [`npz::copy`]), streaming in bounded memory whatever the file's size
/// and whether or not stderr is a terminal; object arrays through the object API (their
/// pickle is decoded whole). A large input copied with stderr on a terminal shows a
/// progress bar; the output is the same either way.
pub fn run(args: &Args) -> Result<()> {
    let (input, output, opts) = (args.input.as_path(), args.output.as_path(), &args.read.options());
    let compression = args.compression()?;
    if npy_core::npz::is_npz(input)? {
        return npz::copy(input, output, opts, compression);
    }
    if compression.is_some() {
        let reason = format!("--compression applies to .npz archives; {} is a .npy file", input.display());
        return Err(ErrorKind::Usage { reason }.into());
    }
    let reader = npy_core::NpyReader::from_path_with(input, opts)?;
    if reader.header().dtype.has_object() {
        // Decoded (never unpickled by running code) and pickled again as np.save would.
        return reader.read::<Array<Object>>()?.write_npy(output);
    }
    let bar = crate::progress::bytes(reader.data_len() as u64, "copy");
    let result = stream(reader, input, output, bar.as_ref());
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}

/// What `read::<DynArray>` + `write_npy` do, in pieces, advancing `bar` as the data goes: the
/// header is re-encoded as `write_npy` writes a `DynArray` read from it (keeping its
/// version if it fits: `Header::encode_keeping`), the data bytes are copied as they are (bytes
/// after them, which NumPy ignores, are dropped as `read::<DynArray>` drops them), and the result
/// replaces `output` atomically once complete.
fn stream(reader: NpyReader<BufReader<File>>, input: &Path, output: &Path, bar: Option<&ProgressBar>) -> Result<()> {
    let (_, head) = reader.header().encode_keeping(reader.version())?;
    let data_len = reader.data_len() as u64;
    let mut src = crate::progress::counted(bar, reader.into_inner());
    // Errors of the output name it (the atomic file's do), those of the input name it.
    let mut out = AtomicFile::create(output)?;
    out.write_all(&head)?;
    let mut buf = vec![0u8; PIECE.min(data_len as usize)];
    let mut left = data_len;
    while left > 0 {
        let want = left.min(buf.len() as u64) as usize;
        let got = src.read(&mut buf[..want]).map_err(|e| Error::from(e).reading(input))?;
        if got == 0 {
            // The file shrank after its length was checked.
            let e = Error::from(ErrorKind::Truncated { expected: data_len, found: data_len - left });
            return Err(e.reading(input));
        }
        out.write_all(&buf[..got])?;
        left -= got as u64;
    }
    out.commit(true)
}

#[cfg(test)]
mod tests {
    use npy_core::ReadOptions;

    use super::*;

    fn fixture(rel: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data").join(rel)
    }

    /// The streaming copy (the only one) writes what the dynamic API writes.
    #[test]
    fn streaming_copy_equals_the_dynamic_copy() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = ReadOptions::new();
        opts.max_header_size(1 << 20);
        let mut checked = 0;
        for rel in [
            "record/titles_non_str.npy",
            "header/utf8_name_v3.npy",
            "header/forced_v2_le_f8.npy",
            "header/fields_3000_v2.npy",
            "string/be_U4.npy",
            "shape/3x4_F_i4.npy",
            "record/trace_aligned.npy",
        ] {
            let input = fixture(rel);
            let (ours, theirs) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
            let bar = ProgressBar::hidden();
            let reader = npy_core::NpyReader::from_path_with(&input, &opts).unwrap();
            stream(reader, &input, &ours, Some(&bar)).unwrap_or_else(|e| panic!("{rel}: {e}"));
            npy_core::NpyReader::from_path_with(&input, &opts)
                .unwrap()
                .read::<DynArray>()
                .unwrap()
                .write_npy(&theirs)
                .unwrap();
            assert!(std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(), "{rel}");
            let data_len = npy_core::NpyReader::from_path_with(&input, &opts).unwrap().data_len() as u64;
            assert_eq!(bar.position(), data_len, "{rel}: the bar counts the data bytes");
            checked += 1;
        }
        assert_eq!(checked, 7);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "temporary files left: {names:?}");
    }

    /// A file that shrinks after its header was read (its length was checked then).
    #[test]
    fn streaming_copy_of_a_file_that_shrank_fails_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let short = dir.path().join("short.npy");
        // Larger than the reader's buffer, which has read past the header.
        let values: Vec<f64> = (0..100_000).map(f64::from).collect();
        values.write_npy(&short).unwrap();
        let reader = NpyReader::from_path(&short).unwrap();
        let len = std::fs::metadata(&short).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&short).unwrap().set_len(len - 5).unwrap();
        let out = dir.path().join("out.npy");
        let e = stream(reader, &short, &out, None).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { expected: 800_000, found: 799_995 }), "{e}");
        assert_eq!(e.path(), Some(short.as_path()));
        assert!(!out.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
