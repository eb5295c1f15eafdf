//! Every key read from YAML: the 4.1 names, the pre-4.1 names, the aliases, and Cassandra's
//! `seed_provider` block.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use khata_server::{CommitLogSync, Config, Seed};

fn parse(yaml: &str) -> Config {
    Config::from_yaml_str(yaml, "test.yaml").unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn every_key_by_its_41_name() {
    let c = parse(
        r#"
cluster_name: Ledger
data_dir: /srv/khata
listen_address: 127.0.0.2
native_transport_port: 19042
dynamo_port: 18000
storage_port: 17000
admin_port: 17070
seeds: "127.0.0.1, 127.0.0.3:7001"
dc: dc-east
rack: r2
num_tokens: 8
commitlog_sync: group
commitlog_sync_period: 2s
commitlog_sync_group_window: 15ms
commitlog_segment_size: 64MiB
memtable_heap_space: 1GiB
memtable_flush_size: 128MiB
file_cache_size: 0MiB
compaction_throughput: 16MiB/s
concurrent_compactors: 4
gc_grace_seconds: 3600
tombstone_warn_threshold: 500
tombstone_failure_threshold: 5000
batch_size_warn_threshold: 10KiB
batch_size_fail_threshold: 1MiB
native_transport_max_frame_size: 32MiB
native_transport_max_concurrent_connections: 1000
request_timeout: 20s
read_request_timeout: 500ms
write_request_timeout: 1s
range_request_timeout: 1m
cas_contention_timeout: 100ms
max_hint_window: 1d
ttl_scan_period_seconds: 5
"#,
    );
    assert_eq!(c.cluster_name, "Ledger");
    assert_eq!(c.data_dir, PathBuf::from("/srv/khata"));
    assert_eq!(c.commitlog_dir(), PathBuf::from("/srv/khata/commitlog"));
    assert_eq!(c.listen_address, ip("127.0.0.2"));
    assert_eq!(c.native_transport_port, 19042);
    assert_eq!(c.dynamo_port, 18000);
    assert_eq!(c.storage_port, 17000);
    assert_eq!(c.admin_port, 17070);
    assert_eq!(
        c.seeds,
        vec![
            Seed {
                address: ip("127.0.0.1"),
                port: None
            },
            Seed {
                address: ip("127.0.0.3"),
                port: Some(7001)
            },
        ]
    );
    assert_eq!(
        c.seed_addresses(),
        vec![
            "127.0.0.1:17000".parse().unwrap(),
            "127.0.0.3:7001".parse().unwrap()
        ]
    );
    assert_eq!(c.dc, "dc-east");
    assert_eq!(c.rack, "r2");
    assert_eq!(c.num_tokens, 8);
    assert_eq!(c.commitlog_sync, CommitLogSync::Group);
    assert_eq!(c.commitlog_sync_period, Duration::from_secs(2));
    assert_eq!(c.commitlog_sync_group_window, Duration::from_millis(15));
    assert_eq!(c.commitlog_segment_size_bytes, 64 << 20);
    assert_eq!(c.memtable_heap_space_bytes, 1 << 30);
    assert_eq!(c.memtable_flush_size_bytes, 128 << 20);
    assert_eq!(c.file_cache_size_bytes, 0);
    assert_eq!(c.compaction_throughput_bytes_per_second, 16 << 20);
    assert_eq!(c.concurrent_compactors, 4);
    assert_eq!(c.gc_grace_seconds, 3600);
    assert_eq!(c.tombstone_warn_threshold, 500);
    assert_eq!(c.tombstone_failure_threshold, 5000);
    assert_eq!(c.batch_size_warn_threshold_bytes, 10 << 10);
    assert_eq!(c.batch_size_fail_threshold_bytes, 1 << 20);
    assert_eq!(c.native_transport_max_frame_size_bytes, 32 << 20);
    assert_eq!(c.native_transport_max_concurrent_connections, Some(1000));
    assert_eq!(c.request_timeout, Duration::from_secs(20));
    assert_eq!(c.read_request_timeout, Duration::from_millis(500));
    assert_eq!(c.write_request_timeout, Duration::from_secs(1));
    assert_eq!(c.range_request_timeout, Duration::from_secs(60));
    assert_eq!(c.cas_contention_timeout, Duration::from_millis(100));
    assert_eq!(c.max_hint_window, Duration::from_secs(86_400));
    assert_eq!(c.ttl_scan_period_seconds, 5);
}

#[test]
fn pre_41_names_take_bare_numbers_in_their_unit() {
    let c = parse(
        r#"
commitlog_sync: group
commitlog_sync_period_in_ms: 2500
commitlog_sync_group_window_in_ms: 2.5
commitlog_segment_size_in_mb: 16
memtable_heap_space_in_mb: 512
file_cache_size_in_mb: 64
compaction_throughput_mb_per_sec: 0
batch_size_warn_threshold_in_kb: 8
batch_size_fail_threshold_in_kb: 80
native_transport_max_frame_size_in_mb: 8
request_timeout_in_ms: 11000
read_request_timeout_in_ms: 6000
write_request_timeout_in_ms: 3000
range_request_timeout_in_ms: 12000
cas_contention_timeout_in_ms: 1800
max_hint_window_in_ms: 10800000
"#,
    );
    assert_eq!(c.commitlog_sync_period, Duration::from_millis(2500));
    // Math.round(2.5) = 3.
    assert_eq!(c.commitlog_sync_group_window, Duration::from_millis(3));
    assert_eq!(c.commitlog_segment_size_bytes, 16 << 20);
    assert_eq!(c.memtable_heap_space_bytes, 512 << 20);
    assert_eq!(c.file_cache_size_bytes, 64 << 20);
    assert_eq!(c.compaction_throughput_bytes_per_second, 0);
    assert_eq!(c.batch_size_warn_threshold_bytes, 8 << 10);
    assert_eq!(c.batch_size_fail_threshold_bytes, 80 << 10);
    assert_eq!(c.native_transport_max_frame_size_bytes, 8 << 20);
    assert_eq!(c.request_timeout, Duration::from_millis(11_000));
    assert_eq!(c.read_request_timeout, Duration::from_millis(6000));
    assert_eq!(c.write_request_timeout, Duration::from_millis(3000));
    assert_eq!(c.range_request_timeout, Duration::from_millis(12_000));
    assert_eq!(c.cas_contention_timeout, Duration::from_millis(1800));
    assert_eq!(c.max_hint_window, Duration::from_secs(3 * 3600));
}

#[test]
fn aliases_matching_the_flags() {
    let c = parse("cql_port: 9043\ninternode_port: 7001\n");
    assert_eq!(c.native_transport_port, 9043);
    assert_eq!(c.storage_port, 7001);
}

#[test]
fn cassandras_seed_provider_block() {
    let c = parse(
        r#"
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:7000,127.0.0.2:7000"
"#,
    );
    assert_eq!(
        c.seed_addresses(),
        vec![
            "127.0.0.1:7000".parse().unwrap(),
            "127.0.0.2:7000".parse().unwrap()
        ]
    );
    let err = Config::from_yaml_str(
        "seed_provider:\n  - class_name: com.example.K8sSeedProvider\n    parameters:\n      - seeds: \"127.0.0.1\"\n",
        "t",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("seed_provider") && err.contains("SimpleSeedProvider"),
        "{err}"
    );
}

#[test]
fn seeds_as_a_list_or_blank() {
    let c = parse("seeds: [127.0.0.1, '[::1]:7002']\n");
    assert_eq!(
        c.seed_addresses(),
        vec![
            "127.0.0.1:7000".parse().unwrap(),
            "[::1]:7002".parse().unwrap()
        ]
    );
    assert!(parse("seeds:\n").seeds.is_empty());
    assert!(parse("seeds: ''\n").seeds.is_empty());
}

#[test]
fn string_settings_take_any_scalar_as_snakeyaml_does() {
    let c = parse("cluster_name: 123\ndc: true\n");
    assert_eq!(c.cluster_name, "123");
    assert_eq!(c.dc, "true");
}

#[test]
fn ipv6_listen_address() {
    assert_eq!(parse("listen_address: '::1'\n").listen_address, ip("::1"));
}

#[test]
fn unlimited_connections_is_any_value_up_to_zero() {
    for text in ["-1", "0", "-5"] {
        let c = parse(&format!(
            "native_transport_max_concurrent_connections: {text}\n"
        ));
        assert_eq!(
            c.native_transport_max_concurrent_connections, None,
            "{text}"
        );
    }
}

#[test]
fn empty_file_is_the_defaults() {
    assert_eq!(parse(""), Config::default());
    assert_eq!(parse("# nothing but a comment\n"), Config::default());
}
