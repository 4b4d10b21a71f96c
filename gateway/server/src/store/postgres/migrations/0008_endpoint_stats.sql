-- Schema 8: per-endpoint delivery stats, one row per endpoint and time bucket
-- (its start, ms since the epoch): attempts, delivered, failed, and a latency
-- histogram (attempts per latency slot, the slots' bounds known to the gateway).
-- Each gateway adds what it counted since its last flush to the row
-- (INSERT ... ON CONFLICT DO UPDATE adding counts, and histograms slot by slot),
-- so gateways sharing the database merge by addition.
-- `endpoint_stats_by_age` serves the sweep that drops buckets past the history.
-- Additive only: a gateway that knows an older schema keeps running beside one
-- that applied this (it neither reads nor writes the table).
CREATE TABLE endpoint_stats (
    tenant_id       text NOT NULL,
    endpoint_id     text NOT NULL,
    bucket_start_ms bigint NOT NULL,
    attempts        bigint NOT NULL,
    delivered       bigint NOT NULL,
    failed          bigint NOT NULL,
    latency         bigint[] NOT NULL,
    PRIMARY KEY (tenant_id, endpoint_id, bucket_start_ms)
);
CREATE INDEX endpoint_stats_by_age ON endpoint_stats (bucket_start_ms);
