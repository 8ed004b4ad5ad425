//! `npy copy IN OUT`

use std::io::{Read, Write};
use std::path::Path;

use indicatif::ProgressBar;
use npy_core::atomic::AtomicFile;
use npy_core::prelude::*;
use npy_core::{Error, ErrorKind, ReadOptions, Result};

/// Reads `input` through the dynamic API and writes it to `output`, keeping its version
/// (an `.npz` member by member); object arrays through the object API. A large input copied with stderr on a terminal shows a
/// progress bar; the output is the same either way.
pub fn run(input: &Path, output: &Path, opts: &ReadOptions) -> Result<()> {
    if crate::npz::is_npz(input)? {
        return crate::npz::copy(input, output, opts);
    }
    let reader = opts.open_path(input)?;
    if reader.header().dtype.has_object() {
        // Decoded (never unpickled by running code) and pickled again as np.save would.
        return reader.read_objects()?.write_npy(output);
    }
    drop(reader);
    let len = std::fs::metadata(input).map_err(|e| Error::from(e).reading(input))?.len();
    match crate::progress::bytes(len, "copy") {
        None => {
            let array = opts.open_path(input)?.read_dyn()?;
            array.write_npy(output)
        }
        Some(bar) => {
            let result = stream(input, output, opts, &bar);
            bar.finish_and_clear();
            result
        }
    }
}

/// What `read_dyn` + `write_npy` do, in pieces, advancing `bar` as the data goes: the
/// header is re-encoded keeping the version read (else NumPy's choice), the data bytes are
/// copied as they are, and the result replaces `output` atomically once complete.
fn stream(input: &Path, output: &Path, opts: &ReadOptions, bar: &ProgressBar) -> Result<()> {
    let reader = opts.open_path(input)?;
    let header = reader.header().clone();
    let head = match header.encode(Some(reader.version())) {
        Ok((_, bytes)) => bytes,
        Err(_) => header.encode(None)?.1,
    };
    let data_len = reader.data_len() as u64;
    let mut src = reader.into_inner();
    // Errors of the output name it (the atomic file's do), those of the input name it.
    let mut out = AtomicFile::create(output)?;
    out.write_all(&head)?;
    let mut buf = vec![0u8; 1 << 20];
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
        bar.inc(got as u64);
        left -= got as u64;
    }
    out.commit(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data").join(rel)
    }

    /// The streaming path (taken when a bar is shown) writes what the dynamic path writes.
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
            stream(&input, &ours, &opts, &ProgressBar::hidden()).unwrap_or_else(|e| panic!("{rel}: {e}"));
            opts.open_path(&input).unwrap().read_dyn().unwrap().write_npy(&theirs).unwrap();
            assert!(std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(), "{rel}");
            checked += 1;
        }
        assert_eq!(checked, 7);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "temporary files left: {names:?}");
    }

    #[test]
    fn streaming_copy_of_a_truncated_file_fails_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = std::fs::read(fixture("shape/3x4_F_i4.npy")).unwrap();
        let short = dir.path().join("short.npy");
        std::fs::write(&short, &bytes[..bytes.len() - 5]).unwrap();
        let out = dir.path().join("out.npy");
        let e = stream(&short, &out, &ReadOptions::new(), &ProgressBar::hidden()).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");
        assert!(!out.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
