//! RocksDB under the same workloads: one column family per table, keys `partition ++ row`
//! (big-endian), WAL on, LZ4, a block cache and memtable of the same sizes as khata's defaults.

use std::path::PathBuf;

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DB, IteratorMode, Options, WriteOptions,
};

use crate::workloads::{BenchEngine, Params};

pub struct RocksEngine {
    db: DB,
}

fn key(partition: u64, row: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&partition.to_be_bytes());
    k[8..].copy_from_slice(&row.to_be_bytes());
    k
}

impl RocksEngine {
    pub fn new(p: &Params) -> Self {
        let dir = PathBuf::from(&p.dir).join("rocksdb");
        let _ = std::fs::remove_dir_all(&dir);
        let cache = Cache::new_lru_cache(128 << 20).expect("block cache");
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&cache);
        table.set_bloom_filter(10.0, false);
        let mut cf = Options::default();
        cf.set_compression_type(rocksdb::DBCompressionType::Lz4);
        cf.set_write_buffer_size(64 << 20);
        cf.set_block_based_table_factory(&table);
        let mut db_opts = Options::default();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        let cfs = ["main", "wide", "durable"].map(|n| ColumnFamilyDescriptor::new(n, cf.clone()));
        let db = DB::open_cf_descriptors(&db_opts, &dir, cfs).expect("open rocksdb");
        RocksEngine { db }
    }
}

impl BenchEngine for RocksEngine {
    fn put(&self, table: &str, partition: u64, row: u64, value: &[u8]) {
        let cf = self.db.cf_handle(table).expect("cf");
        self.db.put_cf(cf, key(partition, row), value).expect("put");
    }

    fn get(&self, table: &str, partition: u64, row: u64) -> bool {
        let cf = self.db.cf_handle(table).expect("cf");
        self.db
            .get_pinned_cf(cf, key(partition, row))
            .expect("get")
            .is_some()
    }

    fn newest(&self, table: &str, partition: u64, n: usize) -> usize {
        let cf = self.db.cf_handle(table).expect("cf");
        let mut opts = rocksdb::ReadOptions::default();
        opts.set_iterate_lower_bound(key(partition, 0).to_vec());
        opts.set_iterate_upper_bound(key(partition + 1, 0).to_vec());
        let it = self.db.iterator_cf_opt(cf, opts, IteratorMode::End);
        it.take(n).filter(|r| r.is_ok()).count()
    }

    fn put_durable(&self, partition: u64, row: u64, value: &[u8]) {
        let cf = self.db.cf_handle("durable").expect("cf");
        let mut w = WriteOptions::default();
        w.set_sync(true);
        self.db
            .put_cf_opt(cf, key(partition, row), value, &w)
            .expect("put");
    }

    fn compact(&self, table: &str) {
        let cf = self.db.cf_handle(table).expect("cf");
        self.db.flush_cf(cf).expect("flush");
        self.db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
    }
}
