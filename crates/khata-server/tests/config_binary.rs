//! The `khata` binary: configuration checked, errors reported with exit codes.

use std::process::{Command, Output};

fn khata(args: &[&str], check_config: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_khata"));
    command.args(args).env_remove("RUST_LOG");
    if check_config {
        command.env("KHATA_CHECK_CONFIG", "1");
    } else {
        command.env_remove("KHATA_CHECK_CONFIG");
    }
    command.output().expect("run khata")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn check_config_exits_zero() {
    let out = khata(&["server", "--cql-port", "9043"], true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("configuration valid"),
        "{}",
        stderr(&out)
    );
    // No arguments at all is `server`.
    let out = khata(&[], true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn debug_logging_prints_the_effective_config() {
    let out = Command::new(env!("CARGO_BIN_EXE_khata"))
        .args(["server", "--set", "num_tokens=7"])
        .env("KHATA_CHECK_CONFIG", "1")
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("effective configuration") && err.contains("num_tokens: 7"),
        "{err}"
    );
}

#[test]
fn without_check_config_the_node_is_not_there_yet() {
    let out = khata(&["server"], false);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("khata server: node startup lands in the next commit"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_configuration_exits_one_naming_the_key() {
    let out = khata(&["server", "--set", "commitlog_sync_period=10"], true);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("commitlog_sync_period") && err.contains("`10`"),
        "{err}"
    );
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    let out = khata(&["server", "--listen-address", "localhost"], true);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not an IP address"),
        "{}",
        stderr(&out)
    );
}
