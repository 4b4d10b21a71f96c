// Overview: the stats API's current figures for the gateway (admin) or the
// signed-in tenant, then its attempts over a chosen time range, read from the
// stored history (`.../stats/history`): delivered and failed attempts per
// bucket and p50/p99 latency, drawn as the endpoint page draws its own.

import { $, api, can, ALL_ENDPOINTS, store, el, definitions, redraw, showError } from "./api.js";
import { historyCharts, historySpan, sinceOf } from "./endpoint_stats.js";

/** Polled again this often while the page is open. */
export const poll = 2000;

/** The time range chosen: its value is a number of hours, kept while the tab lives. */
const range = $("history-range");
/** Bumped on every history read, so an older answer never draws over a newer range. */
let reads = 0;

const percent = (x) => (x == null ? "–" : `${(x * 100).toFixed(1)} %`);
/** A latency bound: a number of ms, or a string such as ">60000". */
const latency = (x) => (x == null ? "–" : `${x} ms`);

/** The API path of the scope shown: the signed-in (or picked) tenant, else the whole gateway. */
function scopePath(tenant) {
  return tenant ? `/v1/tenants/${encodeURIComponent(tenant)}` : "/v1";
}

/** The current figures from `/v1/.../stats`: the whole tenant's, so not for a session limited to some endpoints. */
async function showFigures(tenant, isCurrent) {
  if (!can(ALL_ENDPOINTS)) return;
  const stats = await api(`${scopePath(tenant)}/stats`);
  if (!isCurrent()) return;
  $("figures").replaceChildren(
    ...definitions([
      ["Success rate", percent(stats.success_rate)],
      ["Retry rate", percent(stats.retry_rate)],
      ["p95 attempt latency", latency(stats.latency_ms.p95)],
      ["p99 attempt latency", latency(stats.latency_ms.p99)],
      ["DLQ size", String(stats.dlq_size)],
      ["Open breakers", String(stats.open_breakers)],
      ["Pending", String(stats.deliveries.pending)],
      ["Attempts", String(stats.attempts)],
    ]),
  );
}

/** The history's address for the chosen range, which ends now. */
function historyPath(tenant) {
  const since = sinceOf(range);
  return `${scopePath(tenant)}/stats/history?since=${encodeURIComponent(since)}`;
}

/** Reads the history; null from a gateway without the route (404, 405). */
async function readHistory(tenant) {
  try {
    return await api(historyPath(tenant));
  } catch (error) {
    if (error.status !== 404 && error.status !== 405) throw error;
    return null;
  }
}

/** The note shown when the answer counted only part of the range (`complete: false`). */
const incompleteNote = () =>
  el("p", { class: "note", "data-history": "incomplete", text: "Partial figures: this range holds more stored stats than one answer reads, so some endpoints are left out." });

/**
 * Draws a `stats/history` answer (or null: none kept) into `box`: what it
 * covers, a note if it is partial, and the two charts. Unchanged data is not
 * redrawn, so a poll keeps a chart under the pointer.
 */
export function renderHistory(box, history) {
  redraw(box, history, () => {
    if (!history) return [el("p", { class: "note", "data-history": "unavailable", text: "History unavailable: this gateway keeps no stats history." })];
    return [historySpan(history), history.complete === false ? incompleteNote() : null, historyCharts(history)].filter(Boolean);
  });
}

/** Reads and draws the history of the chosen range, unless the page moved on or a newer read started. */
async function showHistory(tenant, isCurrent) {
  const mine = ++reads;
  const history = await readHistory(tenant);
  if (isCurrent() && mine === reads) renderHistory($("history"), history);
}

export async function show(_arg, _polled, current) {
  const tenant = store.getItem("hookgate.tenant");
  $("overview-scope").textContent = tenant ? `Tenant ${tenant}` : "The whole gateway";
  await Promise.all([showFigures(tenant, current), showHistory(tenant, current)]);
}

// A new range is read at once, not at the next poll.
range.addEventListener("change", () => {
  const tenant = store.getItem("hookgate.tenant");
  showHistory(tenant, () => !$("overview").hidden).catch(showError);
});
