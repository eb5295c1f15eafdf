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

/// A free loopback port (bound, then released for the node to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_node_starts_serves_and_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_khata"))
        .args(["server", "--data-dir"])
        .arg(dir.path())
        .args([
            "--cql-port",
            &port.to_string(),
            "--admin-port",
            "0",
            "--dynamo-port",
            "0",
        ])
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Started when it says so (a connection to the port alone could reach another process
    // that took the port between `free_port` and the node's bind).
    let mut child = child;
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let log = log.clone();
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut pipe, &mut chunk) {
                if n == 0 {
                    break;
                }
                log.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !log.lock().unwrap().contains("node started") {
        assert!(
            std::time::Instant::now() < deadline,
            "the node did not start: {}",
            log.lock().unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::net::TcpStream::connect(("127.0.0.1", port)).expect("the node listens");
    // A second node on the same data directory is refused before it touches a file.
    let second = Command::new(env!("CARGO_BIN_EXE_khata"))
        .args(["server", "--data-dir"])
        .arg(dir.path())
        .args(["--cql-port", "0", "--admin-port", "0", "--dynamo-port", "0"])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    assert!(
        stderr(&second).contains("is in use by another khata process"),
        "{}",
        stderr(&second)
    );
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    reader.join().unwrap();
    let err = log.lock().unwrap().clone();
    assert_eq!(exit.code(), Some(0), "{err}");
    assert!(
        err.contains("node started") && err.contains("shut down cleanly"),
        "{err}"
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
