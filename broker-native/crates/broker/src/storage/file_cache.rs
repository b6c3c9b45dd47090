//! A bounded set of open segment files (least recently used closed first),
//! so that 100K partitions do not need 100K file descriptors.

use crate::error::Result;
use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Open files when the process limit cannot be read.
const FALLBACK_CAPACITY: usize = 256;

#[derive(Debug)]
pub struct FileCache {
    capacity: usize,
    next_key: AtomicU64,
    inner: Mutex<Lru>,
}

#[derive(Debug, Default)]
struct Lru {
    tick: u64,
    files: HashMap<u64, (Arc<File>, u64)>,
    by_tick: BTreeMap<u64, u64>,
}

impl FileCache {
    pub fn new(capacity: usize) -> FileCache {
        FileCache {
            capacity: capacity.max(1),
            next_key: AtomicU64::new(0),
            inner: Mutex::new(Lru::default()),
        }
    }

    /// A quarter of the soft open-files limit (sockets need the rest).
    pub fn with_default_capacity() -> FileCache {
        FileCache::new(soft_nofile_limit().map_or(FALLBACK_CAPACITY, |n| (n / 4).clamp(64, 16384)))
    }

    /// A key for one file; callers keep it for the file's lifetime.
    pub fn new_key(&self) -> u64 {
        self.next_key.fetch_add(1, Ordering::Relaxed)
    }

    /// The open file for `key`, opening `path` read-write when it is not.
    /// No lock is held while opening.
    pub fn get(&self, key: u64, path: &Path) -> Result<Arc<File>> {
        {
            let mut lru = self.inner.lock().expect("file cache lock");
            lru.tick += 1;
            let tick = lru.tick;
            if let Some((file, used)) = lru.files.get_mut(&key) {
                let file = file.clone();
                let old = std::mem::replace(used, tick);
                lru.by_tick.remove(&old);
                lru.by_tick.insert(tick, key);
                return Ok(file);
            }
        }
        let file = Arc::new(OpenOptions::new().read(true).write(true).open(path)?);
        self.insert(key, file.clone());
        Ok(file)
    }

    /// Adds an already open file (e.g. one just created).
    pub fn insert(&self, key: u64, file: Arc<File>) {
        let mut lru = self.inner.lock().expect("file cache lock");
        lru.tick += 1;
        let tick = lru.tick;
        if let Some((_, old)) = lru.files.insert(key, (file, tick)) {
            lru.by_tick.remove(&old);
        }
        lru.by_tick.insert(tick, key);
        while lru.files.len() > self.capacity {
            let Some((_, oldest)) = lru.by_tick.pop_first() else {
                break;
            };
            lru.files.remove(&oldest);
        }
    }

    /// Closes `key`'s file (a reader still holding it keeps it open).
    pub fn remove(&self, key: u64) {
        let mut lru = self.inner.lock().expect("file cache lock");
        if let Some((_, tick)) = lru.files.remove(&key) {
            lru.by_tick.remove(&tick);
        }
    }

    /// Closes every cached file (the broker is stopping): readers that still
    /// hold one keep it open until they drop it.
    pub fn clear(&self) {
        let mut lru = self.inner.lock().expect("file cache lock");
        lru.files.clear();
        lru.by_tick.clear();
    }

    pub fn open_files(&self) -> usize {
        self.inner.lock().expect("file cache lock").files.len()
    }
}

impl Default for FileCache {
    fn default() -> Self {
        FileCache::with_default_capacity()
    }
}

fn soft_nofile_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_file_is_closed_first() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FileCache::new(2);
        let paths: Vec<_> = (0..3).map(|i| dir.path().join(format!("{i}"))).collect();
        for p in &paths {
            std::fs::write(p, b"x").unwrap();
        }
        let keys: Vec<u64> = (0..3).map(|_| cache.new_key()).collect();
        cache.get(keys[0], &paths[0]).unwrap();
        cache.get(keys[1], &paths[1]).unwrap();
        cache.get(keys[0], &paths[0]).unwrap();
        cache.get(keys[2], &paths[2]).unwrap();
        assert_eq!(cache.open_files(), 2);
        let lru = cache.inner.lock().unwrap();
        assert!(lru.files.contains_key(&keys[0]));
        assert!(!lru.files.contains_key(&keys[1]));
    }
}
