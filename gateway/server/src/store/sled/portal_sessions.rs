//! Portal sessions: the record under `pss` by token hash, with two indexes
//! beside it written in the same commit: by tenant (`pst`, for revoking a
//! tenant's sessions at once) and by expiry (`psx`, for the sweep).

use super::{SledStore, StoreError, Writes, keys, records};
use crate::ids::TenantId;
use crate::store::PortalSessionRecord;

/// Sessions one revoke or sweep commit removes at most.
const BATCH: usize = 500;

impl SledStore {
    pub(crate) async fn create_portal_session(
        &self,
        rec: &PortalSessionRecord,
    ) -> Result<(), StoreError> {
        let hash = rec.token_hash.as_str();
        let mut writes = Writes::default();
        writes.insert(keys::portal_session(hash), records::encode(rec));
        writes.insert(keys::portal_session_of(&rec.tenant_id, hash), Vec::new());
        writes.insert(
            keys::portal_session_expiry(rec.expires_at_ms, hash),
            rec.tenant_id.as_bytes().to_vec(),
        );
        self.commit(writes).await.map(drop)
    }

    pub(crate) fn portal_session(
        &self,
        hash: &str,
    ) -> Result<Option<PortalSessionRecord>, StoreError> {
        self.get(&keys::portal_session(hash))
    }

    /// Removes `found` sessions with their index entries, in one commit.
    async fn remove_portal_sessions(
        &self,
        found: Vec<PortalSessionRecord>,
    ) -> Result<usize, StoreError> {
        let mut writes = Writes::default();
        for rec in &found {
            let hash = rec.token_hash.as_str();
            writes.remove(keys::portal_session(hash));
            writes.remove(keys::portal_session_of(&rec.tenant_id, hash));
            writes.remove(keys::portal_session_expiry(rec.expires_at_ms, hash));
        }
        self.commit(writes).await?;
        Ok(found.len())
    }

    pub(crate) async fn end_portal_session(
        &self,
        rec: &PortalSessionRecord,
    ) -> Result<bool, StoreError> {
        let Some(found) = self.portal_session(&rec.token_hash)? else {
            return Ok(false);
        };
        Ok(self.remove_portal_sessions(vec![found]).await? == 1)
    }

    pub(crate) async fn revoke_portal_sessions(&self, t: &TenantId) -> Result<usize, StoreError> {
        let mut removed = 0;
        loop {
            let prefix = keys::portal_sessions_of(t);
            let found: Vec<PortalSessionRecord> = self
                .scan(move |r| r.scan_prefix(&prefix))
                .take(BATCH)
                .filter_map(|kv| match kv {
                    Ok((k, _)) => {
                        let hash = String::from_utf8_lossy(&k[keys::portal_sessions_of(t).len()..])
                            .into_owned();
                        self.portal_session(&hash).transpose()
                    }
                    Err(e) => Some(Err(e)),
                })
                .collect::<Result<_, _>>()?;
            if found.is_empty() {
                return Ok(removed);
            }
            removed += self.remove_portal_sessions(found).await?;
        }
    }

    pub(crate) async fn sweep_portal_sessions(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let prefix = keys::portal_session_expiries();
        let end = keys::portal_session_expiry(now_ms, "");
        let skip = prefix.len() + 21; // the 20 digits and the separator
        let found: Vec<PortalSessionRecord> = self
            .scan(move |r| r.range(prefix..end))
            .take(limit.min(BATCH))
            .filter_map(|kv| match kv {
                Ok((k, _)) => {
                    let hash = String::from_utf8_lossy(&k[skip..]).into_owned();
                    self.portal_session(&hash).transpose()
                }
                Err(e) => Some(Err(e)),
            })
            .collect::<Result<_, _>>()?;
        self.remove_portal_sessions(found).await
    }
}
