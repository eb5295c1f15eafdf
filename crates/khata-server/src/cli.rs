//! The `khata` command line.
//!
//! ```text
//! khata                                   # = khata server, embedded single-node defaults
//! khata server [--config khata.yaml] [--data-dir DIR] [--listen-address IP] [--cql-port N]
//!              [--dynamo-port N] [--internode-port N] [--admin-port N] [--seeds IP,IP]
//!              [--dc NAME] [--rack NAME] [--set key=value]...
//! khata admin [--host H] [--port N] status | info | flush [KEYSPACE [TABLE]]
//!                                   | compact [KEYSPACE [TABLE]] | tablestats [KEYSPACE[.TABLE]]
//!                                   | compactionstats | tpstats | getcompactionthroughput
//!                                   | setcompactionthroughput MIB_PER_SECOND|RATE
//!                                   | gettraceprobability | settraceprobability P
//! ```
//!
//! The server flags are exactly DESIGN.md §1's; every other setting is reached with `--set`,
//! which takes the names and value syntax of `khata.yaml`. A flag overrides `--set`, which
//! overrides the file (see [`crate::config`]). `--listen-address` must be an IP literal and not
//! the wildcard: a node binds what it is given and tells peers the same address.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::{Config, Seed, parse_bind_address, parse_seed};

/// khata: a wide-column database speaking Cassandra's CQL and DynamoDB's API.
#[derive(Debug, Parser)]
#[command(name = "khata", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The command to run: no subcommand is `server` with no flags.
    pub fn into_command(self) -> Command {
        self.command
            .unwrap_or_else(|| Command::Server(ServerArgs::default()))
    }
}

#[derive(Debug, Clone, PartialEq, Subcommand)]
pub enum Command {
    /// Run a node (the default when no command is given).
    Server(ServerArgs),
    /// Ask a running node's admin API (khata's nodetool).
    Admin(AdminArgs),
}

/// `khata server`'s flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct ServerArgs {
    /// YAML configuration (cassandra.yaml names; see khata.yaml for every key).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory for the commit log and the tables (data_dir).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// IP address every server of the node binds and advertises (listen_address).
    #[arg(long, value_name = "IP", value_parser = listen_address_arg)]
    pub listen_address: Option<IpAddr>,
    /// CQL native protocol port (native_transport_port).
    #[arg(long, value_name = "N")]
    pub cql_port: Option<u16>,
    /// DynamoDB API port (dynamo_port).
    #[arg(long, value_name = "N")]
    pub dynamo_port: Option<u16>,
    /// Internode (gossip and messaging) port (storage_port).
    #[arg(long, value_name = "N")]
    pub internode_port: Option<u16>,
    /// Admin HTTP API and /metrics port (admin_port).
    #[arg(long, value_name = "N")]
    pub admin_port: Option<u16>,
    /// Seed nodes, IP or IP:port, comma-separated (seeds).
    #[arg(long, value_name = "IP,IP", value_delimiter = ',', value_parser = seed_arg)]
    pub seeds: Option<Vec<Seed>>,
    /// Datacenter of this node (dc).
    #[arg(long, value_name = "NAME", value_parser = name_arg)]
    pub dc: Option<String>,
    /// Rack of this node (rack).
    #[arg(long, value_name = "NAME", value_parser = name_arg)]
    pub rack: Option<String>,
    /// Set any configuration key, with the YAML file's names and value syntax; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = key_value_arg)]
    pub set: Vec<KeyValue>,
}

impl ServerArgs {
    /// Applies the dedicated flags (the last layer) to `config`.
    pub fn apply_flags(&self, config: &mut Config) {
        if let Some(dir) = &self.data_dir {
            config.data_dir = dir.clone();
        }
        if let Some(ip) = self.listen_address {
            config.listen_address = ip;
        }
        if let Some(port) = self.cql_port {
            config.native_transport_port = port;
        }
        if let Some(port) = self.dynamo_port {
            config.dynamo_port = port;
        }
        if let Some(port) = self.internode_port {
            config.storage_port = port;
        }
        if let Some(port) = self.admin_port {
            config.admin_port = port;
        }
        if let Some(seeds) = &self.seeds {
            config.seeds = seeds.clone();
        }
        if let Some(dc) = &self.dc {
            config.dc = dc.clone();
        }
        if let Some(rack) = &self.rack {
            config.rack = rack.clone();
        }
    }
}

/// One `--set key=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    /// Read as YAML when applied, as in the file.
    pub value: String,
}

fn key_value_arg(arg: &str) -> Result<KeyValue, String> {
    let (key, value) = arg
        .split_once('=')
        .ok_or_else(|| "expected KEY=VALUE, e.g. --set num_tokens=8".to_owned())?;
    let key = key.trim();
    if key.is_empty() {
        return Err("the key before `=` is empty".to_owned());
    }
    Ok(KeyValue {
        key: key.to_owned(),
        value: value.to_owned(),
    })
}

fn listen_address_arg(arg: &str) -> Result<IpAddr, String> {
    parse_bind_address(arg)
}

fn seed_arg(arg: &str) -> Result<Seed, String> {
    parse_seed(arg)
}

fn name_arg(arg: &str) -> Result<String, String> {
    if arg.trim().is_empty() {
        return Err("must not be empty".to_owned());
    }
    Ok(arg.to_owned())
}

/// `khata admin`'s connection flags and verb.
#[derive(Debug, Clone, PartialEq, Args)]
pub struct AdminArgs {
    /// Host of the node's admin API.
    #[arg(long, global = true, value_name = "HOST", default_value = "127.0.0.1")]
    pub host: String,
    /// Port of the node's admin API (the node's admin_port).
    #[arg(long, global = true, value_name = "N", default_value_t = 7070)]
    pub port: u16,
    #[command(subcommand)]
    pub verb: AdminVerb,
}

/// What to ask the node.
#[derive(Debug, Clone, PartialEq, Subcommand)]
pub enum AdminVerb {
    /// The cluster's nodes as this node sees them: address, state, load, tokens, DC and rack.
    Status,
    /// This node: id, uptime, load, memtable and cache use.
    Info,
    /// Flush memtables to SSTables: every table, a keyspace's, or one table.
    Flush(TableScope),
    /// Run a major compaction: every table, a keyspace's, or one table.
    Compact(TableScope),
    /// Per-table statistics: every table, a keyspace's, or one table.
    Tablestats {
        /// KEYSPACE or KEYSPACE.TABLE; every table when absent.
        #[arg(value_name = "KEYSPACE[.TABLE]", value_parser = dotted_scope_arg)]
        target: Option<TableScope>,
    },
    /// The compactions pending and running, with their progress.
    Compactionstats,
    /// Compactions, flushes and CQL requests as Cassandra's thread pools.
    Tpstats,
    /// The compaction throughput limit in force.
    Getcompactionthroughput,
    /// Change the compaction throughput limit until the node restarts (0 = unthrottled).
    Setcompactionthroughput {
        /// MiB per second (as nodetool takes it), or a rate with its unit: 512KiB/s, 16MiB/s.
        #[arg(value_name = "MIB_PER_SECOND|RATE", value_parser = throughput_arg)]
        bytes_per_second: u64,
    },
    /// The share of CQL requests traced without being asked.
    Gettraceprobability,
    /// Trace this share of CQL requests (0 to 1) into `system_traces` until the node restarts.
    Settraceprobability {
        /// From 0 (none) to 1 (every request).
        #[arg(value_name = "PROBABILITY", value_parser = probability_arg)]
        probability: f64,
    },
}

/// nodetool's trace probability: a number from 0 to 1.
fn probability_arg(arg: &str) -> Result<f64, String> {
    arg.parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| "Trace probability must be between 0 and 1".to_string())
}

/// nodetool's bare number of MiB per second, or a rate as `khata.yaml` writes one.
fn throughput_arg(arg: &str) -> Result<u64, String> {
    match arg.parse::<u64>() {
        Ok(mib) => mib
            .checked_mul(1 << 20)
            .filter(|&b| b < i64::MAX as u64)
            .ok_or_else(|| format!("{arg} MiB/s is too large")),
        Err(_) => crate::config::units::parse_rate(arg).map_err(|e| e.to_string()),
    }
}

/// Which tables a verb acts on: all (neither), a keyspace's, or one table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct TableScope {
    /// Keyspace; every keyspace when absent.
    #[arg(value_name = "KEYSPACE")]
    pub keyspace: Option<String>,
    /// Table in the keyspace; every table of the keyspace when absent.
    #[arg(value_name = "TABLE")]
    pub table: Option<String>,
}

/// `keyspace` or `keyspace.table` (as nodetool tablestats takes it).
fn dotted_scope_arg(arg: &str) -> Result<TableScope, String> {
    let (keyspace, table) = match arg.split_once('.') {
        None => (arg, None),
        Some((keyspace, table)) => (keyspace, Some(table)),
    };
    if keyspace.is_empty() || table.is_some_and(|t| t.is_empty() || t.contains('.')) {
        return Err(format!("expected KEYSPACE or KEYSPACE.TABLE, got `{arg}`"));
    }
    Ok(TableScope {
        keyspace: Some(keyspace.to_owned()),
        table: table.map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
