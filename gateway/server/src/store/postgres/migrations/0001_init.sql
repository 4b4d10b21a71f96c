-- hookgate's schema, version 1. Times are Unix milliseconds. Each record is
-- also kept whole as JSON (`record`), the same encoding as the embedded
-- backend's; the columns beside it are what queries filter and order on.

CREATE TABLE meta (
    key   text PRIMARY KEY,
    value bytea NOT NULL
);

CREATE TABLE tenants (
    id            text PRIMARY KEY,
    key_sha256    text NOT NULL,
    created_at_ms bigint NOT NULL
);
CREATE INDEX tenants_by_key ON tenants (key_sha256);

CREATE TABLE endpoints (
    tenant_id  text NOT NULL,
    id         text NOT NULL,
    timeout_ms bigint NOT NULL,
    record     text NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
-- A claim reads its endpoint's timeout by id alone (the queue carries no tenant
-- in its claim key).
CREATE INDEX endpoints_by_id ON endpoints (id);

-- The payload is text, byte for byte as accepted: jsonb would reorder keys and
-- break signatures over the original body.
CREATE TABLE events (
    tenant_id     text NOT NULL,
    id            text NOT NULL,
    event_type    text NOT NULL,
    payload       text NOT NULL,
    created_at_ms bigint NOT NULL,
    deliveries    text NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

-- Ids are ULIDs: id order is creation order, so cursors page on id alone.
CREATE TABLE deliveries (
    id            text PRIMARY KEY,
    tenant_id     text NOT NULL,
    event_id      text NOT NULL,
    endpoint_id   text NOT NULL,
    state         text NOT NULL,
    record        text NOT NULL
);
CREATE INDEX deliveries_by_tenant ON deliveries (tenant_id, id DESC);
CREATE INDEX deliveries_by_state ON deliveries (tenant_id, state, id DESC);
CREATE INDEX deliveries_by_endpoint ON deliveries (tenant_id, endpoint_id, id DESC);

-- One narrow row per pending delivery: the hot table the scheduler claims
-- from. A claim sets lease_token and pushes due_ms to the lease's expiry;
-- scheduled_ms keeps the time the attempt was due, which the lease reports.
-- series and attempts mirror the delivery's, so an outcome is fenced here.
CREATE TABLE queue (
    delivery_id text PRIMARY KEY,
    tenant_id   text NOT NULL,
    endpoint_id text NOT NULL,
    lane        smallint NOT NULL,
    due_ms      bigint NOT NULL,
    scheduled_ms bigint NOT NULL,
    lease_token bigint,
    leased_by   text,
    series      integer NOT NULL,
    attempts    integer NOT NULL
);
CREATE INDEX queue_by_endpoint ON queue (endpoint_id, lane, due_ms, delivery_id);
CREATE INDEX queue_by_due ON queue (due_ms);
ALTER TABLE queue SET (fillfactor = 70);

CREATE TABLE attempts (
    delivery_id text NOT NULL,
    series      integer NOT NULL,
    attempt     integer NOT NULL,
    record      text NOT NULL,
    PRIMARY KEY (delivery_id, series, attempt)
);

CREATE TABLE idempotency (
    tenant_id     text NOT NULL,
    key           text NOT NULL,
    body_sha256   text NOT NULL,
    response      text NOT NULL,
    created_at_ms bigint NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_by_age ON idempotency (created_at_ms);

CREATE TABLE plugins (
    tenant_id text NOT NULL,
    name      text NOT NULL,
    record    text NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE plugin_bytes (
    tenant_id text NOT NULL,
    name      text NOT NULL,
    version   integer NOT NULL,
    bytes     bytea NOT NULL,
    PRIMARY KEY (tenant_id, name, version)
);

-- Singleton work (retention, sweeps, alert rules): who holds it, until when.
CREATE TABLE singletons (
    name        text PRIMARY KEY,
    holder      text NOT NULL,
    until_ms    bigint NOT NULL
);
