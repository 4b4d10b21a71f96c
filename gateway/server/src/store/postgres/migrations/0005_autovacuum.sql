-- Autovacuum settings for the tables every delivery writes. Storage
-- parameters only: a gateway that knows schema 4 keeps running beside one
-- that applied this. The gateway vacuums the queue and analyzes outgrown
-- tables itself (`table_upkeep.rs`), so these matter where autovacuum runs,
-- and delivery speed never waits for it.

-- The queue holds a row per pending delivery and loses it when the delivery
-- ends: vacuum it after a fixed number of dead rows, whatever its size, and
-- unthrottled (it is small once vacuumed).
ALTER TABLE queue SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 5000
);

-- Each delivery's row is rewritten by its outcome, once or a few times: the
-- default (a fifth of the table dead) lets a large table carry millions of
-- dead rows before a vacuum.
ALTER TABLE deliveries SET (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.05
);
ALTER TABLE attempts SET (autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE events SET (autovacuum_analyze_scale_factor = 0.05);
