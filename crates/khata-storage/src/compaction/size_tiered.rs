//! Size-tiered compaction (Cassandra's `SizeTieredCompactionStrategy`, the default).
//!
//! The idea: merge sstables of about the same size, so each byte is rewritten about once per
//! "tier" (log base `min_threshold` of the table's size) and merges never pay to rewrite a huge
//! sstable for the sake of a small one.
//!
//! 1. **Buckets.** The uncompacting sstables are taken in ascending size. Each joins the first
//!    existing bucket whose average size `avg` satisfies `bucket_low * avg < size <
//!    bucket_high * avg` (strictly, as in Cassandra), or where both it and the bucket's average
//!    are below `min_sstable_size_bytes` (all small sstables tier together: freshly flushed
//!    ones vary a lot in size and are cheap to merge). Otherwise it starts a new bucket. The
//!    bucket's average is updated as members join.
//! 2. **The most interesting bucket** (Cassandra's `mostInterestingBucket`). Each bucket is cut
//!    to `max_threshold` sstables, and only buckets with at least `min_threshold` left qualify.
//!    Cassandra keeps the hottest sstables (reads per second per key) when cutting and picks
//!    the bucket with the most reads, breaking ties by average size. khata has no read meters,
//!    which is Cassandra's case for unread tables: every hotness is zero, so the cut keeps the
//!    *smallest* sstables and the bucket with the *smallest average size* wins (the intent
//!    stated in Cassandra's comparator: "compacting the smallest sstables first"). Compacting
//!    small sstables first keeps the sstable count, and so read amplification, down soonest.
//! 3. **Otherwise, tombstones.** With no qualifying bucket, the largest sstable worth a
//!    single-sstable tombstone compaction is rewritten alone (see [`super::tombstones`]).
//!
//! Outputs are written at level 0 as one sstable. Leveled compaction reuses the bucketing for
//! its level 0 when that falls behind, and time-window compaction for its newest window.

use khata_types::schema::CompactionStrategy;

use super::{CompactionTask, SsTableSummary, tombstones, uncompacting};

/// The size-tiered options of a table (or the defaults, where another strategy borrows them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Fewest sstables worth merging (Cassandra's `min_threshold`, at least 2).
    pub min_threshold: usize,
    /// Most sstables merged at once (Cassandra's `max_threshold`).
    pub max_threshold: usize,
    /// An sstable joins a bucket if its size is above `bucket_low` times the bucket's average...
    pub bucket_low: f64,
    /// ...and below `bucket_high` times it.
    pub bucket_high: f64,
    /// sstables below this size all share a bucket.
    pub min_sstable_size_bytes: u64,
}

impl Default for Options {
    /// Cassandra's defaults: 4, 32, 0.5, 1.5, 50 MiB.
    fn default() -> Self {
        Options::from_strategy(&CompactionStrategy::size_tiered())
            .expect("size_tiered() is SizeTiered")
    }
}

impl Options {
    /// The options of a `SizeTiered` strategy; `None` for another strategy.
    pub fn from_strategy(strategy: &CompactionStrategy) -> Option<Self> {
        match *strategy {
            CompactionStrategy::SizeTiered {
                min_threshold,
                max_threshold,
                bucket_low,
                bucket_high,
                min_sstable_size_bytes,
            } => Some(Options {
                min_threshold,
                max_threshold,
                bucket_low,
                bucket_high,
                min_sstable_size_bytes,
            }),
            _ => None,
        }
    }

    /// `min_threshold` as used: merging fewer than two sstables is not a merge.
    fn min(&self) -> usize {
        self.min_threshold.max(2)
    }

    /// `max_threshold` as used: never below the minimum.
    fn max(&self) -> usize {
        self.max_threshold.max(self.min())
    }
}

/// Groups sstables of similar size into buckets, each sorted by ascending size (then
/// generation). Deterministic: buckets are tried in the order they were created.
pub fn buckets<'a>(
    options: &Options,
    sstables: impl IntoIterator<Item = &'a SsTableSummary>,
) -> Vec<Vec<&'a SsTableSummary>> {
    let mut sorted: Vec<&SsTableSummary> = sstables.into_iter().collect();
    sorted.sort_by_key(|s| (s.size_bytes, s.generation));

    struct Bucket<'a> {
        members: Vec<&'a SsTableSummary>,
        total_bytes: u128,
    }
    impl Bucket<'_> {
        fn average(&self) -> u64 {
            // The members are non-empty and each fits in a u64, so the average does too.
            u64::try_from(self.total_bytes / self.members.len() as u128).unwrap_or(u64::MAX)
        }
    }

    let mut buckets: Vec<Bucket<'a>> = Vec::new();
    for sstable in sorted {
        let size = sstable.size_bytes;
        let joins = |bucket: &Bucket<'_>| {
            let average = bucket.average();
            let similar = size as f64 > average as f64 * options.bucket_low
                && (size as f64) < average as f64 * options.bucket_high;
            let both_small =
                size < options.min_sstable_size_bytes && average < options.min_sstable_size_bytes;
            similar || both_small
        };
        match buckets.iter_mut().find(|b| joins(b)) {
            Some(bucket) => {
                bucket.members.push(sstable);
                bucket.total_bytes += u128::from(size);
            }
            None => buckets.push(Bucket {
                members: vec![sstable],
                total_bytes: u128::from(size),
            }),
        }
    }
    buckets.into_iter().map(|b| b.members).collect()
}

/// The bucket to compact next (Cassandra's `mostInterestingBucket` without read hotness): each
/// bucket cut to its `max_threshold` smallest sstables, those with at least `min_threshold`
/// left, and of these the one with the smallest average size (ties: the lowest generation).
pub fn most_interesting_bucket<'a>(
    options: &Options,
    buckets: Vec<Vec<&'a SsTableSummary>>,
) -> Option<Vec<&'a SsTableSummary>> {
    buckets
        .into_iter()
        .map(|mut bucket| {
            bucket.sort_by_key(|s| (s.size_bytes, s.generation));
            bucket.truncate(options.max());
            bucket
        })
        .filter(|bucket| bucket.len() >= options.min())
        .min_by_key(|bucket| {
            let total: u128 = bucket.iter().map(|s| u128::from(s.size_bytes)).sum();
            let lowest_generation = bucket.iter().map(|s| s.generation).min();
            (total / bucket.len() as u128, lowest_generation)
        })
}

/// The sstables size-tiering would merge next among `sstables` (compacting ones excluded), or
/// `None`. Used by time-window and leveled compaction too.
pub fn pick<'a>(
    options: &Options,
    sstables: impl IntoIterator<Item = &'a SsTableSummary>,
) -> Option<Vec<&'a SsTableSummary>> {
    let buckets = buckets(options, sstables.into_iter().filter(|s| !s.compacting));
    most_interesting_bucket(options, buckets)
}

/// The next size-tiered task for a table (fully expired sstables are handled by the caller).
pub fn next_task(options: &Options, sstables: &[SsTableSummary]) -> Option<CompactionTask> {
    if let Some(bucket) = pick(options, uncompacting(sstables)) {
        return Some(CompactionTask::merge(&bucket));
    }
    // Cassandra rewrites the largest sstable worth a tombstone compaction.
    tombstones::worth_dropping(sstables)
        .max_by_key(|s| (s.size_bytes, std::cmp::Reverse(s.generation)))
        .map(|s| CompactionTask::merge(&[s]))
}

#[cfg(test)]
mod tests {
    use super::super::TaskKind;
    use super::super::test_support::{MIB, sstable};
    use super::*;

    fn options() -> Options {
        Options::default()
    }

    /// sstables with the given sizes in MiB, generations from `first_generation`.
    fn sized(first_generation: u64, sizes_mib: &[u64]) -> Vec<SsTableSummary> {
        sizes_mib
            .iter()
            .zip(first_generation..)
            .map(|(&size, generation)| sstable(generation, size * MIB, 0, 1_000))
            .collect()
    }

    fn bucket_lengths(sizes_mib: &[u64]) -> Vec<usize> {
        let options = Options {
            min_sstable_size_bytes: 0,
            ..Options::default()
        };
        buckets(&options, &sized(1, sizes_mib))
            .iter()
            .map(Vec::len)
            .collect()
    }

    fn inputs(task: Option<CompactionTask>) -> Vec<u64> {
        task.map(|t| t.inputs).unwrap_or_default()
    }

    #[test]
    fn four_similar_small_sstables_make_one_task() {
        let sstables = sized(1, &[1, 2, 3, 4]);
        let task = next_task(&options(), &sstables).unwrap();
        assert_eq!(task.inputs, vec![1, 2, 3, 4]);
        assert_eq!(
            (task.output_level, task.max_output_bytes, task.kind),
            (0, None, TaskKind::Merge)
        );
    }

    #[test]
    fn three_sstables_are_below_min_threshold() {
        assert_eq!(next_task(&options(), &sized(1, &[1, 2, 3])), None);
    }

    #[test]
    fn dissimilar_sizes_do_not_mix() {
        // Three of about 100 MiB and one of 1 GiB: no bucket reaches four.
        assert_eq!(
            next_task(&options(), &sized(1, &[100, 110, 120, 1024])),
            None
        );
        assert_eq!(bucket_lengths(&[100, 110, 120, 1024]), vec![3, 1]);
    }

    #[test]
    fn bucket_bounds_are_strict() {
        // Average 100 MiB: 150 MiB is not below 1.5 times it. (sstables are taken in ascending
        // size, so with bucket_low <= 1 the lower bound never excludes one.)
        assert_eq!(bucket_lengths(&[100, 150]), vec![1, 1]);
        assert_eq!(bucket_lengths(&[100, 149]), vec![2]);
        // The average moves as members join: 100 and 140 average 120, so 175 joins, 190 not.
        assert_eq!(bucket_lengths(&[100, 140, 175]), vec![3]);
        assert_eq!(bucket_lengths(&[100, 140, 190]), vec![2, 1]);
    }

    #[test]
    fn two_tiers_each_compact_separately_smallest_first() {
        let mut sstables = sized(1, &[100, 105, 110, 115]);
        sstables.extend(sized(11, &[1000, 1050, 1100, 1150]));
        assert_eq!(inputs(next_task(&options(), &sstables)), vec![1, 2, 3, 4]);
        // With the small tier busy, the large one goes next.
        for s in &mut sstables[..4] {
            s.compacting = true;
        }
        assert_eq!(
            inputs(next_task(&options(), &sstables)),
            vec![11, 12, 13, 14]
        );
    }

    #[test]
    fn small_sstables_share_a_bucket_however_different() {
        // All below the 50 MiB min_sstable_size.
        assert_eq!(
            inputs(next_task(&options(), &sized(1, &[1, 10, 40, 49]))),
            vec![1, 2, 3, 4]
        );
    }

    #[test]
    fn max_threshold_caps_the_task_at_the_smallest() {
        // 40 sstables of 100..139 MiB, generations in reverse size order.
        let sstables: Vec<_> = (0..40u64)
            .map(|i| sstable(100 - i, (100 + i) * MIB, 0, 10))
            .collect();
        let task = next_task(&options(), &sstables).unwrap();
        assert_eq!(task.inputs.len(), 32);
        let expected: Vec<u64> = (69..=100).collect(); // the 32 smallest
        assert_eq!(task.inputs, expected);
    }

    #[test]
    fn compacting_sstables_are_never_picked() {
        let mut sstables = sized(1, &[1, 2, 3, 4]);
        sstables[2].compacting = true;
        assert_eq!(next_task(&options(), &sstables), None);
        sstables.extend(sized(5, &[5]));
        assert_eq!(inputs(next_task(&options(), &sstables)), vec![1, 2, 4, 5]);
    }

    #[test]
    fn custom_thresholds_apply() {
        let options = Options {
            min_threshold: 2,
            max_threshold: 3,
            ..Options::default()
        };
        assert_eq!(
            inputs(next_task(&options, &sized(1, &[1, 2, 3, 4]))),
            vec![1, 2, 3]
        );
        let degenerate = Options {
            min_threshold: 0,
            max_threshold: 0,
            ..Options::default()
        };
        assert_eq!(
            inputs(next_task(&degenerate, &sized(1, &[1, 2, 3]))),
            vec![1, 2]
        );
    }

    #[test]
    fn tombstone_heavy_sstable_is_compacted_alone_when_nothing_else_to_do() {
        let mut sstables = sized(1, &[100, 1000]);
        sstables[0].droppable_tombstone_ratio = 0.5;
        // It overlaps sstable 2 whose data is as old: not worth it.
        assert_eq!(next_task(&options(), &sstables), None);
        sstables[1].min_timestamp = sstables[0].max_timestamp + 1;
        assert_eq!(inputs(next_task(&options(), &sstables)), vec![1]);
    }

    #[test]
    fn strategy_options_are_read_from_the_schema() {
        let strategy = CompactionStrategy::SizeTiered {
            min_threshold: 6,
            max_threshold: 8,
            bucket_low: 0.25,
            bucket_high: 2.0,
            min_sstable_size_bytes: 1,
        };
        let options = Options::from_strategy(&strategy).unwrap();
        assert_eq!((options.min_threshold, options.max_threshold), (6, 8));
        assert_eq!(Options::from_strategy(&CompactionStrategy::leveled()), None);
    }
}
