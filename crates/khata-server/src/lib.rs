//! khata-server: assembles a node and owns the `khata` binary.
//!
//! - [`node`]: a running node: replica, coordinator, the CQL listener and the admin API, with
//!   clean shutdown.
//! - [`admin`]: the admin HTTP API (`/status`, `/info`, `/flush`, `/compact`, `/tablestats`,
//!   `/metrics`) and the client `khata admin` uses.
//! - [`run`]: the `khata` binary's `main` (the binary itself is the workspace's root package,
//!   so that `cargo run --release` starts a node).
//! - [`config`]: [`Config`], every setting with its `cassandra.yaml` name and Cassandra 4.1
//!   default, Cassandra's unit syntax, and the layering of file, `--set` and flags.
//! - [`request_threads`]: one single-threaded runtime per core for the DynamoDB endpoint's
//!   connections.
//! - [`cli`]: the `khata` command line (`server`, `admin`).
//! - [`load_config`]: the one function the binary calls to turn `khata server`'s flags into a
//!   validated [`Config`].
//!
//! This crate, with `khata-env`, is where the real clock, sockets and files may be touched
//! (DESIGN.md §2); the configuration code touches only the `--config` file.

pub mod admin;
pub mod cli;
pub mod config;
mod error;
pub mod http_server;
pub mod node;
pub mod request_threads;
pub mod run;

pub use config::{CommitLogSync, Config, Seed};
pub use error::ConfigError;

use cli::ServerArgs;

/// The effective configuration of `khata server`: the defaults, then the `--config` file,
/// then each `--set` in order, then the dedicated flags; validated.
pub fn load_config(args: &ServerArgs) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    if let Some(path) = &args.config {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        config.apply_yaml_str(&text, &path.display().to_string())?;
    }
    for set in &args.set {
        config.apply_set(&set.key, &set.value)?;
    }
    args.apply_flags(&mut config);
    config.validate()?;
    Ok(config)
}
