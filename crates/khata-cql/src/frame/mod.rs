//! The CQL native protocol frames (being written).
