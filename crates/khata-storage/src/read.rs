//! The read path: merging memtables and SSTables into one reconciled answer.
//!
//! Every source (a memtable or an SSTable) offers a [`SourcePartition`]: the partition-level
//! deletion, static row and range tombstones, and a lazy stream of rows in clustering order
//! (or reverse order) restricted to the requested slice. [`merge_partition`] joins the
//! partition-level parts, then runs a k-way merge of the row streams, joining rows with equal
//! clustering keys and removing what deletions shadow, until `limit` rows live at `now` have
//! been produced. Rows are pulled lazily, so "the newest 50 rows" of a huge partition reads
//! about 50 rows from each source, not the partition.
//!
//! The answer keeps tombstones (a coordinator reconciling replicas needs them); use
//! [`ReadResult::live_rows`] for what a client sees. Tombstones met on the way are counted:
//! past `tombstone_warn_threshold` the result carries a warning, past
//! `tombstone_failure_threshold` the read fails with [`StorageError::TombstoneOverwhelm`],
//! as Cassandra does.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use bytes::Bytes;
use khata_types::LocalTime;
use khata_types::cell::{DeletionTime, max_deletion};
use khata_types::partition::{Partition, RangeTombstoneList};
use khata_types::row::{CellKey, ColumnId, Row};
use khata_types::token::DecoratedKey;

use crate::error::{Result, StorageError};

/// A stream of rows from one source.
pub type RowStream = Box<dyn Iterator<Item = Result<(Bytes, Row)>> + Send>;

/// One source's view of a partition, restricted to the slice being read.
pub struct SourcePartition {
    pub deletion: Option<DeletionTime>,
    pub static_row: Row,
    pub range_tombstones: RangeTombstoneList,
    /// Rows in the slice, in clustering order, or reverse order for a reversed read.
    pub rows: RowStream,
}

impl std::fmt::Debug for SourcePartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourcePartition")
            .field("deletion", &self.deletion)
            .field("range_tombstones", &self.range_tombstones.len())
            .finish_non_exhaustive()
    }
}

impl SourcePartition {
    /// A source over an in-memory partition (already sliced).
    pub fn from_partition(p: Partition, reversed: bool) -> Self {
        let rows: Vec<(Bytes, Row)> = p.rows.into_iter().collect();
        let rows: RowStream = if reversed {
            Box::new(rows.into_iter().rev().map(Ok))
        } else {
            Box::new(rows.into_iter().map(Ok))
        };
        SourcePartition {
            deletion: p.deletion,
            static_row: p.static_row,
            range_tombstones: p.range_tombstones,
            rows,
        }
    }
}

/// A list that keeps its first item inline: most reads find the partition in one source (one
/// SSTable after a compaction), and a list of one then costs no allocation.
#[derive(Debug)]
pub(crate) enum Few<T> {
    Empty,
    One(T),
    Many(Vec<T>),
}

impl<T> Few<T> {
    pub(crate) fn push(&mut self, item: T) {
        *self = match std::mem::replace(self, Few::Empty) {
            Few::Empty => Few::One(item),
            Few::One(first) => Few::Many(vec![first, item]),
            Few::Many(mut items) => {
                items.push(item);
                Few::Many(items)
            }
        };
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Few::Empty)
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Few::Empty => &mut [],
            Few::One(item) => std::slice::from_mut(item),
            Few::Many(items) => items,
        }
    }

    pub(crate) fn into_vec(self) -> Vec<T> {
        match self {
            Few::Empty => Vec::new(),
            Few::One(item) => vec![item],
            Few::Many(items) => items,
        }
    }
}

impl<T> IntoIterator for Few<T> {
    type Item = T;
    type IntoIter = std::iter::Chain<std::option::IntoIter<T>, std::vec::IntoIter<T>>;

    fn into_iter(self) -> Self::IntoIter {
        let (one, many) = match self {
            Few::Empty => (None, Vec::new()),
            Few::One(item) => (Some(item), Vec::new()),
            Few::Many(items) => (None, items),
        };
        one.into_iter().chain(many)
    }
}

/// What a read of one row has found so far in the sources it read, newest first, so that it
/// can stop before the sources that can no longer change the answer (Cassandra's
/// `queryMemtableAndSSTablesInTimestampOrder`).
///
/// An older source whose writes are all at or before `t` cannot change the row once the
/// sources already read hold a deletion of the row (or of its partition, or a range
/// tombstone over it) after `t`, or hold both a row marker after `t` and, for each of the
/// table's `columns`, a simple cell or a whole-collection deletion after `t`: every write of
/// the older source loses to one of those by timestamp. The marker matters, not only the
/// cells: an older marker can make a row of null columns exist. The caller names every regular
/// column (so that no older cell of another column could make the row exist) and reads no
/// static row.
#[derive(Debug)]
pub(crate) struct RowCover {
    /// The newest deletion of the row, its partition or a range over it.
    deleted_at: i64,
    /// The newest row marker.
    marker_at: i64,
    /// Each regular column with its newest simple cell or whole-collection deletion.
    columns: Vec<(ColumnId, i64)>,
}

impl RowCover {
    pub(crate) fn new(columns: impl IntoIterator<Item = ColumnId>) -> Self {
        RowCover {
            deleted_at: i64::MIN,
            marker_at: i64::MIN,
            columns: columns.into_iter().map(|c| (c, i64::MIN)).collect(),
        }
    }

    /// Take in a deletion the read met: its partition's, or a range tombstone over the row.
    pub(crate) fn deletion(&mut self, d: Option<DeletionTime>) {
        if let Some(d) = d {
            self.deleted_at = self.deleted_at.max(d.marked_for_delete_at);
        }
    }

    /// Take in one source's version of the row.
    pub(crate) fn row(&mut self, row: &Row) {
        self.deletion(row.deletion);
        if let Some(l) = row.liveness {
            self.marker_at = self.marker_at.max(l.timestamp);
        }
        for (c, newest) in &mut self.columns {
            let cell = row.cells.get(&CellKey::simple(*c)).map(|c| c.timestamp);
            let dropped = row.column_deletions.get(c).map(|d| d.marked_for_delete_at);
            *newest = (*newest).max(cell.max(dropped).unwrap_or(i64::MIN));
        }
    }

    /// Whether a source whose newest write is at `t` (None: it holds no write) can change the
    /// row no more.
    pub(crate) fn covers(&self, t: Option<i64>) -> bool {
        let Some(t) = t else { return true };
        self.deleted_at > t || (self.marker_at > t && self.columns.iter().all(|&(_, c)| c > t))
    }
}

/// Limits and thresholds of one read.
#[derive(Clone, Copy, Debug)]
pub struct ReadLimits {
    /// Stop after this many rows live at `now` (None: no limit).
    pub row_limit: Option<usize>,
    pub tombstone_warn_threshold: usize,
    pub tombstone_failure_threshold: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            row_limit: None,
            tombstone_warn_threshold: 1000,
            tombstone_failure_threshold: 100_000,
        }
    }
}

/// What a read of one partition found.
#[derive(Debug, Clone, Default)]
pub struct ReadResult {
    /// The reconciled partition restricted to the slice (tombstones included), holding at most
    /// `row_limit` live rows.
    pub partition: Partition,
    /// Tombstones met while reading.
    pub tombstones_scanned: usize,
    /// Live rows in `partition`.
    pub live_rows: usize,
    /// Whether the read stopped at the row limit with rows possibly left.
    pub limit_reached: bool,
    /// Warnings for the client (too many tombstones).
    pub warnings: Vec<String>,
}

impl ReadResult {
    /// Rows live at `now`, in clustering order.
    pub fn live_rows(&self, now: LocalTime) -> impl DoubleEndedIterator<Item = (&Bytes, &Row)> {
        self.partition.live_rows(now)
    }
}

struct Head {
    clustering: Bytes,
    row: Row,
    source: usize,
    reversed: bool,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    /// BinaryHeap is a max-heap: the head to emit next must compare greatest.
    fn cmp(&self, other: &Self) -> Ordering {
        let by_key = self.clustering.cmp(&other.clustering);
        let by_key = if self.reversed {
            by_key
        } else {
            by_key.reverse()
        };
        by_key.then_with(|| other.source.cmp(&self.source))
    }
}

/// A k-way merge of the row streams of one partition by clustering key (descending when
/// `reversed`), joining equal keys: each clustering comes out once, its row joined from every
/// stream that has it. Compaction merges a wide partition's rows with it; a read's merge
/// ([`merge_partition`]) keeps its own loop, which also applies the read's limits.
pub(crate) struct MergedRows {
    streams: Vec<RowStream>,
    heap: BinaryHeap<Head>,
    reversed: bool,
    primed: bool,
}

impl MergedRows {
    pub(crate) fn new(streams: Vec<RowStream>, reversed: bool) -> Self {
        MergedRows {
            heap: BinaryHeap::with_capacity(streams.len()),
            streams,
            reversed,
            primed: false,
        }
    }

    fn pull(&mut self, source: usize) -> Result<()> {
        if let Some(item) = self.streams[source].next() {
            let (clustering, row) = item?;
            self.heap.push(Head {
                clustering,
                row,
                source,
                reversed: self.reversed,
            });
        }
        Ok(())
    }

    fn next_merged(&mut self) -> Result<Option<(Bytes, Row)>> {
        if !self.primed {
            self.primed = true;
            for i in 0..self.streams.len() {
                self.pull(i)?;
            }
        }
        let Some(first) = self.heap.pop() else {
            return Ok(None);
        };
        let mut row = first.row;
        // A stream's next row has a later clustering: it cannot join this one.
        self.pull(first.source)?;
        while self
            .heap
            .peek()
            .is_some_and(|h| h.clustering == first.clustering)
        {
            let h = self.heap.pop().expect("peeked");
            row.merge(h.row);
            self.pull(h.source)?;
        }
        Ok(Some((first.clustering, row)))
    }
}

impl Iterator for MergedRows {
    type Item = Result<(Bytes, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_merged().transpose()
    }
}

/// Merge the sources' views of one partition (see the module documentation).
pub fn merge_partition(
    sources: Vec<SourcePartition>,
    reversed: bool,
    now: LocalTime,
    limits: ReadLimits,
) -> Result<ReadResult> {
    let mut out = Partition::new();
    // The streams reuse the sources' allocation.
    let mut streams: Vec<RowStream> = sources
        .into_iter()
        .map(|s| {
            out.deletion = max_deletion(out.deletion, s.deletion);
            out.static_row.merge(s.static_row);
            out.range_tombstones.merge(&s.range_tombstones);
            s.rows
        })
        .collect();
    let mut result = start_result(&mut out, now);
    if let [stream] = &mut streams[..] {
        single_stream(&mut out, &mut result, None, stream, reversed, now, &limits)?;
        return Ok(finish(out, result, &limits));
    }

    let mut heap = BinaryHeap::with_capacity(streams.len());
    for (i, s) in streams.iter_mut().enumerate() {
        if let Some(item) = s.next() {
            let (clustering, row) = item?;
            heap.push(Head {
                clustering,
                row,
                source: i,
                reversed,
            });
        }
    }
    if heap.len() == 1 {
        // Only one source has rows in the slice (common after compaction): stream its rows
        // straight through, with no heap and nothing to join.
        let first = heap.pop().expect("one head");
        let stream = &mut streams[first.source];
        let first = Some((first.clustering, first.row));
        single_stream(&mut out, &mut result, first, stream, reversed, now, &limits)?;
        return Ok(finish(out, result, &limits));
    }
    let mut advance = Vec::with_capacity(streams.len());
    while let Some(first) = heap.pop() {
        let clustering = first.clustering;
        let mut row = first.row;
        advance.clear();
        advance.push(first.source);
        while heap.peek().is_some_and(|h| h.clustering == clustering) {
            let h = heap.pop().expect("peeked");
            row.merge(h.row);
            advance.push(h.source);
        }
        for &i in &advance {
            if let Some(item) = streams[i].next() {
                let (c, r) = item?;
                heap.push(Head {
                    clustering: c,
                    row: r,
                    source: i,
                    reversed,
                });
            }
        }
        let outer = max_deletion(out.deletion, out.range_tombstones.covering(&clustering));
        let keep = |c, r| {
            out.rows.insert(c, r);
        };
        if accept(&mut result, outer, clustering, row, now, &limits, keep)? {
            result.limit_reached = !heap.is_empty();
            break;
        }
    }
    Ok(finish(out, result, &limits))
}

/// [`merge_partition`] of a single source (a read that found the partition in one SSTable or
/// one memtable): no list of sources, no heap.
pub fn merge_single(
    source: SourcePartition,
    reversed: bool,
    now: LocalTime,
    limits: ReadLimits,
) -> Result<ReadResult> {
    merge_single_rows(
        source.deletion,
        source.static_row,
        &source.range_tombstones,
        source.rows,
        reversed,
        now,
        limits,
    )
}

/// [`merge_single`] of a source given as its parts, with rows from any iterator (a borrowed
/// SSTable read's, which is neither boxed nor `'static`).
pub fn merge_single_rows(
    deletion: Option<DeletionTime>,
    static_row: Row,
    range_tombstones: &RangeTombstoneList,
    mut rows: impl Iterator<Item = Result<(Bytes, Row)>>,
    reversed: bool,
    now: LocalTime,
    limits: ReadLimits,
) -> Result<ReadResult> {
    // Joined into an empty partition exactly as `merge_partition` joins its sources.
    let mut out = Partition::new();
    out.deletion = max_deletion(out.deletion, deletion);
    out.static_row.merge(static_row);
    out.range_tombstones.merge(range_tombstones);
    let mut result = start_result(&mut out, now);
    single_stream(
        &mut out,
        &mut result,
        None,
        &mut rows,
        reversed,
        now,
        &limits,
    )?;
    Ok(finish(out, result, &limits))
}

/// Apply the partition deletion to the merged partition-level parts and count their
/// tombstones.
fn start_result(out: &mut Partition, now: LocalTime) -> ReadResult {
    if let Some(d) = out.deletion {
        out.range_tombstones.remove_shadowed(d);
    }
    out.static_row.shadow(out.deletion);
    ReadResult {
        tombstones_scanned: usize::from(out.deletion.is_some())
            + out.range_tombstones.len()
            + out.static_row.tombstone_count(now),
        ..ReadResult::default()
    }
}

/// Stream the rows of the only source with rows in the slice into `out` (`first`, if given,
/// is the row already taken from it): nothing to join, and the result's map of rows built at
/// once from them (they come sorted and distinct); a single row needs no list at all.
fn single_stream(
    out: &mut Partition,
    result: &mut ReadResult,
    first: Option<(Bytes, Row)>,
    stream: &mut impl Iterator<Item = Result<(Bytes, Row)>>,
    reversed: bool,
    now: LocalTime,
    limits: &ReadLimits,
) -> Result<()> {
    let Some(mut current) = first.map(Ok).or_else(|| stream.next()).transpose()? else {
        return Ok(());
    };
    let mut one = None;
    let mut kept = Vec::new();
    loop {
        // Pull the next row before accepting this one, as the merge does, so that errors
        // surface in the same order and `limit_reached` knows whether rows remain.
        let next = stream.next().transpose()?;
        let (clustering, row) = current;
        let outer = max_deletion(out.deletion, out.range_tombstones.covering(&clustering));
        let keep = |c, r| {
            if kept.is_empty() && one.is_none() {
                one = Some((c, r));
            } else {
                kept.extend(one.take());
                kept.push((c, r));
            }
        };
        if accept(result, outer, clustering, row, now, limits, keep)? {
            result.limit_reached = next.is_some();
            break;
        }
        match next {
            Some(n) => current = n,
            None => break,
        }
    }
    if let Some((c, r)) = one {
        out.rows.insert(c, r);
    } else if !kept.is_empty() {
        if reversed {
            kept.reverse();
        }
        out.rows = kept.into_iter().collect();
    }
    Ok(())
}

/// Add the tombstone warning if due, and put the partition into the result.
fn finish(out: Partition, mut result: ReadResult, limits: &ReadLimits) -> ReadResult {
    let scanned = result.tombstones_scanned;
    if scanned > limits.tombstone_warn_threshold {
        result.warnings.push(format!(
            "Read {} live rows and {} tombstone cells (see tombstone_warn_threshold)",
            result.live_rows, scanned
        ));
    }
    result.partition = out;
    result
}

/// Take one merged row into the answer: shadow it by `outer` (the partition deletion and any
/// range tombstone covering it), count its tombstones in `result` (failing past the
/// threshold), and hand it to `keep` unless nothing is left of it. Returns whether the
/// live-row limit has now been reached.
fn accept(
    result: &mut ReadResult,
    outer: Option<DeletionTime>,
    clustering: Bytes,
    mut row: Row,
    now: LocalTime,
    limits: &ReadLimits,
    keep: impl FnOnce(Bytes, Row),
) -> Result<bool> {
    row.shadow(outer);
    result.tombstones_scanned += row.tombstone_count(now);
    if result.tombstones_scanned > limits.tombstone_failure_threshold {
        return Err(StorageError::TombstoneOverwhelm {
            scanned: result.tombstones_scanned,
            threshold: limits.tombstone_failure_threshold,
        });
    }
    if row.is_empty() {
        return Ok(false);
    }
    let live = row.is_live(now);
    keep(clustering, row);
    if live {
        result.live_rows += 1;
        if limits.row_limit.is_some_and(|l| result.live_rows >= l) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A stream of partitions (`P`: whole ones, or as a scan gives them) in key order from one
/// source.
pub type KeyedStream<P> = Box<dyn Iterator<Item = Result<(DecoratedKey, P)>> + Send>;

/// A stream of whole partitions in key order from one source.
pub type PartitionStream = KeyedStream<Partition>;

/// A partition as a range scan's source gives it: whole, or, when it is wide, only by its key,
/// for the scan to read in pieces no bigger than its page through the point-read path (which
/// reads a bounded number of rows from each source). Copying a partition of millions of rows
/// out of a memtable or decoding it from an SSTable, to return a page of a few thousand, is
/// what this avoids.
#[derive(Debug)]
pub enum Scanned {
    Whole(Partition),
    Wide,
}

/// A stream of partitions in key order from one source of a range scan.
pub type ScanStream = KeyedStream<Scanned>;

/// What [`MergedPartitions`] joins when several sources hold the same key.
pub trait MergeSources {
    /// Join another source's version of the same key into `self`.
    fn join(&mut self, other: Self);
}

impl MergeSources for Partition {
    fn join(&mut self, other: Partition) {
        self.merge(other);
    }
}

impl MergeSources for Scanned {
    /// A key any source found wide is wide: the scan reads it from every source anyway.
    fn join(&mut self, other: Scanned) {
        match (&mut *self, other) {
            (Scanned::Whole(p), Scanned::Whole(o)) => p.merge(o),
            (Scanned::Whole(_), Scanned::Wide) => *self = Scanned::Wide,
            (Scanned::Wide, _) => {}
        }
    }
}

/// A k-way merge of partition streams by key, joining equal keys: of whole partitions
/// ([`PartitionStream`], compaction's) or of a range scan's [`ScanStream`]s.
pub struct MergedPartitions<P = Partition> {
    streams: Vec<KeyedStream<P>>,
    heap: BinaryHeap<PartitionHead<P>>,
    primed: bool,
}

impl<P> std::fmt::Debug for MergedPartitions<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergedPartitions")
            .field("streams", &self.streams.len())
            .finish()
    }
}

struct PartitionHead<P> {
    key: DecoratedKey,
    partition: P,
    source: usize,
}

impl<P> PartialEq for PartitionHead<P> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<P> Eq for PartitionHead<P> {}
impl<P> PartialOrd for PartitionHead<P> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<P> Ord for PartitionHead<P> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .key
            .cmp(&self.key)
            .then_with(|| other.source.cmp(&self.source))
    }
}

impl<P: MergeSources> MergedPartitions<P> {
    pub fn new(streams: Vec<KeyedStream<P>>) -> Self {
        MergedPartitions {
            heap: BinaryHeap::with_capacity(streams.len()),
            streams,
            primed: false,
        }
    }

    fn pull(&mut self, i: usize) -> Result<()> {
        if let Some(item) = self.streams[i].next() {
            let (key, partition) = item?;
            self.heap.push(PartitionHead {
                key,
                partition,
                source: i,
            });
        }
        Ok(())
    }

    fn next_merged(&mut self) -> Result<Option<(DecoratedKey, P)>> {
        if !self.primed {
            self.primed = true;
            for i in 0..self.streams.len() {
                self.pull(i)?;
            }
        }
        let Some(first) = self.heap.pop() else {
            return Ok(None);
        };
        let key = first.key;
        let mut partition = first.partition;
        let mut advance = vec![first.source];
        while self.heap.peek().is_some_and(|h| h.key == key) {
            let h = self.heap.pop().expect("peeked");
            partition.join(h.partition);
            advance.push(h.source);
        }
        for i in advance {
            self.pull(i)?;
        }
        Ok(Some((key, partition)))
    }
}

impl<P: MergeSources> Iterator for MergedPartitions<P> {
    type Item = Result<(DecoratedKey, P)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_merged().transpose()
    }
}
