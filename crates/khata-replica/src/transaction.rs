//! Compare-and-set across partitions: the single-node core of DynamoDB's
//! `TransactWriteItems` and `TransactGetItems`.
//!
//! [`Replica::cas_many`] takes the compare-and-set lock stripe of every partition it names
//! (the same stripes [`Replica::cas`] takes, so a transaction serializes with single-item
//! conditional writes and read-modify-writes), reads every partition, lets the caller decide,
//! and applies what it decided as ONE commit-log record (`Engine::apply_batch`): after a crash
//! either all of a transaction's writes are there or none.
//!
//! Deadlock freedom: the stripes are taken in one global order (ascending stripe number,
//! each once), and [`Replica::cas`] holds a single stripe, so no cycle of waits can form.
//!
//! Conflicts: a transaction waits at most `lock_wait` for each stripe. When a stripe stays held
//! past that (another transaction or conditional write is working on a partition it needs, and
//! taking long), nothing is read or written and the answer is [`CasManyOutcome::Conflict`] with
//! the reads whose partitions are on that stripe: DynamoDB's `TransactionConflict`, which the
//! client retries. Without a bound (`None`) it waits as `cas` does.
//!
//! Not done here: isolation from plain (unconditional) writes, which take no lock, as in
//! Cassandra; the DynamoDB layer sends its transactional and conditional writes through here.

use std::time::Duration;

use bytes::Bytes;
use khata_storage::{Mutation, ReadResult};
use khata_types::LocalTime;
use khata_types::token::DecoratedKey;
use uuid::Uuid;

use crate::error::Result;
use crate::replica::{Replica, cas_stripe};

/// One partition a [`Replica::cas_many`] reads (and may write).
#[derive(Clone, Debug)]
pub struct CasRead {
    pub table: Uuid,
    pub key: DecoratedKey,
    /// Clustering byte ranges to read (`[start, end)` as [`Replica::read`] takes them).
    pub ranges: Vec<(Bytes, Bytes)>,
}

/// What a [`Replica::cas_many`] did.
#[derive(Debug)]
pub enum CasManyOutcome {
    /// Every lock was taken and every partition read (in the order of the request);
    /// `applied` says whether the decision's mutations were written.
    Decided {
        reads: Vec<ReadResult>,
        applied: bool,
    },
    /// A lock stayed held past the wait bound: nothing was read or written. The indexes (into
    /// the request) of the reads whose partitions that lock covers.
    Conflict(Vec<usize>),
}

impl Replica {
    /// Compare-and-set on several partitions at once: lock them all (see the module doc), read
    /// each, let `decide` look at the reads (in request order) and return the mutations to
    /// apply, or `None`, and apply them as one commit-log record. The same partition may appear
    /// more than once (each read is answered).
    pub fn cas_many(
        &self,
        reads: &[CasRead],
        now: LocalTime,
        lock_wait: Option<Duration>,
        decide: impl FnOnce(&[ReadResult]) -> Option<Vec<Mutation>>,
    ) -> Result<CasManyOutcome> {
        let mut stripes: Vec<usize> = reads.iter().map(|r| cas_stripe(r.table, &r.key)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let mut guards = Vec::with_capacity(stripes.len());
        for &stripe in &stripes {
            let lock = &self.cas_locks[stripe];
            let guard = match lock_wait {
                None => Some(lock.lock()),
                Some(wait) => lock.try_lock_for(wait),
            };
            match guard {
                Some(g) => guards.push(g),
                None => {
                    let conflicting = reads
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| cas_stripe(r.table, &r.key) == stripe)
                        .map(|(i, _)| i)
                        .collect();
                    return Ok(CasManyOutcome::Conflict(conflicting));
                }
            }
        }
        let mut results = Vec::with_capacity(reads.len());
        for r in reads {
            let mut read = self
                .engine
                .read(r.table, &r.key, &r.ranges, false, None, now)?;
            self.hide_dropped(r.table, std::slice::from_mut(&mut read.partition));
            results.push(read);
        }
        let applied = match decide(&results) {
            Some(mutations) if !mutations.is_empty() => {
                let mutations = self.with_index_entries(mutations)?;
                self.engine.apply_batch(mutations, true)?;
                true
            }
            Some(_) | None => false,
        };
        drop(guards);
        Ok(CasManyOutcome::Decided {
            reads: results,
            applied,
        })
    }
}
