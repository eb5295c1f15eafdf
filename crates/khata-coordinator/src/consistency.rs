//! Consistency levels and how many replica answers each needs (Cassandra's `blockFor`).
//!
//! Pure functions of the keyspace's replication and the replicas that are up, so that the
//! single-node coordinator and the cluster one decide `Unavailable` the same way.

use khata_types::schema::Replication;

/// A CQL consistency level (DynamoDB maps strongly consistent reads to `Quorum`, eventually
/// consistent ones to `One`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Consistency {
    Any,
    One,
    Two,
    Three,
    Quorum,
    All,
    LocalQuorum,
    EachQuorum,
    Serial,
    LocalSerial,
    LocalOne,
}

impl Consistency {
    pub fn name(self) -> &'static str {
        match self {
            Consistency::Any => "ANY",
            Consistency::One => "ONE",
            Consistency::Two => "TWO",
            Consistency::Three => "THREE",
            Consistency::Quorum => "QUORUM",
            Consistency::All => "ALL",
            Consistency::LocalQuorum => "LOCAL_QUORUM",
            Consistency::EachQuorum => "EACH_QUORUM",
            Consistency::Serial => "SERIAL",
            Consistency::LocalSerial => "LOCAL_SERIAL",
            Consistency::LocalOne => "LOCAL_ONE",
        }
    }

    pub fn is_serial(self) -> bool {
        matches!(self, Consistency::Serial | Consistency::LocalSerial)
    }
}

/// The replication factor of a keyspace in one datacenter and in total.
pub fn replication_factors(replication: &Replication, local_dc: &str) -> (u32, u32) {
    match replication {
        Replication::Simple { replication_factor } => (*replication_factor, *replication_factor),
        Replication::NetworkTopology { datacenters } => (
            datacenters.get(local_dc).copied().unwrap_or(0),
            datacenters.values().sum(),
        ),
        Replication::Local => (1, 1),
    }
}

fn quorum(rf: u32) -> u32 {
    rf / 2 + 1
}

/// How many replica acknowledgements `cl` needs (`blockFor`), given the local datacenter's
/// and the total replication factors. Writes at `ANY` need one acknowledgement of anything
/// (a hint counts); serial levels need a quorum.
pub fn block_for(cl: Consistency, local_rf: u32, total_rf: u32) -> u32 {
    match cl {
        Consistency::Any | Consistency::One | Consistency::LocalOne => 1,
        Consistency::Two => 2,
        Consistency::Three => 3,
        Consistency::Quorum | Consistency::Serial => quorum(total_rf),
        Consistency::All => total_rf,
        Consistency::LocalQuorum | Consistency::LocalSerial => quorum(local_rf),
        Consistency::EachQuorum => quorum(local_rf),
    }
}

/// Whether the level counts only replicas in the coordinator's datacenter.
pub fn is_local(cl: Consistency) -> bool {
    matches!(
        cl,
        Consistency::LocalOne
            | Consistency::LocalQuorum
            | Consistency::LocalSerial
            | Consistency::EachQuorum
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_for_matches_cassandra() {
        assert_eq!(block_for(Consistency::Quorum, 3, 3), 2);
        assert_eq!(block_for(Consistency::Quorum, 3, 6), 4);
        assert_eq!(block_for(Consistency::LocalQuorum, 3, 6), 2);
        assert_eq!(block_for(Consistency::All, 3, 5), 5);
        assert_eq!(block_for(Consistency::One, 3, 3), 1);
        assert_eq!(block_for(Consistency::Serial, 1, 1), 1);
    }
}
