//! The names and titles of a record, checked for repeats as fast as reading them.

use std::collections::HashSet;

/// The names and `str` titles of a record's fields, for
/// [`Record::new`](super::Record::new)'s repeat checks: open addressing over a quick hash (a
/// multiply per 8 bytes), so that checking a record of many fields costs little next to
/// reading it. A slot is 8 bytes, 32 bits of the name's hash and where the name is in a
/// list of them, so the slots of a few thousand names stay in the first-level cache, and
/// only a name whose hash bits match is compared. Should the names collide much more than
/// chance has them (text made to collide), the set moves to std's `HashSet`, whose SipHash
/// is keyed anew in each process, so no record makes the check quadratic.
#[derive(Debug)]
pub(super) struct NameSet<'s> {
    /// A power of two at least twice the names held (twice as many once more are added):
    /// 0 for none, else the bits [`tag`] keeps of a name's hash, and 1 + its index in
    /// `names`.
    slots: Vec<u64>,
    /// The names, in the order they came: those held, and those still to add of a list
    /// given whole ([`NameSet::first_repeat`]).
    names: Vec<&'s str>,
    /// Probes past a name's first slot left before the set moves to `safe`.
    budget: usize,
    safe: Option<HashSet<&'s str>>,
}

/// The bits of a name's hash a slot keeps: below those that pick its first slot (the top
/// ones), so that names starting at the same slot still differ in them.
fn tag(hash: u64) -> u64 {
    (hash >> 16) << 32
}

impl<'s> NameSet<'s> {
    pub(super) fn with_capacity(names: usize) -> NameSet<'s> {
        NameSet::over(Vec::with_capacity(names), names)
    }

    /// A set of none of `names` yet, with slots for `capacity` names.
    fn over(names: Vec<&'s str>, capacity: usize) -> NameSet<'s> {
        let len = capacity.saturating_mul(2).max(16).next_power_of_two();
        // Linear probing at most half full takes about one probe past the first slot per
        // name on average; eight each and a few hundred over are never used up by chance.
        NameSet { slots: vec![0; len], names, budget: capacity.saturating_mul(8).saturating_add(256), safe: None }
    }

    /// The first of `names` that equals one before it, if any, and where it is: the names
    /// added to a set one after the other, the set keeping the list it is given.
    pub(super) fn first_repeat(names: Vec<&'s str>) -> Option<(usize, &'s str)> {
        let len = names.len();
        let mut set = NameSet::over(names, len);
        let i = (0..len).find(|&i| !set.add(i))?;
        set.names.get(i).map(|&name| (i, name))
    }

    /// Adds `name`; `false` if it was there already.
    pub(super) fn insert(&mut self, name: &'s str) -> bool {
        if self.safe.is_none() && (self.names.len() + 1) * 2 > self.slots.len() {
            self.reserve((self.names.len() + 1) * 2);
        }
        self.names.push(name);
        let added = self.add(self.names.len() - 1);
        if !added {
            self.names.pop();
        }
        added
    }

    /// Adds `names[i]`, those before it held already; `false` if it was there.
    fn add(&mut self, i: usize) -> bool {
        let Some(&name) = self.names.get(i) else { return true };
        if let Some(safe) = &mut self.safe {
            return safe.insert(name);
        }
        let hash = quick_hash(name);
        let mask = self.slots.len() - 1;
        // The top bits of the product depend on every bit of the name.
        let mut at = (hash >> (u64::BITS - mask.count_ones())) as usize;
        let tag = tag(hash);
        loop {
            if self.budget == 0 || i >= u32::MAX as usize {
                let mut safe: HashSet<&'s str> = self.names.iter().take(i).copied().collect();
                let added = safe.insert(name);
                (self.safe, self.slots) = (Some(safe), Vec::new());
                return added;
            }
            let slot = self.slots[at];
            if slot == 0 {
                self.slots[at] = tag | (i as u64 + 1);
                return true;
            }
            let held = (slot as u32 as usize).checked_sub(1).and_then(|j| self.names.get(j));
            if slot & !u64::from(u32::MAX) == tag && held == Some(&name) {
                return false;
            }
            self.budget -= 1;
            at = (at + 1) & mask;
        }
    }

    /// Makes room for `names` in all, the names held moved to larger slots if need be; the
    /// budget grows by what the new names may use.
    #[cold]
    fn reserve(&mut self, names: usize) {
        if self.safe.is_some() || self.slots.len() >= names.saturating_mul(2) {
            return;
        }
        let held = std::mem::take(&mut self.names);
        let budget = self.budget.saturating_add(names.saturating_sub(held.len()).saturating_mul(8));
        let mut bigger = NameSet::over(held, names);
        bigger.budget = budget;
        for i in 0..bigger.names.len() {
            bigger.add(i);
        }
        *self = bigger;
    }
}

/// FxHash's step over the name, 8 bytes at a time, its length first; a last word of the
/// name's last 8 bytes (overlapping the word before) when its length is no multiple of 8,
/// or of its bytes when it is shorter than 8.
fn quick_hash(name: &str) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let step = |h: u64, word: u64| (h.rotate_left(26) ^ word).wrapping_mul(K);
    let bytes = name.as_bytes();
    let (words, _) = bytes.as_chunks::<8>();
    let mut h = step(0, bytes.len() as u64);
    for word in words {
        h = step(h, u64::from_le_bytes(*word));
    }
    if bytes.len().is_multiple_of(8) {
        return h;
    }
    let tail = bytes.len().checked_sub(8).and_then(|from| bytes.get(from..)).and_then(|t| <[u8; 8]>::try_from(t).ok());
    let last = match tail {
        Some(tail) => u64::from_le_bytes(tail),
        None => bytes.iter().rev().fold(0u64, |word, &b| word << 8 | u64::from(b)),
    };
    step(h, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    fn dt(s: &str) -> DType {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn first_repeat_of_a_list() {
        assert_eq!(NameSet::first_repeat(vec!["a", "b", "", "c"]), None);
        assert_eq!(NameSet::first_repeat(vec!["a", "b", "b", "a"]), Some((2, "b")));
        assert_eq!(NameSet::first_repeat(vec!["", "x", ""]), Some((2, "")));
        assert_eq!(NameSet::first_repeat(Vec::new()), None);
        // Names built to start in one slot use up the budget: the rest goes through the
        // HashSet, the names already added with it.
        let colliding: Vec<String> =
            (0..).map(|i| format!("c{i}")).filter(|n| quick_hash(n) >> 54 == 7).take(300).collect();
        let mut list: Vec<&str> = colliding.iter().map(String::as_str).collect();
        assert_eq!(NameSet::first_repeat(list.clone()), None);
        list.push(&colliding[5]);
        list.push(&colliding[3]);
        assert_eq!(NameSet::first_repeat(list), Some((300, colliding[5].as_str())));
    }

    #[test]
    fn name_set_grows_for_more_names_than_it_was_made_for() {
        let names: Vec<String> = (0..1000).map(|i| format!("name_{i}")).collect();
        let mut set = NameSet::with_capacity(4);
        assert!(names.iter().all(|n| set.insert(n)));
        assert!(names.iter().all(|n| !set.insert(n)));
        assert_eq!(set.names.len(), 1000);
        assert!(set.safe.is_none() && set.slots.len() >= 2000, "{} slots", set.slots.len());
        // Room made ahead of the names: no more moves.
        let mut set = NameSet::with_capacity(2);
        set.reserve(1000);
        let slots = set.slots.len();
        assert!(names.iter().all(|n| set.insert(n)));
        assert_eq!(set.slots.len(), slots);
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn name_set_finds_repeats_and_survives_collisions() {
        let names: Vec<String> = (0..1000).map(|i| format!("name_{i}")).collect();
        let mut set = NameSet::with_capacity(names.len());
        assert!(names.iter().all(|n| set.insert(n)));
        assert!(names.iter().all(|n| !set.insert(n)));
        assert!(set.safe.is_none(), "1,000 plain names used up the probe budget");
        // Names that all start in the same slot of a table for 300 (1,024 slots: the top
        // 10 bits of the hash), as text built to collide would: linear probing would take
        // 45,000 probes; the budget (2,656) runs out and the set moves to HashSet.
        let colliding: Vec<String> =
            (0..).map(|i| format!("c{i}")).filter(|n| quick_hash(n) >> 54 == 7).take(300).collect();
        let mut set = NameSet::with_capacity(colliding.len());
        assert!(colliding.iter().all(|n| set.insert(n)));
        assert!(set.safe.is_some());
        assert!(colliding.iter().all(|n| !set.insert(n)));
        assert!(set.insert("another"));
        // The same names as a record: accepted, and a repeat among them still found.
        let fields: Vec<String> = colliding.iter().map(|n| format!("('{n}', '|u1')")).collect();
        assert_eq!(dt(&format!("[{}]", fields.join(", "))).itemsize(), 300);
        let e = format!("[{}, ('{}', '<i4')]", fields.join(", "), colliding[123]).parse::<DType>().unwrap_err();
        assert!(e.to_string().contains("field name already used"), "{e}");
    }
}
