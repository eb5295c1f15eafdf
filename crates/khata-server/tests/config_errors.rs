//! Refused configurations: every error names where the value came from, the key, and the value.

use std::path::PathBuf;

use khata_server::cli::ServerArgs;
use khata_server::{Config, ConfigError, load_config};

fn error(yaml: &str) -> ConfigError {
    match Config::from_yaml_str(yaml, "khata.yaml") {
        Ok(c) => panic!("{yaml:?} was accepted: {c:?}"),
        Err(e) => e,
    }
}

#[test]
fn unknown_key_is_named_with_a_hint() {
    let err = error("cluster_name: a\ncomitlog_sync: batch\n");
    assert!(
        matches!(&err, ConfigError::UnknownKey { key, suggestion: Some(s), .. }
            if key == "comitlog_sync" && s == "commitlog_sync"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "khata.yaml: unknown configuration key `comitlog_sync` (did you mean `commitlog_sync`?)"
    );
    // A Cassandra key khata does not have.
    assert_eq!(
        error("partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n").to_string(),
        "khata.yaml: unknown configuration key `partitioner`"
    );
    // A key that is not a string.
    assert!(matches!(error("42: x\n"), ConfigError::UnknownKey { key, .. } if key == "42"));
}

#[test]
fn bad_value_names_key_and_value() {
    let err = error("num_tokens: many\n");
    assert_eq!(
        err.to_string(),
        "khata.yaml: invalid value `many` for `num_tokens`: expected an integer, found a string"
    );
    let cases = [
        ("num_tokens: 0", "num_tokens", "0", "between 1 and 1536"),
        (
            "num_tokens: 1537",
            "num_tokens",
            "1537",
            "between 1 and 1536",
        ),
        (
            "commitlog_sync: fast",
            "commitlog_sync",
            "fast",
            "periodic, group or batch",
        ),
        (
            "commitlog_sync: PERIODIC",
            "commitlog_sync",
            "PERIODIC",
            "periodic, group or batch",
        ),
        (
            "native_transport_port: 70000",
            "native_transport_port",
            "70000",
            "between 0 and 65535",
        ),
        (
            "listen_address: localhost",
            "listen_address",
            "localhost",
            "not an IP address",
        ),
        (
            "listen_address: 0.0.0.0",
            "listen_address",
            "0.0.0.0",
            "wildcard",
        ),
        ("listen_address: '::'", "listen_address", "::", "wildcard"),
        (
            "seeds: 'node1,node2'",
            "seeds",
            "node1,node2",
            "not IP or IP:port",
        ),
        (
            "seeds: '127.0.0.1:99999'",
            "seeds",
            "127.0.0.1:99999",
            "not IP or IP:port",
        ),
        ("cluster_name: ''", "cluster_name", "", "must not be empty"),
        (
            "dc: [a, b]",
            "dc",
            "- a - b",
            "expected a string, found a list",
        ),
        ("num_tokens:", "num_tokens", "null", "found no value"),
        (
            "gc_grace_seconds: -1",
            "gc_grace_seconds",
            "-1",
            "between 0 and 2147483647",
        ),
        (
            "tombstone_failure_threshold: 1.5",
            "tombstone_failure_threshold",
            "1.5",
            "integer",
        ),
        (
            "ttl_scan_period_seconds: 0",
            "ttl_scan_period_seconds",
            "0",
            "between 1 and",
        ),
        (
            "concurrent_compactors: 0",
            "concurrent_compactors",
            "0",
            "between 1 and",
        ),
        (
            "memtable_heap_space: 0MiB",
            "memtable_heap_space",
            "0MiB",
            "must be positive",
        ),
        (
            "memtable_flush_size: 0MiB",
            "memtable_flush_size",
            "0MiB",
            "must be positive",
        ),
    ];
    for (yaml, key, value, reason) in cases {
        match error(yaml) {
            ConfigError::InvalidValue {
                origin,
                key: k,
                value: v,
                reason: r,
            } => {
                assert_eq!(origin, "khata.yaml", "{yaml}");
                assert_eq!(k, key, "{yaml}");
                assert_eq!(v, value, "{yaml}");
                assert!(r.contains(reason), "{yaml}: {r}");
            }
            other => panic!("{yaml}: {other:?}"),
        }
    }
}

#[test]
fn two_names_of_one_setting_are_refused() {
    let err = error("commitlog_sync_period: 10s\ncommitlog_sync_period_in_ms: 5000\n");
    assert_eq!(
        err.to_string(),
        "khata.yaml: `commitlog_sync_period` and `commitlog_sync_period_in_ms` are the same \
         setting; set only one of them"
    );
    assert!(matches!(
        error("native_transport_port: 9042\ncql_port: 9043\n"),
        ConfigError::DuplicateSetting { .. }
    ));
    assert!(matches!(
        error("seeds: 127.0.0.1\nseed_provider: []\n"),
        ConfigError::DuplicateSetting { .. }
    ));
}

#[test]
fn malformed_documents() {
    assert!(matches!(
        error("num_tokens: [1\n"),
        ConfigError::Yaml { .. }
    ));
    assert!(matches!(
        error("num_tokens: 1\nnum_tokens: 2\n"),
        ConfigError::Yaml { .. }
    ));
    let err = error("- num_tokens\n- 16\n");
    assert!(matches!(err, ConfigError::NotAMapping { .. }), "{err:?}");
    assert!(matches!(
        error("just a string\n"),
        ConfigError::NotAMapping { .. }
    ));
}

#[test]
fn settings_that_contradict_each_other() {
    let cases = [
        (
            "dynamo_port: 9042",
            "native_transport_port and dynamo_port are both 9042",
        ),
        (
            "admin_port: 7000",
            "storage_port and admin_port are both 7000",
        ),
        (
            "commitlog_sync: group\ncommitlog_sync_group_window: 0ms",
            "commitlog_sync_group_window is 0ms",
        ),
        ("commitlog_sync_period: 0ms", "commitlog_sync_period is 0ms"),
        (
            "memtable_heap_space: 32MiB\nmemtable_flush_size: 64MiB",
            "memtable_flush_size (64MiB) is larger than memtable_heap_space (32MiB)",
        ),
        ("write_request_timeout: 5ms", "write_request_timeout is 5ms"),
    ];
    for (yaml, reason) in cases {
        match error(yaml) {
            ConfigError::Inconsistent(r) => assert!(r.contains(reason), "{yaml}: {r}"),
            other => panic!("{yaml}: {other:?}"),
        }
    }
    // Zero ports (OS-chosen) do not clash, and a zero period is fine outside periodic mode.
    Config::from_yaml_str(
        "native_transport_port: 0\ndynamo_port: 0\nstorage_port: 0\nadmin_port: 0\n\
         commitlog_sync: batch\ncommitlog_sync_period: 0ms\ncommitlog_sync_group_window: 0ms\n",
        "t",
    )
    .unwrap();
}

#[test]
fn missing_config_file() {
    let args = ServerArgs {
        config: Some(PathBuf::from("/nonexistent/khata.yaml")),
        ..ServerArgs::default()
    };
    let err = load_config(&args).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/khata.yaml"), "{err}");
}
