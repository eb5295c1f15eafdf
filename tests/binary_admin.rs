//! `khata admin` against a `khata server` process: status, info, flush, compact, tablestats,
//! compactionstats, tpstats, get/setcompactionthroughput and get/settraceprobability print
//! nodetool's layout and exit 0; an unknown keyspace, a bad rate or probability and an
//! unreachable node exit 1 (2 for a bad argument) with a message saying why.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port (bound, then released for the node to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `khata server` child, sent SIGTERM (and reaped) on drop if the test did not stop it.
struct Server {
    child: Option<Child>,
    admin_port: u16,
    dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let admin_port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_khata"))
            .args(["server", "--data-dir"])
            .arg(dir.path().join("data"))
            .args(["--cql-port", &free_port().to_string()])
            .args(["--admin-port", &admin_port.to_string()])
            .args(["--dynamo-port", "0"])
            .env("RUST_LOG", "info")
            .env_remove("KHATA_CHECK_CONFIG")
            .stdout(Stdio::null())
            // A file, not a pipe: nobody reads the log until the end, and a full pipe would
            // stall the node.
            .stderr(std::fs::File::create(dir.path().join("khata.log")).unwrap())
            .spawn()
            .unwrap();
        let server = Server {
            child: Some(child),
            admin_port,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", admin_port)).is_err() {
            assert!(Instant::now() < deadline, "the admin API did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn admin(&self, args: &[&str]) -> Output {
        admin_at(self.admin_port, args)
    }

    /// SIGTERM; the exit status and the log.
    fn stop(&mut self) -> (std::process::ExitStatus, String) {
        let mut child = self.child.take().expect("running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = child.wait().unwrap();
        let log = std::fs::read_to_string(self.dir.path().join("khata.log")).unwrap_or_default();
        (exit, log)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop();
        }
    }
}

fn admin_at(port: u16, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_khata"))
        .arg("admin")
        .args(["--port", &port.to_string()])
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts exit 0 and returns stdout.
fn ok(out: Output) -> String {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    stdout(&out)
}

/// The value of `name: value` in one table's block of tablestats.
fn stat(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
        .parse()
        .unwrap()
}

#[test]
fn admin_verbs_against_a_running_node() {
    let mut server = Server::start();

    let status = ok(server.admin(&["status"]));
    let lines: Vec<&str> = status.lines().collect();
    assert_eq!(lines[0], "Datacenter: datacenter1", "{status}");
    assert!(
        lines.iter().any(|l| l.starts_with("--  Address")),
        "{status}"
    );
    let node = lines
        .iter()
        .find(|l| l.starts_with("UN  127.0.0.1  "))
        .unwrap_or_else(|| panic!("no UN line in:\n{status}"));
    let fields: Vec<&str> = node.split_whitespace().collect();
    // UN, address, load (number and unit), tokens, host id, rack.
    assert_eq!(fields.len(), 7, "{node}");
    assert_eq!(fields[4], "16", "{node}");
    assert_eq!(fields[5].len(), 36, "a host id: {node}");
    assert_eq!(fields[6], "rack1", "{node}");

    let info = ok(server.admin(&["info"]));
    assert!(info.contains("Release Version  : 4.1.0"), "{info}");
    assert!(
        info.contains(&format!("ID               : {}", fields[5])),
        "{info}"
    );
    assert!(info.contains("Commit Log       : periodic"), "{info}");

    // system.local is written at start-up and flushed right after (as Cassandra does, so that
    // the commit log is not kept for it): an SSTable soon, and an empty memtable.
    let mut before = ok(server.admin(&["tablestats", "system.local"]));
    for _ in 0..100 {
        if stat(&before, "SSTable count") >= 1 && stat(&before, "Memtable data size") == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        before = ok(server.admin(&["tablestats", "system.local"]));
    }
    assert!(
        before.starts_with("Total number of tables: 1\n"),
        "{before}"
    );
    assert!(
        before.contains("Keyspace : system\n\t\tTable: local\n"),
        "{before}"
    );
    assert!(stat(&before, "SSTable count") >= 1, "{before}");
    assert_eq!(stat(&before, "Memtable data size"), 0, "{before}");

    assert_eq!(ok(server.admin(&["flush"])), "", "flush prints nothing");
    let after = ok(server.admin(&["tablestats", "system.local"]));
    assert!(stat(&after, "SSTable count") >= 1, "{after}");
    assert_eq!(stat(&after, "Memtable data size"), 0, "{after}");
    assert!(stat(&after, "Space used (live)") > 0, "{after}");
    assert!(stat(&after, "Largest partition size") > 0, "{after}");

    assert_eq!(ok(server.admin(&["compact", "system", "local"])), "");
    let all = ok(server.admin(&["tablestats"]));
    assert!(all.contains("Keyspace : system_schema\n"), "{all}");
    let compactions = ok(server.admin(&["compactionstats"]));
    assert!(compactions.starts_with("pending tasks: "), "{compactions}");

    let pools = ok(server.admin(&["tpstats"]));
    assert!(
        pools.starts_with(
            "Pool Name                         Active   Pending      Completed   Blocked  All time blocked\n"
        ),
        "{pools}"
    );
    for name in [
        "CompactionExecutor",
        "MemtableFlushWriter",
        "Native-Transport-Requests",
    ] {
        assert!(pools.contains(&format!("\n{name} ")), "{pools}");
    }

    let throughput = |server: &Server| ok(server.admin(&["getcompactionthroughput"]));
    assert_eq!(
        throughput(&server),
        "Current compaction throughput: 64 MiB/s\n"
    );
    assert_eq!(ok(server.admin(&["setcompactionthroughput", "16"])), "");
    assert_eq!(
        throughput(&server),
        "Current compaction throughput: 16 MiB/s\n"
    );
    assert_eq!(
        ok(server.admin(&["setcompactionthroughput", "512KiB/s"])),
        ""
    );
    assert_eq!(
        throughput(&server),
        "Current compaction throughput: 512 KiB/s\n"
    );
    let bad = server.admin(&["setcompactionthroughput", "fast"]);
    assert_eq!(bad.status.code(), Some(2), "clap's usage error");
    assert!(
        stderr(&bad).contains("Invalid data rate: fast"),
        "{}",
        stderr(&bad)
    );
    assert_eq!(
        throughput(&server),
        "Current compaction throughput: 512 KiB/s\n"
    );

    let probability = |server: &Server| ok(server.admin(&["gettraceprobability"]));
    assert_eq!(probability(&server), "Current trace probability: 0.0\n");
    assert_eq!(ok(server.admin(&["settraceprobability", "0.5"])), "");
    assert_eq!(probability(&server), "Current trace probability: 0.5\n");
    let bad = server.admin(&["settraceprobability", "2"]);
    assert_eq!(bad.status.code(), Some(2), "clap's usage error");
    assert!(
        stderr(&bad).contains("Trace probability must be between 0 and 1"),
        "{}",
        stderr(&bad)
    );
    assert_eq!(probability(&server), "Current trace probability: 0.5\n");

    let unknown = server.admin(&["tablestats", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("keyspace nope does not exist"),
        "{}",
        stderr(&unknown)
    );

    let (exit, log) = server.stop();
    assert_eq!(exit.code(), Some(0), "{log}");
    assert!(log.contains("shut down cleanly"), "{log}");
}

#[test]
fn an_unreachable_node_exits_one_and_says_so() {
    let port = free_port();
    let out = admin_at(port, &["status"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "cannot reach the admin API of a khata node at 127.0.0.1:{port}"
        )),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
}
