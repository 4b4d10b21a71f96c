// The frame every time chart is drawn in: an SVG with a time axis under the
// plot and a value axis beside it, each with round ticks and labels in the
// browser's locale. Presentation attributes only (no inline styles), so the
// strict Content-Security-Policy holds.

const NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes. */
export function svg(tag, attrs = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

/** An SVG `<text>` at (x, y). */
export function label(x, y, content, attrs = {}) {
  const node = svg("text", { x, y, ...attrs });
  node.textContent = content;
  return node;
}

/** `node` with a `<title>`: what a pointer resting on it shows. */
export function titled(node, text) {
  const tip = svg("title");
  tip.textContent = text;
  node.append(tip);
  return node;
}

/** An `<svg>` of `width`×`height` that names itself `name` to assistive technology. */
export function frame(width, height, name) {
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": name, class: "chart" });
  return titled(root, name);
}

/**
 * Round values from 0 up to at least `high`: steps of 1, 2 or 5 times a
 * power of ten; at least 1 when `whole` (counts have no halves).
 */
export function valueTicks(high, count = 4, whole = false) {
  const top = high > 0 ? high : 1;
  const raw = whole ? Math.max(1, top / count) : top / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let k = 0; ; k++) {
    const v = Number((k * step).toPrecision(12));
    ticks.push(v);
    if (v >= top) return ticks;
  }
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Time steps a tick may take, shortest first. */
const STEPS = [
  ...[1, 2, 5, 10, 15, 30].map((n) => n * SECOND),
  ...[1, 2, 5, 10, 15, 30].map((n) => n * MINUTE),
  ...[1, 2, 3, 6, 12].map((n) => n * HOUR),
  ...[1, 2, 7, 14].map((n) => n * DAY),
];

/** Tick times between `from` and `until` (ms), on round local times. */
export function timeTicks(from, until, count = 5) {
  const step = STEPS.find((s) => (until - from) / s <= count) ?? STEPS[STEPS.length - 1];
  // Round in local time, so hour and day ticks fall on the browser's own hours.
  const offset = -new Date(from).getTimezoneOffset() * MINUTE;
  const ticks = [];
  for (let t = Math.ceil((from + offset) / step) * step - offset; t <= until; t += step) ticks.push(t);
  return { ticks, step };
}

/** How a tick's time reads for a step: seconds only when the step is under a minute, the date once it is a day. */
function timeFormat(step) {
  if (step >= DAY) return new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
  if (step < MINUTE) return new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit", second: "2-digit" });
  return new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit" });
}

/** Counts and amounts as the browser's locale writes them. */
const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
export const plain = (v) => (v == null ? "–" : NUMBER.format(v));

/** A time range as the hover text starts: "14:05 – 14:10". */
export function span(from, until) {
  return new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "short" }).formatRange(new Date(from), new Date(until));
}

/**
 * The axes for values from 0 to `high` over `from`..`until`, drawn into
 * `root`; returns the scales `x(t)` and `y(v)` and the plot's box.
 * `format` writes a value tick's label; `whole` keeps the ticks on whole numbers.
 */
export function axes(root, { width, height, from, until, high, format = plain, top = 18, whole = false }) {
  const box = { left: 46, right: width - 24, top, bottom: height - 20 };
  const ticks = valueTicks(high, 4, whole);
  const most = ticks[ticks.length - 1];
  const last = until > from ? until : from + 1;
  const x = (t) => box.left + ((t - from) / (last - from)) * (box.right - box.left);
  const y = (v) => box.bottom - (v / most) * (box.bottom - box.top);
  for (const v of ticks) {
    root.append(svg("line", { x1: box.left, x2: box.right, y1: y(v), y2: y(v), class: v === 0 ? "axis" : "grid" }));
    root.append(label(box.left - 4, y(v) + 3, format(v), { "text-anchor": "end", class: "tick y" }));
  }
  root.append(svg("line", { x1: box.left, x2: box.left, y1: box.top, y2: box.bottom, class: "axis" }));
  const { ticks: times, step } = timeTicks(from, last, Math.max(2, Math.floor((box.right - box.left) / 90)));
  const write = timeFormat(step);
  for (const t of times) {
    root.append(svg("line", { x1: x(t), x2: x(t), y1: box.bottom, y2: box.bottom + 4, class: "axis" }));
    root.append(label(x(t), height - 6, write.format(new Date(t)), { "text-anchor": "middle", class: "tick x" }));
  }
  root.dataset.valueTicks = String(ticks.length);
  root.dataset.timeTicks = String(times.length);
  // The time axis's span, for tests and anyone reading the markup.
  root.dataset.from = new Date(from).toISOString();
  root.dataset.until = new Date(last).toISOString();
  return { x, y, box };
}

/** A legend across the top: one swatch and text per `[cls, text]`. */
export function legend(root, items) {
  let at = 46;
  for (const [cls, text] of items) {
    root.append(svg("rect", { x: at, y: 4, width: 10, height: 10, class: `swatch ${cls}` }));
    root.append(label(at + 14, 13, text, { class: "tick legend" }));
    at += 24 + text.length * 6;
  }
}
