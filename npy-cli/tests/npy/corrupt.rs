//! `npy convert` of a file on which arrow-rs panics: one `error: reading '...'` line (the
//! panic caught by npy_arrow::guard, the tool's panic hook quiet for it), exit code 1.

use std::path::Path;
use std::process::Command;

#[test]
fn a_caught_panic_is_one_error_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/corrupt");
    for name in ["schema-type-none.arrow", "short-validity.arrow", "arrow-schema-float.parquet"] {
        let input = data.join(name);
        let out = dir.path().join("out.npy");
        let run = Command::new(env!("CARGO_BIN_EXE_npy")).arg("convert").arg(&input).arg(&out).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(stderr.starts_with(&format!("error: reading '{}': ", input.display())), "{stderr}");
        assert!(stderr.contains("reader failed on this file (it panicked: "), "{stderr}");
        assert!(!out.exists());
    }
}
