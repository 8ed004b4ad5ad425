//! Peak memory of a child process, for the tests that hold subcommands to bounded memory
//! (`memory.rs`, `convert.rs`), and the large inputs they run on.
//!
//! The peak is the kernel's high-water mark of the child's resident set (`VmHWM` in
//! `/proc/<pid>/status`), read every millisecond while it runs: what it misses is growth in
//! the last millisecond before the child exits, never a file held whole (faulting in tens
//! of MB takes far longer than that). Linux only.

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::Duration;

/// What [`peak_rss`] saw.
#[derive(Debug)]
pub struct Peak {
    /// How the child ended.
    pub status: ExitStatus,
    /// Its largest resident set seen, in bytes.
    pub bytes: u64,
    /// How many times it was read (at least one, or the peak means nothing).
    pub samples: usize,
}

/// Runs `cmd` (its stdio as the caller set it) to its end, polling its peak resident set.
///
/// # Panics
/// When the child cannot be spawned or waited for.
pub fn peak_rss(cmd: &mut Command) -> Peak {
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let status_file = format!("/proc/{}/status", child.id());
    let (mut bytes, mut samples) = (0, 0);
    loop {
        // Read before asking whether it ended: a sample of a child still running.
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().as_deref().and_then(vm_hwm_kib) {
            bytes = bytes.max(kib * 1024);
            samples += 1;
        }
        if let Some(status) = child.try_wait().expect("wait for the child") {
            return Peak { status, bytes, samples };
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `VmHWM` of a `/proc/<pid>/status` text, in KiB (absent once the process has exited).
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()
}

/// Writes a `.npy` file of `len` bytes of zeros as `'<f8'` elements (`len` a multiple of
/// 8), as `np.save` would, the data a hole in a sparse file (it takes no disk space, and
/// reads as zeros).
pub fn zeros_npy(path: &Path, len: u64) {
    assert_eq!(len % 8, 0);
    let header = npy_core::header::Header::new(
        npy_core::DType::native(npy_core::dtype::ScalarType::Float(8)),
        vec![(len / 8) as usize],
    );
    let (_, head) = header.encode(None).unwrap();
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(&head).unwrap();
    file.set_len(head.len() as u64 + len).unwrap();
}

/// Writes an `.npz` archive of one stored member `x.npy`: `len` bytes of zeros as `'<f8'`
/// (written out: a zip member's data is not sparse).
pub fn zeros_npz_stored(path: &Path, len: u64) {
    let dir = path.parent().unwrap();
    let npy = dir.join(".zeros_member.npy");
    zeros_npy(&npy, len);
    let size = std::fs::metadata(&npy).unwrap().len();
    let mut writer = npy_core::npz::Writer::create(path).unwrap();
    let source = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&npy).unwrap());
    writer.add_raw_from_with("x.npy", size, source, npy_core::npz::Compression::Stored).unwrap();
    writer.finish().unwrap();
    std::fs::remove_file(&npy).unwrap();
}

/// Writes an `.npz` archive of one deflated member `x.npy`: `len` bytes of zeros as `'<f8'`
/// of shape `(len / 8 / width, width)`, in Fortran order when `fortran` (the same bytes,
/// another header), deflated as they are made: nothing of `len` is held or written out.
pub fn zeros_npz_deflated(path: &Path, len: u64, width: usize, fortran: bool) {
    let rows = (len / 8) as usize / width;
    let mut header = npy_core::header::Header::new(
        npy_core::DType::native(npy_core::dtype::ScalarType::Float(8)),
        vec![rows, width],
    );
    header.fortran_order = fortran;
    let (_, head) = header.encode(None).unwrap();
    let data = (rows * width * 8) as u64;
    let source = std::io::Read::chain(&head[..], std::io::Read::take(std::io::repeat(0), data));
    let mut writer = npy_core::npz::Writer::create(path).unwrap();
    let size = head.len() as u64 + data;
    // Level 1: the reads under test inflate any level alike, and level 6 spent two thirds
    // of the SQL test's minutes deflating these zeros.
    let level1 = npy_core::npz::Compression::Deflated { level: 1 };
    writer.add_raw_from_with("x.npy", size, source, level1).unwrap();
    writer.finish().unwrap();
}

#[test]
fn vm_hwm_is_read_from_the_status_text() {
    let text = "Name:\tnpy\nVmPeak:\t  20000 kB\nVmHWM:\t    5120 kB\nVmRSS:\t 4000 kB\n";
    assert_eq!(vm_hwm_kib(text), Some(5120));
    assert_eq!(vm_hwm_kib("Name:\tnpy\nState:\tZ (zombie)\n"), None);
    let me = peak_rss(Command::new("sleep").arg("0.05"));
    assert!(me.status.success() && me.samples > 0 && me.bytes > 0, "{me:?}");
}
