//! The servers measured: khata and dynalite, either addressed (already running) or spawned by
//! the benchmark on free loopback ports in a temporary directory, and stopped by pid at the
//! end (SIGTERM, then SIGKILL after [`STOP_TIMEOUT`]); the directory is removed with them.
//!
//! khata is started as `khata server --data-dir <tmp>/data --listen-address 127.0.0.1
//! --dynamo-port P --cql-port C --admin-port A`, dynalite as `node
//! <dir>/node_modules/dynalite/cli.js --host 127.0.0.1 --port P`, as the DynamoDB issue
//! starts it (its in-memory store, the faster of its two: docs/benchmarks.md, stop 20), or with `--path <tmp>/leveldb` added for LevelDB on disk
//! (`--dynalite-on-disk`). A spawned server is ready when its DynamoDB port accepts a TCP
//! connection. khata may be up (its CQL port accepting) without a DynamoDB endpoint; that is
//! reported as such rather than waited on for the whole start timeout.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a spawned server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Once khata's CQL port accepts, how long its DynamoDB port may still take.
const DYNAMO_AFTER_CQL_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a clean shutdown may take before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Which implementation a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// khata's DynamoDB endpoint.
    Khata,
    /// dynalite (Node.js, LevelDB).
    Dynalite,
}

impl Kind {
    /// The name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Khata => "khata",
            Kind::Dynalite => "dynalite",
        }
    }
}

/// How to reach a target.
#[derive(Debug, Clone)]
pub enum Source {
    /// Already running at this address.
    Address(SocketAddr),
    /// Start `khata` from this binary.
    SpawnKhata {
        binary: PathBuf,
        settings: Vec<String>,
    },
    /// Start dynalite from `<dir>/node_modules/dynalite/cli.js`.
    SpawnDynalite { dir: PathBuf, on_disk: bool },
}

/// A target ready for requests.
#[derive(Debug)]
pub struct Running {
    /// Where its DynamoDB endpoint listens.
    pub address: SocketAddr,
    /// The process, when spawned.
    pub process: Option<Spawned>,
}

impl Running {
    /// The spawned process's id.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.child.id())
    }

    /// Stops the process if it was spawned (and removes its directory).
    pub async fn stop(self, kind: Kind) {
        if let Some(process) = self.process {
            process.stop(kind).await;
        }
    }
}

/// A server process the benchmark started, with its temporary directory.
#[derive(Debug)]
pub struct Spawned {
    child: Child,
    log: PathBuf,
    // Dropped (deleted) after the process stops.
    dir: tempfile::TempDir,
}

/// Starts or addresses a target; `Err` says why it cannot be measured.
pub async fn start(kind: Kind, source: &Source) -> Result<Running, String> {
    match source {
        Source::Address(address) => Ok(Running {
            address: *address,
            process: None,
        }),
        Source::SpawnKhata { binary, settings } => spawn_khata(binary, settings).await,
        Source::SpawnDynalite { dir, on_disk } => spawn_dynalite(dir, *on_disk).await,
    }
    .map_err(|e| format!("{}: {e}", kind.name()))
}

async fn spawn_khata(binary: &Path, settings: &[String]) -> Result<Running, String> {
    let dir = temp_dir("khata-bench-dynamo-khata-")?;
    let dynamo_port = free_port()?;
    let cql_port = free_port()?;
    let admin_port = free_port()?;
    let mut command = Command::new(binary);
    command
        .arg("server")
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--listen-address", "127.0.0.1"])
        .args(["--dynamo-port", &dynamo_port.to_string()])
        .args(["--cql-port", &cql_port.to_string()])
        .args(["--admin-port", &admin_port.to_string()]);
    for setting in settings {
        command.args(["--set", setting]);
    }
    let mut process = Spawned::start(command, dir, binary)?;
    let dynamo = loopback(dynamo_port);
    let cql = loopback(cql_port);
    let began = Instant::now();
    let mut cql_up_at: Option<Instant> = None;
    loop {
        if accepts(dynamo).await {
            return Ok(Running {
                address: dynamo,
                process: Some(process),
            });
        }
        if cql_up_at.is_none() && accepts(cql).await {
            cql_up_at = Some(Instant::now());
        }
        let waited_after_cql = cql_up_at.map(|t| t.elapsed() > DYNAMO_AFTER_CQL_TIMEOUT);
        let reason = match process.exited() {
            Some(status) => Some(format!(
                "exited with {status} before listening:\n{}",
                process.log_tail()
            )),
            None if waited_after_cql == Some(true) => Some(format!(
                "the node is up (its CQL port {cql} accepts) but its DynamoDB port {dynamo} \
                 does not accept connections: no DynamoDB endpoint in this build?"
            )),
            None if began.elapsed() > START_TIMEOUT => {
                Some("did not accept connections within a minute".to_string())
            }
            None => None,
        };
        if let Some(reason) = reason {
            process.stop(Kind::Khata).await;
            return Err(reason);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn spawn_dynalite(dir: &Path, on_disk: bool) -> Result<Running, String> {
    let cli = dir.join("node_modules/dynalite/cli.js");
    if !cli.is_file() {
        return Err(format!(
            "{} not found (npm install dynalite in {})",
            cli.display(),
            dir.display()
        ));
    }
    let temp = temp_dir("khata-bench-dynamo-dynalite-")?;
    let port = free_port()?;
    let mut command = Command::new("node");
    command
        .arg(&cli)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()]);
    if on_disk {
        command.arg("--path").arg(temp.path().join("leveldb"));
    }
    let mut process = Spawned::start(command, temp, Path::new("node"))?;
    let address = loopback(port);
    let began = Instant::now();
    loop {
        if accepts(address).await {
            return Ok(Running {
                address,
                process: Some(process),
            });
        }
        let reason = match process.exited() {
            Some(status) => Some(format!(
                "exited with {status} before listening:\n{}",
                process.log_tail()
            )),
            None if began.elapsed() > START_TIMEOUT => {
                Some("did not accept connections within a minute".to_string())
            }
            None => None,
        };
        if let Some(reason) = reason {
            process.stop(Kind::Dynalite).await;
            return Err(reason);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

impl Spawned {
    /// Runs `command` with its output going to `server.log` in `dir`.
    fn start(mut command: Command, dir: tempfile::TempDir, program: &Path) -> Result<Self, String> {
        let log = dir.path().join("server.log");
        let out =
            std::fs::File::create(&log).map_err(|e| format!("creating {}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("opening {}: {e}", log.display()))?;
        let child = command
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", program.display()))?;
        Ok(Spawned { child, log, dir })
    }

    fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last lines of the process's output.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// SIGTERM by pid, wait, SIGKILL if it lingers; then the directory goes.
    async fn stop(mut self, kind: Kind) {
        let pid = self.child.id();
        if self.exited().is_none() {
            // `kill` rather than libc: the workspace denies unsafe code.
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
            let began = Instant::now();
            while self.exited().is_none() {
                if began.elapsed() > STOP_TIMEOUT {
                    eprintln!(
                        "{}: pid {pid} did not exit on SIGTERM; killing it",
                        kind.name()
                    );
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let path = self.dir.path().to_path_buf();
        if let Err(e) = self.dir.close() {
            eprintln!("{}: removing {}: {e}", kind.name(), path.display());
        }
    }
}

fn temp_dir(prefix: &str) -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|e| format!("creating a temporary directory: {e}"))
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

/// A loopback port that was free a moment ago (bound, then released for the server to take).
fn free_port() -> Result<u16, String> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("finding a free port: {e}"))
}

async fn accepts(address: SocketAddr) -> bool {
    tokio::time::timeout(
        Duration::from_millis(200),
        tokio::net::TcpStream::connect(address),
    )
    .await
    .is_ok_and(|r| r.is_ok())
}
