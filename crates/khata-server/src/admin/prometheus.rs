//! `/metrics` in the Prometheus text exposition format (version 0.0.4): `# HELP` and
//! `# TYPE` before each family, one sample per line, label values escaped, histograms as
//! cumulative `_bucket{le=...}` series with `_sum` and `_count`.
//!
//! The families (every name starts `khata_`, except the conventional `process_` one):
//!
//! - `khata_requests_total{op, result}`: coordinator requests (`op` = read | range | write,
//!   `result` = ok | unavailable | timeout | error).
//! - `khata_request_latency_seconds{op}`: their latency, a histogram.
//! - `khata_tombstones_scanned_total`: tombstones met by reads.
//! - `khata_pending_compactions`, `khata_compactions_completed_total`.
//! - `khata_memtable_bytes`, `khata_block_cache_bytes`, `khata_live_data_bytes`,
//!   `process_resident_memory_bytes`.
//! - `khata_cql_connections`, `khata_uptime_seconds`, `khata_build_info{version,
//!   release_version}`.
//! - `khata_table_latency_seconds{keyspace, table, op, quantile}`: a summary per table and
//!   `op` (`local_read`, `local_write`, `local_scan`: the engine's; `coordinator_read`,
//!   `coordinator_write`, `coordinator_scan`: whole requests), with the median and 99th
//!   percentile of the last minute or two, and `_sum` and `_count` since the node started
//!   (only the ops a table has seen).
//! - Per table (`keyspace`, `table` labels): `khata_table_sstables`,
//!   `khata_table_live_data_bytes`, `khata_table_partitions_estimate`,
//!   `khata_table_memtable_bytes`, `khata_table_tombstones`,
//!   `khata_table_pending_compactions`, the counters `khata_table_partition_reads_total`
//!   and `khata_table_sstables_read_total` (their ratio is Cassandra's "SSTables per
//!   read"), and `khata_table_largest_partition_bytes` (the
//!   largest partition's size, as Cassandra's `MaxPartitionSize`; the keys of the largest
//!   partitions are in `/tablestats`, since a key as a label would make a series per key).
//!
//! Written by hand rather than with a metrics crate: the values already live in the
//! coordinator's atomics and the engine's statistics, so all that is needed is the text.

use std::fmt::Write;

use khata_coordinator::metrics::{LATENCY_BUCKETS_MICROS, MetricsSnapshot};
use khata_types::latency::LatencySnapshot;

/// The `Content-Type` of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Everything `/metrics` shows, gathered by the handler.
#[derive(Debug)]
pub struct MetricsInput<'a> {
    pub coordinator: MetricsSnapshot,
    /// (keyspace, table, statistics), in keyspace then table order.
    pub tables: Vec<(&'a str, &'a str, &'a khata_storage::TableStats)>,
    /// (keyspace, table, op, latencies) of the ops each table has seen, in keyspace, table
    /// then op order.
    pub table_latencies: Vec<(&'a str, &'a str, &'static str, LatencySnapshot)>,
    pub memtable_bytes: u64,
    pub block_cache_bytes: u64,
    pub compactions_completed: u64,
    pub cql_connections: usize,
    pub uptime_seconds: f64,
    pub resident_memory_bytes: Option<u64>,
    pub khata_version: &'a str,
    pub release_version: &'a str,
}

/// The text of `/metrics`.
pub fn render(input: &MetricsInput<'_>) -> String {
    let mut out = Text::default();
    let c = &input.coordinator;

    out.family(
        "khata_requests_total",
        "counter",
        "Requests the coordinator served, by operation and result.",
    );
    for (op, outcome, n) in &c.requests {
        out.sample(
            "khata_requests_total",
            &[("op", op.name()), ("result", outcome.name())],
            *n as f64,
        );
    }

    out.family(
        "khata_request_latency_seconds",
        "histogram",
        "Latency of coordinator requests, by operation.",
    );
    for (op, h) in &c.latency {
        for (i, cumulative) in h.cumulative.iter().enumerate() {
            let le = match LATENCY_BUCKETS_MICROS.get(i) {
                Some(micros) => format_value(*micros as f64 / 1e6),
                None => "+Inf".to_owned(),
            };
            out.sample(
                "khata_request_latency_seconds_bucket",
                &[("op", op.name()), ("le", &le)],
                *cumulative as f64,
            );
        }
        out.sample(
            "khata_request_latency_seconds_sum",
            &[("op", op.name())],
            h.sum_micros as f64 / 1e6,
        );
        out.sample(
            "khata_request_latency_seconds_count",
            &[("op", op.name())],
            h.count as f64,
        );
    }

    let tables = &input.tables;
    let gauges: [(&str, &str, &str, f64); 6] = [
        (
            "khata_tombstones_scanned_total",
            "counter",
            "Tombstones met by reads through the coordinator.",
            c.tombstones_scanned as f64,
        ),
        (
            "khata_pending_compactions",
            "gauge",
            "Tables with a compaction waiting to run.",
            tables
                .iter()
                .map(|(_, _, s)| s.pending_compactions)
                .sum::<usize>() as f64,
        ),
        (
            "khata_compactions_completed_total",
            "counter",
            "Compactions completed since the node started.",
            input.compactions_completed as f64,
        ),
        (
            "khata_memtable_bytes",
            "gauge",
            "Bytes in memtables, active and being flushed.",
            input.memtable_bytes as f64,
        ),
        (
            "khata_block_cache_bytes",
            "gauge",
            "Bytes in the SSTable block cache.",
            input.block_cache_bytes as f64,
        ),
        (
            "khata_live_data_bytes",
            "gauge",
            "Bytes of live SSTable data (the node's load).",
            tables
                .iter()
                .map(|(_, _, s)| s.live_data_bytes)
                .sum::<u64>() as f64,
        ),
    ];
    for (name, kind, help, value) in gauges {
        out.family(name, kind, help);
        out.sample(name, &[], value);
    }
    out.family("khata_cql_connections", "gauge", "Open CQL connections.");
    out.sample("khata_cql_connections", &[], input.cql_connections as f64);
    out.family(
        "khata_uptime_seconds",
        "gauge",
        "Seconds since the node started.",
    );
    out.sample("khata_uptime_seconds", &[], input.uptime_seconds);
    out.family(
        "khata_build_info",
        "gauge",
        "khata's version and the Cassandra release version it reports.",
    );
    out.sample(
        "khata_build_info",
        &[
            ("version", input.khata_version),
            ("release_version", input.release_version),
        ],
        1.0,
    );
    if let Some(rss) = input.resident_memory_bytes {
        out.family(
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
        );
        out.sample("process_resident_memory_bytes", &[], rss as f64);
    }

    out.family(
        "khata_table_latency_seconds",
        "summary",
        "Latency per table and operation: quantiles of the last minute or two, sum and count since start.",
    );
    for (keyspace, table, op, l) in &input.table_latencies {
        let labels = [("keyspace", *keyspace), ("table", *table), ("op", *op)];
        for (q, name) in [(0.5, "0.5"), (0.99, "0.99")] {
            let mut with_q = labels.to_vec();
            with_q.push(("quantile", name));
            out.sample(
                "khata_table_latency_seconds",
                &with_q,
                l.quantile_micros(q) as f64 / 1e6,
            );
        }
        out.sample(
            "khata_table_latency_seconds_sum",
            &labels,
            l.total_sum_micros as f64 / 1e6,
        );
        out.sample("khata_table_latency_seconds_count", &labels, l.count as f64);
    }

    type PerTable = fn(&khata_storage::TableStats) -> f64;
    let per_table: [(&str, &str, PerTable); 9] = [
        ("khata_table_sstables", "Live SSTables.", |s| {
            s.sstable_count as f64
        }),
        (
            "khata_table_partition_reads_total",
            "Partition reads since the node started.",
            |s| s.partition_reads as f64,
        ),
        (
            "khata_table_sstables_read_total",
            "SSTables those reads read (divided by the reads: SSTables per read).",
            |s| s.sstables_read as f64,
        ),
        (
            "khata_table_live_data_bytes",
            "Bytes of live SSTable data.",
            |s| s.live_data_bytes as f64,
        ),
        (
            "khata_table_partitions_estimate",
            "Partitions summed over SSTables.",
            |s| s.partitions_estimate as f64,
        ),
        (
            "khata_table_memtable_bytes",
            "Bytes in the table's memtables.",
            |s| s.memtable_bytes as f64,
        ),
        (
            "khata_table_tombstones",
            "Tombstones in the table's SSTables.",
            |s| s.tombstones as f64,
        ),
        (
            "khata_table_pending_compactions",
            "Compactions waiting to run.",
            |s| s.pending_compactions as f64,
        ),
        (
            "khata_table_largest_partition_bytes",
            "Size of the table's largest partition in one SSTable (0 when it has none).",
            |s| {
                s.largest_partitions
                    .iter()
                    .map(|(_, size)| *size)
                    .max()
                    .unwrap_or(0) as f64
            },
        ),
    ];
    for (name, help, value) in per_table {
        let kind = if name.ends_with("_total") {
            "counter"
        } else {
            "gauge"
        };
        out.family(name, kind, help);
        for (keyspace, table, stats) in tables {
            out.sample(
                name,
                &[("keyspace", keyspace), ("table", table)],
                value(stats),
            );
        }
    }
    out.0
}

/// The text being written.
#[derive(Default)]
struct Text(String);

impl Text {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (label, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{label}=\"{}\"", escape_label(v));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {}", format_value(value));
    }
}

/// A sample value: integers without a fraction, `+Inf`/`-Inf`/`NaN` as Prometheus spells them.
fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        // Rust's shortest round-trip form: `1`, `0.00025`, `1e-7`; Prometheus reads each.
        format!("{v}")
    }
}

/// Label values escape backslash, double quote and newline.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// HELP text escapes backslash and newline.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use khata_coordinator::metrics::{CoordinatorMetrics, Op, Outcome};
    use std::time::Duration;

    fn input<'a>(
        metrics: &CoordinatorMetrics,
        tables: Vec<(&'a str, &'a str, &'a khata_storage::TableStats)>,
    ) -> MetricsInput<'a> {
        MetricsInput {
            coordinator: metrics.snapshot(),
            tables,
            table_latencies: Vec::new(),
            memtable_bytes: 10,
            block_cache_bytes: 20,
            compactions_completed: 3,
            cql_connections: 2,
            uptime_seconds: 1.5,
            resident_memory_bytes: Some(4096),
            khata_version: "0.1.0",
            release_version: "4.1.0",
        }
    }

    #[test]
    fn histograms_are_cumulative_with_inf_equal_to_count() {
        let m = CoordinatorMetrics::default();
        m.record(Op::Read, Outcome::Ok, Duration::from_micros(300));
        m.record(Op::Read, Outcome::Timeout, Duration::from_secs(20));
        let text = render(&input(&m, Vec::new()));
        assert!(text.contains("khata_requests_total{op=\"read\",result=\"ok\"} 1\n"));
        assert!(text.contains("khata_requests_total{op=\"read\",result=\"timeout\"} 1\n"));
        assert!(
            text.contains("khata_request_latency_seconds_bucket{op=\"read\",le=\"0.00025\"} 0\n")
        );
        assert!(
            text.contains("khata_request_latency_seconds_bucket{op=\"read\",le=\"0.0005\"} 1\n")
        );
        assert!(text.contains("khata_request_latency_seconds_bucket{op=\"read\",le=\"10\"} 1\n"));
        assert!(text.contains("khata_request_latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 2\n"));
        assert!(text.contains("khata_request_latency_seconds_count{op=\"read\"} 2\n"));
        assert!(text.contains("khata_request_latency_seconds_sum{op=\"read\"} 20.0003\n"));
        assert!(text.contains("# TYPE khata_request_latency_seconds histogram\n"));
    }

    #[test]
    fn per_table_series_carry_escaped_labels() {
        let m = CoordinatorMetrics::default();
        let stats = khata_storage::TableStats {
            sstable_count: 2,
            largest_partitions: vec![(b"k".to_vec().into(), 700)],
            ..Default::default()
        };
        let text = render(&input(&m, vec![("ks", "we\"ird\\", &stats)]));
        assert!(
            text.contains("khata_table_sstables{keyspace=\"ks\",table=\"we\\\"ird\\\\\"} 2\n"),
            "{text}"
        );
        assert!(text.contains(
            "khata_table_largest_partition_bytes{keyspace=\"ks\",table=\"we\\\"ird\\\\\"} 700\n"
        ));
        assert!(text.contains("process_resident_memory_bytes 4096\n"));
        assert!(text.contains("khata_build_info{version=\"0.1.0\",release_version=\"4.1.0\"} 1\n"));
    }

    #[test]
    fn table_latencies_are_summaries() {
        let m = CoordinatorMetrics::default();
        let h = khata_types::latency::LatencyHistogram::default();
        h.record(Duration::from_micros(100), 0);
        h.record(Duration::from_micros(300), 0);
        let mut with = input(&m, Vec::new());
        with.table_latencies = vec![("ks", "t", "local_read", h.snapshot(0))];
        let text = render(&with);
        assert!(text.contains("# TYPE khata_table_latency_seconds summary\n"));
        let series = "keyspace=\"ks\",table=\"t\",op=\"local_read\"";
        for line in [
            format!("khata_table_latency_seconds{{{series},quantile=\"0.5\"}} 0.000103\n"),
            format!("khata_table_latency_seconds{{{series},quantile=\"0.99\"}} 0.0003\n"),
            format!("khata_table_latency_seconds_sum{{{series}}} 0.0004\n"),
            format!("khata_table_latency_seconds_count{{{series}}} 2\n"),
        ] {
            assert!(text.contains(&line), "{line} in {text}");
        }
    }
}
