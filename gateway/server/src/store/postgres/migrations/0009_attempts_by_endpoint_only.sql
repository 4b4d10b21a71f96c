-- Schema 9: `attempts` keeps one attempt index, the endpoint's. A tenant's
-- attempts are listed by merging its endpoints' orders, and an attempt is
-- found by id under each of them, so each outcome's statement maintains one
-- index fewer (each costs delivery throughput). `late_attempts`, written
-- rarely, keeps both.
-- A schema-8 node beside this one still finds and lists every attempt: its
-- tenant-wide reads go through the endpoint index, reading the tenant's whole
-- range instead of seeking.
DROP INDEX IF EXISTS attempts_by_tenant;
