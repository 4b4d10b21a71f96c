-- The plugin upload rate limit, shared by every node and kept across restarts.
-- Additive only: a gateway that knows schema 2 keeps running beside one that
-- applied this (it neither reads nor writes the table).

-- Each tenant's uploads within the last window (`UploadTimes` as JSON). An
-- upload locks its tenant's row, so nodes count one at a time.
CREATE TABLE plugin_uploads (
    tenant_id text PRIMARY KEY,
    record    text NOT NULL
);
