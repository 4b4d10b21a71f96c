//! The statements on the hot paths (ingest, claims, outcomes), named once: the
//! backend runs them, and the benchmark's reference runs exactly the same text
//! through `tokio-postgres` alone, so the two cannot drift apart.

/// Ingest, first: the events' endpoints, held against a delete until commit.
/// `$1` tenants, `$2` endpoint ids.
pub(crate) const LOCK_ENDPOINTS: &str = "SELECT tenant_id, id FROM endpoints
     WHERE (tenant_id, id) IN (SELECT * FROM UNNEST($1::text[], $2::text[]))
     FOR KEY SHARE";

/// Ingest: the events. `$1` tenants, `$2` ids, `$3` types, `$4` payloads,
/// `$5` creation times, `$6` their (delivery, endpoint) lists as JSON.
pub(crate) const INSERT_EVENTS: &str =
    "INSERT INTO events (tenant_id, id, event_type, payload, created_at_ms, deliveries, uid, meta)
     SELECT t, id, ty, p, c, d, u, m::jsonb FROM UNNEST($1::text[], $2::text[], $3::text[],
         $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[]) AS x(t, id, ty, p, c, d, u, m)";

/// Ingest: the deliveries. `$1` ids, `$2` tenants, `$3` endpoints, `$4` records,
/// `$5` events.
pub(crate) const INSERT_DELIVERIES: &str =
    "INSERT INTO deliveries (id, tenant_id, endpoint_id, state, record, event_id)
     SELECT id, t, e, 'pending', r, ev
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, t, e, r, ev)";

/// Ingest: one queue row per delivery, due at once. `$1` delivery ids,
/// `$2` tenants, `$3` endpoints, `$4` due times.
pub(crate) const INSERT_QUEUE: &str = "INSERT INTO queue
     (delivery_id, tenant_id, endpoint_id, lane, due_ms, scheduled_ms, series, attempts)
     SELECT id, t, e, 0, due, due, 1, 0
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[]) AS u(id, t, e, due)";

/// The advisory lock's first key of a node's presence lock; the second is
/// `hashtext(node_id)`. Each node holds its own on its dedicated listening
/// connection: a process that dies gives it up with its session, one that is
/// paused (stopped, frozen) keeps it.
/// (`held_by_a_paused_node!` spells it out: 26727.)
pub(crate) const PRESENCE_LOCK_CLASS: i32 = 0x6867; // "hg"
const _: () = assert!(
    PRESENCE_LOCK_CLASS == 26727,
    "held_by_a_paused_node! spells it"
);

/// Whether a queue row's expired lease still holds its endpoint's place: it is
/// another node's (`$node`), that node still holds its presence lock, so it may
/// be paused with the request open at the receiver, and the lease ended less
/// than `store.paused_node_hold` (`$hold`) ago. A macro, so that the
/// statements below stay one literal each; `$now`, `$node` and `$hold` are
/// each statement's own parameters.
macro_rules! held_by_a_paused_node {
    ($now:literal, $node:literal, $hold:literal) => {
        concat!(
            "(lease_token IS NOT NULL AND leased_by <> ",
            $node,
            " AND due_ms <= ",
            $now,
            " AND due_ms > ",
            $now,
            " - ",
            $hold,
            " AND EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'",
            " AND classid = 26727 AND objsubid = 2 AND granted",
            " AND objid = (hashtext(leased_by)::bigint & 4294967295)::oid))"
        )
    };
}

/// The endpoint's leases that hold its places on every node: unexpired, or
/// expired but held by a paused node. `$1` endpoint, `$2` now, `$3` this node,
/// `$4` the hold; and the endpoint's timeout.
pub(crate) const LIVE_LEASES: &str = concat!(
    "SELECT (SELECT count(*) FROM queue WHERE endpoint_id = $1 AND ",
    "((lease_token IS NOT NULL AND due_ms > $2) OR ",
    held_by_a_paused_node!("$2", "$3", "$4"),
    ")), (SELECT max(timeout_ms) FROM endpoints WHERE id = $1)"
);

/// A claim: up to `$4` rows of endpoint `$1` in lane `$2` due by `$3`, oldest
/// first, skipping rows another claim holds and rows a paused node's lease
/// still holds (`$8` the hold); each gets token `$5` and holder `$6`, and is
/// due again when its lease expires (`$3` + margin `$7` + the endpoint's
/// timeout). Returns each row's delivery, scheduled time and record, its
/// event's payload (what the attempt sends), when its lease expires, and the
/// event's trace context (JSON text, or NULL).
pub(crate) const CLAIM: &str = concat!(
    "WITH due AS (
         SELECT delivery_id FROM queue
         WHERE endpoint_id = $1 AND lane = $2 AND due_ms <= $3 AND NOT ",
    held_by_a_paused_node!("$3", "$6", "$8"),
    "
         ORDER BY due_ms, delivery_id LIMIT $4
         FOR UPDATE SKIP LOCKED),
     claimed AS (
         UPDATE queue q SET lease_token = $5, leased_by = $6,
             due_ms = $3 + $7 + COALESCE(
                 (SELECT max(timeout_ms) FROM endpoints WHERE id = $1), 0)
         FROM due WHERE q.delivery_id = due.delivery_id
         RETURNING q.delivery_id, q.scheduled_ms, q.due_ms)
     SELECT c.delivery_id, c.scheduled_ms, d.record, e.payload, c.due_ms,
         (e.meta->'trace')::text
     FROM claimed c JOIN deliveries d ON d.id = c.delivery_id
     LEFT JOIN events e ON e.tenant_id = d.tenant_id AND e.id = d.event_id"
);

/// A leased delivery's record, while `$2` is still its lease: `$1` delivery,
/// `$3` tenant.
pub(crate) const LEASED_DELIVERY: &str =
    "SELECT d.record FROM queue q JOIN deliveries d ON d.id = q.delivery_id
     WHERE q.delivery_id = $1 AND q.lease_token = $2 AND d.tenant_id = $3";

/// An outcome that schedules a retry, in one statement: the queue row moves to
/// the retry lane at `$13` with `$14` attempts only under lease `$2` with the
/// series `$3` and attempts `$4` the worker started from, and while endpoint
/// (`$5`, `$6`) exists; then the delivery (state `$7`, record `$8`) and its log
/// entry (series `$9`, attempt `$10`, record `$11`, attempt id `$12`). Returns
/// 1 if written, 0 if stale.
pub(crate) const OUTCOME_RETRY: &str = "WITH moved AS (
         UPDATE queue SET lane = 1, due_ms = $13, scheduled_ms = $13, lease_token = NULL,
             leased_by = NULL, attempts = $14
         WHERE delivery_id = $1 AND lease_token = $2 AND series = $3 AND attempts = $4
           AND EXISTS (SELECT 1 FROM endpoints WHERE tenant_id = $5 AND id = $6)
         RETURNING delivery_id),
     d AS (UPDATE deliveries SET state = $7, record = $8
           FROM moved WHERE deliveries.id = moved.delivery_id),
     a AS (INSERT INTO attempts (delivery_id, series, attempt, record, attempt_id, tenant_id,
               endpoint_id)
           SELECT delivery_id, $9, $10, $11, $12, $5, $6 FROM moved
           ON CONFLICT (delivery_id, series, attempt) DO UPDATE SET record = EXCLUDED.record,
               attempt_id = EXCLUDED.attempt_id)
     SELECT count(*) FROM moved";

/// An outcome that settles the delivery (succeeded or dead): as
/// [`OUTCOME_RETRY`], with the queue row removed instead of moved.
pub(crate) const OUTCOME_FINAL: &str = "WITH moved AS (
         DELETE FROM queue
         WHERE delivery_id = $1 AND lease_token = $2 AND series = $3 AND attempts = $4
           AND EXISTS (SELECT 1 FROM endpoints WHERE tenant_id = $5 AND id = $6)
         RETURNING delivery_id),
     d AS (UPDATE deliveries SET state = $7, record = $8
           FROM moved WHERE deliveries.id = moved.delivery_id),
     a AS (INSERT INTO attempts (delivery_id, series, attempt, record, attempt_id, tenant_id,
               endpoint_id)
           SELECT delivery_id, $9, $10, $11, $12, $5, $6 FROM moved
           ON CONFLICT (delivery_id, series, attempt) DO UPDATE SET record = EXCLUDED.record,
               attempt_id = EXCLUDED.attempt_id)
     SELECT count(*) FROM moved";

/// Outcomes written together, each fenced as [`OUTCOME_RETRY`] and
/// [`OUTCOME_FINAL`] fence one: per outcome (the arrays' elements), `$1`
/// delivery, `$2` lease token, `$3` series and `$4` attempts the worker started
/// from, `$5` tenant and `$6` endpoint (which must exist), `$7` state and `$8`
/// record of the delivery, `$9` series, `$10` attempt and `$11` record of its
/// log entry, `$12` when a retry is due with `$13` attempts made (null: the
/// delivery is settled and its queue row removed), and `$14` the log entry's
/// attempt id. Returns the deliveries
/// written; the others were stale. No two outcomes of one delivery share a
/// statement.
pub(crate) const OUTCOMES: &str = "WITH o AS (
         SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::int[], $4::int[], $5::text[],
             $6::text[], $7::text[], $8::text[], $9::int[], $10::int[], $11::text[],
             $12::bigint[], $13::int[], $14::text[])
         AS o(id, token, series, attempts, tenant, endpoint, state, record, log_series,
             log_attempt, log, retry_due, retry_attempts, attempt_id)),
     live AS (
         SELECT o.* FROM o JOIN queue q ON q.delivery_id = o.id
         WHERE q.lease_token = o.token AND q.series = o.series AND q.attempts = o.attempts
           AND EXISTS (SELECT 1 FROM endpoints e WHERE e.tenant_id = o.tenant AND e.id = o.endpoint)
         FOR UPDATE OF q),
     moved AS (
         UPDATE queue SET lane = 1, due_ms = live.retry_due, scheduled_ms = live.retry_due,
             lease_token = NULL, leased_by = NULL, attempts = live.retry_attempts
         FROM live WHERE queue.delivery_id = live.id AND live.retry_due IS NOT NULL
         RETURNING queue.delivery_id),
     ended AS (
         DELETE FROM queue USING live
         WHERE queue.delivery_id = live.id AND live.retry_due IS NULL
         RETURNING queue.delivery_id),
     done AS (SELECT delivery_id FROM moved UNION ALL SELECT delivery_id FROM ended),
     d AS (UPDATE deliveries SET state = live.state, record = live.record
           FROM live JOIN done ON done.delivery_id = live.id WHERE deliveries.id = live.id),
     a AS (INSERT INTO attempts (delivery_id, series, attempt, record, attempt_id, tenant_id,
               endpoint_id)
           SELECT live.id, live.log_series, live.log_attempt, live.log, live.attempt_id,
               live.tenant, live.endpoint
           FROM live JOIN done ON done.delivery_id = live.id
           ON CONFLICT (delivery_id, series, attempt) DO UPDATE SET record = EXCLUDED.record,
               attempt_id = EXCLUDED.attempt_id)
     SELECT delivery_id FROM done";
