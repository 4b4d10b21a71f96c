// Small SVG charts drawn on the page: a line for a polled series and bars for
// a per-second histogram. Presentation attributes only (no inline styles), so
// the strict Content-Security-Policy holds.

const NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

function frame(width, height, label) {
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: "img",
    "aria-label": label,
    class: "chart",
  });
  const title = svg("title");
  title.textContent = label;
  root.append(title);
  return root;
}

/**
 * A line of `values` (numbers or null for "not yet"), scaled to its own range.
 * Returns an `<svg>` whose `data-points` counts the values drawn.
 */
export function sparkline(values, label, width = 220, height = 48) {
  const root = frame(width, height, label);
  const known = values.map((v, i) => [i, v]).filter(([, v]) => v != null && Number.isFinite(v));
  root.dataset.points = String(known.length);
  if (known.length === 0) {
    const none = svg("text", { x: width / 2, y: height / 2, "text-anchor": "middle", class: "tick" });
    none.textContent = "no data yet";
    root.append(none);
    return root;
  }
  const top = Math.max(...known.map(([, v]) => v));
  const bottom = Math.min(0, ...known.map(([, v]) => v));
  const span = top - bottom || 1;
  const step = values.length > 1 ? (width - 4) / (values.length - 1) : 0;
  const points = known.map(([i, v]) => `${(2 + i * step).toFixed(1)},${(height - 3 - ((v - bottom) / span) * (height - 6)).toFixed(1)}`);
  root.append(svg("polyline", { points: points.join(" "), fill: "none", class: "line", "stroke-width": 2 }));
  const [lastX, lastY] = points[points.length - 1].split(",");
  root.append(svg("circle", { cx: lastX, cy: lastY, r: 3, class: "dot" }));
  return root;
}

/**
 * Bars of `counts` (one per second, from `from`), with the seconds under the
 * axis and the tallest bar's count over it. Returns an `<svg>` whose
 * `data-bars` counts the non-empty bars and `data-most` holds the tallest's count.
 */
export function histogram(counts, from, label, width = 360, height = 120) {
  const root = frame(width, height, label);
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
    const tip = svg("title");
    tip.textContent = `${count} retries in second ${from + i}`;
    bar.append(tip);
    root.append(bar);
  });
  root.dataset.bars = String(drawn);
  root.dataset.most = String(most);
  if (drawn === 0) {
    const none = svg("text", { x: width / 2, y: (height - axis) / 2, "text-anchor": "middle", class: "tick" });
    none.textContent = "no retries in these seconds";
    root.append(none);
  }
  root.append(svg("line", { x1: 0, x2: width, y1: height - axis, y2: height - axis, class: "axis" }));
  for (const [x, text, anchor] of [
    [1, `${from} s`, "start"],
    [width - 1, `${from + counts.length} s`, "end"],
  ]) {
    const tick = svg("text", { x, y: height - 2, "text-anchor": anchor, class: "tick" });
    tick.textContent = text;
    root.append(tick);
  }
  const peak = svg("text", { x: width - 1, y: 10, "text-anchor": "end", class: "tick" });
  peak.textContent = `max ${most}/s`;
  root.append(peak);
  return root;
}
