// An endpoint's delivery history from `GET .../endpoints/{id}/stats`: the
// totals and states as figures, delivered and failed attempts per bucket as
// stacked bars, and p50/p99 latency per bucket as lines, each with its axes.
// A gateway without the route (404, 405) gets a short note, not an error.
//
// The answer's shape: {endpoint_id, bucket_seconds, since, until,
//   states: {pending, dead}, totals: {attempts, delivered, failed, p50_ms, p99_ms},
//   buckets: [{start, attempts, delivered, failed, p50_ms, p99_ms}]}

import { api, el, definitions, when } from "./api.js";
import { lineChart, stackedBars } from "./charts.js";
import { plain } from "./chart_axes.js";

const ms = (v) => (v == null ? "–" : `${plain(v)} ms`);

/** The totals and states as small figures, each `data-stat` named for tests. */
function figures(stats) {
  const { totals, states } = stats;
  const list = el(
    "dl",
    { class: "figures small", "data-stats": "totals" },
    ...definitions([
      ["Attempts", plain(totals.attempts)],
      ["Delivered", plain(totals.delivered)],
      ["Failed", plain(totals.failed)],
      ["p50 latency", ms(totals.p50_ms)],
      ["p99 latency", ms(totals.p99_ms)],
      ["Pending", plain(states.pending)],
      ["Dead", plain(states.dead)],
    ]),
  );
  const names = ["attempts", "delivered", "failed", "p50_ms", "p99_ms", "pending", "dead"];
  [...list.children].forEach((item, i) => (item.dataset.stat = names[i]));
  return list;
}

/** Draws `stats` (the route's answer) into `box`: figures, then the two charts. */
export function renderStats(box, stats) {
  const step = stats.bucket_seconds * 1000;
  const from = Date.parse(stats.since);
  const until = Date.parse(stats.until);
  const buckets = stats.buckets.map((b) => ({ ...b, at: Date.parse(b.start) }));
  const outcomes = stackedBars({
    name: "Delivered and failed attempts",
    from,
    until,
    step,
    buckets: buckets.map((b) => ({ start: b.at, values: [b.delivered, b.failed] })),
    layers: [
      { name: "delivered", cls: "s-good", note: plain(stats.totals.delivered) },
      { name: "failed", cls: "s-bad", note: plain(stats.totals.failed) },
    ],
  });
  outcomes.dataset.chart = "outcomes";
  // A latency belongs to the middle of its bucket.
  const middle = (b) => b.at + step / 2;
  const latency = lineChart({
    name: "Attempt latency, p50 and p99",
    from,
    until,
    format: ms,
    lines: [
      { name: "p50", cls: "s0", note: ms(stats.totals.p50_ms), points: buckets.map((b) => [middle(b), b.p50_ms]) },
      { name: "p99", cls: "s1", note: ms(stats.totals.p99_ms), points: buckets.map((b) => [middle(b), b.p99_ms]) },
    ],
  });
  latency.dataset.chart = "latency";
  box.replaceChildren(
    el("p", { class: "note", text: `From ${when(stats.since)} to ${when(stats.until)}, in ${plain(stats.bucket_seconds / 60)}-minute buckets.` }),
    figures(stats),
    el(
      "div",
      { class: "charts wide" },
      el("figure", {}, outcomes, el("figcaption", { text: "Delivered and failed attempts" })),
      el("figure", {}, latency, el("figcaption", { text: "Latency (p50, p99)" })),
    ),
  );
}

/** Loads the endpoint's stats at `path` into `box`, unless `isCurrent()` says the page moved on. */
export async function showStats(box, path, isCurrent) {
  box.replaceChildren(el("p", { class: "note", text: "Loading the endpoint's history…" }));
  let stats;
  try {
    stats = await api(`${path}/stats`);
  } catch (error) {
    // A gateway from before per-endpoint stats has no such route.
    if (error.status !== 404 && error.status !== 405) throw error;
    if (isCurrent()) box.replaceChildren(el("p", { class: "note", "data-stats": "unavailable", text: "Stats unavailable: this gateway keeps no per-endpoint history." }));
    return;
  }
  if (isCurrent()) renderStats(box, stats);
}
