//! Cassandra 4.1's unit syntax as settings see it: valid values in every unit, invalid values
//! refused with Cassandra's message naming the key and the value, and the pre-4.1 `_in_ms`
//! style names.

use std::time::Duration;

use khata_server::{Config, ConfigError};

fn set(yaml: &str) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    config.apply_yaml_str(yaml, "test.yaml")?;
    Ok(config)
}

fn refused(yaml: &str) -> String {
    match set(yaml) {
        Ok(c) => panic!("{yaml:?} was accepted: {c:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn durations() {
    for (text, expected) in [
        ("10s", Duration::from_secs(10)),
        ("10000ms", Duration::from_secs(10)),
        ("1h", Duration::from_secs(3600)),
        ("2m", Duration::from_secs(120)),
        ("1d", Duration::from_secs(86_400)),
        ("0ms", Duration::ZERO),
    ] {
        let c = set(&format!("commitlog_sync_period: {text}")).unwrap();
        assert_eq!(c.commitlog_sync_period, expected, "{text}");
    }
    let c = set("read_request_timeout: \"750ms\"").unwrap();
    assert_eq!(c.read_request_timeout, Duration::from_millis(750));
}

#[test]
fn durations_refused() {
    for text in [
        "10000", "10 s", "10S", "-1s", "1.5s", "10sec", "ten", "10m30s",
    ] {
        let err = refused(&format!("commitlog_sync_period: {text}"));
        assert_eq!(
            err,
            format!(
                "test.yaml: invalid value `{text}` for `commitlog_sync_period`: Invalid \
                 duration: {text} Accepted units:[MILLISECONDS, SECONDS, MINUTES, HOURS, DAYS] \
                 where case matters and only non-negative values."
            )
        );
    }
    let err = refused("max_hint_window: 500us");
    assert!(
        err.contains("`500us` for `max_hint_window`")
            && err.contains("Accepted units:[MILLISECONDS"),
        "{err}"
    );
    // max_hint_window is an int of milliseconds in Cassandra: 25 days do not fit.
    let err = refused("max_hint_window: 25d");
    assert!(
        err.contains("It shouldn't be more than 2147483646 in milliseconds"),
        "{err}"
    );
    // Timeouts are longs of milliseconds: 25 days fit.
    assert_eq!(
        set("read_request_timeout: 25d")
            .unwrap()
            .read_request_timeout,
        Duration::from_secs(25 * 86_400)
    );
}

#[test]
fn data_sizes() {
    let c = set(
        "native_transport_max_frame_size: 16MiB\nbatch_size_warn_threshold: 5KiB\n\
                 memtable_heap_space: 2GiB\nbatch_size_fail_threshold: 1MiB",
    )
    .unwrap();
    assert_eq!(c.native_transport_max_frame_size_bytes, 16 << 20);
    assert_eq!(c.batch_size_warn_threshold_bytes, 5 << 10);
    assert_eq!(c.memtable_heap_space_bytes, 2 << 30);
    assert_eq!(c.batch_size_fail_threshold_bytes, 1 << 20);
}

#[test]
fn data_sizes_refused() {
    for text in ["16", "16MB", "16mb", "16mib", "16 MiB", "1.5MiB", "-16MiB"] {
        let err = refused(&format!("native_transport_max_frame_size: {text}"));
        assert_eq!(
            err,
            format!(
                "test.yaml: invalid value `{text}` for `native_transport_max_frame_size`: \
                 Invalid data storage: {text} Accepted units:[MEBIBYTES, GIBIBYTES] where case \
                 matters and only non-negative values are accepted"
            )
        );
    }
    // Below the setting's smallest unit.
    let err = refused("memtable_heap_space: 1024KiB");
    assert!(
        err.ends_with("Invalid data storage: 1024KiB Accepted units:[MEBIBYTES, GIBIBYTES]"),
        "{err}"
    );
    let err = refused("batch_size_warn_threshold: 5000B");
    assert!(
        err.contains("Accepted units:[KIBIBYTES, MEBIBYTES, GIBIBYTES]"),
        "{err}"
    );
    // Cassandra's own limits for frames and segments.
    assert!(refused("native_transport_max_frame_size: 2GiB").contains("smaller than 2048MiB"));
    assert!(refused("commitlog_segment_size: 0MiB").contains("must be positive"));
}

#[test]
fn data_rates() {
    for (text, expected) in [
        ("64MiB/s", 64u64 << 20),
        ("512KiB/s", 512 << 10),
        ("1000B/s", 1000),
        ("0MiB/s", 0),
    ] {
        let c = set(&format!("compaction_throughput: {text}")).unwrap();
        assert_eq!(c.compaction_throughput_bytes_per_second, expected, "{text}");
    }
    for text in ["64", "64MiB", "64MB/s", "64mib/s", "64 MiB/s", "64MiB/sec"] {
        let err = refused(&format!("compaction_throughput: {text}"));
        assert_eq!(
            err,
            format!(
                "test.yaml: invalid value `{text}` for `compaction_throughput`: Invalid data \
                 rate: {text} Accepted units: MiB/s, KiB/s, B/s where case matters and only \
                 non-negative values are valid"
            )
        );
    }
}

#[test]
fn old_names_take_numbers_not_units() {
    let c = set("commitlog_sync_period_in_ms: 10000").unwrap();
    assert_eq!(c.commitlog_sync_period, Duration::from_secs(10));
    let c = set("compaction_throughput_mb_per_sec: 64").unwrap();
    assert_eq!(c.compaction_throughput_bytes_per_second, 64 << 20);

    let err = refused("commitlog_sync_period_in_ms: 10s");
    assert!(
        err.contains("`10s` for `commitlog_sync_period_in_ms`")
            && err.contains("expected an integer"),
        "{err}"
    );
    let err = refused("read_request_timeout_in_ms: -1");
    assert!(
        err.ends_with("Invalid duration: value must be non-negative"),
        "{err}"
    );
    let err = refused("batch_size_warn_threshold_in_kb: -5");
    assert!(
        err.ends_with("Invalid data storage: value must be non-negative"),
        "{err}"
    );
    let err = refused("compaction_throughput_mb_per_sec: -1");
    assert!(
        err.ends_with("Invalid data rate: value must be non-negative"),
        "{err}"
    );
    // Java ints: past 2^31-1 is not a number Cassandra can read for an int setting.
    let err = refused("max_hint_window_in_ms: 3000000000");
    assert!(err.contains("between -2147483648 and 2147483647"), "{err}");
    // A long of milliseconds takes it.
    let c = set("write_request_timeout_in_ms: 3000000000").unwrap();
    assert_eq!(
        c.write_request_timeout,
        Duration::from_millis(3_000_000_000)
    );
}

#[test]
fn group_window_in_ms_is_a_rounded_double() {
    for (text, ms) in [("0.4", 0), ("0.5", 1), ("1.49", 1), ("2", 2), (".nan", 0)] {
        let c = set(&format!("commitlog_sync_group_window_in_ms: {text}")).unwrap();
        assert_eq!(
            c.commitlog_sync_group_window,
            Duration::from_millis(ms),
            "{text}"
        );
    }
    assert!(refused("commitlog_sync_group_window_in_ms: -0.6").contains("non-negative"));
    assert!(refused("commitlog_sync_group_window_in_ms: 1ms").contains("expected a number"));
}
