-- Schema 7: every attempt has an id, and a tenant's attempts are listed by it
-- (ids are time-ordered), all of them or one endpoint's. The attempt's
-- record whole stays JSON in `record`; the columns beside it are what the two
-- indexes order and filter by. Rows written before have none of them and are
-- not listed (they stay on their delivery's log).
-- Additive only: a gateway that knows schema 6 keeps running beside one that
-- applied this (it writes attempts without the new columns, which are then
-- left out of lists).
ALTER TABLE attempts ADD COLUMN attempt_id text;
ALTER TABLE attempts ADD COLUMN tenant_id text;
ALTER TABLE attempts ADD COLUMN endpoint_id text;
CREATE UNIQUE INDEX attempts_by_tenant ON attempts (tenant_id, attempt_id)
    WHERE attempt_id IS NOT NULL;
CREATE INDEX attempts_by_endpoint ON attempts (tenant_id, endpoint_id, attempt_id)
    WHERE attempt_id IS NOT NULL;

ALTER TABLE late_attempts ADD COLUMN attempt_id text;
ALTER TABLE late_attempts ADD COLUMN tenant_id text;
ALTER TABLE late_attempts ADD COLUMN endpoint_id text;
CREATE UNIQUE INDEX late_attempts_by_tenant ON late_attempts (tenant_id, attempt_id)
    WHERE attempt_id IS NOT NULL;
CREATE INDEX late_attempts_by_endpoint ON late_attempts (tenant_id, endpoint_id, attempt_id)
    WHERE attempt_id IS NOT NULL;
