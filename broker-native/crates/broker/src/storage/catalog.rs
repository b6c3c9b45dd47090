//! The topics catalog: one append-only file (`<dataDir>/__catalog`) of
//! checksummed lines that record topic creations, deletions and config
//! changes. Start-up replays one file instead of reading a file per topic;
//! replay compacts it when dead lines outnumber live ones.
//!
//! Line format: `<crc32c of the rest, 8 hex> <record>\n`, with records
//! `topic <name> <uuid> <partitions>`, `delete <name>`,
//! `config <name> <key> [<value, %-escaped>]` (no value: back to default).

use crate::error::Result;
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use uuid::Uuid;

pub const CATALOG_FILE: &str = "__catalog";

/// Replay rewrites the file when it holds more than this many lines beyond
/// twice the live records.
const COMPACT_SLACK: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogRecord {
    Topic {
        name: String,
        id: Uuid,
        partitions: i32,
    },
    Deleted {
        name: String,
    },
    Config {
        name: String,
        key: String,
        value: Option<String>,
    },
}

/// A live topic as the catalog knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogTopic {
    pub id: Uuid,
    pub partitions: i32,
    /// Topic-level config overrides by Kafka name.
    pub configs: BTreeMap<String, String>,
}

#[derive(Debug)]
pub struct Catalog {
    path: PathBuf,
    file: Mutex<File>,
    /// Appended to since the last sync, or its directory entry not yet
    /// synced.
    dirty: AtomicBool,
    dir_synced: AtomicBool,
}

impl Catalog {
    /// Opens (or creates) the catalog in `dir` and replays it. A torn or
    /// corrupt tail (a crash mid-append) is cut off.
    pub fn open(dir: &Path) -> Result<(Catalog, HashMap<String, CatalogTopic>)> {
        let path = dir.join(CATALOG_FILE);
        let text = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let mut topics = HashMap::new();
        let mut good = 0usize;
        let mut lines = 0usize;
        while let Some(end) = text[good..].iter().position(|b| *b == b'\n') {
            let Some(record) = std::str::from_utf8(&text[good..good + end])
                .ok()
                .and_then(parse_line)
            else {
                break;
            };
            apply(&mut topics, record);
            good += end + 1;
            lines += 1;
        }
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        if good < text.len() {
            tracing::warn!(path = %path.display(), cut = text.len() - good, "cut a torn catalog tail");
            file.set_len(good as u64)?;
        }
        let catalog = Catalog {
            path,
            file: Mutex::new(file),
            dirty: AtomicBool::new(true),
            dir_synced: AtomicBool::new(false),
        };
        let live: usize = topics.values().map(|t| 1 + t.configs.len()).sum();
        if lines > 2 * live + COMPACT_SLACK {
            catalog.compact(&topics)?;
        }
        Ok((catalog, topics))
    }

    /// Appends `records` in one write (no fsync: like the log, the page
    /// cache keeps it across a process crash; `sync` forces it).
    pub fn append(&self, records: &[CatalogRecord]) -> Result<()> {
        let mut buf = String::new();
        for record in records {
            push_line(&mut buf, record);
        }
        let mut file = self.file.lock().expect("catalog lock");
        self.dirty.store(true, Ordering::Release);
        file.write_all(buf.as_bytes())?;
        Ok(())
    }

    /// Makes every record appended so far durable, with the file's name.
    pub fn sync(&self) -> Result<()> {
        let file = self.file.lock().expect("catalog lock");
        if !self.dir_synced.load(Ordering::Acquire) {
            if let Some(dir) = self.path.parent() {
                super::index::sync_dir(dir)?;
            }
            self.dir_synced.store(true, Ordering::Release);
        }
        self.dirty.store(false, Ordering::Release);
        if let Err(e) = file.sync_data() {
            self.dirty.store(true, Ordering::Release);
            return Err(e.into());
        }
        Ok(())
    }

    /// [`Catalog::sync`] when something was appended since the last one
    /// (before a journal round: a record acknowledged under fsync `batch`
    /// must not outlive its topic in a crash).
    pub fn sync_if_dirty(&self) -> Result<()> {
        if self.dirty.load(Ordering::Acquire) {
            self.sync()?;
        }
        Ok(())
    }

    /// Rewrites the file with only the live records.
    fn compact(&self, topics: &HashMap<String, CatalogTopic>) -> Result<()> {
        let mut buf = String::new();
        for (name, topic) in topics {
            push_line(
                &mut buf,
                &CatalogRecord::Topic {
                    name: name.clone(),
                    id: topic.id,
                    partitions: topic.partitions,
                },
            );
            for (key, value) in &topic.configs {
                push_line(
                    &mut buf,
                    &CatalogRecord::Config {
                        name: name.clone(),
                        key: key.clone(),
                        value: Some(value.clone()),
                    },
                );
            }
        }
        let mut file = self.file.lock().expect("catalog lock");
        let tmp = self.path.with_extension("tmp");
        let mut out = File::create(&tmp)?;
        out.write_all(buf.as_bytes())?;
        out.sync_data()?;
        std::fs::rename(&tmp, &self.path)?;
        *file = OpenOptions::new().append(true).open(&self.path)?;
        Ok(())
    }
}

fn apply(topics: &mut HashMap<String, CatalogTopic>, record: CatalogRecord) {
    match record {
        CatalogRecord::Topic {
            name,
            id,
            partitions,
        } => {
            let configs = match topics.remove(&name) {
                Some(old) if old.id == id => old.configs,
                _ => BTreeMap::new(),
            };
            topics.insert(
                name,
                CatalogTopic {
                    id,
                    partitions,
                    configs,
                },
            );
        }
        CatalogRecord::Deleted { name } => {
            topics.remove(&name);
        }
        CatalogRecord::Config { name, key, value } => {
            if let Some(topic) = topics.get_mut(&name) {
                match value {
                    Some(v) => topic.configs.insert(key, v),
                    None => topic.configs.remove(&key),
                };
            }
        }
    }
}

fn push_line(buf: &mut String, record: &CatalogRecord) {
    let body = match record {
        CatalogRecord::Topic {
            name,
            id,
            partitions,
        } => format!("topic {name} {id} {partitions}"),
        CatalogRecord::Deleted { name } => format!("delete {name}"),
        CatalogRecord::Config { name, key, value } => match value {
            Some(v) => format!("config {name} {} {}", escape(key), escape(v)),
            None => format!("config {name} {}", escape(key)),
        },
    };
    buf.push_str(&format!("{:08x} {body}\n", crc32c::crc32c(body.as_bytes())));
}

fn parse_line(line: &str) -> Option<CatalogRecord> {
    let (crc, body) = line.split_once(' ')?;
    if u32::from_str_radix(crc, 16).ok()? != crc32c::crc32c(body.as_bytes()) {
        return None;
    }
    let mut parts = body.split(' ');
    let record = match (parts.next()?, parts.next()?) {
        ("topic", name) => CatalogRecord::Topic {
            name: name.to_string(),
            id: Uuid::parse_str(parts.next()?).ok()?,
            partitions: parts.next()?.parse().ok()?,
        },
        ("delete", name) => CatalogRecord::Deleted {
            name: name.to_string(),
        },
        ("config", name) => CatalogRecord::Config {
            name: name.to_string(),
            key: unescape(parts.next()?)?,
            value: match parts.next() {
                Some(v) => Some(unescape(v)?),
                None => None,
            },
        },
        _ => return None,
    };
    Some(record)
}

/// %-escapes bytes that would break the line format.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_graphic() && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    if out.is_empty() {
        out.push('%');
    }
    out
}

fn unescape(s: &str) -> Option<String> {
    if s == "%" {
        return Some(String::new());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, partitions: i32) -> CatalogRecord {
        CatalogRecord::Topic {
            name: name.into(),
            id: Uuid::new_v4(),
            partitions,
        }
    }

    #[test]
    fn records_replay_after_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (catalog, topics) = Catalog::open(dir.path()).unwrap();
            assert!(topics.is_empty());
            catalog
                .append(&[topic("a", 1), topic("b", 3), topic("c", 1)])
                .unwrap();
            catalog
                .append(&[
                    CatalogRecord::Deleted { name: "c".into() },
                    CatalogRecord::Config {
                        name: "b".into(),
                        key: "retention.ms".into(),
                        value: Some("1 000".into()),
                    },
                ])
                .unwrap();
        }
        let (_, topics) = Catalog::open(dir.path()).unwrap();
        assert_eq!(topics.len(), 2);
        assert_eq!(topics["b"].partitions, 3);
        assert_eq!(topics["b"].configs["retention.ms"], "1 000");
    }

    #[test]
    fn a_torn_last_line_is_cut_and_earlier_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (catalog, _) = Catalog::open(dir.path()).unwrap();
            catalog.append(&[topic("a", 1), topic("b", 1)]).unwrap();
        }
        let path = dir.path().join(CATALOG_FILE);
        let len = std::fs::metadata(&path).unwrap().len();
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - 5)
            .unwrap();
        let (catalog, topics) = Catalog::open(dir.path()).unwrap();
        assert_eq!(topics.keys().collect::<Vec<_>>(), vec!["a"]);
        catalog.append(&[topic("c", 1)]).unwrap();
        let (_, topics) = Catalog::open(dir.path()).unwrap();
        assert_eq!(topics.len(), 2);
    }

    #[test]
    fn replay_compacts_a_file_of_mostly_deleted_topics() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (catalog, _) = Catalog::open(dir.path()).unwrap();
            for i in 0..2000 {
                let name = format!("t{i}");
                catalog
                    .append(&[topic(&name, 1), CatalogRecord::Deleted { name }])
                    .unwrap();
            }
            catalog.append(&[topic("kept", 2)]).unwrap();
        }
        let before = std::fs::metadata(dir.path().join(CATALOG_FILE))
            .unwrap()
            .len();
        let (_, topics) = Catalog::open(dir.path()).unwrap();
        let after = std::fs::metadata(dir.path().join(CATALOG_FILE))
            .unwrap()
            .len();
        assert_eq!(topics.len(), 1);
        assert!(after < before / 100, "{after} vs {before}");
        let (_, again) = Catalog::open(dir.path()).unwrap();
        assert_eq!(again, topics);
    }
}
