// The console's charts, as SVG: lines and stacked bars over time with axes,
// ticks, a legend and the values under the pointer, and the simulator's
// per-second histogram. Each chart says what it drew in `data-*` attributes
// (for tests and assistive technology alike).

import { svg, label, titled, frame, axes, legend, plain, span } from "./chart_axes.js";

/** A note such as "no data yet" centred on (x, y) of an empty chart. */
function nothing(root, x, y, text) {
  root.append(label(x, y, text, { "text-anchor": "middle", class: "tick" }));
}

/**
 * Lines over time: `lines` are `{name, cls, points: [[ms, value or null]]}`
 * (null breaks the line). Every point has its value on hover; the legend
 * gives each line's `note` (its latest value, or a total). Returns an
 * `<svg>` whose `data-points` counts the values drawn.
 */
export function lineChart({ name, from, until, lines, format = plain, width = 560, height = 180 }) {
  const root = frame(width, height, name);
  const known = lines.flatMap((l) => l.points.filter(([, v]) => v != null && Number.isFinite(v)));
  root.dataset.points = String(known.length);
  const high = Math.max(0, ...known.map(([, v]) => v));
  const { x, y, box } = axes(root, { width, height, from, until, high, format });
  legend(root, lines.map((l) => [l.cls, `${l.name}${l.note != null ? ` ${l.note}` : ""}`]));
  if (known.length === 0) nothing(root, (box.left + box.right) / 2, (box.top + box.bottom) / 2, "no data yet");
  for (const line of lines) {
    // A null splits the line into runs; a run of one point is just its dot.
    let run = [];
    const flush = () => {
      if (run.length > 1) root.append(svg("polyline", { points: run.join(" "), fill: "none", class: `line ${line.cls}`, "stroke-width": 2 }));
      run = [];
    };
    for (const [t, v] of line.points) {
      if (v == null || !Number.isFinite(v)) {
        flush();
        continue;
      }
      const [px, py] = [x(t).toFixed(1), y(v).toFixed(1)];
      run.push(`${px},${py}`);
      const dot = svg("circle", { cx: px, cy: py, r: 2.5, class: `dot ${line.cls}`, "data-value": v });
      root.append(titled(dot, `${new Date(t).toLocaleString()}: ${line.name} ${format(v)}`));
    }
    flush();
  }
  return root;
}

/**
 * A bar's width in a bucket `full` px wide: a 1 px gap between wide bars,
 * none between narrow ones, so a day of 5-minute buckets still shows.
 */
const barWidthIn = (full) => Math.max(1.5, full > 4 ? full - 1 : full);

/**
 * Stacked bars over time: `buckets` are `{start: ms, values: [n per layer]}`,
 * each `step` ms wide; `layers` are `{name, cls, note}` from the bottom up.
 * Hovering a bucket shows its time and every layer's value; the value axis
 * counts in whole numbers. Returns an `<svg>` whose `data-bars` counts the
 * buckets with anything in them.
 */
export function stackedBars({ name, from, until, step, buckets, layers, format = plain, width = 560, height = 180 }) {
  const root = frame(width, height, name);
  const high = Math.max(0, ...buckets.map((b) => b.values.reduce((a, v) => a + (v || 0), 0)));
  const { x, y, box } = axes(root, { width, height, from, until, high, format, whole: true });
  legend(root, layers.map((l) => [l.cls, `${l.name}${l.note != null ? ` ${l.note}` : ""}`]));
  let drawn = 0;
  for (const bucket of buckets) {
    const left = x(bucket.start);
    const barWidth = barWidthIn(x(bucket.start + step) - left);
    const group = svg("g", { class: "bucket", "data-start": new Date(bucket.start).toISOString() });
    let base = 0;
    layers.forEach((layer, i) => {
      const v = bucket.values[i] || 0;
      if (v <= 0) return;
      group.append(svg("rect", { x: left.toFixed(2), y: y(base + v).toFixed(2), width: barWidth.toFixed(2), height: (y(base) - y(base + v)).toFixed(2), class: `bar ${layer.cls}`, "data-value": v }));
      base += v;
    });
    if (base > 0) drawn += 1;
    // The whole column answers the pointer, so a short bar is easy to hover.
    group.append(svg("rect", { x: left.toFixed(2), y: box.top, width: barWidth.toFixed(2), height: box.bottom - box.top, class: "hover" }));
    titled(group, `${span(bucket.start, bucket.start + step)}: ${layers.map((l, i) => `${format(bucket.values[i] || 0)} ${l.name}`).join(", ")}`);
    root.append(group);
  }
  root.dataset.bars = String(drawn);
  if (drawn === 0) nothing(root, (box.left + box.right) / 2, (box.top + box.bottom) / 2, "nothing in this time");
  return root;
}

/**
 * Bars of `counts` (one per second, from `from`), with the seconds under the
 * axis and the tallest bar's count over it. Returns an `<svg>` whose
 * `data-bars` counts the non-empty bars and `data-most` holds the tallest's count.
 */
export function histogram(counts, from, name, width = 360, height = 120) {
  const root = frame(width, height, name);
  const axis = 14;
  const most = Math.max(0, ...counts);
  const top = Math.max(1, most);
  const barWidth = (width - 2) / Math.max(1, counts.length);
  let drawn = 0;
  counts.forEach((count, i) => {
    if (count === 0) return;
    drawn += 1;
    const h = Math.max(1, (count / top) * (height - axis - 12));
    const bar = svg("rect", {
      x: (1 + i * barWidth).toFixed(2),
      y: (height - axis - h).toFixed(2),
      width: Math.max(1, barWidth - 1).toFixed(2),
      height: h.toFixed(2),
      class: "bar",
    });
    root.append(titled(bar, `${count} retries in second ${from + i}`));
  });
  root.dataset.bars = String(drawn);
  root.dataset.most = String(most);
  if (drawn === 0) nothing(root, width / 2, (height - axis) / 2, "no retries in these seconds");
  root.append(svg("line", { x1: 0, x2: width, y1: height - axis, y2: height - axis, class: "axis" }));
  root.append(label(1, height - 2, `${from} s`, { "text-anchor": "start", class: "tick" }));
  root.append(label(width - 1, height - 2, `${from + counts.length} s`, { "text-anchor": "end", class: "tick" }));
  root.append(label(width - 1, 10, `max ${most}/s`, { "text-anchor": "end", class: "tick" }));
  return root;
}
