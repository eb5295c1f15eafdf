//! The table options khata reports as given (`TableOptions::reported`: bloom filter chance,
//! caching, speculative retry, the compaction and compression maps, ...) are written to
//! `system_schema.tables` and read back on restart (a map Cassandra keeps, with the thresholds
//! it adds to every strategy, must load).

use std::collections::BTreeMap;

use khata_replica::{Replica, SchemaChange, TableSchema};
use khata_types::schema::{
    ColumnKind, CompactionStrategy, CqlType, ReportedOptions, TableDef, TableOptions,
};
use khata_types::token::Token;
use uuid::Uuid;

mod support;
use support::{column, keyspace};

fn open(dir: &std::path::Path, host: Uuid) -> Replica {
    support::open(dir, host, vec![Token(-5), Token(7)])
}

#[test]
fn reported_options_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let host = Uuid::new_v4();
    let replica = open(dir.path(), host);
    keyspace(&replica);
    let reported = ReportedOptions {
        additional_write_policy: "20ms".into(),
        bloom_filter_fp_chance: 0.1,
        caching: BTreeMap::from([
            ("keys".to_string(), "NONE".to_string()),
            ("rows_per_partition".to_string(), "10".to_string()),
        ]),
        cdc: true,
        crc_check_chance: 0.5,
        max_index_interval: 1024,
        memtable_flush_period_in_ms: 3_600_000,
        min_index_interval: 64,
        read_repair: "NONE".into(),
        speculative_retry: "MIN(99p,50ms)".into(),
        compaction: BTreeMap::from([
            (
                "class".to_string(),
                "org.apache.cassandra.db.compaction.LeveledCompactionStrategy".to_string(),
            ),
            ("max_threshold".to_string(), "32".to_string()),
            ("min_threshold".to_string(), "4".to_string()),
            ("tombstone_threshold".to_string(), "0.3".to_string()),
        ]),
        compression: BTreeMap::from([
            ("chunk_length_in_kb".to_string(), "16".to_string()),
            (
                "class".to_string(),
                "org.apache.cassandra.io.compress.ZstdCompressor".to_string(),
            ),
        ]),
    };
    replica
        .change_schema(SchemaChange::CreateTable(TableSchema {
            def: TableDef {
                id: Uuid::new_v4(),
                keyspace: "ks".into(),
                name: "t".into(),
                columns: vec![column(
                    "k",
                    CqlType::Int,
                    ColumnKind::PartitionKey { position: 0 },
                )],
                options: TableOptions {
                    compaction: CompactionStrategy::leveled(),
                    reported: reported.clone(),
                    ..TableOptions::default()
                },
            },
            dropped: Vec::new(),
            indexes: Vec::new(),
        }))
        .unwrap();
    replica.close().unwrap();
    drop(replica);

    let replica = open(dir.path(), host);
    let schema = replica.schema();
    assert_eq!(
        schema.table("ks", "t").unwrap().def.options.reported,
        reported
    );
    replica.close().unwrap();
}
