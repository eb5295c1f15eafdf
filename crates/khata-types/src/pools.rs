//! What `system_views.thread_pools` and `khata admin tpstats` show of one of the node's kinds
//! of work (Cassandra's thread pools and their stages): how many run now, how many wait, how
//! many are done, and how many had to wait for room.

/// One pool at one moment, with Cassandra's columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolStats {
    /// Cassandra's name where khata does the same work (`CompactionExecutor`,
    /// `MemtableFlushWriter`, `Native-Transport-Requests`).
    pub name: String,
    /// Tasks running now.
    pub active: u64,
    /// At most this many run at once (`None`: no fixed bound).
    pub active_limit: Option<u64>,
    /// Tasks waiting to run.
    pub pending: u64,
    /// Tasks finished since the node started.
    pub completed: u64,
    /// Tasks waiting for room now (a full queue, a limit reached).
    pub blocked: u64,
    /// Tasks that ever had to wait for room.
    pub blocked_all_time: u64,
}
