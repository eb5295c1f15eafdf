//! Errors of loading the node's configuration.
//!
//! Every error says where the offending value came from (the YAML file, `--set` or a flag)
//! and names the key, and the value when there is one, so the operator can fix it without
//! guessing. None is retryable: the node refuses to start.

use std::io;
use std::path::PathBuf;

/// Why the configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The `--config` file could not be read.
    #[error("cannot read the configuration file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The text is not YAML (or a `--set` value is not a YAML value).
    #[error("{origin}: not valid YAML: {message}")]
    Yaml { origin: String, message: String },

    /// The YAML document is not a mapping of keys to values.
    #[error("{origin}: expected a mapping of configuration keys to values, found {found}")]
    NotAMapping { origin: String, found: String },

    /// A key khata does not know (Cassandra refuses these too).
    #[error(
        "{origin}: unknown configuration key `{key}`{}",
        suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
    )]
    UnknownKey {
        origin: String,
        key: String,
        suggestion: Option<String>,
    },

    /// A known key with a value it does not accept.
    #[error("{origin}: invalid value `{value}` for `{key}`: {reason}")]
    InvalidValue {
        origin: String,
        key: String,
        value: String,
        reason: String,
    },

    /// Two names of one setting (a 4.1 name and its pre-4.1 name, say) in the same source.
    #[error("{origin}: `{key}` and `{other}` are the same setting; set only one of them")]
    DuplicateSetting {
        origin: String,
        key: String,
        other: String,
    },

    /// Settings that are valid one by one but not together.
    #[error("invalid configuration: {0}")]
    Inconsistent(String),
}
