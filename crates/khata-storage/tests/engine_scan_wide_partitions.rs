//! A range scan that meets a wide partition reads a page of it, not all of it: a page of 10
//! rows from a table holding a 20,000-row partition among small ones reads a few of the
//! SSTable's chunks where reading the partition whole reads every one, and paging through the
//! table, in the SSTable or in the memtable, returns every row exactly once, in order.

mod engine_support;

use std::ops::Bound;
use std::sync::Arc;

use engine_support::*;
use khata_env::{Clock, FileSystem, RealFs};
use khata_storage::Engine;
use uuid::Uuid;

const WIDE_KEY: u32 = 1;
const WIDE_ROWS: u32 = 20_000;
const SMALL_KEYS: [u32; 4] = [0, 2, 3, 4];
const SMALL_ROWS: u32 = 3;

fn load(engine: &Engine, table: Uuid) -> Content {
    let mut want = Content::new();
    let mut timestamp = START_MICROS;
    let mut put = |key: u32, c: u32| {
        timestamp += 1;
        let v = value(u64::from(key) << 32 | u64::from(c), 100);
        engine.apply(insert(table, key, c, &v, timestamp)).unwrap();
        want.insert((key, c), bytes::Bytes::from(v));
    };
    for c in 0..WIDE_ROWS {
        put(WIDE_KEY, c);
    }
    for key in SMALL_KEYS {
        for c in 0..SMALL_ROWS {
            put(key, c);
        }
    }
    want
}

fn chunk_reads(engine: &Engine, table: Uuid) -> u64 {
    engine
        .sstables(table)
        .unwrap()
        .iter()
        .map(|s| s.chunk_reads())
        .sum()
}

/// Pages of `page_rows` through the whole table: every live cell, and the most rows a page
/// returned; no row twice, none out of key order.
fn paged(engine: &Engine, table: Uuid, page_rows: usize, now: u32) -> (Content, usize) {
    let mut out = Content::new();
    let mut largest = 0;
    let mut last: Option<(khata_types::token::DecoratedKey, bytes::Bytes)> = None;
    scan_pages(engine, table, page_rows, now, |page| {
        let mut rows = 0;
        for (k, p) in &page.partitions {
            for (c, _) in p.live_rows(now) {
                let here = (k.clone(), c.clone());
                assert!(last.as_ref().is_none_or(|l| *l < here), "rows out of order");
                last = Some(here);
                rows += 1;
            }
            live_cells(p, pk_int(k), now, &mut out);
        }
        largest = largest.max(rows);
    })
    .unwrap();
    (out, largest)
}

#[test]
fn a_scan_reads_a_page_of_a_wide_partition_not_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let clock = manual_clock();
    let fs: Arc<dyn FileSystem> = Arc::new(RealFs);
    let engine = open(&fs, &config(dir.path(), &clock, periodic()));
    let spec = create_table(&engine, options(Default::default(), 864_000));
    let want = load(&engine, spec.id);
    let now = clock.now_seconds();

    // In the memtable.
    for page_rows in [1, 7, 1000, 50_000] {
        let (got, largest) = paged(&engine, spec.id, page_rows, now);
        assert_eq!(got, want, "memtable, pages of {page_rows}");
        assert!(
            largest <= page_rows,
            "a page of {largest} rows, limit {page_rows}"
        );
    }

    // In an SSTable.
    engine.flush(spec.id).unwrap();
    let before = chunk_reads(&engine, spec.id);
    let page = engine
        .scan(spec.id, Bound::Unbounded, Bound::Unbounded, None, 10, now)
        .unwrap();
    let limited = chunk_reads(&engine, spec.id) - before;
    assert_eq!(page.live_rows, 10);
    assert!(page.resume.is_some());

    let before = chunk_reads(&engine, spec.id);
    let (s, e) = khata_types::clustering::full_range();
    let whole = engine
        .read(spec.id, &pk(WIDE_KEY), &[(s, e)], false, None, now)
        .unwrap();
    assert_eq!(whole.live_rows, WIDE_ROWS as usize);
    let all = chunk_reads(&engine, spec.id) - before;
    assert!(
        all >= 20 && limited * 10 <= all,
        "a page of 10 rows read {limited} chunks; the wide partition whole, {all}"
    );

    for page_rows in [1, 7, 1000, 50_000] {
        let (got, largest) = paged(&engine, spec.id, page_rows, now);
        assert_eq!(got, want, "SSTable, pages of {page_rows}");
        assert!(
            largest <= page_rows,
            "a page of {largest} rows, limit {page_rows}"
        );
    }
    engine.close().unwrap();
}
