//! What the bench targets (`io`, `records`, `npz`, `mmap`, `arrow`) share: interleaved
//! measurement rounds, the page-cache and disk helpers, the machine limits, and the seismic
//! `Trace` records of `records` and `arrow` ([`trace`]).
//!
//! Each target compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use std::error::Error;
use std::fs::File;
use std::hint::black_box;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub mod trace;

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// A bench target's command line (after `cargo bench --bench NAME --`): `--dir DIR`
/// (scratch directory, default `target/bench`), `--repeat K` (runs per measurement,
/// default 3, at least 1), `--keep` (leave the files for NumPy), `--peer PYTHON` (time
/// NumPy in the same rounds: see [`Peer`]; for the targets that take it), and the target's
/// own numeric options with their defaults.
#[derive(Debug)]
pub struct Args {
    pub dir: PathBuf,
    pub repeat: usize,
    pub keep: bool,
    pub peer: Option<PathBuf>,
    numbers: Vec<(&'static str, usize)>,
}

impl Args {
    /// Parses the process's arguments for target `name`, whose own options are `numbers`
    /// (`("--bytes", default)`, ...).
    pub fn parse(name: &str, numbers: &[(&'static str, usize)]) -> Result<Args> {
        let mut args = Args {
            dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("bench"),
            repeat: 3,
            keep: false,
            peer: None,
            numbers: numbers.to_vec(),
        };
        let usage = || {
            let own: String = numbers.iter().map(|(flag, _)| format!(" [{flag} N]")).collect();
            format!("usage: {name} [--dir DIR]{own} [--repeat K] [--keep] [--peer PYTHON]")
        };
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value; {}", usage()));
            match arg.as_str() {
                // Added by `cargo bench` for harness-less benches.
                "--bench" => {}
                "--keep" => args.keep = true,
                "--dir" => args.dir = PathBuf::from(value()?),
                "--peer" => args.peer = Some(PathBuf::from(value()?)),
                flag if flag == "--repeat" || numbers.iter().any(|(f, _)| *f == flag) => {
                    let text = value()?;
                    let number = text.parse().map_err(|e| format!("{flag} {text}: {e}"))?;
                    match args.numbers.iter_mut().find(|(f, _)| *f == flag) {
                        Some((_, slot)) => *slot = number,
                        None => args.repeat = number,
                    }
                }
                other => return Err(format!("unknown argument {other:?}; {}", usage()).into()),
            }
        }
        if args.repeat == 0 {
            return Err("--repeat must be at least 1".into());
        }
        Ok(args)
    }

    /// The value of the target's option `flag` (one of those given to [`Args::parse`]).
    pub fn number(&self, flag: &str) -> usize {
        match self.numbers.iter().find(|(f, _)| *f == flag) {
            Some(&(_, n)) => n,
            None => panic!("{flag} is not an option of this bench"),
        }
    }
}

/// A measurement: its name (as the `bench` lines and xtask give it), the data bytes it
/// moves (for the GiB/s column), and the operation, which runs once and returns the time
/// it took: ours, or the [`Peer`]'s measurement of that name.
#[derive(Debug)]
pub struct Measure<C> {
    pub name: &'static str,
    pub bytes: usize,
    run: Option<fn(&C) -> Result<Duration>>,
}

impl<C> Measure<C> {
    pub fn new(name: &'static str, bytes: usize, run: fn(&C) -> Result<Duration>) -> Measure<C> {
        Measure { name, bytes, run: Some(run) }
    }

    /// The peer's measurement `name` (`xtask/bench.py`'s), timed by the peer process.
    pub fn peer(name: &'static str, bytes: usize) -> Measure<C> {
        Measure { name, bytes, run: None }
    }

    fn run(&self, ctx: &C, peer: &mut Option<Peer>) -> Result<Duration> {
        match (self.run, peer) {
            (Some(run), _) => run(ctx),
            (None, Some(peer)) => peer.run(self.name),
            (None, None) => Err(format!("{} is the peer's, and no peer runs", self.name).into()),
        }
    }
}

/// Runs every measurement `repeat` times, one round of all at a time, each round starting
/// one measurement later (so none always runs first, after the previous round's frees),
/// and prints `bench <name> best=<s> median=<s> bytes=<n>` for each. The peer's
/// measurements among them ([`Measure::peer`]) run in `peer`, in the same rounds, so the
/// noise of this shared machine hits NumPy's runs and ours alike.
///
/// Before each run (untimed), `hot` bytes of memory are touched and freed (see [`heat`]):
/// more than the run allocates.
pub fn run_rounds<C>(
    ctx: &C,
    measures: &[Measure<C>],
    repeat: usize,
    hot: usize,
    peer: &mut Option<Peer>,
) -> Result<()> {
    // One untimed round first: the first touch of memory this VM has not used lately is
    // several times slower (seconds per GiB), whichever measurement happens to do it.
    for m in measures {
        heat(hot)?;
        let t = secs(m.run(ctx, peer).map_err(|e| format!("{} (warm-up): {e}", m.name))?);
        eprintln!("  {:<22} warm-up: {t:.6} s (not counted)", m.name);
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(repeat); measures.len()];
    for round in 0..repeat {
        for k in 0..measures.len() {
            let i = (round + k) % measures.len();
            let m = &measures[i];
            heat(hot)?;
            let t = secs(m.run(ctx, peer).map_err(|e| format!("{}: {e}", m.name))?);
            eprintln!("  {:<22} run {}/{repeat}: {t:.6} s", m.name, round + 1);
            times[i].push(t);
        }
    }
    for (m, runs) in measures.iter().zip(&mut times) {
        runs.sort_by(f64::total_cmp);
        let best = runs[0];
        let mid = runs.len() / 2;
        let median = if runs.len() % 2 == 1 { runs[mid] } else { (runs[mid - 1] + runs[mid]) / 2.0 };
        println!("bench {} best={best:.9} median={median:.9} bytes={}", m.name, m.bytes);
    }
    Ok(())
}

/// Untimed runs [`run_user_loops`] starts each loop with: the first one or two saves of a
/// large file on this VM touch memory it has not used lately (a 512 MB save took 1.2 s in
/// its first rounds and 0.11 s after, for npy and NumPy alike).
pub const USER_WARM_UP_ROUNDS: usize = 2;

/// Runs each measure as a script's loop of saves times it, one loop after the other:
/// [`USER_WARM_UP_ROUNDS`] untimed runs, then `max(repeat, 5)` timed ones, back to back,
/// nothing flushed or touched in between; prints `bench <name> ...` for each, and then
/// calls `done` (to remove the loop's files). [`run_rounds`] removes each write's file,
/// flushes dirty pages and touches memory before every run, so no run there pays for
/// freeing an old file or for page cache memory that sat free: these loops do, each for
/// its own files only. (Loops of npy's and NumPy's saves interleaved had each save pay
/// for the other's writeback of the GiB before it: medians swung by 2x between runs.)
pub fn run_user_loops<C>(
    ctx: &C,
    measures: &[Measure<C>],
    repeat: usize,
    peer: &mut Option<Peer>,
    mut done: impl FnMut() -> Result<()>,
) -> Result<()> {
    let rounds = repeat.max(5);
    for m in measures {
        let mut runs = Vec::with_capacity(rounds);
        for round in 0..USER_WARM_UP_ROUNDS + rounds {
            let t = secs(m.run(ctx, peer).map_err(|e| format!("{}: {e}", m.name))?);
            if round < USER_WARM_UP_ROUNDS {
                eprintln!("  {:<22} warm-up {}: {t:.6} s (not counted)", m.name, round + 1);
            } else {
                eprintln!("  {:<22} run {}/{rounds}: {t:.6} s", m.name, round + 1 - USER_WARM_UP_ROUNDS);
                runs.push(t);
            }
        }
        runs.sort_by(f64::total_cmp);
        let mid = runs.len() / 2;
        let median = if runs.len() % 2 == 1 { runs[mid] } else { (runs[mid - 1] + runs[mid]) / 2.0 };
        println!("bench {} best={:.9} median={median:.9} bytes={}", m.name, runs[0], m.bytes);
        done()?;
    }
    Ok(())
}

/// NumPy's side of a bench target, as a process that times its measurements when asked:
/// `PYTHON xtask/bench.py serve PART DIR SIZE`, which loads the target's files, says
/// `ready NAME...` and then answers each line `run NAME` with `time SECONDS` (see its
/// doc). Its runs then interleave with ours ([`run_rounds`]) instead of coming minutes
/// later, when the machine may be calmer or busier.
///
/// Dropping it closes its input, on which it exits, and waits for it.
#[derive(Debug)]
pub struct Peer {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
    output: std::io::BufReader<std::process::ChildStdout>,
    names: Vec<String>,
}

impl Peer {
    /// Starts the peer of `part` on the files in `dir` (made for `size`) and waits until
    /// it is ready (its loads and checks done).
    pub fn start(python: &Path, part: &str, dir: &Path, size: usize) -> Result<Peer> {
        use std::process::{Command, Stdio};
        // The workspace's root: this package's directory, or above it for benches of
        // other packages that share this module.
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .map(|dir| dir.join("xtask").join("bench.py"))
            .find(|script| script.exists())
            .ok_or("no xtask/bench.py above this package")?;
        let mut child = Command::new(python)
            .arg(&script)
            .args(["serve", part])
            .arg(dir)
            .arg(size.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {} {}: {e}", python.display(), script.display()))?;
        let (input, output) = (child.stdin.take(), child.stdout.take());
        let output = std::io::BufReader::new(output.ok_or("the peer has no output")?);
        let mut peer = Peer { child, input, output, names: Vec::new() };
        let ready = peer.line()?;
        let names = ready.strip_prefix("ready").ok_or_else(|| format!("the peer said {ready:?}, not ready"))?;
        peer.names = names.split_whitespace().map(str::to_string).collect();
        Ok(peer)
    }

    /// Runs the peer's measurement `name` once and returns its time.
    fn run(&mut self, name: &str) -> Result<Duration> {
        use std::io::Write;
        if !self.names.iter().any(|n| n == name) {
            return Err(format!("the peer has no measurement {name} (it has {})", self.names.join(", ")).into());
        }
        let input = self.input.as_mut().ok_or("the peer's input is closed")?;
        writeln!(input, "run {name}").and_then(|()| input.flush()).map_err(|e| format!("the peer stopped: {e}"))?;
        let answer = self.line()?;
        let seconds: f64 = answer
            .strip_prefix("time ")
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("the peer answered {answer:?} to run {name}"))?;
        Ok(Duration::from_secs_f64(seconds))
    }

    /// The peer's next line, without its newline; its end is an error.
    fn line(&mut self) -> Result<String> {
        use std::io::BufRead;
        let mut line = String::new();
        if self.output.read_line(&mut line)? == 0 {
            return Err("the peer stopped (its error is above)".into());
        }
        Ok(line.trim_end().to_string())
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        drop(self.input.take());
        let _ = self.child.wait();
    }
}

/// Touches `bytes` of fresh memory and frees it, so the next measurement finds that much
/// free memory the host has backed.
///
/// This VM's balloon device reports free memory to the host (free page reporting, in 2 MiB
/// blocks, a pass about every two seconds), which takes it back: the next first touch of
/// such memory faults into the host and costs about a second per GiB instead of a fifth.
/// Which measurement paid was a lottery, and one that always followed a slow measurement
/// (whose predecessor's frees were reported meanwhile) always lost. Free blocks not yet
/// reported are handed out first, so touching memory right before each run gives every
/// run, the limits' included, the same start. `xtask/bench.py` does the same for NumPy.
pub fn heat(bytes: usize) -> Result<()> {
    #[cfg(target_os = "linux")]
    if bytes > 0 {
        let mut buffer = limit::HugeBuffer::new(bytes)?;
        // One write per 4 KiB page faults every page in (a huge page at its first write).
        for byte in buffer.as_mut_slice().iter_mut().step_by(4096) {
            *byte = 1;
        }
        black_box(buffer.as_slice());
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
    Ok(())
}

pub fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Reads `path` through once so it is in the page cache.
pub fn warm(path: &Path) -> Result<()> {
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

pub fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}

/// Flushes dirty pages of all files to disk, so earlier writes are not written back
/// while a measurement runs.
pub fn sync() {
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
pub mod limit {
    use super::{remove_if_present, sync, Result};
    use std::fs::{self, File};
    use std::hint::black_box;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::path::Path;
    use std::time::{Duration, Instant};

    const HUGE_PAGE: usize = 2 << 20;

    /// An anonymous private mapping whose `len` bytes start on a huge-page boundary and
    /// are advised to use transparent huge pages. Zero-filled by the kernel; unmapped on drop.
    #[derive(Debug)]
    pub struct HugeBuffer {
        map: *mut libc::c_void,
        map_len: usize,
        start: *mut u8,
        len: usize,
    }

    impl HugeBuffer {
        pub(super) fn new(len: usize) -> Result<HugeBuffer> {
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

        pub(super) fn as_mut_slice(&mut self) -> &mut [u8] {
            // SAFETY:
            // - `start..start + len` lies inside the live mapping, readable and writable;
            // - every byte is initialized (anonymous mappings are zero-filled);
            // - the slice borrows `self` mutably, so nothing else aliases it, and it cannot
            //   outlive the mapping, which only `drop` unmaps.
            unsafe { std::slice::from_raw_parts_mut(self.start, self.len) }
        }

        pub fn as_slice(&self) -> &[u8] {
            // SAFETY:
            // - `start..start + len` lies inside the live mapping, readable;
            // - every byte is initialized (anonymous mappings are zero-filled);
            // - the slice borrows `self`, so no `as_mut_slice` borrow is alive, and it
            //   cannot outlive the mapping, which only `drop` unmaps.
            unsafe { std::slice::from_raw_parts(self.start, self.len) }
        }
    }

    impl Drop for HugeBuffer {
        fn drop(&mut self) {
            // SAFETY:
            // - `map` and `map_len` are exactly the mapping made in `new`, unmapped only here;
            // - no slice of it outlives `self` (both accessors borrow `self`).
            unsafe { libc::munmap(self.map, self.map_len) };
        }
    }

    /// [`read`] of each of `paths`, one after the other, each buffer dropped before the
    /// next read: the time of the reads alone.
    pub fn read_files(paths: &[std::path::PathBuf]) -> Result<Duration> {
        let mut total = Duration::ZERO;
        for path in paths {
            let (elapsed, buffer) = read(path)?;
            total += elapsed;
            drop(buffer);
        }
        Ok(total)
    }

    /// Page cache into a huge-page buffer: open, map, `read()` the whole file. Returns the
    /// time and the buffer (to check after the clock stopped; unmapping it is not timed).
    pub fn read(path: &Path) -> Result<(Duration, HugeBuffer)> {
        let started = Instant::now();
        let mut file = File::open(path)?;
        let len = usize::try_from(file.metadata()?.len())?;
        let mut buffer = HugeBuffer::new(len)?;
        file.read_exact(black_box(buffer.as_mut_slice()))?;
        Ok((started.elapsed(), buffer))
    }

    /// [`read`] with a second CPU: while `read()` fills the buffer from its start, a second
    /// thread faults its pages in from the end backwards (`madvise(MADV_POPULATE_WRITE)`,
    /// 16 MiB at a time, until the read is done), so the kernel zeroes fresh pages on two
    /// CPUs. What npy's large reads do (`read::buffer::prefaulting`): the limit for them on
    /// a machine with a CPU to spare.
    pub fn read_two_cpus(path: &Path) -> Result<(Duration, HugeBuffer)> {
        const STEP: usize = 16 << 20;
        let started = Instant::now();
        let mut file = File::open(path)?;
        let len = usize::try_from(file.metadata()?.len())?;
        let mut buffer = HugeBuffer::new(len)?;
        let (start, end) = (buffer.start as usize, buffer.start as usize + len / 4096 * 4096);
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| -> Result<()> {
            scope.spawn(|| {
                let mut to = end;
                while to > start && !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let from = to.saturating_sub(STEP).max(start);
                    // SAFETY: `from..to` is whole 4 KiB pages (`start` is huge-page
                    // aligned, `STEP` and `end - start` multiples of 4 KiB) inside the
                    // mapping, which `buffer` keeps until this scope joins the thread;
                    // MADV_POPULATE_WRITE backs pages without changing any present page.
                    let r = unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_POPULATE_WRITE) };
                    if r != 0 {
                        return;
                    }
                    to = from;
                }
            });
            let read = file.read_exact(black_box(buffer.as_mut_slice()));
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(read?)
        })?;
        Ok((started.elapsed(), buffer))
    }

    /// Runs a limit read (`read` or `read_two_cpus`) of `path` and returns its time; fails
    /// unless it gave the bytes of `file` (the path's contents, compared at the start and
    /// the end).
    pub fn checked_read(
        read: fn(&Path) -> Result<(Duration, HugeBuffer)>,
        path: &Path,
        file: &[u8],
    ) -> Result<Duration> {
        let (elapsed, buffer) = read(path)?;
        let got = buffer.as_slice();
        let k = file.len().min(4096);
        if got.len() != file.len() || got[..k] != file[..k] || got[got.len() - k..] != file[file.len() - k..] {
            return Err(format!("limit read gave {} bytes unlike the file's {}", got.len(), file.len()).into());
        }
        Ok(elapsed)
    }

    /// A preallocated file: create `path`, `fallocate` keeping its size (as `np.save`
    /// does, and npy's writes: faster than extending it first), one `write()` of `buf`, `fsync`
    /// when `durable` (what a synced write cannot beat), close (after removing any old
    /// `path` and flushing dirty pages, untimed). Checks the size and removes the file
    /// afterwards.
    pub fn write(path: &Path, buf: &[u8], durable: bool) -> Result<Duration> {
        remove_if_present(path)?;
        sync();
        let started = Instant::now();
        let mut file = File::create(path)?;
        let len = libc::off_t::try_from(buf.len())?;
        // SAFETY:
        // - `fallocate` on a file descriptor owned by `file`, open for writing, with
        //   FALLOC_FL_KEEP_SIZE (allocate only) and a non-negative range;
        // - it touches no memory of this process.
        let allocated = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, len) };
        if allocated != 0 {
            return Err(format!("fallocate: {}", std::io::Error::last_os_error()).into());
        }
        file.write_all(black_box(buf))?;
        if durable {
            file.sync_all()?;
        }
        drop(file);
        let elapsed = started.elapsed();
        if fs::metadata(path)?.len() != buf.len() as u64 {
            return Err(format!("{} has the wrong size", path.display()).into());
        }
        fs::remove_file(path)?;
        Ok(elapsed)
    }
}
