//! The partition index (Index component) and its in-memory summary (Summary component).
//!
//! The Index lists every partition in key order, in *pages* of at most
//! [`PAGE_MAX_ENTRIES`] entries or about [`PAGE_TARGET_BYTES`], each page ending with the CRC32C
//! of its bytes, so a page can be read and verified on its own:
//!
//! ```text
//! page  := entry{count} token:i64{count} offset:u32{count} count:u32 crc32c:u32
//! entry := key:bytes position:varint header_length:varint rows_length:varint
//!          row_index_length:varint flags:u8 [row_index]
//! flags := 1: the header holds only the key (no partition deletion, static row or range
//!             tombstones); 2: a copy of the row index follows (row_index_length bytes)
//! ```
//!
//! That is version 3. Versions 1 and 2 have no token table: each entry starts with its
//! `token:i64`, and the page ends `offset:u32{count} count:u32 crc32c:u32`; version 1 entries
//! also end after `row_index_length` (no flags).
//!
//! `position` is the partition's logical offset in Data; the three lengths locate its header,
//! rows and row index (see [`super::layout`]) without reading the partition first. From
//! version 2 the flags let a point read skip what it need not read: a plain header (most
//! partitions) is not read at all, and a small row index (at most
//! [`INLINE_ROW_INDEX_MAX_BYTES`]) is copied into the entry, so reading a row of a partition
//! of a few blocks goes from the index page straight to the block holding the row. The offsets
//! say where each entry starts in the page, so a point lookup binary-searches a page comparing
//! keys in place and decodes only the entry it finds ([`IndexPage::find`]); a scan decodes the
//! page whole and checks its order ([`IndexPage::entries`]). From version 3 the tokens sit in a
//! dense table at the end of the page, so the search runs over at most 1 KiB of tokens (a few
//! cache lines for the ~16 entries of a page of ~260-byte entries) and reads an entry's key
//! only when its token equals the one sought; in versions 1 and 2 each probe of the search
//! touches an entry in the body of the 4 KiB page.
//!
//! The Summary holds the first key of every page and where the page is:
//! `count:varint (token:i64 key:bytes page_offset:varint page_length:varint)*`. It is loaded
//! whole at open, so finding a partition costs a binary search in memory and one page read
//! (usually from the block cache).

use bytes::{BufMut, Bytes};
use khata_types::codec::{CodecError, Reader, put_bytes, put_varint};
use khata_types::token::{DecoratedKey, Token};

use super::chunk::TrackedFile;
use super::format::{FormatError, get_i64};
use super::slice::{SliceReader, u32_at, warm_lines};
use crate::error::Result;

/// Most entries in one index page.
pub const PAGE_MAX_ENTRIES: usize = 128;
/// A page is closed once it reaches this size.
pub const PAGE_TARGET_BYTES: usize = 4096;
/// A row index up to this size is copied into the partition's index entry (version 2).
pub const INLINE_ROW_INDEX_MAX_BYTES: u64 = 1024;

/// Index entry flag: the partition header holds only the key.
const FLAG_PLAIN_HEADER: u8 = 1;
/// Index entry flag: a copy of the row index follows the entry.
const FLAG_INLINE_ROW_INDEX: u8 = 2;

/// Where a partition is in Data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub key: DecoratedKey,
    pub position: u64,
    pub header_length: u64,
    pub rows_length: u64,
    pub row_index_length: u64,
    /// The header holds only the key: no partition deletion, static row or range tombstones
    /// (always false in version 1, which does not record it).
    pub plain_header: bool,
    /// A copy of the row index, when the entry carries one (version 2, small row indexes).
    pub row_index: Option<Bytes>,
}

impl IndexEntry {
    /// Logical offset of the first row.
    pub fn rows_position(&self) -> u64 {
        self.position.saturating_add(self.header_length)
    }

    /// Logical offset of the row index.
    pub fn row_index_position(&self) -> u64 {
        self.rows_position().saturating_add(self.rows_length)
    }

    /// Whether a partition header decoded at this entry's position (`consumed` bytes long)
    /// is the one the entry describes: anything else is corruption.
    pub fn describes(&self, header: &super::layout::Header, consumed: u64) -> bool {
        let plain = header.deletion.is_none()
            && header.static_row.is_empty()
            && header.range_tombstones.is_empty();
        consumed == self.header_length
            && (plain || !self.plain_header)
            && header.key == self.key.key
            && header.rows_length == self.rows_length
            && header.row_index_length == self.row_index_length
    }

    /// Bytes the partition occupies in the logical stream.
    pub fn total_length(&self) -> u64 {
        self.header_length
            .saturating_add(self.rows_length)
            .saturating_add(self.row_index_length)
    }
}

/// The first key of an index page and where the page is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryEntry {
    pub first: DecoratedKey,
    pub page_offset: u64,
    pub page_length: u64,
}

/// Writes index pages and collects the summary.
#[derive(Debug)]
pub struct IndexWriter {
    pub file: TrackedFile,
    page: Vec<u8>,
    /// Where each entry of the page starts.
    page_starts: Vec<u32>,
    /// The token of each entry of the page (the token table, version 3).
    page_tokens: Vec<i64>,
    page_first: Option<DecoratedKey>,
    summary: Vec<SummaryEntry>,
}

impl IndexWriter {
    pub fn new(file: TrackedFile) -> Self {
        IndexWriter {
            file,
            page: Vec::with_capacity(PAGE_TARGET_BYTES * 2),
            page_starts: Vec::with_capacity(PAGE_MAX_ENTRIES),
            page_tokens: Vec::with_capacity(PAGE_MAX_ENTRIES),
            page_first: None,
            summary: Vec::new(),
        }
    }

    pub fn add(&mut self, entry: &IndexEntry) -> Result<()> {
        if self.page_first.is_none() {
            self.page_first = Some(entry.key.clone());
        }
        // A page closes at PAGE_TARGET_BYTES, and a key is at most 64 KiB: offsets fit a u32.
        let start = u32::try_from(self.page.len()).expect("an index page stays far below 4 GiB");
        self.page_starts.push(start);
        self.page_tokens.push(entry.key.token.0);
        put_bytes(&mut self.page, &entry.key.key);
        put_varint(&mut self.page, entry.position);
        put_varint(&mut self.page, entry.header_length);
        put_varint(&mut self.page, entry.rows_length);
        put_varint(&mut self.page, entry.row_index_length);
        let mut flags = 0;
        if entry.plain_header {
            flags |= FLAG_PLAIN_HEADER;
        }
        if entry.row_index.is_some() {
            flags |= FLAG_INLINE_ROW_INDEX;
        }
        self.page.put_u8(flags);
        if let Some(row_index) = &entry.row_index {
            assert_eq!(
                row_index.len() as u64,
                entry.row_index_length,
                "an inline row index is the row index"
            );
            self.page.extend_from_slice(row_index);
        }
        if self.page_starts.len() >= PAGE_MAX_ENTRIES || self.page.len() >= PAGE_TARGET_BYTES {
            self.flush_page()?;
        }
        Ok(())
    }

    fn flush_page(&mut self) -> Result<()> {
        let Some(first) = self.page_first.take() else {
            return Ok(());
        };
        for token in &self.page_tokens {
            self.page.put_i64_le(*token);
        }
        for start in &self.page_starts {
            self.page.put_u32_le(*start);
        }
        self.page.put_u32_le(self.page_starts.len() as u32);
        let crc = crc32c::crc32c(&self.page);
        self.page.put_u32_le(crc);
        let page_offset = self.file.length();
        self.file.append(&self.page)?;
        self.summary.push(SummaryEntry {
            first,
            page_offset,
            page_length: self.page.len() as u64,
        });
        self.page.clear();
        self.page_starts.clear();
        self.page_tokens.clear();
        Ok(())
    }

    /// Flush the last page and return the Summary component.
    pub fn finish(&mut self) -> Result<Vec<u8>> {
        self.flush_page()?;
        let mut out = Vec::new();
        put_varint(&mut out, self.summary.len() as u64);
        for s in &self.summary {
            out.put_i64_le(s.first.token.0);
            put_bytes(&mut out, &s.first.key);
            put_varint(&mut out, s.page_offset);
            put_varint(&mut out, s.page_length);
        }
        Ok(out)
    }
}

/// Decode the Summary component; the pages must tile an Index file of `index_length` bytes.
pub fn decode_summary(bytes: Bytes, index_length: u64) -> Result<Vec<SummaryEntry>, FormatError> {
    let mut r = Reader::new(bytes);
    let parsed = (|| -> Result<Vec<SummaryEntry>, CodecError> {
        let count = r.count()?;
        let mut entries: Vec<SummaryEntry> = Vec::with_capacity(count);
        let mut expected_offset = 0u64;
        for _ in 0..count {
            let token = Token(get_i64(&mut r)?);
            let first = DecoratedKey {
                token,
                key: r.bytes()?,
            };
            let page_offset = r.varint()?;
            let page_length = r.varint()?;
            let ordered = entries.last().is_none_or(|prev| prev.first < first);
            if !ordered || page_offset != expected_offset || page_length <= 4 {
                return Err(CodecError::Invalid("summary entries out of order"));
            }
            expected_offset = page_offset.saturating_add(page_length);
            entries.push(SummaryEntry {
                first,
                page_offset,
                page_length,
            });
        }
        if expected_offset != index_length || !r.is_empty() {
            return Err(CodecError::Invalid("summary does not cover the index"));
        }
        Ok(entries)
    })();
    parsed.map_err(|e| FormatError::codec(0, &r, e))
}

/// Check a raw page's CRC32C and return its entries' bytes.
pub fn verify_page(raw: &[u8], page_offset: u64) -> Result<Bytes, FormatError> {
    if raw.len() < 4 {
        return Err(FormatError::new(page_offset, "index page too short"));
    }
    let (body, trailer) = raw.split_at(raw.len() - 4);
    let mut stored = [0u8; 4];
    stored.copy_from_slice(trailer);
    if crc32c::crc32c(body) != u32::from_le_bytes(stored) {
        return Err(FormatError::new(
            page_offset,
            "index page checksum mismatch",
        ));
    }
    Ok(Bytes::copy_from_slice(body))
}

/// A verified index page, read in place.
#[derive(Debug)]
pub struct IndexPage {
    body: Bytes,
    page_offset: u64,
    /// The SSTable's format version (entries gained flags in version 2, the page a token
    /// table in version 3).
    version: u32,
    count: usize,
    /// Where the entries end: the token table (version 3) or the offset table starts here.
    entries_end: usize,
    /// Where the table of entry starts begins.
    offsets: usize,
}

/// Bytes of the tables at the end of a page, per entry: token and offset from version 3.
fn table_width(version: u32) -> usize {
    if version >= 3 { 12 } else { 4 }
}

impl IndexPage {
    /// The page whose verified body (without its CRC32C) is `body`.
    pub fn open(body: Bytes, page_offset: u64, version: u32) -> Result<IndexPage, FormatError> {
        let len = body.len();
        let count = len
            .checked_sub(4)
            .and_then(|at| u32_at(&body, at))
            .map(|c| c as usize)
            .filter(|c| (1..=PAGE_MAX_ENTRIES).contains(c))
            .ok_or_else(|| FormatError::new(page_offset, "bad index page entry count"))?;
        let entries_end = len
            .checked_sub(4 + table_width(version) * count)
            .ok_or_else(|| FormatError::new(page_offset, "index page too short"))?;
        let offsets = if version >= 3 {
            entries_end + 8 * count
        } else {
            entries_end
        };
        Ok(IndexPage {
            body,
            page_offset,
            version,
            count,
            entries_end,
            offsets,
        })
    }

    /// Bytes the page holds in memory.
    pub fn size_bytes(&self) -> usize {
        self.body.len() + std::mem::size_of::<IndexPage>()
    }

    /// Where entry `i` starts, checked to lie among the entries.
    fn start(&self, i: usize) -> Result<usize, FormatError> {
        u32_at(&self.body, self.offsets + 4 * i)
            .map(|s| s as usize)
            .filter(|&s| s < self.entries_end)
            .ok_or_else(|| FormatError::new(self.page_offset, "index entry offset out of range"))
    }

    /// The token of entry `i` from the token table (version 3, `i < count`).
    fn table_token(&self, i: usize) -> Token {
        debug_assert!(self.version >= 3 && i < self.count);
        // `open` checked that the token table (8 × count bytes at `entries_end`) is in the
        // page; an index past it reads as the largest token rather than panicking.
        let at = self.entries_end + 8 * i;
        self.body
            .get(at..at + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(Token(i64::MAX), |b| Token(i64::from_le_bytes(b)))
    }

    /// The key bytes of entry `i` (version 3, where the entry starts with them), borrowed.
    fn key_bytes_at(&self, i: usize) -> Result<&[u8], FormatError> {
        let start = self.start(i)?;
        let mut r = SliceReader::at(&self.body[..self.entries_end], start);
        r.bytes()
            .map_err(|e| FormatError::new(self.page_offset + r.position() as u64, e.to_string()))
    }

    /// The token and key bytes of entry `i`, borrowed (versions 1 and 2).
    fn key_at(&self, i: usize) -> Result<(Token, &[u8]), FormatError> {
        let start = self.start(i)?;
        let mut r = SliceReader::at(&self.body[..self.entries_end], start);
        let parsed =
            (|| -> Result<(Token, &[u8]), CodecError> { Ok((Token(r.i64_le()?), r.bytes()?)) })();
        parsed.map_err(|e| FormatError::new(self.page_offset + r.position() as u64, e.to_string()))
    }

    /// Decode entry `i` in full.
    fn entry(&self, i: usize) -> Result<IndexEntry, FormatError> {
        let start = self.start(i)?;
        let table_token = (self.version >= 3).then(|| self.table_token(i));
        let mut r = Reader::new(self.body.slice(start..self.entries_end));
        let parsed = (|| -> Result<IndexEntry, CodecError> {
            let token = match table_token {
                Some(token) => token,
                None => Token(get_i64(&mut r)?),
            };
            let key = DecoratedKey {
                token,
                key: r.bytes()?,
            };
            let mut entry = IndexEntry {
                key,
                position: r.varint()?,
                header_length: r.varint()?,
                rows_length: r.varint()?,
                row_index_length: r.varint()?,
                plain_header: false,
                row_index: None,
            };
            if self.version >= 2 {
                let flags = r.u8()?;
                if flags & !(FLAG_PLAIN_HEADER | FLAG_INLINE_ROW_INDEX) != 0 {
                    return Err(CodecError::Invalid("unknown index entry flags"));
                }
                entry.plain_header = flags & FLAG_PLAIN_HEADER != 0;
                if flags & FLAG_INLINE_ROW_INDEX != 0 {
                    if entry.row_index_length == 0 {
                        return Err(CodecError::Invalid("inline row index of no bytes"));
                    }
                    let length = usize::try_from(entry.row_index_length)
                        .map_err(|_| CodecError::Truncated)?;
                    entry.row_index = Some(r.take(length)?);
                }
            }
            Ok(entry)
        })();
        let entry =
            parsed.map_err(|e| FormatError::codec(self.page_offset + start as u64, &r, e))?;
        if entry.header_length == 0 {
            return Err(FormatError::new(
                self.page_offset + start as u64,
                "index entry without a header",
            ));
        }
        Ok(entry)
    }

    /// The entry of `key`, found by binary search without decoding the other entries.
    pub fn find(&self, key: &DecoratedKey) -> Result<Option<IndexEntry>, FormatError> {
        if self.version >= 3 {
            return self.find_by_token_table(key);
        }
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (token, bytes) = self.key_at(mid)?;
            match token.cmp(&key.token).then_with(|| bytes.cmp(&key.key[..])) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.entry(mid).map(Some),
            }
        }
        Ok(None)
    }

    /// [`IndexPage::find`] in version 3: a binary search of the token table for the first
    /// entry of `key`'s token, then the keys of the entries of that token, in order (almost
    /// always one). A page whose tokens do not ascend (damage the checksum missed cannot get
    /// here, but a bad writer could) finds nothing or the wrong token's run, never a wrong
    /// entry: the key bytes are compared before an entry is returned.
    fn find_by_token_table(&self, key: &DecoratedKey) -> Result<Option<IndexEntry>, FormatError> {
        // A page is touched about once in hundreds of reads, so its token table is rarely in
        // the CPU's caches: fetch its lines at once, not one per probe.
        warm_lines(
            &self.body,
            self.entries_end..self.entries_end.saturating_add(8 * self.count),
        );
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.table_token(mid) < key.token {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for i in lo..self.count {
            if self.table_token(i) != key.token {
                break;
            }
            match self.key_bytes_at(i)?.cmp(&key.key[..]) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Equal => return self.entry(i).map(Some),
                std::cmp::Ordering::Greater => break,
            }
        }
        Ok(None)
    }

    /// Every entry, checked to start with the summary's `first` key, ascend, tile Data and
    /// fill the page exactly.
    pub fn entries(&self, first: &DecoratedKey) -> Result<Vec<IndexEntry>, FormatError> {
        let mut entries: Vec<IndexEntry> = Vec::with_capacity(self.count);
        let mut expected_start = 0;
        for i in 0..self.count {
            let start = self.start(i)?;
            let entry = self.entry(i)?;
            let ordered = start == expected_start
                && match entries.last() {
                    None => entry.key == *first,
                    Some(prev) => {
                        prev.key < entry.key
                            && prev.position.saturating_add(prev.total_length()) == entry.position
                    }
                };
            if !ordered {
                return Err(FormatError::new(
                    self.page_offset + start as u64,
                    "index entries out of order",
                ));
            }
            expected_start = start + encoded_entry_length(&entry, self.version);
            entries.push(entry);
        }
        if expected_start != self.entries_end {
            return Err(FormatError::new(
                self.page_offset,
                "index entries do not fill the page",
            ));
        }
        Ok(entries)
    }
}

fn varint_length(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Bytes the entry takes in a page of format `version`.
fn encoded_entry_length(e: &IndexEntry, version: u32) -> usize {
    let flags = if version >= 2 {
        1 + e.row_index.as_ref().map_or(0, |r| r.len())
    } else {
        0
    };
    // From version 3 the token is in the page's token table, not in the entry.
    let token = if version >= 3 { 0 } else { 8 };
    flags
        + token
        + varint_length(e.key.key.len() as u64)
        + e.key.key.len()
        + varint_length(e.position)
        + varint_length(e.header_length)
        + varint_length(e.rows_length)
        + varint_length(e.row_index_length)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use khata_env::{FileSystem, RealFs};

    use super::*;
    use crate::sstable::format::FORMAT_VERSION;

    fn entry(token: i64, key: &str, position: u64) -> IndexEntry {
        IndexEntry {
            key: DecoratedKey {
                token: Token(token),
                key: Bytes::copy_from_slice(key.as_bytes()),
            },
            position,
            header_length: 1,
            rows_length: 0,
            row_index_length: 0,
            plain_header: true,
            row_index: None,
        }
    }

    /// Write `entries` (sorted) as an Index of this build's version; return its pages.
    fn write_pages(entries: &[IndexEntry]) -> Vec<(SummaryEntry, IndexPage)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let fs = RealFs;
        let mut writer =
            IndexWriter::new(TrackedFile::new(path.clone(), fs.create(&path).unwrap()));
        for e in entries {
            writer.add(e).unwrap();
        }
        let summary = writer.finish().unwrap();
        let file: Arc<dyn khata_env::ReadableFile> = fs.open_read(&path).unwrap();
        let summary = decode_summary(Bytes::from(summary), file.len()).unwrap();
        summary
            .into_iter()
            .map(|s| {
                let raw = file
                    .read_vec(s.page_offset, s.page_length as usize)
                    .unwrap();
                let body = verify_page(&raw, s.page_offset).unwrap();
                let page = IndexPage::open(body, s.page_offset, FORMAT_VERSION).unwrap();
                (s, page)
            })
            .collect()
    }

    #[test]
    fn token_table_finds_every_key_and_no_other() {
        // Runs of up to four keys under one token, and gaps between the tokens, over several
        // pages (at most 128 entries each).
        let mut entries = Vec::new();
        for t in 0..300i64 {
            for k in 0..(t % 4 + 1) {
                let position = entries.len() as u64;
                entries.push(entry(t * 10 - 1_500, &format!("key-{k}"), position));
            }
        }
        let pages = write_pages(&entries);
        assert!(pages.len() > 2, "{} pages", pages.len());
        let page_of = |key: &DecoratedKey| {
            let at = pages.partition_point(|(s, _)| s.first <= *key);
            &pages[at.saturating_sub(1)].1
        };
        for e in &entries {
            assert_eq!(page_of(&e.key).find(&e.key).unwrap().as_ref(), Some(e));
        }
        for e in &entries {
            // A key under an existing token, before, between and after that token's keys.
            for key in ["key-", "key-0a", "key-9"] {
                let absent = DecoratedKey {
                    token: e.key.token,
                    key: Bytes::copy_from_slice(key.as_bytes()),
                };
                assert_eq!(page_of(&absent).find(&absent).unwrap(), None);
            }
            // A token between two tokens.
            let absent = DecoratedKey {
                token: Token(e.key.token.0 + 5),
                key: e.key.key.clone(),
            };
            assert_eq!(page_of(&absent).find(&absent).unwrap(), None);
        }
        let mut scanned = Vec::new();
        for (s, page) in &pages {
            scanned.extend(page.entries(&s.first).unwrap());
        }
        assert_eq!(scanned, entries);
    }
}
