//! What `khata admin` prints: the admin API's answers laid out as `nodetool` lays out the
//! same facts, so an operator's eyes (and scripts written for nodetool's layout) carry over.
//! Sizes in `status` and `info` are human (`81.18 KiB`, as nodetool's `FileUtils`); in
//! `tablestats` they are bytes, as nodetool prints them without `-H`.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::api::{
    CompactionStats, CompactionThroughput, Info, NodeStatus, Status, TableStatsReport, TpStats,
    TraceProbability,
};

/// `khata admin status`: per data center, one line per node.
pub fn status(status: &Status) -> String {
    let mut by_dc: BTreeMap<&str, Vec<&NodeStatus>> = BTreeMap::new();
    for node in &status.nodes {
        by_dc.entry(&node.data_center).or_default().push(node);
    }
    let mut out = String::new();
    for (dc, nodes) in by_dc {
        let title = format!("Datacenter: {dc}");
        let _ = writeln!(out, "{title}");
        let _ = writeln!(out, "{}", "=".repeat(title.len()));
        let _ = writeln!(out, "Status=Up/Down");
        let _ = writeln!(out, "|/ State=Normal/Leaving/Joining/Moving");
        let mut rows = vec![[
            "--".to_owned(),
            "Address".to_owned(),
            "Load".to_owned(),
            "Tokens".to_owned(),
            "Host ID".to_owned(),
            "Rack".to_owned(),
        ]];
        for n in nodes {
            rows.push([
                format!("{}{}", if n.up { 'U' } else { 'D' }, n.state.letter()),
                n.address.to_string(),
                human_bytes(n.load_bytes),
                n.tokens.to_string(),
                n.host_id.to_string(),
                n.rack.clone(),
            ]);
        }
        write_columns(&mut out, &rows);
    }
    out
}

/// Rows as left-aligned columns two spaces apart (the last column unpadded).
fn write_columns<const N: usize>(out: &mut String, rows: &[[String; N]]) {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<width$}  ", width = widths[i]);
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// `khata admin info`: `Name : value` lines, as `nodetool info`.
pub fn info(info: &Info) -> String {
    let c = &info.commitlog;
    let commitlog = match c.sync.as_str() {
        "periodic" => format!("periodic, fsync every {} ms", c.sync_period_ms),
        "group" => format!("group, fsync window {} ms", c.sync_group_window_ms),
        other => other.to_owned(),
    };
    let lines: Vec<(&str, String)> = vec![
        ("ID", info.host_id.to_string()),
        ("Cluster Name", info.cluster_name.clone()),
        (
            "Release Version",
            format!("{} (khata {})", info.release_version, info.khata_version),
        ),
        (
            "Native Transport",
            format!(
                "{} ({} connections)",
                info.native_transport_address, info.cql_connections
            ),
        ),
        ("Load", human_bytes(info.load_bytes)),
        ("Uptime (seconds)", info.uptime_seconds.to_string()),
        (
            "Resident Memory",
            info.resident_memory_bytes
                .map_or_else(|| "unknown".to_owned(), human_bytes),
        ),
        (
            "Memtables",
            format!(
                "{} used of {}",
                human_bytes(info.memtable_bytes),
                human_bytes(info.memtable_space_bytes)
            ),
        ),
        (
            "Block Cache",
            format!(
                "{} used of {}",
                human_bytes(info.block_cache_bytes),
                human_bytes(info.block_cache_capacity_bytes)
            ),
        ),
        (
            "Compactions",
            format!(
                "{} pending, {} completed",
                info.pending_compactions, info.compactions_completed
            ),
        ),
        (
            "Commit Log",
            format!(
                "{commitlog}, segments of {}",
                human_bytes(c.segment_size_bytes)
            ),
        ),
        ("Data Center", info.data_center.clone()),
        ("Rack", info.rack.clone()),
        ("Schema Version", info.schema_version.to_string()),
        ("Data Directory", info.data_dir.clone()),
        ("Tokens", info.tokens.to_string()),
    ];
    let width = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (key, value) in lines {
        let _ = writeln!(out, "{key:<width$} : {value}");
    }
    out
}

/// `khata admin compactionstats`: pending compactions per table, then the running ones in
/// columns with their progress and the time the bytes left take at `compaction_throughput`,
/// as `nodetool compactionstats` prints them.
pub fn compactionstats(stats: &CompactionStats) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pending tasks: {}", stats.pending_tasks);
    for p in &stats.pending {
        let _ = writeln!(out, "- {}.{}: {}", p.keyspace, p.table, p.tasks);
    }
    if stats.running.is_empty() {
        return out;
    }
    let _ = writeln!(out);
    let mut rows = vec![[
        "id".to_string(),
        "compaction type".to_string(),
        "keyspace".to_string(),
        "table".to_string(),
        "completed".to_string(),
        "total".to_string(),
        "unit".to_string(),
        "progress".to_string(),
    ]];
    for r in &stats.running {
        let progress = if r.total == 0 {
            "n/a".to_string()
        } else {
            format!("{:.2}%", r.completed as f64 * 100.0 / r.total as f64)
        };
        let mut kind = r.kind.clone();
        if let Some(first) = kind.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        rows.push([
            r.id.to_string(),
            kind,
            r.keyspace.clone(),
            r.table.clone(),
            r.completed.to_string(),
            r.total.to_string(),
            r.unit.clone(),
            progress,
        ]);
    }
    let widths: Vec<usize> = (0..8)
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join(" ").trim_end());
    }
    let remaining: u64 = stats
        .running
        .iter()
        .map(|r| r.total.saturating_sub(r.completed))
        .sum();
    let remaining_time = match remaining.checked_div(stats.throughput_bytes_per_second) {
        None => "n/a".to_string(),
        Some(seconds) => format!(
            "{}h{:02}m{:02}s",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        ),
    };
    let _ = writeln!(
        out,
        "{:>25}{remaining_time:>10}",
        "Active compaction remaining time : "
    );
    out
}

/// `khata admin tpstats`: one line per pool, as `nodetool tpstats` prints them.
pub fn tpstats(stats: &TpStats) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<30}{:>10}{:>10}{:>15}{:>10}{:>18}",
        "Pool Name", "Active", "Pending", "Completed", "Blocked", "All time blocked"
    );
    for p in &stats.pools {
        let _ = writeln!(
            out,
            "{:<30}{:>10}{:>10}{:>15}{:>10}{:>18}",
            p.name, p.active, p.pending, p.completed, p.blocked, p.blocked_all_time
        );
    }
    out
}

/// `khata admin getcompactionthroughput`, as nodetool prints it.
pub fn compactionthroughput(throughput: &CompactionThroughput) -> String {
    format!(
        "Current compaction throughput: {}\n",
        rate(throughput.bytes_per_second)
    )
}

/// `khata admin gettraceprobability`, as nodetool prints it.
pub fn traceprobability(p: &TraceProbability) -> String {
    format!("Current trace probability: {:?}\n", p.probability)
}

/// A rate as `khata.yaml` writes it (the largest unit that holds it exactly), with the
/// space nodetool puts before the unit: `64 MiB/s`.
fn rate(bytes_per_second: u64) -> String {
    if bytes_per_second == 0 {
        return "0 MiB/s (unthrottled)".to_string();
    }
    let text = crate::config::units::format_rate(bytes_per_second);
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    format!("{} {}", &text[..digits], &text[digits..])
}

/// `khata admin tablestats`: per keyspace, then per table, as `nodetool tablestats`.
pub fn tablestats(report: &TableStatsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Total number of tables: {}", report.tables.len());
    let _ = writeln!(out, "----------------");
    let mut keyspace: Option<&str> = None;
    for t in &report.tables {
        if keyspace != Some(t.keyspace.as_str()) {
            if keyspace.is_some() {
                let _ = writeln!(out, "----------------");
            }
            keyspace = Some(&t.keyspace);
            let _ = writeln!(out, "Keyspace : {}", t.keyspace);
        }
        let _ = writeln!(out, "\t\tTable: {}", t.table);
        let _ = writeln!(out, "\t\tSSTable count: {}", t.sstable_count);
        if t.sstables_per_level.len() > 1 {
            let _ = writeln!(
                out,
                "\t\tSSTables in each level: {:?}",
                t.sstables_per_level
            );
        }
        let _ = writeln!(out, "\t\tSpace used (live): {}", t.space_used_bytes);
        let _ = writeln!(
            out,
            "\t\tNumber of partitions (estimate): {}",
            t.partitions_estimate
        );
        let _ = writeln!(out, "\t\tMemtable data size: {}", t.memtable_bytes);
        let _ = writeln!(out, "\t\tMemtable partitions: {}", t.memtable_partitions);
        let _ = writeln!(out, "\t\tTombstones: {}", t.tombstones);
        let _ = writeln!(out, "\t\tPending compactions: {}", t.pending_compactions);
        let mean = |l: &super::api::LatencySummary| match l.mean_ms {
            Some(ms) => format!("{ms:.3} ms"),
            None => "NaN ms".to_string(),
        };
        let _ = writeln!(out, "\t\tLocal read count: {}", t.local_read.count);
        let _ = writeln!(out, "\t\tLocal read latency: {}", mean(&t.local_read));
        let _ = writeln!(out, "\t\tLocal write count: {}", t.local_write.count);
        let _ = writeln!(out, "\t\tLocal write latency: {}", mean(&t.local_write));
        let _ = writeln!(out, "\t\tLocal range count: {}", t.local_scan.count);
        let _ = writeln!(out, "\t\tLocal range latency: {}", mean(&t.local_scan));
        let average = |c: &super::api::CountSummary| match c.mean {
            Some(mean) => format!("{mean:.1}"),
            None => "NaN".to_string(),
        };
        let recent = "(last one to two minutes)";
        let _ = writeln!(
            out,
            "\t\tAverage live cells per slice {recent}: {}",
            average(&t.rows_per_read)
        );
        let _ = writeln!(
            out,
            "\t\tMaximum live cells per slice {recent}: {}",
            t.rows_per_read.max
        );
        let _ = writeln!(
            out,
            "\t\tAverage tombstones per slice {recent}: {}",
            average(&t.tombstones_per_read)
        );
        let _ = writeln!(
            out,
            "\t\tMaximum tombstones per slice {recent}: {}",
            t.tombstones_per_read.max
        );
        if t.partition_reads > 0 {
            let per_read = t.sstables_read as f64 / t.partition_reads as f64;
            let _ = writeln!(out, "\t\tAverage SSTables per read: {per_read:.2}");
        }
        match t.largest_partitions.iter().map(|p| p.size_bytes).max() {
            Some(max) => {
                let _ = writeln!(out, "\t\tLargest partition size: {max}");
                let _ = writeln!(out, "\t\tLargest partitions:");
                for p in &t.largest_partitions {
                    let _ = writeln!(out, "\t\t\t0x{}: {}", p.key_hex, p.size_bytes);
                }
            }
            None => {
                let _ = writeln!(out, "\t\tLargest partition size: 0");
            }
        }
        let _ = writeln!(out);
    }
    if keyspace.is_some() {
        let _ = writeln!(out, "----------------");
    }
    out
}

/// A size as nodetool prints it: `512 bytes`, `81.18 KiB`, `1.50 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::super::api::{LargePartition, LatencySummary, NodeState, TableStats};
    use super::*;
    use uuid::Uuid;

    #[test]
    fn sizes_read_as_nodetool_prints_them() {
        assert_eq!(human_bytes(0), "0 bytes");
        assert_eq!(human_bytes(1023), "1023 bytes");
        assert_eq!(human_bytes(83_128), "81.18 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024 * 1024 / 2), "1.50 GiB");
    }

    #[test]
    fn status_is_a_table_per_data_center() {
        let host = Uuid::from_u128(0x2f3a);
        let text = status(&Status {
            cluster_name: "Test Cluster".into(),
            nodes: vec![NodeStatus {
                address: "127.0.0.1".parse().unwrap(),
                up: true,
                state: NodeState::Normal,
                host_id: host,
                data_center: "datacenter1".into(),
                rack: "rack1".into(),
                tokens: 16,
                load_bytes: 83_128,
                schema_version: Uuid::nil(),
            }],
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Datacenter: datacenter1");
        assert_eq!(lines[1], "=======================");
        assert!(lines[4].starts_with("--  Address    Load       Tokens  Host ID"));
        assert_eq!(
            lines[5],
            format!("UN  127.0.0.1  81.18 KiB  16      {host}  rack1")
        );
    }

    #[test]
    fn compactionstats_lists_pending_and_running() {
        use super::super::api::{PendingCompactions, RunningCompaction};
        let idle = compactionstats(&CompactionStats {
            throughput_bytes_per_second: 64 << 20,
            pending_tasks: 0,
            pending: Vec::new(),
            running: Vec::new(),
        });
        assert_eq!(idle, "pending tasks: 0\n");
        let busy = compactionstats(&CompactionStats {
            throughput_bytes_per_second: 100,
            pending_tasks: 2,
            pending: vec![PendingCompactions {
                keyspace: "chat".into(),
                table: "messages".into(),
                tasks: 2,
            }],
            running: vec![RunningCompaction {
                id: uuid::Uuid::nil(),
                kind: "compaction".into(),
                keyspace: "chat".into(),
                table: "messages".into(),
                completed: 250,
                total: 1000,
                unit: "bytes".into(),
            }],
        });
        assert_eq!(
            busy,
            "pending tasks: 2\n- chat.messages: 2\n\n\
             id                                   compaction type keyspace table    completed \
             total unit  progress\n\
             00000000-0000-0000-0000-000000000000 Compaction      chat     messages 250       \
             1000  bytes 25.00%\n\
             Active compaction remaining time :   0h00m07s\n"
        );
    }

    #[test]
    fn tpstats_in_nodetools_columns() {
        use super::super::api::PoolStats;
        let text = tpstats(&TpStats {
            pools: vec![PoolStats {
                name: "CompactionExecutor".into(),
                active: 1,
                active_limit: Some(2),
                pending: 3,
                completed: 45,
                blocked: 0,
                blocked_all_time: 0,
            }],
        });
        assert_eq!(
            text,
            "Pool Name                         Active   Pending      Completed   Blocked  All time blocked\n\
             CompactionExecutor                     1         3             45         0                 0\n"
        );
    }

    #[test]
    fn trace_probability_as_nodetool_prints_it() {
        let say = |probability| traceprobability(&TraceProbability { probability });
        assert_eq!(say(0.0), "Current trace probability: 0.0\n");
        assert_eq!(say(0.25), "Current trace probability: 0.25\n");
        assert_eq!(say(1.0), "Current trace probability: 1.0\n");
    }

    #[test]
    fn compaction_throughput_in_the_largest_exact_unit() {
        let say =
            |bytes_per_second| compactionthroughput(&CompactionThroughput { bytes_per_second });
        assert_eq!(say(64 << 20), "Current compaction throughput: 64 MiB/s\n");
        assert_eq!(say(512 << 10), "Current compaction throughput: 512 KiB/s\n");
        assert_eq!(say(1000), "Current compaction throughput: 1000 B/s\n");
        assert_eq!(
            say(0),
            "Current compaction throughput: 0 MiB/s (unthrottled)\n"
        );
    }

    #[test]
    fn tablestats_groups_tables_by_keyspace() {
        let table = |ks: &str, name: &str| TableStats {
            keyspace: ks.into(),
            table: name.into(),
            id: Uuid::nil(),
            sstable_count: 1,
            sstables_per_level: vec![1],
            space_used_bytes: 5120,
            partitions_estimate: 3,
            memtable_bytes: 0,
            memtable_partitions: 0,
            tombstones: 2,
            pending_compactions: 0,
            partition_reads: 8,
            sstables_read: 6,
            largest_partitions: vec![LargePartition {
                key_hex: "00000007".into(),
                size_bytes: 4000,
            }],
            local_read: LatencySummary {
                count: 8,
                mean_ms: Some(0.1234),
                p50_ms: 0.103,
                p99_ms: 0.179,
                max_ms: 0.2,
                per_second: 0.5,
            },
            local_write: LatencySummary::default(),
            local_scan: LatencySummary::default(),
            rows_per_read: super::super::api::CountSummary {
                count: 8,
                mean: Some(9.0),
                p50: 10,
                p99: 10,
                max: 9,
            },
            tombstones_per_read: Default::default(),
        };
        let text = tablestats(&TableStatsReport {
            tables: vec![table("a", "t1"), table("a", "t2"), table("b", "t3")],
        });
        assert!(text.starts_with("Total number of tables: 3\n"));
        assert_eq!(text.matches("Keyspace : a\n").count(), 1);
        assert_eq!(text.matches("Keyspace : b\n").count(), 1);
        assert!(text.contains("\t\tTable: t2\n\t\tSSTable count: 1\n"));
        assert!(text.contains("\t\tSpace used (live): 5120\n"));
        assert!(text.contains("\t\t\t0x00000007: 4000\n"));
        assert!(text.contains(
            "\t\tLocal read count: 8\n\t\tLocal read latency: 0.123 ms\n\
             \t\tLocal write count: 0\n\t\tLocal write latency: NaN ms\n"
        ));
        assert!(text.contains(
            "\t\tAverage live cells per slice (last one to two minutes): 9.0\n\
             \t\tMaximum live cells per slice (last one to two minutes): 9\n\
             \t\tAverage tombstones per slice (last one to two minutes): NaN\n"
        ));
    }
}
