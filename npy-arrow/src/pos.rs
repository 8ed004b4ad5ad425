//! Byte positions of values in a chunk of records: a grid (`start + i * outer + j *
//! inner`, the common case: a field of every record, a subarray's items) kept as five
//! numbers, or a list (Fortran-order rows, lists nested in lists).

/// Where a node's values are, in the order of the Arrow array made of them.
#[derive(Debug, Clone)]
pub(crate) enum Pos {
    /// `n` groups `outer` bytes apart, each of `len` values `inner` bytes apart.
    Grid { start: usize, outer: usize, n: usize, inner: usize, len: usize },
    /// Any positions.
    List(Vec<usize>),
}

impl Pos {
    /// `n` values, `stride` bytes apart from `start`.
    #[cfg(test)]
    pub(crate) fn strided(start: usize, stride: usize, n: usize) -> Pos {
        Pos::Grid { start, outer: stride, n, inner: 0, len: 1 }
    }

    /// How many values.
    pub(crate) fn count(&self) -> usize {
        match self {
            Pos::Grid { n, len, .. } => n * len,
            Pos::List(v) => v.len(),
        }
    }

    /// The position of value `k`.
    pub(crate) fn get(&self, k: usize) -> usize {
        match self {
            Pos::Grid { start, outer, inner, len, .. } => start + (k / len) * outer + (k % len) * inner,
            Pos::List(v) => v[k],
        }
    }

    /// The positions `offset` bytes further.
    pub(crate) fn shifted(&self, offset: usize) -> Pos {
        match self {
            Pos::Grid { start, outer, n, inner, len } => {
                Pos::Grid { start: start + offset, outer: *outer, n: *n, inner: *inner, len: *len }
            }
            Pos::List(v) => Pos::List(v.iter().map(|p| p + offset).collect()),
        }
    }

    /// The positions of the items of lists at these positions: `len` items `stride` bytes
    /// apart from each.
    pub(crate) fn items(&self, len: usize, stride: usize) -> Pos {
        match self {
            Pos::Grid { start, outer, n, len: 1, .. } => {
                Pos::Grid { start: *start, outer: *outer, n: *n, inner: stride, len }
            }
            _ => {
                let mut out = Vec::with_capacity(self.count() * len);
                for p in self.iter() {
                    out.extend((0..len).map(|i| p + i * stride));
                }
                Pos::List(out)
            }
        }
    }

    /// Of groups of `of` positions (the items of each row of an N-d array), the items
    /// `start..start + len` of each group.
    pub(crate) fn pick(&self, of: usize, start: usize, len: usize) -> Pos {
        match self {
            Pos::Grid { start: at, outer, n, inner, len: group } if *group == of => {
                Pos::Grid { start: at + start * inner, outer: *outer, n: *n, inner: *inner, len }
            }
            _ => {
                let all: Vec<usize> = self.iter().collect();
                let groups = all.len().checked_div(of).unwrap_or(0);
                let mut out = Vec::with_capacity(groups * len);
                for g in 0..groups {
                    out.extend_from_slice(&all[g * of + start..g * of + start + len]);
                }
                Pos::List(out)
            }
        }
    }

    /// Whether the values, of `size` bytes, lie side by side from the first.
    pub(crate) fn contiguous(&self, size: usize) -> bool {
        match self {
            Pos::Grid { outer, n, inner, len, .. } => {
                (*len <= 1 || *inner == size) && (*n <= 1 || *outer == len * size)
            }
            Pos::List(v) => v.windows(2).all(|w| w[1] == w[0] + size),
        }
    }

    /// The positions, in order.
    pub(crate) fn iter(&self) -> Iter<'_> {
        match self {
            Pos::Grid { start, outer, n, inner, len } => Iter::Grid {
                row: *start,
                outer: *outer,
                rows_left: if *len == 0 { 0 } else { *n },
                inner: *inner,
                len: *len,
                j: 0,
            },
            Pos::List(v) => Iter::List(v.iter()),
        }
    }

    /// Calls `f` with each position, in order, with loops the compiler sees through.
    #[inline]
    pub(crate) fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        match self {
            Pos::Grid { start, outer, n, inner, len } => {
                let mut k = 0;
                for i in 0..*n {
                    let row = start + i * outer;
                    for j in 0..*len {
                        f(k, row + j * inner);
                        k += 1;
                    }
                }
            }
            Pos::List(v) => v.iter().enumerate().for_each(|(k, &p)| f(k, p)),
        }
    }
}

/// [`Pos::iter`].
pub(crate) enum Iter<'a> {
    Grid { row: usize, outer: usize, rows_left: usize, inner: usize, len: usize, j: usize },
    List(std::slice::Iter<'a, usize>),
}

impl Iterator for Iter<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match self {
            Iter::Grid { row, outer, rows_left, inner, len, j } => {
                if *rows_left == 0 {
                    return None;
                }
                let p = *row + *j * *inner;
                *j += 1;
                if *j == *len {
                    *j = 0;
                    *row += *outer;
                    *rows_left -= 1;
                }
                Some(p)
            }
            Iter::List(it) => it.next().copied(),
        }
    }
}

/// Positions of the elements of rows `first..first + rows` (indices into the data at
/// hand), `row_elements` elements of `itemsize` bytes a row: C order, or, with `fortran`
/// (the element offsets of a row's items from its first, see `fortran_offsets`), a
/// Fortran-order array whose row `r` starts at element `r`.
pub(crate) fn rows(first: usize, rows: usize, row_elements: usize, itemsize: usize, fortran: Option<&[usize]>) -> Pos {
    match fortran {
        None => Pos::Grid {
            start: first * row_elements * itemsize,
            outer: row_elements * itemsize,
            n: rows,
            inner: itemsize,
            len: row_elements,
        },
        Some(offsets) => {
            let mut out = Vec::with_capacity(rows * offsets.len());
            for r in first..first + rows {
                out.extend(offsets.iter().map(|o| (r + o) * itemsize));
            }
            Pos::List(out)
        }
    }
}

/// Positions of the elements of the rows `first + at[k]`, as [`rows`] gives them for a
/// range: `at` holds offsets from `first`; the data at hand starts at row `first` (C
/// order) or at row 0 (`fortran`).
pub(crate) fn rows_at(
    first: usize,
    at: &[usize],
    row_elements: usize,
    itemsize: usize,
    fortran: Option<&[usize]>,
) -> Pos {
    match fortran {
        None if row_elements == 1 => Pos::List(at.iter().map(|r| r * itemsize).collect()),
        None => {
            let row_bytes = row_elements * itemsize;
            let mut out = Vec::with_capacity(at.len() * row_elements);
            for r in at {
                out.extend((0..row_elements).map(|e| r * row_bytes + e * itemsize));
            }
            Pos::List(out)
        }
        Some(offsets) => {
            let mut out = Vec::with_capacity(at.len() * offsets.len());
            for r in at {
                out.extend(offsets.iter().map(|o| (first + r + o) * itemsize));
            }
            Pos::List(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_and_lists_give_the_same_positions() {
        let grid = Pos::strided(4, 32, 3).items(2, 8);
        let list = Pos::List(vec![4, 36, 68]).items(2, 8);
        let want = [4, 12, 36, 44, 68, 76];
        for p in [&grid, &list] {
            assert_eq!(p.iter().collect::<Vec<_>>(), want);
            assert_eq!((0..6).map(|k| p.get(k)).collect::<Vec<_>>(), want);
            let mut seen = Vec::new();
            p.for_each(|k, at| seen.push((k, at)));
            assert_eq!(seen, want.iter().copied().enumerate().collect::<Vec<_>>());
            assert_eq!(p.shifted(1).iter().next(), Some(5));
            assert!(!p.contiguous(8));
        }
        assert!(Pos::strided(0, 16, 3).items(2, 8).contiguous(8));
        assert!(Pos::strided(0, 4, 3).contiguous(4));
        assert_eq!(Pos::strided(0, 4, 3).items(0, 8).iter().count(), 0);
        assert_eq!(grid.items(3, 1).count(), 18);
    }

    #[test]
    fn picks_are_the_same_items_of_grids_and_lists() {
        // Rows of 3 items of 4 bytes, 12 bytes apart: items 1..3 of each.
        let grid = rows(0, 3, 3, 4, None);
        let list = Pos::List(grid.iter().collect());
        for p in [&grid, &list] {
            assert_eq!(p.pick(3, 1, 2).iter().collect::<Vec<_>>(), [4, 8, 16, 20, 28, 32]);
            assert_eq!(p.pick(3, 2, 1).iter().collect::<Vec<_>>(), [8, 20, 32]);
        }
        assert!(matches!(grid.pick(3, 2, 1), Pos::Grid { start: 8, n: 3, len: 1, .. }));
        // Fortran-order rows, (3, 2): item 1 of row r is element r + 3.
        assert_eq!(rows(0, 3, 2, 4, Some(&[0, 3])).pick(2, 1, 1).iter().collect::<Vec<_>>(), [12, 16, 20]);
    }

    #[test]
    fn rows_in_c_and_fortran_order() {
        // rows 1..3 of a (3, 2) array of 4-byte elements
        assert_eq!(rows(1, 2, 2, 4, None).iter().collect::<Vec<_>>(), [8, 12, 16, 20]);
        // Fortran: element (r, j) at r + 3 j
        assert_eq!(rows(1, 2, 2, 4, Some(&[0, 3])).iter().collect::<Vec<_>>(), [4, 16, 8, 20]);
        assert_eq!(rows(0, 3, 1, 8, None).iter().collect::<Vec<_>>(), [0, 8, 16]);
        // The same rows picked one by one give the same positions.
        for fortran in [None, Some(&[0, 3][..])] {
            let picked = rows_at(1, &[0, 1], 2, 4, fortran).iter().collect::<Vec<_>>();
            let whole = rows(1, 2, 2, 4, fortran).iter().collect::<Vec<_>>();
            let from_first = if fortran.is_some() { whole } else { whole.iter().map(|p| p - 8).collect() };
            assert_eq!(picked, from_first);
        }
        assert_eq!(rows_at(5, &[0, 2], 1, 8, None).iter().collect::<Vec<_>>(), [0, 16]);
    }
}
