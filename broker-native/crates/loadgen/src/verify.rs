//! Checking what was acknowledged against what is in the log.
//!
//! With verification on, each value carries a mark right after its 8-byte send-time stamp: the
//! magic `KBv1`, the producer's number (u32 LE) and the record's sequence in its partition for
//! that producer (u64 LE, from 0). The mark is part of the value (16 bytes of the scenario's
//! `messageSize`, not extra bytes), so a marked value needs [`MARKED_VALUE_BYTES`] or more.
//!
//! Producers record the sequences acknowledged per partition as ranges (a run of a million
//! records in order is one range). After the load, [`read_log`] reads every partition of the
//! run's topics from its start to its high watermark and [`PartitionLog`] notes, per producer,
//! which sequences it found, which it found twice and which came after a larger one; [`verdict`]
//! sets these against the acknowledged ranges.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::{FetchRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kbench_client::{Security, SimpleClient};

use crate::batch_reader::{for_each_value, next_offset};
use crate::error::{Error, Result};
use crate::metadata::MetadataClient;
use crate::payload::STAMP_BYTES;

const MAGIC: [u8; 4] = *b"KBv1";
/// Where the mark starts in a value: after the send-time stamp.
pub const MARK_OFFSET: usize = STAMP_BYTES;
pub const MARK_BYTES: usize = 16;
/// The shortest value that carries a mark (stamp and mark).
pub const MARKED_VALUE_BYTES: usize = MARK_OFFSET + MARK_BYTES;
/// Fetches of one partition that may bring nothing new before the reader gives up on it.
const STALLED_FETCHES: u32 = 50;
const FETCH_MAX_BYTES: i32 = 8 << 20;

/// The mark of (producer, sequence), as it follows the send time in a value.
#[inline]
pub fn mark(producer: u32, seq: u64) -> [u8; MARK_BYTES] {
    let mut mark = [0u8; MARK_BYTES];
    mark[..4].copy_from_slice(&MAGIC);
    mark[4..8].copy_from_slice(&producer.to_le_bytes());
    mark[8..].copy_from_slice(&seq.to_le_bytes());
    mark
}

/// Writes the mark of (producer, sequence) into a value of [`MARKED_VALUE_BYTES`] or more.
#[inline]
pub fn write_mark(value: &mut [u8], producer: u32, seq: u64) {
    value[MARK_OFFSET..MARKED_VALUE_BYTES].copy_from_slice(&mark(producer, seq));
}

/// The (producer, sequence) a value is marked with; None for a value too short or not marked.
#[inline]
pub fn mark_of(value: &[u8]) -> Option<(u32, u64)> {
    let mark = value.get(MARK_OFFSET..MARKED_VALUE_BYTES)?;
    if mark[..4] != MAGIC {
        return None;
    }
    let producer = u32::from_le_bytes(mark[4..8].try_into().ok()?);
    let seq = u64::from_le_bytes(mark[8..].try_into().ok()?);
    Some((producer, seq))
}

/// A set of u64 kept as disjoint, merged half-open ranges `[start, end)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranges(BTreeMap<u64, u64>);

impl Ranges {
    pub fn new() -> Ranges {
        Ranges::default()
    }

    /// Adds `[start, end)`, merging with the ranges it touches.
    pub fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let (mut start, mut end) = (start, end);
        // A range that starts at or before `start` and reaches it.
        if let Some((&s, &e)) = self.0.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
                self.0.remove(&s);
            }
        }
        // Ranges that start within `[start, end]`.
        while let Some((&s, &e)) = self.0.range(start..=end).next() {
            end = end.max(e);
            self.0.remove(&s);
        }
        self.0.insert(start, end);
    }

    pub fn contains(&self, x: u64) -> bool {
        self.0.range(..=x).next_back().is_some_and(|(_, &e)| x < e)
    }

    /// How many numbers the set holds.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|(s, e)| e - s).sum()
    }

    /// How many numbers of `[start, end)` the set holds.
    pub fn overlap(&self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let mut n = 0;
        let first = self
            .0
            .range(..=start)
            .next_back()
            .map_or(start, |(&s, _)| s);
        for (&s, &e) in self.0.range(first..end) {
            n += e.min(end).saturating_sub(s.max(start));
        }
        n
    }

    /// How many numbers both sets hold.
    pub fn common(&self, other: &Ranges) -> u64 {
        self.0.iter().map(|(&s, &e)| other.overlap(s, e)).sum()
    }

    /// The ranges, in order.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.0.iter().map(|(&s, &e)| (s, e))
    }

    /// How many ranges (the memory it holds).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What one producer's records in one partition look like in the log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    pub found: Ranges,
    /// Records whose sequence was already found (each copy after the first counts).
    pub duplicated: u64,
    /// Records found after a record with a larger sequence (and not found before).
    pub reordered: u64,
    highest: Option<u64>,
}

/// One partition's log as the checker read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartitionLog {
    /// By producer number; only the run's producers are tracked.
    pub producers: HashMap<u32, Seen>,
    /// Records without a mark of one of the run's producers (not ours, or too short to carry one).
    pub foreign: u64,
}

impl PartitionLog {
    /// Notes a record read at the next offset, with the value it carries. `ours` says which
    /// producer numbers belong to the run: a hostile or foreign mark is counted as foreign.
    pub fn observe(&mut self, value: &[u8], ours: impl Fn(u32) -> bool) {
        match mark_of(value) {
            // The largest sequence is no producer's (it has no successor to end a range with).
            Some((producer, seq)) if ours(producer) && seq < u64::MAX => {
                self.producers.entry(producer).or_default().observe(seq)
            }
            _ => self.foreign += 1,
        }
    }
}

impl Seen {
    fn observe(&mut self, seq: u64) {
        if self.found.contains(seq) {
            self.duplicated += 1;
            return;
        }
        if self.highest.is_some_and(|h| seq < h) {
            self.reordered += 1;
        }
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        self.found.insert(seq, seq + 1);
    }
}

/// The check of one partition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionVerdict {
    pub topic: String,
    pub partition: i32,
    /// Records the run's producers had acknowledged.
    pub acknowledged: u64,
    /// Acknowledged records found in the log.
    pub found: u64,
    /// Acknowledged records absent from the log.
    pub lost: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Records in the log whose send was not acknowledged (failed or unanswered sends that
    /// landed): normal, counted, not judged.
    pub unacknowledged_present: u64,
    /// Records in the log that no producer of the run marked.
    pub foreign: u64,
}

/// Sets the acknowledged ranges of one partition (by producer) against its log.
pub fn verdict(
    topic: &str,
    partition: i32,
    acknowledged: &HashMap<u32, Ranges>,
    log: &PartitionLog,
) -> PartitionVerdict {
    let empty = Seen::default();
    let mut v = PartitionVerdict {
        topic: topic.to_string(),
        partition,
        foreign: log.foreign,
        ..PartitionVerdict::default()
    };
    for (producer, acked) in acknowledged {
        let seen = log.producers.get(producer).unwrap_or(&empty);
        let found = acked.common(&seen.found);
        v.acknowledged += acked.count();
        v.found += found;
        v.lost += acked.count() - found;
    }
    for (producer, seen) in &log.producers {
        let acked = acknowledged
            .get(producer)
            .map_or(0, |a| a.common(&seen.found));
        v.unacknowledged_present += seen.found.count() - acked;
        v.duplicated += seen.duplicated;
        v.reordered += seen.reordered;
    }
    v
}

/// Reads every partition of `topics` from its first offset to its high watermark and notes what
/// the run's producers (`ours`) wrote there. Returns (topic, partition, log) for each partition.
pub async fn read_log(
    bootstrap: &[String],
    security: &Security,
    topics: &[String],
    ours: impl Fn(u32) -> bool,
) -> Result<Vec<(String, i32, PartitionLog)>> {
    let mut metadata = MetadataClient::connect_with(bootstrap, security).await?;
    let cluster = metadata.fetch(topics, Duration::from_secs(10)).await?;
    let version = metadata.versions().pick::<FetchRequest>()?;
    let mut out = vec![];
    // One connection per leader, reused for each partition it leads.
    let mut clients: HashMap<String, SimpleClient> = HashMap::new();
    for topic in &cluster.topics {
        for (index, &leader) in topic.leaders.iter().enumerate() {
            let partition = index as i32;
            let addr = cluster.leader_addr(leader).ok_or_else(|| {
                Error::Protocol(format!("{}:{partition} has no leader", topic.name))
            })?;
            if !clients.contains_key(addr) {
                let client = crate::connect::simple(addr, security).await?;
                clients.insert(addr.to_string(), client);
            }
            let client = clients.get_mut(addr).expect("inserted above");
            let name = TopicName(StrBytes::from_string(topic.name.clone()));
            let mut log = PartitionLog::default();
            let (mut offset, mut stalled) = (0i64, 0u32);
            loop {
                let request = FetchRequest::default()
                    .with_max_wait_ms(0)
                    .with_min_bytes(0)
                    .with_max_bytes(FETCH_MAX_BYTES)
                    .with_topics(vec![FetchTopic::default()
                        .with_topic(name.clone())
                        .with_topic_id(topic.id)
                        .with_partitions(vec![FetchPartition::default()
                            .with_partition(partition)
                            .with_fetch_offset(offset)
                            .with_partition_max_bytes(FETCH_MAX_BYTES)])]);
                let response = client.call(version, &request).await?;
                let data = response
                    .responses
                    .first()
                    .and_then(|t| t.partitions.first())
                    .ok_or_else(|| Error::protocol("a fetch answer without the partition"))?;
                if data.error_code == 1 && offset == 0 {
                    // The log no longer starts at 0: start where it starts now.
                    offset = data.log_start_offset.max(0);
                    continue;
                }
                if data.error_code != 0 {
                    return Err(Error::Kafka {
                        api: "Fetch",
                        code: data.error_code,
                    });
                }
                if offset >= data.high_watermark {
                    break;
                }
                let before = offset;
                if let Some(records) = data.records.as_ref().filter(|r| !r.is_empty()) {
                    for_each_value(records, offset, |_, value| log.observe(value, &ours))?;
                    offset = next_offset(records, offset);
                }
                if offset == before {
                    stalled += 1;
                    if stalled >= STALLED_FETCHES {
                        return Err(Error::Protocol(format!(
                            "{}:{partition}: no record at offset {offset}, below the high watermark {}",
                            topic.name, data.high_watermark
                        )));
                    }
                } else {
                    stalled = 0;
                }
            }
            out.push((topic.name.clone(), partition, log));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(producer: u32, seq: u64) -> Vec<u8> {
        let mut v = vec![0xAB; 40];
        write_mark(&mut v, producer, seq);
        v
    }

    fn log_of(records: &[(u32, u64)]) -> PartitionLog {
        let mut log = PartitionLog::default();
        for &(p, s) in records {
            log.observe(&marked(p, s), |p| p < 4);
        }
        log
    }

    fn acked(ranges: &[(u32, u64, u64)]) -> HashMap<u32, Ranges> {
        let mut out: HashMap<u32, Ranges> = HashMap::new();
        for &(p, s, e) in ranges {
            out.entry(p).or_default().insert(s, e);
        }
        out
    }

    #[test]
    fn ranges_merge_and_count() {
        let mut r = Ranges::new();
        r.insert(10, 20);
        r.insert(30, 40);
        r.insert(20, 30); // bridges both
        assert_eq!(r.ranges().collect::<Vec<_>>(), vec![(10, 40)]);
        r.insert(5, 12);
        r.insert(39, 45);
        r.insert(50, 50); // empty
        assert_eq!(r.ranges().collect::<Vec<_>>(), vec![(5, 45)]);
        r.insert(100, 101);
        assert_eq!((r.count(), r.len()), (41, 2));
        assert!(r.contains(5) && r.contains(44) && r.contains(100));
        assert!(!r.contains(4) && !r.contains(45) && !r.contains(101));
        assert_eq!(r.overlap(0, 7), 2);
        assert_eq!(r.overlap(40, 200), 6);
        let mut other = Ranges::new();
        other.insert(0, 10);
        other.insert(44, 101);
        assert_eq!(r.common(&other), 5 + 1 + 1);
    }

    #[test]
    fn records_in_order_are_one_range() {
        let mut log = PartitionLog::default();
        for seq in 0..100_000 {
            log.observe(&marked(1, seq), |p| p == 1);
        }
        assert_eq!(log.producers[&1].found.len(), 1);
        let v = verdict("t", 0, &acked(&[(1, 0, 100_000)]), &log);
        assert_eq!(
            (v.acknowledged, v.found, v.lost, v.duplicated, v.reordered),
            (100_000, 100_000, 0, 0, 0)
        );
    }

    #[test]
    fn lost_duplicated_reordered_and_unacknowledged() {
        // Producer 0: 0..10 acknowledged; 3 and 4 missing, 6 twice, 9 before 8, 10 and 11
        // (not acknowledged) present. Producer 1: 0..5 acknowledged, nothing in the log.
        let records = [
            (0, 0),
            (0, 1),
            (0, 2),
            (0, 5),
            (0, 6),
            (0, 6),
            (0, 7),
            (0, 9),
            (0, 8),
            (0, 10),
            (0, 11),
        ];
        let log = log_of(&records);
        let v = verdict("t", 3, &acked(&[(0, 0, 10), (1, 0, 5)]), &log);
        assert_eq!(v.acknowledged, 15);
        assert_eq!(v.found, 8);
        assert_eq!(v.lost, 7);
        assert_eq!(v.duplicated, 1);
        assert_eq!(v.reordered, 1);
        assert_eq!(v.unacknowledged_present, 2);
        assert_eq!(v.foreign, 0);
    }

    #[test]
    fn a_replayed_batch_counts_as_duplicates_not_reorders() {
        // 0..4 then a retry of 2..4 landing again, then 4..6.
        let log = log_of(&[
            (2, 0),
            (2, 1),
            (2, 2),
            (2, 3),
            (2, 2),
            (2, 3),
            (2, 4),
            (2, 5),
        ]);
        let v = verdict("t", 0, &acked(&[(2, 0, 6)]), &log);
        assert_eq!((v.lost, v.duplicated, v.reordered), (0, 2, 0));
    }

    #[test]
    fn hostile_short_and_foreign_values_are_counted_as_foreign() {
        let mut log = PartitionLog::default();
        let ours = |p: u32| p == 0;
        log.observe(&[], ours);
        log.observe(&[1, 2, 3], ours);
        log.observe(&marked(0, 7)[..MARKED_VALUE_BYTES - 1], ours); // cut short
        let mut bad_magic = marked(0, 1);
        bad_magic[MARK_OFFSET] ^= 0xff;
        log.observe(&bad_magic, ours);
        log.observe(&marked(77, 0), ours); // a producer the run does not have
        log.observe(&marked(0, u64::MAX), ours); // no producer's: it cannot end a range
        log.observe(&marked(0, 3), ours);
        assert_eq!(log.foreign, 6);
        let v = verdict("t", 0, &acked(&[(0, 0, 1)]), &log);
        assert_eq!((v.lost, v.unacknowledged_present, v.foreign), (1, 1, 6));
    }

    #[test]
    fn a_marked_record_keeps_its_size_send_time_and_the_rest_of_its_value() {
        use crate::batch::{BatchBuilder, Compression, ProducerFields};
        let value: Vec<u8> = (0..100u8).collect();
        let mut builder = BatchBuilder::new(Compression::Lz4, 4096);
        for seq in 0..3 {
            builder.append_marked(0, None, &value, 1e15 + seq as f64, Some(&mark(7, seq)));
        }
        // Too short for a mark: only the send time is written.
        builder.append_marked(0, None, &value[..20], 5.0, Some(&mark(7, 3)));
        let batch = builder.finish(ProducerFields::NONE).unwrap();
        let mut seen = vec![];
        for_each_value(&batch, 0, |offset, v| {
            seen.push((offset, v.len(), crate::payload::stamp_of(v), mark_of(v)));
            if v.len() == 100 {
                assert_eq!(&v[MARKED_VALUE_BYTES..], &value[MARKED_VALUE_BYTES..]);
            }
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![
                (0, 100, Some(1e15), Some((7, 0))),
                (1, 100, Some(1e15 + 1.0), Some((7, 1))),
                (2, 100, Some(1e15 + 2.0), Some((7, 2))),
                (3, 20, Some(5.0), None),
            ]
        );
    }

    #[test]
    fn a_mark_round_trips_at_the_minimum_size() {
        let mut v = vec![0u8; MARKED_VALUE_BYTES];
        write_mark(&mut v, 0xdead_beef, 1 << 40);
        assert_eq!(mark_of(&v), Some((0xdead_beef, 1 << 40)));
        assert_eq!(&v[..MARK_OFFSET], &[0u8; MARK_OFFSET]);
    }
}
