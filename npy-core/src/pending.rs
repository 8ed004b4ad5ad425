//! Hidden directories being written (a stack before it is renamed into place, a spool),
//! and the removal of those that killed writers left.
//!
//! Such a directory is named `.{target}{infix}XXXXXX` (the target's file name, an infix
//! that says what writes it, such as `.npy-stack.`, and six random letters and digits)
//! beside its target, and its writer holds an exclusive advisory lock (`flock`) on it for
//! its whole life. The kernel drops that lock when the process ends, however it ends, so a
//! directory of such a name whose lock is free was left by a writer that is gone (a process
//! id would prove nothing: ids are reused). The next [`PendingDir::create`] with the same
//! infix in the same parent removes those. A directory a live writer holds is never
//! touched, nor anything not named so, nor anything through a symbolic link.
//!
//! Where the file system refuses locks on directories (some network file systems), the
//! writer goes on without one, and such a directory is never removed by a later run; the
//! same without `flock` (systems other than Unix).
//!
//! # Examples
//! ```
//! use npy_core::pending::PendingDir;
//!
//! let parent = tempfile::tempdir()?;
//! let target = parent.path().join("results");
//! let work = PendingDir::create(&target, ".my-tool.")?;
//! std::fs::write(work.path().join("part-0"), b"rows")?;
//! // Hidden beside the target while it is written; a killed process leaves it, and the
//! // next `PendingDir::create(.., ".my-tool.")` in `parent` removes it.
//! assert!(work.path().file_name().unwrap().to_str().unwrap().starts_with(".results.my-tool."));
//! work.rename_to(&target)?;
//! assert_eq!(std::fs::read(target.join("part-0"))?, b"rows");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{self, File};
use std::io;
use std::path::Path;

use crate::atomic::parent_dir;
use crate::error::{Error, Result};

/// Random letters and digits that end a pending directory's name.
const RANDOM_LEN: usize = 6;

/// A hidden directory being written for a target, locked while it lives; removed when
/// dropped unless [`PendingDir::rename_to`] moved it into place (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct PendingDir {
    tmp: tempfile::TempDir,
    /// The directory itself, open and exclusively locked (`None` where the file system
    /// has no locks): the proof, to a sweep, that its writer is alive.
    _lock: Option<File>,
}

impl PendingDir {
    /// Creates a pending directory for `target` beside it, named with `infix`, and locks
    /// it; first removes the directories of that infix beside it whose writers are gone.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`](crate::ErrorKind::Usage) for an infix that does not start and
    /// end with `.` or holds a `/`; the I/O error creating or opening the directory (the
    /// parent does not exist or is not writable). They name `target`.
    pub fn create(target: impl AsRef<Path>, infix: &str) -> Result<PendingDir> {
        let target = target.as_ref();
        if infix.len() < 2 || !infix.starts_with('.') || !infix.ends_with('.') || infix.contains('/') {
            let reason = format!("the infix {infix:?} of a pending directory must start and end with '.'");
            return Err(Error::usage(reason).writing(target));
        }
        PendingDir::create_in(target, infix).map_err(|e| Error::from(e).writing(target))
    }

    fn create_in(target: &Path, infix: &str) -> io::Result<PendingDir> {
        let parent = parent_dir(target);
        sweep(parent, infix);
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // A sweep elsewhere may take the directory between its creation and the lock (it
        // then looks like a killed writer's): take another.
        for _ in 0..100 {
            let tmp = tempfile::Builder::new()
                .prefix(&format!(".{name}{infix}"))
                .rand_bytes(RANDOM_LEN)
                .tempdir_in(parent)?;
            match lock(tmp.path()) {
                Locked::Yes(file) => return Ok(PendingDir { tmp, _lock: Some(file) }),
                Locked::Unsupported => return Ok(PendingDir { tmp, _lock: None }),
                // Being removed, or already gone: its path is no longer ours to remove.
                Locked::Taken | Locked::Gone => drop(tmp.keep()),
                Locked::Failed(e) => return Err(e),
            }
        }
        Err(io::Error::other("no pending directory could be kept: another process removes them as they appear"))
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Moves the directory to `target` (a new name, or an empty directory it replaces);
    /// the lock is released after the move.
    ///
    /// # Errors
    /// The I/O error of the rename, naming `target`; the directory is then removed.
    pub fn rename_to(self, target: impl AsRef<Path>) -> Result<()> {
        let target = target.as_ref();
        fs::rename(self.tmp.path(), target).map_err(|e| Error::from(e).writing(target))?;
        drop(self.tmp.keep());
        Ok(())
    }
}

/// What trying to lock a directory found.
#[cfg_attr(miri, allow(dead_code))]
enum Locked {
    /// Locked, and still the directory at that path.
    Yes(File),
    /// Another process holds the lock.
    Taken,
    /// The path names no directory any more, or another one.
    Gone,
    /// The file system has no locks on directories (or refused this one).
    Unsupported,
    Failed(io::Error),
}

/// Opens the directory at `path` without following a symbolic link and takes its
/// exclusive lock without waiting; checks that the path still names it once locked. Not
/// under Miri, which cannot open with `O_NOFOLLOW`.
#[cfg(all(unix, not(miri)))]
fn lock(path: &Path) -> Locked {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY).open(path);
    let dir = match opened {
        Ok(dir) => dir,
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound) => return Locked::Gone,
        // A symbolic link (ELOOP) or a file (ENOTDIR) took the name.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => return Locked::Gone,
        Err(e) => return Locked::Failed(e),
    };
    match dir.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => return Locked::Taken,
        // No lock to be had here (EBADF, ENOLCK, EOPNOTSUPP on some network file systems):
        // a writer goes on without one, a sweep leaves the directory.
        Err(fs::TryLockError::Error(_)) => return Locked::Unsupported,
    }
    if crate::file::names_file(path, &dir, false).unwrap_or(false) {
        Locked::Yes(dir)
    } else {
        Locked::Gone
    }
}

/// Without `flock` (and `O_NOFOLLOW`), directories are not locked, and never swept.
#[cfg(not(all(unix, not(miri))))]
fn lock(_path: &Path) -> Locked {
    Locked::Unsupported
}

/// Whether `name` is a pending directory's name of `infix`: `.`, anything, `infix`, six
/// ASCII letters and digits.
fn is_pending(name: &[u8], infix: &str) -> bool {
    let Some(head_len) = name.len().checked_sub(RANDOM_LEN) else { return false };
    let (head, random) = name.split_at(head_len);
    head.len() > infix.len()
        && head.starts_with(b".")
        && head.ends_with(infix.as_bytes())
        && random.iter().all(u8::is_ascii_alphanumeric)
}

/// Removes the pending directories of `infix` in `parent` whose lock is free (their
/// writers are gone), holding the lock while removing; best effort: what cannot be read,
/// locked or removed is left as it is.
#[cfg(all(unix, not(miri)))]
fn sweep(parent: &Path, infix: &str) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        // `file_type` does not follow a symbolic link: one is never swept.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || !is_pending(entry.file_name().as_bytes(), infix) {
            continue;
        }
        let path = entry.path();
        if let Locked::Yes(_held) = lock(&path) {
            // `remove_dir_all` removes symbolic links inside, never what they point to.
            let _ = fs::remove_dir_all(&path);
        }
    }
}

#[cfg(not(all(unix, not(miri))))]
fn sweep(_parent: &Path, _infix: &str) {}

#[cfg(test)]
mod tests {
    use super::*;

    const INFIX: &str = ".npy-test.";

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn names_are_recognised_exactly() {
        for yes in [".t.npy-test.Ab12Cd", "..npy-test.000000", ".a.npy-test.b.npy-test.zzzzzz"] {
            assert!(is_pending(yes.as_bytes(), INFIX), "{yes}");
        }
        for no in [
            "t.npy-test.Ab12Cd",
            ".t.npy-test.Ab12C",
            ".t.npy-test.Ab12C-",
            ".t.npy-other.Ab12Cd",
            ".t.npy-test.Ab12Cde",
            ".npy-test.Ab12Cd",
            ".t.npy-test.Ab1é",
            "",
        ] {
            assert!(!is_pending(no.as_bytes(), INFIX), "{no}");
        }
    }

    #[test]
    fn a_dropped_directory_goes_and_a_renamed_one_stays() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t");
        let p = PendingDir::create(&target, INFIX).unwrap();
        let name = p.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".t.npy-test.") && name.len() == ".t.npy-test.".len() + RANDOM_LEN, "{name}");
        drop(p);
        assert!(names(dir.path()).is_empty());
        let p = PendingDir::create(&target, INFIX).unwrap();
        fs::write(p.path().join("x"), b"x").unwrap();
        p.rename_to(&target).unwrap();
        assert_eq!(names(dir.path()), ["t"]);
        assert_eq!(fs::read(target.join("x")).unwrap(), b"x");
    }

    /// A killed writer's directory (its lock gone with it) is removed by the next writer
    /// in the parent; a live writer's directory never is, nor anything else.
    #[cfg(all(unix, not(miri)))]
    #[test]
    fn only_directories_whose_writer_is_gone_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let live = PendingDir::create(dir.path().join("live"), INFIX).unwrap();
        fs::write(live.path().join("0.npy"), b"data").unwrap();
        // What a killed writer leaves: the directory, unlocked.
        let dead = PendingDir::create(dir.path().join("dead"), INFIX).unwrap().tmp.keep();
        fs::create_dir(dead.join("sub")).unwrap();
        fs::write(dead.join("sub/1.npy"), b"data").unwrap();
        // Not ours: another infix, a file and a symbolic link of our name, and what a
        // symbolic link inside a dead directory points to.
        let other = dir.path().join(".x.npy-else.abcdef");
        fs::create_dir(&other).unwrap();
        let file = dir.path().join(".f.npy-test.abcdef");
        fs::write(&file, b"f").unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("keep"), b"k").unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join(".l.npy-test.abcdef")).unwrap();
        std::os::unix::fs::symlink(&outside, dead.join("link")).unwrap();

        let next = PendingDir::create(dir.path().join("next"), INFIX).unwrap();
        let left = names(dir.path());
        assert!(!left.iter().any(|n| n.starts_with(".dead.")), "{left:?}");
        assert!(live.path().join("0.npy").exists(), "a live writer's directory was removed: {left:?}");
        assert!(next.path().exists());
        assert!(other.exists() && file.exists() && outside.join("keep").exists(), "{left:?}");
        assert!(dir.path().join(".l.npy-test.abcdef").symlink_metadata().is_ok(), "{left:?}");
        assert_eq!(left.len(), 6, "{left:?}");
    }

    /// A directory locked by another open file description (as another process's lock
    /// is) is left alone, and is swept once that lock is released.
    #[cfg(all(unix, not(miri)))]
    #[test]
    fn a_held_lock_keeps_the_directory_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let held = PendingDir::create(dir.path().join("a"), INFIX).unwrap().tmp.keep();
        let holder = File::open(&held).unwrap();
        holder.lock().unwrap();
        for _ in 0..3 {
            drop(PendingDir::create(dir.path().join("b"), INFIX).unwrap());
            assert!(held.is_dir(), "removed while its lock was held");
        }
        drop(holder);
        drop(PendingDir::create(dir.path().join("b"), INFIX).unwrap());
        assert!(!held.exists());
        assert!(names(dir.path()).is_empty());
    }

    /// A stack written beside a live `StackWriter` leaves the writer's directory alone:
    /// the writer goes on and finishes its stack.
    #[test]
    fn a_split_beside_a_live_stack_writer_leaves_it_whole() {
        use crate::stack::{write_stack_with, Stack, StackOptions, StackWriter};
        let dir = tempfile::tempdir().unwrap();
        let mut w = StackWriter::<i32>::create(dir.path().join("a"), &[], 2).unwrap();
        w.extend(&[1, 2, 3]).unwrap();
        let other = crate::array::Array::from_shape_vec(vec![3], vec![7i32, 8, 9]).unwrap();
        write_stack_with(&other, dir.path().join("b"), StackOptions::new().block_len(2)).unwrap();
        w.extend(&[4, 5]).unwrap();
        w.finish().unwrap();
        assert_eq!(
            Stack::from_path(dir.path().join("a")).unwrap().read::<crate::array::Array<i32>>().unwrap().into_vec(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(
            Stack::from_path(dir.path().join("b")).unwrap().read::<crate::array::Array<i32>>().unwrap().into_vec(),
            [7, 8, 9]
        );
        assert_eq!(names(dir.path()), ["a", "b"]);
    }
}
