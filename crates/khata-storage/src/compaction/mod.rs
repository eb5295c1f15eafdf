//! Compaction strategies (being written).
