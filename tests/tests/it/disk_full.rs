//! Issue 37, item 1: the disk fills under a running gateway on sled, below the
//! low-disk guard (`min_free_disk` off). Ingest refuses with 503 and never
//! acknowledges what it cannot keep; `/healthz` answers 503 and
//! `hookgate_store_failing` is 1; the receiver sees no storm (at most one
//! request more per event than it would have without the failure); and once
//! space returns the gateway recovers by itself, without a restart, and
//! delivers every event it acknowledged.
//!
//! The small disk is a tmpfs the test mounts where it may (root, as on this
//! project's machines); elsewhere a fault hook in the store fails every flush
//! with ENOSPC, as the durability tests inject flush failures. Either way the
//! same checks run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hookgate_server::lab::{DurabilityBackend, PersistFuture};
use hookgate_server::{RunOptions, Store};
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{TestGateway, test_config};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::store_outage::wait_health;

/// The small file system's size.
const DISK_MIB: u64 = 48;

/// How long any wait in this test may take.
const WAIT: Duration = Duration::from_secs(60);

/// Where the gateway's data dir lives, and how its disk is filled and freed.
enum SmallDisk {
    /// A tmpfs of [`DISK_MIB`] mounted by the test, filled by a file.
    Tmpfs { mount: PathBuf, filler: PathBuf },
    /// No mount allowed: flushes fail with ENOSPC while `full` is set.
    Hook { full: Arc<FullDisk> },
}

/// A durability backend that persists as sled does, except that while the
/// disk is "full" every flush fails with ENOSPC.
struct FullDisk {
    full: AtomicBool,
    real: Arc<dyn DurabilityBackend>,
}

impl DurabilityBackend for FullDisk {
    fn persist(&self) -> PersistFuture<'_> {
        Box::pin(async move {
            if self.full.load(Ordering::SeqCst) {
                return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
            }
            self.real.persist().await
        })
    }
}

/// Syncs nothing: the hook variant's data dir is a scratch one, and what the
/// test checks is what the store does when a flush fails.
struct Succeeds;

impl DurabilityBackend for Succeeds {
    fn persist(&self) -> PersistFuture<'_> {
        Box::pin(async { Ok(()) })
    }
}

impl SmallDisk {
    /// A tmpfs under `root` if one can be mounted; the fault hook otherwise.
    fn make(root: &Path) -> Self {
        let mount = root.join("disk");
        std::fs::create_dir_all(&mount).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={DISK_MIB}m"), "tmpfs"])
            .arg(&mount)
            .output()
            .is_ok_and(|o| o.status.success());
        if mounted {
            let filler = mount.join("filler");
            Self::Tmpfs { mount, filler }
        } else {
            println!("cannot mount a tmpfs here: flushes fail by a fault hook instead");
            let full = Arc::new(FullDisk {
                full: AtomicBool::new(false),
                real: Arc::new(Succeeds),
            });
            Self::Hook { full }
        }
    }

    fn data_dir(&self, root: &Path) -> PathBuf {
        match self {
            Self::Tmpfs { mount, .. } => mount.join("data"),
            Self::Hook { .. } => root.join("data"),
        }
    }

    /// Fills the disk to its last byte.
    fn fill(&self) {
        match self {
            Self::Tmpfs { filler, .. } => {
                use std::io::Write;
                let mut f = std::fs::File::create(filler).unwrap();
                let chunk = vec![0u8; 64 * 1024];
                // Bounded: the disk holds at most DISK_MIB MiB.
                for _ in 0..(DISK_MIB * 16 + 16) {
                    if f.write_all(&chunk).is_err() {
                        break;
                    }
                }
                for _ in 0..64 {
                    if f.write_all(&chunk[..512]).is_err() {
                        break;
                    }
                }
                let _ = f.sync_all();
            }
            Self::Hook { full } => full.full.store(true, Ordering::SeqCst),
        }
    }

    /// Gives the space back.
    fn free(&self) {
        match self {
            Self::Tmpfs { filler, .. } => std::fs::remove_file(filler).unwrap(),
            Self::Hook { full } => full.full.store(false, Ordering::SeqCst),
        }
    }

    /// The store the gateway runs on: its own, or one whose flushes the hook fails.
    async fn store(&self, config: &hookgate_server::StoreConfig) -> Option<Store> {
        match self {
            Self::Tmpfs { .. } => None,
            Self::Hook { full } => {
                let hook: Arc<dyn DurabilityBackend> = full.clone();
                Some(Store::open_with(config, Some(hook)).await.unwrap())
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        if let Self::Tmpfs { mount, .. } = self {
            let _ = Command::new("umount").arg("-l").arg(&*mount).output();
        }
    }
}

/// One value from `/metrics`, by its sample's name and labels.
async fn metric(gw: &TestGateway, sample: &str) -> Option<f64> {
    let (status, body) = gw.call("GET", "/metrics", None, None).await;
    assert_eq!(status, 200);
    let text = body.as_str().unwrap_or_default().to_owned();
    text.lines()
        .find_map(|l| l.strip_prefix(sample)?.strip_prefix(' ')?.parse().ok())
}

/// Posts one event; its status and, if acknowledged, its event id.
async fn post(gw: &TestGateway, key: &str, n: usize) -> (u16, Value) {
    let body = json!({"event_type": "disk.full", "payload": {"n": n, "pad": "x".repeat(400)}});
    gw.call("POST", "/v1/tenants/acme/events", Some(key), Some(body))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_failures_are_a_state_not_a_loop() {
    let root = Arc::new(tempfile::tempdir().unwrap());
    let disk = SmallDisk::make(root.path());
    let mut config = test_config(&disk.data_dir(root.path()));
    config.store.min_free_disk = 0;
    let store = disk.store(&config.store).await;
    let gw = TestGateway::start_with(
        config,
        Arc::clone(&root),
        RunOptions {
            store,
            ..Default::default()
        },
    )
    .await;
    // Slow answers, so attempts are in flight when the disk fills.
    let slow = (0..4_000).map(|_| Reply::status(200).after(Duration::from_millis(40)));
    let rx = Receiver::start(slow.collect()).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": rx.url(), "max_in_flight": 8}))
        .await;

    let mut acked = Vec::new();
    let mut n = 0;
    for _ in 0..150 {
        n += 1;
        let (status, body) = post(&gw, &key, n).await;
        assert_eq!(status, 202, "{body}");
        acked.push(body["id"].as_str().unwrap().to_owned());
    }

    disk.fill();
    // Ingest until the store says it is failing (bounded).
    let deadline = Instant::now() + WAIT;
    let mut refused = 0;
    while Instant::now() < deadline && refused < 20 {
        n += 1;
        let (status, body) = post(&gw, &key, n).await;
        match status {
            202 => acked.push(body["id"].as_str().unwrap().to_owned()),
            503 => {
                assert_eq!(body["error"]["code"], "store_unavailable", "{body}");
                refused += 1;
            }
            other => panic!("ingest answered {other} on a full disk: {body}"),
        }
    }
    assert_eq!(refused, 20, "ingest refuses on a full disk");
    let (status, body) = wait_health(&gw, 503, WAIT).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "store_unavailable", "{body}");
    assert_eq!(metric(&gw, "hookgate_store_failing").await, Some(1.0));
    let errors = [
        "hookgate_store_errors_total{kind=\"full\"}",
        "hookgate_store_errors_total{kind=\"unavailable\"}",
    ];
    let mut counted = 0.0;
    for sample in errors {
        counted += metric(&gw, sample).await.unwrap_or(0.0);
    }
    assert!(counted > 0.0, "the failures are counted");

    // While it stays full: no storm. Whatever was in flight when it filled
    // may have been sent; nothing more starts.
    let before = rx.received().len();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let during = rx.received().len() - before;
    assert!(
        during <= 8,
        "{during} requests sent in 3 s while storage was failing"
    );
    let (status, _) = post(&gw, &key, n + 1).await;
    assert_eq!(status, 503, "still full: still refused");

    disk.free();
    let (status, body) = wait_health(&gw, 200, WAIT).await;
    assert_eq!(status, 200, "recovers without a restart: {body}");
    assert_eq!(metric(&gw, "hookgate_store_failing").await, Some(0.0));
    for _ in 0..30 {
        n += 1;
        let (status, body) = post(&gw, &key, n).await;
        assert_eq!(status, 202, "ingest works again: {body}");
        acked.push(body["id"].as_str().unwrap().to_owned());
    }

    // Every acknowledged event arrives; none more than twice.
    let deadline = Instant::now() + WAIT;
    let counts = loop {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for r in rx.received() {
            *counts
                .entry(r.header("webhook-id").unwrap_or_default().to_owned())
                .or_default() += 1;
        }
        if acked.iter().all(|id| counts.contains_key(id)) || Instant::now() > deadline {
            break counts;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let missing: Vec<_> = acked
        .iter()
        .filter(|id| !counts.contains_key(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "acknowledged, never delivered: {missing:?}"
    );
    let (most_id, most) = counts.iter().max_by_key(|(_, n)| **n).unwrap();
    assert!(most <= &2, "{most_id} was sent {most} times");
    let extra = rx.received().len() - counts.len();
    // Shown, not checked: an outcome sled took in memory and lost in the
    // reopen is repeated without having been refused.
    let unrecorded = metric(
        &gw,
        "hookgate_internal_errors_total{kind=\"outcome_unrecorded\"}",
    )
    .await
    .unwrap_or(0.0);
    println!(
        "{} events acknowledged, {refused} refused while full; {} requests for {} events ({extra} repeated, \
         {unrecorded} counted as unrecorded), {during} sent while failing",
        acked.len(),
        rx.received().len(),
        counts.len()
    );
    gw.stop().await;
}
