//! [`CellMap`]: the cells of one row, as a sorted vector.
//!
//! Rows usually hold a handful of cells, and a memtable holds millions of rows, so the
//! container matters: a `BTreeMap` allocates a node with room for eleven entries even for one
//! cell (about a kilobyte per row), where a sorted `Vec` allocates exactly what the row needs
//! and keeps the cells in one cache-friendly run. Lookups are binary searches; inserting in
//! the middle shifts the tail, which is cheap at the sizes rows have (a row with thousands of
//! collection elements is still fine; a row is bounded by the frame and mutation limits).
//!
//! The API mirrors the parts of `BTreeMap` the code uses, so it reads the same.

use std::fmt;

use crate::cell::Cell;
use crate::row::CellKey;

/// Up to this many cells a map grows one slot at a time (see [`CellMap::insert`]).
const EXACT_GROWTH_UP_TO: usize = 8;

/// Cells keyed by [`CellKey`], in key order, each key at most once.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct CellMap {
    entries: Vec<(CellKey, Cell)>,
}

impl fmt::Debug for CellMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl CellMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        CellMap {
            entries: Vec::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn find(&self, key: &CellKey) -> Result<usize, usize> {
        // Appending in key order is the common case (decoding, building rows): check the end
        // first.
        match self.entries.last() {
            Some((last, _)) if last < key => Err(self.entries.len()),
            None => Err(0),
            _ => self.entries.binary_search_by(|(k, _)| k.cmp(key)),
        }
    }

    /// Insert or replace; returns the replaced cell.
    pub fn insert(&mut self, key: CellKey, cell: Cell) -> Option<Cell> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, cell)),
            Err(i) => {
                // Rows are built cell by cell and most have a few cells: growing by one keeps a
                // one-cell row at one slot rather than the four a doubling `Vec` starts with.
                if self.entries.len() < EXACT_GROWTH_UP_TO {
                    self.entries.reserve_exact(1);
                }
                self.entries.insert(i, (key, cell));
                None
            }
        }
    }

    pub fn get(&self, key: &CellKey) -> Option<&Cell> {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &CellKey) -> Option<&mut Cell> {
        match self.find(key) {
            Ok(i) => Some(&mut self.entries[i].1),
            Err(_) => None,
        }
    }

    pub fn remove(&mut self, key: &CellKey) -> Option<Cell> {
        self.find(key).ok().map(|i| self.entries.remove(i).1)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&CellKey, &Cell)> + ExactSizeIterator {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &CellKey> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Cell> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Cell> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// Keep the cells for which `f` returns true (it may modify them).
    pub fn retain(&mut self, mut f: impl FnMut(&CellKey, &mut Cell) -> bool) {
        self.entries.retain_mut(|(k, v)| f(k, v));
    }

    /// Whether every key of `other` is one of `self`'s.
    fn covers(&self, other: &CellMap) -> bool {
        let mut i = 0;
        'keys: for (key, _) in &other.entries {
            while let Some((mine, _)) = self.entries.get(i) {
                i += 1;
                match mine.cmp(key) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => continue 'keys,
                    std::cmp::Ordering::Greater => return false,
                }
            }
            return false;
        }
        true
    }

    /// Join `other` into `self`: for each key the greater cell in the reconciliation order.
    /// Linear in the sizes of both (a merge of two sorted runs, or in place when `other` only
    /// has keys `self` has).
    pub fn join(&mut self, other: CellMap) {
        if other.entries.is_empty() {
            return;
        }
        if self.entries.is_empty() {
            *self = other;
            return;
        }
        // An overwrite (every cell of `other` is one `self` has: the common update of a row)
        // is reconciled in place, without a new vector.
        if self.covers(&other) {
            let mut i = 0;
            for (key, theirs) in other.entries {
                while self.entries[i].0 < key {
                    i += 1;
                }
                let mine = &mut self.entries[i].1;
                // As `Cell::reconcile(mine, theirs)`.
                if theirs > *mine {
                    *mine = theirs;
                }
                i += 1;
            }
            return;
        }
        let mine = std::mem::take(&mut self.entries);
        let mut out = Vec::with_capacity(mine.len() + other.entries.len());
        let mut a = mine.into_iter().peekable();
        let mut b = other.entries.into_iter().peekable();
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some((ka, _)), Some((kb, _))) => match ka.cmp(kb) {
                    std::cmp::Ordering::Less => a.next(),
                    std::cmp::Ordering::Greater => b.next(),
                    std::cmp::Ordering::Equal => {
                        let (k, ca) = a.next().expect("peeked");
                        let (_, cb) = b.next().expect("peeked");
                        Some((k, Cell::reconcile(ca, cb)))
                    }
                },
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            out.extend(next);
        }
        self.entries = out;
    }
}

impl FromIterator<(CellKey, Cell)> for CellMap {
    fn from_iter<I: IntoIterator<Item = (CellKey, Cell)>>(iter: I) -> Self {
        let mut m = CellMap::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

impl Extend<(CellKey, Cell)> for CellMap {
    fn extend<I: IntoIterator<Item = (CellKey, Cell)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl IntoIterator for CellMap {
    type Item = (CellKey, Cell);
    type IntoIter = std::vec::IntoIter<(CellKey, Cell)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a> IntoIterator for &'a CellMap {
    type Item = (&'a CellKey, &'a Cell);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (CellKey, Cell)>,
        fn(&'a (CellKey, Cell)) -> (&'a CellKey, &'a Cell),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_keeps_order_and_replaces() {
        let mut m = CellMap::new();
        m.insert(CellKey::simple(3), Cell::live(1, &b"c"[..]));
        m.insert(CellKey::simple(1), Cell::live(1, &b"a"[..]));
        m.insert(CellKey::element(1, &b"x"[..]), Cell::live(1, &b"ax"[..]));
        assert_eq!(
            m.insert(CellKey::simple(3), Cell::live(2, &b"C"[..])),
            Some(Cell::live(1, &b"c"[..]))
        );
        let keys: Vec<_> = m.keys().cloned().collect();
        assert_eq!(
            keys,
            vec![
                CellKey::simple(1),
                CellKey::element(1, &b"x"[..]),
                CellKey::simple(3)
            ]
        );
        assert_eq!(m.get(&CellKey::simple(3)), Some(&Cell::live(2, &b"C"[..])));
    }

    #[test]
    fn join_takes_the_greater_cell_per_key() {
        let a: CellMap = [
            (CellKey::simple(1), Cell::live(5, &b"a"[..])),
            (CellKey::simple(2), Cell::live(1, &b"b"[..])),
        ]
        .into_iter()
        .collect();
        let b: CellMap = [
            (CellKey::simple(2), Cell::live(2, &b"B"[..])),
            (CellKey::simple(3), Cell::tombstone(1, 9)),
        ]
        .into_iter()
        .collect();
        let mut j = a.clone();
        j.join(b.clone());
        let mut k = b;
        k.join(a);
        assert_eq!(j, k);
        assert_eq!(j.len(), 3);
        assert_eq!(j.get(&CellKey::simple(2)), Some(&Cell::live(2, &b"B"[..])));
    }

    #[test]
    fn an_overwrite_is_joined_in_place_as_a_merge_would() {
        let row: CellMap = [
            (CellKey::simple(1), Cell::live(5, &b"a"[..])),
            (CellKey::element(2, &b"x"[..]), Cell::live(5, &b"x"[..])),
            (CellKey::simple(3), Cell::live(5, &b"c"[..])),
        ]
        .into_iter()
        .collect();
        // Subsets of the row's keys, newer, older and equal in timestamp; then one that is not
        // a subset (a new key in the middle).
        let updates: Vec<CellMap> = vec![
            [(CellKey::simple(3), Cell::live(6, &b"C"[..]))]
                .into_iter()
                .collect(),
            [(CellKey::simple(1), Cell::live(4, &b"old"[..]))]
                .into_iter()
                .collect(),
            [
                (CellKey::simple(1), Cell::tombstone(5, 9)),
                (CellKey::element(2, &b"x"[..]), Cell::live(7, &b"X"[..])),
                (CellKey::simple(3), Cell::live(5, &b"d"[..])),
            ]
            .into_iter()
            .collect(),
            [
                (CellKey::simple(1), Cell::live(9, &b"A"[..])),
                (CellKey::simple(2), Cell::live(9, &b"new"[..])),
            ]
            .into_iter()
            .collect(),
        ];
        for update in updates {
            let mut joined = row.clone();
            let capacity = joined.entries.capacity();
            let covered = joined.covers(&update);
            joined.join(update.clone());
            let mut expected = CellMap::new();
            for (k, c) in row.iter().chain(update.iter()) {
                let winner = match expected.get(k) {
                    Some(have) => Cell::reconcile(have.clone(), c.clone()),
                    None => c.clone(),
                };
                expected.insert(k.clone(), winner);
            }
            assert_eq!(joined, expected, "{update:?}");
            if covered {
                assert_eq!(joined.entries.capacity(), capacity, "joined in place");
            }
        }
    }
}
