-- Schema 10: the event-type catalog, install-wide: one row per type name, the
-- record whole as JSON (description, group, schemas, example, flags).
-- Additive only: a node that knows schema 9 neither reads nor writes it.
CREATE TABLE event_types (
    name   text PRIMARY KEY,
    record text NOT NULL
);
