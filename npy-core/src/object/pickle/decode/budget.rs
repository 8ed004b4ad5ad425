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

/// Makes room for `extra` more items in `vec`, growing it as `Vec` does (doubling, at least
/// 4) but charging the new buffer to `budget` first; false if it does not fit.
#[inline]
pub(super) fn reserve<T>(vec: &mut Vec<T>, extra: usize, budget: &mut Budget, consumed: u64) -> bool {
    let need = vec.len().saturating_add(extra);
    if need <= vec.capacity() {
        return true;
    }
    let old = vec.capacity();
    let cap = need.max(old.saturating_mul(2)).max(4);
    // Old and new buffer both count until the old one is freed (a small realloc copies).
    if !budget.add(vec_cost::<T>(cap), consumed) {
        return false;
    }
    vec.reserve_exact(cap - vec.len());
    budget.refund(vec_cost::<T>(old));
    true
}
