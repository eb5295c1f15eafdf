//! The primitives of spec §3: [int], [long], [byte], [short], [string], [long string], [uuid],
//! [string list], [bytes], [short bytes], [value], [inet], [inetaddr], [consistency],
//! [string map], [string multimap], [bytes map]. ([option] and [option list] are column types,
//! in [`types`](super::types).)
//!
//! [`WireReader`] reads from a frame body held as [`Bytes`], so blobs ([bytes], [value],
//! paging states) are zero-copy slices of the received frame. Every read checks the bytes
//! left first and returns a [`WireError`]; nothing here can panic on any input, and no count
//! read from the wire reserves memory beyond what the remaining bytes could hold.
//!
//! The `put_*` functions write the same primitives into a [`BytesMut`]; they fail only when a
//! length does not fit its prefix.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use bytes::{BufMut, Bytes, BytesMut};
use uuid::Uuid;

use super::error::{EncodeError, WireError};

/// A bound value ([value] of spec §3): bytes, null (-1), or not set (-2, v4 and later).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// The serialized value (possibly empty).
    Set(Bytes),
    /// `null`: length -1.
    Null,
    /// Not set: length -2; leaves the existing value unchanged (protocol v4+).
    NotSet,
}

/// A [consistency] level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consistency {
    /// 0x0000
    Any,
    /// 0x0001
    One,
    /// 0x0002
    Two,
    /// 0x0003
    Three,
    /// 0x0004
    Quorum,
    /// 0x0005
    All,
    /// 0x0006
    LocalQuorum,
    /// 0x0007
    EachQuorum,
    /// 0x0008
    Serial,
    /// 0x0009
    LocalSerial,
    /// 0x000A
    LocalOne,
}

impl Consistency {
    /// The [short] code of this level.
    pub fn code(self) -> u16 {
        match self {
            Consistency::Any => 0x0000,
            Consistency::One => 0x0001,
            Consistency::Two => 0x0002,
            Consistency::Three => 0x0003,
            Consistency::Quorum => 0x0004,
            Consistency::All => 0x0005,
            Consistency::LocalQuorum => 0x0006,
            Consistency::EachQuorum => 0x0007,
            Consistency::Serial => 0x0008,
            Consistency::LocalSerial => 0x0009,
            Consistency::LocalOne => 0x000A,
        }
    }

    /// The level for a [short] code.
    pub fn from_code(code: u16) -> Result<Self, WireError> {
        Ok(match code {
            0x0000 => Consistency::Any,
            0x0001 => Consistency::One,
            0x0002 => Consistency::Two,
            0x0003 => Consistency::Three,
            0x0004 => Consistency::Quorum,
            0x0005 => Consistency::All,
            0x0006 => Consistency::LocalQuorum,
            0x0007 => Consistency::EachQuorum,
            0x0008 => Consistency::Serial,
            0x0009 => Consistency::LocalSerial,
            0x000A => Consistency::LocalOne,
            other => return Err(WireError::UnknownConsistency(other)),
        })
    }
}

/// A [string map].
pub type StringMap = HashMap<String, String>;
/// A [string multimap]. Kept as ordered pairs so SUPPORTED is written in a stable order.
pub type StringMultimap = Vec<(String, Vec<String>)>;
/// A [bytes map] (custom payloads). Ordered pairs, for a stable encoding.
pub type BytesMap = Vec<(String, Option<Bytes>)>;

/// A cursor over a message body. Reads advance it; [`WireReader::remaining`] is what is left.
#[derive(Debug, Clone)]
pub struct WireReader {
    buf: Bytes,
}

impl WireReader {
    /// A reader over `body`.
    pub fn new(body: Bytes) -> Self {
        WireReader { buf: body }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// The unread bytes, consuming the reader.
    pub fn into_rest(self) -> Bytes {
        self.buf
    }

    fn need(&self, what: &'static str, needed: usize) -> Result<(), WireError> {
        if self.buf.len() < needed {
            return Err(WireError::Truncated {
                what,
                needed,
                available: self.buf.len(),
            });
        }
        Ok(())
    }

    fn take(&mut self, what: &'static str, n: usize) -> Result<Bytes, WireError> {
        self.need(what, n)?;
        Ok(self.buf.split_to(n))
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], WireError> {
        self.need(what, N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf[..N]);
        let _ = self.buf.split_to(N);
        Ok(out)
    }

    /// A [byte].
    pub fn byte(&mut self, what: &'static str) -> Result<u8, WireError> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A [short] (unsigned).
    pub fn short(&mut self, what: &'static str) -> Result<u16, WireError> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    /// An [int].
    pub fn int(&mut self, what: &'static str) -> Result<i32, WireError> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    /// A [long].
    pub fn long(&mut self, what: &'static str) -> Result<i64, WireError> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    /// A [uuid].
    pub fn uuid(&mut self, what: &'static str) -> Result<Uuid, WireError> {
        Ok(Uuid::from_bytes(self.array(what)?))
    }

    /// A [string].
    pub fn string(&mut self, what: &'static str) -> Result<String, WireError> {
        let n = usize::from(self.short(what)?);
        let raw = self.take(what, n)?;
        String::from_utf8(raw.to_vec()).map_err(|_| invalid_utf8(what, &raw))
    }

    /// A [long string].
    pub fn long_string(&mut self, what: &'static str) -> Result<String, WireError> {
        let n = self.int(what)?;
        let n = usize::try_from(n).map_err(|_| WireError::InvalidLength {
            what,
            length: i64::from(n),
        })?;
        let raw = self.take(what, n)?;
        String::from_utf8(raw.to_vec()).map_err(|_| invalid_utf8(what, &raw))
    }

    /// A [string list].
    pub fn string_list(&mut self, what: &'static str) -> Result<Vec<String>, WireError> {
        let n = usize::from(self.short(what)?);
        let mut out = Vec::with_capacity(n.min(self.remaining() / 2));
        for _ in 0..n {
            out.push(self.string(what)?);
        }
        Ok(out)
    }

    /// A [bytes]: `None` is null (any negative length).
    pub fn bytes(&mut self, what: &'static str) -> Result<Option<Bytes>, WireError> {
        let n = self.int(what)?;
        if n < 0 {
            return Ok(None);
        }
        // `n` is non-negative, so the conversion cannot fail on any supported platform.
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        Ok(Some(self.take(what, n)?))
    }

    /// A [short bytes].
    pub fn short_bytes(&mut self, what: &'static str) -> Result<Bytes, WireError> {
        let n = usize::from(self.short(what)?);
        self.take(what, n)
    }

    /// A [value]. Not set (-2) is an error before protocol v4 (`allow_not_set` false).
    pub fn value(&mut self, what: &'static str, allow_not_set: bool) -> Result<Value, WireError> {
        let n = self.int(what)?;
        match n {
            -1 => Ok(Value::Null),
            -2 if allow_not_set => Ok(Value::NotSet),
            n if n < 0 => Err(WireError::InvalidLength {
                what,
                length: i64::from(n),
            }),
            n => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                Ok(Value::Set(self.take(what, n)?))
            }
        }
    }

    /// An [inetaddr]: a [byte] size (4 or 16) then the address.
    pub fn inetaddr(&mut self, what: &'static str) -> Result<IpAddr, WireError> {
        match self.byte(what)? {
            4 => Ok(IpAddr::V4(Ipv4Addr::from(self.array::<4>(what)?))),
            16 => Ok(IpAddr::V6(Ipv6Addr::from(self.array::<16>(what)?))),
            n => Err(WireError::Invalid {
                what,
                detail: format!("address size {n} (must be 4 or 16)"),
            }),
        }
    }

    /// An [inet]: an [inetaddr] then an [int] port.
    pub fn inet(&mut self, what: &'static str) -> Result<SocketAddr, WireError> {
        let ip = self.inetaddr(what)?;
        let port = self.int(what)?;
        let port = u16::try_from(port).map_err(|_| WireError::Invalid {
            what,
            detail: format!("port {port}"),
        })?;
        Ok(SocketAddr::new(ip, port))
    }

    /// A [consistency].
    pub fn consistency(&mut self, what: &'static str) -> Result<Consistency, WireError> {
        Consistency::from_code(self.short(what)?)
    }

    /// A [string map]. A repeated key keeps its last value.
    pub fn string_map(&mut self, what: &'static str) -> Result<StringMap, WireError> {
        let n = usize::from(self.short(what)?);
        let mut out = HashMap::with_capacity(n.min(self.remaining() / 4));
        for _ in 0..n {
            let k = self.string(what)?;
            let v = self.string(what)?;
            out.insert(k, v);
        }
        Ok(out)
    }

    /// A [string multimap].
    pub fn string_multimap(&mut self, what: &'static str) -> Result<StringMultimap, WireError> {
        let n = usize::from(self.short(what)?);
        let mut out = Vec::with_capacity(n.min(self.remaining() / 4));
        for _ in 0..n {
            let k = self.string(what)?;
            let v = self.string_list(what)?;
            out.push((k, v));
        }
        Ok(out)
    }

    /// A [bytes map].
    pub fn bytes_map(&mut self, what: &'static str) -> Result<BytesMap, WireError> {
        let n = usize::from(self.short(what)?);
        let mut out = Vec::with_capacity(n.min(self.remaining() / 6));
        for _ in 0..n {
            let k = self.string(what)?;
            let v = self.bytes(what)?;
            out.push((k, v));
        }
        Ok(out)
    }
}

fn short_len(what: &'static str, len: usize) -> Result<u16, EncodeError> {
    u16::try_from(len).map_err(|_| EncodeError::TooLong {
        what,
        length: len,
        max: usize::from(u16::MAX),
    })
}

fn int_len(what: &'static str, len: usize) -> Result<i32, EncodeError> {
    i32::try_from(len).map_err(|_| EncodeError::TooLong {
        what,
        length: len,
        max: i32::MAX as usize,
    })
}

/// Writes a [short] count, failing when it does not fit.
pub fn put_count(out: &mut BytesMut, what: &'static str, n: usize) -> Result<(), EncodeError> {
    out.put_u16(short_len(what, n)?);
    Ok(())
}

/// Writes an [int] count, failing when it does not fit.
pub fn put_int_count(out: &mut BytesMut, what: &'static str, n: usize) -> Result<(), EncodeError> {
    out.put_i32(int_len(what, n)?);
    Ok(())
}

/// Writes a [string].
pub fn put_string(out: &mut BytesMut, what: &'static str, s: &str) -> Result<(), EncodeError> {
    out.put_u16(short_len(what, s.len())?);
    out.put_slice(s.as_bytes());
    Ok(())
}

/// Writes a [long string].
pub fn put_long_string(out: &mut BytesMut, what: &'static str, s: &str) -> Result<(), EncodeError> {
    out.put_i32(int_len(what, s.len())?);
    out.put_slice(s.as_bytes());
    Ok(())
}

/// Writes a [string list].
pub fn put_string_list(
    out: &mut BytesMut,
    what: &'static str,
    list: &[String],
) -> Result<(), EncodeError> {
    put_count(out, what, list.len())?;
    for s in list {
        put_string(out, what, s)?;
    }
    Ok(())
}

/// Writes a [bytes]; `None` is null.
pub fn put_bytes(
    out: &mut BytesMut,
    what: &'static str,
    b: Option<&[u8]>,
) -> Result<(), EncodeError> {
    match b {
        None => out.put_i32(-1),
        Some(b) => {
            out.put_i32(int_len(what, b.len())?);
            out.put_slice(b);
        }
    }
    Ok(())
}

/// Writes a [short bytes].
pub fn put_short_bytes(
    out: &mut BytesMut,
    what: &'static str,
    b: &[u8],
) -> Result<(), EncodeError> {
    out.put_u16(short_len(what, b.len())?);
    out.put_slice(b);
    Ok(())
}

/// Writes a [value]. Not set requires protocol v4+ (`allow_not_set`).
pub fn put_value(
    out: &mut BytesMut,
    what: &'static str,
    v: &Value,
    allow_not_set: bool,
) -> Result<(), EncodeError> {
    match v {
        Value::Set(b) => put_bytes(out, what, Some(b)),
        Value::Null => {
            out.put_i32(-1);
            Ok(())
        }
        Value::NotSet if allow_not_set => {
            out.put_i32(-2);
            Ok(())
        }
        Value::NotSet => Err(EncodeError::Invalid {
            what,
            detail: "unset values need protocol v4 or later".to_string(),
        }),
    }
}

/// Writes an [inetaddr].
pub fn put_inetaddr(out: &mut BytesMut, ip: &IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            out.put_u8(4);
            out.put_slice(&v4.octets());
        }
        IpAddr::V6(v6) => {
            out.put_u8(16);
            out.put_slice(&v6.octets());
        }
    }
}

/// Writes an [inet].
pub fn put_inet(out: &mut BytesMut, addr: &SocketAddr) {
    put_inetaddr(out, &addr.ip());
    out.put_i32(i32::from(addr.port()));
}

/// Writes a [consistency].
pub fn put_consistency(out: &mut BytesMut, c: Consistency) {
    out.put_u16(c.code());
}

/// Writes a [string map], keys sorted so the encoding is deterministic.
pub fn put_string_map(
    out: &mut BytesMut,
    what: &'static str,
    map: &StringMap,
) -> Result<(), EncodeError> {
    put_count(out, what, map.len())?;
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort();
    for (k, v) in entries {
        put_string(out, what, k)?;
        put_string(out, what, v)?;
    }
    Ok(())
}

/// Writes a [string multimap].
pub fn put_string_multimap(
    out: &mut BytesMut,
    what: &'static str,
    map: &StringMultimap,
) -> Result<(), EncodeError> {
    put_count(out, what, map.len())?;
    for (k, v) in map {
        put_string(out, what, k)?;
        put_string_list(out, what, v)?;
    }
    Ok(())
}

/// Writes a [bytes map].
pub fn put_bytes_map(
    out: &mut BytesMut,
    what: &'static str,
    map: &BytesMap,
) -> Result<(), EncodeError> {
    put_count(out, what, map.len())?;
    for (k, v) in map {
        put_string(out, what, k)?;
        put_bytes(out, what, v.as_deref())?;
    }
    Ok(())
}

/// The refusal of `raw`, read as the field `what`, that is not UTF-8.
fn invalid_utf8(what: &'static str, raw: &[u8]) -> WireError {
    const SHOWN: usize = 1024;
    let mut hex: String = raw.iter().take(SHOWN).map(|b| format!("{b:02x}")).collect();
    if raw.len() > SHOWN {
        hex.push_str("...");
    }
    WireError::InvalidUtf8 { what, hex }
}
