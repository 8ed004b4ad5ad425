//! The decoder's memory budget: what each buffer costs the allocator, and the budget they
//! are charged to before they grow (and refunded from when freed), so that `used` is an
//! upper bound of what the decoder holds.

use super::Value;

/// Default memory budget of one pickle: this base (for a few MB of small values, which take
/// 10 to 30 times their pickle's bytes as `Object`s)...
pub(super) const DEFAULT_BUDGET_BASE: usize = 128 << 20;
/// ...plus this many bytes per byte of pickle: 60 MB of hostile pickle stays under 375 MB,
/// as the CLI must (500 MB of RSS); `npy-core/tests/pickle_memory.rs` measures the peak.
pub(super) const DEFAULT_BUDGET_PER_BYTE: usize = 4;

/// What the allocator takes for a buffer of `bytes`: glibc's malloc adds an 8-byte header
/// and rounds up to 16, at least 32 bytes (Rust asks nothing for an empty buffer).
pub(super) const fn alloc_cost(bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else {
        let chunk = bytes.saturating_add(8 + 15) & !15;
        if chunk < 32 {
            32
        } else {
            chunk
        }
    }
}

/// What a `Vec<T>` of capacity `cap` takes from the allocator.
pub(super) fn vec_cost<T>(cap: usize) -> usize {
    alloc_cost(cap.saturating_mul(std::mem::size_of::<T>()))
}

/// What a hash table of `cap` memo entries takes (buckets of an entry and a control byte,
/// at most 7/8 full, a power of two).
pub(super) fn table_cost(cap: usize) -> usize {
    let buckets = (cap.saturating_mul(8) / 7).max(4).checked_next_power_of_two().unwrap_or(usize::MAX);
    alloc_cost(buckets.saturating_mul(std::mem::size_of::<(u32, Value)>() + 1).saturating_add(16))
}

/// The memory budget: a fixed number of bytes, or (by default) a base plus a multiple of
/// the pickle bytes read so far. `used` is an upper bound of the bytes the decoder holds
/// from the allocator: every buffer it grows is charged before it grows, at
/// [`alloc_cost`] of its capacity, and refunded when it is freed.
#[derive(Debug)]
pub(super) struct Budget {
    pub(super) used: usize,
    pub(super) fixed: Option<usize>,
    /// Whether the error may tell to raise the limit (not for a Dask `info`, read with the
    /// default only: one that needs more is hostile).
    pub(super) raisable: bool,
}

impl Budget {
    pub(super) fn limit(&self, consumed: u64) -> usize {
        self.fixed.unwrap_or_else(|| {
            let per = usize::try_from(consumed).unwrap_or(usize::MAX).saturating_mul(DEFAULT_BUDGET_PER_BYTE);
            DEFAULT_BUDGET_BASE.saturating_add(per)
        })
    }

    /// Counts `bytes` more; false (and nothing counted) when that goes over the limit.
    #[inline]
    pub(super) fn add(&mut self, bytes: usize, consumed: u64) -> bool {
        let used = self.used.saturating_add(bytes);
        if used > self.limit(consumed) {
            return false;
        }
        self.used = used;
        true
    }

    /// Counts `bytes` freed.
    pub(super) fn refund(&mut self, bytes: usize) {
        self.used = self.used.saturating_sub(bytes);
    }

    pub(super) fn exceeded(&self, consumed: u64) -> String {
        match self.fixed {
            Some(limit) => {
                format!("the values need more than the {limit} bytes of memory allowed (ReadOptions::max_object_bytes)")
            }
            None if !self.raisable => format!(
                "the values need more than the {} bytes of memory allowed for a {consumed}-byte pickle \
                 ({} MiB plus {DEFAULT_BUDGET_PER_BYTE} per pickle byte, far more than a Dask info takes)",
                self.limit(consumed),
                DEFAULT_BUDGET_BASE >> 20,
            ),
            None => format!(
                "the values need more than the default {} bytes of memory for a {consumed}-byte pickle \
                 ({} MiB plus {DEFAULT_BUDGET_PER_BYTE} per pickle byte; many small values, or a memoised value \
                 repeated many times, take more: raise the limit with ReadOptions::max_object_bytes)",
                self.limit(consumed),
                DEFAULT_BUDGET_BASE >> 20,
            ),
        }
    }
}

/// A buffer whose growth is charged to a [`Budget`]: its items, and the capacity charged
/// for them so far (at most the buffer's own capacity, which may be more: see [`Kept`]).
pub(super) trait Charged<T> {
    fn vec(&mut self) -> &mut Vec<T>;
    fn charged(&self) -> usize;
    fn set_charged(&mut self, cap: usize);
}

impl<T> Charged<T> for Vec<T> {
    fn vec(&mut self) -> &mut Vec<T> {
        self
    }

    fn charged(&self) -> usize {
        self.capacity()
    }

    fn set_charged(&mut self, _: usize) {}
}

/// A buffer kept from an earlier decode ([`super::Spare`]): its capacity was charged to
/// that decode's budget, not this one's, which is charged as if the buffer grew from
/// empty; the memory it already has is used first, so a decode faults in no new pages
/// and copies nothing to grow until it needs more than that.
#[derive(Debug, Default)]
pub(super) struct Kept<T> {
    pub(super) vec: Vec<T>,
    charged: usize,
}

impl<T> Kept<T> {
    /// `vec`, emptied, with nothing charged yet.
    pub(super) fn new(mut vec: Vec<T>) -> Kept<T> {
        vec.clear();
        Kept { vec, charged: 0 }
    }

    /// The buffer, leaving this empty.
    pub(super) fn take(&mut self) -> Vec<T> {
        self.charged = 0;
        std::mem::take(&mut self.vec)
    }
}

impl<T> std::ops::Deref for Kept<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.vec
    }
}

impl<T> std::ops::DerefMut for Kept<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.vec
    }
}

impl<T> Charged<T> for Kept<T> {
    fn vec(&mut self) -> &mut Vec<T> {
        &mut self.vec
    }

    fn charged(&self) -> usize {
        self.charged
    }

    fn set_charged(&mut self, cap: usize) {
        self.charged = cap;
    }
}

/// Makes room for `extra` more items in `buffer`, charging its growth as `Vec` grows
/// (doubling, at least 4) to `budget` first; false if it does not fit.
#[inline]
pub(super) fn reserve<T>(buffer: &mut impl Charged<T>, extra: usize, budget: &mut Budget, consumed: u64) -> bool {
    let need = buffer.vec().len().saturating_add(extra);
    let old = buffer.charged();
    if need <= old {
        return true;
    }
    let cap = need.max(old.saturating_mul(2)).max(4);
    // Old and new buffer both count until the old one is freed (a small realloc copies).
    if !budget.add(vec_cost::<T>(cap), consumed) {
        return false;
    }
    let vec = buffer.vec();
    if cap > vec.capacity() {
        vec.reserve_exact(cap - vec.len());
    }
    buffer.set_charged(cap);
    budget.refund(vec_cost::<T>(old));
    true
}
