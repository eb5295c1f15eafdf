//! SSTable statistics (the Statistics component): what compaction and the read path need to
//! know about an SSTable without reading it.
//!
//! Collected while writing, from exactly the partitions written. Times follow the data model:
//! timestamps in microseconds, local deletion and expiry times in seconds. Tombstone counts are
//! of tombstones as written (an expiring cell is counted in `expiring_cells`, whether or not it
//! has expired by the time anyone reads the statistics).
//!
//! Encoding: every field in declaration order; integers are varints (signed ones zigzag),
//! an optional value is a `0`/`1` byte then the value, a key is `token:i64 key:bytes`, the
//! histogram is its 64 counts. Checked by the whole-file CRC32C in the TOC.

use bytes::{BufMut, Bytes};
use khata_types::cell::CellKind;
use khata_types::codec::{CodecError, Reader, put_bytes, put_varint, put_zigzag};
use khata_types::token::{DecoratedKey, Token};
use khata_types::{DeletionTime, LocalTime, Row, Timestamp};

use super::format::{FormatError, get_i64};
use super::layout::PartitionRef;

/// How many of the largest partitions the statistics remember.
pub const LARGEST_PARTITIONS: usize = 10;
/// Buckets of the partition size histogram: bucket `i` counts partitions of `[2^i, 2^(i+1))`
/// bytes (bucket 0 also counts empty ones).
pub const HISTOGRAM_BUCKETS: usize = 64;

/// Statistics of one SSTable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SsTableStats {
    pub partition_count: u64,
    /// Rows, not counting static rows.
    pub row_count: u64,
    pub cell_count: u64,
    /// Smallest and largest write timestamp of anything (cells, row markers, deletions).
    pub min_timestamp: Option<Timestamp>,
    pub max_timestamp: Option<Timestamp>,
    /// Smallest and largest local deletion time of any tombstone.
    pub min_local_deletion_time: Option<LocalTime>,
    pub max_local_deletion_time: Option<LocalTime>,
    /// Latest expiry of any expiring cell or row marker.
    pub max_expiry_time: Option<LocalTime>,
    /// Whether some cell or row marker is live and has no TTL (so the data never expires).
    pub has_non_expiring_data: bool,
    pub partition_tombstones: u64,
    pub range_tombstones: u64,
    /// Row deletions.
    pub row_tombstones: u64,
    /// Deletions of whole collections (written when a collection is overwritten).
    pub collection_tombstones: u64,
    pub cell_tombstones: u64,
    pub expiring_cells: u64,
    /// Smallest and largest clustering bound of any row or range tombstone (a range
    /// tombstone's exclusive end counts as its bound, so the range is conservative). Static
    /// rows and partition deletions have no clustering and are not included.
    pub min_clustering: Option<Bytes>,
    pub max_clustering: Option<Bytes>,
    pub first_key: Option<DecoratedKey>,
    pub last_key: Option<DecoratedKey>,
    /// Serialized (uncompressed) partition sizes, by powers of two.
    pub partition_size_histogram: [u64; HISTOGRAM_BUCKETS],
    /// The largest partitions by serialized size, largest first.
    pub largest_partitions: Vec<(DecoratedKey, u64)>,
    /// Length of the Data component on disk (compressed), and of the logical stream.
    pub data_size_bytes: u64,
    pub uncompressed_data_size_bytes: u64,
    /// Compaction level (leveled compaction; 0 for a flush).
    pub level: u32,
}

impl Default for SsTableStats {
    fn default() -> Self {
        SsTableStats {
            partition_count: 0,
            row_count: 0,
            cell_count: 0,
            min_timestamp: None,
            max_timestamp: None,
            min_local_deletion_time: None,
            max_local_deletion_time: None,
            max_expiry_time: None,
            has_non_expiring_data: false,
            partition_tombstones: 0,
            range_tombstones: 0,
            row_tombstones: 0,
            collection_tombstones: 0,
            cell_tombstones: 0,
            expiring_cells: 0,
            min_clustering: None,
            max_clustering: None,
            first_key: None,
            last_key: None,
            partition_size_histogram: [0; HISTOGRAM_BUCKETS],
            largest_partitions: Vec::new(),
            data_size_bytes: 0,
            uncompressed_data_size_bytes: 0,
            level: 0,
        }
    }
}

fn bump_min<T: Ord + Copy>(slot: &mut Option<T>, v: T) {
    *slot = Some(slot.map_or(v, |s| s.min(v)));
}

fn bump_max<T: Ord + Copy>(slot: &mut Option<T>, v: T) {
    *slot = Some(slot.map_or(v, |s| s.max(v)));
}

/// The histogram bucket of a partition of `size` bytes.
pub(crate) fn size_bucket(size: u64) -> usize {
    if size == 0 {
        0
    } else {
        63 - size.leading_zeros() as usize
    }
}

impl SsTableStats {
    /// Total tombstones of every kind.
    pub fn tombstone_count(&self) -> u64 {
        self.partition_tombstones
            + self.range_tombstones
            + self.row_tombstones
            + self.collection_tombstones
            + self.cell_tombstones
    }

    /// The time after which nothing in the SSTable is live: the latest tombstone or expiry
    /// time. `None` when some data never expires. Once `now` is past this plus
    /// `gc_grace_seconds` (and no other SSTable holds older data it shadows), compaction may
    /// drop the SSTable whole.
    pub fn all_dead_after(&self) -> Option<LocalTime> {
        if self.has_non_expiring_data {
            return None;
        }
        match (self.max_local_deletion_time, self.max_expiry_time) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b).or(Some(0)),
        }
    }

    fn timestamp(&mut self, t: Timestamp) {
        bump_min(&mut self.min_timestamp, t);
        bump_max(&mut self.max_timestamp, t);
    }

    fn deletion(&mut self, d: &DeletionTime) {
        self.timestamp(d.marked_for_delete_at);
        self.local_deletion(d.local_deletion_time);
    }

    fn local_deletion(&mut self, t: LocalTime) {
        bump_min(&mut self.min_local_deletion_time, t);
        bump_max(&mut self.max_local_deletion_time, t);
    }

    fn clustering(&mut self, lo: &Bytes, hi: &Bytes) {
        if self.min_clustering.as_ref().is_none_or(|m| lo < m) {
            self.min_clustering = Some(lo.clone());
        }
        if self.max_clustering.as_ref().is_none_or(|m| hi > m) {
            self.max_clustering = Some(hi.clone());
        }
    }

    fn row(&mut self, row: &Row) {
        if let Some(l) = &row.liveness {
            self.timestamp(l.timestamp);
            match l.expiry {
                Some(e) => bump_max(&mut self.max_expiry_time, e.local_expiry),
                None => self.has_non_expiring_data = true,
            }
        }
        if let Some(d) = &row.deletion {
            self.row_tombstones += 1;
            self.deletion(d);
        }
        for d in row.column_deletions.values() {
            self.collection_tombstones += 1;
            self.deletion(d);
        }
        for cell in row.cells.values() {
            self.cell_count += 1;
            self.timestamp(cell.timestamp);
            match &cell.kind {
                CellKind::Live { .. } => self.has_non_expiring_data = true,
                CellKind::Expiring { expiry, .. } => {
                    self.expiring_cells += 1;
                    bump_max(&mut self.max_expiry_time, expiry.local_expiry);
                }
                CellKind::Tombstone {
                    local_deletion_time,
                } => {
                    self.cell_tombstones += 1;
                    self.local_deletion(*local_deletion_time);
                }
            }
        }
    }

    /// Account for one partition written under `key` taking `size` serialized bytes.
    pub(crate) fn add_partition(
        &mut self,
        key: &DecoratedKey,
        partition: PartitionRef<'_>,
        size: u64,
    ) {
        self.partition_count += 1;
        if self.first_key.is_none() {
            self.first_key = Some(key.clone());
        }
        self.last_key = Some(key.clone());
        if let Some(d) = partition.deletion() {
            self.partition_tombstones += 1;
            self.deletion(d);
        }
        for rt in partition
            .range_tombstones()
            .into_iter()
            .flat_map(|l| l.iter())
        {
            self.range_tombstones += 1;
            self.deletion(&rt.deletion);
            self.clustering(&rt.start, &rt.end);
        }
        if let Some(s) = partition.static_row() {
            self.row(s);
        }
        for (clustering, row) in partition.rows() {
            self.add_row(clustering, row);
        }
        self.partition_size(key, size);
    }

    /// Account for one clustering row of a partition written row by row; the partition's
    /// other parts are accounted for by [`Self::add_partition`] of them once it is finished.
    pub(crate) fn add_row(&mut self, clustering: &Bytes, row: &Row) {
        self.row_count += 1;
        self.row(row);
        self.clustering(clustering, clustering);
    }

    fn partition_size(&mut self, key: &DecoratedKey, size: u64) {
        if let Some(bucket) = self.partition_size_histogram.get_mut(size_bucket(size)) {
            *bucket += 1;
        }
        let smallest_kept = self.largest_partitions.last().map_or(0, |(_, s)| *s);
        if self.largest_partitions.len() < LARGEST_PARTITIONS || size > smallest_kept {
            let at = self.largest_partitions.partition_point(|(_, s)| *s >= size);
            self.largest_partitions.insert(at, (key.clone(), size));
            self.largest_partitions.truncate(LARGEST_PARTITIONS);
        }
    }

    /// The Statistics component.
    pub(crate) fn encode(&self) -> Vec<u8> {
        fn opt_i64(out: &mut Vec<u8>, v: Option<i64>) {
            out.put_u8(u8::from(v.is_some()));
            if let Some(v) = v {
                put_zigzag(out, v);
            }
        }
        fn opt_u32(out: &mut Vec<u8>, v: Option<u32>) {
            out.put_u8(u8::from(v.is_some()));
            if let Some(v) = v {
                put_varint(out, u64::from(v));
            }
        }
        fn opt_bytes(out: &mut Vec<u8>, v: &Option<Bytes>) {
            out.put_u8(u8::from(v.is_some()));
            if let Some(v) = v {
                put_bytes(out, v);
            }
        }
        fn key(out: &mut Vec<u8>, k: &DecoratedKey) {
            out.put_i64_le(k.token.0);
            put_bytes(out, &k.key);
        }
        fn opt_key(out: &mut Vec<u8>, v: &Option<DecoratedKey>) {
            out.put_u8(u8::from(v.is_some()));
            if let Some(v) = v {
                key(out, v);
            }
        }
        let mut out = Vec::with_capacity(256);
        for v in [self.partition_count, self.row_count, self.cell_count] {
            put_varint(&mut out, v);
        }
        opt_i64(&mut out, self.min_timestamp);
        opt_i64(&mut out, self.max_timestamp);
        opt_u32(&mut out, self.min_local_deletion_time);
        opt_u32(&mut out, self.max_local_deletion_time);
        opt_u32(&mut out, self.max_expiry_time);
        out.put_u8(u8::from(self.has_non_expiring_data));
        for v in [
            self.partition_tombstones,
            self.range_tombstones,
            self.row_tombstones,
            self.collection_tombstones,
            self.cell_tombstones,
            self.expiring_cells,
        ] {
            put_varint(&mut out, v);
        }
        opt_bytes(&mut out, &self.min_clustering);
        opt_bytes(&mut out, &self.max_clustering);
        opt_key(&mut out, &self.first_key);
        opt_key(&mut out, &self.last_key);
        for v in self.partition_size_histogram {
            put_varint(&mut out, v);
        }
        put_varint(&mut out, self.largest_partitions.len() as u64);
        for (k, size) in &self.largest_partitions {
            key(&mut out, k);
            put_varint(&mut out, *size);
        }
        put_varint(&mut out, self.data_size_bytes);
        put_varint(&mut out, self.uncompressed_data_size_bytes);
        put_varint(&mut out, u64::from(self.level));
        out
    }

    /// Decode the Statistics component.
    pub(crate) fn decode(bytes: Bytes) -> Result<Self, FormatError> {
        let mut r = Reader::new(bytes);
        let parsed = decode_fields(&mut r);
        parsed.map_err(|e| FormatError::codec(0, &r, e))
    }
}

fn present(r: &mut Reader) -> Result<bool, CodecError> {
    match r.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(CodecError::Invalid("bad presence byte")),
    }
}

fn get_key(r: &mut Reader) -> Result<DecoratedKey, CodecError> {
    let token = Token(get_i64(r)?);
    Ok(DecoratedKey {
        token,
        key: r.bytes()?,
    })
}

fn decode_fields(r: &mut Reader) -> Result<SsTableStats, CodecError> {
    let mut s = SsTableStats {
        partition_count: r.varint()?,
        row_count: r.varint()?,
        cell_count: r.varint()?,
        ..SsTableStats::default()
    };
    s.min_timestamp = if present(r)? { Some(r.zigzag()?) } else { None };
    s.max_timestamp = if present(r)? { Some(r.zigzag()?) } else { None };
    s.min_local_deletion_time = if present(r)? {
        Some(r.varint_u32()?)
    } else {
        None
    };
    s.max_local_deletion_time = if present(r)? {
        Some(r.varint_u32()?)
    } else {
        None
    };
    s.max_expiry_time = if present(r)? {
        Some(r.varint_u32()?)
    } else {
        None
    };
    s.has_non_expiring_data = present(r)?;
    s.partition_tombstones = r.varint()?;
    s.range_tombstones = r.varint()?;
    s.row_tombstones = r.varint()?;
    s.collection_tombstones = r.varint()?;
    s.cell_tombstones = r.varint()?;
    s.expiring_cells = r.varint()?;
    s.min_clustering = if present(r)? { Some(r.bytes()?) } else { None };
    s.max_clustering = if present(r)? { Some(r.bytes()?) } else { None };
    s.first_key = if present(r)? { Some(get_key(r)?) } else { None };
    s.last_key = if present(r)? { Some(get_key(r)?) } else { None };
    for bucket in s.partition_size_histogram.iter_mut() {
        *bucket = r.varint()?;
    }
    let largest = r.count()?;
    if largest > LARGEST_PARTITIONS {
        return Err(CodecError::Invalid("too many largest partitions"));
    }
    for _ in 0..largest {
        let key = get_key(r)?;
        s.largest_partitions.push((key, r.varint()?));
    }
    s.data_size_bytes = r.varint()?;
    s.uncompressed_data_size_bytes = r.varint()?;
    s.level = r.varint_u32()?;
    if !r.is_empty() {
        return Err(CodecError::Invalid("trailing bytes"));
    }
    Ok(s)
}
