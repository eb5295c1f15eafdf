//! Mutations and their commit-log record encoding.
//!
//! A [`Mutation`] is an update to one partition of one table. A commit-log record holds one or
//! more mutations that must be applied together (a logged batch on one node), so a record is
//! either replayed whole or, if torn, not at all.
//!
//! ```text
//! record   := version:u8 (=1) count:varint mutation*
//! mutation := table_id:16 bytes  key:bytes  partition   (see khata_types::codec)
//! ```

use bytes::Bytes;
use khata_types::codec::{self, CodecError, Reader};
use khata_types::partition::Partition;
use khata_types::token::DecoratedKey;
use uuid::Uuid;

/// The record format version this build writes and reads.
pub const RECORD_VERSION: u8 = 1;

/// An update to one partition of one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutation {
    pub table: Uuid,
    pub key: DecoratedKey,
    pub update: Partition,
}

impl Mutation {
    pub fn new(table: Uuid, key: DecoratedKey, update: Partition) -> Self {
        Mutation { table, key, update }
    }
}

/// Encode mutations into one commit-log record payload.
pub fn encode_record(mutations: &[Mutation]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        8 + mutations
            .iter()
            .map(|m| 32 + m.key.key.len() + m.update.size_estimate())
            .sum::<usize>(),
    );
    out.push(RECORD_VERSION);
    codec::put_varint(&mut out, mutations.len() as u64);
    for m in mutations {
        out.extend_from_slice(m.table.as_bytes());
        codec::put_bytes(&mut out, &m.key.key);
        codec::encode_partition(&mut out, &m.update);
    }
    out
}

/// Decode a record written by [`encode_record`].
pub fn decode_record(payload: Bytes) -> Result<Vec<Mutation>, CodecError> {
    let mut r = Reader::new(payload);
    let version = r.u8()?;
    if version != RECORD_VERSION {
        return Err(CodecError::Invalid("unknown mutation record version"));
    }
    let n = r.count()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let id = r.take(16)?;
        let table = Uuid::from_slice(&id).map_err(|_| CodecError::Invalid("table id"))?;
        let key = DecoratedKey::new(r.bytes()?);
        let update = codec::decode_partition(&mut r)?;
        out.push(Mutation { table, key, update });
    }
    if !r.is_empty() {
        return Err(CodecError::Invalid("trailing bytes after mutations"));
    }
    Ok(out)
}
