//! The defaults: Cassandra 4.1's values, the shipped `khata.yaml` says the same, and the
//! effective configuration written back as YAML reads back to itself.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use khata_server::cli::{Cli, Command, ServerArgs};
use khata_server::{CommitLogSync, Config, load_config};

const SHIPPED: &str = include_str!("../khata.yaml");

#[test]
fn defaults_are_cassandras() {
    let c = Config::default();
    assert_eq!(c.cluster_name, "Test Cluster");
    assert_eq!(c.data_dir, PathBuf::from("./khata-data"));
    assert_eq!(c.commitlog_dir(), PathBuf::from("./khata-data/commitlog"));
    assert_eq!(c.listen_address, IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_eq!(c.native_transport_port, 9042);
    assert_eq!(c.dynamo_port, 8000);
    assert_eq!(c.storage_port, 7000);
    assert_eq!(c.admin_port, 7070);
    assert!(c.seeds.is_empty());
    assert_eq!(c.dc, "datacenter1");
    assert_eq!(c.rack, "rack1");
    assert_eq!(c.num_tokens, 16);
    assert_eq!(c.default_keyspace_rf, 1);
    assert_eq!(c.commitlog_sync, CommitLogSync::Periodic);
    assert_eq!(c.commitlog_sync_period, Duration::from_secs(10));
    assert_eq!(c.commitlog_sync_group_window, Duration::from_millis(1));
    assert_eq!(c.commitlog_segment_size_bytes, 32 << 20);
    assert_eq!(c.memtable_heap_space_bytes, 256 << 20);
    assert_eq!(c.memtable_flush_size_bytes, 64 << 20);
    assert_eq!(c.file_cache_size_bytes, 128 << 20);
    assert_eq!(c.compaction_throughput_bytes_per_second, 64 << 20);
    assert_eq!(c.concurrent_compactors, 2);
    assert_eq!(c.gc_grace_seconds, 864_000);
    assert_eq!(c.tombstone_warn_threshold, 1000);
    assert_eq!(c.tombstone_failure_threshold, 100_000);
    assert_eq!(c.batch_size_warn_threshold_bytes, 5 << 10);
    assert_eq!(c.batch_size_fail_threshold_bytes, 50 << 10);
    assert_eq!(c.native_transport_max_frame_size_bytes, 16 << 20);
    assert_eq!(c.native_transport_max_concurrent_connections, None);
    assert_eq!(c.request_timeout, Duration::from_millis(10_000));
    assert_eq!(c.read_request_timeout, Duration::from_millis(5000));
    assert_eq!(c.write_request_timeout, Duration::from_millis(2000));
    assert_eq!(c.range_request_timeout, Duration::from_millis(10_000));
    assert_eq!(c.cas_contention_timeout, Duration::from_millis(1000));
    assert_eq!(c.max_hint_window, Duration::from_secs(3 * 3600));
    assert_eq!(c.ttl_scan_period_seconds, 60);
    c.validate().expect("the defaults are valid");
    assert_eq!(c.cql_address().to_string(), "127.0.0.1:9042");
    assert_eq!(c.dynamo_address().to_string(), "127.0.0.1:8000");
    assert_eq!(c.internode_address().to_string(), "127.0.0.1:7000");
    assert_eq!(c.admin_address().to_string(), "127.0.0.1:7070");
}

#[test]
fn shipped_khata_yaml_is_the_defaults() {
    let parsed = Config::from_yaml_str(SHIPPED, "khata.yaml").expect("khata.yaml parses");
    assert_eq!(parsed, Config::default());
}

#[test]
fn shipped_khata_yaml_documents_every_key_in_order() {
    let document: serde_norway::Mapping = serde_norway::from_str(SHIPPED).unwrap();
    let in_file: Vec<&str> = document.keys().map(|k| k.as_str().unwrap()).collect();
    let known: Vec<&str> = Config::key_names().collect();
    assert_eq!(in_file, known);
}

#[test]
fn no_arguments_is_server_with_the_defaults() {
    let cli = Cli::try_parse_from(["khata"]).unwrap();
    let Command::Server(args) = cli.into_command() else {
        panic!("khata with no arguments must be khata server");
    };
    assert_eq!(args, ServerArgs::default());
    assert_eq!(load_config(&args).unwrap(), Config::default());

    let cli = Cli::try_parse_from(["khata", "server"]).unwrap();
    assert_eq!(cli.into_command(), Command::Server(ServerArgs::default()));
}

#[test]
fn effective_config_as_yaml_reads_back() {
    let defaults = Config::default();
    let text = defaults.to_yaml();
    assert_eq!(Config::from_yaml_str(&text, "to_yaml").unwrap(), defaults);
    assert!(text.contains("commitlog_sync_period: 10s"), "{text}");
    assert!(text.contains("compaction_throughput: 64MiB/s"), "{text}");

    let mut changed = Config::default();
    changed
        .apply_yaml_str(
            "seeds: '127.0.0.2,[::1]:7001'\ncommitlog_sync: group\n\
         commitlog_sync_group_window: 1500ms\nfile_cache_size: 0MiB\n\
         compaction_throughput: 1000B/s\nnative_transport_max_concurrent_connections: 50\n\
         batch_size_warn_threshold: 1025KiB\ndata_dir: /var/lib/khata data\n",
            "test",
        )
        .unwrap();
    changed.validate().unwrap();
    let text = changed.to_yaml();
    assert_eq!(
        Config::from_yaml_str(&text, "to_yaml").unwrap(),
        changed,
        "{text}"
    );
}
