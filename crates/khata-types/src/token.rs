//! Cassandra's Murmur3 partitioner.
