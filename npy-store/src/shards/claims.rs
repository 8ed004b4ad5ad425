//! A gather's local reads shared out between the calling thread and helper threads
//! ([`Claims`]), and where helpers wait for the next gather on the same array ([`Relay`]).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use npy_core::Result;
use tokio::sync::oneshot;

use super::{cpus, in_data, Inner, Read, RUNS_PER_THREAD};
use crate::error::io_error;

/// Where the runs a thread reads go: slices of the gathered rows.
pub(super) trait Sink {
    /// The bytes for `count` rows from index `at` among the rows gathered.
    fn rows(&mut self, at: usize, count: usize) -> &mut [u8];
}

/// The gathered rows themselves.
pub(super) struct Out<'a> {
    pub(super) out: &'a mut [u8],
    pub(super) width: usize,
}

impl Sink for Out<'_> {
    fn rows(&mut self, at: usize, count: usize) -> &mut [u8] {
        &mut self.out[at * self.width..(at + count) * self.width]
    }
}

/// A helper's rows, in a buffer of its own, copied to their places after
/// ([`Own::copy_to`]).
pub(super) struct Own {
    bytes: Vec<u8>,
    /// Each run read: where its rows go among those gathered, where they are in `bytes`,
    /// how many.
    placed: Vec<(usize, usize, usize)>,
    width: usize,
}

impl Sink for Own {
    fn rows(&mut self, at: usize, count: usize) -> &mut [u8] {
        let start = self.bytes.len();
        self.placed.push((at, start, count));
        self.bytes.resize(start + count * self.width, 0);
        &mut self.bytes[start..]
    }
}

impl Own {
    /// Puts the rows in their places among the gathered rows `out`.
    pub(super) fn copy_to(&self, out: &mut [u8]) {
        let width = self.width;
        for &(at, start, count) in &self.placed {
            out[at * width..(at + count) * width].copy_from_slice(&self.bytes[start..start + count * width]);
        }
    }
}

/// Reads of a gather taken [`CLAIM`] at a time by the calling thread (from the first on)
/// and its helpers (from the last back), until the two ends meet. Threads at either end read
/// different files, as reads come in shard order: two threads reading one file at once
/// contend for it in the kernel.
pub(super) struct Claims {
    inner: Arc<Inner>,
    reads: Vec<Read>,
    /// The reads not yet claimed, `first << 32 | end`: the front claims from `first` on,
    /// the back from `end` back.
    left: AtomicU64,
    /// Set when a read fails: no thread claims more.
    failed: AtomicBool,
    /// Each helper's: set before its first claim. A helper that was not engaged when the
    /// reads ran out never claims any, so it need not be awaited.
    engaged: Vec<AtomicBool>,
    /// Each helper's rows, put here when it is done (then its job ends).
    done: Vec<Mutex<Option<Result<Own>>>>,
}

/// How long the caller spins for a helper to finish before it waits for its job's end: a
/// helper finishes about when the caller does (they claim the last reads between them), and
/// a wait that sleeps costs a wake-up of about that much on a virtual machine.
const SPIN_FOR_HELPER: Duration = Duration::from_micros(20);

/// Reads a thread claims at once: few, so that threads share the work evenly, enough that
/// claiming costs little beside the reads.
const CLAIM: u64 = 4;

impl Claims {
    /// Claims on `reads` (fewer than 2^32) for the caller and `helpers` helpers.
    pub(super) fn new(inner: Arc<Inner>, reads: Vec<Read>, helpers: usize) -> Claims {
        let engaged = (0..helpers).map(|_| AtomicBool::new(false)).collect();
        let done = (0..helpers).map(|_| Mutex::new(None)).collect();
        let left = AtomicU64::new(reads.len() as u64);
        Claims { inner, reads, left, failed: AtomicBool::new(false), engaged, done }
    }

    /// The next reads to make from the front (`front`) or the back, if any are left and none
    /// failed.
    fn claim(&self, front: bool) -> Option<&[Read]> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let take = |left: u64| {
            let (low, high) = (left >> 32, left & u64::from(u32::MAX));
            let n = CLAIM.min(high - low);
            (n > 0).then(|| if front { left + (n << 32) } else { left - n })
        };
        let was = self.left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, take).ok()?;
        let (low, high) = ((was >> 32) as usize, (was & u64::from(u32::MAX)) as usize);
        let n = (CLAIM as usize).min(high - low);
        Some(if front { &self.reads[low..low + n] } else { &self.reads[high - n..high] })
    }

    /// Whether every read has been claimed (or one failed).
    fn over(&self) -> bool {
        let left = self.left.load(Ordering::SeqCst);
        left >> 32 >= left & u64::from(u32::MAX) || self.failed.load(Ordering::SeqCst)
    }

    /// Reads the parts claimed from one end into `sink`, until none are left or one fails
    /// (then no thread claims more).
    fn run(&self, front: bool, sink: &mut impl Sink) -> Result<()> {
        let mut checked = None;
        while let Some(part) = self.claim(front) {
            // Test builds only: a helper of a gather on shards whose name says so panics
            // once it has claimed rows, so a test shows the gather fails instead of hanging
            // or losing them.
            #[cfg(test)]
            assert!(front || !self.inner.shards.iter().any(|s| s.name().contains("inject-panic")), "injected");
            if let Err(e) = read_local_into(&self.inner, part, sink, &mut checked) {
                self.failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    }

    /// The calling thread's share, from the front, read straight into `out` (all the
    /// gather's rows).
    pub(super) fn read_into(&self, out: &mut [u8]) -> Result<()> {
        self.run(true, &mut Out { out, width: self.inner.row_bytes })
    }

    /// Helper `helper`'s share, from the back, into a buffer of its own, left in `done`.
    fn help(&self, helper: usize) {
        self.engaged[helper].store(true, Ordering::SeqCst);
        let mut own = Own { bytes: Vec::new(), placed: Vec::new(), width: self.inner.row_bytes };
        let got = self.run(false, &mut own).map(|()| own);
        *self.done[helper].lock().unwrap_or_else(PoisonError::into_inner) = Some(got);
    }

    /// Helper `helper`'s rows, if it is done.
    fn taken(&self, helper: usize) -> Option<Result<Own>> {
        self.done[helper].lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Starts the helpers: the first handed to a helper waiting at `relay` if there is
    /// one, the others (and the first otherwise) on blocking threads. What tells each one's
    /// end: its sender is dropped when it is done (or panicked).
    pub(super) fn start_helpers(self: &Arc<Self>, relay: &Relay) -> Vec<oneshot::Receiver<()>> {
        (0..self.engaged.len())
            .map(|helper| {
                let (done, ended) = oneshot::channel();
                let job = Job { claims: Arc::clone(self), helper, _done: done };
                let job = if helper == 0 { relay.hand(job) } else { Some(job) };
                if let Some(job) = job {
                    tokio::task::spawn_blocking(move || job.run());
                }
                ended
            })
            .collect()
    }

    /// What the helpers read. Called once the caller's share is done (or, with no share of
    /// the caller's, alongside): each helper engaged by the time the reads are over is
    /// waited for (none reads on past the gather), spinning [`SPIN_FOR_HELPER`] first, then
    /// on its end; one not yet started is left to find nothing. The first error there is.
    pub(super) async fn joined(&self, ends: Vec<oneshot::Receiver<()>>) -> Result<Vec<Own>> {
        let mut owns = Vec::new();
        let mut failed = None;
        for (helper, ended) in ends.into_iter().enumerate() {
            // A helper engaged after the reads are over claims nothing.
            if self.over() && !self.engaged[helper].load(Ordering::SeqCst) {
                continue;
            }
            let spin = Instant::now();
            let mut got = self.taken(helper);
            while got.is_none() && spin.elapsed() < SPIN_FOR_HELPER {
                std::hint::spin_loop();
                got = self.taken(helper);
            }
            if got.is_none() {
                // Ends (the sender dropped) when the helper is done or panicked.
                let _ = ended.await;
                got = self.taken(helper);
            }
            match got.unwrap_or_else(|| Err(io_error("a read's thread failed before its rows".into()))) {
                Ok(own) => owns.push(own),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        failed.map_or(Ok(owns), Err)
    }
}

/// A helper's share of one gather, on whichever thread runs it.
struct Job {
    claims: Arc<Claims>,
    helper: usize,
    /// Dropped when the job is done (or its thread panics): the gather's sign to go on.
    _done: oneshot::Sender<()>,
}

impl Job {
    /// Does this job, then, while gathers on the same array come back to back, the next
    /// ones handed over at the array's relay.
    fn run(self) {
        let inner = Arc::clone(&self.claims.inner);
        let mut job = self;
        loop {
            job.claims.help(job.helper);
            drop(job);
            match inner.relay.next() {
                Some(next) => job = next,
                None => return,
            }
        }
    }
}

/// Where a helper that has done its share of a gather waits a little for the next gather on
/// the same array, when gathers come back to back (a training loop's batches): handed over
/// there, a job starts at once, where a thread woken from sleep starts tens of microseconds
/// late on a virtual machine and costs the gather that wakes it about as much. The wait
/// spins at most [`RELAY_WAIT`], and only after a gather that followed the one before it
/// within that time: loops with more between their gathers never spin.
pub(super) struct Relay {
    state: AtomicU8,
    /// The process whose helpers wait here: a child forked while one waited has no such
    /// thread, so it never hands a job here.
    pid: u32,
    job: Mutex<Option<Job>>,
    epoch: Instant,
    /// When the last gather through helpers ended, and the gap before the one after it, in
    /// nanoseconds since `epoch` (0: none yet).
    ended: AtomicU64,
    gap: AtomicU64,
}

/// No helper waits at the relay; one waits; a job was handed to the one waiting.
const IDLE: u8 = 0;
const WAITING: u8 = 1;
const HANDED: u8 = 2;

/// How long a helper waits at the relay, spinning, and the longest gap between gathers
/// that makes it wait.
const RELAY_WAIT: Duration = Duration::from_micros(100);

impl Relay {
    pub(super) fn new() -> Relay {
        Relay {
            state: AtomicU8::new(IDLE),
            pid: std::process::id(),
            job: Mutex::new(None),
            epoch: Instant::now(),
            ended: AtomicU64::new(0),
            gap: AtomicU64::new(u64::MAX),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX).max(1)
    }

    /// A gather through helpers starts: the gap since the last one ended.
    pub(super) fn starting(&self) {
        let ended = self.ended.load(Ordering::Relaxed);
        let gap = if ended == 0 { u64::MAX } else { self.now().saturating_sub(ended) };
        self.gap.store(gap, Ordering::Relaxed);
    }

    /// A gather through helpers has ended.
    pub(super) fn ended(&self) {
        self.ended.store(self.now(), Ordering::Relaxed);
    }

    /// `job` handed to the helper waiting here (`None`), or back if none waits.
    fn hand(&self, job: Job) -> Option<Job> {
        if std::process::id() != self.pid {
            return Some(job);
        }
        let mut slot = self.job.lock().unwrap_or_else(PoisonError::into_inner);
        // Under the lock: a helper that sees HANDED takes the job only once it is here.
        if self.state.compare_exchange(WAITING, HANDED, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            *slot = Some(job);
            return None;
        }
        Some(job)
    }

    /// The next job, for a helper that has done its last: waited for at most
    /// [`RELAY_WAIT`] if the gather just done followed the one before it within that time
    /// and no other helper waits here.
    fn next(&self) -> Option<Job> {
        let wait = u64::try_from(RELAY_WAIT.as_nanos()).unwrap_or(u64::MAX);
        if self.gap.load(Ordering::Relaxed) > wait
            || self.state.compare_exchange(IDLE, WAITING, Ordering::SeqCst, Ordering::SeqCst).is_err()
        {
            return None;
        }
        let start = Instant::now();
        while self.state.load(Ordering::SeqCst) == WAITING && start.elapsed() < RELAY_WAIT {
            std::hint::spin_loop();
        }
        // Given up, unless a job was handed meanwhile.
        if self.state.compare_exchange(WAITING, IDLE, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            return None;
        }
        let job = self.job.lock().unwrap_or_else(PoisonError::into_inner).take();
        self.state.store(IDLE, Ordering::SeqCst);
        job
    }
}

/// Helper threads for a gather of `reads` local reads, besides the calling thread: one per
/// further CPU, at most one per [`RUNS_PER_THREAD`] reads.
pub(super) fn helpers_for(reads: usize) -> usize {
    if u32::try_from(reads).is_err() {
        return 0;
    }
    cpus().min(reads.div_ceil(RUNS_PER_THREAD)).max(1) - 1
}

/// Reads `part` (local reads) into `sink`. Each shard's file is looked at before its first
/// read unless it is `checked` (the shard this thread looked at last: reads come in shard
/// order).
pub(super) fn read_local_into(
    inner: &Inner,
    part: &[Read],
    sink: &mut impl Sink,
    checked: &mut Option<usize>,
) -> Result<()> {
    let width = inner.row_bytes;
    let mut spare = Vec::new();
    for read in part {
        let shard = &inner.shards[read.shard];
        if !shard.source.is_local() {
            return Err(io_error("a ranged GET among local reads".into()));
        }
        if *checked != Some(read.shard) {
            shard.source.unchanged()?;
            *checked = Some(read.shard);
        }
        if let Some(map) = &shard.map {
            for (rows, at) in read.runs() {
                sink.rows(*at, rows.len()).copy_from_slice(&map[rows.start * width..rows.end * width]);
            }
            continue;
        }
        let offset = shard.data_start + (read.rows.start * width) as u64;
        if read.more.is_empty() {
            let (rows, at) = &read.run;
            let data_at = read.rows.start * width;
            shard
                .source
                .read_exact_at(sink.rows(*at, rows.len()), offset)
                .map_err(|e| in_data(e, data_at, shard.name()))?;
            continue;
        }
        spare.resize(read.rows.len() * width, 0);
        let data_at = read.rows.start * width;
        shard.source.read_exact_at(&mut spare, offset).map_err(|e| in_data(e, data_at, shard.name()))?;
        for (rows, at) in read.runs() {
            let from = (rows.start - read.rows.start) * width;
            sink.rows(*at, rows.len()).copy_from_slice(&spare[from..from + rows.len() * width]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Shards;
    use npy_core::prelude::*;

    /// Two shards of `rows` rows each, 4 `<i8` columns (row `r`: `r * 10 + column`).
    fn shards(dir: &std::path::Path, rows: usize) -> Vec<String> {
        (0..2)
            .map(|i| {
                let path = dir.join(format!("s{i}.npy"));
                let first = (i * rows) as i64;
                let data: Vec<i64> =
                    (first..first + rows as i64).flat_map(|r| (0..4).map(move |c| r * 10 + c)).collect();
                Array::from_shape_vec(vec![rows, 4], data).unwrap().write_npy(&path).unwrap();
                path.to_string_lossy().into_owned()
            })
            .collect()
    }

    fn expected(rows: &[usize]) -> Vec<i64> {
        rows.iter().flat_map(|&r| (0..4).map(move |c| r as i64 * 10 + c)).collect()
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    }

    /// Scattered rows, enough reads for helpers.
    fn batch(seed: u64, total: usize) -> Vec<usize> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..300)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % total as u64) as usize
            })
            .collect()
    }

    /// Gathers back to back (their helpers handed over at the relay) and from four threads
    /// at once (racing for the one helper waiting there): every row lands in its place.
    #[test]
    fn gathers_back_to_back_and_at_once_land_every_row() {
        let dir = tempfile::tempdir().unwrap();
        let paths = shards(dir.path(), 5_000);
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let runtime = runtime();
        let all = runtime.block_on(Shards::open(&paths)).unwrap();
        for seed in 0..200 {
            let rows = batch(seed, 10_000);
            let got: Array<i64> = runtime.block_on(all.gather(&rows)).unwrap();
            assert_eq!(got.as_slice(), expected(&rows), "seed {seed}");
        }
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let (all, runtime) = (&all, &runtime);
                scope.spawn(move || {
                    for seed in 0..100 {
                        let rows = batch(1_000 * (t + 1) + seed, 10_000);
                        let got: Array<i64> = runtime.block_on(all.gather(&rows)).unwrap();
                        assert_eq!(got.as_slice(), expected(&rows), "thread {t}, seed {seed}");
                    }
                });
            }
        });
    }

    /// Gathers back to back that all fail (a shard changed since open), their helpers'
    /// shares relayed too: each fails naming the shard, none waits.
    #[test]
    fn failing_gathers_back_to_back_each_fail_naming_the_shard() {
        let dir = tempfile::tempdir().unwrap();
        let paths = shards(dir.path(), 5_000);
        let names: Vec<&str> = paths.iter().map(String::as_str).collect();
        let runtime = runtime();
        let all = runtime.block_on(Shards::open(&names)).unwrap();
        Array::from_shape_vec(vec![4_999, 4], vec![0i64; 19_996]).unwrap().write_npy(&paths[1]).unwrap();
        for seed in 0..100 {
            let rows = batch(seed, 10_000);
            let gather = async { tokio::time::timeout(Duration::from_secs(60), all.gather_raw(&rows)).await };
            let e = runtime.block_on(gather).expect("a gather waited a minute").unwrap_err().to_string();
            assert!(e.contains("s1.npy") && e.contains("changed"), "{e}");
        }
    }

    /// A helper that panics (injected, once it has claimed rows) fails its gather with an
    /// error, within a minute: never a hang, never a gather with rows missing.
    #[test]
    fn a_helper_that_panics_fails_the_gather() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().join("inject-panic");
        std::fs::create_dir(&dir).unwrap();
        let paths = shards(&dir, 5_000);
        let names: Vec<&str> = paths.iter().map(String::as_str).collect();
        let runtime = runtime();
        let all = runtime.block_on(Shards::open(&names)).unwrap();
        let (mut failed, mut whole) = (0, 0);
        for seed in 0..50 {
            let rows = batch(seed, 10_000);
            let gather = async { tokio::time::timeout(Duration::from_secs(60), all.gather(&rows)).await };
            match runtime.block_on(gather).expect("a gather waited a minute") {
                Ok(got) => {
                    // Done before any helper claimed rows: whole.
                    let got: Array<i64> = got;
                    assert_eq!(got.as_slice(), expected(&rows), "seed {seed}");
                    whole += 1;
                }
                Err(e) => {
                    assert!(e.to_string().contains("failed before its rows"), "{e}");
                    failed += 1;
                }
            }
        }
        // With one CPU no helper is started, so none can fail.
        assert!(failed > 0 || cpus() == 1, "no helper claimed rows in 50 gathers ({whole} whole)");
    }

    /// A helper waits at the relay only after gathers back to back, gives up when nothing
    /// comes, and takes what is handed while it waits; with none waiting, a job comes back.
    #[test]
    fn the_relay_hands_over_only_to_a_helper_waiting_there() {
        let dir = tempfile::tempdir().unwrap();
        let paths = shards(dir.path(), 10);
        let names: Vec<&str> = paths.iter().map(String::as_str).collect();
        let all = runtime().block_on(Shards::open(&names)).unwrap();
        let inner = &all.inner;
        let job = || {
            let claims = Arc::new(Claims::new(Arc::clone(inner), Vec::new(), 1));
            Job { claims, helper: 0, _done: oneshot::channel().0 }
        };
        let relay = Relay::new();
        // No gather yet: no wait; nobody waits, so a job comes back.
        assert!(relay.next().is_none());
        assert!(relay.hand(job()).is_some());
        // Gathers back to back: a helper waits, and gives up when nothing comes.
        relay.ended();
        relay.starting();
        assert!(relay.next().is_none());
        // One handed while it waits is its next.
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| loop {
                if let Some(job) = relay.next() {
                    return job.helper;
                }
            });
            let mut job = Some(job());
            while let Some(back) = job.take().and_then(|j| relay.hand(j)) {
                job = Some(back);
            }
            assert_eq!(waiting.join().unwrap(), 0);
        });
        // After a long gap, no wait.
        relay.ended();
        std::thread::sleep(RELAY_WAIT * 2);
        relay.starting();
        assert!(relay.next().is_none());
        assert_eq!(relay.state.load(Ordering::SeqCst), IDLE);
    }
}
