-- Schema 11: portal sessions, by their token's SHA-256 (hex), with the
-- tenant (to revoke a tenant's at once) and the expiry (for the sweep).
-- Additive only: a node that knows schema 10 neither reads nor writes it.
CREATE TABLE portal_sessions (
    token_hash    text PRIMARY KEY,
    tenant_id     text NOT NULL,
    expires_at_ms bigint NOT NULL,
    record        text NOT NULL
);
CREATE INDEX portal_sessions_by_tenant ON portal_sessions (tenant_id);
CREATE INDEX portal_sessions_by_expiry ON portal_sessions (expires_at_ms);
