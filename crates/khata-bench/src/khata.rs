//! khata's storage engine under the workloads.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use khata_env::{Clock, RealFs, SystemClock};
use khata_storage::commitlog::{CommitLogConfig, SyncMode};
use khata_storage::{Engine, EngineConfig, Mutation, TableSpec};
use khata_types::cell::{Cell, LivenessInfo};
use khata_types::clustering::{VALUE, full_range};
use khata_types::partition::Partition;
use khata_types::row::{CellKey, Row};
use khata_types::schema::TableOptions;
use khata_types::token::DecoratedKey;

use crate::workloads::{BenchEngine, Params};

pub struct KhataEngine {
    engine: Engine,
    durable: Engine,
    tables: HashMap<&'static str, uuid::Uuid>,
    clock: SystemClock,
}

fn pk(p: u64) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(&(p as i64).to_be_bytes()))
}

/// A bigint clustering component in the order-preserving encoding.
fn ck(r: u64) -> Bytes {
    let mut b = Vec::with_capacity(9);
    b.push(VALUE);
    b.extend_from_slice(&((r as i64 as u64) ^ (1 << 63)).to_be_bytes());
    Bytes::from(b)
}

impl KhataEngine {
    pub fn new(p: &Params) -> Self {
        let dir = PathBuf::from(&p.dir).join("khata");
        let _ = std::fs::remove_dir_all(&dir);
        let config = EngineConfig::new(dir.join("main"));
        let engine = Engine::open(Arc::new(RealFs), config).expect("open engine");
        let mut durable_config = EngineConfig::new(dir.join("durable"));
        durable_config.commitlog = CommitLogConfig {
            sync: SyncMode::Group {
                window: std::time::Duration::from_millis(1),
            },
            ..CommitLogConfig::default()
        };
        let durable = Engine::open(Arc::new(RealFs), durable_config).expect("open engine");
        let mut tables = HashMap::new();
        for name in ["main", "wide"] {
            let spec = TableSpec::new("bench", name, TableOptions::default());
            tables.insert(name, spec.id);
            engine.create_table(spec).expect("create table");
        }
        let spec = TableSpec::new("bench", "durable", TableOptions::default());
        tables.insert("durable", spec.id);
        durable.create_table(spec).expect("create table");
        KhataEngine {
            engine,
            durable,
            tables,
            clock: SystemClock,
        }
    }

    fn mutation(&self, table: &str, partition: u64, row: u64, value: &[u8]) -> Mutation {
        let ts = self.clock.now_micros();
        let mut r = Row {
            liveness: Some(LivenessInfo::new(ts, None)),
            ..Default::default()
        };
        r.cells.insert(
            CellKey::simple(1),
            Cell::live(ts, Bytes::copy_from_slice(value)),
        );
        let mut p = Partition::new();
        p.rows.insert(ck(row), r);
        Mutation::new(self.tables[table], pk(partition), p)
    }
}

impl BenchEngine for KhataEngine {
    fn put(&self, table: &str, partition: u64, row: u64, value: &[u8]) {
        self.engine
            .apply(self.mutation(table, partition, row, value))
            .expect("write");
    }

    fn get(&self, table: &str, partition: u64, row: u64) -> bool {
        let c = ck(row);
        let end = khata_types::clustering::after_prefix(&c);
        let now = self.clock.now_seconds();
        let r = self
            .engine
            .read(
                self.tables[table],
                &pk(partition),
                &[(c, end)],
                false,
                Some(1),
                now,
            )
            .expect("read");
        r.live_rows == 1
    }

    fn newest(&self, table: &str, partition: u64, n: usize) -> usize {
        let now = self.clock.now_seconds();
        let r = self
            .engine
            .read(
                self.tables[table],
                &pk(partition),
                &[full_range()],
                true,
                Some(n),
                now,
            )
            .expect("read");
        r.live_rows
    }

    fn put_durable(&self, partition: u64, row: u64, value: &[u8]) {
        self.durable
            .apply(self.mutation("durable", partition, row, value))
            .expect("write");
    }

    fn accounted_memory(&self) -> Option<(u64, u64)> {
        Some((
            self.engine.memtable_bytes() as u64,
            self.engine.block_cache_bytes(),
        ))
    }

    fn compact(&self, table: &str) {
        self.engine
            .compact_major(self.tables[table])
            .expect("compact");
    }
}
