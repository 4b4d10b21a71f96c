-- Late attempts: an attempt whose outcome came after its lease had passed to
-- another attempt (its node was paused). It reached the receiver, so the log
-- shows it, but its fenced outcome changed nothing. Kept apart from `attempts`,
-- whose (delivery, series, attempt) the current lease's attempt owns.
-- Additive only: a gateway that knows schema 3 keeps running beside one that
-- applied this (it neither reads nor writes the table).
CREATE TABLE late_attempts (
    delivery_id text NOT NULL,
    series      integer NOT NULL,
    attempt     integer NOT NULL,
    node_id     text NOT NULL,
    record      text NOT NULL,
    PRIMARY KEY (delivery_id, series, attempt, node_id)
);
