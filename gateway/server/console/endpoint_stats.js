// An endpoint's delivery history from `GET .../endpoints/{id}/stats`: the
// totals and states as figures, then the history's two charts with their
// axes: delivered and failed attempts per bucket as stacked bars, and p50/p99
// latency per bucket as lines. The overview draws the same two charts from
// `GET .../stats/history` (`historyCharts`). A gateway without the route
// (404, 405) gets a short note, not an error.
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

/** Delivered and failed attempts per bucket, stacked; the legend holds the totals. */
function outcomesChart(history, from, until, step, buckets) {
  const chart = stackedBars({
    name: "Delivered and failed attempts",
    from,
    until,
    step,
    buckets: buckets.map((b) => ({ start: b.at, values: [b.delivered, b.failed] })),
    layers: [
      { name: "delivered", cls: "s-good", note: plain(history.totals.delivered) },
      { name: "failed", cls: "s-bad", note: plain(history.totals.failed) },
    ],
  });
  chart.dataset.chart = "outcomes";
  return chart;
}

/** p50 and p99 latency per bucket, each drawn at the middle of its bucket. */
function latencyChart(history, from, until, step, buckets) {
  const middle = (b) => b.at + step / 2;
  const line = (name, cls, key) => ({ name, cls, note: ms(history.totals[key]), points: buckets.map((b) => [middle(b), b[key]]) });
  const chart = lineChart({
    name: "Attempt latency, p50 and p99",
    from,
    until,
    format: ms,
    lines: [line("p50", "s0", "p50_ms"), line("p99", "s1", "p99_ms")],
  });
  chart.dataset.chart = "latency";
  return chart;
}

/**
 * The two charts of a history (an endpoint's stats, or the overview's
 * `stats/history`: both have `since, until, bucket_seconds, totals, buckets`),
 * side by side where there is room.
 */
export function historyCharts(history) {
  const step = history.bucket_seconds * 1000;
  const from = Date.parse(history.since);
  const until = Date.parse(history.until);
  const buckets = history.buckets.map((b) => ({ ...b, at: Date.parse(b.start) }));
  return el(
    "div",
    { class: "charts wide" },
    el("figure", {}, outcomesChart(history, from, until, step, buckets), el("figcaption", { text: "Delivered and failed attempts" })),
    el("figure", {}, latencyChart(history, from, until, step, buckets), el("figcaption", { text: "Latency (p50, p99)" })),
  );
}

/** What a history covers, in the browser's locale: "From … to …, in 5-minute buckets." */
export function historySpan(history) {
  return el("p", { class: "note", text: `From ${when(history.since)} to ${when(history.until)}, in ${plain(history.bucket_seconds / 60)}-minute buckets.` });
}

/** Draws `stats` (the route's answer) into `box`: what it covers, figures, then the two charts. */
export function renderStats(box, stats) {
  box.replaceChildren(historySpan(stats), figures(stats), historyCharts(stats));
}

/** The start of the range a time-range `<select>` names (its value: hours before now), as RFC 3339. */
export const sinceOf = (select) => new Date(Date.now() - Number(select.value) * 3_600_000).toISOString();

/** Loads the endpoint's stats at `path` since `since` into `box`, unless `isCurrent()` says the page moved on. */
export async function showStats(box, path, since, isCurrent) {
  box.replaceChildren(el("p", { class: "note", text: "Loading the endpoint's history…" }));
  let stats;
  try {
    stats = await api(`${path}/stats?since=${encodeURIComponent(since)}`);
  } catch (error) {
    // A gateway from before per-endpoint stats has no such route.
    if (error.status !== 404 && error.status !== 405) throw error;
    if (isCurrent()) box.replaceChildren(el("p", { class: "note", "data-stats": "unavailable", text: "Stats unavailable: this gateway keeps no per-endpoint history." }));
    return;
  }
  if (isCurrent()) renderStats(box, stats);
}
