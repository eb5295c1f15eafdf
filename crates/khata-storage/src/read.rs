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
//! as Cassandra does. A read given a `tombstone_page_limit` (DynamoDB's Query, which never
//! fails on deleted items) instead stops once it has met that many, after the row that
//! reached it, with `limit_reached` set: its last row, live or not, is where a next page
//! resumes, as Alternator's `query_tombstone_page_limit` ends a page early.

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
pub type RowStream = SortedStream<Bytes, Row>;

/// A stream of `(key, value)` in key order (or reverse order), one source of a [`KMerge`].
pub type SortedStream<K, V> = Box<dyn Iterator<Item = Result<(K, V)>> + Send>;

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
    /// Stop after the row with which the read has met this many tombstones, rather than fail
    /// past `tombstone_failure_threshold` (None: fail, as a CQL read does).
    pub tombstone_page_limit: Option<usize>,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            row_limit: None,
            tombstone_warn_threshold: 1000,
            tombstone_failure_threshold: 100_000,
            tombstone_page_limit: None,
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
    /// Whether the read stopped at the row limit, or at the tombstone page limit, with rows
    /// possibly left.
    pub limit_reached: bool,
    /// Warnings for the client (too many tombstones).
    pub warnings: Vec<String>,
    /// SSTables the read looked into (a trace's "Merged data from memtables and N sstables").
    pub sstables_read: usize,
}

impl ReadResult {
    /// Rows live at `now`, in clustering order.
    pub fn live_rows(&self, now: LocalTime) -> impl DoubleEndedIterator<Item = (&Bytes, &Row)> {
        self.partition.live_rows(now)
    }
}

/// What a k-way merge ([`KMerge`]) joins when several sources hold the same key.
pub trait MergeSources {
    /// Join another source's version of the same key into `self`.
    fn join(&mut self, other: Self);
}

impl MergeSources for Row {
    fn join(&mut self, other: Row) {
        self.merge(other);
    }
}

/// A [`KMerge`]'s one stream with items left, and its next item.
type Single<'a, K, V> = ((K, V), &'a mut SortedStream<K, V>);

/// The next item of one source in a [`KMerge`]'s heap.
struct Head<K, V> {
    key: K,
    value: V,
    source: usize,
    reversed: bool,
}

impl<K: Ord, V> PartialEq for Head<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<K: Ord, V> Eq for Head<K, V> {}
impl<K: Ord, V> PartialOrd for Head<K, V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: Ord, V> Ord for Head<K, V> {
    /// BinaryHeap is a max-heap: the head to emit next must compare greatest (of equal keys,
    /// the lowest source's).
    fn cmp(&self, other: &Self) -> Ordering {
        let by_key = self.key.cmp(&other.key);
        let by_key = if self.reversed {
            by_key
        } else {
            by_key.reverse()
        };
        by_key.then_with(|| other.source.cmp(&self.source))
    }
}

/// A k-way merge of streams sorted by key (descending when `reversed`), joining equal keys:
/// each key comes out once, its value joined from every stream that has it
/// ([`MergeSources::join`]). Of one partition's row streams by clustering (a read's,
/// [`merge_partition`], and compaction's of a wide partition: [`MergedRows`]) and of partition
/// streams by key (compaction's and a range scan's: [`MergedPartitions`]).
pub struct KMerge<K, V> {
    streams: Vec<SortedStream<K, V>>,
    heap: BinaryHeap<Head<K, V>>,
    reversed: bool,
    primed: bool,
}

impl<K, V> std::fmt::Debug for KMerge<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KMerge")
            .field("streams", &self.streams.len())
            .field("reversed", &self.reversed)
            .finish()
    }
}

impl<K: Ord, V: MergeSources> KMerge<K, V> {
    pub fn new(streams: Vec<SortedStream<K, V>>, reversed: bool) -> Self {
        KMerge {
            heap: BinaryHeap::with_capacity(streams.len()),
            streams,
            reversed,
            primed: false,
        }
    }

    fn pull(&mut self, source: usize) -> Result<()> {
        if let Some(item) = self.streams[source].next() {
            let (key, value) = item?;
            self.heap.push(Head {
                key,
                value,
                source,
                reversed: self.reversed,
            });
        }
        Ok(())
    }

    /// Read the first item of every stream (once; every other call does nothing).
    fn prime(&mut self) -> Result<()> {
        if !self.primed {
            self.primed = true;
            for i in 0..self.streams.len() {
                self.pull(i)?;
            }
        }
        Ok(())
    }

    /// When exactly one stream has items left: its next item and the stream, to be read
    /// straight through with nothing to join; the merge is then empty.
    fn take_single(&mut self) -> Result<Option<Single<'_, K, V>>> {
        self.prime()?;
        if self.heap.len() != 1 {
            return Ok(None);
        }
        let head = self.heap.pop().expect("one head");
        Ok(Some((
            (head.key, head.value),
            &mut self.streams[head.source],
        )))
    }

    /// Whether any stream may have items left.
    fn has_more(&self) -> bool {
        !self.primed || !self.heap.is_empty()
    }

    fn next_merged(&mut self) -> Result<Option<(K, V)>> {
        self.prime()?;
        let Some(first) = self.heap.pop() else {
            return Ok(None);
        };
        let mut value = first.value;
        // A stream's next item has a later key: it cannot join this one.
        self.pull(first.source)?;
        while self.heap.peek().is_some_and(|h| h.key == first.key) {
            let h = self.heap.pop().expect("peeked");
            value.join(h.value);
            self.pull(h.source)?;
        }
        Ok(Some((first.key, value)))
    }
}

impl<K: Ord, V: MergeSources> Iterator for KMerge<K, V> {
    type Item = Result<(K, V)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_merged().transpose()
    }
}

/// The rows of one partition from several sources, by clustering, joined.
pub(crate) type MergedRows = KMerge<Bytes, Row>;

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
    let mut merge = MergedRows::new(streams, reversed);
    if let Some((first, stream)) = merge.take_single()? {
        // Only one source has rows in the slice (common after compaction): stream its rows
        // straight through, with no heap and nothing to join.
        single_stream(
            &mut out,
            &mut result,
            Some(first),
            stream,
            reversed,
            now,
            &limits,
        )?;
        return Ok(finish(out, result, &limits));
    }
    while let Some((clustering, row)) = merge.next_merged()? {
        let outer = max_deletion(out.deletion, out.range_tombstones.covering(&clustering));
        let keep = |c, r| {
            out.rows.insert(c, r);
        };
        if accept(&mut result, outer, clustering, row, now, &limits, keep)? {
            result.limit_reached = merge.has_more();
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
    result.warnings.extend(tombstone_warning(
        result.live_rows,
        result.tombstones_scanned,
        limits,
    ));
    result.partition = out;
    result
}

/// The client warning of a read or a scan's page that met more than
/// `tombstone_warn_threshold` tombstones.
pub(crate) fn tombstone_warning(
    live_rows: usize,
    scanned: usize,
    limits: &ReadLimits,
) -> Option<String> {
    (scanned > limits.tombstone_warn_threshold).then(|| {
        format!(
            "Read {live_rows} live rows and {scanned} tombstone cells (see tombstone_warn_threshold)"
        )
    })
}

/// Take one merged row into the answer: shadow it by `outer` (the partition deletion and any
/// range tombstone covering it), count its tombstones in `result` (failing past the
/// threshold), and hand it to `keep` unless nothing is left of it. Returns whether the
/// live-row limit, or the tombstone page limit, has now been reached.
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
    let tombstones = row.tombstone_count(now);
    result.tombstones_scanned += tombstones;
    let page_ends = match limits.tombstone_page_limit {
        // Only a row with tombstones ends the page, so the row is kept (it is not empty) and
        // is the page's last.
        Some(l) => tombstones > 0 && result.tombstones_scanned >= l,
        None if result.tombstones_scanned > limits.tombstone_failure_threshold => {
            return Err(StorageError::TombstoneOverwhelm {
                scanned: result.tombstones_scanned,
                threshold: limits.tombstone_failure_threshold,
            });
        }
        None => false,
    };
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
    Ok(page_ends)
}

/// A stream of partitions (`P`: whole ones, or as a scan gives them) in key order from one
/// source.
pub type KeyedStream<P> = SortedStream<DecoratedKey, P>;

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
pub type MergedPartitions<P = Partition> = KMerge<DecoratedKey, P>;
