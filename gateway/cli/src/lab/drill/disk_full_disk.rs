//! The disk-full drill's small disk: a tmpfs of a set size that the drill
//! mounts (root only), fills to its last byte with a file, frees by removing
//! the file, and unmounts (lazily, so a gateway still holding files in it
//! cannot stop it) when dropped, however the drill ends.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The filler's chunks: large ones first, then small ones for the last pages.
const BIG_CHUNK: usize = 1024 * 1024;
const SMALL_CHUNK: usize = 4 * 1024;
/// Small chunks written at most after the large ones stop fitting.
const MAX_SMALL_CHUNKS: usize = 2 * BIG_CHUNK / SMALL_CHUNK;

/// Why the small disk could not be made, filled or freed.
#[derive(Debug, thiserror::Error)]
pub enum SmallDiskError {
    /// `mount` failed: most often, the drill does not run as root.
    #[error(
        "cannot mount a {mib} MiB tmpfs at {dir} (the disk-full drill needs root to mount it): {why}"
    )]
    Mount { mib: u64, dir: String, why: String },
    /// The mount point could not be made, or the filler written or removed.
    #[error("the small disk at {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
    /// The filler was written to its bound without running out of space.
    #[error("the small disk at {dir} took {bytes} bytes without filling up")]
    NeverFull { dir: String, bytes: u64 },
}

impl From<SmallDiskError> for super::DrillError {
    fn from(e: SmallDiskError) -> Self {
        Self::Setup(e.to_string())
    }
}

/// A mounted tmpfs; unmounted (lazily) when dropped.
pub(super) struct SmallDisk {
    mount: PathBuf,
    filler: PathBuf,
    mib: u64,
}

impl SmallDisk {
    /// Mounts a tmpfs of `mib` MiB at `mount` (made if missing).
    pub(super) fn mount(mount: &Path, mib: u64) -> Result<Self, SmallDiskError> {
        let dir = mount.display().to_string();
        std::fs::create_dir_all(mount).map_err(|source| SmallDiskError::Io {
            dir: dir.clone(),
            source,
        })?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(mount)
            .output();
        let why = match out {
            Ok(o) if o.status.success() => None,
            // mount's first line says why; the rest points at dmesg.
            Ok(o) => Some(
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_owned(),
            ),
            Err(e) => Some(format!("cannot run mount: {e}")),
        };
        if let Some(why) = why {
            return Err(SmallDiskError::Mount { mib, dir, why });
        }
        Ok(Self {
            filler: mount.join("filler"),
            mount: mount.to_path_buf(),
            mib,
        })
    }

    /// The gateway's data dir, on the small disk.
    pub(super) fn data_dir(&self) -> PathBuf {
        self.mount.join("data")
    }

    /// The disk's size in MiB.
    pub(super) fn mib(&self) -> u64 {
        self.mib
    }

    /// Writes the filler until the disk is full (bounded by the disk's size);
    /// the bytes it took.
    pub(super) fn fill(&self) -> Result<u64, SmallDiskError> {
        let io = |source| SmallDiskError::Io {
            dir: self.mount.display().to_string(),
            source,
        };
        let mut file = std::fs::File::create(&self.filler).map_err(io)?;
        let chunk = vec![0xa5u8; BIG_CHUNK];
        let mut bytes = 0u64;
        let mut full = false;
        // A write that does not fit may still write part of its chunk, and
        // tmpfs counts pages: the small chunks take what the large ones left.
        for _ in 0..=self.mib + 1 {
            match file.write(&chunk) {
                Ok(n) if n == chunk.len() => bytes += n as u64,
                Ok(n) => {
                    bytes += n as u64;
                    break;
                }
                Err(_) => break,
            }
        }
        for _ in 0..MAX_SMALL_CHUNKS {
            match file.write(&chunk[..SMALL_CHUNK]) {
                Ok(n) if n > 0 => bytes += n as u64,
                Ok(_) => {
                    full = true;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => {
                    full = true;
                    break;
                }
                Err(e) => return Err(io(e)),
            }
        }
        if !full {
            return Err(SmallDiskError::NeverFull {
                dir: self.mount.display().to_string(),
                bytes,
            });
        }
        Ok(bytes)
    }

    /// Removes the filler: the space comes back.
    pub(super) fn free(&self) -> Result<(), SmallDiskError> {
        std::fs::remove_file(&self.filler).map_err(|source| SmallDiskError::Io {
            dir: self.mount.display().to_string(),
            source,
        })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount).output();
    }
}
