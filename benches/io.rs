//! `cargo bench --bench io`: npy reading and writing a big `<f8` file, next to what the
//! machine can do at best.
//!
//! `cargo xtask bench` runs this, then times NumPy on the same files, and prints the ratios
//! the speed goals name. Arguments (after `--`):
//!
//! - `--dir DIR`: scratch directory (default `target/bench`);
//! - `--bytes N`: data bytes per file, a multiple of 8 (default 1 GiB = 2^27 `f64`s);
//! - `--repeat K`: runs per measurement (default 3);
//! - `--keep`: leave `le.npy` and `be.npy` in `DIR` (for NumPy) instead of deleting them.
//!
//! Measurements, each run once untimed and then `K` times in interleaved rounds (so noise on
//! this shared machine hits them alike; each round starts one measurement later), with the page cache warm for reads and dirty pages flushed before
//! each write:
//!
//! - `read_le`: `Vec::<f64>::read_npy` of a `<f8` file;
//! - `read_be`: the same values from a `>f8` file (byte-swapped into native `f64`s);
//! - `fs_read`: `std::fs::read` of the `<f8` file (context: a plain `Vec` of 4 KiB pages);
//! - `limit_read`: the machine limit: the page cache copied by `read()` into a fresh
//!   anonymous mapping advised to use transparent huge pages;
//! - `write`: `data.write_npy(out.npy)`, atomic rename included;
//! - `limit_write`: the machine limit: create a file, `fallocate` it, `write()` an in-memory
//!   buffer of the same size, close.
//!
//! Each prints one line to stdout: `bench <name> best=<seconds> median=<seconds> bytes=<n>`
//! (`bytes` is the data size). Times cover the operation only: freeing the result and
//! checking it (first and last value, so nothing can be skipped and a wrong result fails
//! the bench) come after the clock stops.

use std::error::Error;
use std::fs::{self, File};
use std::hint::black_box;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use npy_core::header::Header;
use npy_core::prelude::*;
use npy_core::DynArray;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The value stored at index `i`: exact in `f64` for any index below 2^50, and different
/// in every byte position from its byte-swapped self, so a missed swap shows.
fn value(i: usize) -> f64 {
    i as f64 + 0.25
}

/// Command-line settings.
#[derive(Debug)]
struct Args {
    dir: PathBuf,
    bytes: usize,
    repeat: usize,
    keep: bool,
}

impl Args {
    fn parse() -> Result<Args> {
        let mut args = Args {
            dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("bench"),
            bytes: 1 << 30,
            repeat: 3,
            keep: false,
        };
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
            match arg.as_str() {
                // Added by `cargo bench` for harness-less benches.
                "--bench" => {}
                "--keep" => args.keep = true,
                "--dir" => args.dir = PathBuf::from(value("--dir")?),
                "--bytes" => args.bytes = value("--bytes")?.parse().map_err(|e| format!("--bytes: {e}"))?,
                "--repeat" => args.repeat = value("--repeat")?.parse().map_err(|e| format!("--repeat: {e}"))?,
                other => {
                    return Err(format!(
                        "unknown argument {other:?}; usage: io [--dir DIR] [--bytes N] [--repeat K] [--keep]"
                    )
                    .into())
                }
            }
        }
        if args.bytes < 16 || !args.bytes.is_multiple_of(8) {
            return Err(format!("--bytes must be a multiple of 8, at least 16 (got {})", args.bytes).into());
        }
        if args.repeat == 0 {
            return Err("--repeat must be at least 1".into());
        }
        Ok(args)
    }
}

/// What the measurements share.
#[derive(Debug)]
struct Ctx {
    /// Number of `f64`s.
    n: usize,
    /// The values, in memory (written by `write`).
    data: Vec<f64>,
    /// The same values as big-endian bytes; its data is also the buffer `limit_write` writes.
    be_array: DynArray,
    le: PathBuf,
    be: PathBuf,
    out: PathBuf,
    limit_out: PathBuf,
}

impl Ctx {
    fn data_bytes(&self) -> usize {
        self.n * 8
    }
}

/// A measurement: runs the operation once and returns the time it took.
type Measure = fn(&Ctx) -> Result<Duration>;

fn main() -> Result<()> {
    let args = Args::parse()?;
    fs::create_dir_all(&args.dir)?;
    let n = args.bytes / 8;
    let ctx = setup(&args.dir, n)?;
    eprintln!("io bench: {} bytes of data per file, {} runs each, in {}", args.bytes, args.repeat, args.dir.display());

    let mut reads: Vec<(&str, Measure)> = vec![("read_le", read_le), ("read_be", read_be), ("fs_read", fs_read)];
    let mut writes: Vec<(&str, Measure)> = vec![("write", write)];
    #[cfg(target_os = "linux")]
    {
        reads.insert(0, ("limit_read", limit::read));
        writes.insert(0, ("limit_write", limit::write));
    }

    for path in [&ctx.le, &ctx.be] {
        warm(path)?;
    }
    run_rounds(&ctx, &reads, args.repeat)?;
    run_rounds(&ctx, &writes, args.repeat)?;

    if !args.keep {
        fs::remove_file(&ctx.le)?;
        fs::remove_file(&ctx.be)?;
    }
    Ok(())
}

/// Makes the values and writes `le.npy` and `be.npy`, then flushes them to disk so their
/// writeback does not run during the measurements.
fn setup(dir: &Path, n: usize) -> Result<Ctx> {
    let started = Instant::now();
    let data: Vec<f64> = (0..n).map(value).collect();
    let mut be_bytes = vec![0u8; n * 8];
    for (dst, v) in be_bytes.chunks_exact_mut(8).zip(&data) {
        dst.copy_from_slice(&v.to_be_bytes());
    }
    let be_array = DynArray::new(Header::new(">f8".parse()?, vec![n]), be_bytes)?;
    let ctx = Ctx {
        n,
        data,
        be_array,
        le: dir.join("le.npy"),
        be: dir.join("be.npy"),
        out: dir.join("out.npy"),
        limit_out: dir.join("limit-out.bin"),
    };
    ctx.data.write_npy(&ctx.le)?;
    ctx.be_array.write_npy(&ctx.be)?;
    sync();
    eprintln!("io bench: wrote {} and {} in {:.2} s", ctx.le.display(), ctx.be.display(), secs(started.elapsed()));
    Ok(ctx)
}

/// Runs every measurement `repeat` times, one round of all at a time, each round starting
/// one measurement later (so none always runs first, after the previous round's frees),
/// and prints a line for each.
fn run_rounds(ctx: &Ctx, measures: &[(&str, Measure)], repeat: usize) -> Result<()> {
    // One untimed round first: the first touch of memory this VM has not used lately is
    // several times slower (seconds per GiB), whichever measurement happens to do it.
    for (name, measure) in measures {
        let t = secs(measure(ctx).map_err(|e| format!("{name} (warm-up): {e}"))?);
        eprintln!("  {name:<12} warm-up: {t:.3} s (not counted)");
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(repeat); measures.len()];
    for round in 0..repeat {
        for k in 0..measures.len() {
            let i = (round + k) % measures.len();
            let (name, measure) = measures[i];
            let t = secs(measure(ctx).map_err(|e| format!("{name}: {e}"))?);
            eprintln!("  {name:<12} run {}/{repeat}: {t:.3} s", round + 1);
            times[i].push(t);
        }
    }
    for ((name, _), runs) in measures.iter().zip(&mut times) {
        runs.sort_by(f64::total_cmp);
        let best = runs[0];
        let mid = runs.len() / 2;
        let median = if runs.len() % 2 == 1 { runs[mid] } else { (runs[mid - 1] + runs[mid]) / 2.0 };
        println!("bench {name} best={best:.6} median={median:.6} bytes={}", ctx.data_bytes());
    }
    Ok(())
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Reads `path` through once so it is in the page cache.
fn warm(path: &Path) -> Result<()> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 16 << 20];
    let mut total = 0u64;
    loop {
        match file.read(&mut buf)? {
            0 => break,
            k => total += k as u64,
        }
    }
    black_box(&buf);
    if total != file.metadata()?.len() {
        return Err(format!("{}: read {total} bytes of {}", path.display(), file.metadata()?.len()).into());
    }
    Ok(())
}

/// Fails unless `v` holds the `n` values of [`value`] (checked at both ends and the middle).
fn check_values(v: &[f64], n: usize) -> Result<()> {
    if v.len() != n {
        return Err(format!("got {} values, expected {n}", v.len()).into());
    }
    for i in [0, n / 2, n - 1] {
        if v[i] != value(i) {
            return Err(format!("value {i} is {}, expected {}", v[i], value(i)).into());
        }
    }
    Ok(())
}

/// Fails unless `file` is a whole `.npy` file of `n` `f64`s whose last value is right,
/// in little-endian (`<f8`) bytes.
fn check_file_tail(file: &[u8], n: usize) -> Result<()> {
    let expect = value(n - 1).to_le_bytes();
    if file.len() < n * 8 || file[file.len() - 8..] != expect {
        return Err(format!("file of {} bytes does not end with value {}", file.len(), value(n - 1)).into());
    }
    Ok(())
}

fn read_le(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let v = black_box(Vec::<f64>::read_npy(&c.le)?);
    let elapsed = started.elapsed();
    check_values(&v, c.n)?;
    Ok(elapsed)
}

fn read_be(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let v = black_box(Vec::<f64>::read_npy(&c.be)?);
    let elapsed = started.elapsed();
    check_values(&v, c.n)?;
    Ok(elapsed)
}

fn fs_read(c: &Ctx) -> Result<Duration> {
    let started = Instant::now();
    let bytes = black_box(fs::read(&c.le)?);
    let elapsed = started.elapsed();
    check_file_tail(&bytes, c.n)?;
    Ok(elapsed)
}

fn write(c: &Ctx) -> Result<Duration> {
    remove_if_present(&c.out)?;
    sync();
    let started = Instant::now();
    black_box(&c.data).write_npy(&c.out)?;
    let elapsed = started.elapsed();
    let mut file = File::open(&c.out)?;
    let len = file.metadata()?.len();
    let mut tail = [0u8; 8];
    file.seek(SeekFrom::End(-8))?;
    file.read_exact(&mut tail)?;
    if len < c.data_bytes() as u64 || tail != value(c.n - 1).to_le_bytes() {
        return Err(format!("{}: {len} bytes, last value wrong", c.out.display()).into());
    }
    fs::remove_file(&c.out)?;
    Ok(elapsed)
}

fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}

/// Flushes dirty pages of all files to disk, so earlier writes are not written back
/// while a measurement runs.
fn sync() {
    #[cfg(unix)]
    {
        // SAFETY:
        // - `sync` takes no arguments and touches no memory of this process;
        // - it has no preconditions and cannot fail.
        unsafe { libc::sync() };
    }
}

/// The machine limits, through the system calls directly.
#[cfg(target_os = "linux")]
mod limit {
    use super::*;
    use std::os::fd::AsRawFd;

    const HUGE_PAGE: usize = 2 << 20;

    /// An anonymous private mapping whose `len` bytes start on a huge-page boundary and
    /// are advised to use transparent huge pages. Zero-filled by the kernel; unmapped on drop.
    struct HugeBuffer {
        map: *mut libc::c_void,
        map_len: usize,
        start: *mut u8,
        len: usize,
    }

    impl HugeBuffer {
        fn new(len: usize) -> Result<HugeBuffer> {
            let rounded = len.next_multiple_of(HUGE_PAGE);
            let map_len = rounded + HUGE_PAGE;
            // SAFETY:
            // - a null address lets the kernel choose where to map, so no existing mapping
            //   is replaced;
            // - MAP_PRIVATE | MAP_ANONYMOUS with fd -1 and offset 0 maps fresh zeroed memory
            //   backed by no file;
            // - the result is checked against MAP_FAILED below before any use.
            let map = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if map == libc::MAP_FAILED {
                return Err(format!("mmap of {map_len} bytes: {}", std::io::Error::last_os_error()).into());
            }
            let offset = (map as usize).next_multiple_of(HUGE_PAGE) - map as usize;
            // SAFETY:
            // - `offset < HUGE_PAGE` and `offset + rounded <= map_len`, so the pointer stays
            //   inside the mapping just made.
            let start = unsafe { map.cast::<u8>().add(offset) };
            let buffer = HugeBuffer { map, map_len, start, len };
            // SAFETY:
            // - `start..start + rounded` lies inside the mapping (see above) and is
            //   huge-page aligned, as MADV_HUGEPAGE wants;
            // - the advice only changes how the kernel backs the pages, never their contents.
            let advised = unsafe { libc::madvise(start.cast(), rounded, libc::MADV_HUGEPAGE) };
            if advised != 0 {
                return Err(format!("madvise(MADV_HUGEPAGE): {}", std::io::Error::last_os_error()).into());
            }
            Ok(buffer)
        }

        fn as_mut_slice(&mut self) -> &mut [u8] {
            // SAFETY:
            // - `start..start + len` lies inside the live mapping, readable and writable;
            // - every byte is initialized (anonymous mappings are zero-filled);
            // - the slice borrows `self` mutably, so nothing else aliases it, and it cannot
            //   outlive the mapping, which only `drop` unmaps.
            unsafe { std::slice::from_raw_parts_mut(self.start, self.len) }
        }
    }

    impl Drop for HugeBuffer {
        fn drop(&mut self) {
            // SAFETY:
            // - `map` and `map_len` are exactly the mapping made in `new`, unmapped only here;
            // - no slice of it outlives `self` (`as_mut_slice` borrows `self`).
            unsafe { libc::munmap(self.map, self.map_len) };
        }
    }

    /// Page cache into a huge-page buffer: open, map, `read()` the whole file.
    pub(super) fn read(c: &Ctx) -> Result<Duration> {
        let started = Instant::now();
        let mut file = File::open(&c.le)?;
        let len = usize::try_from(file.metadata()?.len())?;
        let mut buffer = HugeBuffer::new(len)?;
        file.read_exact(black_box(buffer.as_mut_slice()))?;
        let elapsed = started.elapsed();
        check_file_tail(buffer.as_mut_slice(), c.n)?;
        drop(buffer);
        Ok(elapsed)
    }

    /// A preallocated file: create, `fallocate`, one `write()` of an in-memory buffer, close.
    pub(super) fn write(c: &Ctx) -> Result<Duration> {
        let buf = c.be_array.data();
        remove_if_present(&c.limit_out)?;
        sync();
        let started = Instant::now();
        let mut file = File::create(&c.limit_out)?;
        let len = libc::off_t::try_from(buf.len())?;
        // SAFETY:
        // - `fallocate` on a file descriptor owned by `file`, open for writing, with mode 0
        //   (allocate and extend) and a non-negative range;
        // - it touches no memory of this process.
        let allocated = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
        if allocated != 0 {
            return Err(format!("fallocate: {}", std::io::Error::last_os_error()).into());
        }
        file.write_all(black_box(buf))?;
        drop(file);
        let elapsed = started.elapsed();
        if fs::metadata(&c.limit_out)?.len() != buf.len() as u64 {
            return Err(format!("{} has the wrong size", c.limit_out.display()).into());
        }
        fs::remove_file(&c.limit_out)?;
        Ok(elapsed)
    }
}
