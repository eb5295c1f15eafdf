//! Reading one typed setting out of a YAML value.
//!
//! Each reader returns the reason as a sentence on failure; the caller adds the key, the value
//! and where it came from. Scalars are read the way Cassandra's SnakeYAML loader reads a
//! property of the target type: a string setting takes any scalar's text (`cluster_name: 123`
//! is the name "123"), a unit setting parses the scalar's text (`commitlog_sync_period: 10000`
//! is refused for lacking a unit), an integer setting needs a YAML integer.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde_norway::Value;

use super::Seed;
use super::units::{self, DurationBound, RateUnit, StorageBound, StorageUnit, TimeUnit};

/// The value as the operator wrote it, for error messages.
pub(crate) fn display(value: &Value) -> String {
    match scalar_text(value) {
        Some(text) => text,
        None => serde_norway::to_string(value)
            .map(|s| s.trim_end().replace('\n', " "))
            .unwrap_or_else(|_| format!("{value:?}")),
    }
}

/// The text of a scalar (string, number, boolean); `None` for null, sequences and mappings.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(tagged) => scalar_text(&tagged.value),
        Value::Null | Value::Sequence(_) | Value::Mapping(_) => None,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "no value",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// Any scalar's text.
pub(crate) fn string(value: &Value) -> Result<String, String> {
    scalar_text(value).ok_or_else(|| format!("expected a string, found {}", kind(value)))
}

/// A non-empty string.
pub(crate) fn name(value: &Value) -> Result<String, String> {
    let text = string(value)?;
    if text.trim().is_empty() {
        return Err("must not be empty".to_owned());
    }
    Ok(text)
}

/// A YAML integer (a Java `long`).
pub(crate) fn integer(value: &Value) -> Result<i64, String> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| "expected an integer (no fraction, at most 2^63-1)".to_owned()),
        Value::Tagged(tagged) => integer(&tagged.value),
        other => Err(format!("expected an integer, found {}", kind(other))),
    }
}

/// A YAML integer that fits a Java `int`, as Cassandra's `Integer` settings need.
pub(crate) fn java_int(value: &Value) -> Result<i64, String> {
    let n = integer(value)?;
    if i32::try_from(n).is_err() {
        return Err(format!(
            "expected an integer between {} and {}",
            i32::MIN,
            i32::MAX
        ));
    }
    Ok(n)
}

/// An integer in `min..=max`.
pub(crate) fn integer_in(value: &Value, min: i64, max: i64) -> Result<i64, String> {
    let n = integer(value)?;
    if !(min..=max).contains(&n) {
        return Err(format!("must be between {min} and {max}"));
    }
    Ok(n)
}

pub(crate) fn u32_in(value: &Value, min: u32, max: u32) -> Result<u32, String> {
    let n = integer_in(value, i64::from(min), i64::from(max))?;
    Ok(u32::try_from(n).expect("range checked"))
}

/// A mapping of access key ids to secret access keys (`{AKID: secret, ...}`); no value is
/// an empty mapping.
pub(crate) fn access_keys(value: &Value) -> Result<BTreeMap<String, String>, String> {
    match value {
        Value::Null => Ok(BTreeMap::new()),
        Value::Tagged(tagged) => access_keys(&tagged.value),
        Value::Mapping(m) => m
            .iter()
            .map(|(k, s)| {
                let key = name(k).map_err(|e| format!("an access key id {e}"))?;
                let secret = name(s).map_err(|e| format!("the secret of {key} {e}"))?;
                Ok((key, secret))
            })
            .collect(),
        other => Err(format!(
            "expected a mapping of access key ids to secrets, found {}",
            kind(other)
        )),
    }
}

/// A TCP port; 0 asks the OS for a free one (tests use it).
pub(crate) fn port(value: &Value) -> Result<u16, String> {
    let n = integer_in(value, 0, i64::from(u16::MAX))?;
    Ok(u16::try_from(n).expect("range checked"))
}

/// An address a node binds and tells its peers: an IP literal, not a host name, and not the
/// wildcard (Cassandra refuses `0.0.0.0` as `listen_address` for the same reason: peers could
/// not reach it).
pub(crate) fn bind_address(value: &Value) -> Result<IpAddr, String> {
    let text = string(value)?;
    parse_bind_address(&text)
}

/// See [`bind_address`].
pub fn parse_bind_address(text: &str) -> Result<IpAddr, String> {
    let ip: IpAddr = text.trim().parse().map_err(|_| {
        "not an IP address (khata binds exactly the address it is given and does not resolve \
         host names; for one node use 127.0.0.1)"
            .to_owned()
    })?;
    if ip.is_unspecified() {
        return Err(format!(
            "{ip} is the wildcard address; give the address peers and clients should use"
        ));
    }
    Ok(ip)
}

/// One seed: `IP` or `IP:port` (`[IPv6]:port`).
pub fn parse_seed(text: &str) -> Result<Seed, String> {
    let text = text.trim();
    let seed = if let Ok(address) = text.parse::<IpAddr>() {
        Seed {
            address,
            port: None,
        }
    } else if let Ok(socket) = text.parse::<SocketAddr>() {
        Seed {
            address: socket.ip(),
            port: Some(socket.port()),
        }
    } else {
        return Err(format!(
            "seed `{text}` is not IP or IP:port (host names are not resolved)"
        ));
    };
    if seed.address.is_unspecified() {
        return Err(format!("seed `{text}` is the wildcard address"));
    }
    Ok(seed)
}

/// Seeds as Cassandra writes them, `"10.0.0.1:7000,10.0.0.2"`, or as a YAML list; blank
/// (or no value) is no seeds.
pub(crate) fn seeds(value: &Value) -> Result<Vec<Seed>, String> {
    let items: Vec<String> = match value {
        Value::Null => Vec::new(),
        Value::Sequence(items) => items.iter().map(string).collect::<Result<_, _>>()?,
        other => string(other)?
            .split(',')
            .map(str::to_owned)
            .collect::<Vec<_>>(),
    };
    items
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(parse_seed)
        .collect()
}

/// Cassandra's `seed_provider` block: one `SimpleSeedProvider` with a `seeds` parameter.
///
/// ```yaml
/// seed_provider:
///   - class_name: org.apache.cassandra.locator.SimpleSeedProvider
///     parameters:
///       - seeds: "127.0.0.1:7000"
/// ```
pub(crate) fn seed_provider(value: &Value) -> Result<Vec<Seed>, String> {
    const SHAPE: &str = "expected a list holding one `class_name: ...SimpleSeedProvider` with \
                         `parameters: [{seeds: \"ip,ip\"}]`";
    let [provider] = value.as_sequence().map(Vec::as_slice).unwrap_or(&[]) else {
        return Err(SHAPE.to_owned());
    };
    let class = provider
        .get("class_name")
        .and_then(scalar_text)
        .ok_or_else(|| SHAPE.to_owned())?;
    if class != "SimpleSeedProvider" && !class.ends_with(".SimpleSeedProvider") {
        return Err(format!("khata has only SimpleSeedProvider, not `{class}`"));
    }
    let seeds_value = provider
        .get("parameters")
        .and_then(Value::as_sequence)
        .and_then(|params| params.iter().find_map(|p| p.get("seeds")))
        .ok_or_else(|| SHAPE.to_owned())?;
    seeds(seeds_value)
}

/// A Cassandra 4.1 duration (`10s`) from any scalar's text.
pub(crate) fn duration(value: &Value, bound: DurationBound) -> Result<Duration, String> {
    let text = string(value)?;
    units::parse_duration(&text, bound).map_err(|e| e.0)
}

/// A pre-4.1 duration: a bare Java `long` in `unit` (Cassandra's `MILLIS_DURATION_LONG`).
pub(crate) fn old_duration_long(
    value: &Value,
    unit: TimeUnit,
    bound: DurationBound,
) -> Result<Duration, String> {
    units::duration_from_quantity(integer(value)?, unit, bound).map_err(|e| e.0)
}

/// A pre-4.1 duration: a bare Java `int` in `unit` (`MILLIS_DURATION_INT`).
pub(crate) fn old_duration_int(
    value: &Value,
    unit: TimeUnit,
    bound: DurationBound,
) -> Result<Duration, String> {
    units::duration_from_quantity(java_int(value)?, unit, bound).map_err(|e| e.0)
}

/// A pre-4.1 duration given as a Java `double` of milliseconds, rounded half up as
/// `Math.round` does (`MILLIS_DURATION_DOUBLE`, used by `commitlog_sync_group_window_in_ms`).
pub(crate) fn old_duration_double_ms(
    value: &Value,
    bound: DurationBound,
) -> Result<Duration, String> {
    let number = match value {
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
    .ok_or_else(|| format!("expected a number of milliseconds, found {}", kind(value)))?;
    // Cassandra maps NaN to 0; Math.round saturates, which the bound then refuses.
    let rounded = if number.is_nan() {
        0
    } else {
        (number + 0.5).floor() as i64
    };
    units::duration_from_quantity(rounded, TimeUnit::Milliseconds, bound).map_err(|e| e.0)
}

/// A Cassandra 4.1 data size (`16MiB`), in bytes.
pub(crate) fn storage(value: &Value, bound: StorageBound) -> Result<u64, String> {
    let text = string(value)?;
    units::parse_storage(&text, bound).map_err(|e| e.0)
}

/// A pre-4.1 size: a bare Java `int` in `unit` (`MEBIBYTES_DATA_STORAGE_INT`,
/// `KIBIBYTES_DATASTORAGE`).
pub(crate) fn old_storage_int(
    value: &Value,
    unit: StorageUnit,
    bound: StorageBound,
) -> Result<u64, String> {
    units::storage_from_quantity(java_int(value)?, unit, bound).map_err(|e| e.0)
}

/// A Cassandra 4.1 data rate (`64MiB/s`), in bytes per second.
pub(crate) fn rate(value: &Value) -> Result<u64, String> {
    let text = string(value)?;
    units::parse_rate(&text).map_err(|e| e.0)
}

/// A pre-4.1 rate: a bare Java `int` of MiB/s (`MEBIBYTES_PER_SECOND_DATA_RATE`).
pub(crate) fn old_rate_mib(value: &Value) -> Result<u64, String> {
    units::rate_from_quantity(java_int(value)?, RateUnit::MebibytesPerSecond).map_err(|e| e.0)
}
