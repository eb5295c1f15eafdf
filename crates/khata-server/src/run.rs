//! What the `khata` binary does (its `main` is this module's [`main`]): parse the command line,
//! build the configuration, set up logging, run.
//!
//! Exit codes: 0 success, 1 configuration error, 2 usage error (clap) or a command that is not
//! available yet.

use std::process::ExitCode;

use crate::cli::{AdminArgs, Cli, Command, ServerArgs};
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
        let node = match crate::node::Node::start(&config).await {
            Ok(node) => node,
            Err(e) => {
                eprintln!("khata: {e}");
                return ExitCode::from(1);
            }
        };
        wait_for_signal().await;
        node.shutdown().await;
        ExitCode::SUCCESS
    })
}

/// SIGTERM or SIGINT (Ctrl-C).
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch SIGTERM; stopping on Ctrl-C only");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => info!("SIGTERM received"),
        _ = tokio::signal::ctrl_c() => info!("SIGINT received"),
    }
}

fn admin(args: &AdminArgs) -> ExitCode {
    debug!(host = %args.host, port = args.port, verb = ?args.verb, "admin");
    eprintln!("khata admin: the admin API lands with the node");
    ExitCode::from(2)
}
