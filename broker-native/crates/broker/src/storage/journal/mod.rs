//! The log's journal under `FsyncPolicy::Batch`: group commit across
//! every partition and connection of a log.
//!
//! An append under `batch` writes its batches to the active segment (page
//! cache), as under `none`, and encodes a record of them into the
//! journal's memory, both under the partition's append lock, so each
//! partition's records are in the journal in log order. The journal's
//! writer thread (never a tokio worker) takes everything encoded since its
//! last round and writes it in one O_DIRECT, O_DSYNC write (`files`): when
//! that returns, the round's appends are durable, and each partition's
//! [`GroupCommit`] learns how far. One write makes a whole round durable,
//! whatever partitions it touched, instead of an fdatasync per partition.
//!
//! Segments are synced off the request path: when a journal file is full
//! the writer moves on to the next, and a retiring thread syncs every
//! segment written while the full one was current (and their directories),
//! then retires it, to be written over later as a spare. A crash therefore
//! leaves every acknowledged batch either in a synced segment or in a
//! journal file not yet retired, and the next open replays those files
//! (`storage/log/recover.rs`). A clean flush syncs every segment, then
//! retires every file ([`Journal::checkpoint`]).
//!
//! Lock order: a partition's append lock, then the journal's state; the
//! writer takes the state alone, and calls into a partition's
//! [`GroupCommit`] holding nothing.

mod aligned;
mod files;
pub mod record;
mod replay;
mod retire;

use super::group_commit::GroupCommit;
use super::segment::Segment;
use crate::error::{Error, Result};
use crate::stats::StorageStats;
use aligned::AlignedBuf;
use files::JournalFile;
use kafka_protocol::ResponseError;
pub use record::JournalKey;
use record::BLOCK;
pub use replay::Replay;
use retire::{Retirer, Retiring};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The journal's directory inside the data directory (not a partition:
/// partitions are found through the catalog).
pub const JOURNAL_DIR: &str = "__journal";

/// A journal file takes records until it holds this much; then the writer
/// moves to the next and the full one is retired once its segments are
/// synced. Bigger means fewer, larger segment syncs and more disk held:
/// up to about four files per node (the current one, one retiring, two
/// spares).
pub const DEFAULT_FILE_BYTES: u64 = 32 << 20;

/// How long the writer waits for records before it looks again whether the
/// log is still there (an append wakes it sooner).
const WRITER_IDLE: Duration = Duration::from_millis(100);

/// Chunk buffers kept for later rounds, and the largest kept.
const KEPT_BUFFERS: usize = 4;
const KEPT_BUFFER_BYTES: usize = 8 << 20;

/// What a journal round makes durable before its own write.
pub type MetadataSync = Box<dyn Fn() -> Result<()> + Send + Sync>;

/// How the journal writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalConfig {
    /// See [`DEFAULT_FILE_BYTES`].
    pub file_bytes: u64,
}

impl Default for JournalConfig {
    fn default() -> Self {
        JournalConfig {
            file_bytes: DEFAULT_FILE_BYTES,
        }
    }
}

pub struct Journal {
    dir: PathBuf,
    /// The data directory, whose entries (new partition directories) a
    /// retirement makes durable too.
    data_dir: PathBuf,
    config: JournalConfig,
    stats: Arc<StorageStats>,
    state: Mutex<State>,
    /// Wakes the writer: records to write.
    work: Condvar,
    /// Wakes [`Journal::checkpoint`]: a round written.
    written: Condvar,
    /// Held by the writer across each write; tests hold it to stall one.
    write_gate: Mutex<()>,
    /// Spares, shared by the writer (which takes them) and the retiring
    /// thread (which makes them).
    spares: Arc<Mutex<Vec<(u64, PathBuf)>>>,
    /// Run before every write: makes the log's metadata (the topics
    /// catalog) durable if it changed, so that an acknowledged record never
    /// outlives its topic in a crash.
    before_write: MetadataSync,
    /// Tests make writes fail.
    #[cfg(test)]
    fail_writes: std::sync::atomic::AtomicBool,
    /// Tests make the writer wait longer than [`WRITER_IDLE`] (ms; 0: not).
    #[cfg(test)]
    idle_ms: std::sync::atomic::AtomicU64,
}

#[derive(Debug)]
struct State {
    /// The file records are encoded for, and where in it the next lands.
    seq: u64,
    pos: u64,
    /// Encoded and not yet taken by the writer, oldest first.
    chunks: Vec<Chunk>,
    /// Offsets durable once those chunks are written.
    waiters: Vec<Waiter>,
    /// Segments written while each file took records, by file.
    touched: BTreeMap<u64, HashMap<usize, Arc<Segment>>>,
    /// Rounds the writer took, and finished (written or failed).
    taken: u64,
    done: u64,
    /// Buffers of written chunks, for the next ones.
    free: Vec<AlignedBuf>,
    threads: Option<mpsc::Sender<Retiring>>,
    /// Why the journal stopped: a write or a retirement failed. It takes no
    /// more records (as Kafka takes a failed log directory offline).
    failed: Option<String>,
    /// The writer waits for records: an append wakes it only then (a wake
    /// is a system call, and the writer looks for more records before it
    /// waits, so a busy writer needs none).
    writer_idle: bool,
}

/// Records for one file, from a block boundary.
#[derive(Debug)]
struct Chunk {
    seq: u64,
    offset: u64,
    bytes: AlignedBuf,
    /// Ends with the file's roll record.
    rolls: bool,
}

#[derive(Debug)]
struct Waiter {
    partition: Arc<GroupCommit>,
    next: i64,
    generation: u64,
}

fn storage_error(message: impl Into<String>) -> Error {
    Error::kafka(ResponseError::KafkaStorageError, message.into())
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("dir", &self.dir)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// A journal for the log in `data_dir`, after any earlier journal's
    /// files were replayed and retired ([`Replay`]). Makes no file until
    /// the first record (not even its directory).
    pub fn open(
        data_dir: &Path,
        config: JournalConfig,
        stats: Arc<StorageStats>,
        before_write: MetadataSync,
    ) -> Result<Arc<Journal>> {
        let dir = data_dir.join(JOURNAL_DIR);
        let listing = files::list(&dir)?;
        if let Some((seq, _)) = listing.journals.first() {
            return Err(storage_error(format!(
                "journal file {seq} was not replayed before the journal opened"
            )));
        }
        Ok(Arc::new(Journal {
            data_dir: data_dir.to_path_buf(),
            config,
            stats,
            state: Mutex::new(State {
                seq: listing.next_seq(),
                pos: BLOCK as u64,
                chunks: Vec::new(),
                waiters: Vec::new(),
                touched: BTreeMap::new(),
                taken: 0,
                done: 0,
                free: Vec::new(),
                threads: None,
                failed: None,
                writer_idle: false,
            }),
            work: Condvar::new(),
            written: Condvar::new(),
            write_gate: Mutex::new(()),
            spares: Arc::new(Mutex::new(listing.spares)),
            before_write,
            dir,
            #[cfg(test)]
            fail_writes: Default::default(),
            #[cfg(test)]
            idle_ms: Default::default(),
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("journal lock")
    }

    /// Fails (KAFKA_STORAGE_ERROR) once the journal has stopped; an append
    /// checks before it writes anything.
    pub fn check(&self) -> Result<()> {
        match &self.lock().failed {
            Some(why) => Err(storage_error(format!("the journal stopped: {why}"))),
            None => Ok(()),
        }
    }

    /// Records `batches`, appended to `segment` from `base_offset` up to
    /// `next`: `partition` learns they are durable once the round that
    /// writes the record is done (unless a truncation since changed its
    /// `generation`). Called under the partition's append lock.
    #[allow(clippy::too_many_arguments)]
    pub fn append(
        self: &Arc<Self>,
        key: JournalKey,
        base_offset: i64,
        batches: &[u8],
        segment: &Arc<Segment>,
        partition: &Arc<GroupCommit>,
        next: i64,
        generation: u64,
    ) -> Result<()> {
        let mut state = self.lock();
        self.usable(&state)?;
        let seq = self.make_room(&mut state, record::append_len(batches.len()));
        state.encode(|out| record::encode_append(out, seq, key, base_offset, batches));
        state
            .touched
            .entry(seq)
            .or_default()
            .entry(Arc::as_ptr(segment) as usize)
            .or_insert_with(|| segment.clone());
        state.waiters.push(Waiter {
            partition: partition.clone(),
            next,
            generation,
        });
        self.wake_writer(state);
        Ok(())
    }

    /// Records that the partition's log was cut at `offset` (so that a
    /// replay cuts there before it replays what came after); once written,
    /// `partition` (at its new `generation`) is durable up to the cut.
    /// Called under the partition's append lock.
    pub fn truncated(
        self: &Arc<Self>,
        key: JournalKey,
        offset: i64,
        partition: &Arc<GroupCommit>,
        generation: u64,
    ) -> Result<()> {
        let mut state = self.lock();
        self.usable(&state)?;
        let seq = self.make_room(&mut state, record::TRUNCATE_LEN);
        state.encode(|out| record::encode_truncate(out, seq, key, offset));
        state.waiters.push(Waiter {
            partition: partition.clone(),
            next: offset,
            generation,
        });
        self.wake_writer(state);
        Ok(())
    }

    fn usable(&self, state: &State) -> Result<()> {
        match &state.failed {
            Some(why) => Err(storage_error(format!("the journal stopped: {why}"))),
            None => Ok(()),
        }
    }

    /// The file a record of `len` bytes goes to: the current one, or the
    /// next when the current one has records and this would take it past
    /// its size (a record bigger than a whole file gets a file of its own,
    /// which grows to hold it).
    fn make_room(&self, state: &mut State, len: usize) -> u64 {
        let after = state.pos + (len + record::ROLL_TAIL) as u64;
        if state.pos > BLOCK as u64 && after > self.config.file_bytes {
            self.roll(state);
        }
        state.seq
    }

    /// Ends the current file with a roll record; records go to the next.
    fn roll(&self, state: &mut State) {
        let seq = state.seq;
        state.encode(|out| {
            record::encode_roll(out, seq);
            record::pad_to_block(out, seq);
        });
        state
            .chunks
            .last_mut()
            .expect("the roll record's chunk")
            .rolls = true;
        state.seq += 1;
        state.pos = BLOCK as u64;
    }

    fn wake_writer(self: &Arc<Self>, mut state: std::sync::MutexGuard<'_, State>) {
        if state.threads.is_none() {
            state.threads = Some(self.start_threads());
        }
        let idle = std::mem::take(&mut state.writer_idle);
        drop(state);
        if idle {
            self.work.notify_one();
        }
    }

    /// The writer and the retiring thread. The writer holds the journal
    /// only between waits, so dropping the log ends it, and with it the
    /// retiring thread.
    fn start_threads(self: &Arc<Self>) -> mpsc::Sender<Retiring> {
        let (to_retire, retiring) = mpsc::channel();
        let retirer = Retirer {
            dir: self.dir.clone(),
            data_dir: self.data_dir.clone(),
            stats: self.stats.clone(),
            spares: self.spares.clone(),
            journal: Arc::downgrade(self),
        };
        std::thread::Builder::new()
            .name("kbench-journal-retire".into())
            .spawn(move || retirer.run(retiring))
            .expect("spawn journal retiring thread");
        let journal = Arc::downgrade(self);
        let mut writer = Writer {
            file: None,
            to_retire: to_retire.clone(),
        };
        std::thread::Builder::new()
            .name("kbench-journal".into())
            .spawn(move || {
                while let Some(journal) = journal.upgrade() {
                    journal.round(&mut writer, journal.writer_idle());
                }
            })
            .expect("spawn journal writer thread");
        to_retire
    }

    /// One round: waits (up to `idle`) for records, takes them all, writes
    /// them, and tells the partitions. One round at a time: a replay stops
    /// at the first torn write, so a round is durable only with every
    /// earlier one. (Two writers, each round starting while the last was
    /// still on its way to the disk, made more and smaller writes for no
    /// more throughput: docs/benchmarks.md.)
    fn round(&self, writer: &mut Writer, idle: Duration) {
        let mut state = self.lock();
        if state.chunks.is_empty() {
            state.writer_idle = true;
            state = self.work.wait_timeout(state, idle).expect("journal lock").0;
            state.writer_idle = false;
            if state.chunks.is_empty() {
                return;
            }
        }
        // The current file's chunk ends on a block boundary, so the next
        // write starts a block of its own.
        let current = state.seq;
        if let Some(last) = state.chunks.last_mut().filter(|c| c.seq == current) {
            state.pos += record::pad_to_block(&mut last.bytes, current) as u64;
        }
        let chunks = std::mem::take(&mut state.chunks);
        let waiters = std::mem::take(&mut state.waiters);
        let full: Vec<(u64, Vec<Arc<Segment>>)> = chunks
            .iter()
            .filter(|c| c.rolls)
            .map(|c| {
                let segments = state.touched.remove(&c.seq).unwrap_or_default();
                (c.seq, segments.into_values().collect())
            })
            .collect();
        state.taken += 1;
        let round = state.taken;
        drop(state);

        let outcome = {
            let _gate = self.write_gate.lock().expect("journal write gate");
            self.write(writer, &chunks)
        };
        match &outcome {
            Ok(()) => {
                for waiter in &waiters {
                    waiter
                        .partition
                        .journal_durable(waiter.next, waiter.generation);
                }
                for (seq, segments) in full {
                    // The retiring thread outlives the writer's sends.
                    let _ = writer.to_retire.send(Retiring::File { seq, segments });
                }
            }
            Err(e) => {
                let why = format!("a journal write failed: {e}");
                tracing::error!(error = %e, "journal write failed; failing the appends waiting for it, and every later one");
                self.fail(&why);
                for waiter in &waiters {
                    waiter.partition.journal_failed(&why);
                }
            }
        }
        let mut state = self.lock();
        state.done = round;
        // Buffers are kept for the next rounds, but not one that a huge
        // append grew, and not more than a few.
        for mut chunk in chunks {
            if chunk.bytes.capacity() <= KEPT_BUFFER_BYTES && state.free.len() < KEPT_BUFFERS {
                chunk.bytes.clear();
                state.free.push(chunk.bytes);
            }
        }
        drop(state);
        self.written.notify_all();
    }

    /// Writes the chunks, each to its file (made when first needed).
    fn write(&self, writer: &mut Writer, chunks: &[Chunk]) -> Result<()> {
        (self.before_write)()?;
        for chunk in chunks {
            if writer.file.as_ref().is_none_or(|f| f.seq != chunk.seq) {
                let mut spares = self.spares.lock().expect("journal spares lock");
                writer.file = Some(files::prepare(&self.dir, chunk.seq, &mut spares)?);
            }
            let file = writer.file.as_ref().expect("prepared");
            #[cfg(test)]
            if self.fail_writes.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(std::io::Error::other("injected write failure").into());
            }
            let started = Instant::now();
            file.write_at(chunk.bytes.as_slice(), chunk.offset)?;
            self.stats.slow_disk(); // fault injection: a slow-disk delay, if any
            self.stats.record_fsync(started.elapsed());
        }
        Ok(())
    }

    /// Stops the journal: later appends fail, and those waiting are failed
    /// by whoever found the failure.
    fn fail(&self, why: &str) {
        let mut state = self.lock();
        state.failed.get_or_insert_with(|| why.to_string());
        let waiters = std::mem::take(&mut state.waiters);
        state.chunks.clear();
        drop(state);
        for waiter in waiters {
            waiter.partition.journal_failed(why);
        }
        self.written.notify_all();
    }

    /// After a clean flush has synced every segment: ends the current file,
    /// waits until everything recorded is written, then retires every
    /// file, so that the next open has nothing to replay. Appends may go on
    /// meanwhile (they start a new file).
    pub fn checkpoint(&self) -> Result<()> {
        let mut state = self.lock();
        let Some(threads) = state.threads.clone() else {
            // Never recorded anything: no file to retire.
            return Ok(());
        };
        if state.pos > BLOCK as u64 {
            self.roll(&mut state);
        }
        let target = state.taken + u64::from(!state.chunks.is_empty());
        drop(state);
        self.work.notify_one();
        let mut state = self.lock();
        while state.done < target && state.failed.is_none() {
            state = self.written.wait(state).expect("journal lock");
        }
        if let Some(why) = &state.failed {
            return Err(storage_error(format!("the journal stopped: {why}")));
        }
        drop(state);
        let (tx, rx) = mpsc::channel();
        threads
            .send(Retiring::Barrier(tx))
            .map_err(|_| storage_error("the journal's retiring thread is gone"))?;
        rx.recv()
            .map_err(|_| storage_error("the journal's retiring thread is gone"))?;
        self.check()
    }

    /// Stops the journal as a crash would, short of losing the page cache:
    /// it takes no more records (appends fail), the round being written
    /// finishes, what was not yet taken is dropped (its appends fail), and
    /// nothing more is retired. The files stay as they are, for the next
    /// open of the data directory to replay: a node killed and started
    /// again in this process must not find this journal still writing or
    /// retiring there.
    pub fn halt(&self) {
        let mut state = self.lock();
        state
            .failed
            .get_or_insert_with(|| "the log was stopped".to_string());
        while state.done < state.taken {
            state = self.written.wait(state).expect("journal lock");
        }
        state.chunks.clear();
        let waiters = std::mem::take(&mut state.waiters);
        let threads = state.threads.clone();
        drop(state);
        for waiter in waiters {
            waiter.partition.journal_failed("the log was stopped");
        }
        if let Some(threads) = threads {
            let (tx, rx) = mpsc::channel();
            if threads.send(Retiring::Stop(tx)).is_ok() {
                let _ = rx.recv();
            }
        }
    }

    /// Blocks every journal write while the guard lives (tests of what
    /// waits for durability).
    #[cfg(test)]
    pub(crate) fn hold_writes(&self) -> std::sync::MutexGuard<'_, ()> {
        self.write_gate.lock().expect("journal write gate")
    }

    /// Waits until everything recorded is written and every full file
    /// retired (tests that then drop the log, as a crash would).
    #[cfg(test)]
    pub(crate) fn settle(&self) {
        let mut state = self.lock();
        while !state.chunks.is_empty() || state.done < state.taken {
            state = self
                .written
                .wait_timeout(state, Duration::from_millis(10))
                .expect("journal lock")
                .0;
        }
        let threads = state.threads.clone();
        drop(state);
        if let Some(threads) = threads {
            let (tx, rx) = mpsc::channel();
            threads.send(Retiring::Barrier(tx)).unwrap();
            rx.recv().unwrap();
        }
    }

    fn writer_idle(&self) -> Duration {
        #[cfg(test)]
        match self.idle_ms.load(std::sync::atomic::Ordering::Relaxed) {
            0 => {}
            ms => return Duration::from_millis(ms),
        }
        WRITER_IDLE
    }

    /// Makes every later write fail (tests of a failing disk).
    #[cfg(test)]
    pub(crate) fn fail_writes(&self) {
        self.fail_writes
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl State {
    /// Encodes with `encode` into the current file's pending chunk (a new
    /// one, from `pos`, when the writer took the last).
    fn encode(&mut self, encode: impl FnOnce(&mut AlignedBuf)) {
        let seq = self.seq;
        if self.chunks.last().is_none_or(|c| c.seq != seq) {
            let bytes = self
                .free
                .pop()
                .unwrap_or_else(|| AlignedBuf::with_capacity(1 << 20));
            self.chunks.push(Chunk {
                seq,
                offset: self.pos,
                bytes,
                rolls: false,
            });
        }
        let chunk = self
            .chunks
            .last_mut()
            .expect("a chunk for the current file");
        let before = chunk.bytes.len();
        encode(&mut chunk.bytes);
        self.pos += (chunk.bytes.len() - before) as u64;
    }
}

/// The writer thread's own state.
struct Writer {
    /// The file being written.
    file: Option<JournalFile>,
    to_retire: mpsc::Sender<Retiring>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::segment::test_support::{append_batch, cache};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn key(partition: i32) -> JournalKey {
        JournalKey {
            topic_id: uuid::Uuid::from_u128(1),
            partition,
        }
    }

    fn open(dir: &Path, file_bytes: u64, before_write: MetadataSync) -> Arc<Journal> {
        Journal::open(
            dir,
            JournalConfig { file_bytes },
            Arc::new(StorageStats::default()),
            before_write,
        )
        .unwrap()
    }

    /// Appends `count` records of `len` bytes for one partition over one
    /// segment (written to first, as an append does), and waits for them.
    fn append_durably(journal: &Arc<Journal>, segment: &Arc<Segment>, count: usize, len: usize) {
        let partition = Arc::new(GroupCommit::new(0));
        let mut next = 0;
        for _ in 0..count {
            next = append_batch(segment, 1, 10) + 1;
            let batches = vec![7u8; len];
            journal
                .append(key(0), next - 1, &batches, segment, &partition, next, 0)
                .unwrap();
        }
        partition.wait_for(next).wait_blocking().unwrap();
    }

    fn names(dir: &Path, suffix: &str) -> Vec<u64> {
        let listing = files::list(&dir.join(JOURNAL_DIR)).unwrap();
        let files = match suffix {
            "journal" => listing.journals,
            _ => listing.spares,
        };
        files.into_iter().map(|(seq, _)| seq).collect()
    }

    #[test]
    fn nothing_is_made_on_disk_before_the_first_record() {
        let dir = tempfile::tempdir().unwrap();
        let _journal = open(dir.path(), DEFAULT_FILE_BYTES, Box::new(|| Ok(())));
        assert!(!dir.path().join(JOURNAL_DIR).exists());
    }

    #[test]
    fn the_metadata_is_made_durable_before_every_write_and_a_failure_stops_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let fail = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let journal = open(dir.path(), DEFAULT_FILE_BYTES, {
            let (calls, fail) = (calls.clone(), fail.clone());
            Box::new(move || {
                calls.fetch_add(1, Ordering::SeqCst);
                match fail.load(Ordering::SeqCst) {
                    true => Err(std::io::Error::other("catalog sync failed").into()),
                    false => Ok(()),
                }
            })
        });
        let segment = Arc::new(Segment::create(dir.path(), 0, 4096, cache()).unwrap());
        append_durably(&journal, &segment, 1, 100);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        fail.store(true, Ordering::SeqCst);
        let partition = Arc::new(GroupCommit::new(1));
        journal
            .append(key(0), 1, b"x", &segment, &partition, 2, 0)
            .unwrap();
        let err = partition.wait_for(2).wait_blocking().unwrap_err();
        assert!(err.to_string().contains("catalog sync failed"), "{err}");
        assert!(journal.check().is_err());
    }

    #[test]
    fn a_full_file_is_retired_once_its_segments_are_synced_and_comes_back_as_a_spare() {
        let dir = tempfile::tempdir().unwrap();
        let journal = open(dir.path(), 64 << 10, Box::new(|| Ok(())));
        let first = Arc::new(Segment::create(&dir.path().join("p-0"), 0, 4096, cache()).unwrap());
        // 20 records of 10 KiB: about four files' worth.
        append_durably(&journal, &first, 20, 10 << 10);
        journal.settle();
        assert!(!first.is_unsynced(), "a retired file's segment is synced");
        let journals = names(dir.path(), "journal");
        assert_eq!(journals.len(), 1, "only the current file: {journals:?}");
        assert!(journals[0] >= 4, "{journals:?}");
        assert!(names(dir.path(), "spare").len() <= files::MAX_SPARES);
        // The next files are spares, written over: the directory holds no
        // more files than before.
        append_durably(&journal, &first, 20, 10 << 10);
        journal.settle();
        let (later, spares) = (names(dir.path(), "journal"), names(dir.path(), "spare"));
        assert_eq!(later.len(), 1);
        assert!(later[0] >= journals[0] + 4, "{later:?}");
        assert!(
            later.len() + spares.len() <= 1 + files::MAX_SPARES,
            "{later:?} {spares:?}"
        );
    }

    #[test]
    fn an_append_wakes_the_idle_writer_every_time() {
        // The writer waits an hour for records, so only an append's wake
        // makes a record durable: one lost wake and the thread below never
        // finishes. Each append comes as the writer goes idle after the
        // last round, or after it already waits.
        let dir = tempfile::tempdir().unwrap();
        let journal = open(dir.path(), DEFAULT_FILE_BYTES, Box::new(|| Ok(())));
        journal.idle_ms.store(3_600_000, Ordering::Relaxed);
        let segment = Arc::new(Segment::create(dir.path(), 0, 4096, cache()).unwrap());
        let (done, finished) = mpsc::channel();
        let appender = journal.clone();
        std::thread::spawn(move || {
            for i in 0..500 {
                if i % 50 == 0 {
                    std::thread::sleep(Duration::from_millis(5));
                }
                append_durably(&appender, &segment, 1, 100);
            }
            done.send(()).unwrap();
        });
        finished
            .recv_timeout(Duration::from_secs(120))
            .expect("every append made durable: a wake of the writer was lost");
    }

    #[test]
    fn a_record_bigger_than_a_file_gets_a_file_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let journal = open(dir.path(), 64 << 10, Box::new(|| Ok(())));
        let segment = Arc::new(Segment::create(dir.path(), 0, 4096, cache()).unwrap());
        append_durably(&journal, &segment, 1, 10 << 10);
        append_durably(&journal, &segment, 1, 300 << 10);
        append_durably(&journal, &segment, 1, 10 << 10);
        journal.settle();
        // The big record rolled the first file and filled the second; the
        // last record rolled that one too. Both were retired.
        let listing = files::list(&dir.path().join(JOURNAL_DIR)).unwrap();
        assert_eq!(listing.journals.len(), 1);
        let sizes: Vec<u64> = listing
            .spares
            .iter()
            .map(|(_, path)| std::fs::metadata(path).unwrap().len())
            .collect();
        assert!(sizes.iter().any(|&len| len > 300 << 10), "{sizes:?}");
        let replay = Replay::open(dir.path()).unwrap();
        let mut entries = 0;
        replay.for_each(|_| entries += 1).unwrap();
        assert_eq!(entries, 1);
    }
}
