//! How one partition is laid out in the Data stream: header, rows, row index.
//!
//! ```text
//! partition := header rows [row_index]
//! header    := key:bytes flags:u8 [deletion] [static_row:row] [range_tombstones]
//!              rows_length:varint row_index_length:varint
//!              flags: 1 = partition deletion, 2 = static row, 4 = range tombstones
//! rows      := block*                          -- rows_length bytes, clustering ascending
//! block     := count:u32 row_offset:u32{count} row{count}
//! row       := clustering:bytes body_length:varint body:row
//! row_index := entry{count} offset:u32{count} count:u32
//! entry     := first:bytes last:bytes offset:varint length:varint
//! ```
//!
//! `row`, `deletion` and `range_tombstones` are the encodings of `khata_types::codec`. The rows
//! are cut into blocks of about `row_index_interval_bytes` at row boundaries (a small partition
//! is one block). A block starts with the offset of each of its rows (relative to the block),
//! so a reader binary-searches a block by clustering key and walks it in either direction
//! touching only the rows it compares or returns, and each row carries the length of its body
//! (see [`super::partition_reader`]). The row index lists the blocks; their offsets are
//! relative to the start of `rows` and the blocks tile it exactly. Its entries are followed by a table of where each
//! entry starts (relative to the row index), so a reader binary-searches it without decoding
//! it ([`RowIndex`]). It is written only when there are at least two blocks, so small
//! partitions carry none.
//!
//! Decoding checks structural invariants and reports a [`FormatError`] at the logical offset
//! it failed: a whole decode ([`decode_rows`]) checks everything; a lookup checks everything it
//! touches (lengths inside the buffer, each block it reads against its neighbours' bounds, key
//! order among the rows it returns).

use bytes::{BufMut, Bytes};
use khata_types::codec::{
    CodecError, Reader, decode_partition_level, decode_row, encode_partition_level, encode_row,
    put_bytes, put_varint,
};
use khata_types::{DeletionTime, Partition, RangeTombstoneList, Row};

use super::format::FormatError;
use super::slice::{SliceReader, u32_at};

/// One block of rows in the row index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowIndexBlock {
    /// Clustering of the block's first and last rows.
    pub first: Bytes,
    pub last: Bytes,
    /// Offset of the block relative to the start of the rows, and its length.
    pub offset: u64,
    pub length: u64,
}

/// A partition serialized for the Data stream.
#[derive(Debug, Default)]
pub struct EncodedPartition {
    pub bytes: Vec<u8>,
    pub header_length: u64,
    pub rows_length: u64,
    pub row_index_length: u64,
    /// The length of each row block, in order (they tile the rows).
    pub block_lengths: Vec<u64>,
    /// The header holds only the key.
    pub plain_header: bool,
}

/// The decoded header of a partition.
#[derive(Debug)]
pub struct Header {
    pub key: Bytes,
    pub deletion: Option<DeletionTime>,
    pub static_row: Row,
    pub range_tombstones: RangeTombstoneList,
    pub rows_length: u64,
    pub row_index_length: u64,
}

/// The block being written: its rows and where each starts.
#[derive(Debug, Default)]
struct BlockBuilder {
    rows: Vec<u8>,
    starts: Vec<usize>,
    /// The next row, encoded, before it is added.
    row: Vec<u8>,
    body: Vec<u8>,
}

impl BlockBuilder {
    /// Encode a row into `self.row`; returns its length.
    fn encode(&mut self, clustering: &Bytes, row: &Row) -> usize {
        self.row.clear();
        put_bytes(&mut self.row, clustering);
        self.body.clear();
        encode_row(&mut self.body, row);
        put_bytes(&mut self.row, &self.body);
        self.row.len()
    }

    /// The block's length with `extra` more bytes of rows in one more row.
    fn length_with(&self, extra: usize) -> usize {
        4 + 4 * (self.starts.len() + 1) + self.rows.len() + extra
    }

    /// Add the row last encoded.
    fn add_encoded(&mut self) {
        self.starts.push(self.rows.len());
        self.rows.extend_from_slice(&self.row);
    }

    /// Append the block (count, row offsets, rows) to `out` and describe it.
    fn finish(&mut self, out: &mut Vec<u8>, first: &Bytes, last: &Bytes) -> RowIndexBlock {
        let offset = out.len() as u64;
        let count = self.starts.len();
        let table_length = 4 + 4 * count;
        out.put_u32_le(u32::try_from(count).expect("fewer than 2^32 rows in a block"));
        for start in &self.starts {
            let at = u32::try_from(table_length + start).expect("a row block stays below 4 GiB");
            out.put_u32_le(at);
        }
        out.extend_from_slice(&self.rows);
        self.rows.clear();
        self.starts.clear();
        RowIndexBlock {
            first: first.clone(),
            last: last.clone(),
            offset,
            length: out.len() as u64 - offset,
        }
    }
}

/// Serialize `partition` under `key`, cutting the rows into blocks of at most
/// `block_bytes` (a row longer than that gets a block of its own).
#[cfg(test)]
pub fn encode_partition(key: &[u8], partition: &Partition, block_bytes: u64) -> EncodedPartition {
    let mut encoder = PartitionEncoder::default();
    encoder.encode(key, PartitionRef::Whole(partition), block_bytes);
    encoder.encoded
}

/// A partition as the SSTable writer reads it: a whole [`Partition`], or a partition that is
/// one row and nothing else, lent as that row. A memtable holds every partition of a
/// key-value table as its one row, and a flush writes them as they are rather than building
/// a `Partition` (and its B-tree) for each.
#[derive(Clone, Copy, Debug)]
pub enum PartitionRef<'a> {
    Whole(&'a Partition),
    /// The clustering key and the row: no deletion, static row or range tombstone.
    OneRow(&'a Bytes, &'a Row),
}

impl<'a> PartitionRef<'a> {
    pub fn deletion(self) -> Option<&'a DeletionTime> {
        match self {
            PartitionRef::Whole(p) => p.deletion.as_ref(),
            PartitionRef::OneRow(..) => None,
        }
    }

    /// The static row, if the partition has a non-empty one.
    pub fn static_row(self) -> Option<&'a Row> {
        match self {
            PartitionRef::Whole(p) if !p.static_row.is_empty() => Some(&p.static_row),
            _ => None,
        }
    }

    /// The range tombstones, if there are any.
    pub fn range_tombstones(self) -> Option<&'a RangeTombstoneList> {
        match self {
            PartitionRef::Whole(p) if !p.range_tombstones.is_empty() => Some(&p.range_tombstones),
            _ => None,
        }
    }

    /// The rows in clustering order.
    pub fn rows(self) -> impl Iterator<Item = (&'a Bytes, &'a Row)> {
        let (whole, one) = match self {
            PartitionRef::Whole(p) => (Some(p.rows.iter()), None),
            PartitionRef::OneRow(k, r) => (None, Some((k, r))),
        };
        whole.into_iter().flatten().chain(one)
    }

    pub fn is_empty(self) -> bool {
        match self {
            PartitionRef::Whole(p) => p.is_empty(),
            PartitionRef::OneRow(..) => false,
        }
    }

    /// A copy as a [`Partition`].
    pub fn to_partition(self) -> Partition {
        match self {
            PartitionRef::Whole(p) => p.clone(),
            PartitionRef::OneRow(k, r) => {
                let mut p = Partition::new();
                p.rows.insert(k.clone(), r.clone());
                p
            }
        }
    }
}

/// Encodes partitions one after another into buffers it keeps: a writer encodes every
/// partition with one, so once the buffers have grown to its partitions' size, encoding one
/// allocates nothing (each partition used to allocate a dozen buffers, several of them
/// kilobytes, which also made glibc consolidate its free lists each time).
#[derive(Debug, Default)]
pub struct PartitionEncoder {
    block: BlockBuilder,
    rows: Vec<u8>,
    blocks: Vec<RowIndexBlock>,
    row_index: Vec<u8>,
    starts: Vec<usize>,
    encoded: EncodedPartition,
}

impl PartitionEncoder {
    /// Serialize `partition` under `key`, cutting the rows into blocks of at most
    /// `block_bytes` (a row longer than that gets a block of its own). The result lives until
    /// the next call.
    pub fn encode(
        &mut self,
        key: &[u8],
        partition: PartitionRef<'_>,
        block_bytes: u64,
    ) -> &EncodedPartition {
        let PartitionEncoder {
            block,
            rows,
            blocks,
            row_index,
            starts,
            encoded,
        } = self;
        rows.clear();
        blocks.clear();
        row_index.clear();
        starts.clear();
        // First and last clustering of the block being built.
        let mut span: Option<(&Bytes, &Bytes)> = None;
        for (clustering, row) in partition.rows() {
            let length = block.encode(clustering, row);
            if let Some((first, last)) = span
                && block.length_with(length) as u64 > block_bytes
            {
                blocks.push(block.finish(rows, first, last));
                span = None;
            }
            block.add_encoded();
            span = Some((span.map_or(clustering, |(first, _)| first), clustering));
        }
        if let Some((first, last)) = span {
            blocks.push(block.finish(rows, first, last));
        }
        put_row_index(row_index, starts, blocks);

        let out = &mut encoded.bytes;
        out.clear();
        out.reserve(rows.len() + row_index.len() + key.len() + 64);
        let plain_header = put_header(
            out,
            key,
            partition,
            rows.len() as u64,
            row_index.len() as u64,
        );
        encoded.header_length = out.len() as u64;
        out.extend_from_slice(rows);
        out.extend_from_slice(row_index);
        encoded.rows_length = rows.len() as u64;
        encoded.row_index_length = row_index.len() as u64;
        encoded.block_lengths.clear();
        encoded
            .block_lengths
            .extend(blocks.iter().map(|b| b.length));
        encoded.plain_header = plain_header;
        // The blocks hold clustering keys of this partition; let them go with it.
        blocks.clear();
        encoded
    }
}

/// Append the row index of `blocks` to `row_index` (nothing for fewer than two blocks);
/// `starts` is scratch space.
fn put_row_index(row_index: &mut Vec<u8>, starts: &mut Vec<usize>, blocks: &[RowIndexBlock]) {
    if blocks.len() < 2 {
        return;
    }
    starts.clear();
    for b in blocks {
        starts.push(row_index.len());
        put_bytes(row_index, &b.first);
        put_bytes(row_index, &b.last);
        put_varint(row_index, b.offset);
        put_varint(row_index, b.length);
    }
    for start in starts.iter() {
        let start = u32::try_from(*start).expect("a row index entry starts within 4 GiB");
        row_index.put_u32_le(start);
    }
    let count = u32::try_from(blocks.len()).expect("fewer than 2^32 row index blocks");
    row_index.put_u32_le(count);
}

/// Append a partition header to `out`: the key, the partition-level parts of `partition`
/// (its rows are not looked at) and the lengths of the rows and row index that follow.
/// Returns whether the header holds only the key.
fn put_header(
    out: &mut Vec<u8>,
    key: &[u8],
    partition: PartitionRef<'_>,
    rows_length: u64,
    row_index_length: u64,
) -> bool {
    put_bytes(out, key);
    let plain_header = partition.deletion().is_none()
        && partition.static_row().is_none()
        && partition.range_tombstones().is_none();
    match partition {
        PartitionRef::Whole(p) => encode_partition_level(out, p),
        // No partition deletion, static row or range tombstones: the flags byte alone.
        PartitionRef::OneRow(..) => out.put_u8(0),
    }
    put_varint(out, rows_length);
    put_varint(out, row_index_length);
    plain_header
}

/// A partition encoded as its rows arrive, for one too large to hold whole (compaction of a
/// wide partition, see `SsTableWriter::start_partition`). Rows are cut into blocks exactly as
/// [`PartitionEncoder`] cuts them; finished blocks collect in [`StreamedRows::finished`], which
/// the caller drains (to a scratch file) whenever it likes, and the row index is encoded as
/// blocks finish. Memory: one block, the undrained bytes, the row index (an entry of about
/// twice a clustering key per block) and 16 bytes per block for where it lies.
#[derive(Debug, Default)]
pub struct StreamedRows {
    block: BlockBuilder,
    /// Finished blocks, not yet drained.
    pub finished: Vec<u8>,
    /// Bytes drained from `finished` so far.
    drained: u64,
    /// Where each finished block lies, relative to the start of the rows: offset, length.
    extents: Vec<(u64, u64)>,
    /// The row index's entries so far, and where each starts.
    entries: Vec<u8>,
    starts: Vec<u32>,
    /// First and last clustering of the block being built.
    span: Option<(Bytes, Bytes)>,
    rows: u64,
}

impl StreamedRows {
    /// Add the next row (clustering keys strictly ascending).
    pub fn push(&mut self, clustering: &Bytes, row: &Row, block_bytes: u64) {
        let length = self.block.encode(clustering, row);
        if self.span.is_some() && self.block.length_with(length) as u64 > block_bytes {
            self.finish_block();
        }
        self.block.add_encoded();
        self.rows += 1;
        match &mut self.span {
            Some((_, last)) => *last = clustering.clone(),
            None => self.span = Some((clustering.clone(), clustering.clone())),
        }
    }

    fn finish_block(&mut self) {
        if let Some((first, last)) = self.span.take() {
            let mut b = self.block.finish(&mut self.finished, &first, &last);
            b.offset += self.drained;
            let start =
                u32::try_from(self.entries.len()).expect("a row index entry starts within 4 GiB");
            self.starts.push(start);
            put_bytes(&mut self.entries, &b.first);
            put_bytes(&mut self.entries, &b.last);
            put_varint(&mut self.entries, b.offset);
            put_varint(&mut self.entries, b.length);
            self.extents.push((b.offset, b.length));
        }
    }

    /// Close the last block: every row is then in `finished` or drained.
    pub fn finish(&mut self) {
        self.finish_block();
    }

    /// Say that `finished` was drained (and clear it).
    pub fn drained(&mut self) {
        self.drained += self.finished.len() as u64;
        self.finished.clear();
    }

    /// Rows pushed so far.
    pub fn row_count(&self) -> u64 {
        self.rows
    }

    /// Bytes of finished blocks so far (drained or not).
    pub fn rows_length(&self) -> u64 {
        self.drained + self.finished.len() as u64
    }

    /// Where each finished block lies, in order: offset relative to the rows, and length.
    pub fn extents(&self) -> &[(u64, u64)] {
        &self.extents
    }

    /// The row index of the finished blocks (empty for fewer than two), as
    /// [`PartitionEncoder`] writes it.
    pub fn row_index(&self) -> Vec<u8> {
        if self.extents.len() < 2 {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(self.entries.len() + 4 * self.starts.len() + 4);
        out.extend_from_slice(&self.entries);
        for start in &self.starts {
            out.put_u32_le(*start);
        }
        let count = u32::try_from(self.extents.len()).expect("fewer than 2^32 row index blocks");
        out.put_u32_le(count);
        out
    }

    /// The header of the partition under `key` with the partition-level parts of `level`
    /// (its rows are not looked at), for rows and a row index as finished. Returns the
    /// bytes and whether they hold only the key.
    pub fn header(&self, key: &[u8], level: &Partition, row_index_length: u64) -> (Vec<u8>, bool) {
        let mut out = Vec::with_capacity(key.len() + 32);
        let plain = put_header(
            &mut out,
            key,
            PartitionRef::Whole(level),
            self.rows_length(),
            row_index_length,
        );
        (out, plain)
    }
}

/// Decode a header that starts at logical offset `base`. The header must fill `bytes` exactly
/// when `exact`; otherwise trailing bytes (the rows) are allowed and the consumed length is
/// returned alongside.
pub fn decode_header(bytes: Bytes, base: u64, exact: bool) -> Result<(Header, u64), FormatError> {
    let mut r = Reader::new(bytes);
    let parsed = (|| -> Result<Header, CodecError> {
        let key = r.bytes()?;
        let level = decode_partition_level(&mut r)?;
        let rows_length = r.varint()?;
        let row_index_length = r.varint()?;
        if exact && !r.is_empty() {
            return Err(CodecError::Invalid(
                "partition header longer than its index entry says",
            ));
        }
        Ok(Header {
            key,
            deletion: level.deletion,
            static_row: level.static_row,
            range_tombstones: level.range_tombstones,
            rows_length,
            row_index_length,
        })
    })();
    match parsed {
        Ok(header) => Ok((header, r.position() as u64)),
        Err(e) => Err(FormatError::codec(base, &r, e)),
    }
}

/// A row index held whole, read in place (the tests' decoder; readers use
/// [`super::row_index::RowIndexReader`], which can also read one lazily from Data).
#[cfg(test)]
#[derive(Debug)]
pub struct RowIndex {
    bytes: Bytes,
    /// Logical offset of the row index, for errors.
    base: u64,
    count: usize,
    /// Where the table of entry starts begins.
    table: usize,
    rows_length: u64,
}

/// One block of a [`RowIndex`], borrowed from it.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRef<'a> {
    pub first: &'a [u8],
    pub last: &'a [u8],
    pub offset: u64,
    pub length: u64,
}

#[cfg(test)]
impl RowIndex {
    /// The row index in `bytes` (at logical offset `base`) of rows `rows_length` bytes long.
    pub fn open(bytes: Bytes, base: u64, rows_length: u64) -> Result<RowIndex, FormatError> {
        let len = bytes.len();
        let count = len
            .checked_sub(4)
            .and_then(|at| u32_at(&bytes, at))
            .map(|c| c as usize)
            .ok_or_else(|| FormatError::new(base, "row index too short"))?;
        let table = count
            .checked_mul(4)
            .and_then(|t| len.checked_sub(4 + t))
            .filter(|_| count >= 2)
            .ok_or_else(|| FormatError::new(base, "row index count does not fit"))?;
        Ok(RowIndex {
            bytes,
            base,
            count,
            table,
            rows_length,
        })
    }

    pub fn len(&self) -> usize {
        self.count
    }

    /// Block `i` (< `len()`), checked against the bounds a well-formed index gives it: the
    /// first block starts the rows, the last ends them, and every block lies inside them.
    pub fn block(&self, i: usize) -> Result<BlockRef<'_>, FormatError> {
        let start = u32_at(&self.bytes, self.table + 4 * i)
            .map(|s| s as usize)
            .filter(|&s| s < self.table)
            .ok_or_else(|| FormatError::new(self.base, "row index entry out of range"))?;
        let mut r = SliceReader::at(&self.bytes[..self.table], start);
        let parsed = (|| -> Result<BlockRef<'_>, CodecError> {
            Ok(BlockRef {
                first: r.bytes()?,
                last: r.bytes()?,
                offset: r.varint()?,
                length: r.varint()?,
            })
        })();
        let at = self.base + r.position() as u64;
        let block = parsed.map_err(|e| FormatError::new(at, e.to_string()))?;
        let end = block.offset.checked_add(block.length);
        let tiled =
            (i > 0 || block.offset == 0) && (i + 1 < self.count || end == Some(self.rows_length));
        if block.first > block.last
            || block.length == 0
            || end.is_none_or(|e| e > self.rows_length)
            || !tiled
        {
            return Err(FormatError::new(at, "row index block out of bounds"));
        }
        Ok(block)
    }

    /// The number of leading blocks for which `before` holds (which must hold for a prefix).
    pub fn partition_point(
        &self,
        mut before: impl FnMut(&BlockRef<'_>) -> bool,
    ) -> Result<usize, FormatError> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(&self.block(mid)?) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Every block, decoded and checked to tile the rows in key order.
    pub fn blocks(&self) -> Result<Vec<RowIndexBlock>, FormatError> {
        let mut out: Vec<RowIndexBlock> = Vec::with_capacity(self.count);
        for i in 0..self.count {
            let b = self.block(i)?;
            let follows = out
                .last()
                .is_none_or(|p| *p.last < *b.first && p.offset + p.length == b.offset);
            if !follows {
                return Err(FormatError::new(self.base, "row index blocks out of order"));
            }
            out.push(RowIndexBlock {
                first: Bytes::copy_from_slice(b.first),
                last: Bytes::copy_from_slice(b.last),
                offset: b.offset,
                length: b.length,
            });
        }
        Ok(out)
    }
}

/// Where one row is in a buffer of rows: its clustering key and its body, as ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowFrame {
    pub clustering: std::ops::Range<usize>,
    pub body: std::ops::Range<usize>,
}

impl RowFrame {
    /// The position just past the row.
    pub fn end(&self) -> usize {
        self.body.end
    }
}

/// The row starting at `pos` in `buf`: `Ok(Some)` if it is all there, `Ok(None)` if `buf` ends
/// before it does, an error if its framing is malformed.
pub fn parse_row_frame(buf: &[u8], pos: usize) -> Result<Option<RowFrame>, CodecError> {
    let mut r = SliceReader::at(buf, pos);
    let frame = (|| -> Result<RowFrame, CodecError> {
        let clustering_length = usize::try_from(r.varint()?).map_err(|_| CodecError::Truncated)?;
        let clustering_start = r.position();
        r.take(clustering_length)?;
        let clustering = clustering_start..r.position();
        let body_length = usize::try_from(r.varint()?).map_err(|_| CodecError::Truncated)?;
        let body_start = r.position();
        let body_end = body_start
            .checked_add(body_length)
            .ok_or(CodecError::Truncated)?;
        Ok(RowFrame {
            clustering,
            body: body_start..body_end,
        })
    })();
    match frame {
        Ok(f) if f.body.end <= buf.len() => Ok(Some(f)),
        Ok(_) | Err(CodecError::Truncated) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Decode the body of one row (`body_length` bytes at logical offset `base`).
pub fn decode_row_body(body: Bytes, base: u64) -> Result<Row, FormatError> {
    let mut r = Reader::new(body);
    let row = decode_row(&mut r).map_err(|e| FormatError::codec(base, &r, e))?;
    if !r.is_empty() {
        return Err(FormatError::new(
            base + r.position() as u64,
            "row shorter than its body length",
        ));
    }
    Ok(row)
}

/// Decode the rows of a partition (whole blocks) starting at logical offset `base`; every
/// block's row table must point at its rows and clustering keys must ascend.
pub fn decode_rows(bytes: Bytes, base: u64) -> Result<Vec<(Bytes, Row)>, FormatError> {
    let mut rows: Vec<(Bytes, Row)> = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let block_start = pos;
        let count = u32_at(&bytes, pos)
            .map(|c| c as usize)
            .filter(|&c| c >= 1 && c.saturating_mul(4) <= bytes.len() - pos - 4)
            .ok_or_else(|| FormatError::new(base + pos as u64, "bad row block count"))?;
        pos += 4 + 4 * count;
        for i in 0..count {
            let table_entry = u32_at(&bytes, block_start + 4 + 4 * i).map(|o| o as usize);
            if table_entry != Some(pos - block_start) {
                return Err(FormatError::new(
                    base + pos as u64,
                    "row table disagrees with the rows",
                ));
            }
            let frame = match parse_row_frame(&bytes, pos) {
                Ok(Some(frame)) => frame,
                Ok(None) => return Err(FormatError::new(base + pos as u64, "truncated row")),
                Err(e) => return Err(FormatError::new(base + pos as u64, e.to_string())),
            };
            let clustering = bytes.slice(frame.clustering.clone());
            if rows.last().is_some_and(|(prev, _)| *prev >= clustering) {
                return Err(FormatError::new(
                    base + pos as u64,
                    "rows out of clustering order",
                ));
            }
            let body_base = base + frame.body.start as u64;
            let row = decode_row_body(bytes.slice(frame.body.clone()), body_base)?;
            rows.push((clustering, row));
            pos = frame.end();
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use khata_types::cell::{Cell, LivenessInfo};
    use khata_types::row::CellKey;

    fn partition(rows: u64) -> Partition {
        let mut p = Partition::new();
        for i in 0..rows {
            let mut row = Row {
                liveness: Some(LivenessInfo::new(i as i64, None)),
                ..Row::default()
            };
            row.cells.insert(
                CellKey::simple(1),
                Cell::live(1, Bytes::from(vec![7u8; 100])),
            );
            p.rows.insert(Bytes::from(i.to_be_bytes().to_vec()), row);
        }
        p
    }

    #[test]
    fn a_partition_lent_as_its_one_row_is_encoded_as_the_whole_partition() {
        let whole = partition(1);
        let (k, row) = whole.rows.iter().next().unwrap();
        let mut a = PartitionEncoder::default();
        let mut b = PartitionEncoder::default();
        let lent = a.encode(b"key", PartitionRef::OneRow(k, row), 4096);
        let full = b.encode(b"key", PartitionRef::Whole(&whole), 4096);
        assert_eq!(lent.bytes, full.bytes);
        assert_eq!(lent.header_length, full.header_length);
        assert_eq!(lent.rows_length, full.rows_length);
        assert_eq!(lent.block_lengths, full.block_lengths);
        assert!(lent.plain_header && full.plain_header);
        assert_eq!(PartitionRef::OneRow(k, row).to_partition(), whole);
    }

    #[test]
    fn rows_and_row_index_round_trip() {
        let p = partition(200);
        let e = encode_partition(b"k", &p, 1000);
        let bytes = Bytes::from(e.bytes);
        let (h, consumed) = decode_header(bytes.clone(), 0, false).unwrap();
        assert_eq!(consumed, e.header_length);
        assert_eq!(h.rows_length, e.rows_length);
        let rows_end = (e.header_length + e.rows_length) as usize;
        let rows = decode_rows(bytes.slice(e.header_length as usize..rows_end), 0).unwrap();
        assert_eq!(
            rows.into_iter()
                .collect::<std::collections::BTreeMap<_, _>>(),
            p.rows
        );
        let index = RowIndex::open(bytes.slice(rows_end..), 0, e.rows_length).unwrap();
        let blocks = index.blocks().unwrap();
        assert!(blocks.len() > 10);
        assert_eq!(blocks.len(), index.len());
        let key = Bytes::from(150u64.to_be_bytes().to_vec());
        let i = index.partition_point(|b| b.last < &key[..]).unwrap();
        assert!(blocks[i].first <= key && key <= blocks[i].last);
    }

    #[test]
    fn a_truncated_row_is_incomplete_not_an_error() {
        let e = encode_partition(b"k", &partition(1), 1 << 20);
        // One block of one row: count, one offset, the row.
        let rows = &e.bytes[e.header_length as usize + 8..];
        let frame = parse_row_frame(rows, 0).unwrap().unwrap();
        assert_eq!(frame.end(), rows.len());
        for cut in 0..rows.len() {
            assert_eq!(parse_row_frame(&rows[..cut], 0), Ok(None));
        }
    }
}
