//! The recorder's series cache: bounded, least recently used first out, with an index by object
//! UID for [`forget`](SeriesCache::forget).
//!
//! A series that leaves the cache while the server still lacks some of its count is *parked*
//! rather than dropped: the recorder's sweep (and `flush()`) writes its count, then retires it.
//! An evicted series that is published to again before that is taken back (its count continues);
//! a forgotten one is not (the next occurrence is a new event).
//!
//! The cache is guarded by a synchronous mutex that is never held across an `.await`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use super::event::EventKind;
use super::series::{Series, SeriesKey, elapsed};

#[derive(Debug)]
struct Entry {
    series: Arc<Series>,
    /// Position in `order`.
    tick: u64,
    last_used: Timestamp,
}

/// The live series of one recorder.
#[derive(Debug)]
pub(crate) struct SeriesCache {
    max: usize,
    entries: HashMap<Arc<SeriesKey>, Entry>,
    /// Entries by last use, oldest first.
    order: BTreeMap<u64, Arc<SeriesKey>>,
    next_tick: u64,
    by_uid: HashMap<String, HashSet<Arc<SeriesKey>>>,
    /// Evicted series with an unwritten count, taken back if published to again.
    evicted: HashMap<Arc<SeriesKey>, Arc<Series>>,
    /// Forgotten series with an unwritten count, never taken back.
    forgotten: Vec<Arc<Series>>,
}

impl SeriesCache {
    /// A cache of at most `max` live series (at least one) and as many parked ones.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            entries: HashMap::new(),
            order: BTreeMap::new(),
            next_tick: 0,
            by_uid: HashMap::new(),
            evicted: HashMap::new(),
            forgotten: Vec::new(),
        }
    }

    /// Live series.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Parked series (evicted or forgotten, count not yet written).
    pub(crate) fn parked_len(&self) -> usize {
        self.evicted.len() + self.forgotten.len()
    }

    /// The series of `key`, marked as used at `now`: the live one, else an evicted one taken back,
    /// else a new one made by `make`. Evicts the least recently used series beyond the bound.
    pub(crate) fn get_or_insert_with(
        &mut self,
        key: &SeriesKey,
        now: Timestamp,
        make: impl FnOnce(Arc<SeriesKey>) -> Series,
    ) -> Arc<Series> {
        if let Some(entry) = self.entries.get_mut(key) {
            self.order.remove(&entry.tick);
            entry.tick = self.next_tick;
            entry.last_used = now;
            self.next_tick += 1;
            self.order.insert(entry.tick, entry.series.key.clone());
            return entry.series.clone();
        }
        let series = match self.evicted.remove(key) {
            Some(series) => series,
            None => Arc::new(make(Arc::new(key.clone()))),
        };
        self.insert(series.clone(), now);
        while self.entries.len() > self.max {
            let Some((_, oldest)) = self.order.first_key_value() else {
                break;
            };
            let oldest = oldest.clone();
            if let Some(series) = self.remove(&oldest) {
                self.park(series, true);
            }
        }
        series
    }

    fn insert(&mut self, series: Arc<Series>, now: Timestamp) {
        let key = series.key.clone();
        let tick = self.next_tick;
        self.next_tick += 1;
        self.order.insert(tick, key.clone());
        if let Some(uid) = key.uid() {
            self.by_uid
                .entry(uid.to_owned())
                .or_default()
                .insert(key.clone());
        }
        self.entries.insert(
            key,
            Entry {
                series,
                tick,
                last_used: now,
            },
        );
    }

    fn remove(&mut self, key: &SeriesKey) -> Option<Arc<Series>> {
        let entry = self.entries.remove(key)?;
        self.order.remove(&entry.tick);
        if let Some(uid) = key.uid()
            && let Some(keys) = self.by_uid.get_mut(uid)
        {
            keys.remove(key);
            if keys.is_empty() {
                self.by_uid.remove(uid);
            }
        }
        Some(entry.series)
    }

    /// Takes `series` out of the cache (publishing to it failed before anything was stored) if
    /// it is still the live series of its key; retires it when it was.
    pub(crate) fn discard(&mut self, series: &Arc<Series>) {
        if self
            .entries
            .get(&series.key)
            .is_some_and(|entry| Arc::ptr_eq(&entry.series, series))
        {
            self.remove(&series.key);
            series.retire();
        }
    }

    /// Parks a series that left the cache, or retires it if the server has all of its count.
    /// Parked series are bounded like live ones; beyond that the count is dropped (only when the
    /// events API has been failing for a long time) and a warning logged.
    fn park(&mut self, series: Arc<Series>, adoptable: bool) {
        let needs_write = match series.state.try_lock() {
            Ok(state) => state.needs_write(),
            // A publish is under way: let the sweep wait for it.
            Err(_) => true,
        };
        if !needs_write {
            series.retire();
        } else if self.parked_len() >= self.max {
            tracing::warn!(
                reason = %series.key.reason,
                namespace = %series.namespace,
                "too many event series with unwritten counts; dropping one (is the events API failing?)"
            );
            series.retire();
        } else if adoptable {
            self.evicted.insert(series.key.clone(), series);
        } else {
            self.forgotten.push(series);
        }
    }

    /// Evicts the series not used for `idle` or longer (parking those with unwritten counts).
    pub(crate) fn evict_idle(&mut self, now: Timestamp, idle: Duration) {
        while let Some((_, oldest)) = self.order.first_key_value() {
            let oldest = oldest.clone();
            let Some(entry) = self.entries.get(&oldest) else {
                break;
            };
            if elapsed(entry.last_used, now) < idle {
                break;
            }
            if let Some(series) = self.remove(&oldest) {
                self.park(series, true);
            }
        }
    }

    /// Ends the series about the object `uid` (only failure series if `failures_only`): the next
    /// occurrence is a new event. Their unwritten counts are still written.
    pub(crate) fn forget(&mut self, uid: &str, failures_only: bool) {
        let matches = |key: &SeriesKey| !failures_only || key.kind == EventKind::Failure;
        let keys: Vec<_> = self
            .by_uid
            .get(uid)
            .map(|keys| keys.iter().filter(|k| matches(k)).cloned().collect())
            .unwrap_or_default();
        for key in keys {
            if let Some(series) = self.remove(&key) {
                self.park(series, false);
            }
        }
        let parked: Vec<_> = self
            .evicted
            .keys()
            .filter(|key| key.uid() == Some(uid) && matches(key))
            .cloned()
            .collect();
        for key in parked {
            if let Some(series) = self.evicted.remove(&key) {
                self.forgotten.push(series);
            }
        }
    }

    /// Live series that may have unwritten counts.
    pub(crate) fn dirty(&self) -> Vec<Arc<Series>> {
        self.entries
            .values()
            .filter(|entry| entry.series.is_dirty())
            .map(|entry| entry.series.clone())
            .collect()
    }

    /// Parked series.
    pub(crate) fn parked(&self) -> Vec<Arc<Series>> {
        self.evicted
            .values()
            .chain(&self.forgotten)
            .cloned()
            .collect()
    }

    /// Removes `series` from the parked ones once its count is written. Returns whether it was
    /// parked (the caller then retires it); `false` if it was taken back meanwhile.
    pub(crate) fn unpark(&mut self, series: &Arc<Series>) -> bool {
        if self
            .evicted
            .get(&series.key)
            .is_some_and(|parked| Arc::ptr_eq(parked, series))
        {
            self.evicted.remove(&series.key);
            return true;
        }
        let before = self.forgotten.len();
        self.forgotten.retain(|parked| !Arc::ptr_eq(parked, series));
        before != self.forgotten.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;
    use crate::events::series::Stored;
    use k8s_openapi::api::core::v1::ObjectReference;

    fn t(secs: u64) -> Timestamp {
        Timestamp::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn object(uid: &str) -> ObjectReference {
        ObjectReference {
            kind: Some("Rollout".into()),
            namespace: Some("demo".into()),
            name: Some(format!("web-{uid}")),
            uid: Some(uid.into()),
            ..Default::default()
        }
    }

    fn key(event: &Event, uid: &str) -> SeriesKey {
        SeriesKey::new(event, &object(uid))
    }

    fn get(cache: &mut SeriesCache, event: &Event, uid: &str, now: Timestamp) -> Arc<Series> {
        cache.get_or_insert_with(&key(event, uid), now, |key| {
            Series::new(key, &object(uid), None, now)
        })
    }

    /// Marks `series` as having an occurrence the server lacks.
    fn count_unwritten(series: &Series) {
        let mut state = series.state.try_lock().unwrap();
        state.count += 1;
        series.set_dirty(true);
    }

    /// Marks `series` as fully written.
    fn written(series: &Series) {
        let mut state = series.state.try_lock().unwrap();
        state.count += 1;
        state.stored = Stored::Yes;
        state.written = state.count;
    }

    #[test]
    fn a_repeat_finds_the_live_series() {
        let mut cache = SeriesCache::new(10);
        let event = Event::normal("Applied", "Apply");
        let first = get(&mut cache, &event, "u1", t(0));
        let again = get(&mut cache, &event, "u1", t(1));
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn one_hundred_thousand_distinct_series_stay_within_the_cap() {
        let mut cache = SeriesCache::new(10_000);
        for i in 0..100_000u64 {
            let event = Event::normal("Applied", "Apply").with_note(format!("pass {i}"));
            let series = get(&mut cache, &event, "u1", t(i));
            written(&series);
            assert!(cache.len() <= 10_000);
        }
        assert_eq!(cache.len(), 10_000);
        assert_eq!(cache.parked_len(), 0, "fully written series are dropped");
        // The most recent ones are the ones kept.
        let recent = Event::normal("Applied", "Apply").with_note("pass 99999");
        assert!(cache.entries.contains_key(&key(&recent, "u1")));
        let old = Event::normal("Applied", "Apply").with_note("pass 0");
        assert!(!cache.entries.contains_key(&key(&old, "u1")));
        assert_eq!(cache.by_uid["u1"].len(), 10_000);
    }

    #[test]
    fn least_recently_used_is_evicted_first() {
        let mut cache = SeriesCache::new(2);
        let (a, b, c) = (
            Event::normal("A", "X"),
            Event::normal("B", "X"),
            Event::normal("C", "X"),
        );
        let sa = get(&mut cache, &a, "u", t(0));
        written(&sa);
        written(&get(&mut cache, &b, "u", t(1)));
        get(&mut cache, &a, "u", t(2)); // a is now more recent than b
        get(&mut cache, &c, "u", t(3));
        assert!(cache.entries.contains_key(&key(&a, "u")));
        assert!(!cache.entries.contains_key(&key(&b, "u")));
        assert!(!sa.is_retired());
    }

    #[test]
    fn an_evicted_series_with_an_unwritten_count_is_parked_and_taken_back() {
        let mut cache = SeriesCache::new(1);
        let (a, b) = (Event::normal("A", "X"), Event::normal("B", "X"));
        let sa = get(&mut cache, &a, "u", t(0));
        count_unwritten(&sa);
        let sb = get(&mut cache, &b, "u", t(1));
        assert_eq!(cache.parked_len(), 1);
        assert!(!sa.is_retired());
        let again = get(&mut cache, &a, "u", t(2));
        assert!(Arc::ptr_eq(&sa, &again), "the count continues");
        assert_eq!(cache.parked_len(), 0, "b has nothing to write");
        assert!(sb.is_retired());
    }

    #[test]
    fn idle_series_are_evicted_after_the_window() {
        let mut cache = SeriesCache::new(10);
        let (a, b) = (Event::normal("A", "X"), Event::normal("B", "X"));
        let sa = get(&mut cache, &a, "u", t(0));
        written(&sa);
        let sb = get(&mut cache, &b, "u", t(30));
        count_unwritten(&sb);
        cache.evict_idle(t(59), Duration::from_secs(60));
        assert_eq!(cache.len(), 2);
        cache.evict_idle(t(60), Duration::from_secs(60));
        assert_eq!(cache.len(), 1);
        assert!(sa.is_retired());
        cache.evict_idle(t(90), Duration::from_secs(60));
        assert_eq!(cache.len(), 0);
        assert_eq!(cache.parked().len(), 1, "b's count must still be written");
        assert!(cache.unpark(&sb));
        assert_eq!(cache.parked_len(), 0);
    }

    #[test]
    fn forget_failures_resets_only_failure_series_of_that_object() {
        let mut cache = SeriesCache::new(10);
        let failure = Event::warning("ReconcileFailed", "Reconcile").as_failure();
        let regular = Event::warning("ReconcileFailed", "Reconcile");
        let f1 = get(&mut cache, &failure, "u1", t(0));
        written(&f1);
        written(&get(&mut cache, &regular, "u1", t(0)));
        written(&get(&mut cache, &failure, "u2", t(0)));
        cache.forget("u1", true);
        assert!(f1.is_retired());
        assert!(!cache.entries.contains_key(&key(&failure, "u1")));
        assert!(cache.entries.contains_key(&key(&regular, "u1")));
        assert!(cache.entries.contains_key(&key(&failure, "u2")));
        let recurrence = get(&mut cache, &failure, "u1", t(1));
        assert!(
            !Arc::ptr_eq(&f1, &recurrence),
            "a recurrence is a new series"
        );
        cache.forget("u1", false);
        assert!(!cache.by_uid.contains_key("u1"));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn a_forgotten_series_keeps_its_unwritten_count_but_is_not_taken_back() {
        let mut cache = SeriesCache::new(10);
        let failure = Event::warning("ReconcileFailed", "Reconcile").as_failure();
        let old = get(&mut cache, &failure, "u1", t(0));
        count_unwritten(&old);
        cache.forget("u1", true);
        assert_eq!(cache.parked().len(), 1);
        let recurrence = get(&mut cache, &failure, "u1", t(1));
        assert!(!Arc::ptr_eq(&old, &recurrence));
        assert!(cache.unpark(&old));
    }

    #[test]
    fn parked_series_are_bounded_too() {
        let mut cache = SeriesCache::new(2);
        for i in 0..10 {
            let event = Event::normal("A", "X").with_note(i.to_string());
            count_unwritten(&get(&mut cache, &event, "u", t(i)));
        }
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.parked_len(), 2);
    }
}
