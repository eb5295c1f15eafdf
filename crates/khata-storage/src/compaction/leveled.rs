//! Leveled compaction (Cassandra's `LeveledCompactionStrategy`, after LevelDB).
//!
//! **Shape.** Level 0 receives flushed sstables, which overlap each other. Every level `L >= 1`
//! is a run of non-overlapping sstables of about `sstable_size_bytes`, and its target size is
//! `fanout_size^L * sstable_size_bytes` (Cassandra's `maxBytesForLevel`; level 0's nominal size
//! is four sstables). A partition is then in at most one sstable per level above 0, so a read
//! touches few files, at the price of rewriting each byte about `fanout_size` times per level.
//! Levels run from 0 to [`MAX_LEVEL_COUNT`]` - 1`, enough for a petabyte of 1 MiB sstables.
//!
//! **What to compact** (Cassandra's `LeveledManifest.getCompactionCandidates`):
//!
//! 1. Each level `L >= 1`, from the highest down, gets a score: the bytes of its sstables not
//!    already compacting divided by its target. The *highest* level scoring above 1.001 is
//!    compacted first: Cassandra's reasoning is that catching up on the high levels keeps the
//!    long-run I/O lowest, where LevelDB's "highest score first" would keep rewriting L1 with
//!    batches of L0 when L0 falls behind. But before a higher level, if level 0 holds more than
//!    [`MAX_COMPACTING_L0`] sstables, size-tiered compaction runs *within* level 0 (outputs stay
//!    in level 0), to bound the number of sstables a read must consult until the levels catch up.
//! 2. From a level `L >= 1`: one sstable, plus the sstables of `L + 1` that overlap it, into
//!    `L + 1`, outputs cut at `sstable_size_bytes`. The sstable is chosen round-robin in key
//!    order: the first one whose first key is after the level's *last compacted key*, wrapping
//!    around; candidates that are compacting or overlap compacting sstables of `L + 1` are
//!    skipped. Cassandra keeps the last compacted key in memory and, on start-up, derives it
//!    as the last key of the newest sstable of `L + 1`. khata keeps no state between picks, so
//!    it always derives it that way, from the highest generation in `L + 1`: the outputs of the
//!    last `L -> L + 1` compaction are the newest sstables there, and the newest of them is the
//!    last one written, which ends at the largest key. The result is the same walk through the
//!    key space.
//! 3. With every level within target: level 0, once it holds [`L0_COMPACTION_TRIGGER`]
//!    uncompacting sstables. The candidates are gathered as Cassandra does: oldest first (by
//!    newest write), each with the level-0 sstables it overlaps, at most
//!    [`MAX_COMPACTING_L0`] (the oldest). If they add up to more than one `sstable_size_bytes`
//!    they go to level 1 together with every level-1 sstable in their key range; otherwise they
//!    are merged within level 0 (Cassandra's rule: not worth rewriting level 1 for less than an
//!    sstable). If level 0 cannot be compacted that way, size-tiering within it is tried.
//! 4. Otherwise, a single-sstable tombstone compaction: from the highest level down, the
//!    sstable with the largest droppable-tombstone ratio worth it, rewritten into its own level.
//!
//! **Differences from Cassandra.** Cassandra compacts level 0 as soon as two of its sstables can
//! be merged; khata waits for [`L0_COMPACTION_TRIGGER`] (four, LevelDB's
//! `kL0_CompactionTrigger`) so that small flushes are not rewritten after every flush. Cassandra
//! also pulls a top-level sstable into a compaction after 25 rounds without compacting the top
//! level ("starved" levels); that needs a round counter and is not done. A major compaction in
//! Cassandra spreads its outputs over the levels; khata's goes to the lowest level whose target
//! holds the whole table. The non-overlap of the outputs within a level is the engine's to
//! check when it installs them; the picker only guarantees it chose every overlapping input.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use khata_types::token::DecoratedKey;

use super::{CompactionTask, SsTableSummary, TaskKind, size_tiered, tombstones, total_bytes};

/// Most level-0 sstables in one compaction (Cassandra's `MAX_COMPACTING_L0`); with more than
/// this many in level 0, it is size-tiered before higher levels are compacted.
pub const MAX_COMPACTING_L0: usize = 32;

/// Uncompacting level-0 sstables needed before level 0 is compacted.
pub const L0_COMPACTION_TRIGGER: usize = 4;

/// Number of levels, 0 to 8 (Cassandra's `MAX_LEVEL_COUNT`, `log10(10^9)`).
pub const MAX_LEVEL_COUNT: u32 = 9;

/// A level is compacted once its score exceeds this (Cassandra's margin over 1.0).
const SCORE_THRESHOLD: f64 = 1.001;

/// The leveled options of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Target size of each sstable in levels >= 1 (Cassandra's `sstable_size_in_mb`).
    pub sstable_size_bytes: u64,
    /// How many times larger each level is than the one before (`fanout_size`).
    pub fanout_size: u32,
}

/// The target size of a level: `fanout^level * sstable_size` (four sstables for level 0),
/// saturating at `u64::MAX`.
pub fn max_bytes_for_level(options: &Options, level: u32) -> u64 {
    if level == 0 {
        return options.sstable_size_bytes.saturating_mul(4);
    }
    u64::from(options.fanout_size)
        .saturating_pow(level)
        .saturating_mul(options.sstable_size_bytes)
}

/// The next leveled task for a table (fully expired sstables are handled by the caller).
pub fn next_task(options: &Options, sstables: &[SsTableSummary]) -> Option<CompactionTask> {
    let levels = Levels::new(sstables);
    let cut = Some(options.sstable_size_bytes);
    for level in (1..levels.count()).rev() {
        if level + 1 >= MAX_LEVEL_COUNT || score(options, &levels, level) <= SCORE_THRESHOLD {
            continue;
        }
        if let Some(task) = size_tiered_in_l0(&levels) {
            return Some(task);
        }
        if let Some(inputs) = candidates_above_l0(&levels, level) {
            return Some(task(inputs, level + 1, cut, TaskKind::Merge));
        }
    }
    if let Some((inputs, output_level)) = candidates_in_l0(options, &levels) {
        return Some(task(inputs, output_level, cut, TaskKind::Merge));
    }
    if let Some(task) = size_tiered_in_l0(&levels) {
        return Some(task);
    }
    droppable_tombstones(sstables).map(|s| task(vec![s], s.level, cut, TaskKind::Merge))
}

/// A major compaction: every sstable into the lowest level >= 1 whose target holds them all,
/// outputs cut at `sstable_size_bytes`. `None` for an empty table, or if any sstable is
/// compacting (its outputs could overlap the major compaction's in the chosen level).
pub fn major_task(options: &Options, sstables: &[SsTableSummary]) -> Option<CompactionTask> {
    if sstables.is_empty() || sstables.iter().any(|s| s.compacting) {
        return None;
    }
    let total = total_bytes(sstables);
    let level = (1..MAX_LEVEL_COUNT)
        .find(|&l| max_bytes_for_level(options, l) >= total)
        .unwrap_or(MAX_LEVEL_COUNT - 1);
    Some(task(
        sstables.iter().collect(),
        level,
        Some(options.sstable_size_bytes),
        TaskKind::Major,
    ))
}

/// The sstables of a table by level.
struct Levels<'a> {
    /// `by_level[l]`: the sstables of level `l`, sorted by first key then generation.
    by_level: Vec<Vec<&'a SsTableSummary>>,
}

impl<'a> Levels<'a> {
    fn new(sstables: &'a [SsTableSummary]) -> Self {
        // A level beyond the last (only from a damaged or foreign manifest) counts as the last,
        // rather than sizing a vector by it.
        let level_of = |s: &SsTableSummary| s.level.min(MAX_LEVEL_COUNT - 1) as usize;
        let count = sstables.iter().map(|s| level_of(s) + 1).max().unwrap_or(1);
        let mut by_level = vec![Vec::new(); count];
        for s in sstables {
            by_level[level_of(s)].push(s);
        }
        for level in &mut by_level {
            level.sort_by(|a, b| {
                a.first_key
                    .cmp(&b.first_key)
                    .then(a.generation.cmp(&b.generation))
            });
        }
        Levels { by_level }
    }

    /// One more than the highest level holding an sstable (at least 1).
    fn count(&self) -> u32 {
        u32::try_from(self.by_level.len()).unwrap_or(u32::MAX)
    }

    fn level(&self, level: u32) -> &[&'a SsTableSummary] {
        self.by_level.get(level as usize).map_or(&[], Vec::as_slice)
    }
}

/// A level's bytes not already compacting over its target.
fn score(options: &Options, levels: &Levels<'_>, level: u32) -> f64 {
    let bytes = total_bytes(
        levels
            .level(level)
            .iter()
            .copied()
            .filter(|s| !s.compacting),
    );
    bytes as f64 / max_bytes_for_level(options, level) as f64
}

/// Size-tiering within level 0 when it holds more than [`MAX_COMPACTING_L0`] sstables.
fn size_tiered_in_l0(levels: &Levels<'_>) -> Option<CompactionTask> {
    let l0 = levels.level(0);
    if l0.len() <= MAX_COMPACTING_L0 {
        return None;
    }
    // Cassandra uses the table's size-tiered options here with fixed thresholds 4 and 32.
    let options = size_tiered::Options {
        min_threshold: 4,
        max_threshold: 32,
        ..size_tiered::Options::default()
    };
    size_tiered::pick(&options, l0.iter().copied())
        .map(|bucket| task(bucket, 0, None, TaskKind::Merge))
}

/// One sstable of `level` (round-robin in key order) and its overlaps in `level + 1`.
fn candidates_above_l0<'a>(levels: &Levels<'a>, level: u32) -> Option<Vec<&'a SsTableSummary>> {
    let sstables = levels.level(level);
    let next = levels.level(level + 1);
    let last_compacted: Option<&DecoratedKey> = next
        .iter()
        .max_by_key(|s| s.generation)
        .map(|s| &s.last_key);
    let start = last_compacted
        .and_then(|last| sstables.iter().position(|s| &s.first_key > last))
        .unwrap_or(0);
    (0..sstables.len())
        .map(|i| sstables[(start + i) % sstables.len()])
        .find_map(|candidate| {
            if candidate.compacting {
                return None;
            }
            let overlapping = overlapping(&candidate.first_key, &candidate.last_key, next);
            if overlapping.iter().any(|s| s.compacting) {
                return None;
            }
            Some(std::iter::once(candidate).chain(overlapping).collect())
        })
}

/// Level-0 candidates (Cassandra's `getCandidatesFor(0)`) and the level they go to.
fn candidates_in_l0<'a>(
    options: &Options,
    levels: &Levels<'a>,
) -> Option<(Vec<&'a SsTableSummary>, u32)> {
    let l0 = levels.level(0);
    if l0.iter().filter(|s| !s.compacting).count() < L0_COMPACTION_TRIGGER {
        return None;
    }
    let compacting: Vec<&SsTableSummary> = l0.iter().copied().filter(|s| s.compacting).collect();
    let compacting_range = key_range(&compacting);
    let touches_compacting = |s: &SsTableSummary| {
        compacting_range.is_some_and(|(first, last)| s.first_key <= *last && *first <= s.last_key)
    };

    let mut age_sorted: Vec<&SsTableSummary> = l0.to_vec();
    age_sorted.sort_by_key(|s| (s.max_timestamp, s.generation));
    let mut remaining: BTreeSet<u64> = l0.iter().map(|s| s.generation).collect();
    let mut candidates: Vec<&SsTableSummary> = Vec::new();
    for &sstable in &age_sorted {
        if candidates
            .iter()
            .any(|c| c.generation == sstable.generation)
        {
            continue;
        }
        let overlapped: Vec<&SsTableSummary> = age_sorted
            .iter()
            .copied()
            .filter(|s| {
                s.generation == sstable.generation
                    || (remaining.contains(&s.generation) && s.overlaps(sstable))
            })
            .collect();
        if overlapped.iter().any(|s| s.compacting) {
            continue;
        }
        for s in overlapped {
            if !touches_compacting(s) && !candidates.iter().any(|c| c.generation == s.generation) {
                candidates.push(s);
            }
            remaining.remove(&s.generation);
        }
        if candidates.len() > MAX_COMPACTING_L0 {
            candidates.sort_by_key(|s| (s.max_timestamp, s.generation));
            candidates.truncate(MAX_COMPACTING_L0);
            break;
        }
    }

    let mut output_level = 0;
    if total_bytes(candidates.iter().copied()) > options.sstable_size_bytes {
        let (first, last) = key_range(&candidates)?;
        let l1 = overlapping(first, last, levels.level(1));
        if l1.iter().any(|s| s.compacting)
            || compacting
                .iter()
                .any(|c| c.first_key <= *last && *first <= c.last_key)
        {
            return None;
        }
        candidates.extend(l1);
        output_level = 1;
    }
    (candidates.len() >= 2).then_some((candidates, output_level))
}

/// From the highest level down, the uncompacting sstable with the largest droppable ratio
/// that is worth a tombstone compaction.
fn droppable_tombstones(sstables: &[SsTableSummary]) -> Option<&SsTableSummary> {
    tombstones::worth_dropping(sstables).max_by(|a, b| {
        a.level
            .cmp(&b.level)
            .then(
                a.droppable_tombstone_ratio
                    .total_cmp(&b.droppable_tombstone_ratio),
            )
            .then(Reverse(a.generation).cmp(&Reverse(b.generation)))
    })
}

/// The sstables of `sstables` with a key in `[first, last]`.
fn overlapping<'a>(
    first: &DecoratedKey,
    last: &DecoratedKey,
    sstables: &[&'a SsTableSummary],
) -> Vec<&'a SsTableSummary> {
    sstables
        .iter()
        .copied()
        .filter(|s| s.first_key <= *last && *first <= s.last_key)
        .collect()
}

/// The smallest first key and largest last key of a set of sstables.
fn key_range<'a>(sstables: &[&'a SsTableSummary]) -> Option<(&'a DecoratedKey, &'a DecoratedKey)> {
    let first = sstables.iter().map(|s| &s.first_key).min()?;
    let last = sstables.iter().map(|s| &s.last_key).max()?;
    Some((first, last))
}

fn task(
    inputs: Vec<&SsTableSummary>,
    output_level: u32,
    max_output_bytes: Option<u64>,
    kind: TaskKind,
) -> CompactionTask {
    CompactionTask::new(
        inputs.iter().map(|s| s.generation),
        output_level,
        max_output_bytes,
        kind,
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{MIB, at_level};
    use super::*;

    const SIZE: u64 = 160 * MIB;

    fn options() -> Options {
        Options {
            sstable_size_bytes: SIZE,
            fanout_size: 10,
        }
    }

    /// Flushed sstable `generation` covering `first..=last`; higher generations hold newer writes.
    fn flushed(generation: u64, size: u64, first: i64, last: i64) -> SsTableSummary {
        SsTableSummary {
            max_timestamp: generation as i64 * 1_000,
            ..at_level(generation, size, 0, first, last)
        }
    }

    /// `count` non-overlapping full sstables in `level`, each spanning `width` tokens from 0,
    /// generations from `first_generation`.
    fn run(level: u32, first_generation: u64, count: u64, width: i64) -> Vec<SsTableSummary> {
        (0..count)
            .map(|i| {
                let first = i as i64 * width;
                at_level(first_generation + i, SIZE, level, first, first + width - 1)
            })
            .collect()
    }

    #[test]
    fn level_targets_follow_the_fanout() {
        assert_eq!(max_bytes_for_level(&options(), 0), 4 * SIZE);
        assert_eq!(max_bytes_for_level(&options(), 1), 10 * SIZE);
        assert_eq!(max_bytes_for_level(&options(), 2), 100 * SIZE);
        assert_eq!(max_bytes_for_level(&options(), 40), u64::MAX);
    }

    #[test]
    fn l0_with_four_sstables_goes_to_l1_with_the_overlapping_l1_sstables() {
        let mut sstables = vec![
            flushed(10, 50 * MIB, 0, 100),
            flushed(11, 50 * MIB, 50, 150),
            flushed(12, 50 * MIB, 0, 60),
            flushed(13, 50 * MIB, 120, 200),
        ];
        sstables.extend([
            at_level(1, SIZE, 1, 0, 40),
            at_level(2, SIZE, 1, 41, 90),
            at_level(3, SIZE, 1, 300, 400),
        ]);
        let task = next_task(&options(), &sstables).unwrap();
        assert_eq!(task.inputs, vec![1, 2, 10, 11, 12, 13]);
        assert_eq!(
            (task.output_level, task.max_output_bytes, task.kind),
            (1, Some(SIZE), TaskKind::Merge)
        );
    }

    #[test]
    fn l0_with_three_sstables_waits() {
        let sstables: Vec<_> = (1..=3).map(|g| flushed(g, SIZE, 0, 100)).collect();
        assert_eq!(next_task(&options(), &sstables), None);
    }

    #[test]
    fn small_l0_sstables_are_merged_within_l0() {
        let mut sstables: Vec<_> = (1..=4).map(|g| flushed(g, MIB, 0, 100)).collect();
        sstables.push(at_level(9, SIZE, 1, 0, 100));
        let task = next_task(&options(), &sstables).unwrap();
        assert_eq!(task.inputs, vec![1, 2, 3, 4]);
        assert_eq!(task.output_level, 0);
    }

    #[test]
    fn l0_waits_while_an_overlapping_l1_sstable_is_compacting() {
        let mut sstables: Vec<_> = (1..=4).map(|g| flushed(g, SIZE, 0, 100)).collect();
        let mut busy = at_level(9, SIZE, 1, 0, 100);
        busy.compacting = true;
        sstables.push(busy);
        assert_eq!(next_task(&options(), &sstables), None);
    }

    #[test]
    fn l0_leaves_out_sstables_overlapping_a_compacting_one() {
        let mut sstables: Vec<_> = (1..=5)
            .map(|g| flushed(g, MIB, (g as i64) * 1_000, (g as i64) * 1_000 + 10))
            .collect();
        sstables[0].compacting = true;
        sstables.push(flushed(6, MIB, 1_005, 1_006)); // overlaps the compacting one
        let task = next_task(&options(), &sstables).unwrap();
        assert_eq!(task.inputs, vec![2, 3, 4, 5]);
    }

    #[test]
    fn at_most_32_oldest_l0_sstables_at_once() {
        let mut sstables: Vec<_> = (1..=40).map(|g| flushed(g, 10 * MIB, 0, 100)).collect();
        sstables.push(at_level(100, SIZE, 1, 0, 100));
        let task = next_task(&options(), &sstables).unwrap();
        let mut expected: Vec<u64> = (1..=32).collect();
        expected.push(100);
        assert_eq!(task.inputs, expected);
        assert_eq!(task.output_level, 1);
    }

    #[test]
    fn level_over_target_compacts_one_sstable_with_its_overlaps_in_the_next_level() {
        // L1: 11 full sstables (1760 MiB > 1600 MiB target), tokens 0..1100 in steps of 100.
        let mut sstables = run(1, 1, 11, 100);
        // L2: 150-token sstables; the newest (30) ends at 149, so L1 resumes after it.
        sstables.extend([
            at_level(30, SIZE, 2, 0, 149),
            at_level(20, SIZE, 2, 150, 299),
            at_level(21, SIZE, 2, 300, 449),
        ]);
        let task = next_task(&options(), &sstables).unwrap();
        // First L1 sstable starting after 149 is [200, 299]; it overlaps L2's [150, 299].
        assert_eq!(task.inputs, vec![3, 20]);
        assert_eq!((task.output_level, task.max_output_bytes), (2, Some(SIZE)));
    }

    #[test]
    fn round_robin_wraps_around_and_starts_at_the_beginning_without_history() {
        let mut sstables = run(1, 1, 11, 100);
        assert_eq!(next_task(&options(), &sstables).unwrap().inputs, vec![1]);
        // The newest L2 sstable ends past every L1 sstable: wrap to the first.
        sstables.push(at_level(50, SIZE, 2, 5_000, 6_000));
        assert_eq!(next_task(&options(), &sstables).unwrap().inputs, vec![1]);
        // One ending at 550: resume at [600, 699].
        sstables.push(at_level(51, SIZE, 2, 500, 550));
        assert_eq!(next_task(&options(), &sstables).unwrap().inputs, vec![7]);
    }

    #[test]
    fn candidates_overlapping_compacting_sstables_are_skipped() {
        // 12 sstables in L1: still over target with the first one compacting.
        let mut sstables = run(1, 1, 12, 100);
        sstables[0].compacting = true;
        let mut busy = at_level(40, SIZE, 2, 100, 150);
        busy.compacting = true;
        sstables.push(busy);
        sstables.push(at_level(41, SIZE, 2, 5_000, 6_000)); // newest L2 sstable: wrap to the start
        // [0, 99] is compacting and [100, 199] overlaps the compacting L2 sstable.
        assert_eq!(next_task(&options(), &sstables).unwrap().inputs, vec![3]);
    }

    #[test]
    fn the_highest_level_over_target_goes_first() {
        let mut sstables = run(1, 1, 11, 100);
        sstables.extend(run(2, 100, 101, 10));
        let task = next_task(&options(), &sstables).unwrap();
        assert_eq!(task.output_level, 3);
        assert_eq!(task.inputs.len(), 1);
    }

    #[test]
    fn levels_beyond_the_last_count_as_the_last() {
        let sstables = [at_level(1, SIZE, u32::MAX, 0, 10)];
        assert_eq!(next_task(&options(), &sstables), None);
    }

    #[test]
    fn a_level_at_its_target_is_left_alone() {
        assert_eq!(next_task(&options(), &run(1, 1, 10, 100)), None);
    }

    #[test]
    fn l0_far_behind_is_size_tiered_before_higher_levels() {
        let mut sstables: Vec<_> = (1..=40).map(|g| flushed(g, 10 * MIB, 0, 100)).collect();
        sstables.extend(run(1, 100, 11, 100));
        let task = next_task(&options(), &sstables).unwrap();
        assert_eq!(task.inputs, (1..=32).collect::<Vec<_>>());
        assert_eq!((task.output_level, task.max_output_bytes), (0, None));
    }

    #[test]
    fn tombstone_heavy_sstable_is_rewritten_in_its_level() {
        let mut sstables = run(1, 1, 3, 100);
        sstables[1].droppable_tombstone_ratio = 0.6;
        let task = next_task(&options(), &sstables).unwrap();
        assert_eq!((task.inputs, task.output_level), (vec![2], 1));
    }

    #[test]
    fn major_goes_to_the_lowest_level_that_holds_everything() {
        let mut sstables = run(1, 1, 11, 100);
        sstables.push(flushed(50, SIZE, 0, 10));
        let task = major_task(&options(), &sstables).unwrap();
        assert_eq!(task.inputs.len(), 12);
        assert_eq!(
            (task.output_level, task.max_output_bytes, task.kind),
            (2, Some(SIZE), TaskKind::Major)
        );
        assert_eq!(
            major_task(&options(), &sstables[..2]).unwrap().output_level,
            1
        );
        sstables[0].compacting = true;
        assert_eq!(major_task(&options(), &sstables), None);
        assert_eq!(major_task(&options(), &[]), None);
    }
}
