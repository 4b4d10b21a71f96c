// The dead-letter queue: dead deliveries grouped by reason and by endpoint, a
// replay button on each dead delivery, and bulk replay by filter: a dry run
// counts what matches, the count is confirmed, and the result names any
// endpoint whose breaker is still open.

import { $, api, can, ALL_ENDPOINTS, tenantPath, el, cell, link, emptyRow, when, clock, pressed, showNotice, redraw } from "./api.js";
import { endpointChoices } from "./endpoints.js";

/** Polled again this often while the page is open. */
export const poll = 3000;

/** Dead deliveries listed here; the Deliveries page pages through the rest. */
const LISTED = 25;

const form = $("replay-form");
let pending = null;

/** The bulk replay's body from the filters. */
function filters() {
  const body = { state: "dead" };
  for (const name of ["dead_reason", "endpoint_id", "event_type"]) {
    const value = form.elements[name].value.trim();
    if (value) body[name] = value;
  }
  for (const name of ["since", "until"]) {
    const value = form.elements[name].value;
    if (value) body[name] = new Date(value).toISOString();
  }
  return body;
}

function summaryRows(summary) {
  const reasons = Object.entries(summary.by_reason).filter(([, n]) => n > 0);
  $("dlq-total").textContent = `${summary.dead} dead${summary.complete ? "" : ` among the newest ${summary.scanned} deliveries`}`;
  redraw($("dlq-reasons"), reasons, () =>
    reasons.length
      ? reasons.map(([reason, n]) => el("tr", { "data-reason": reason }, cell(reason), cell(n)))
      : [emptyRow(2, "The DLQ is empty.")],
  );
  redraw($("dlq-endpoints"), summary.by_endpoint, () =>
    summary.by_endpoint.length
      ? summary.by_endpoint.map((e) => el("tr", {}, el("td", {}, link(`#endpoint/${encodeURIComponent(e.endpoint_id)}`, e.endpoint_id)), cell(e.dead)))
      : [emptyRow(2, "No endpoint has dead deliveries.")],
  );
}

function deadRow(d) {
  const button = el("button", { type: "button", text: "Replay", "data-delivery": d.id, "data-needs": "replay" });
  button.addEventListener("click", () =>
    pressed(button, async () => {
      await api(`${tenantPath()}/deliveries/${encodeURIComponent(d.id)}/replay`, "POST", {});
      await show(null, true, () => !$("dlq").hidden);
      showNotice(`Delivery ${d.id} is pending again.`);
    }),
  );
  return el(
    "tr",
    {},
    el("td", {}, link(`#delivery/${encodeURIComponent(d.id)}`, d.id)),
    cell(d.event_type),
    cell(d.endpoint_id),
    cell(d.dead_reason),
    cell(d.last_status ?? d.last_error),
    cell(when(d.updated_at)),
    el("td", {}, button),
  );
}

/** Bumped per request: only the latest answers are drawn. */
let asked = 0;

export async function show(_arg, polled, current) {
  if (!polled) await endpointChoices(form.elements.endpoint_id, el("option", { value: "", text: "any endpoint" }), (ep) => ep.id);
  const mine = ++asked;
  // The summary counts every endpoint's: not for a session limited to some.
  const summary = can(ALL_ENDPOINTS) ? await api(`${tenantPath()}/dlq/summary`) : null;
  const dead = await api(`${tenantPath()}/deliveries?state=dead&limit=${LISTED}`);
  if (!current() || mine !== asked) return;
  if (summary) summaryRows(summary);
  redraw($("dlq-list"), dead.data, () => (dead.data.length ? dead.data.map(deadRow) : [emptyRow(7, "No dead deliveries.")]));
  $("dlq-more").hidden = !dead.next_cursor;
}

/** The result line: how many went back, and each breaker still holding its endpoint. */
function result(answer) {
  const breakers = answer.open_breakers.map(
    (b) => `The breaker of ${b.endpoint_id} is ${b.state}${b.open_until ? ` until ${clock(b.open_until)}` : ""}: its probe goes now, and the rest follows once it succeeds.`,
  );
  return [`Replayed ${answer.replayed} dead deliver${answer.replayed === 1 ? "y" : "ies"}.`, ...breakers].join(" ");
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(form.querySelector("button[type=submit]"), async () => {
    // The count shown is always the count of the filters that will replay.
    $("replay-confirm-panel").hidden = true;
    pending = null;
    const body = filters();
    const dry = await api(`${tenantPath()}/replay`, "POST", { ...body, dry_run: true });
    pending = body;
    $("replay-result").hidden = true;
    $("replay-count").textContent =
      dry.replayed === 0
        ? "No dead delivery matches these filters."
        : `${dry.replayed} dead deliver${dry.replayed === 1 ? "y matches" : "ies match"}. Replay ${dry.replayed === 1 ? "it" : "them"}?`;
    $("replay-confirm").hidden = dry.replayed === 0;
    $("replay-confirm").dataset.count = String(dry.replayed);
    $("replay-confirm-panel").hidden = false;
    (dry.replayed === 0 ? $("replay-cancel") : $("replay-confirm")).focus();
  });
});

$("replay-confirm").addEventListener("click", (event) =>
  pressed(event.target, async () => {
    if (!pending) return;
    const answer = await api(`${tenantPath()}/replay`, "POST", pending);
    pending = null;
    $("replay-confirm-panel").hidden = true;
    $("replay-result").textContent = result(answer);
    $("replay-result").hidden = false;
    $("replay-result").focus();
    await show(null, true, () => !$("dlq").hidden);
  }),
);

$("replay-cancel").addEventListener("click", () => {
  $("replay-confirm-panel").hidden = true;
  pending = null;
  form.querySelector("button[type=submit]").focus();
});
