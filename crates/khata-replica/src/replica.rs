//! One node's local data service: the storage engine, the schema catalog kept in the
//! `system_schema` tables, and the node's own row in `system.local`.
//!
//! Schema changes are serialized by one lock: each checks the request against the current
//! schema, writes the `system_schema` rows (one commit-log record, so a crash leaves all or
//! none of them), creates or drops the engine's tables, then publishes the new [`Schema`]
//! snapshot and `schema_version`. At start-up the catalog is read back from those rows and any
//! table the schema names but the engine lacks (a crash between the two) is created.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use bytes::Bytes;
use khata_env::{Clock, FileSystem};
use khata_storage::{
    Engine, EngineConfig, Mutation, ReadResult, ScanPosition, ScanResult, TableSpec,
};
use khata_types::LocalTime;
use khata_types::schema::{ColumnKind, KeyspaceDef, TableDef};
use khata_types::token::{DecoratedKey, Token};
use parking_lot::{Mutex, RwLock};
use tracing::{info, warn};
use uuid::Uuid;

use crate::error::{ReplicaError, Result};
use crate::index::{self, IndexQuery, IndexResult};
use crate::rows::{ReadRowExt, RowWriter, SysValue, read_rows};
use crate::schema::{IndexDef, KeyspaceSchema, Schema, TableSchema, UserType, add_fixed_tables};
use crate::schema_tables::{self, StoredRows, SystemWrite};
use crate::system_tables;
use crate::virtual_tables::{self, ClientsSource, CoordinatorLatencySource, PoolsSource};

/// The Cassandra version khata reports (`release_version`): drivers pick their schema parser
/// by it, and cqlsh 6 sends `DESCRIBE` to servers of 4.0 or later.
pub const RELEASE_VERSION: &str = "4.1.0";
/// The CQL language version khata reports.
pub const CQL_VERSION: &str = "3.4.6";
/// The partitioner khata uses (the only one).
pub const PARTITIONER: &str = "org.apache.cassandra.dht.Murmur3Partitioner";

/// Who this node is, as `system.local` reports it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub cluster_name: String,
    pub data_center: String,
    pub rack: String,
    pub listen_address: IpAddr,
    pub internode_port: u16,
    pub rpc_address: IpAddr,
    pub native_port: u16,
}

/// How to open a replica.
#[derive(Debug)]
pub struct ReplicaConfig {
    pub engine: EngineConfig,
    pub node: NodeInfo,
    /// The host id to take if this data directory has none yet.
    pub new_host_id: Uuid,
    /// The tokens to take if this data directory has none yet.
    pub new_tokens: Vec<Token>,
}

/// What a schema change did, for `SCHEMA_CHANGE` results and events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaEvent {
    pub change: ChangeKind,
    pub target: ChangeTarget,
    pub keyspace: String,
    /// The table or type name (empty for a keyspace).
    pub name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Updated,
    Dropped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeTarget {
    Keyspace,
    Table,
    Type,
}

/// A request to change the schema. The front end builds the new definitions; the replica
/// checks them against the current schema under its lock.
#[derive(Clone, Debug)]
pub enum SchemaChange {
    CreateKeyspace(KeyspaceDef),
    AlterKeyspace(KeyspaceDef),
    DropKeyspace(String),
    CreateTable(TableSchema),
    /// The table's new definition; its id must be the current one's.
    AlterTable(TableSchema),
    DropTable {
        keyspace: String,
        table: String,
    },
    CreateType(UserType),
    AlterType(UserType),
    DropType {
        keyspace: String,
        name: String,
    },
    /// A secondary index on a table of the keyspace, built before the change returns.
    CreateIndex {
        keyspace: String,
        table: String,
        index: IndexDef,
    },
    DropIndex {
        keyspace: String,
        name: String,
    },
}

/// The node's local services.
#[derive(Debug)]
pub struct Replica {
    pub(crate) engine: Engine,
    clock: Arc<dyn Clock>,
    schema: RwLock<Arc<Schema>>,
    schema_lock: Mutex<()>,
    last_schema_timestamp: AtomicI64,
    /// The system keyspaces' definitions: fixed, but for the replicated ones' replication,
    /// which ALTER KEYSPACE may change (changed under `schema_lock`).
    system_keyspaces: RwLock<Vec<KeyspaceDef>>,
    node: NodeInfo,
    host_id: Uuid,
    tokens: Vec<Token>,
    /// Serializes [`Replica::cas`] per partition (by stripe).
    pub(crate) cas_locks: Vec<Mutex<()>>,
    /// Whether any table has a secondary index (writes skip the lookup when none has).
    has_indexes: AtomicBool,
    /// The ids of the virtual tables, whose reads are answered from the node's state.
    virtual_ids: Vec<Uuid>,
    virtual_state: virtual_tables::VirtualState,
}

/// Lock stripes for compare-and-set: partitions share a stripe by hash.
pub(crate) const CAS_STRIPES: usize = 1024;

/// The lock stripe of a partition for compare-and-set ([`Replica::cas`] and
/// [`Replica::cas_many`] take the same one).
pub fn cas_stripe(table: Uuid, key: &DecoratedKey) -> usize {
    (key.token.0 as u64 ^ table.as_u64_pair().0) as usize % CAS_STRIPES
}

impl Replica {
    /// Open the engine, create the system tables, load the schema and write `system.local`.
    pub fn open(fs: Arc<dyn FileSystem>, config: ReplicaConfig) -> Result<Replica> {
        let clock = config.engine.clock.clone();
        let engine = Engine::open(fs, config.engine)?;
        let existing: BTreeMap<Uuid, TableSpec> =
            engine.tables().into_iter().map(|s| (s.id, s)).collect();
        for def in system_tables::all() {
            if !existing.contains_key(&def.id) {
                engine.create_table(spec_of(&def))?;
            }
        }
        let now = clock.now_seconds();
        let stored = read_schema_rows(&engine, now)?;
        let mut user = schema_tables::load(&stored)?;
        let system_keyspaces =
            schema_tables::load_system_keyspaces(&stored, system_tables::keyspace_defs())?;
        let (host_id, tokens) =
            read_identity(&engine, now)?.unwrap_or((config.new_host_id, config.new_tokens));
        let replica = Replica {
            engine,
            clock,
            schema: RwLock::new(Arc::new(Schema::default())),
            schema_lock: Mutex::new(()),
            last_schema_timestamp: AtomicI64::new(0),
            system_keyspaces: RwLock::new(system_keyspaces),
            node: config.node,
            host_id,
            tokens,
            cas_locks: (0..CAS_STRIPES).map(|_| Mutex::new(())).collect(),
            has_indexes: AtomicBool::new(false),
            virtual_ids: virtual_tables::all().iter().map(|d| d.id).collect(),
            virtual_state: virtual_tables::VirtualState::default(),
        };
        let mut unusable = Vec::new();
        for table in user.values().flat_map(|k| k.tables.values()) {
            if !existing.contains_key(&table.def.id) {
                warn!(
                    keyspace = table.def.keyspace,
                    table = table.def.name,
                    "table in the schema had no storage; creating it"
                );
                replica.engine.create_table(spec_of(&table.def))?;
            }
            for i in table.indexes.iter().filter(|i| i.has_storage(&table.def)) {
                let spec = index::index_spec(&table.def, i);
                if existing.contains_key(&spec.id) {
                    continue;
                }
                // An index whose storage could never be made (a name too long for its
                // directory, which khata accepted once and then could not create), rather
                // than a node that cannot start.
                if let Err(e) = index::check_name(&table.def.name, &i.name) {
                    let def = &table.def;
                    unusable.push((def.keyspace.clone(), def.name.clone(), i.name.clone(), e));
                    continue;
                }
                replica.engine.create_table(spec)?;
            }
        }
        for (keyspace, table, index, reason) in unusable {
            replica.drop_unusable_index(&mut user, &keyspace, &table, &index, &reason)?;
        }
        let known: std::collections::HashSet<Uuid> = user
            .values()
            .flat_map(|k| k.tables.values())
            .flat_map(|t| storage_ids(t))
            .chain(system_tables::all().iter().map(|d| d.id))
            .collect();
        for spec in existing.values().filter(|s| !known.contains(&s.id)) {
            warn!(
                keyspace = spec.keyspace,
                table = spec.name,
                "storage of a table not in the schema is left alone"
            );
        }
        replica.write_system_keyspaces()?;
        replica.publish(user);
        replica.write_local()?;
        // Indexes whose build a crash interrupted are built again before serving.
        let schema = replica.schema();
        for table in schema.tables() {
            for i in &table.indexes {
                if !index::is_built(&replica.engine, &table.def, i, now)? {
                    info!(table = table.def.name, index = i.name, "building index");
                    index::build(&replica.engine, table, i, now, replica.clock.now_micros())?;
                }
            }
        }
        replica.record_built_indexes()?;
        info!(
            host_id = %replica.host_id,
            tokens = replica.tokens.len(),
            schema_version = %replica.schema().version,
            "replica open"
        );
        Ok(replica)
    }

    /// Take index `name` of `table`, which has no storage and cannot have any, out of the
    /// schema (`user`, and its rows in `system_schema`), saying so in the log. It held no
    /// entries, so nothing is lost but its definition; the table and its data stay.
    fn drop_unusable_index(
        &self,
        user: &mut BTreeMap<String, KeyspaceSchema>,
        keyspace: &str,
        table: &str,
        name: &str,
        reason: &ReplicaError,
    ) -> Result<()> {
        tracing::error!(
            keyspace,
            table,
            index = name,
            %reason,
            "secondary index has no storage and cannot have any; it is dropped from the \
             schema (the table's data is untouched: create the index again under a valid name)"
        );
        let Some(t) = user.get_mut(keyspace).and_then(|k| k.tables.get_mut(table)) else {
            return Ok(());
        };
        let mut next = TableSchema::clone(t);
        next.indexes.retain(|i| i.name != name);
        let writes =
            schema_tables::table_writes(&next, self.schema_timestamp(), self.clock.now_seconds())?;
        self.apply_system(writes)?;
        *t = Arc::new(next);
        Ok(())
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn node(&self) -> &NodeInfo {
        &self.node
    }

    pub fn host_id(&self) -> Uuid {
        self.host_id
    }

    pub fn tokens(&self) -> &[Token] {
        &self.tokens
    }

    /// The current schema.
    pub fn schema(&self) -> Arc<Schema> {
        self.schema.read().clone()
    }

    fn publish(&self, user: BTreeMap<String, KeyspaceSchema>) {
        let mut all = user;
        for ks in self.system_keyspaces.read().iter() {
            all.insert(ks.name.clone(), KeyspaceSchema::new(ks.clone()));
        }
        add_fixed_tables(&mut all, system_tables::all());
        let schema = Schema::new(all).with_virtual(virtual_tables::keyspaces());
        self.has_indexes.store(
            schema.tables().any(|t| !t.indexes.is_empty()),
            Ordering::Release,
        );
        *self.schema.write() = Arc::new(schema);
    }

    /// A timestamp for a schema change: the clock, but always after the previous change.
    fn schema_timestamp(&self) -> i64 {
        let now = self.clock.now_micros();
        let mut last = self.last_schema_timestamp.load(Ordering::Relaxed);
        loop {
            let next = now.max(last + 2);
            match self.last_schema_timestamp.compare_exchange(
                last,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return next,
                Err(actual) => last = actual,
            }
        }
    }

    fn apply_system(&self, writes: Vec<SystemWrite>) -> Result<()> {
        let mut tables: Vec<Uuid> = writes.iter().map(|w| w.table.id).collect();
        tables.sort_unstable();
        tables.dedup();
        let mutations = writes
            .into_iter()
            .map(|w| Mutation::new(w.table.id, w.key, w.update))
            .collect();
        self.engine.apply_batch(mutations, true)?;
        // Schema tables are written rarely: flushed now, their memtables do not keep the
        // commit log's segments from being discarded for hours (as Cassandra flushes them).
        for table in tables {
            self.engine.flush_soon(table)?;
        }
        Ok(())
    }

    /// The system keyspaces' rows in `system_schema`, replaced on every start.
    fn write_system_keyspaces(&self) -> Result<()> {
        let ts = self.schema_timestamp();
        let now = self.clock.now_seconds();
        let mut writes = Vec::new();
        for ks in self.system_keyspaces.read().iter() {
            writes.extend(schema_tables::keyspace_drop(&ks.name, ts - 1, now));
            writes.extend(schema_tables::keyspace_writes(ks, ts, now)?);
        }
        for def in system_tables::all() {
            let table = TableSchema {
                def,
                dropped: Vec::new(),
                indexes: Vec::new(),
            };
            writes.extend(schema_tables::table_writes(&table, ts, now)?);
        }
        self.apply_system(writes)
    }

    /// Bring `system."IndexInfo"` in line with the schema: a row for each index whose build
    /// has completed (keyed by its keyspace, as Cassandra keys it), none for an index dropped
    /// or not built yet. Only the rows that differ are written.
    fn record_built_indexes(&self) -> Result<()> {
        let def = system_tables::built_indexes();
        let now = self.clock.now_seconds();
        let mut built = std::collections::BTreeSet::new();
        for table in self.schema().tables() {
            for i in &table.indexes {
                if index::is_built(&self.engine, &table.def, i, now)? {
                    built.insert((table.def.keyspace.clone(), i.name.clone()));
                }
            }
        }
        let mut listed = std::collections::BTreeSet::new();
        scan_all(&self.engine, def.id, now, |key, partition| {
            for row in read_rows(&def, key, partition, now)? {
                listed.insert((row.text("table_name")?, row.text("index_name")?));
            }
            Ok(())
        })?;
        if built == listed {
            return Ok(());
        }
        let ts = self.schema_timestamp();
        let mut mutations = Vec::new();
        for (keyspace, name) in listed.difference(&built) {
            let (key, mut update) = RowWriter::new(&def)
                .set("table_name", SysValue::Text(keyspace.clone()))
                .set("index_name", SysValue::Text(name.clone()))
                .build(ts, now)?;
            // The same row, deleted instead.
            for row in update.rows.values_mut() {
                *row = khata_types::row::Row {
                    deletion: Some(khata_types::cell::DeletionTime::new(ts, now)),
                    ..Default::default()
                };
            }
            mutations.push(Mutation::new(def.id, key, update));
        }
        for (keyspace, name) in built.difference(&listed) {
            let (key, update) = RowWriter::new(&def)
                .set("table_name", SysValue::Text(keyspace.clone()))
                .set("index_name", SysValue::Text(name.clone()))
                .build(ts, now)?;
            mutations.push(Mutation::new(def.id, key, update));
        }
        self.engine.apply_batch(mutations, true)?;
        self.engine.flush_soon(def.id)?;
        Ok(())
    }

    /// Rewrite `system.size_estimates` and `system.table_estimates`: for every user table, its
    /// partitions (in SSTables and the active memtable) and their mean size, shared out over
    /// this node's primary token ranges by the share of the ring each covers, the wrapping range
    /// split at the minimum token as Cassandra normalizes it. Keyspaces no longer in the schema
    /// lose their rows. The node records at start and then periodically, as Cassandra's
    /// `SizeEstimatesRecorder` does; on one node its ranges are the whole ring.
    pub fn record_size_estimates(&self) -> Result<()> {
        let ts = self.clock.now_micros();
        let now = self.clock.now_seconds();
        let schema = self.schema();
        let ranges = primary_ranges(&self.tokens);
        let tables = [
            system_tables::size_estimates(),
            system_tables::table_estimates(),
        ];
        let mut mutations = Vec::new();
        // Every keyspace partition there is now or was recorded before starts over.
        let mut keyspaces: Vec<Bytes> = schema
            .keyspaces
            .keys()
            .filter(|k| !system_tables::is_system_keyspace(k))
            .map(|k| Bytes::copy_from_slice(k.as_bytes()))
            .collect();
        for def in &tables {
            scan_all(&self.engine, def.id, now, |key, _| {
                keyspaces.push(key.key.clone());
                Ok(())
            })?;
        }
        keyspaces.sort();
        keyspaces.dedup();
        for def in &tables {
            for keyspace in &keyspaces {
                let deletion = khata_types::partition::Partition {
                    deletion: Some(khata_types::cell::DeletionTime::new(ts - 1, now)),
                    ..khata_types::partition::Partition::new()
                };
                mutations.push(Mutation::new(
                    def.id,
                    DecoratedKey::new(keyspace.clone()),
                    deletion,
                ));
            }
        }
        for (keyspace, ks) in &schema.keyspaces {
            if system_tables::is_system_keyspace(keyspace) {
                continue;
            }
            for (name, table) in &ks.tables {
                let stats = self.engine.table_stats(table.def.id)?;
                let partitions = stats.partitions_estimate + stats.memtable_partitions as u64;
                let bytes = stats.live_data_bytes + stats.memtable_bytes as u64;
                let mean = bytes.checked_div(partitions).unwrap_or(0);
                for (start, end, share) in &ranges {
                    let count = (partitions as f64 * share).round() as i64;
                    let row = |def, range_type: Option<&str>| {
                        RowWriter::new(def)
                            .set("keyspace_name", SysValue::Text(keyspace.clone()))
                            .set("table_name", SysValue::Text(name.clone()))
                            .set_opt("range_type", range_type.map(|t| SysValue::Text(t.into())))
                            .set("range_start", SysValue::Text(start.to_string()))
                            .set("range_end", SysValue::Text(end.to_string()))
                            .set("mean_partition_size", SysValue::BigInt(mean as i64))
                            .set("partitions_count", SysValue::BigInt(count))
                            .build(ts, now)
                    };
                    let (key, update) = row(&tables[0], None)?;
                    mutations.push(Mutation::new(tables[0].id, key, update));
                    for range_type in ["primary", "local_primary"] {
                        let (key, update) = row(&tables[1], Some(range_type))?;
                        mutations.push(Mutation::new(tables[1].id, key, update));
                    }
                }
            }
        }
        self.engine.apply_batch(mutations, false)?;
        Ok(())
    }

    /// This node's row in `system.local`.
    fn write_local(&self) -> Result<()> {
        let table = system_tables::local();
        let n = &self.node;
        let (key, update) = RowWriter::new(&table)
            .set("key", SysValue::Text("local".into()))
            .set("bootstrapped", SysValue::Text("COMPLETED".into()))
            .set("broadcast_address", SysValue::Inet(n.listen_address))
            .set("broadcast_port", SysValue::Int(i32::from(n.internode_port)))
            .set("cluster_name", SysValue::Text(n.cluster_name.clone()))
            .set("cql_version", SysValue::Text(CQL_VERSION.into()))
            .set("data_center", SysValue::Text(n.data_center.clone()))
            .set(
                "gossip_generation",
                SysValue::Int(self.clock.now_seconds() as i32),
            )
            .set("host_id", SysValue::Uuid(self.host_id))
            .set("listen_address", SysValue::Inet(n.listen_address))
            .set("listen_port", SysValue::Int(i32::from(n.internode_port)))
            .set("native_protocol_version", SysValue::Text("5".into()))
            .set("partitioner", SysValue::Text(PARTITIONER.into()))
            .set("rack", SysValue::Text(n.rack.clone()))
            .set("release_version", SysValue::Text(RELEASE_VERSION.into()))
            .set("rpc_address", SysValue::Inet(n.rpc_address))
            .set("rpc_port", SysValue::Int(i32::from(n.native_port)))
            .set("schema_version", SysValue::Uuid(self.schema().version))
            .set(
                "tokens",
                SysValue::Texts(self.tokens.iter().map(|t| t.0.to_string()).collect()),
            )
            .build(self.clock.now_micros(), self.clock.now_seconds())?;
        self.engine
            .apply_batch(vec![Mutation::new(table.id, key, update)], true)?;
        self.engine.flush_soon(table.id)?;
        Ok(())
    }

    /// Apply a schema change. `Ok(None)` when there was nothing to do is not returned: a
    /// request for an object that exists (or does not) is an error the caller may ignore for
    /// `IF [NOT] EXISTS`.
    pub fn change_schema(&self, change: SchemaChange) -> Result<SchemaEvent> {
        let _guard = self.schema_lock.lock();
        let current = self.schema();
        let mut keyspaces = current.keyspaces.clone();
        for ks in system_tables::keyspace_defs() {
            keyspaces.remove(&ks.name);
        }
        let ts = self.schema_timestamp();
        let now = self.clock.now_seconds();
        if let SchemaChange::AlterKeyspace(def) = &change
            && system_tables::is_replicated_system_keyspace(&def.name)
        {
            return self.alter_system_keyspace(def, keyspaces, ts, now);
        }
        let (event, writes, storage) = plan(&mut keyspaces, &current, change, ts, now)?;
        // A new table's (or index's) storage is made before the schema names it, so a failure
        // to make it leaves no table in the schema without storage (which the next start could
        // not open); a schema write that fails then takes the new storage away again.
        let created = match &storage {
            StorageChange::Create(def) => Some(spec_of(def)),
            StorageChange::CreateIndex(table, index) if index.has_storage(&table.def) => {
                Some(index::index_spec(&table.def, index))
            }
            _ => None,
        }
        // Storage that was there already (left by a table not in the schema) is not ours to
        // take away.
        .filter(|spec| !self.engine.tables().iter().any(|s| s.id == spec.id));
        if let Some(spec) = &created {
            self.engine.create_table(spec.clone())?;
        }
        if let Err(e) = self.apply_system(writes) {
            if let Some(spec) = created
                && let Err(drop) = self.engine.drop_table(spec.id)
            {
                warn!(table = spec.name, error = %drop, "storage of a table not created is left");
            }
            return Err(e);
        }
        let mut build = None;
        match storage {
            StorageChange::None | StorageChange::Create(_) => {}
            StorageChange::Alter(def) => self.engine.alter_table(spec_of(&def))?,
            StorageChange::Drop(ids) => {
                for id in ids {
                    self.engine.drop_table(id)?;
                }
            }
            StorageChange::CreateIndex(table, index) => build = Some((table, index)),
        }
        self.publish(keyspaces);
        self.write_local()?;
        // Writes from here on index themselves; the build covers what was there before.
        if let Some((table, index)) = build {
            index::build(&self.engine, &table, &index, now, self.clock.now_micros())?;
        }
        self.record_built_indexes()?;
        info!(?event, "schema changed");
        Ok(event)
    }

    /// ALTER KEYSPACE of a replicated system keyspace (`def`, its new replication), which
    /// Cassandra allows: its row in `system_schema.keyspaces` rewritten and the schema published
    /// with it. `user` is the current schema's user keyspaces. The caller holds `schema_lock`.
    fn alter_system_keyspace(
        &self,
        def: &KeyspaceDef,
        user: BTreeMap<String, KeyspaceSchema>,
        ts: i64,
        now: LocalTime,
    ) -> Result<SchemaEvent> {
        self.apply_system(schema_tables::keyspace_writes(def, ts, now)?)?;
        for ks in self.system_keyspaces.write().iter_mut() {
            if ks.name == def.name {
                *ks = def.clone();
            }
        }
        self.publish(user);
        self.write_local()?;
        let event = event(ChangeKind::Updated, ChangeTarget::Keyspace, &def.name, "");
        info!(?event, "schema changed");
        Ok(event)
    }

    /// Apply mutations atomically (one commit-log record); `durable` false skips the log.
    /// The secondary index entries the writes make go into the same record.
    pub fn apply(&self, mutations: Vec<Mutation>, durable: bool) -> Result<()> {
        self.refuse_virtual_writes(&mutations)?;
        let mutations = self.with_index_entries(mutations)?;
        self.engine.apply_batch(mutations, durable)?;
        Ok(())
    }

    /// `mutations` and the index entries they make.
    pub(crate) fn with_index_entries(&self, mut mutations: Vec<Mutation>) -> Result<Vec<Mutation>> {
        if !self.has_indexes.load(Ordering::Acquire) {
            return Ok(mutations);
        }
        let schema = self.schema();
        let mut entries = Vec::new();
        for m in &mutations {
            if let Some(t) = schema.table_by_id(m.table)
                && !t.indexes.is_empty()
            {
                index::entries(t, &m.key, &m.update, None, &mut entries)?;
            }
        }
        mutations.extend(entries);
        Ok(mutations)
    }

    /// The settings `system_views.settings` lists: every configuration key and its value.
    pub fn set_settings(&self, settings: Vec<(String, String)>) {
        *self.virtual_state.settings.write() = settings;
    }

    /// What lists the connected clients for `system_views.clients`.
    pub fn set_clients_source(&self, source: ClientsSource) {
        *self.virtual_state.clients.write() = Some(source);
    }

    /// What adds the pools of the layers above (the CQL server's requests) to
    /// `system_views.thread_pools`.
    pub fn set_pools_source(&self, source: PoolsSource) {
        *self.virtual_state.pools.write() = Some(source);
    }

    /// The node's pools as `system_views.thread_pools` and `khata admin tpstats` show them:
    /// the engine's and those the server added, by name.
    pub fn pools(&self) -> Vec<khata_types::pools::PoolStats> {
        let mut pools = self.engine.pools();
        if let Some(source) = self.virtual_state.pools.read().clone() {
            pools.extend(source());
        }
        pools.sort_by(|a, b| a.name.cmp(&b.name));
        pools
    }

    /// What gives the coordinator's latencies of a table's requests for
    /// `system_views.coordinator_*_latency`.
    pub fn set_coordinator_latency_source(&self, source: CoordinatorLatencySource) {
        *self.virtual_state.coordinator_latency.write() = Some(source);
    }

    fn is_virtual(&self, table: Uuid) -> bool {
        self.virtual_ids.contains(&table)
    }

    /// Virtual tables cannot be written (Cassandra's message).
    fn refuse_virtual_writes(&self, mutations: &[Mutation]) -> Result<()> {
        match mutations.iter().find(|m| self.is_virtual(m.table)) {
            Some(m) => Err(self.not_supported("Modification", m.table)),
            None => Ok(()),
        }
    }

    fn not_supported(&self, what: &str, table: Uuid) -> ReplicaError {
        let schema = self.schema();
        let name = schema.table_by_id(table).map_or_else(
            || table.to_string(),
            |t| format!("{}.{}", t.def.keyspace, t.def.name),
        );
        ReplicaError::Invalid(format!("{what} is not supported by table {name}"))
    }

    /// The rows of virtual table `table`, made now from the node's state.
    fn virtual_partitions(
        &self,
        table: Uuid,
        now: LocalTime,
    ) -> Result<BTreeMap<DecoratedKey, khata_types::partition::Partition>> {
        let schema = self.schema();
        let Some(def) = schema.table_by_id(table).map(|t| &t.def) else {
            return Ok(BTreeMap::new());
        };
        // Only what the table shows is gathered: a read of `settings` does not list the
        // clients or lock the block cache's shards.
        let shows = |name: &str| def.keyspace == virtual_tables::SYSTEM_VIEWS && def.name == name;
        let settings = if shows("settings") {
            self.virtual_state.settings.read().clone()
        } else {
            Vec::new()
        };
        let clients = if shows("clients") {
            self.virtual_state
                .clients
                .read()
                .as_ref()
                .map(|source| source())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let cache = if shows("caches") {
            self.engine.block_cache_stats()
        } else {
            Default::default()
        };
        let mut disk_usage = Vec::new();
        if shows("disk_usage") {
            for (keyspace, ks) in &schema.keyspaces {
                for (name, t) in &ks.tables {
                    let stats = self.engine.table_stats(t.def.id)?;
                    disk_usage.push((keyspace.clone(), name.clone(), stats.live_data_bytes));
                }
            }
        }
        let sstable_tasks = if shows("sstable_tasks") {
            self.engine.sstable_tasks()
        } else {
            Vec::new()
        };
        let mut latencies = Vec::new();
        if def.keyspace == virtual_tables::SYSTEM_VIEWS
            && let Some(shown) = virtual_tables::HistogramTable::of_table(&def.name)
        {
            let source = self.virtual_state.coordinator_latency.read().clone();
            for (keyspace, ks) in &schema.keyspaces {
                for (name, t) in &ks.tables {
                    let id = t.def.id;
                    let snapshot = shown.pick(
                        || self.engine.table_histograms(id),
                        || source.as_ref().and_then(|source| source(id)),
                    )?;
                    latencies.push((keyspace.clone(), name.clone(), snapshot));
                }
            }
        }
        let pools = if shows("thread_pools") {
            self.pools()
        } else {
            Vec::new()
        };
        let state = virtual_tables::NodeState {
            settings: &settings,
            clients,
            cache,
            disk_usage,
            sstable_tasks,
            latencies,
            pools,
        };
        virtual_tables::partitions(def, &state, self.clock.now_micros(), now)
    }

    /// Query a table through one of its secondary indexes (see [`IndexQuery`]).
    pub fn index_query(&self, query: &IndexQuery) -> Result<IndexResult> {
        let schema = self.schema();
        let table = schema
            .table_by_id(query.table)
            .ok_or_else(|| ReplicaError::NotFound(format!("unknown table {}", query.table)))?;
        let mut found = index::query(&self.engine, table, query)?;
        table.hide_dropped(found.partitions.iter_mut().map(|(_, p)| p));
        Ok(found)
    }

    /// Read one partition (see [`Engine::read`]).
    pub fn read(
        &self,
        table: Uuid,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
        row_limit: Option<usize>,
        now: LocalTime,
    ) -> Result<ReadResult> {
        if self.is_virtual(table) {
            let partitions = self.virtual_partitions(table, now)?;
            return Ok(virtual_tables::read(
                partitions, key, ranges, reversed, row_limit,
            ));
        }
        let mut read = self
            .engine
            .read(table, key, ranges, reversed, row_limit, now)?;
        self.hide_dropped(table, std::slice::from_mut(&mut read.partition));
        Ok(read)
    }

    /// Hide the cells of `table`'s dropped columns written before their drop
    /// ([`TableSchema::hide_dropped`]) in `partitions`; looked up under the schema's lock,
    /// without taking a reference to the snapshot.
    pub(crate) fn hide_dropped<'a>(
        &self,
        table: Uuid,
        partitions: impl IntoIterator<Item = &'a mut khata_types::partition::Partition>,
    ) {
        if let Some(t) = self.schema.read().table_by_id(table) {
            t.hide_dropped(partitions);
        }
    }

    /// Read one row: `ranges` select at most one (a full clustering key, or the whole
    /// partition of a table without clustering columns). The engine reads its sources newest
    /// first and stops once the older ones cannot change the row ([`Engine::read_row`], told
    /// the table's regular columns). A table with static columns is read as a partition: the
    /// static row would have to be settled too.
    pub fn read_row(
        &self,
        table: Uuid,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        now: LocalTime,
    ) -> Result<ReadResult> {
        if self.is_virtual(table) {
            return self.read(table, key, ranges, false, None, now);
        }
        let schema = self.schema();
        let columns = schema.table_by_id(table).map(|t| &t.def.columns);
        match columns {
            Some(columns) if !columns.iter().any(|c| c.kind == ColumnKind::Static) => {
                let regular = columns
                    .iter()
                    .filter(|c| c.kind == ColumnKind::Regular)
                    .map(|c| c.id);
                let mut read = self.engine.read_row(table, key, ranges, regular, now)?;
                if let Some(t) = schema.table_by_id(table) {
                    t.hide_dropped(std::iter::once(&mut read.partition));
                }
                Ok(read)
            }
            _ => self.read(table, key, ranges, false, None, now),
        }
    }

    /// Scan a token range (see [`Engine::scan`]).
    pub fn scan(
        &self,
        table: Uuid,
        start: Bound<Token>,
        end: Bound<Token>,
        resume: Option<&ScanPosition>,
        row_limit: usize,
        now: LocalTime,
    ) -> Result<ScanResult> {
        if self.is_virtual(table) {
            let partitions = self.virtual_partitions(table, now)?;
            return Ok(virtual_tables::scan(
                partitions, start, end, resume, row_limit,
            ));
        }
        let mut page = self
            .engine
            .scan(table, start, end, resume, row_limit, now)?;
        self.hide_dropped(table, page.partitions.iter_mut().map(|(_, p)| p));
        Ok(page)
    }

    /// Compare-and-set on one partition: read it, let `decide` look at what was read and
    /// return the mutations to apply (or none), and apply them, with no other `cas` on the
    /// same partition in between. Returns what was read and whether anything was applied.
    ///
    /// This serializes lightweight transactions per partition on this node; a cluster replaces
    /// it with Paxos across the replicas. (Plain writes do not take the lock, as in
    /// Cassandra, where mixing LWT and non-LWT writes to one partition is not linearizable.)
    pub fn cas(
        &self,
        table: Uuid,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        now: LocalTime,
        decide: impl FnOnce(&ReadResult) -> Option<Vec<Mutation>>,
    ) -> Result<(ReadResult, bool)> {
        if self.is_virtual(table) {
            return Err(self.not_supported("Conditional modification", table));
        }
        let _serial = self.cas_locks[cas_stripe(table, key)].lock();
        let mut read = self.engine.read(table, key, ranges, false, None, now)?;
        self.hide_dropped(table, std::slice::from_mut(&mut read.partition));
        match decide(&read) {
            Some(mutations) => {
                let mutations = self.with_index_entries(mutations)?;
                self.engine.apply_batch(mutations, true)?;
                Ok((read, true))
            }
            None => Ok((read, false)),
        }
    }

    /// Empty a table and its indexes.
    pub fn truncate(&self, table: Uuid) -> Result<()> {
        if self.is_virtual(table) {
            return Err(self.not_supported("Truncation", table));
        }
        self.engine.truncate(table)?;
        let schema = self.schema();
        if let Some(t) = schema.table_by_id(table) {
            for i in t.indexes.iter().filter(|i| i.has_storage(&t.def)) {
                self.engine
                    .truncate(index::index_table_id(t.def.id, &i.name))?;
                // Nothing to index: the empty build only marks the index built again.
                let now = self.clock.now_seconds();
                index::build(&self.engine, t, i, now, self.clock.now_micros())?;
            }
        }
        Ok(())
    }

    /// Flush memtables and close the engine.
    pub fn close(&self) -> Result<()> {
        Ok(self.engine.close()?)
    }
}

enum StorageChange {
    None,
    Create(TableDef),
    Alter(TableDef),
    Drop(Vec<Uuid>),
    CreateIndex(Arc<TableSchema>, IndexDef),
}

/// The storage tables of a table: its own and its indexes'.
fn storage_ids(t: &TableSchema) -> Vec<Uuid> {
    std::iter::once(t.def.id)
        .chain(
            t.indexes
                .iter()
                .filter(|i| i.has_storage(&t.def))
                .map(|i| index::index_table_id(t.def.id, &i.name)),
        )
        .collect()
}

type Plan = (SchemaEvent, Vec<SystemWrite>, StorageChange);

fn event(change: ChangeKind, target: ChangeTarget, keyspace: &str, name: &str) -> SchemaEvent {
    SchemaEvent {
        change,
        target,
        keyspace: keyspace.to_string(),
        name: name.to_string(),
    }
}

fn keyspace_mut<'a>(
    keyspaces: &'a mut BTreeMap<String, KeyspaceSchema>,
    name: &str,
) -> Result<&'a mut KeyspaceSchema> {
    if system_tables::is_system_keyspace(name) {
        return Err(ReplicaError::Invalid(format!(
            "{name} keyspace is not user-modifiable"
        )));
    }
    keyspaces
        .get_mut(name)
        .ok_or_else(|| ReplicaError::NotFound(format!("Keyspace '{name}' doesn't exist")))
}

/// Check a change against the schema and work out its rows and storage effect, updating
/// `keyspaces` to the new schema.
fn plan(
    keyspaces: &mut BTreeMap<String, KeyspaceSchema>,
    current: &Schema,
    change: SchemaChange,
    ts: i64,
    now: LocalTime,
) -> Result<Plan> {
    use ChangeKind::*;
    use ChangeTarget::*;
    Ok(match change {
        SchemaChange::CreateKeyspace(def) => {
            if current.keyspace(&def.name).is_some() {
                return Err(ReplicaError::AlreadyExists {
                    what: format!("Keyspace '{}'", def.name),
                    keyspace: def.name.clone(),
                    table: String::new(),
                });
            }
            let writes = schema_tables::keyspace_writes(&def, ts, now)?;
            let e = event(Created, Keyspace, &def.name, "");
            keyspaces.insert(def.name.clone(), KeyspaceSchema::new(def));
            (e, writes, StorageChange::None)
        }
        SchemaChange::AlterKeyspace(def) => {
            let ks = keyspace_mut(keyspaces, &def.name)?;
            let writes = schema_tables::keyspace_writes(&def, ts, now)?;
            ks.def = def;
            (
                event(Updated, Keyspace, &ks.def.name, ""),
                writes,
                StorageChange::None,
            )
        }
        SchemaChange::DropKeyspace(name) => {
            let ks = keyspace_mut(keyspaces, &name)?;
            let ids = ks.tables.values().flat_map(|t| storage_ids(t)).collect();
            keyspaces.remove(&name);
            (
                event(Dropped, Keyspace, &name, ""),
                schema_tables::keyspace_drop(&name, ts, now),
                StorageChange::Drop(ids),
            )
        }
        SchemaChange::CreateTable(table) => {
            let (ks_name, name) = (table.def.keyspace.clone(), table.def.name.clone());
            let ks = keyspace_mut(keyspaces, &ks_name)?;
            if ks.tables.contains_key(&name) {
                return Err(ReplicaError::AlreadyExists {
                    what: format!("Table '{ks_name}.{name}'"),
                    keyspace: ks_name,
                    table: name,
                });
            }
            // An id given by `CREATE TABLE ... WITH ID` must name no other table: storage
            // and the catalog find tables by id.
            if let Some(other) = current.table_by_id(table.def.id) {
                return Err(ReplicaError::Invalid(format!(
                    "Table id {} is already used by table {}.{}",
                    table.def.id, other.def.keyspace, other.def.name
                )));
            }
            check_column_ids(&table.def)?;
            let writes = schema_tables::table_writes(&table, ts, now)?;
            let def = table.def.clone();
            ks.tables.insert(name.clone(), Arc::new(table));
            (
                event(Created, Table, &ks_name, &name),
                writes,
                StorageChange::Create(def),
            )
        }
        SchemaChange::AlterTable(table) => {
            let (ks_name, name) = (table.def.keyspace.clone(), table.def.name.clone());
            let ks = keyspace_mut(keyspaces, &ks_name)?;
            match ks.tables.get(&name) {
                Some(old) if old.def.id == table.def.id => {}
                _ => {
                    return Err(ReplicaError::NotFound(format!(
                        "Table '{ks_name}.{name}' doesn't exist"
                    )));
                }
            }
            check_column_ids(&table.def)?;
            for i in &table.indexes {
                let (column, _) = i.column();
                if table.def.column(&column).is_none() {
                    return Err(ReplicaError::Invalid(format!(
                        "Cannot drop column {column} because it has dependent secondary indexes ({})",
                        i.name
                    )));
                }
            }
            let writes = schema_tables::table_writes(&table, ts, now)?;
            let def = table.def.clone();
            ks.tables.insert(name.clone(), Arc::new(table));
            (
                event(Updated, Table, &ks_name, &name),
                writes,
                StorageChange::Alter(def),
            )
        }
        SchemaChange::DropTable { keyspace, table } => {
            let ks = keyspace_mut(keyspaces, &keyspace)?;
            let Some(old) = ks.tables.remove(&table) else {
                return Err(ReplicaError::NotFound(format!(
                    "Table '{keyspace}.{table}' doesn't exist"
                )));
            };
            (
                event(Dropped, Table, &keyspace, &table),
                schema_tables::table_drop(&keyspace, &table, ts, now)?,
                StorageChange::Drop(storage_ids(&old)),
            )
        }
        SchemaChange::CreateType(ty) => {
            let ks = keyspace_mut(keyspaces, &ty.keyspace)?;
            if ks.types.contains_key(&ty.name) {
                return Err(ReplicaError::AlreadyExists {
                    what: format!("A user type with name '{}' already exists", ty.name),
                    keyspace: ty.keyspace.clone(),
                    table: ty.name.clone(),
                });
            }
            let writes = schema_tables::type_writes(&ty, ts, now)?;
            let e = event(Created, Type, &ty.keyspace, &ty.name);
            ks.types.insert(ty.name.clone(), ty);
            (e, writes, StorageChange::None)
        }
        SchemaChange::AlterType(ty) => {
            let ks = keyspace_mut(keyspaces, &ty.keyspace)?;
            if !ks.types.contains_key(&ty.name) {
                return Err(ReplicaError::NotFound(format!(
                    "No user type named {} exists.",
                    ty.name
                )));
            }
            let writes = schema_tables::type_writes(&ty, ts, now)?;
            let e = event(Updated, Type, &ty.keyspace, &ty.name);
            // Columns and other types hold the type's definition: give them the new fields
            // (stored values of the old shape read with the added fields null).
            for other in ks.types.values_mut() {
                for (_, field_ty) in &mut other.fields {
                    replace_type(field_ty, &ty.keyspace, &ty.name, &ty.fields);
                }
            }
            let users: Vec<String> = ks
                .tables
                .iter()
                .filter(|(_, t)| {
                    t.def
                        .columns
                        .iter()
                        .any(|c| c.ty.mentions_udt(&ty.keyspace, &ty.name))
                })
                .map(|(name, _)| name.clone())
                .collect();
            for name in users {
                if let Some(old) = ks.tables.get(&name) {
                    let mut table = (**old).clone();
                    for c in &mut table.def.columns {
                        replace_type(&mut c.ty, &ty.keyspace, &ty.name, &ty.fields);
                    }
                    ks.tables.insert(name, Arc::new(table));
                }
            }
            ks.types.insert(ty.name.clone(), ty);
            (e, writes, StorageChange::None)
        }
        SchemaChange::DropType { keyspace, name } => {
            // Cassandra's DropTypeStatement: the same message whether the keyspace or the
            // type is missing.
            let missing =
                || ReplicaError::NotFound(format!("Type '{keyspace}.{name}' doesn't exist"));
            let ks = match keyspace_mut(keyspaces, &keyspace) {
                Err(ReplicaError::NotFound(_)) => return Err(missing()),
                other => other?,
            };
            if !ks.types.contains_key(&name) {
                return Err(missing());
            }
            // A type in use by another type or by a table stays: dropping it would leave a
            // definition naming a type that is gone (and a schema that cannot be read back).
            let types: Vec<&str> = ks
                .types
                .values()
                .filter(|t| {
                    t.name != name
                        && t.fields
                            .iter()
                            .any(|(_, ty)| ty.mentions_udt(&keyspace, &name))
                })
                .map(|t| t.name.as_str())
                .collect();
            if !types.is_empty() {
                return Err(ReplicaError::Invalid(format!(
                    "Cannot drop user type '{keyspace}.{name}' as it is still used by user types {}",
                    types.join(", ")
                )));
            }
            let tables: Vec<&str> = ks
                .tables
                .values()
                .filter(|t| {
                    t.def
                        .columns
                        .iter()
                        .any(|c| c.ty.mentions_udt(&keyspace, &name))
                })
                .map(|t| t.def.name.as_str())
                .collect();
            if !tables.is_empty() {
                return Err(ReplicaError::Invalid(format!(
                    "Cannot drop user type '{keyspace}.{name}' as it is still used by tables {}",
                    tables.join(", ")
                )));
            }
            ks.types.remove(&name);
            (
                event(Dropped, Type, &keyspace, &name),
                schema_tables::type_drop(&keyspace, &name, ts, now)?,
                StorageChange::None,
            )
        }
        SchemaChange::CreateIndex {
            keyspace,
            table,
            index: new,
        } => {
            let ks = keyspace_mut(keyspaces, &keyspace)?;
            index::check_name(&table, &new.name)?;
            if ks
                .tables
                .values()
                .any(|t| t.indexes.iter().any(|i| i.name == new.name))
            {
                return Err(ReplicaError::AlreadyExists {
                    what: format!("Index '{}'", new.name),
                    keyspace: keyspace.clone(),
                    table: table.clone(),
                });
            }
            let Some(old) = ks.tables.get(&table) else {
                return Err(ReplicaError::NotFound(format!(
                    "Table '{table}' doesn't exist"
                )));
            };
            index::indexed_column(&old.def, &new)?;
            if let Some(same) = old
                .indexes
                .iter()
                .find(|i| i.target == new.target && i.custom == new.custom)
            {
                return Err(ReplicaError::Invalid(format!(
                    "Index {} is a duplicate of existing index {}",
                    new.name, same.name
                )));
            }
            let mut next = TableSchema::clone(old);
            next.indexes.push(new.clone());
            let writes = schema_tables::table_writes(&next, ts, now)?;
            let next = Arc::new(next);
            ks.tables.insert(table.clone(), next.clone());
            (
                event(Updated, Table, &keyspace, &table),
                writes,
                StorageChange::CreateIndex(next, new),
            )
        }
        SchemaChange::DropIndex { keyspace, name } => {
            let not_found =
                || ReplicaError::NotFound(format!("Index '{keyspace}.{name}' doesn't exist'"));
            let ks = keyspace_mut(keyspaces, &keyspace).map_err(|_| not_found())?;
            let Some(old) = ks
                .tables
                .values()
                .find(|t| t.indexes.iter().any(|i| i.name == name))
                .cloned()
            else {
                return Err(not_found());
            };
            let mut next = TableSchema::clone(&old);
            next.indexes.retain(|i| i.name != name);
            let writes = schema_tables::table_writes(&next, ts, now)?;
            let table = next.def.name.clone();
            ks.tables.insert(table.clone(), Arc::new(next));
            let storage = old
                .indexes
                .iter()
                .filter(|i| i.name == name && i.has_storage(&old.def))
                .map(|_| index::index_table_id(old.def.id, &name))
                .collect();
            (
                event(Updated, Table, &keyspace, &table),
                writes,
                StorageChange::Drop(storage),
            )
        }
    })
}

/// Give every use of the user type `keyspace.name` inside `ty` the fields `fields`.
fn replace_type(
    ty: &mut khata_types::schema::CqlType,
    keyspace: &str,
    name: &str,
    new_fields: &[(String, khata_types::schema::CqlType)],
) {
    use khata_types::schema::CqlType;
    match ty {
        CqlType::Udt {
            keyspace: k,
            name: n,
            fields,
            ..
        } => {
            if k == keyspace && n == name {
                *fields = new_fields.to_vec();
            } else {
                for (_, t) in fields {
                    replace_type(t, keyspace, name, new_fields);
                }
            }
        }
        CqlType::List { element, .. }
        | CqlType::Set { element, .. }
        | CqlType::Vector { element, .. } => replace_type(element, keyspace, name, new_fields),
        CqlType::Map { key, value, .. } => {
            replace_type(key, keyspace, name, new_fields);
            replace_type(value, keyspace, name, new_fields);
        }
        CqlType::Tuple(elements) => {
            for t in elements {
                replace_type(t, keyspace, name, new_fields);
            }
        }
        _ => {}
    }
}

/// Column ids are hashes of names: two names of one table must not share one.
fn check_column_ids(def: &TableDef) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for c in &def.columns {
        if let Some(other) = seen.insert(c.id, &c.name) {
            return Err(ReplicaError::Invalid(format!(
                "columns {other} and {} cannot be in one table (their ids collide); rename one",
                c.name
            )));
        }
    }
    Ok(())
}

fn spec_of(def: &TableDef) -> TableSpec {
    TableSpec {
        id: def.id,
        keyspace: def.keyspace.clone(),
        name: def.name.clone(),
        options: def.options.clone(),
    }
}

/// Every row of a table (small system tables only).
/// The primary token ranges of a node owning `tokens`, each `(start, end]` with its share of
/// the ring; the range that wraps is split at the minimum token (`(last, MIN]` and
/// `(MIN, first]`), as Cassandra normalizes ranges.
fn primary_ranges(tokens: &[Token]) -> Vec<(i64, i64, f64)> {
    let mut sorted: Vec<i64> = tokens.iter().map(|t| t.0).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let ring = 2f64.powi(64);
    let share = |start: i64, end: i64| (end as i128 - start as i128) as f64 / ring;
    let (Some(&first), Some(&last)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(sorted.len() + 1);
    if first != i64::MIN {
        out.push((i64::MIN, first, share(i64::MIN, first)));
    }
    for pair in sorted.windows(2) {
        out.push((pair[0], pair[1], share(pair[0], pair[1])));
    }
    // `(last, MIN]`: from the last token to the end of the ring.
    out.push((
        last,
        i64::MIN,
        (i64::MAX as i128 - last as i128 + 1) as f64 / ring,
    ));
    out
}

fn read_all(engine: &Engine, def: &TableDef, now: LocalTime) -> Result<Vec<crate::rows::ReadRow>> {
    let mut out = Vec::new();
    scan_all(engine, def.id, now, |key, partition| {
        out.extend(read_rows(def, key, partition, now)?);
        Ok(())
    })?;
    Ok(out)
}

/// Every partition of table `id`, in token order, page by page.
fn scan_all(
    engine: &Engine,
    id: Uuid,
    now: LocalTime,
    mut each: impl FnMut(&DecoratedKey, &khata_types::partition::Partition) -> Result<()>,
) -> Result<()> {
    let mut resume: Option<ScanPosition> = None;
    loop {
        let page = engine.scan(
            id,
            Bound::Unbounded,
            Bound::Unbounded,
            resume.as_ref(),
            10_000,
            now,
        )?;
        for (key, partition) in &page.partitions {
            each(key, partition)?;
        }
        match page.resume {
            Some(r) => resume = Some(r),
            None => return Ok(()),
        }
    }
}

fn read_schema_rows(engine: &Engine, now: LocalTime) -> Result<StoredRows> {
    let mut stored = StoredRows::new();
    for def in schema_tables::schema_table_defs() {
        stored.insert(def.name.clone(), read_all(engine, &def, now)?);
    }
    Ok(stored)
}

fn read_identity(engine: &Engine, now: LocalTime) -> Result<Option<(Uuid, Vec<Token>)>> {
    let rows = read_all(engine, &system_tables::local(), now)?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let Some(host_id) = row.uuid_opt("host_id")? else {
        return Ok(None);
    };
    let tokens = row
        .texts("tokens")?
        .iter()
        .map(|t| {
            t.parse::<i64>()
                .map(Token)
                .map_err(|_| ReplicaError::CorruptSchema(format!("token {t}")))
        })
        .collect::<Result<Vec<_>>>()?;
    if tokens.is_empty() {
        return Ok(None);
    }
    Ok(Some((host_id, tokens)))
}
