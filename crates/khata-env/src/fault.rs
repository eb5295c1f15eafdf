//! A fault-injecting in-memory file system (to be written).
