//! The segments of one partition, by base offset, as Apache Kafka's
//! `LocalLog` keeps them: the active one, rolls, reads that cross segment
//! ends, the oldest ones removed by retention and later ones by truncation.
//! The map's lock is held only to look up, add or remove segments, never
//! across file I/O; what to do with a removed segment is the caller's.

use super::super::retention::SegmentFacts;
use super::super::segment::Segment;
use crate::error::Result;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, RwLock};

#[derive(Debug)]
pub(super) struct LocalLog {
    /// Never empty.
    segments: RwLock<BTreeMap<i64, Arc<Segment>>>,
}

impl LocalLog {
    pub fn new(segments: BTreeMap<i64, Arc<Segment>>) -> LocalLog {
        LocalLog {
            segments: RwLock::new(segments),
        }
    }

    pub fn size_bytes(&self) -> u64 {
        self.segments
            .read()
            .expect("segments lock")
            .values()
            .map(|s| s.size())
            .sum()
    }

    /// The segment appends go to: the one with the highest base offset.
    pub fn active(&self) -> Arc<Segment> {
        self.segments
            .read()
            .expect("segments lock")
            .values()
            .next_back()
            .expect("one segment")
            .clone()
    }

    /// Adds a segment rolled at `base_offset`.
    pub fn insert(&self, base_offset: i64, segment: Arc<Segment>) {
        self.segments
            .write()
            .expect("segments lock")
            .insert(base_offset, segment);
    }

    /// Whole batches from `offset` below `end_offset`, crossing to the
    /// next segment when one has nothing from `offset`.
    pub fn read_range(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
        end_offset: i64,
    ) -> Result<Bytes> {
        let mut segment = self.segment_for(offset);
        while let Some(current) = segment {
            let records = current.read_below(offset, max_bytes, min_one, end_offset)?;
            if !records.is_empty() {
                return Ok(records);
            }
            segment = self.segment_after(current.base_offset());
        }
        Ok(Bytes::new())
    }

    fn segment_for(&self, offset: i64) -> Option<Arc<Segment>> {
        let segments = self.segments.read().expect("segments lock");
        segments
            .range(..=offset)
            .next_back()
            .map(|(_, s)| s.clone())
    }

    fn segment_after(&self, base_offset: i64) -> Option<Arc<Segment>> {
        let segments = self.segments.read().expect("segments lock");
        segments
            .range((Bound::Excluded(base_offset), Bound::Unbounded))
            .next()
            .map(|(_, s)| s.clone())
    }

    /// The segments whose largest timestamp reaches `timestamp`, oldest
    /// first.
    pub fn reaching_timestamp(&self, timestamp: i64) -> Vec<Arc<Segment>> {
        self.segments
            .read()
            .expect("segments lock")
            .values()
            .filter(|s| s.max_timestamp() >= timestamp)
            .cloned()
            .collect()
    }

    /// Removes the oldest segments, as many as `count` picks from every
    /// segment's size and largest timestamp, and tells `new_start` the
    /// base offset of the first one left, under the map's lock. A partition
    /// with only its active segment (which retention never deletes) costs a
    /// read lock: a retention pass over 120K such partitions takes no write
    /// lock and allocates nothing.
    pub fn remove_oldest(
        &self,
        count: impl FnOnce(&[SegmentFacts]) -> usize,
        new_start: impl FnOnce(i64),
    ) -> Vec<Arc<Segment>> {
        if self.count() < 2 {
            return Vec::new();
        }
        let mut segments = self.segments.write().expect("segments lock");
        let facts: Vec<SegmentFacts> = segments
            .values()
            .map(|s| SegmentFacts {
                size: s.size(),
                max_timestamp: s.max_timestamp(),
            })
            .collect();
        let count = count(&facts);
        let bases: Vec<i64> = segments.keys().take(count).copied().collect();
        let doomed = bases.iter().filter_map(|b| segments.remove(b)).collect();
        if let Some(first) = segments.keys().next() {
            new_start(*first);
        }
        doomed
    }

    /// For truncation at `offset`: the segment holding it (or the first
    /// one) stays, and every later one is taken out of the map.
    pub fn split_at(&self, offset: i64) -> (Arc<Segment>, Vec<Arc<Segment>>) {
        let mut segments = self.segments.write().expect("segments lock");
        let base = segments
            .range(..=offset)
            .next_back()
            .or_else(|| segments.iter().next())
            .map(|(base, _)| *base)
            .expect("one segment");
        let later = segments.split_off(&(base + 1));
        (segments[&base].clone(), later.into_values().collect())
    }

    pub fn count(&self) -> usize {
        self.segments.read().expect("segments lock").len()
    }

    /// Base offsets, oldest first.
    pub fn base_offsets(&self) -> Vec<i64> {
        self.segments
            .read()
            .expect("segments lock")
            .keys()
            .copied()
            .collect()
    }

    /// Every segment, oldest first, as they are now.
    pub fn all(&self) -> Vec<Arc<Segment>> {
        self.segments
            .read()
            .expect("segments lock")
            .values()
            .cloned()
            .collect()
    }
}
