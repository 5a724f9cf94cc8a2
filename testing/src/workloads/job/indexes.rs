//! An Indexed Job's completion indexes (`pkg/controller/job/indexed_job_utils.go`): the ordered
//! intervals `status.completedIndexes` spells (`1,3-5`), and the index a pod carries in its
//! `batch.kubernetes.io/job-completion-index` annotation.

use serde_json::Value;

/// The annotation (and label) naming a pod's completion index.
pub(crate) const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// Disjoint, ordered, non-adjacent closed intervals of indexes (`orderedIntervals`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Intervals(pub(crate) Vec<(i64, i64)>);

impl Intervals {
    /// `parseIndexesFromString`: corrupted intervals are skipped, those from `completions` on
    /// cut off.
    pub(crate) fn parse(text: &str, completions: i64) -> Self {
        let mut result: Vec<(i64, i64)> = Vec::new();
        if text.is_empty() {
            return Self(result);
        }
        for interval in text.split(',') {
            let mut limits = interval.split('-');
            let Some(Ok(first)) = limits.next().map(str::parse::<i64>) else {
                continue;
            };
            if first >= completions {
                break;
            }
            let last = match limits.next() {
                Some(last) => match last.parse::<i64>() {
                    Ok(last) => last.min(completions - 1),
                    Err(_) => continue,
                },
                None => first,
            };
            match result.last_mut() {
                Some(previous) if previous.1 == first - 1 => previous.1 = last,
                _ => result.push((first, last)),
            }
        }
        Self(result)
    }

    /// `withOrderedIndexes`: these intervals and the sorted `indexes`, merged.
    pub(crate) fn with_indexes(&self, indexes: &[i64]) -> Self {
        let mut all: Vec<(i64, i64)> = self.0.clone();
        all.extend(indexes.iter().map(|&i| (i, i)));
        all.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::new();
        for (first, last) in all {
            match merged.last_mut() {
                Some(previous) if previous.1 + 1 >= first => previous.1 = previous.1.max(last),
                _ => merged.push((first, last)),
            }
        }
        Self(merged)
    }

    /// How many indexes the intervals hold.
    pub(crate) fn total(&self) -> i64 {
        self.0.iter().map(|(first, last)| last - first + 1).sum()
    }

    /// Whether `index` is in an interval.
    pub(crate) fn has(&self, index: i64) -> bool {
        self.0
            .iter()
            .any(|&(first, last)| first <= index && index <= last)
    }
}

impl std::fmt::Display for Intervals {
    /// `orderedIntervals.String`: `0-2,4,5` (two adjacent indexes are listed, not ranged).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (first, last)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{first}")?;
            if last > first {
                let sep = if *last == first + 1 { ',' } else { '-' };
                write!(f, "{sep}{last}")?;
            }
        }
        Ok(())
    }
}

/// `getCompletionIndex`: the pod's index, `None` when missing, unparsable or negative.
pub(crate) fn completion_index(pod: &Value) -> Option<i64> {
    pod["metadata"]["annotations"][COMPLETION_INDEX]
        .as_str()?
        .parse::<i64>()
        .ok()
        .filter(|i| *i >= 0)
}

/// A valid index of a Job of `completions`.
pub(crate) fn valid_index(pod: &Value, completions: i64) -> Option<i64> {
    completion_index(pod).filter(|i| *i < completions)
}

/// `firstPendingIndexes`: up to `count` indexes below `completions` that are neither succeeded
/// nor held by a pod in `busy`, lowest first.
pub(crate) fn first_pending(
    succeeded: &Intervals,
    busy: &[i64],
    count: usize,
    completions: i64,
) -> Vec<i64> {
    let mut taken: Vec<i64> = busy.to_vec();
    taken.sort_unstable();
    taken.dedup();
    let non_pending = succeeded.with_indexes(&taken);
    (0..completions)
        .filter(|i| !non_pending.has(*i))
        .take(count)
        .collect()
}

/// `podGenerateNameWithIndex`: `<job>-<index>-`, the job's name cut so that the prefix fits
/// `MaxGeneratedNameLength` (58).
pub(crate) fn generate_name_with_index(job: &str, index: i64) -> String {
    const MAX_GENERATED_NAME_LENGTH: usize = 58;
    let suffix = format!("-{index}-");
    let prefix = format!("{job}{suffix}");
    if prefix.len() > MAX_GENERATED_NAME_LENGTH {
        let keep = MAX_GENERATED_NAME_LENGTH - suffix.len();
        format!("{}{suffix}", &job[..keep.min(job.len())])
    } else {
        prefix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_merge_and_print_as_upstream() {
        // `TestParseIndexesFromString`, `TestIntervalsHaveIndex`, `orderedIntervals.String`.
        let cases = [
            ("", 3, vec![]),
            ("0", 3, vec![(0, 0)]),
            ("0,1,2", 3, vec![(0, 2)]),
            ("0-2,4,5,10-12", 8, vec![(0, 2), (4, 5)]),
            ("a,1-3,5-b,7", 10, vec![(1, 3), (7, 7)]),
            ("1-5", 3, vec![(1, 2)]),
        ];
        for (text, completions, want) in cases {
            assert_eq!(Intervals::parse(text, completions).0, want, "{text}");
        }
        let merged = Intervals(vec![(0, 1), (5, 6)]).with_indexes(&[2, 4, 9]);
        assert_eq!(merged.0, vec![(0, 2), (4, 6), (9, 9)]);
        assert_eq!(merged.total(), 7);
        assert!(merged.has(5) && !merged.has(3) && !merged.has(7));
        assert_eq!(
            Intervals(vec![(0, 2), (4, 5), (7, 7)]).to_string(),
            "0-2,4,5,7"
        );
        assert_eq!(Intervals::default().to_string(), "");
    }

    #[test]
    fn first_pending_indexes_skip_succeeded_and_active_ones() {
        // `TestFirstPendingIndexes`.
        let succeeded = Intervals(vec![(2, 4), (6, 6)]);
        assert_eq!(first_pending(&succeeded, &[0], 3, 10), vec![1, 5, 7]);
        assert_eq!(first_pending(&Intervals::default(), &[], 2, 5), vec![0, 1]);
        assert_eq!(
            first_pending(&Intervals(vec![(0, 4)]), &[], 2, 5),
            Vec::<i64>::new()
        );
        assert_eq!(generate_name_with_index("pi", 3), "pi-3-");
        assert_eq!(generate_name_with_index(&"a".repeat(60), 1).len(), 58);
    }
}
