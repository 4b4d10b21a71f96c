//! The benchmark's point of comparison: raw sled doing the writes an ingest
//! makes (event, delivery, schedule entry in one batch), flushed once per round
//! of concurrent clients, with none of hookgate's work around them.

use std::path::Path;
use std::time::Instant;

use super::StoreError;

/// Events per second raw sled ingests into a database in `dir` for `secs`, in
/// rounds of `clients` batches per flush; events carry `event_len` bytes.
///
/// # Errors
/// If the database cannot be opened or written.
pub async fn raw_ingest_rate(
    dir: &Path,
    secs: f64,
    event_len: usize,
    clients: usize,
) -> Result<f64, StoreError> {
    let db = sled::Config::new()
        .path(dir)
        .cache_capacity(64 << 20)
        .open()?;
    let tree = db.open_tree("records")?;
    let (event, delivery) = (vec![b'e'; event_len + 200], vec![b'd'; 420]);
    let started = Instant::now();
    let mut n: u64 = 0;
    while started.elapsed().as_secs_f64() < secs {
        for _ in 0..clients {
            n += 1;
            let mut batch = sled::Batch::default();
            batch.insert(
                format!("ev\0bench\0evt_{n:026}").as_bytes(),
                event.as_slice(),
            );
            batch.insert(
                format!("dl\0bench\0dlv_{n:026}").as_bytes(),
                delivery.as_slice(),
            );
            batch.insert(
                format!("sf\0ep_x\0{n:016}dlv_{n:026}").as_bytes(),
                b"bench".as_slice(),
            );
            tree.apply_batch(batch)?;
        }
        db.flush_async().await?;
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}
