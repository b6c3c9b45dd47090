//! Produce: each partition's batches to its log (storage validates them and appends them as sent).

use crate::broker::Broker;
use crate::cluster::PartitionRole;
use crate::error::{Error, Result};
use crate::stats::Stats;
use crate::storage::{Appended, Durability, Partition};
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{ProduceRequest, ProduceResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError;
use std::sync::Arc;
use std::time::Duration;

/// `None` when acks=0: the client expects no response at all.
///
/// On a cluster node, each partition must be led here; with acks=all the
/// response waits until every in-sync replica has the batches (the high
/// watermark passes them), the leadership changes, or the request's
/// timeout passes. Under fsync `batch`, acks=1 waits for the leader's sync
/// and acks=all for every in-sync replica's.
pub async fn response(
    broker: &Broker,
    req: ProduceRequest,
    version: i16,
) -> Option<ProduceResponse> {
    start(broker, req, version).finish().await
}

/// A produce request whose batches are appended, waiting for what its
/// acks ask (the sync, the replicas) before its response is ready.
#[must_use]
pub struct Pending {
    acks: i16,
    deadline: tokio::time::Instant,
    responses: Vec<TopicProduceResponse>,
    waits: Vec<Wait>,
}

/// One appended partition's wait.
struct Wait {
    topic: usize,
    partition: usize,
    /// This node's role for it, on a cluster node.
    role: Option<Arc<PartitionRole>>,
    last_offset: i64,
    min_isr: i32,
    durability: Durability,
    /// The role's leadership generation when the batches were appended: a
    /// change after it (seen however late the wait starts, behind earlier
    /// requests of the connection) fails the wait at once.
    generation: u64,
}

/// Validates and appends every partition's batches now (so a connection's
/// requests are appended in the order they came), without waiting for
/// the sync or the replicas.
pub fn start(broker: &Broker, req: ProduceRequest, version: i16) -> Pending {
    Stats::add(&broker.stats.produce_requests, 1);
    let acks_valid = matches!(req.acks, -1..=1);
    let deadline =
        tokio::time::Instant::now() + Duration::from_millis(req.timeout_ms.max(0) as u64);
    let mut waits: Vec<Wait> = Vec::new();
    let mut responses: Vec<TopicProduceResponse> = Vec::with_capacity(req.topic_data.len());
    for (ti, topic) in req.topic_data.into_iter().enumerate() {
        let mut out = TopicProduceResponse::default();
        for (pi, data) in topic.partition_data.into_iter().enumerate() {
            let mut p = PartitionProduceResponse::default();
            p.index = data.index;
            p.log_append_time_ms = -1;
            let partition = broker.log.partition(&topic.name, data.index);
            let lead = broker.admin.leadership(&topic.name, data.index, None);
            let generation = match &lead {
                Ok(Some((role, _))) => *role.subscribe().borrow(),
                _ => 0,
            };
            let result = match (&partition, &lead, data.records) {
                _ if !acks_valid => Err((ResponseError::InvalidRequiredAcks.code(), None)),
                (None, _, _) => Err((ResponseError::UnknownTopicOrPartition.code(), None)),
                (_, Err(code), _) => Err((code.code(), None)),
                (Some(_), _, None) => Err((ResponseError::CorruptMessage.code(), None)),
                (Some(partition), Ok(lead), Some(records)) => {
                    let in_sync = lead.as_ref().map_or(1, |(role, _)| role.isr_len());
                    append(partition, &records, req.acks, in_sync)
                        .map_err(|e| (e.code(), Some(e.to_string())))
                }
            };
            match result {
                Ok((appended, append_time, min_isr, durability)) => {
                    let records = appended.last_offset - appended.base_offset + 1;
                    Stats::add(&broker.stats.records_in, records.max(0) as u64);
                    p.base_offset = appended.base_offset;
                    p.log_append_time_ms = append_time.unwrap_or(-1);
                    let role = match &lead {
                        Ok(Some((role, _))) => {
                            role.after_leader_append();
                            Some(role.clone())
                        }
                        _ => None,
                    };
                    let replicate = req.acks == -1 && role.is_some();
                    if req.acks != 0 && (replicate || !durability.is_ready()) {
                        waits.push(Wait {
                            topic: ti,
                            partition: pi,
                            role,
                            last_offset: appended.last_offset,
                            min_isr,
                            durability,
                            generation,
                        });
                    }
                }
                Err((code, message)) => {
                    p.error_code = code;
                    p.base_offset = -1;
                    if version >= 8 {
                        p.error_message = message.map(StrBytes::from_string);
                    }
                }
            }
            if version >= 5 {
                p.log_start_offset = partition.map_or(-1, |p| p.log_start_offset());
            }
            out.partition_responses.push(p);
        }
        out.name = topic.name;
        responses.push(out);
    }
    Pending {
        acks: req.acks,
        deadline,
        responses,
        waits,
    }
}

impl Pending {
    /// Waits for each partition's sync (fsync `batch`) and, with acks=all
    /// on a cluster node, for the high watermark; `None` for acks=0.
    pub async fn finish(self) -> Option<ProduceResponse> {
        let Pending {
            acks,
            deadline,
            mut responses,
            waits,
        } = self;
        for wait in waits {
            let mut outcome = wait.durability.wait().await.map_err(|e| {
                ResponseError::try_from_code(e.code()).unwrap_or(ResponseError::KafkaStorageError)
            });
            if let (Ok(()), Some(role)) = (&outcome, &wait.role) {
                // The leader's own copy is durable: the high watermark
                // may move (under `batch` it counts durable offsets).
                role.after_leader_append();
                if acks == -1 {
                    outcome = replicated(
                        role,
                        wait.last_offset,
                        wait.min_isr,
                        wait.generation,
                        deadline,
                    )
                    .await;
                }
            }
            if let Err(e) = outcome {
                let p = &mut responses[wait.topic].partition_responses[wait.partition];
                p.error_code = e.code();
                p.base_offset = -1;
                p.log_append_time_ms = -1;
            }
        }
        if acks == 0 {
            return None;
        }
        let mut response = ProduceResponse::default();
        response.responses = responses;
        Some(response)
    }
}

/// Waits until the high watermark passes `last_offset` (every in-sync
/// replica has it); fails if this node's leadership changed since `start`
/// (the generation at append time), if the ISR shrank below `min_isr`
/// meanwhile, or at `deadline`.
async fn replicated(
    role: &PartitionRole,
    last_offset: i64,
    min_isr: i32,
    start: u64,
    deadline: tokio::time::Instant,
) -> std::result::Result<(), ResponseError> {
    let mut hw = role.partition.subscribe();
    let mut generation = role.subscribe();
    loop {
        hw.borrow_and_update();
        if *generation.borrow_and_update() != start {
            return Err(ResponseError::NotLeaderOrFollower);
        }
        if role.partition.high_watermark() > last_offset {
            if (role.isr_len() as i32) < min_isr {
                return Err(ResponseError::NotEnoughReplicasAfterAppend);
            }
            return Ok(());
        }
        tokio::select! {
            changed = hw.changed() => if changed.is_err() {
                return Err(ResponseError::NotLeaderOrFollower);
            },
            _ = generation.changed() => {}
            _ = tokio::time::sleep_until(deadline) => return Err(ResponseError::RequestTimedOut),
        }
    }
}

/// Checks min.insync.replicas against the `in_sync` replicas, then appends
/// as a client's batches (storage applies max.message.bytes and
/// message.timestamp.type).
/// Returns the offsets, for LogAppendTime topics the time stamped on the
/// batches, min.insync.replicas, and the wait for the sync.
fn append(
    partition: &Partition,
    records: &[u8],
    acks: i16,
    in_sync: usize,
) -> Result<(Appended, Option<i64>, i32, Durability)> {
    let config = *partition.topic_config().read().expect("topic config lock");
    if acks == -1 && config.min_insync_replicas as usize > in_sync {
        return Err(Error::kafka(
            ResponseError::NotEnoughReplicas,
            format!(
                "min.insync.replicas is {} but {in_sync} replica(s) are in sync",
                config.min_insync_replicas
            ),
        ));
    }
    let (appended, append_time, durability) = partition.append_from_client(records, &config)?;
    Ok((
        appended,
        append_time,
        config.min_insync_replicas,
        durability,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::broker;
    use crate::storage::batch::test_support::batch;
    use crate::storage::batch::{split_and_validate, ATTRIBUTES_AT, LOG_APPEND_TIME_FLAG};
    use bytes::Bytes;
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::TopicName;

    fn request(topic: &str, partition: i32, records: Vec<u8>, acks: i16) -> ProduceRequest {
        let mut data = PartitionProduceData::default();
        data.index = partition;
        data.records = Some(Bytes::from(records));
        let mut t = TopicProduceData::default();
        t.name = TopicName(StrBytes::from_string(topic.to_string()));
        t.partition_data = vec![data];
        let mut req = ProduceRequest::default();
        req.acks = acks;
        req.timeout_ms = 1000;
        req.topic_data = vec![t];
        req
    }

    fn first(response: &ProduceResponse) -> &PartitionProduceResponse {
        &response.responses[0].partition_responses[0]
    }

    #[tokio::test]
    async fn appends_and_returns_base_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r1 = response(&broker, request("t", 0, batch(5, 10), 1), 7)
            .await
            .unwrap();
        let r2 = response(&broker, request("t", 0, batch(5, 10), -1), 7)
            .await
            .unwrap();
        assert_eq!((first(&r1).error_code, first(&r1).base_offset), (0, 0));
        assert_eq!((first(&r2).error_code, first(&r2).base_offset), (0, 5));
    }

    /// A connection's produce waits start behind its earlier requests: a
    /// leadership change between the append and the start of the wait must
    /// still fail it at once, not leave it until the request's timeout.
    #[tokio::test]
    async fn a_wait_that_starts_after_losing_leadership_fails_at_once() {
        use crate::cluster::controller::new_partition;
        use crate::storage::{Log, LogConfig};
        let dir = tempfile::tempdir().unwrap();
        let log = Log::open(dir.path(), LogConfig::default()).unwrap();
        log.create_topic("t", 1, false).unwrap();
        let role = PartitionRole::new("t", 0, log.partition("t", 0).unwrap(), 1);
        role.apply(&new_partition(vec![1, 2]), 1, 0);
        let at_append = *role.subscribe().borrow();
        role.partition.append(&batch(3, 10)).unwrap();
        role.after_leader_append();
        // Node 2 takes over before this request's wait begins.
        let mut moved = new_partition(vec![2, 1]);
        moved.leader_epoch = 1;
        role.apply(&moved, 2, 0);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        let waited = tokio::time::timeout(
            Duration::from_secs(5),
            replicated(&role, 2, 1, at_append, deadline),
        )
        .await
        .expect("the wait ends without waiting for its deadline");
        assert_eq!(waited, Err(ResponseError::NotLeaderOrFollower));
    }

    #[tokio::test]
    async fn acks_zero_appends_without_a_response() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        assert!(response(&broker, request("t", 0, batch(3, 10), 0), 7)
            .await
            .is_none());
        assert_eq!(broker.log.partition("t", 0).unwrap().high_watermark(), 3);
    }

    #[tokio::test]
    async fn corrupt_batch_is_a_partition_error() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let mut bad = batch(3, 10);
        let last = bad.len() - 1;
        bad[last] ^= 0x55;
        let r = response(&broker, request("t", 0, bad, 1), 7).await.unwrap();
        assert_eq!(first(&r).error_code, ResponseError::CorruptMessage.code());
    }

    #[tokio::test]
    async fn unknown_partition_is_unknown_topic_or_partition() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(&broker, request("t", 4, batch(1, 10), 1), 7)
            .await
            .unwrap();
        assert_eq!(
            first(&r).error_code,
            ResponseError::UnknownTopicOrPartition.code()
        );
    }

    fn set_config(broker: &crate::broker::Broker, pairs: &[(&str, &str)]) {
        let overrides =
            crate::topic_config::validate_all(pairs.iter().map(|(k, v)| (*k, Some(*v)))).unwrap();
        broker
            .log
            .set_topic_overrides("t", overrides, false)
            .unwrap();
    }

    #[tokio::test]
    async fn batch_over_max_message_bytes_is_message_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        set_config(&broker, &[("max.message.bytes", "100")]);
        let r = response(&broker, request("t", 0, batch(5, 100), 1), 9)
            .await
            .unwrap();
        assert_eq!(first(&r).error_code, ResponseError::MessageTooLarge.code());
        assert_eq!(broker.log.partition("t", 0).unwrap().high_watermark(), 0);
    }

    #[tokio::test]
    async fn acks_all_above_min_insync_replicas_is_not_enough_replicas() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        set_config(&broker, &[("min.insync.replicas", "2")]);
        let r = response(&broker, request("t", 0, batch(1, 10), -1), 9)
            .await
            .unwrap();
        assert_eq!(
            first(&r).error_code,
            ResponseError::NotEnoughReplicas.code()
        );
        let r = response(&broker, request("t", 0, batch(1, 10), 1), 9)
            .await
            .unwrap();
        assert_eq!(first(&r).error_code, 0);
    }

    #[tokio::test]
    async fn log_append_time_stamps_batches_and_reports_the_time() {
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        set_config(&broker, &[("message.timestamp.type", "LogAppendTime")]);
        let r = response(&broker, request("t", 0, batch(2, 10), 1), 9)
            .await
            .unwrap();
        assert_eq!(first(&r).error_code, 0);
        let stamped = first(&r).log_append_time_ms;
        assert!(stamped > 1_700_000_000_000);
        let read = broker
            .log
            .partition("t", 0)
            .unwrap()
            .read(0, 1 << 20, true)
            .unwrap();
        let batches = split_and_validate(&read.records).unwrap();
        assert_eq!(batches[0].1.max_timestamp, stamped);
        assert_eq!(
            read.records[ATTRIBUTES_AT + 1] & LOG_APPEND_TIME_FLAG,
            LOG_APPEND_TIME_FLAG
        );
    }

    #[tokio::test]
    async fn duplicate_idempotent_batch_gets_its_first_offset_and_is_not_appended() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        response(&broker, request("t", 0, batch(2, 10), 1), 9)
            .await
            .unwrap();
        let once = idempotent_batch(7, 0, 0, 3);
        let r1 = response(&broker, request("t", 0, once.clone(), -1), 9)
            .await
            .unwrap();
        let r2 = response(&broker, request("t", 0, once, -1), 9)
            .await
            .unwrap();
        assert_eq!((first(&r1).error_code, first(&r1).base_offset), (0, 2));
        assert_eq!((first(&r2).error_code, first(&r2).base_offset), (0, 2));
        assert_eq!(broker.log.partition("t", 0).unwrap().high_watermark(), 5);
    }

    #[tokio::test]
    async fn out_of_order_sequence_is_rejected() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        response(&broker, request("t", 0, idempotent_batch(7, 0, 0, 3), 1), 9)
            .await
            .unwrap();
        let r = response(&broker, request("t", 0, idempotent_batch(7, 0, 9, 1), 1), 9)
            .await
            .unwrap();
        assert_eq!(
            first(&r).error_code,
            ResponseError::OutOfOrderSequenceNumber.code()
        );
        assert_eq!(broker.log.partition("t", 0).unwrap().high_watermark(), 3);
    }

    #[tokio::test]
    async fn stale_epoch_is_invalid_producer_epoch() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        response(&broker, request("t", 0, idempotent_batch(7, 3, 0, 1), 1), 9)
            .await
            .unwrap();
        let r = response(&broker, request("t", 0, idempotent_batch(7, 2, 1, 1), 1), 9)
            .await
            .unwrap();
        assert_eq!(
            first(&r).error_code,
            ResponseError::InvalidProducerEpoch.code()
        );
    }

    #[tokio::test]
    async fn producer_state_is_rebuilt_after_reopen() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let once = idempotent_batch(7, 0, 0, 3);
        {
            let broker = broker(dir.path());
            broker.log.create_topic("t", 1, false).unwrap();
            response(&broker, request("t", 0, batch(1, 10), 1), 9)
                .await
                .unwrap();
            response(&broker, request("t", 0, once.clone(), 1), 9)
                .await
                .unwrap();
            broker.log.flush().unwrap();
        }
        let broker = broker(dir.path());
        let dup = response(&broker, request("t", 0, once, 1), 9)
            .await
            .unwrap();
        assert_eq!((first(&dup).error_code, first(&dup).base_offset), (0, 1));
        assert_eq!(broker.log.partition("t", 0).unwrap().high_watermark(), 4);
        let gap = response(&broker, request("t", 0, idempotent_batch(7, 0, 5, 1), 1), 9)
            .await
            .unwrap();
        assert_eq!(
            first(&gap).error_code,
            ResponseError::OutOfOrderSequenceNumber.code()
        );
    }

    #[tokio::test]
    async fn transactional_batch_is_invalid_txn_state() {
        use crate::storage::producer_state::test_support::producer_batch;
        let dir = tempfile::tempdir().unwrap();
        let broker = broker(dir.path());
        broker.log.create_topic("t", 1, false).unwrap();
        let r = response(
            &broker,
            request("t", 0, producer_batch(7, 0, 0, 1, true), 1),
            9,
        )
        .await
        .unwrap();
        assert_eq!(first(&r).error_code, ResponseError::InvalidTxnState.code());
    }
}
