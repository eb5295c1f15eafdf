//! One stream's bookkeeping on this node: its shards, the last sequence number handed out,
//! the ones still being written, and the shard directory rows not yet known to be durable.
//!
//! Pure: the caller passes the time and does the reads and writes ([`super`] does).
//!
//! **Sequence numbers** are `u64`s, shown as 21-digit decimal strings (DynamoDB's are decimal
//! strings of 21 to 40 digits), so their byte order is their numeric order. Each one is
//! `max(last + 1, t)` where `t` is the write's timestamp in microseconds: strictly increasing
//! per stream, and close to the time of the write, which is what lets 24-hour trimming be
//! decided from a sequence number alone ([`trim_point`]).
//!
//! **The in-flight watermark.** A number is handed out under the item's partition lock before
//! the write that carries the record is applied, so records of different items become visible
//! out of order: 11 may be readable while 10 is still being written. A reader that returned 11
//! and moved its iterator past it would skip 10 forever. So every number is kept in
//! `in_flight` until its write has finished (applied or failed), and readers return only
//! records below [`StreamState::watermark`], the least number still in flight (or the next one
//! when none is). Below it, every record exists or never will.
//!
//! **Shards.** One shard is open at a time; it is closed and a child opened (its
//! `ParentShardId` the old one) when a record arrives after [`SHARD_ROLLOVER_MICROS`], as
//! DynamoDB rolls its shards every few hours. Changed directory rows wait in `pending` and
//! travel in the same commit-log record as every record written until one such write has
//! succeeded, so a durable record is never in a shard the durable directory does not know.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// How long records are kept: 24 hours.
pub const RETENTION_MICROS: i64 = 24 * 3600 * 1_000_000;
/// How long a shard stays open before a child takes over: 4 hours.
pub const SHARD_ROLLOVER_MICROS: i64 = 4 * 3600 * 1_000_000;

/// A shard's directory entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ShardEntry {
    pub shard_id: String,
    #[serde(default)]
    pub parent_shard_id: Option<String>,
    pub starting_sequence_number: u64,
    /// Set when the shard is closed: its last sequence number (its start when it stayed empty).
    #[serde(default)]
    pub ending_sequence_number: Option<u64>,
    pub created_micros: i64,
    #[serde(default)]
    pub closed_micros: Option<i64>,
}

impl ShardEntry {
    pub fn is_open(&self) -> bool {
        self.ending_sequence_number.is_none()
    }
}

/// A stream's directory entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StreamEntry {
    pub label: String,
    pub view_type: String,
    pub created_micros: i64,
    #[serde(default)]
    pub disabled_micros: Option<i64>,
    /// The table's name and key schema, so that the stream can still be described after
    /// DeleteTable (empty in entries written before they were kept).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub table_name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_schema: Vec<crate::tables::KeyElement>,
}

/// The text form of a sequence number.
pub fn format_sequence(seq: u64) -> String {
    format!("{seq:021}")
}

/// A sequence number from its text form: 21 to 40 decimal digits. Values beyond `u64` are
/// beyond any number this node hands out, and come back as `u64::MAX`.
pub fn parse_sequence(text: &str) -> Option<u64> {
    if !(21..=40).contains(&text.len()) || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(
        text.parse::<u128>()
            .map_or(u64::MAX, |v| u64::try_from(v).unwrap_or(u64::MAX)),
    )
}

/// The least sequence number not yet trimmed at `now_micros`: records below it are past the
/// 24-hour retention.
pub fn trim_point(now_micros: i64) -> u64 {
    u64::try_from(now_micros - RETENTION_MICROS).unwrap_or(0)
}

/// A shard id: `shardId-<20 digits of milliseconds>-<8 hex digits>` (DynamoDB's are 28 to 65
/// characters of this shape); the hex digits mix the stream's label and the first sequence
/// number, so two streams of one table do not collide.
pub fn shard_id(now_micros: i64, label: &str, first_seq: u64) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in label.bytes().chain(first_seq.to_le_bytes()) {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    format!("shardId-{:020}-{h:08x}", now_micros.max(0) / 1000)
}

/// What [`StreamState::assign`] handed out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub seq: u64,
    pub shard_id: String,
    /// Directory rows to write in the same commit-log record as the stream record.
    pub directory: Vec<ShardEntry>,
}

/// One stream's state (module docs).
#[derive(Clone, Debug)]
pub struct StreamState {
    pub label: String,
    pub shards: BTreeMap<String, ShardEntry>,
    /// The open shard's id; `None` once the stream is disabled.
    pub open: Option<String>,
    pub last_seq: u64,
    pub in_flight: BTreeSet<u64>,
    /// Directory rows changed here and not yet known durable.
    pub pending: Vec<ShardEntry>,
}

impl StreamState {
    /// The state of a stream whose durable directory holds `shards`, and whose last record
    /// (if any is left) has number `last_record`.
    pub fn new(label: &str, shards: Vec<ShardEntry>, last_record: Option<u64>) -> StreamState {
        let mut last_seq = last_record.unwrap_or(0);
        for s in &shards {
            last_seq = last_seq
                .max(s.starting_sequence_number)
                .max(s.ending_sequence_number.unwrap_or(0));
        }
        // The newest open shard is the open one; any other open one is closed on reconcile.
        let open = shards
            .iter()
            .filter(|s| s.is_open())
            .map(|s| s.shard_id.clone())
            .max();
        StreamState {
            label: label.to_string(),
            shards: shards
                .into_iter()
                .map(|s| (s.shard_id.clone(), s))
                .collect(),
            open,
            last_seq,
            in_flight: BTreeSet::new(),
            pending: Vec::new(),
        }
    }

    fn next_seq(&self, ts_micros: i64) -> u64 {
        (self.last_seq + 1).max(u64::try_from(ts_micros).unwrap_or(0))
    }

    fn set(&mut self, entry: ShardEntry) {
        self.pending.retain(|p| p.shard_id != entry.shard_id);
        self.pending.push(entry.clone());
        self.shards.insert(entry.shard_id.clone(), entry);
    }

    /// Close every open shard at `now_micros`.
    fn close_all(&mut self, now_micros: i64) {
        let open: Vec<ShardEntry> = self
            .shards
            .values()
            .filter(|s| s.is_open())
            .cloned()
            .collect();
        for mut s in open {
            s.ending_sequence_number = Some(self.last_seq.max(s.starting_sequence_number));
            s.closed_micros = Some(now_micros);
            self.set(s);
        }
        self.open = None;
    }

    /// Open a shard if the stream (enabled) has none; close stray open shards.
    pub fn ensure_open(&mut self, now_micros: i64) {
        let strays: Vec<String> = self
            .shards
            .values()
            .filter(|s| s.is_open() && Some(&s.shard_id) != self.open.as_ref())
            .map(|s| s.shard_id.clone())
            .collect();
        for id in strays {
            if let Some(mut s) = self.shards.get(&id).cloned() {
                s.ending_sequence_number = Some(self.last_seq.max(s.starting_sequence_number));
                s.closed_micros = Some(now_micros);
                self.set(s);
            }
        }
        if self.open.is_none() {
            self.open_child(now_micros, None);
        }
    }

    fn open_child(&mut self, now_micros: i64, parent: Option<String>) {
        // The first number the shard can hold; the one handed out next is at least this.
        let start = self.next_seq(now_micros);
        let id = shard_id(now_micros, &self.label, start);
        self.set(ShardEntry {
            shard_id: id.clone(),
            parent_shard_id: parent,
            starting_sequence_number: start,
            ending_sequence_number: None,
            created_micros: now_micros,
            closed_micros: None,
        });
        // Numbers below `start` are never handed out now.
        self.last_seq = start - 1;
        self.open = Some(id);
    }

    /// The stream was disabled: close its shard.
    pub fn close(&mut self, now_micros: i64) {
        self.close_all(now_micros);
    }

    /// A sequence number for a record of a write with timestamp `ts_micros`, kept in flight
    /// until [`StreamState::release`]; `None` when the stream has no open shard.
    pub fn assign(&mut self, ts_micros: i64) -> Option<Assignment> {
        let open_id = self.open.clone()?;
        let open = self.shards.get(&open_id)?.clone();
        let has_records = self.last_seq >= open.starting_sequence_number;
        if has_records && ts_micros - open.created_micros >= SHARD_ROLLOVER_MICROS {
            let mut closed = open;
            closed.ending_sequence_number = Some(self.last_seq);
            closed.closed_micros = Some(ts_micros);
            self.set(closed);
            self.open_child(ts_micros, Some(open_id));
        }
        let seq = self.next_seq(ts_micros);
        self.last_seq = seq;
        self.in_flight.insert(seq);
        Some(Assignment {
            seq,
            shard_id: self.open.clone()?,
            directory: self.pending.clone(),
        })
    }

    /// The write carrying `seq` finished; if it was applied, the directory rows it carried
    /// are durable.
    pub fn release(&mut self, seq: u64, applied: bool, directory: &[ShardEntry]) {
        self.in_flight.remove(&seq);
        if applied {
            self.confirm(directory);
        }
    }

    /// `written` rows are durable: those still unchanged leave `pending`.
    pub fn confirm(&mut self, written: &[ShardEntry]) {
        self.pending.retain(|p| !written.contains(p));
    }

    /// Records below this number are all visible or never will be (module docs).
    pub fn watermark(&self) -> u64 {
        self.in_flight
            .first()
            .copied()
            .unwrap_or(self.last_seq.saturating_add(1))
    }

    /// The shards DescribeStream shows at `now_micros`: closed ones go once their records are
    /// all past retention.
    pub fn visible_shards(&self, now_micros: i64) -> Vec<&ShardEntry> {
        self.shards
            .values()
            .filter(|s| {
                s.closed_micros
                    .is_none_or(|c| c + RETENTION_MICROS > now_micros)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000_000;

    fn open_state() -> StreamState {
        let mut s = StreamState::new("L", Vec::new(), None);
        s.ensure_open(T0);
        s
    }

    #[test]
    fn numbers_increase_and_are_fixed_width() {
        let mut s = open_state();
        let a = s.assign(T0).unwrap();
        let b = s.assign(T0).unwrap();
        let c = s.assign(T0 - 5).unwrap();
        assert!(a.seq < b.seq && b.seq < c.seq);
        assert_eq!(format_sequence(a.seq).len(), 21);
        assert_eq!(parse_sequence(&format_sequence(b.seq)), Some(b.seq));
        assert_eq!(parse_sequence("12"), None);
        assert_eq!(parse_sequence(&"9".repeat(40)), Some(u64::MAX));
        assert_eq!(parse_sequence("00000000000000000000x"), None);
    }

    #[test]
    fn readers_stop_below_the_oldest_write_in_flight() {
        let mut s = open_state();
        let a = s.assign(T0).unwrap();
        let b = s.assign(T0).unwrap();
        assert_eq!(s.watermark(), a.seq);
        // b finishes first: a is still being written, so nothing from a on is readable.
        s.release(b.seq, true, &b.directory);
        assert_eq!(s.watermark(), a.seq);
        s.release(a.seq, true, &a.directory);
        assert_eq!(s.watermark(), b.seq + 1);
    }

    #[test]
    fn directory_rows_travel_until_a_write_lands() {
        let mut s = open_state();
        let a = s.assign(T0).unwrap();
        assert_eq!(a.directory.len(), 1, "the first shard's row rides along");
        s.release(a.seq, false, &a.directory);
        let b = s.assign(T0).unwrap();
        assert_eq!(b.directory.len(), 1, "a failed write made nothing durable");
        s.release(b.seq, true, &b.directory);
        let c = s.assign(T0).unwrap();
        assert!(c.directory.is_empty());
    }

    #[test]
    fn shards_roll_over_with_a_parent() {
        let mut s = open_state();
        let first = s.assign(T0).unwrap();
        s.release(first.seq, true, &first.directory);
        let later = T0 + SHARD_ROLLOVER_MICROS;
        let next = s.assign(later).unwrap();
        assert_ne!(next.shard_id, first.shard_id);
        let old = &s.shards[&first.shard_id];
        assert_eq!(old.ending_sequence_number, Some(first.seq));
        let new = &s.shards[&next.shard_id];
        assert_eq!(
            new.parent_shard_id.as_deref(),
            Some(first.shard_id.as_str())
        );
        assert_eq!(new.starting_sequence_number, next.seq);
        assert_eq!(next.directory.len(), 2);
        // An empty shard is not rolled.
        let mut e = open_state();
        let x = e.assign(T0 + 2 * SHARD_ROLLOVER_MICROS).unwrap();
        assert_eq!(e.shards.len(), 1);
        assert_eq!(x.shard_id, *e.open.as_ref().unwrap());
    }

    #[test]
    fn closing_ends_the_shard_and_assigns_nothing() {
        let mut s = open_state();
        let a = s.assign(T0).unwrap();
        s.release(a.seq, true, &a.directory);
        s.close(T0 + 10);
        assert!(s.assign(T0 + 20).is_none());
        assert_eq!(s.shards[&a.shard_id].ending_sequence_number, Some(a.seq));
        // Reloaded from the directory, the numbers go on above the old ones.
        let again = StreamState::new("L", s.shards.values().cloned().collect(), None);
        assert!(again.open.is_none());
        assert!(again.last_seq >= a.seq);
        assert_eq!(s.visible_shards(T0 + RETENTION_MICROS + 11).len(), 0);
        assert_eq!(s.visible_shards(T0 + 11).len(), 1);
    }

    #[test]
    fn trimming_follows_the_clock() {
        assert_eq!(trim_point(RETENTION_MICROS + 5), 5);
        assert_eq!(trim_point(0), 0);
    }
}
