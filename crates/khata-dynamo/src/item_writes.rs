//! The one place a batch or transaction turns an item write into engine mutations.
//!
//! BatchWriteItem and TransactWriteItems call [`Writes::append`] once per item they write, with
//! what they know of the item before the write and the item after it. It appends the item's own
//! mutation and then what the table derives from it, its index entries and the stream record
//! of the change, into the same list, so they land in the same commit-log record as the write (all or nothing); the
//! caller finishes the stream tickets once the write has ended
//! ([`crate::streams::settle_many`]).
//!
//! What the callers know of the old item: transactions always read it (they check conditions
//! under the item's lock), so it is [`Before::Known`]; BatchWriteItem reads it (under the same
//! locks) when a table has a stream or secondary indexes, or units are asked for, and writes
//! blind otherwise ([`Before::Unknown`]), so a table with a stream or an index always gets
//! [`Before::Known`] here.

use khata_coordinator::catalog::Mutation;

use khata_types::LocalTime;

use khata_coordinator::catalog::ReadResult;

use crate::items::{ItemKey, ItemLayout};
use crate::value::{Item, ValidationError};

/// What a writer knows of an item before its write.
#[derive(Clone, Copy, Debug)]
pub enum Before<'a> {
    /// Not read: the write is blind.
    Unknown,
    /// Read under the item's lock: `None` when there was no item.
    Known(Option<&'a Item>),
}

/// The mutations a batch or transaction writes, and the stream tickets to finish once it has
/// (see [`crate::streams::settle_many`]).
#[derive(Debug, Default)]
pub struct Writes {
    pub mutations: Vec<Mutation>,
    pub tickets: Vec<crate::streams::Ticket>,
    /// The item collections the writes change ([`crate::collections`]), written once each by
    /// [`Writes::finish_collections`].
    collections: crate::collections::Tracker,
    /// Their sizes after the writes, once finished (for `ItemCollectionMetrics`).
    pub metrics: Vec<crate::collections::Metric>,
}

impl Writes {
    pub fn with_capacity(n: usize) -> Self {
        Writes {
            mutations: Vec::with_capacity(n),
            tickets: Vec::new(),
            collections: crate::collections::Tracker::default(),
            metrics: Vec::new(),
        }
    }

    /// Append the mutations of one item write: `mutation` (from [`ItemLayout::put`],
    /// [`ItemLayout::update`] or [`ItemLayout::delete`], written at `ts`) first, then what the
    /// table derives from it: the entries `new` makes in the table's secondary indexes (and,
    /// when the old item is known, the deletion of its entries that `new` no longer has; with
    /// the old item unknown, reads drop those as stale, [`crate::indexes`]), and the stream
    /// record of the change when the table has a stream (which needs the old item: a writer to
    /// such a table must read it, [`Before::Known`]). `new` is the whole item after the write,
    /// `None` for a delete. An index key of the wrong type in `new` is DynamoDB's
    /// ValidationException, and nothing is appended.
    pub fn append(
        &mut self,
        layout: &ItemLayout,
        before: Before<'_>,
        new: Option<&Item>,
        mutation: Mutation,
        ts: i64,
        now: LocalTime,
    ) -> Result<(), ValidationError> {
        let entries = match new {
            Some(new) => crate::indexes::index_entries(layout, new, None, ts)?,
            None => Vec::new(),
        };
        self.mutations.push(mutation);
        self.mutations.extend(entries);
        if let Before::Known(Some(old)) = before {
            self.mutations
                .extend(crate::indexes::obsolete_entries(layout, old, new, ts, now));
        }
        if let (Some(stream), Before::Known(old)) = (&layout.stream, before)
            && let Some((extra, ticket)) = stream.record(&crate::streams::Change {
                old: old.cloned(),
                new: new.cloned(),
                identity: None,
            })
        {
            self.mutations.extend(extra);
            self.tickets.push(ticket);
        }
        Ok(())
    }

    /// Note what the write at position `who` (of the request) does to its item collection,
    /// when its table keeps them: `read` is the item's partition as read under its lock,
    /// `old` and `new` the item before and after. Call [`Writes::finish_collections`] once
    /// every write is noted.
    #[allow(clippy::too_many_arguments)]
    pub fn note_collection(
        &mut self,
        who: usize,
        table_name: &str,
        layout: &ItemLayout,
        key: &ItemKey,
        read: &ReadResult,
        old: Option<&Item>,
        new: Option<&Item>,
        ts: i64,
        now: LocalTime,
    ) {
        self.collections.note(
            who,
            table_name,
            layout,
            &key.partition,
            &read.partition,
            old,
            new,
            ts,
            now,
        );
    }

    /// Append the new sizes of the noted item collections; or, when a write would grow one
    /// past its limit, the positions of the writes to each such collection (nothing is
    /// appended then, and the writes must not happen).
    pub fn finish_collections(&mut self) -> Result<(), Vec<Vec<usize>>> {
        let tracker = std::mem::take(&mut self.collections);
        match tracker.finish() {
            Ok((mutations, metrics)) => {
                self.mutations.extend(mutations);
                self.metrics = metrics;
                Ok(())
            }
            Err(exceeded) => Err(exceeded.into_iter().map(|e| e.writers).collect()),
        }
    }
}
