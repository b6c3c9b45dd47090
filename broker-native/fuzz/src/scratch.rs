//! A scratch directory per process for the targets that write files: under
//! `KBENCH_FUZZ_TMPDIR` (the fuzz script points it at a tmpfs), else
//! /dev/shm, else the system temporary directory. Emptied before each input.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let base = std::env::var_os("KBENCH_FUZZ_TMPDIR")
            .map(PathBuf::from)
            .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|p| p.is_dir()))
            .unwrap_or_else(std::env::temp_dir);
        base.join(format!("kbench-fuzz-{}", std::process::id()))
    })
}

/// An empty directory `name` inside this process's scratch directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = root().join(name);
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            panic!("cannot empty scratch dir {}: {e}", dir.display())
        }
        _ => {}
    }
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create scratch dir {}: {e}", dir.display()));
    dir
}

/// Removes directory `name` and, once it is empty, this process's scratch
/// directory (runs outside the fuzz script, which removes its own).
pub fn remove(name: &str) {
    let _ = std::fs::remove_dir_all(root().join(name));
    let _ = std::fs::remove_dir(root());
}
