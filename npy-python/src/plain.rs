//! Plain arrays read with few system calls and no Python: [`read_plain`], what
//! `npy.load_many` spreads over threads, and the loader `npy.load` of a path opens files
//! with ([`with_loader`]).
//!
//! Only the plain case is fast: a regular file holding one `.npy` array of a dtype without
//! Python objects and a header of this century (no Python 2 warning to give). Anything
//! else (an error too) `npy.load_many` reads again by `npy.load`'s way under the GIL, which
//! gives NumPy's results, exceptions and warnings; a file is then opened twice, which only
//! odd files pay.

use std::cell::RefCell;
use std::path::Path;

use npy_core::header::{FileKind, Header};
use npy_core::{DynArray, Loader, NpyReader, ReadOptions};

use crate::remote::ObjectStart;

/// The array of the `.npy` file at `path` when it is plain (see the module), read by
/// `loader` (npy-core's [`Loader`]: a small file by `open`, `fstat`, one `read` and
/// `close`); `None` for anything else, which the caller reads the general way.
pub(crate) fn read_plain(path: &Path, loader: &mut Loader) -> Option<DynArray> {
    let array = loader.load(path).ok()?;
    (!loader.python2_header()).then_some(array)
}

thread_local! {
    /// The loader of `npy.load` on this thread: a loop over a training set's files reads
    /// one header again and again, which it remembers.
    static LOADER: RefCell<Option<Loader>> = const { RefCell::new(None) };
}

/// `f` of this thread's loader for `npy.load`, made anew for other options.
pub(crate) fn with_loader<T>(options: &ReadOptions, f: impl FnOnce(&mut Loader) -> T) -> T {
    LOADER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let loader = match slot.as_mut() {
            Some(loader) if loader.options() == options => loader,
            _ => slot.insert(Loader::new_with(options)),
        };
        f(loader)
    })
}

/// Whether an array of `header` is read as plain bytes with nothing to say.
fn plain(header: &Header, python2_header: bool) -> bool {
    !python2_header && !header.dtype.has_object()
}

/// The `.npy` array at `url`, when plain: its first bytes by one ranged GET, the rest
/// (if any) by one more, as `npy.load` reads it.
pub(crate) fn read_plain_url(url: &str, options: &ReadOptions) -> Option<DynArray> {
    let opened = ObjectStart::open(url).ok()?;
    if FileKind::of(&opened.prefix) != FileKind::Npy {
        return None;
    }
    let reader = NpyReader::from_reader_with(opened.into_read().ok()?, options).ok()?;
    plain(reader.header(), reader.python2_header()).then(|| reader.read::<DynArray>().ok()).flatten()
}
