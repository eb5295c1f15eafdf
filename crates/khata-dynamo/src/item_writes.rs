//! The one place a batch or transaction turns an item write into engine mutations.
//!
//! BatchWriteItem and TransactWriteItems call [`append`] once per item they write, with what
//! they know of the item before the write and the item after it. Today it appends the item's
//! own mutation; secondary-index entries and stream records are appended here too, into the
//! same list, so they land in the same commit-log record as the write (all or nothing).
//!
//! What the callers know of the old item: transactions always read it (they check conditions
//! under the item's lock), so it is [`Before::Known`]; BatchWriteItem reads it (under the same
//! locks) when a table has a stream or secondary indexes, or units are asked for, and writes
//! blind otherwise ([`Before::Unknown`]), so a table with a stream or an index always gets
//! [`Before::Known`] here.

use khata_coordinator::catalog::Mutation;

use crate::items::{ItemKey, ItemLayout};
use crate::value::Item;

/// What a writer knows of an item before its write.
#[derive(Clone, Copy, Debug)]
pub enum Before<'a> {
    /// Not read: the write is blind.
    Unknown,
    /// Read under the item's lock: `None` when there was no item.
    Known(Option<&'a Item>),
}

/// Append the mutations of one item write to `out`: `mutation` (from [`ItemLayout::put`],
/// [`ItemLayout::update`] or [`ItemLayout::delete`]) and whatever derived writes the table
/// needs. `new` is the whole item after the write, `None` for a delete.
pub fn append(
    layout: &ItemLayout,
    key: &ItemKey,
    before: Before<'_>,
    new: Option<&Item>,
    mutation: Mutation,
    out: &mut Vec<Mutation>,
) {
    // Derived writes (index entries, stream records) take `layout`, `key`, `before` and `new`.
    let _ = (layout, key, before, new);
    out.push(mutation);
}
