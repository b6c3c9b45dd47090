//! Fetch: whole batches straight from the segments, with long polling
//! (max_wait_ms / min_bytes) and the response/partition byte limits.
//!
//! On a cluster node only the leader serves a partition. A consumer reads
//! up to the high watermark; a follower (replica id set) reads up to the
//! log end, and its fetch offset tells the leader how far it has got,
//! which moves the high watermark and, once caught up, brings it back into
//! the ISR. A follower whose last fetched epoch ends earlier on the leader
//! is told where its log diverges instead of getting records.

use crate::broker::Broker;
use crate::cluster::fetcher::DURABLE_TAG;
use crate::stats::Stats;
use crate::storage::Partition;
use bytes::Bytes;
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::{FetchRequest, FetchResponse};
use kafka_protocol::ResponseError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The durable position one of our followers reports beside its fetch
/// offset (`cluster::fetcher::DURABLE_TAG`); `None` from any other client
/// or when malformed.
fn reported_durable(p: &kafka_protocol::messages::fetch_request::FetchPartition) -> Option<i64> {
    let bytes = p.unknown_tagged_fields.get(&DURABLE_TAG)?;
    Some(i64::from_be_bytes(bytes.as_ref().try_into().ok()?))
}

/// The most a fetch response carries (Kafka's broker setting `fetch.max.bytes`, whose default
/// this is): a request asking for more gets this much, so one fetch holds at most this in memory.
pub const FETCH_MAX_BYTES: usize = 55 << 20;

/// One requested partition, resolved against the log.
struct Wanted {
    index: i32,
    fetch_offset: i64,
    max_bytes: usize,
    partition: Result<Arc<Partition>, i16>,
    /// For a follower whose log diverges: the leader's (epoch, end offset).
    diverging: Option<(i32, i64)>,
}

pub async fn response(broker: &Broker, req: FetchRequest, version: i16) -> FetchResponse {
    Stats::add(&broker.stats.fetch_requests, 1);
    let mut response = FetchResponse::default();
    // We never create fetch sessions (session id 0 declines, KIP-227), so a
    // client naming one is talking about a session we do not have.
    if req.session_id != 0 {
        response.error_code = ResponseError::FetchSessionIdNotFound.code();
        return response;
    }
    let follower =
        (req.replica_id.0 >= 0 && broker.admin.serves_followers()).then_some(req.replica_id.0);
    let now = crate::clock::now_ms();
    // A partition named twice is read once, as Kafka keys a fetch by partition: each read can be
    // as large as the partition's max bytes, so a few bytes an entry must not buy a copy each
    // (an 8 KB request naming one partition 500 times got a 500 MB answer).
    let mut named = std::collections::HashSet::new();
    let topics: Vec<(_, Vec<Wanted>)> = req
        .topics
        .into_iter()
        .map(|topic| {
            let resolved = broker.log.topic(&topic.topic);
            let name = topic.topic.clone();
            let wanted = topic
                .partitions
                .into_iter()
                .filter(|p| named.insert((name.clone(), p.partition)))
                .map(|p| {
                    let mut diverging = None;
                    let partition = resolved
                        .as_ref()
                        .and_then(|t| {
                            usize::try_from(p.partition)
                                .ok()
                                .and_then(|i| t.partitions.get(i))
                        })
                        .cloned()
                        .ok_or(ResponseError::UnknownTopicOrPartition.code())
                        .and_then(|partition| {
                            let asked = (version >= 9).then_some(p.current_leader_epoch);
                            let lead = broker
                                .admin
                                .leadership(&topic.topic, p.partition, asked)
                                .map_err(|e| e.code())?;
                            if let (Some(follower), Some((role, _))) = (follower, lead) {
                                diverging =
                                    divergence(&partition, p.last_fetched_epoch, p.fetch_offset);
                                if diverging.is_none() {
                                    broker.admin.follower_fetched(
                                        &role,
                                        follower,
                                        p.fetch_offset,
                                        reported_durable(&p).unwrap_or(p.fetch_offset),
                                        now,
                                    );
                                }
                            }
                            Ok(partition)
                        });
                    Wanted {
                        index: p.partition,
                        fetch_offset: p.fetch_offset,
                        max_bytes: p.partition_max_bytes.max(0) as usize,
                        partition,
                        diverging,
                    }
                })
                .collect();
            (topic.topic, wanted)
        })
        .collect();

    let mut watchers: Vec<watch::Receiver<i64>> = topics
        .iter()
        .flat_map(|(_, wanted)| wanted.iter())
        .filter_map(|w| {
            w.partition.as_ref().ok().map(|p| match follower {
                Some(_) => p.subscribe_log_end(),
                None => p.subscribe(),
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_millis(req.max_wait_ms.max(0) as u64);
    let response_max = if req.max_bytes <= 0 {
        FETCH_MAX_BYTES
    } else {
        (req.max_bytes as usize).min(FETCH_MAX_BYTES)
    };
    let min_bytes = req.min_bytes.max(0) as usize;

    loop {
        for w in watchers.iter_mut() {
            w.borrow_and_update();
        }
        let (responses, total, any_error) =
            read_all(&topics, response_max, version, follower.is_some());
        if total >= min_bytes.max(1)
            || any_error
            || Instant::now() >= deadline
            || watchers.is_empty()
        {
            response.responses = responses;
            return response;
        }
        let changed = any_changed(&mut watchers);
        if tokio::time::timeout_at(deadline, changed).await.is_err() {
            let (responses, _, _) = read_all(&topics, response_max, version, follower.is_some());
            response.responses = responses;
            return response;
        }
    }
}

/// Reads every partition once. Only the first non-empty partition may
/// exceed the limits, by one whole batch (KIP-74).
fn read_all(
    topics: &[(kafka_protocol::messages::TopicName, Vec<Wanted>)],
    response_max: usize,
    version: i16,
    replica: bool,
) -> (Vec<FetchableTopicResponse>, usize, bool) {
    let mut total = 0usize;
    let mut any_error = false;
    let responses = topics
        .iter()
        .map(|(name, wanted)| {
            let mut topic = FetchableTopicResponse::default();
            topic.topic = name.clone();
            topic.partitions = wanted
                .iter()
                .map(|w| {
                    let mut out = PartitionData::default();
                    out.partition_index = w.index;
                    out.aborted_transactions = Some(Vec::new());
                    out.records = Some(Bytes::new());
                    let partition = match &w.partition {
                        Ok(p) => p,
                        Err(code) => {
                            any_error = true;
                            out.error_code = *code;
                            out.high_watermark = -1;
                            return out;
                        }
                    };
                    out.high_watermark = partition.high_watermark();
                    out.last_stable_offset = out.high_watermark;
                    if version >= 5 {
                        out.log_start_offset = partition.log_start_offset();
                    }
                    if let Some((epoch, end_offset)) = w.diverging {
                        out.diverging_epoch.epoch = epoch;
                        out.diverging_epoch.end_offset = end_offset;
                        // Answer at once: the follower truncates, then fetches.
                        any_error = true;
                        return out;
                    }
                    let budget = w.max_bytes.min(response_max.saturating_sub(total));
                    if budget == 0 && total > 0 {
                        return out;
                    }
                    let read = if replica {
                        partition.read_replica(w.fetch_offset, budget)
                    } else {
                        partition.read(w.fetch_offset, budget, total == 0)
                    };
                    match read {
                        Ok(read) => {
                            total += read.records.len();
                            out.high_watermark = read.high_watermark;
                            out.last_stable_offset = read.high_watermark;
                            out.records = Some(read.records);
                        }
                        Err(e) => {
                            any_error = true;
                            out.error_code = e.code();
                        }
                    }
                    out
                })
                .collect();
            topic
        })
        .collect();
    (responses, total, any_error)
}

/// Where a follower's log diverges from the leader's (KIP-320): its last
/// fetched epoch is unknown here, or ends here before its fetch offset.
fn divergence(
    partition: &Partition,
    last_fetched_epoch: i32,
    fetch_offset: i64,
) -> Option<(i32, i64)> {
    if last_fetched_epoch < 0 {
        return None;
    }
    let (epoch, end_offset) = partition.end_offset_for_epoch(last_fetched_epoch);
    if epoch < 0 {
        // No epoch this old here: everything the follower has diverges.
        return Some((-1, partition.log_start_offset()));
    }
    (epoch < last_fetched_epoch || end_offset < fetch_offset).then_some((epoch, end_offset))
}

/// Resolves when any watched partition has had an append.
fn any_changed(watchers: &mut [watch::Receiver<i64>]) -> impl Future<Output = ()> + '_ {
    type Changed<'a> =
        Pin<Box<dyn Future<Output = Result<(), watch::error::RecvError>> + Send + 'a>>;
    let mut futures: Vec<Changed<'_>> = watchers
        .iter_mut()
        .map(|w| Box::pin(w.changed()) as Changed<'_>)
        .collect();
    // Ready on a change, or when a partition went away (Err): either way
    // the caller re-reads.
    std::future::poll_fn(move |cx| {
        if futures.iter_mut().any(|f| f.as_mut().poll(cx).is_ready()) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use crate::storage::batch::{split_and_validate, test_support::batch};
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::protocol::StrBytes;

    fn request(
        topic: &str,
        partitions: &[(i32, i64, i32)],
        max_wait_ms: i32,
        min_bytes: i32,
        max_bytes: i32,
    ) -> FetchRequest {
        let mut t = FetchTopic::default();
        t.topic = TopicName(StrBytes::from_string(topic.to_string()));
        t.partitions = partitions
            .iter()
            .map(|(index, offset, max)| {
                let mut p = FetchPartition::default();
                p.partition = *index;
                p.fetch_offset = *offset;
                p.partition_max_bytes = *max;
                p
            })
            .collect();
        let mut req = FetchRequest::default();
        req.max_wait_ms = max_wait_ms;
        req.min_bytes = min_bytes;
        req.max_bytes = max_bytes;
        req.session_epoch = -1;
        req.topics = vec![t];
        req
    }

    fn records(response: &FetchResponse, partition: usize) -> Bytes {
        response.responses[0].partitions[partition]
            .records
            .clone()
            .unwrap()
    }

    #[tokio::test]
    async fn returns_appended_batches_and_high_watermark() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let p = broker.log.partition("t", 0).unwrap();
        p.append(&batch(3, 10)).unwrap();
        p.append(&batch(2, 10)).unwrap();
        let response = response(&broker, request("t", &[(0, 3, 1 << 20)], 0, 1, 1 << 20), 11).await;
        let part = &response.responses[0].partitions[0];
        assert_eq!(part.error_code, 0);
        assert_eq!(part.high_watermark, 5);
        let batches = split_and_validate(&records(&response, 0)).unwrap();
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].1.base_offset, 3);
    }

    #[tokio::test]
    async fn a_partition_named_many_times_is_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 2, false).unwrap();
        broker
            .log
            .partition("t", 0)
            .unwrap()
            .append(&batch(3, 1000))
            .unwrap();
        let mut asked = vec![(0, 0, 1 << 20); 500];
        asked.push((1, 0, 1 << 20));
        let response = response(&broker, request("t", &asked, 0, 1, i32::MAX), 11).await;
        let partitions = &response.responses[0].partitions;
        assert_eq!(
            partitions
                .iter()
                .map(|p| p.partition_index)
                .collect::<Vec<_>>(),
            [0, 1]
        );
        assert_eq!(split_and_validate(&records(&response, 0)).unwrap().len(), 1);
    }

    #[tokio::test]
    async fn first_batch_larger_than_limits_is_still_returned_whole() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 2, false).unwrap();
        let big = batch(1, 5000);
        broker.log.partition("t", 0).unwrap().append(&big).unwrap();
        broker.log.partition("t", 1).unwrap().append(&big).unwrap();
        let response = response(
            &broker,
            request("t", &[(0, 0, 100), (1, 0, 100)], 0, 1, 100),
            11,
        )
        .await;
        assert_eq!(records(&response, 0).len(), big.len());
        assert!(records(&response, 1).is_empty());
    }

    #[tokio::test]
    async fn long_poll_wakes_on_append() {
        let dir = tempfile::tempdir().unwrap();
        let broker = Arc::new(broker(dir.path()));
        broker.log.create_topic("t", 1, false).unwrap();
        let fetcher = {
            let broker = broker.clone();
            tokio::spawn(async move {
                response(
                    &broker,
                    request("t", &[(0, 0, 1 << 20)], 60_000, 1, 1 << 20),
                    11,
                )
                .await
            })
        };
        tokio::task::yield_now().await;
        broker
            .log
            .partition("t", 0)
            .unwrap()
            .append(&batch(2, 10))
            .unwrap();
        let response = fetcher.await.unwrap();
        assert_eq!(split_and_validate(&records(&response, 0)).unwrap().len(), 1);
    }

    #[tokio::test]
    async fn unmet_min_bytes_returns_what_there_is_at_max_wait() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        broker
            .log
            .partition("t", 0)
            .unwrap()
            .append(&batch(2, 10))
            .unwrap();
        let req = request("t", &[(0, 0, 1 << 20)], 20, 1 << 20, 1 << 20);
        let response = response(&broker, req, 11).await;
        assert_eq!(split_and_validate(&records(&response, 0)).unwrap().len(), 1);
    }

    #[tokio::test]
    async fn empty_partition_returns_empty_records_at_max_wait() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let response = response(
            &broker,
            request("t", &[(0, 0, 1 << 20)], 20, 1, 1 << 20),
            11,
        )
        .await;
        let part = &response.responses[0].partitions[0];
        assert_eq!((part.error_code, part.high_watermark), (0, 0));
        assert!(records(&response, 0).is_empty());
    }

    #[tokio::test]
    async fn offset_past_the_end_is_offset_out_of_range() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let response = response(
            &broker,
            request("t", &[(0, 10, 1 << 20)], 0, 1, 1 << 20),
            11,
        )
        .await;
        assert_eq!(
            response.responses[0].partitions[0].error_code,
            ResponseError::OffsetOutOfRange.code()
        );
    }

    #[tokio::test]
    async fn unknown_topic_is_a_partition_error() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        let response = response(&broker, request("nope", &[(0, 0, 100)], 0, 1, 100), 11).await;
        assert_eq!(
            response.responses[0].partitions[0].error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
    }
}
