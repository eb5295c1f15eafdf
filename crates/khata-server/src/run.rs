//! What the `khata` binary does (its `main` is this module's [`main`]): parse the command line,
//! build the configuration, set up logging, run.
//!
//! Exit codes: 0 success; 1 a configuration error (`server`), or a node that cannot be
//! reached or refused the request (`admin`); 2 a usage error (clap).

use std::process::ExitCode;
use std::time::Duration;

use crate::admin::api::{
    CompactReport, CompactionStats, CompactionThroughput, FlushReport, Info, Scope, Status,
    TableStatsReport, TpStats, TraceProbability,
};
use crate::admin::client::{AdminClient, ClientError};
use crate::admin::report;
use crate::cli::{AdminArgs, AdminVerb, Cli, Command, ServerArgs, TableScope};
use clap::Parser;
use tracing::{debug, info};
use tracing_subscriber::EnvFilter;

/// `KHATA_CHECK_CONFIG=1 khata server ...` validates the configuration and exits.
const CHECK_CONFIG_ENV: &str = "KHATA_CHECK_CONFIG";

/// The `khata` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    match cli.into_command() {
        Command::Server(args) => server(&args),
        Command::Admin(args) => admin(&args),
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (e.g. `RUST_LOG=debug`,
/// `RUST_LOG=info,khata_storage=debug`); `info` when unset or unreadable.
fn init_logging() {
    let (filter, bad_filter) = match std::env::var("RUST_LOG") {
        Err(_) => (EnvFilter::new("info"), None),
        Ok(text) => match EnvFilter::try_new(&text) {
            Ok(filter) => (filter, None),
            Err(e) => (EnvFilter::new("info"), Some((text, e))),
        },
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    if let Some((text, e)) = bad_filter {
        tracing::warn!("RUST_LOG={text:?} is not a valid filter ({e}); logging at info");
    }
}

fn server(args: &ServerArgs) -> ExitCode {
    let config = match crate::load_config(args) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("khata: {e}");
            return ExitCode::from(1);
        }
    };
    debug!("effective configuration:\n{}", config.to_yaml());
    if std::env::var(CHECK_CONFIG_ENV).is_ok_and(|v| v == "1") {
        info!("configuration valid");
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("khata")
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("khata: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        // Watched from before the node starts: a signal that comes while it starts (the
        // commit log replaying, say) stops it cleanly once started, rather than killing it.
        let signals = Signals::watch();
        let node = match crate::node::Node::start(&config).await {
            Ok(node) => node,
            Err(e) => {
                eprintln!("khata: {e}");
                return ExitCode::from(1);
            }
        };
        signals.wait().await;
        node.shutdown().await;
        ExitCode::SUCCESS
    })
}

/// SIGTERM and SIGINT (Ctrl-C), watched from when made.
struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn watch() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        let watch = |kind: SignalKind, name: &str| {
            signal(kind)
                .inspect_err(|e| tracing::warn!(error = %e, "cannot watch {name}"))
                .ok()
        };
        Signals {
            term: watch(SignalKind::terminate(), "SIGTERM"),
            int: watch(SignalKind::interrupt(), "SIGINT"),
        }
    }

    /// Until one of them comes (forever if neither could be watched).
    async fn wait(mut self) {
        async fn next(signal: &mut Option<tokio::signal::unix::Signal>) {
            match signal {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = next(&mut self.term) => info!("SIGTERM received"),
            _ = next(&mut self.int) => info!("SIGINT received"),
        }
    }
}

/// How long `khata admin` waits for an answer to a question (`status`, `info`,
/// `tablestats`, `compactionstats`). `flush` and `compact` wait as long as the work takes, as nodetool does.
const ADMIN_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// `khata admin <verb>`: ask the node's admin API, print the answer as nodetool would.
fn admin(args: &AdminArgs) -> ExitCode {
    debug!(host = %args.host, port = args.port, verb = ?args.verb, "admin");
    let client = AdminClient::new(args.host.clone(), args.port);
    match admin_verb(&client, &args.verb) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("khata admin: {e}");
            ExitCode::from(1)
        }
    }
}

/// The text `khata admin` prints for `verb` (empty for `flush` and `compact`, which print
/// nothing on success, as nodetool's).
fn admin_verb(client: &AdminClient, verb: &AdminVerb) -> Result<String, ClientError> {
    let ask = Some(ADMIN_READ_TIMEOUT);
    Ok(match verb {
        AdminVerb::Status => report::status(&client.get_json::<Status>("/status", ask)?),
        AdminVerb::Info => report::info(&client.get_json::<Info>("/info", ask)?),
        AdminVerb::Flush(scope) => {
            let path = format!("/flush{}", scope_of(scope).query());
            client.post_json::<FlushReport>(&path, None)?;
            String::new()
        }
        AdminVerb::Compact(scope) => {
            let path = format!("/compact{}", scope_of(scope).query());
            client.post_json::<CompactReport>(&path, None)?;
            String::new()
        }
        AdminVerb::Tablestats { target } => {
            let scope = target.as_ref().map(scope_of).unwrap_or_default();
            let path = format!("/tablestats{}", scope.query());
            report::tablestats(&client.get_json::<TableStatsReport>(&path, ask)?)
        }
        AdminVerb::Compactionstats => {
            report::compactionstats(&client.get_json::<CompactionStats>("/compactionstats", ask)?)
        }
        AdminVerb::Tpstats => report::tpstats(&client.get_json::<TpStats>("/tpstats", ask)?),
        AdminVerb::Getcompactionthroughput => report::compactionthroughput(
            &client.get_json::<CompactionThroughput>("/compactionthroughput", ask)?,
        ),
        AdminVerb::Setcompactionthroughput { bytes_per_second } => {
            let path = format!("/compactionthroughput?bytes_per_second={bytes_per_second}");
            client.post_json::<CompactionThroughput>(&path, ask)?;
            String::new()
        }
        AdminVerb::Gettraceprobability => report::traceprobability(
            &client.get_json::<TraceProbability>("/traceprobability", ask)?,
        ),
        AdminVerb::Settraceprobability { probability } => {
            let path = format!("/traceprobability?probability={probability}");
            client.post_json::<TraceProbability>(&path, ask)?;
            String::new()
        }
    })
}

fn scope_of(scope: &TableScope) -> Scope {
    Scope {
        keyspace: scope.keyspace.clone(),
        table: scope.table.clone(),
    }
}
