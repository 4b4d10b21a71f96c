//! Writes applied together, optionally only while the records they were planned
//! from are unchanged.
//!
//! Sweeps, deletes and ingest plan their writes from reads made before the write;
//! a concurrent outcome, replay or delete may land in between. A [`Writes`] carries
//! the conditions its plan relied on (a key exists, a record still holds the bytes
//! that were read), and is applied inside a transaction that checks them first, so
//! a plan made from a stale read is dropped instead of undoing the newer change.

use sled::transaction::{
    ConflictableTransactionError, TransactionError, TransactionalTree, UnabortableTransactionError,
};

use super::WriteResult;
use super::{SledStore, StoreError};

/// What a key must hold for a [`Writes`] to apply.
#[derive(Debug, Clone)]
enum Expect {
    /// Any value.
    Exists,
    /// Exactly these bytes (the record as it was read).
    Bytes(Vec<u8>),
    /// No value (the key was read absent).
    Absent,
}

impl Expect {
    /// Whether `current`, a key's value (`None`: absent), meets this expectation.
    fn holds(&self, current: Option<&[u8]>) -> bool {
        match (self, current) {
            (Self::Absent, current) => current.is_none(),
            (_, None) => false,
            (Self::Exists, Some(_)) => true,
            (Self::Bytes(b), Some(cur)) => cur == b.as_slice(),
        }
    }
}

/// Inserts and removes applied together, in order (a later write to a key wins).
#[derive(Debug, Default)]
pub(crate) struct Writes {
    ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    conditions: Vec<(Vec<u8>, Expect)>,
}

impl Writes {
    /// Sets `key` to `value`.
    pub(crate) fn insert(&mut self, key: impl AsRef<[u8]>, value: impl Into<Vec<u8>>) {
        self.ops.push((key.as_ref().to_vec(), Some(value.into())));
    }

    /// Removes `key`.
    pub(crate) fn remove(&mut self, key: impl AsRef<[u8]>) {
        self.ops.push((key.as_ref().to_vec(), None));
    }

    /// Applies the writes only if `key` exists when they are applied.
    pub(crate) fn require(&mut self, key: impl AsRef<[u8]>) {
        self.conditions
            .push((key.as_ref().to_vec(), Expect::Exists));
    }

    /// Applies the writes only if `key` still holds `bytes` when they are applied.
    pub(crate) fn require_unchanged(&mut self, key: impl AsRef<[u8]>, bytes: impl Into<Vec<u8>>) {
        self.conditions
            .push((key.as_ref().to_vec(), Expect::Bytes(bytes.into())));
    }

    /// Applies the writes only if `key` is still absent when they are applied.
    pub(crate) fn require_absent(&mut self, key: impl AsRef<[u8]>) {
        self.conditions
            .push((key.as_ref().to_vec(), Expect::Absent));
    }

    fn is_conditional(&self) -> bool {
        !self.conditions.is_empty()
    }

    /// The same writes as one sled batch (conditions are not checked).
    fn into_batch(self) -> sled::Batch {
        let mut batch = sled::Batch::default();
        for (key, value) in self.ops {
            match value {
                Some(v) => batch.insert(key, v),
                None => batch.remove(key),
            }
        }
        batch
    }

    /// Whether every condition holds in `tree` now, outside any transaction: what
    /// a dry run reports, without writing.
    pub(super) fn would_apply(&self, tree: &sled::Tree) -> Result<WriteResult, StoreError> {
        for (key, expect) in &self.conditions {
            if !expect.holds(tree.get(key)?.as_deref()) {
                return Ok(WriteResult::Stale);
            }
        }
        Ok(WriteResult::Written)
    }

    /// Inside a transaction: applies the writes if every condition holds; `Stale`
    /// (and nothing written) otherwise.
    pub(crate) fn apply_if_current(
        &self,
        tx: &TransactionalTree,
    ) -> Result<WriteResult, UnabortableTransactionError> {
        for (key, expect) in &self.conditions {
            if !expect.holds(tx.get(key)?.as_deref()) {
                return Ok(WriteResult::Stale);
            }
        }
        for (key, value) in &self.ops {
            match value {
                Some(v) => tx.insert(key.as_slice(), v.as_slice())?,
                None => tx.remove(key.as_slice())?,
            };
        }
        Ok(WriteResult::Written)
    }
}

impl SledStore {
    /// Applies `writes` atomically, at once, and waits until they are durable;
    /// `Stale` (nothing written) if a condition of theirs no longer holds.
    ///
    /// Not through the write queue: the write must be applied before this first
    /// awaits, so a request cancelled while it waits (its client gone) can neither
    /// leave an unacknowledged write behind for later nor release its idempotency
    /// lock before its write is visible.
    ///
    /// # Errors
    /// `Unavailable` if the write or its flush failed: the caller must not ack.
    pub(crate) async fn commit(&self, writes: Writes) -> Result<WriteResult, StoreError> {
        if writes.is_conditional() {
            let results = self.commit_each(vec![writes]).await?;
            return Ok(results.into_iter().next().unwrap_or(WriteResult::Stale));
        }
        let seq = {
            let db = self.held()?;
            db.records.apply_batch(writes.into_batch())?;
            self.sequence(&db)
        };
        self.wait_written(seq).await?;
        Ok(WriteResult::Written)
    }

    /// Applies each of `groups` that is still current, all in one transaction (keep
    /// the groups few: a bounded batch), and waits until that is durable. Returns
    /// each group's result, in order.
    ///
    /// # Errors
    /// `Unavailable` if the write or its flush failed.
    pub(crate) async fn commit_each(
        &self,
        groups: Vec<Writes>,
    ) -> Result<Vec<WriteResult>, StoreError> {
        let (results, seq) = self.transact_each(&groups)?;
        if let Some(seq) = seq {
            self.wait_written(seq).await?;
        }
        Ok(results)
    }

    /// Applies each of `groups` that is still current, in one transaction, and
    /// returns each group's result, and the write's sequence if one wrote
    /// anything; durability is the caller's to wait for.
    pub(super) fn transact_each(
        &self,
        groups: &[Writes],
    ) -> Result<(Vec<WriteResult>, Option<u64>), StoreError> {
        if groups.is_empty() {
            return Ok((Vec::new(), None));
        }
        let db = self.held()?;
        let applied = db.records.transaction(|tx| {
            groups
                .iter()
                .map(|g| g.apply_if_current(tx))
                .collect::<Result<Vec<_>, _>>()
                .map_err(ConflictableTransactionError::<()>::from)
        });
        match applied {
            Ok(r) => {
                let seq = r
                    .contains(&WriteResult::Written)
                    .then(|| self.sequence(&db));
                Ok((r, seq))
            }
            Err(TransactionError::Abort(())) => Err(StoreError::unavailable("write aborted")),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_apply_only_while_their_conditions_hold() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path(), 1 << 20, 0).unwrap();
        let stop = tokio_util::sync::CancellationToken::new();
        let flusher = store.start_flusher(store.sled_durability().unwrap(), stop.clone());
        store.records().unwrap().insert("rec", "v1").unwrap();
        let planned = |expect: &str, key: &str| {
            let mut w = Writes::default();
            w.require_unchanged("rec", expect.as_bytes());
            w.insert(key, b"x".as_slice());
            w
        };
        let mut needs_missing = Writes::default();
        needs_missing.require("missing");
        needs_missing.insert("never", b"x".as_slice());
        let results = store
            .commit_each(vec![planned("v1", "a"), planned("v0", "b"), needs_missing])
            .await
            .unwrap();
        assert_eq!(
            results,
            [WriteResult::Written, WriteResult::Stale, WriteResult::Stale]
        );
        assert!(store.records().unwrap().contains_key("a").unwrap());
        assert!(!store.records().unwrap().contains_key("b").unwrap());
        assert!(!store.records().unwrap().contains_key("never").unwrap());
        assert_eq!(
            store.commit(planned("v1", "c")).await.unwrap(),
            WriteResult::Written
        );
        stop.cancel();
        flusher.await.unwrap();
    }
}
