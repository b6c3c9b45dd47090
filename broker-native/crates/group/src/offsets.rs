//! Persistent store of committed offsets: `(group, topic, partition) -> offset`.
//!
//! On disk it is one append-only text file, `offsets.log`, one commit per
//! line. Every commit is written with a single `write_all` (reaching the OS,
//! not fsynced). `open` and `compact` rewrite the file with only the latest
//! value of each key (temp file, fsync, rename). A torn or corrupt line, such
//! as the unterminated tail left by a crash, is skipped on load.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::{lock, Error, Result};

const LOG_FILE: &str = "offsets.log";
const COMPACT_FILE: &str = "offsets.log.compact";
const RECORD_TAG: &str = "c";
/// Compact once this many records were appended and they outnumber the
/// live keys four to one, so a long benchmark does not grow the log forever.
const COMPACT_AFTER_RECORDS: usize = 100_000;

/// What a consumer committed for one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommittedOffset {
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
}

/// One partition's commit, as handed to [`OffsetStore::commit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartitionCommit {
    pub topic: String,
    pub partition: i32,
    pub committed: CommittedOffset,
}

type GroupOffsets = BTreeMap<(String, i32), CommittedOffset>;

pub(crate) struct OffsetStore {
    dir: PathBuf,
    inner: Mutex<Inner>,
}

struct Inner {
    offsets: HashMap<String, GroupOffsets>,
    log: File,
    records_since_compaction: usize,
}

impl Inner {
    fn live_keys(&self) -> usize {
        self.offsets.values().map(BTreeMap::len).sum()
    }
}

impl OffsetStore {
    /// Creates `dir` if needed, loads every intact record and compacts the log.
    pub fn open(dir: &Path) -> Result<Self> {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let log_path = dir.join(LOG_FILE);
        let offsets = match fs::read(&log_path) {
            Ok(bytes) => parse_log(&bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
            Err(e) => return Err(Error::io(&log_path, e)),
        };
        let log = write_compacted(dir, &offsets)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            inner: Mutex::new(Inner {
                offsets,
                log,
                records_since_compaction: 0,
            }),
        })
    }

    /// Appends the commits to the log, then makes them visible to fetches.
    pub fn commit(&self, group: &str, commits: &[PartitionCommit]) -> Result<()> {
        if commits.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        for commit in commits {
            encode_record(&mut text, group, commit);
        }
        let mut inner = lock(&self.inner);
        inner
            .log
            .write_all(text.as_bytes())
            .map_err(|e| Error::io(&self.dir.join(LOG_FILE), e))?;
        let group_offsets = inner.offsets.entry(group.to_owned()).or_default();
        for commit in commits {
            group_offsets.insert(
                (commit.topic.clone(), commit.partition),
                commit.committed.clone(),
            );
        }
        inner.records_since_compaction += commits.len();
        if inner.records_since_compaction >= COMPACT_AFTER_RECORDS
            && inner.records_since_compaction > 4 * inner.live_keys()
        {
            // The commit is already in the log; a failed compaction loses nothing.
            if let Ok(log) = write_compacted(&self.dir, &inner.offsets) {
                inner.log = log;
                inner.records_since_compaction = 0;
            }
        }
        Ok(())
    }

    pub fn fetch(&self, group: &str, topic: &str, partition: i32) -> Option<CommittedOffset> {
        let inner = lock(&self.inner);
        inner
            .offsets
            .get(group)?
            .get(&(topic.to_owned(), partition))
            .cloned()
    }

    /// Every committed partition of `group`, sorted by topic then partition.
    pub fn fetch_all(&self, group: &str) -> Vec<PartitionCommit> {
        let inner = lock(&self.inner);
        inner
            .offsets
            .get(group)
            .map(|offsets| {
                offsets
                    .iter()
                    .map(|((topic, partition), committed)| PartitionCommit {
                        topic: topic.clone(),
                        partition: *partition,
                        committed: committed.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn has_group(&self, group: &str) -> bool {
        lock(&self.inner).offsets.contains_key(group)
    }

    pub fn groups(&self) -> Vec<String> {
        lock(&self.inner).offsets.keys().cloned().collect()
    }

    /// Rewrites the log with the latest value of each key and fsyncs it.
    pub fn compact(&self) -> Result<()> {
        let mut inner = lock(&self.inner);
        inner.log = write_compacted(&self.dir, &inner.offsets)?;
        inner.records_since_compaction = 0;
        Ok(())
    }
}

/// Writes all offsets to a temp file, fsyncs, renames it over the log and
/// returns the log opened for appending.
fn write_compacted(dir: &Path, offsets: &HashMap<String, GroupOffsets>) -> Result<File> {
    let compact_path = dir.join(COMPACT_FILE);
    let log_path = dir.join(LOG_FILE);
    let mut text = String::new();
    for (group, group_offsets) in offsets {
        for ((topic, partition), committed) in group_offsets {
            let commit = PartitionCommit {
                topic: topic.clone(),
                partition: *partition,
                committed: committed.clone(),
            };
            encode_record(&mut text, group, &commit);
        }
    }
    let mut file = File::create(&compact_path).map_err(|e| Error::io(&compact_path, e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&compact_path, e))?;
    drop(file);
    fs::rename(&compact_path, &log_path).map_err(|e| Error::io(&log_path, e))?;
    // Make the rename itself durable; not all platforms allow opening a dir.
    if let Ok(dir_handle) = File::open(dir) {
        let _ = dir_handle.sync_all();
    }
    OpenOptions::new()
        .append(true)
        .open(&log_path)
        .map_err(|e| Error::io(&log_path, e))
}

/// `c<TAB>group<TAB>topic<TAB>partition<TAB>offset<TAB>epoch<TAB>metadata\n`,
/// strings escaped; metadata is `-` for null or `=` followed by the text.
fn encode_record(out: &mut String, group: &str, commit: &PartitionCommit) {
    out.push_str(RECORD_TAG);
    out.push('\t');
    escape_into(out, group);
    out.push('\t');
    escape_into(out, &commit.topic);
    out.push('\t');
    out.push_str(&commit.partition.to_string());
    out.push('\t');
    out.push_str(&commit.committed.offset.to_string());
    out.push('\t');
    out.push_str(&commit.committed.leader_epoch.to_string());
    out.push('\t');
    match &commit.committed.metadata {
        None => out.push('-'),
        Some(metadata) => {
            out.push('=');
            escape_into(out, metadata);
        }
    }
    out.push('\n');
}

fn parse_log(bytes: &[u8]) -> HashMap<String, GroupOffsets> {
    let mut offsets: HashMap<String, GroupOffsets> = HashMap::new();
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    // The piece after the last newline is either empty or a torn write.
    lines.pop();
    for line in lines {
        let Some((group, commit)) = std::str::from_utf8(line).ok().and_then(decode_record) else {
            continue;
        };
        offsets
            .entry(group)
            .or_default()
            .insert((commit.topic, commit.partition), commit.committed);
    }
    offsets
}

fn decode_record(line: &str) -> Option<(String, PartitionCommit)> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [tag, group, topic, partition, offset, epoch, metadata] = fields.as_slice() else {
        return None;
    };
    if *tag != RECORD_TAG {
        return None;
    }
    let metadata = match metadata.strip_prefix('=') {
        Some(text) => Some(unescape(text)?),
        None if *metadata == "-" => None,
        None => return None,
    };
    Some((
        unescape(group)?,
        PartitionCommit {
            topic: unescape(topic)?,
            partition: partition.parse().ok()?,
            committed: CommittedOffset {
                offset: offset.parse().ok()?,
                leader_epoch: epoch.parse().ok()?,
                metadata,
            },
        },
    ))
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

fn unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '\\' => out.push('\\'),
            't' => out.push('\t'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TempDir;

    fn commit(topic: &str, partition: i32, offset: i64, metadata: Option<&str>) -> PartitionCommit {
        PartitionCommit {
            topic: topic.to_owned(),
            partition,
            committed: CommittedOffset {
                offset,
                leader_epoch: 3,
                metadata: metadata.map(str::to_owned),
            },
        }
    }

    #[test]
    fn record_round_trips_strings_that_need_escaping() {
        let mut text = String::new();
        let original = commit("t\\1", 7, 42, Some("a\tb\nc"));
        encode_record(&mut text, "g\r\n", &original);
        assert_eq!(text.matches('\n').count(), 1);
        let (group, decoded) = decode_record(text.trim_end_matches('\n')).unwrap();
        assert_eq!(group, "g\r\n");
        assert_eq!(decoded, original);
    }

    #[test]
    fn null_and_empty_metadata_stay_distinct() {
        let mut text = String::new();
        encode_record(&mut text, "g", &commit("t", 0, 1, None));
        encode_record(&mut text, "g", &commit("t", 1, 1, Some("")));
        let offsets = parse_log(text.as_bytes());
        assert_eq!(offsets["g"][&("t".to_owned(), 0)].metadata, None);
        assert_eq!(
            offsets["g"][&("t".to_owned(), 1)].metadata,
            Some(String::new())
        );
    }

    #[test]
    fn later_commit_of_same_partition_wins_after_reopen() {
        let dir = TempDir::new("later-commit-wins");
        {
            let store = OffsetStore::open(dir.path()).unwrap();
            store.commit("g", &[commit("t", 0, 5, None)]).unwrap();
            store.commit("g", &[commit("t", 0, 9, None)]).unwrap();
        }
        let store = OffsetStore::open(dir.path()).unwrap();
        assert_eq!(store.fetch("g", "t", 0).unwrap().offset, 9);
    }

    #[test]
    fn torn_last_line_is_ignored_on_open() {
        let dir = TempDir::new("torn-tail");
        {
            let store = OffsetStore::open(dir.path()).unwrap();
            store.commit("g", &[commit("t", 0, 5, Some("m"))]).unwrap();
        }
        let mut log = OpenOptions::new()
            .append(true)
            .open(dir.path().join(LOG_FILE))
            .unwrap();
        log.write_all(b"c\tg\tt\t0\t99").unwrap();
        drop(log);
        let store = OffsetStore::open(dir.path()).unwrap();
        assert_eq!(store.fetch("g", "t", 0).unwrap().offset, 5);
        // The compaction on open dropped the torn bytes, so new commits parse.
        store.commit("g", &[commit("t", 1, 6, None)]).unwrap();
        drop(store);
        let store = OffsetStore::open(dir.path()).unwrap();
        assert_eq!(store.fetch("g", "t", 1).unwrap().offset, 6);
    }

    #[test]
    fn corrupt_middle_line_is_skipped_and_the_rest_loaded() {
        let text = b"c\tg\tt\t0\t1\t-1\t-\nnot a record\nc\tg\tt\t1\t2\t-1\t-\n";
        let offsets = parse_log(text);
        assert_eq!(offsets["g"].len(), 2);
    }

    #[test]
    fn compact_keeps_only_latest_values() {
        let dir = TempDir::new("compact");
        let store = OffsetStore::open(dir.path()).unwrap();
        for offset in 0..10 {
            store.commit("g", &[commit("t", 0, offset, None)]).unwrap();
        }
        store.compact().unwrap();
        let text = fs::read_to_string(dir.path().join(LOG_FILE)).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert_eq!(store.fetch("g", "t", 0).unwrap().offset, 9);
    }

    #[test]
    fn log_compacts_itself_after_many_commits() {
        let dir = TempDir::new("auto-compact");
        let store = OffsetStore::open(dir.path()).unwrap();
        for offset in 0..COMPACT_AFTER_RECORDS as i64 {
            store.commit("g", &[commit("t", 0, offset, None)]).unwrap();
        }
        let text = fs::read_to_string(dir.path().join(LOG_FILE)).unwrap();
        assert_eq!(text.lines().count(), 1);
        drop(store);
        let store = OffsetStore::open(dir.path()).unwrap();
        let last = COMPACT_AFTER_RECORDS as i64 - 1;
        assert_eq!(store.fetch("g", "t", 0).unwrap().offset, last);
    }
}
