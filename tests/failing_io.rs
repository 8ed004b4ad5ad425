//! Writes and reads that fail: an error every time, in bounded time, never a hang; the old
//! file whole and nothing left beside it.
//!
//! - A writer that fails after N bytes, for N in the header, at and around every piece
//!   boundary of the two-thread pipeline (padded and converted records), for every write
//!   API that takes that path, with record counts at and above the threshold that starts
//!   the second thread.
//! - A reader that fails midway through a large conversion, and a file cut short under
//!   the two-thread conversion read.
//! - A full disk (a 64 MiB tmpfs; where mounting is not allowed the test fails under
//!   `CI` and elsewhere says so and skips): every path write is an `Err` naming the target, the old file survives, and
//!   no file is left beside it; `NpyMapMut::create` too, never a `SIGBUS`; an append of
//!   a file from another disk names the target, not the source.
//! - `SIGKILL` in the middle of path writes, on ext4 and tmpfs: the target is whole (old
//!   or new) and no temporary file is left.

use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use npy_core::mmap::NpyMapMut;
use npy_core::npz::{self, Compression};
use npy_core::prelude::*;
use npy_core::{Access, ErrorKind, NpyFileWriter, NpyWriter};

/// Packed in the file (16 bytes), padded in memory (24): written by conversion.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Packed {
    id: i32,
    t0: f64,
    dt: f32,
}

/// NumPy's `align=True` layout, as in memory: written by copying and zeroing the padding.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct Padded {
    id: i32,
    t0: f64,
    dt: f32,
}

/// Bytes of records the writer makes per piece (its `WRITE_PIECE`), and the fewest
/// pieces for which a second thread makes them.
const PIECE: usize = 1 << 20;
const THREAD_PIECES: usize = 8;

fn packed(n: usize) -> Vec<Packed> {
    (0..n).map(|i| Packed { id: i as i32, t0: i as f64 * 0.5, dt: 0.25 }).collect()
}

fn padded(n: usize) -> Vec<Padded> {
    (0..n).map(|i| Padded { id: i as i32, t0: i as f64 * 0.5, dt: 0.25 }).collect()
}

/// Records of `size` file bytes that make `pieces` pieces, the last one short.
fn count_for(pieces: usize, size: usize) -> usize {
    (PIECE / size) * (pieces - 1) + 1
}

/// Runs `f` on a thread and fails the test if it has not returned within 180 s: a hang
/// detector, not a speed check (the slowest call, a 72 MB deflate in a debug build, takes
/// about 10 s alone and several times that on a loaded 2-core machine).
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(180)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no answer after 180 s (a thread waits forever?)"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// A `Write + Seek` that takes `limit` bytes (counting every byte written, rewrites too)
/// and then fails as a full disk does.
#[derive(Debug)]
struct FailAfter {
    data: Cursor<Vec<u8>>,
    written: usize,
    limit: usize,
    /// Writes refused so far.
    refused: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl FailAfter {
    fn new(limit: usize) -> Self {
        FailAfter { data: Cursor::new(Vec::new()), written: 0, limit, refused: Default::default() }
    }
}

impl Write for FailAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.limit - self.written;
        if room == 0 && !buf.is_empty() {
            self.refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Err(io::Error::new(io::ErrorKind::StorageFull, "injected: no space left"));
        }
        let n = self.data.write(&buf[..buf.len().min(room)])?;
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for FailAfter {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.data.seek(pos)
    }
}

/// The byte counts after which the writer fails: in the header, at, before and after
/// the first, a middle and the last piece boundary, and one byte short of the end.
fn limits(header: usize, pieces: usize, piece: usize, total: usize) -> Vec<usize> {
    let mut v = vec![0, header / 2, header - 1, header];
    for k in [1, pieces / 2, pieces - 1] {
        let at = header + k * piece;
        v.extend([at - 1, at, at + 1]);
    }
    v.extend([header + piece / 2, total - 1]);
    v.sort();
    v.dedup();
    v.retain(|&l| l < total);
    v
}

/// Every write API that can take the two-thread path, over a writer failing after
/// `limit` bytes; `Ok` holds what it wrote when nothing failed.
fn write_with<T: NpyRecord + Send + Sync + 'static>(api: &str, data: &[T], limit: usize) -> npy_core::Result<Vec<u8>> {
    let w = FailAfter::new(limit);
    let out = match api {
        "write_npy_to" => data.write_npy_to(w)?,
        "NpyWriter::extend" => {
            let mut writer = NpyWriter::<T, _>::new(w)?;
            for part in data.chunks(data.len() / 3 + 1) {
                writer.extend(part)?;
            }
            writer.finish()?
        }
        "npz add (stored)" => {
            let mut z = npz::Writer::new(w);
            z.add("records", data)?;
            z.finish()?
        }
        "npz add_columns" => {
            let mut z = npz::Writer::new(w);
            z.add_columns(data)?;
            z.finish()?
        }
        "npz start_array (stored)" => {
            let mut z = npz::Writer::new(w);
            let mut m = z.start_array_with::<T>("records", vec![data.len()], Compression::Stored)?;
            for part in data.chunks(data.len() / 2 + 1) {
                m.write(part)?;
            }
            m.finish()?;
            z.finish()?
        }
        "npz add (deflated, parallel)" => {
            let mut z = npz::Writer::new(w);
            z.threads(3);
            for (i, part) in data.chunks(data.len() / 4 + 1).enumerate() {
                z.add_with(&format!("part{i}"), part, Compression::Deflated { level: 1 })?;
            }
            z.finish()?
        }
        "npz add (deflated, streamed)" => {
            let mut z = npz::Writer::new(w);
            z.threads(1);
            z.add_with("records", data, Compression::Deflated { level: 1 })?;
            z.finish()?
        }
        other => unreachable!("{other}"),
    };
    Ok(out.data.into_inner())
}

const APIS: [&str; 7] = [
    "write_npy_to",
    "NpyWriter::extend",
    "npz add (stored)",
    "npz add_columns",
    "npz start_array (stored)",
    "npz add (deflated, parallel)",
    "npz add (deflated, streamed)",
];

fn fail_everywhere<T: NpyRecord + Send + Sync + Clone + 'static>(kind: &str, data: Vec<T>, file_size: usize) {
    let data = std::sync::Arc::new(data);
    let per_piece = PIECE / file_size;
    let pieces = data.len().div_ceil(per_piece);
    assert!(pieces >= THREAD_PIECES, "{kind}: {pieces} pieces do not start the second thread");
    for api in APIS {
        // Nothing fails: what it writes, for the size to fail in.
        let all = {
            let data = std::sync::Arc::clone(&data);
            bounded(api, move || write_with(api, &data, usize::MAX)).unwrap_or_else(|e| panic!("{api}: {e}"))
        };
        let header = if api.starts_with("npz") { 128 } else { 128.min(all.len()) };
        let mut cases = limits(header, pieces, per_piece * file_size, all.len());
        if api.contains("deflated") {
            // Deflating is slow in a debug build: the header, a middle piece, the end.
            cases = vec![header / 2, all.len() / 2, all.len() - 1];
        }
        for limit in cases {
            let data = std::sync::Arc::clone(&data);
            let what = format!("{kind}, {} records, {api}, failing after {limit} of {} bytes", data.len(), all.len());
            let e = bounded(&what, move || write_with(api, &data, limit))
                .err()
                .unwrap_or_else(|| panic!("{what}: no error"));
            assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::StorageFull), "{what}: {e:?}");
        }
    }
}

#[test]
fn a_failing_writer_is_an_error_at_every_point_of_a_converted_write() {
    for pieces in [THREAD_PIECES, THREAD_PIECES + 2] {
        fail_everywhere("converted", packed(count_for(pieces, 16)), 16);
    }
}

#[test]
fn a_failing_writer_is_an_error_at_every_point_of_a_padded_write() {
    for pieces in [THREAD_PIECES, THREAD_PIECES + 2] {
        fail_everywhere("padded", padded(count_for(pieces, 24)), 24);
    }
}

#[test]
fn written_files_are_what_the_one_thread_path_writes() {
    // The two-thread path's output, byte for byte against records written one by one.
    let data = packed(count_for(THREAD_PIECES + 1, 16));
    let whole = data.write_npy_to(Vec::new()).unwrap();
    let mut one_by_one = NpyWriter::<Packed, _>::new(Cursor::new(Vec::new())).unwrap();
    for r in &data {
        one_by_one.push(r).unwrap();
    }
    assert!(whole == one_by_one.finish().unwrap().into_inner());
    assert_eq!(Vec::<Packed>::read_npy_from(&whole[..]).unwrap(), data);
}

/// Stored members written in one piece of 4 MiB or more have their CRC-32 computed on a
/// second thread while this one writes: a writer failing in the middle of such a write is
/// an error, in bounded time.
#[test]
fn a_failing_writer_under_a_two_thread_crc_is_an_error() {
    let data: Vec<f64> = (0..1_000_000).map(f64::from).collect();
    let data = std::sync::Arc::new(data);
    for limit in [100, 4 << 20, 7_999_000] {
        let data = std::sync::Arc::clone(&data);
        let what = format!("stored f64 member, failing after {limit} bytes");
        let e = bounded(&what, move || write_with("npz add (stored)", &data, limit))
            .err()
            .unwrap_or_else(|| panic!("{what}: no error"));
        assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::StorageFull), "{what}: {e:?}");
    }
}

/// A writer dropped with deflated members still compressing on its workers stops and
/// joins them, in bounded time, and writes nothing to its output (which takes no byte).
#[test]
fn a_dropped_npz_writer_stops_its_workers_and_writes_nothing() {
    let noise: Vec<u64> = (0..4_000_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let refused = bounded("dropping an npz writer with pending members", move || {
        let w = FailAfter::new(0);
        let refused = std::sync::Arc::clone(&w.refused);
        let mut z = npz::Writer::new(w);
        z.threads(4);
        for i in 0..3 {
            z.add_with(&format!("n{i}"), &noise, Compression::Deflated { level: 9 }).unwrap();
        }
        drop(z);
        refused.load(std::sync::atomic::Ordering::Relaxed)
    });
    assert_eq!(refused, 0, "the dropped writer wrote to its output");
}

/// An npz writer whose output failed writes nothing more to it: not when its `finish`
/// fails, not when it is dropped after an error (the zip writer's own drop-time
/// finalisation would write again, and print to stderr when that fails too).
#[test]
fn a_failed_npz_output_is_never_written_again() {
    let data: Vec<u32> = (0..1000).collect();
    let whole = {
        let mut z = npz::Writer::new(FailAfter::new(usize::MAX));
        z.add("a", &data).unwrap();
        z.finish().unwrap().data.into_inner().len()
    };
    for limit in [whole - 1, whole - 30, 2000] {
        let w = FailAfter::new(limit);
        let refused = std::sync::Arc::clone(&w.refused);
        let mut z = npz::Writer::new(w);
        let e = match z.add("a", &data) {
            Err(e) => {
                drop(z);
                e
            }
            Ok(()) => z.finish().unwrap_err(),
        };
        assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::StorageFull), "{e:?}");
        assert_eq!(refused.load(std::sync::atomic::Ordering::Relaxed), 1, "failing after {limit} of {whole} bytes");
    }
}

/// A reader that hands out `limit` bytes of `data`, then fails.
struct FailingReader {
    data: Vec<u8>,
    at: usize,
    limit: usize,
}

impl Read for FailingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at >= self.limit {
            return Err(io::Error::new(io::ErrorKind::ConnectionReset, "injected: the source went away"));
        }
        let n = buf.len().min(self.limit - self.at).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[test]
fn a_reader_failing_midway_is_an_error() {
    let file = packed(count_for(THREAD_PIECES + 2, 16)).write_npy_to(Vec::new()).unwrap();
    for limit in [0, 64, 200, file.len() / 3, file.len() / 2, file.len() - 1] {
        for read in ["converted", "raw", "chunks"] {
            let data = file.clone();
            let what = format!("{read} read failing after {limit} of {} bytes", data.len());
            let result = bounded(&what, move || {
                let reader = FailingReader { data, at: 0, limit };
                match read {
                    "converted" => Vec::<Packed>::read_npy_from(reader).map(drop),
                    "raw" => DynArray::read_npy_from(reader).map(drop),
                    _ => npy_core::NpyReader::from_reader(reader)?
                        .chunks::<Packed>(10_000)?
                        .try_for_each(|c| c.map(drop)),
                }
            });
            let e = result.err().unwrap_or_else(|| panic!("{what}: no error"));
            let io_kind = match e.kind() {
                ErrorKind::Io(io) => Some(io.kind()),
                _ => None,
            };
            let in_header = limit < 128;
            assert!(
                io_kind == Some(io::ErrorKind::ConnectionReset) || in_header && matches!(e.kind(), ErrorKind::Io(_)),
                "{what}: {e:?}"
            );
        }
    }
}

/// Conversions of 64 MiB or more from a file split between two threads, each reading its
/// half: a file cut short in either half is `Truncated`, from both, in bounded time.
#[test]
fn a_file_cut_short_under_a_two_thread_conversion_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.npy");
    let n = (64 << 20) / 16 + 1000;
    packed(n).write_npy(&path).unwrap();
    let full = std::fs::metadata(&path).unwrap().len();
    for cut in [full / 4, full / 2 + 1000, full - 5] {
        let reader = npy_core::NpyReader::from_path(&path).unwrap();
        // Shrinks after the header was checked against the length.
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(cut).unwrap();
        let what = format!("conversion of a file cut to {cut} of {full} bytes");
        let e =
            bounded(&what, move || reader.read::<Vec<Packed>>()).err().unwrap_or_else(|| panic!("{what}: no error"));
        assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{what}: {e:?}");
        assert_eq!(e.path(), Some(path.as_path()), "{e}");
        packed(n).write_npy(&path).unwrap();
    }
}

/// Reads of 64 MiB or more of known length fill their buffer while a second thread faults
/// its pages in: a file cut short under them is `Truncated`, and the thread is stopped
/// and joined, in bounded time.
#[test]
fn a_file_cut_short_under_a_prefaulted_read_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f8.npy");
    let values: Vec<f64> = (0..(9 << 20)).map(f64::from).collect();
    values.write_npy(&path).unwrap();
    let full = std::fs::metadata(&path).unwrap().len();
    for (read, cut) in [("typed", full / 3), ("dynamic", full / 2), ("typed", full - 1)] {
        let reader = npy_core::NpyReader::from_path(&path).unwrap();
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(cut).unwrap();
        let what = format!("{read} read of a file cut to {cut} of {full} bytes");
        let result = bounded(&what, move || match read {
            "typed" => reader.read::<Vec<f64>>().map(drop),
            _ => reader.read::<DynArray>().map(drop),
        });
        let e = result.err().unwrap_or_else(|| panic!("{what}: no error"));
        assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{what}: {e:?}");
        values.write_npy(&path).unwrap();
    }
}

/// A small tmpfs mounted for a test, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// `None` (with a message) where mounting is not allowed.
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            Ok(o) => cannot_mount(&format!("cannot mount a tmpfs here: {}", String::from_utf8_lossy(&o.stderr).trim())),
            Err(e) => cannot_mount(&format!("cannot run mount: {e}")),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Where no tmpfs can be mounted: under `CI` the test fails (these tests are the only
/// evidence that a failed write leaves the old file whole, so CI must run them, as root);
/// elsewhere it says why it did not run, on stderr past the harness's capture.
fn cannot_mount(why: &str) -> Option<Tmpfs> {
    assert!(std::env::var_os("CI").is_none(), "CI runs the full-disk tests, but {why}");
    let _ = writeln!(std::io::stderr(), "note: a full-disk test did not run: {why}");
    None
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Every path write onto a full disk: an `Err` naming the target, the old file whole,
/// nothing beside it, in bounded time; `NpyMapMut::create` too (an `Err`, not `SIGBUS`).
#[test]
fn a_full_disk_is_an_error_naming_the_target_and_the_old_file_survives() {
    let Some(fs) = Tmpfs::mount("64m") else { return };
    let target = fs.path().join("data.npy");
    let old = packed(1000);
    old.write_npy(&target).unwrap();
    let before = std::fs::read(&target).unwrap();
    // 96 MB of records: more than the disk holds.
    let big_packed = std::sync::Arc::new(packed(6_000_000));
    let big_padded = std::sync::Arc::new(padded(4_000_000));
    type PathWrite = Box<dyn FnOnce(PathBuf) -> npy_core::Result<()> + Send>;
    let writes: Vec<(&str, PathWrite)> = vec![
        ("write_npy (converted)", {
            let d = big_packed.clone();
            Box::new(move |p| d.write_npy(p))
        }),
        ("write_npy (padded)", {
            let d = big_padded.clone();
            Box::new(move |p| d.write_npy(p))
        }),
        ("write_npy (f64)", Box::new(|p| vec![1.5f64; 12_000_000].write_npy(p))),
        ("NpyFileWriter", {
            let d = big_packed.clone();
            Box::new(move |p| {
                let mut w = NpyFileWriter::<Packed>::create(p)?;
                for part in d.chunks(1 << 20) {
                    w.extend(part)?;
                }
                w.finish()
            })
        }),
        ("npz::Writer::create", {
            let d = big_padded.clone();
            Box::new(move |p| {
                let mut z = npz::Writer::create(p)?;
                z.add("a", &d[..d.len() / 2])?;
                z.add_columns(&d[d.len() / 2..])?;
                z.finish()
            })
        }),
        (
            "npz::Writer::create (deflated)",
            Box::new(|p| {
                let noise: Vec<u64> = (0..9_000_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
                let mut z = npz::Writer::create(p)?;
                z.add_with("noise", &noise, Compression::Deflated { level: 1 })?;
                z.finish()
            }),
        ),
        (
            "NpyMapMut::create",
            Box::new(|p| {
                // SAFETY: nothing else maps or changes the file.
                unsafe { NpyMapMut::create::<f64>(p, vec![12_000_000]) }.map(drop)
            }),
        ),
    ];
    for (api, write) in writes {
        let path = target.clone();
        let e = bounded(api, move || write(path)).err().unwrap_or_else(|| panic!("{api}: no error"));
        assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::StorageFull), "{api}: {e:?}");
        assert_eq!((e.path(), e.access()), (Some(target.as_path()), Some(Access::Write)), "{api}: {e}");
        let message = e.to_string();
        assert!(message.starts_with(&format!("writing '{}'", target.display())), "{api}: {message}");
        assert!(!message.contains(".npy-"), "{api} names a temporary file: {message}");
        assert_eq!(std::fs::read(&target).unwrap(), before, "{api} changed the old file");
        assert_eq!(names(fs.path()), ["data.npy"], "{api} left a file beside the target");
    }
    assert_eq!(Vec::<Packed>::read_npy(&target).unwrap(), old);
}

/// `Appender::append_batches` on a full disk: the writing thread's error is the error
/// (naming the file), the batches written before it stay appended, whole and counted, the
/// failed batch is cut off, and the batches after it are never taken from the iterator.
#[test]
fn batches_appended_to_a_full_disk_stop_at_the_failed_one() {
    let Some(fs) = Tmpfs::mount("16m") else { return };
    let target = fs.path().join("grows.npy");
    padded(10).write_npy(&target).unwrap();
    // Batches of 2 MB (24-byte records): the disk fills during the 8th or so.
    let batch = 2_000_000 / 24;
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (path, count) = (target.clone(), taken.clone());
    let (e, rows) = bounded("append_batches", move || {
        let mut a = npy_core::append::Appender::from_path(&path).unwrap();
        let batches = (0..100).map(|b| {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            padded(batch).into_iter().map(|r| Padded { id: b, ..r }).collect::<Vec<Padded>>()
        });
        (a.append_batches(batches).unwrap_err(), a.rows())
    });
    assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::StorageFull), "{e:?}");
    assert_eq!((e.path(), e.access()), (Some(target.as_path()), Some(Access::Write)), "{e}");
    let taken = taken.load(std::sync::atomic::Ordering::Relaxed);
    assert!((5..=12).contains(&taken), "{taken} batches taken from the iterator");
    // Whole batches only, the last one counted by the header, nothing after the data.
    let back = Vec::<Padded>::read_npy(&target).unwrap();
    assert_eq!(back.len(), rows);
    assert!(rows > 10 && (rows - 10) % batch == 0, "{rows} rows");
    let batches = (rows - 10) / batch;
    assert!(batches < taken && batches >= 4, "{batches} of {taken} batches appended");
    assert_eq!(back[back.len() - 1].id as usize, batches - 1);
    let appender = npy_core::append::Appender::from_path(&target).unwrap();
    assert_eq!(appender.tail_bytes(), 0);
}

/// `Appender::append_file` (what `npy append` runs) onto a full disk, the source on
/// another one: the error names the target being written, not the source being read
/// (`reading 'big.npy': No space left on device` before), and the target keeps its old
/// array with nothing after it.
#[test]
fn a_file_appended_to_a_full_disk_is_an_error_naming_the_target() {
    let Some(fs) = Tmpfs::mount("16m") else { return };
    let target = fs.path().join("grows.npy");
    packed(10).write_npy(&target).unwrap();
    let before = std::fs::read(&target).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let big = elsewhere.path().join("big.npy");
    packed(2_000_000).write_npy(&big).unwrap();
    let (path, source) = (target.clone(), big.clone());
    let e = bounded("append_file", move || {
        npy_core::append::Appender::from_path(&path).unwrap().append_file(&source).unwrap_err()
    });
    assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::StorageFull), "{e:?}");
    assert_eq!((e.path(), e.access()), (Some(target.as_path()), Some(Access::Write)), "{e}");
    assert!(e.to_string().starts_with(&format!("writing '{}'", target.display())), "{e}");
    assert_eq!(std::fs::read(&target).unwrap(), before, "the rows written before the error are cut off");
    assert_eq!(names(fs.path()), ["grows.npy"]);
}

/// The child side of the kill tests: writes to `NPY_KILL_TARGET` in a loop until killed,
/// with the API `NPY_KILL_API`, alternating two contents. Not run on its own (it returns
/// at once without those variables).
#[test]
fn child_writes_until_killed() {
    let (Ok(target), Ok(api)) = (std::env::var("NPY_KILL_TARGET"), std::env::var("NPY_KILL_API")) else { return };
    for round in 0.. {
        let data = padded(400_000 + round % 2);
        let result = match api.as_str() {
            "write_npy" => data.write_npy(&target),
            "NpyFileWriter" => (|| {
                let mut w = NpyFileWriter::<Padded>::create(&target)?;
                for part in data.chunks(50_000) {
                    w.extend(part)?;
                }
                w.finish()
            })(),
            "npz" => (|| {
                let mut z = npz::Writer::create(&target)?;
                z.add("records", &data)?;
                z.add_columns(&data)?;
                z.finish()
            })(),
            other => panic!("unknown api {other}"),
        };
        result.unwrap();
    }
}

/// What a killed writer may leave at the target: the old file or a new one, whole.
fn is_whole(api: &str, path: &Path) -> bool {
    let ok = |n: usize| n == 400_000 || n == 400_001;
    match api {
        "npz" => npz::Reader::from_path(path)
            .and_then(|mut r| r.read::<Vec<Padded>>("records"))
            .is_ok_and(|v| ok(v.len()) && v == padded(v.len())),
        _ => Vec::<Padded>::read_npy(path).is_ok_and(|v| ok(v.len()) && v == padded(v.len())),
    }
}

fn kill_mid_write(dir: &Path, api: &str, rounds: u32) {
    let target = dir.join(if api == "npz" { "k.npz" } else { "k.npy" });
    let exe = std::env::current_exe().unwrap();
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args(["--exact", "child_writes_until_killed", "--nocapture", "--test-threads=1"])
            .env("NPY_KILL_TARGET", &target)
            .env("NPY_KILL_API", api)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Let it write a while (the first round until a first file is there), then kill it.
        if round == 0 {
            let start = std::time::Instant::now();
            while !target.exists() && start.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        std::thread::sleep(Duration::from_millis(40 + (round as u64 * 37) % 160));
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        assert!(!status.success(), "the child stopped by itself: {status}");
        if target.exists() {
            assert!(is_whole(api, &target), "{api}, round {round}: the target is not whole after the kill");
        }
        // A kill between an unnamed file's hidden link and its rename (two system calls)
        // may leave that hidden name, unlocked: the next writer's sweep removes it.
        let target_name = target.file_name().unwrap().to_string_lossy().into_owned();
        let left: Vec<String> = names(dir).into_iter().filter(|n| *n != target_name).collect();
        let hidden = |n: &String| n.starts_with(".npy-") && n.ends_with(".tmp") && n.len() == 21;
        assert!(left.len() <= 1 && left.iter().all(hidden), "{api}, round {round}: left beside the target: {left:?}");
    }
    assert!(target.exists(), "{api}: no write ever completed");
    // The next writer (this process's first into the directory) sweeps what the killed
    // ones left.
    padded(3).write_npy(dir.join("next.npy")).unwrap();
    let mut left = names(dir);
    left.retain(|n| n != "next.npy");
    assert_eq!(left, [target.file_name().unwrap().to_string_lossy().into_owned()], "{api}: not swept");
    std::fs::remove_file(dir.join("next.npy")).unwrap();
}

#[test]
fn a_killed_writer_leaves_the_target_whole_and_nothing_beside_it_on_ext4() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for api in ["write_npy", "NpyFileWriter", "npz"] {
        let sub = dir.path().join(api);
        std::fs::create_dir(&sub).unwrap();
        kill_mid_write(&sub, api, 8);
    }
}

#[test]
fn a_killed_writer_leaves_the_target_whole_and_nothing_beside_it_on_tmpfs() {
    let Some(fs) = Tmpfs::mount("256m") else { return };
    for api in ["write_npy", "NpyFileWriter", "npz"] {
        let sub = fs.path().join(api);
        std::fs::create_dir(&sub).unwrap();
        kill_mid_write(&sub, api, 8);
    }
}
