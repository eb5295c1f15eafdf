//! Layers: the defaults, then the YAML file, then `--set` in order, then the dedicated flags.

use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use khata_server::cli::{Cli, Command, ServerArgs};
use khata_server::{CommitLogSync, Config, ConfigError, load_config};

fn server_args(args: &[&str]) -> ServerArgs {
    let argv = ["khata", "server"].iter().chain(args).copied();
    match Cli::try_parse_from(argv)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_command()
    {
        Command::Server(args) => args,
        other => panic!("{other:?}"),
    }
}

fn yaml_file(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

#[test]
fn file_then_set_then_flags() {
    let file = yaml_file(
        "cluster_name: from-file\nnum_tokens: 4\nnative_transport_port: 9100\n\
         dc: dc-file\ncommitlog_sync: batch\n",
    );
    let path = file.path().to_str().unwrap();
    let args = server_args(&[
        "--config",
        path,
        "--set",
        "num_tokens=8",
        "--set",
        "native_transport_port=9200",
        "--set",
        "dc=dc-set",
        "--cql-port",
        "9300",
    ]);
    let c = load_config(&args).unwrap();
    assert_eq!(c.cluster_name, "from-file", "file beats defaults");
    assert_eq!(
        c.commitlog_sync,
        CommitLogSync::Batch,
        "file beats defaults"
    );
    assert_eq!(c.num_tokens, 8, "--set beats the file");
    assert_eq!(c.dc, "dc-set", "--set beats the file");
    assert_eq!(
        c.native_transport_port, 9300,
        "the flag beats --set and the file"
    );
}

#[test]
fn every_flag() {
    let args = server_args(&[
        "--data-dir",
        "/tmp/k",
        "--listen-address",
        "127.0.0.3",
        "--cql-port",
        "19042",
        "--dynamo-port",
        "18000",
        "--internode-port",
        "17000",
        "--admin-port",
        "17070",
        "--seeds",
        "127.0.0.1,127.0.0.2:7001",
        "--dc",
        "east",
        "--rack",
        "r9",
    ]);
    let c = load_config(&args).unwrap();
    assert_eq!(c.data_dir, PathBuf::from("/tmp/k"));
    assert_eq!(c.listen_address, "127.0.0.3".parse::<IpAddr>().unwrap());
    assert_eq!(c.native_transport_port, 19042);
    assert_eq!(c.dynamo_port, 18000);
    assert_eq!(c.storage_port, 17000);
    assert_eq!(c.admin_port, 17070);
    assert_eq!(
        c.seed_addresses(),
        vec![
            "127.0.0.1:17000".parse().unwrap(),
            "127.0.0.2:7001".parse().unwrap()
        ]
    );
    assert_eq!(c.dc, "east");
    assert_eq!(c.rack, "r9");
    // Repeated --seeds add up.
    let args = server_args(&["--seeds", "127.0.0.1", "--seeds", "127.0.0.2"]);
    assert_eq!(load_config(&args).unwrap().seeds.len(), 2);
}

#[test]
fn flags_beat_the_file() {
    let file = yaml_file("listen_address: 127.0.0.5\nseeds: 127.0.0.9\nstorage_port: 7100\n");
    let args = server_args(&[
        "--config",
        file.path().to_str().unwrap(),
        "--listen-address",
        "127.0.0.6",
        "--seeds",
        "127.0.0.7",
        "--internode-port",
        "7200",
    ]);
    let c = load_config(&args).unwrap();
    assert_eq!(c.listen_address, "127.0.0.6".parse::<IpAddr>().unwrap());
    assert_eq!(c.seed_addresses(), vec!["127.0.0.7:7200".parse().unwrap()]);
}

#[test]
fn set_uses_the_yaml_syntax() {
    let args = server_args(&[
        "--set",
        "commitlog_sync_period=2s",
        "--set",
        "compaction_throughput=16MiB/s",
        "--set",
        "memtable_heap_space_in_mb=512",
        "--set",
        "cluster_name=My Cluster",
        "--set",
        "seeds=127.0.0.1:7000,127.0.0.2",
        "--set",
        "cql_port=9999",
    ]);
    let c = load_config(&args).unwrap();
    assert_eq!(c.commitlog_sync_period, Duration::from_secs(2));
    assert_eq!(c.compaction_throughput_bytes_per_second, 16 << 20);
    assert_eq!(c.memtable_heap_space_bytes, 512 << 20);
    assert_eq!(c.cluster_name, "My Cluster");
    assert_eq!(c.seeds.len(), 2);
    assert_eq!(c.native_transport_port, 9999);
}

#[test]
fn later_set_wins_even_under_another_name() {
    let args = server_args(&[
        "--set",
        "commitlog_sync_period=2s",
        "--set",
        "commitlog_sync_period_in_ms=3000",
        "--set",
        "num_tokens=4",
        "--set",
        "num_tokens=5",
    ]);
    let c = load_config(&args).unwrap();
    assert_eq!(c.commitlog_sync_period, Duration::from_secs(3));
    assert_eq!(c.num_tokens, 5);
}

#[test]
fn set_errors_say_so() {
    let err = load_config(&server_args(&["--set", "num_tokenz=8"])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--set num_tokenz=8: unknown configuration key `num_tokenz` (did you mean `num_tokens`?)"
    );
    let err = load_config(&server_args(&["--set", "commitlog_sync_period=10"])).unwrap_err();
    assert!(
        matches!(&err, ConfigError::InvalidValue { origin, key, value, .. }
            if origin == "--set commitlog_sync_period=10" && key == "commitlog_sync_period" && value == "10"),
        "{err:?}"
    );
    // Clap refuses a --set without `=`.
    let err = Cli::try_parse_from(["khata", "server", "--set", "num_tokens"]).unwrap_err();
    assert!(err.to_string().contains("KEY=VALUE"), "{err}");
}

#[test]
fn later_layers_can_repair_earlier_ones_before_validation() {
    // The file alone is inconsistent (group mode with no window); --set fixes it.
    let file = yaml_file("commitlog_sync: group\ncommitlog_sync_group_window: 0ms\n");
    let path = file.path().to_str().unwrap();
    assert!(load_config(&server_args(&["--config", path])).is_err());
    let c = load_config(&server_args(&[
        "--config",
        path,
        "--set",
        "commitlog_sync_group_window=2ms",
    ]))
    .unwrap();
    assert_eq!(c.commitlog_sync_group_window, Duration::from_millis(2));
}

#[test]
fn flags_are_validated_with_the_rest() {
    let err = load_config(&server_args(&["--cql-port", "8000"])).unwrap_err();
    assert!(
        err.to_string()
            .contains("native_transport_port and dynamo_port are both 8000"),
        "{err}"
    );
}

#[test]
fn listen_address_must_be_an_ip() {
    for bad in [
        "localhost",
        "example.com",
        "127.0.0.1:9042",
        "0.0.0.0",
        "::",
        "",
    ] {
        let err = Cli::try_parse_from(["khata", "server", "--listen-address", bad]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("--listen-address"), "{bad}: {text}");
    }
    let err = Cli::try_parse_from(["khata", "server", "--listen-address", "localhost"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an IP address"), "{err}");
    let args = server_args(&["--listen-address", "::1"]);
    assert_eq!(
        load_config(&args).unwrap().listen_address,
        "::1".parse::<IpAddr>().unwrap()
    );
}

#[test]
fn bad_flag_values_are_refused_by_the_parser() {
    for argv in [
        &["--cql-port", "70000"][..],
        &["--cql-port", "x"],
        &["--seeds", "node1"],
        &["--dc", ""],
        &["--bogus"],
    ] {
        let full = ["khata", "server"].iter().chain(argv).copied();
        assert!(Cli::try_parse_from(full).is_err(), "{argv:?}");
    }
}

#[test]
fn config_from_yaml_equals_config_from_set() {
    // The same key=value through either layer gives the same configuration.
    let mut via_set = Config::default();
    let mut via_yaml = Config::default();
    for (key, value) in [
        ("commitlog_sync", "group"),
        ("commitlog_sync_group_window", "3ms"),
        ("max_hint_window", "90m"),
        ("batch_size_fail_threshold", "64KiB"),
        ("seeds", "'[::1]:7000'"),
    ] {
        via_set.apply_set(key, value).unwrap();
        via_yaml
            .apply_yaml_str(&format!("{key}: {value}"), "t")
            .unwrap();
    }
    assert_eq!(via_set, via_yaml);
}
