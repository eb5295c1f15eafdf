//! Lightweight transactions: compare-and-set on one partition, and across partitions
//! ([`Coordinator::cas_many`], DynamoDB's transactions).
//!
//! On one node the replica serializes conditional writes per partition ([`Replica::cas`]):
//! read, check the condition, write, with no other conditional write to the partition in
//! between. The serial consistency level is checked like any other (`SERIAL` needs a quorum
//! of the replication factor, so RF 3 on one node is `Unavailable`, as in Cassandra). The
//! cluster layer will put Paxos behind this method without changing its callers.
//!
//! [`Replica::cas`]: khata_replica::Replica::cas

use bytes::Bytes;
use khata_replica::storage::{Mutation, ReadResult};
use khata_replica::{CasManyOutcome, CasRead};
use khata_types::LocalTime;
use khata_types::token::DecoratedKey;
use uuid::Uuid;

use crate::consistency::Consistency;
use crate::coordinator::Coordinator;
use crate::error::{CoordinatorError, Result, WriteType, write_failure};
use crate::trace;

impl Coordinator {
    /// Read `ranges` of a partition and, if `decide` returns mutations, apply them atomically
    /// with respect to other `cas` calls on the partition. `serial` is the serial consistency
    /// (`SERIAL` or `LOCAL_SERIAL`), `commit` the consistency of the write. Returns what was
    /// read (for the `[applied]` result) and whether the write happened.
    pub async fn cas<F>(
        &self,
        table: Uuid,
        key: DecoratedKey,
        ranges: Vec<(Bytes, Bytes)>,
        now: LocalTime,
        serial: Consistency,
        commit: Consistency,
        decide: F,
    ) -> Result<(ReadResult, bool)>
    where
        F: FnOnce(&ReadResult) -> Option<Vec<Mutation>> + Send + 'static,
    {
        if !serial.is_serial() {
            return Err(CoordinatorError::Invalid(format!(
                "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL, got {}",
                serial.name()
            )));
        }
        // Cassandra's ConsistencyLevel.validateForCasCommit.
        if commit.is_serial() {
            return Err(CoordinatorError::Invalid(format!(
                "{} is not supported as conditional update commit consistency. Use ANY if you mean \"make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads\"",
                commit.name()
            )));
        }
        if commit == Consistency::EachQuorum {
            let schema = self.schema();
            let simple = schema
                .table_by_id(table)
                .and_then(|t| schema.keyspace(&t.def.keyspace))
                .is_some_and(|k| {
                    !matches!(
                        k.def.replication,
                        khata_types::schema::Replication::NetworkTopology { .. }
                    )
                });
            if simple {
                return Err(CoordinatorError::Invalid(
                    "consistency level EACH_QUORUM not compatible with replication strategy (org.apache.cassandra.locator.SimpleStrategy)".into(),
                ));
            }
        }
        let required = self.check_available(table, serial)?;
        trace::event(|| "Reading existing values for CAS precondition".to_string());
        let outcome = self
            .serialized(
                table,
                key,
                ranges,
                now,
                serial,
                required,
                WriteType::Cas,
                decide,
            )
            .await;
        if let Ok((_, applied)) = &outcome {
            trace::event(|| {
                if *applied {
                    "CAS successful".to_string()
                } else {
                    "CAS precondition does not match current values".to_string()
                }
            });
        }
        outcome
    }

    /// A write that needs the partition's current state: counter increments and list
    /// operations by index or value. Like [`Coordinator::cas`], serialized per partition, but
    /// at the ordinary consistency level `cl` and with no condition.
    pub async fn read_modify_write<F>(
        &self,
        table: Uuid,
        key: DecoratedKey,
        ranges: Vec<(Bytes, Bytes)>,
        now: LocalTime,
        cl: Consistency,
        write_type: WriteType,
        modify: F,
    ) -> Result<()>
    where
        F: FnOnce(&ReadResult) -> Option<Vec<Mutation>> + Send + 'static,
    {
        let required = self.check_available(table, cl)?;
        self.serialized(table, key, ranges, now, cl, required, write_type, modify)
            .await
            .map(|_| ())
    }

    #[allow(clippy::too_many_arguments)]
    async fn serialized<F>(
        &self,
        table: Uuid,
        key: DecoratedKey,
        ranges: Vec<(Bytes, Bytes)>,
        now: LocalTime,
        cl: Consistency,
        required: u32,
        write_type: WriteType,
        decide: F,
    ) -> Result<(ReadResult, bool)>
    where
        F: FnOnce(&ReadResult) -> Option<Vec<Mutation>> + Send + 'static,
    {
        let replica = self.replica().clone();
        let work =
            tokio::task::spawn_blocking(move || replica.cas(table, &key, &ranges, now, decide));
        match tokio::time::timeout(self.config().write_request_timeout, work).await {
            Ok(Ok(done)) => done.map_err(|e| write_failure(e, cl, required, write_type)),
            Ok(Err(e)) => Err(CoordinatorError::Internal(format!(
                "storage task failed: {e}"
            ))),
            Err(_) => Err(CoordinatorError::WriteTimeout {
                consistency: cl,
                received: 0,
                required,
                write_type,
            }),
        }
    }
}

impl Coordinator {
    /// Compare-and-set across partitions (of one or more tables): lock, read and decide as
    /// [`Replica::cas_many`] does, and apply the decision's mutations as one commit-log record.
    /// `lock_wait` bounds the wait for each partition's lock (a longer wait answers
    /// [`CasManyOutcome::Conflict`]); the whole call is bounded by the write timeout.
    ///
    /// [`Replica::cas_many`]: khata_replica::Replica::cas_many
    pub async fn cas_many<F>(
        &self,
        reads: Vec<CasRead>,
        now: LocalTime,
        serial: Consistency,
        lock_wait: Option<std::time::Duration>,
        decide: F,
    ) -> Result<CasManyOutcome>
    where
        F: FnOnce(&[ReadResult]) -> Option<Vec<Mutation>> + Send + 'static,
    {
        if !serial.is_serial() {
            return Err(CoordinatorError::Invalid(format!(
                "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL, got {}",
                serial.name()
            )));
        }
        let mut required = 1;
        for r in &reads {
            required = required.max(self.check_available(r.table, serial)?);
        }
        let replica = self.replica().clone();
        let work =
            tokio::task::spawn_blocking(move || replica.cas_many(&reads, now, lock_wait, decide));
        match tokio::time::timeout(self.config().write_request_timeout, work).await {
            Ok(Ok(done)) => done.map_err(|e| write_failure(e, serial, required, WriteType::Cas)),
            Ok(Err(e)) => Err(CoordinatorError::Internal(format!(
                "storage task failed: {e}"
            ))),
            Err(_) => Err(CoordinatorError::WriteTimeout {
                consistency: serial,
                received: 0,
                required,
                write_type: WriteType::Cas,
            }),
        }
    }
}
