// Overview: the stats API's figures for the gateway (admin) or the signed-in
// tenant, and charts of the series this tab has polled since sign-in, each
// with a time axis, a value axis, its latest value and every sample's on hover.

import { $, api, store, el, definitions } from "./api.js";
import { lineChart } from "./charts.js";
import { plain } from "./chart_axes.js";

/** Polled again this often while the page is open. */
export const poll = 2000;

/** The samples kept per chart: ten minutes at one per two seconds. */
const KEEP = 300;
const samples = [];

const percent = (x) => (x == null ? "–" : `${(x * 100).toFixed(1)} %`);
/** A latency bound: a number of ms, or a string such as ">60000". */
const latency = (x) => (x == null ? "–" : `${x} ms`);
const number = (x) => (typeof x === "number" ? x : x == null ? null : Number(String(x).replace(/[^0-9.]/g, "")));

const ms = (v) => (v == null ? "–" : `${plain(v)} ms`);

/** What each chart draws from a sample (attempts/s from two), and how its values read. */
const CHARTS = [
  ["Attempts per second", (s, prev) => (prev ? Math.max(0, (s.attempts - prev.attempts) / ((s.at - prev.at) / 1000)) : null), plain],
  ["Success rate", (s) => s.success_rate, percent],
  ["Retry rate", (s) => s.retry_rate, percent],
  ["p95 attempt latency", (s) => number(s.latency_ms.p95), ms],
  ["DLQ size", (s) => s.dlq_size, plain],
  ["Open breakers", (s) => s.open_breakers, plain],
];

export async function show(_arg, _polled, current) {
  const tenant = store.getItem("hookgate.tenant");
  $("overview-scope").textContent = tenant ? `Tenant ${tenant}` : "The whole gateway";
  const path = tenant ? `/v1/tenants/${encodeURIComponent(tenant)}/stats` : "/v1/stats";
  const stats = await api(path);
  if (!current()) return;
  samples.push({ ...stats, at: Date.now() });
  if (samples.length > KEEP) samples.shift();
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
  const [from, until] = [samples[0].at, samples[samples.length - 1].at];
  $("charts").replaceChildren(
    ...CHARTS.map(([name, value, format]) => {
      const points = samples.map((s, i) => [s.at, value(s, samples[i - 1])]);
      const latest = points[points.length - 1][1];
      const line = { name: "now", cls: "s0", note: format(latest), points };
      return el("figure", {}, lineChart({ name, from, until, lines: [line], format, width: 320, height: 140 }), el("figcaption", { text: name }));
    }),
  );
}
