//! `make-seeds CORPUS [BROKER_DATA_DIR]`: writes the derived seeds next to
//! the captured request frames in CORPUS/decode:
//! - CORPUS/decode/synthetic-*: a default request of every API version the
//!   broker advertises (clients send only the versions they prefer);
//! - CORPUS/batch/*: the records of each partition in captured Produce
//!   requests;
//! - CORPUS/recovery/*: segments built by appending those records to a
//!   partition with the broker's storage (crashed, cleanly shut down,
//!   sealed, with a torn tail), and the segment files a real broker left
//!   in BROKER_DATA_DIR;
//! - CORPUS/journal/*: journal files holding those records, whole and torn.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Encodable, StrBytes};
use kbench_broker_core::apis::SupportedApis;
use kbench_broker_core::codec::{decode_request, Request};
use kbench_broker_core::storage::segment::{index_file_name, log_file_name, time_index_file_name};
use kbench_broker_fuzz::recovery::{self, CLEAN_SHUTDOWN, INDEX_FILES, SEALED};
use kbench_broker_fuzz::{batch, journal, partition, scratch};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Recovery seeds stay small, so that AFL++ runs them fast.
const MAX_SEGMENT_BYTES: usize = 8 << 10;
/// `recovery::INDEX_INTERVALS[2]` (100 bytes), as flag bits 6-7.
const INTERVAL_100: u8 = 2 << 6;

fn main() {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let Some(corpus) = args.next() else {
        eprintln!("usage: make-seeds CORPUS [BROKER_DATA_DIR]");
        std::process::exit(2);
    };
    let data_dir = args.next();
    for target in ["decode", "batch", "recovery", "journal"] {
        std::fs::create_dir_all(corpus.join(target)).expect("creating the corpus folders");
    }
    let synthetic = write_synthetic(&corpus.join("decode"));
    let produced = produce_records(&corpus.join("decode"));
    let mut batch_seeds = 0;
    for (name, records) in produced
        .iter()
        .flat_map(|(n, r)| r.iter().map(move |r| (n, r)))
    {
        let mut seed = vec![batch::FIX_CRCS | batch::APPEND];
        seed.extend_from_slice(records);
        batch_seeds += usize::from(write_seed(&corpus.join("batch"), name, &seed));
    }
    let mut recovery_seeds = 0;
    let mut journal_seeds = 0;
    for (client, records) in by_client(&produced) {
        recovery_seeds += built_segments(&corpus.join("recovery"), &client, &records);
        for (n, seed) in journal::seeds(&records).iter().enumerate() {
            let name = format!("{client}-{n}");
            journal_seeds += usize::from(write_seed(&corpus.join("journal"), &name, seed));
        }
    }
    if let Some(data_dir) = data_dir {
        recovery_seeds += broker_segments(&corpus.join("recovery"), &data_dir);
    }
    println!(
        "seeds: {synthetic} synthetic requests, {batch_seeds} record payloads, {recovery_seeds} segments, {journal_seeds} journal files"
    );
}

/// Writes `bytes` as `dir/<name>-<hash>` unless a file has those bytes.
fn write_seed(dir: &Path, name: &str, bytes: &[u8]) -> bool {
    let hash = format!("{:08x}", crc32c::crc32c(bytes));
    let path = dir.join(format!("{name}-{hash}"));
    if path.exists() {
        return false;
    }
    std::fs::write(&path, bytes).expect("writing a seed");
    true
}

fn write_synthetic(dir: &Path) -> usize {
    let mut written = 0;
    for (key, min, max) in SupportedApis::new().iter() {
        for version in *min..=*max {
            let Some(body) = default_request(*key, version) else {
                continue;
            };
            let header = RequestHeader::default()
                .with_request_api_key(*key as i16)
                .with_request_api_version(version)
                .with_correlation_id(7)
                .with_client_id(Some(StrBytes::from_static_str("seed")));
            let mut frame = BytesMut::new();
            header
                .encode(&mut frame, key.request_header_version(version))
                .expect("encoding a request header");
            frame.extend_from_slice(&body);
            let name = format!("synthetic-{:02}-v{version}", *key as i16);
            written += usize::from(write_seed(dir, &name, &frame));
        }
    }
    written
}

fn default_request(key: ApiKey, version: i16) -> Option<BytesMut> {
    fn encode<T: Encodable + Default>(version: i16) -> Option<BytesMut> {
        let mut buf = BytesMut::new();
        T::default().encode(&mut buf, version).ok()?;
        Some(buf)
    }
    match key {
        ApiKey::Produce => encode::<ProduceRequest>(version),
        ApiKey::Fetch => encode::<FetchRequest>(version),
        ApiKey::ListOffsets => encode::<ListOffsetsRequest>(version),
        ApiKey::Metadata => encode::<MetadataRequest>(version),
        ApiKey::OffsetCommit => encode::<OffsetCommitRequest>(version),
        ApiKey::OffsetFetch => encode::<OffsetFetchRequest>(version),
        ApiKey::FindCoordinator => encode::<FindCoordinatorRequest>(version),
        ApiKey::JoinGroup => encode::<JoinGroupRequest>(version),
        ApiKey::Heartbeat => encode::<HeartbeatRequest>(version),
        ApiKey::LeaveGroup => encode::<LeaveGroupRequest>(version),
        ApiKey::SyncGroup => encode::<SyncGroupRequest>(version),
        ApiKey::DescribeGroups => encode::<DescribeGroupsRequest>(version),
        ApiKey::ListGroups => encode::<ListGroupsRequest>(version),
        ApiKey::ApiVersions => encode::<ApiVersionsRequest>(version),
        ApiKey::CreateTopics => encode::<CreateTopicsRequest>(version),
        ApiKey::DeleteTopics => encode::<DeleteTopicsRequest>(version),
        ApiKey::InitProducerId => encode::<InitProducerIdRequest>(version),
        ApiKey::DescribeConfigs => encode::<DescribeConfigsRequest>(version),
        ApiKey::AlterConfigs => encode::<AlterConfigsRequest>(version),
        ApiKey::CreatePartitions => encode::<CreatePartitionsRequest>(version),
        ApiKey::IncrementalAlterConfigs => encode::<IncrementalAlterConfigsRequest>(version),
        ApiKey::DescribeCluster => encode::<DescribeClusterRequest>(version),
        _ => None,
    }
}

/// The records of every partition of every captured Produce request, by
/// frame file name (oldest capture first).
fn produce_records(dir: &Path) -> BTreeMap<String, Vec<Bytes>> {
    let apis = SupportedApis::new();
    let mut out = BTreeMap::new();
    for path in sorted_files(dir) {
        let name = file_name(&path);
        if name.starts_with("synthetic-") {
            continue;
        }
        let frame = std::fs::read(&path).expect("reading a captured frame");
        let Ok(decoded) = decode_request(Bytes::from(frame), &apis) else {
            continue;
        };
        let Request::Produce(produce) = decoded.body else {
            continue;
        };
        let records: Vec<Bytes> = produce
            .topic_data
            .into_iter()
            .flat_map(|t| t.partition_data)
            .filter_map(|p| p.records)
            .collect();
        out.insert(name, records);
    }
    out
}

/// Captured frames are named `<key>-v<version>-<client>-<hash>`.
fn by_client(produced: &BTreeMap<String, Vec<Bytes>>) -> BTreeMap<String, Vec<Bytes>> {
    let mut out: BTreeMap<String, Vec<Bytes>> = BTreeMap::new();
    for (name, records) in produced {
        let client = name.split('-').nth(2).unwrap_or("client").to_string();
        out.entry(client)
            .or_default()
            .extend(records.iter().cloned());
    }
    out
}

/// Appends a client's payloads to a fresh partition (index entries every
/// 100 bytes) until it holds about `MAX_SEGMENT_BYTES`, shuts it down
/// cleanly, and writes its files as seeds in four states.
fn built_segments(dir: &Path, client: &str, payloads: &[Bytes]) -> usize {
    let part_dir = scratch::fresh_dir("make-seeds");
    let partition = partition::open(&part_dir, false, 100).expect("opening a partition");
    for payload in payloads {
        if partition.size_bytes() as usize + payload.len() > MAX_SEGMENT_BYTES {
            break;
        }
        // Transactional or out-of-sequence payloads are refused; skip them.
        let _ = partition.append(payload);
    }
    partition.flush().expect("flushing the partition");
    drop(partition);
    let read = |name: String| std::fs::read(part_dir.join(name)).unwrap_or_default();
    let (log, index, times) = (
        read(log_file_name(0)),
        read(index_file_name(0)),
        read(time_index_file_name(0)),
    );
    scratch::remove("make-seeds");
    if log.is_empty() {
        return 0;
    }
    let torn = &log[..log.len() - 7];
    let seeds = [
        ("crashed", INTERVAL_100, &log[..]),
        (
            "clean",
            INTERVAL_100 | INDEX_FILES | CLEAN_SHUTDOWN,
            &log[..],
        ),
        ("sealed", INTERVAL_100 | INDEX_FILES | SEALED, &log[..]),
        ("torn", INTERVAL_100, torn),
    ];
    seeds
        .iter()
        .map(|(state, flags, log)| {
            let seed = recovery::encode(*flags, &index, &times, log);
            usize::from(write_seed(dir, &format!("built-{client}-{state}"), &seed))
        })
        .sum()
}

/// The non-empty segments a broker left (up to `MAX_SEGMENT_BYTES`), as
/// found after a clean shutdown and as after a crash.
fn broker_segments(dir: &Path, data_dir: &Path) -> usize {
    let mut written = 0;
    let mut stack = vec![data_dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for path in sorted_files(&at) {
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = file_name(&path);
            let Some(stem) = name.strip_suffix(".log") else {
                continue;
            };
            let log = std::fs::read(&path).expect("reading a segment");
            if log.is_empty() || log.len() > MAX_SEGMENT_BYTES || stem.parse::<i64>() != Ok(0) {
                continue;
            }
            let sibling = |ext: &str| std::fs::read(path.with_extension(ext)).unwrap_or_default();
            let (index, times) = (sibling("index"), sibling("timeindex"));
            let topic = file_name(&at);
            for (state, flags) in [("clean", INDEX_FILES | CLEAN_SHUTDOWN), ("crashed", 0)] {
                let seed = recovery::encode(flags, &index, &times, &log);
                written += usize::from(write_seed(dir, &format!("broker-{topic}-{state}"), &seed));
            }
        }
    }
    written
}

fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.sort();
    paths
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
