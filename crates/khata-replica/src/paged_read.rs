//! Reads that never fail on tombstones, for DynamoDB, which never fails a read on deleted
//! items: a paged read of one partition ends its page after meeting a number of tombstones
//! rather than failing past `tombstone_failure_threshold` (Query: the page ends early, at the
//! last key it scanned, as Alternator's `query_tombstone_page_limit` ends it; see the storage
//! engine's `read_paged`), and so does a scan of a token range (Scan; `scan_paged`).

use std::ops::Bound;

use bytes::Bytes;
use khata_storage::{ReadResult, ScanPosition, ScanResult};
use khata_types::LocalTime;
use khata_types::token::{DecoratedKey, Token};
use uuid::Uuid;

use crate::error::Result;
use crate::replica::Replica;
use crate::virtual_tables::is_virtual_keyspace;

impl Replica {
    /// [`Replica::read`] that stops after the row with which it has met
    /// `tombstone_page_limit` tombstones, with `limit_reached` set: the last row of the
    /// answer, live or not, is where the next page starts. A virtual table is read whole.
    #[allow(clippy::too_many_arguments)]
    pub fn read_paged(
        &self,
        table: Uuid,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
        row_limit: Option<usize>,
        tombstone_page_limit: usize,
        now: LocalTime,
    ) -> Result<ReadResult> {
        let schema = self.schema();
        match schema.table_by_id(table) {
            Some(t) if !is_virtual_keyspace(&t.def.keyspace) => {
                let mut read = self.engine.read_paged(
                    table,
                    key,
                    ranges,
                    reversed,
                    row_limit,
                    Some(tombstone_page_limit),
                    now,
                )?;
                t.hide_dropped(std::iter::once(&mut read.partition));
                Ok(read)
            }
            _ => self.read(table, key, ranges, reversed, row_limit, now),
        }
    }

    /// [`Replica::scan`] that ends its page after meeting `tombstone_page_limit` tombstones
    /// instead of failing (see the storage engine's `scan_paged`). A virtual table is scanned
    /// as ever.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_paged(
        &self,
        table: Uuid,
        start: Bound<Token>,
        end: Bound<Token>,
        resume: Option<&ScanPosition>,
        row_limit: usize,
        tombstone_page_limit: usize,
        now: LocalTime,
    ) -> Result<ScanResult> {
        let schema = self.schema();
        match schema.table_by_id(table) {
            Some(t) if !is_virtual_keyspace(&t.def.keyspace) => {
                let mut page = self.engine.scan_paged(
                    table,
                    start,
                    end,
                    resume,
                    row_limit,
                    tombstone_page_limit,
                    now,
                )?;
                t.hide_dropped(page.partitions.iter_mut().map(|(_, p)| p));
                Ok(page)
            }
            _ => self.scan(table, start, end, resume, row_limit, now),
        }
    }
}
