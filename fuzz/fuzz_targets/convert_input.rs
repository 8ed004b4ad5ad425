//! What the `arrow_ipc` and `parquet` targets share: `npy convert`'s reading side on a
//! file of the fuzzer's bytes.

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::{Once, OnceLock};

use npy_arrow::formats::FileBatchReader;
use npy_arrow::BatchWriter;

/// Writes `data` to a file named `input.<ext>` (in a directory of this process's, made
/// once), opens it as `npy convert` does (`npy_arrow::formats::open`), reads every batch
/// and writes it to an in-memory `.npy` through `BatchWriter`. Errors are fine (panics of
/// arrow-rs caught by the guard among them); other panics, aborts, memory beyond the RSS
/// limit and timeouts are what the fuzzer reports.
pub fn convert(data: &[u8], ext: &str) {
    // libFuzzer's panic hook aborts on every panic; a panic that npy_arrow::guard catches
    // (and turns into an error, as `npy convert` reports it) is not a crash.
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !npy_arrow::guard::catching() {
                fuzzer_hook(info);
            }
        }));
    });
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"));
    let path: PathBuf = dir.path().join(format!("input.{ext}"));
    std::fs::write(&path, data).expect("writing the input file");
    let Ok(input) = FileBatchReader::from_path(&path) else { return };
    let Ok(mut writer) = BatchWriter::new(Cursor::new(Vec::new()), input.schema()) else { return };
    for batch in input {
        let Ok(batch) = batch else { return };
        if writer.write(&batch).is_err() {
            return;
        }
    }
    let _ = writer.finish();
}
