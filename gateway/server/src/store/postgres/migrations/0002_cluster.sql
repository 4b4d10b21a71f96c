-- Cluster mode. Additive only: a gateway that knows schema 1 keeps running
-- beside one that applied this (it neither reads nor writes these tables).

-- Each gateway's heartbeat: which nodes are alive, since when.
CREATE TABLE nodes (
    node_id      text PRIMARY KEY,
    started_ms   bigint NOT NULL,
    last_seen_ms bigint NOT NULL,
    version      text NOT NULL
);

-- What the endpoint's limits need across nodes: the breaker (state, streak,
-- the one half-open probe) and the starts of the last second (the rate
-- window). A claim locks the row, so one node at a time plans the endpoint's turn.
CREATE TABLE endpoint_runtime (
    endpoint_id text PRIMARY KEY,
    record      text NOT NULL
);

-- Live leases per endpoint, counted by every claim (max_in_flight).
CREATE INDEX queue_leased ON queue (endpoint_id, due_ms) WHERE lease_token IS NOT NULL;
