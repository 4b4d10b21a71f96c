-- Schema 6: tenants gain a uid, a name and metadata; events the platform's
-- own id (`uid`) and labels (`meta`: channels, tags, a scheduled send, as
-- JSON; NULL when none); and background tasks a table.
-- A tenant's record whole is JSON in `record` (NULL in rows written before:
-- read from the columns, named after the id); `uid` beside it, unique. The
-- key hash stays its own column, the one the key lookup reads; it is empty
-- once the tenant's delete was accepted.
-- Additive only: a gateway that knows schema 5 keeps running beside one that
-- applied this (it neither reads nor writes the new columns and table).
ALTER TABLE tenants ADD COLUMN uid text;
ALTER TABLE tenants ADD COLUMN record text;
CREATE UNIQUE INDEX tenants_by_uid ON tenants (uid);

ALTER TABLE events ADD COLUMN uid text;
ALTER TABLE events ADD COLUMN meta jsonb;
CREATE INDEX events_by_uid ON events (tenant_id, uid) WHERE uid IS NOT NULL;

-- One row per background task, the record whole as JSON. A claim takes a
-- running task whose runner's lease has passed or whose node has let its
-- presence lock go (it died), and writes its own token; each step is saved
-- only where the token is still its own.
CREATE TABLE tasks (
    id              text PRIMARY KEY,
    tenant_id       text NOT NULL,
    state           text NOT NULL,
    runner          text,
    runner_token    text,
    runner_until_ms bigint NOT NULL DEFAULT 0,
    record          text NOT NULL
);
CREATE INDEX tasks_by_tenant ON tasks (tenant_id, id DESC);
CREATE INDEX tasks_running ON tasks (id) WHERE state = 'running';
