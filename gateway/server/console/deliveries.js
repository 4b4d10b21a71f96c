// Deliveries: the tenant's deliveries filtered by state, endpoint, event type,
// dead reason and time, a page at a time with the API's cursor. Each links to
// its attempt timeline (delivery.js).

import { $, api, tenantPath, el, cell, link, emptyRow, when, clock, showError, redraw } from "./api.js";
import { endpointChoices } from "./endpoints.js";

/** Polled again this often while the page is open. */
export const poll = 2000;

const form = $("delivery-filters");
/** Cursors of the pages before this one, and this one's. */
let previous = [];
let cursor = null;

/** The list's query string from the filters (times in the browser's zone, sent as RFC 3339). */
function query() {
  const params = new URLSearchParams();
  for (const name of ["state", "endpoint_id", "event_type", "event_id", "dead_reason"]) {
    const value = form.elements[name].value.trim();
    if (value) params.set(name, value);
  }
  for (const name of ["since", "until"]) {
    const value = form.elements[name].value;
    if (value) params.set(name, new Date(value).toISOString());
  }
  params.set("limit", "25");
  if (cursor) params.set("cursor", cursor);
  return params.toString();
}

/** Where the delivery stands, in a few words. */
export function progress(d) {
  if (d.state === "succeeded") return `delivered after ${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`;
  if (d.state === "dead") return `dead: ${d.dead_reason || "unknown"}`;
  if (d.state === "in_flight") return `attempt ${d.attempts + 1} under way`;
  const of = d.max_attempts ? ` of ${d.max_attempts}` : "";
  return d.next_attempt_at ? `attempt ${d.attempts}${of}, next at ${clock(d.next_attempt_at)}` : `attempt ${d.attempts}${of}`;
}

/** Bumped per request: only the latest answer is drawn. */
let asked = 0;

export async function show(_arg, polled, current) {
  if (!polled) await endpointChoices(form.elements.endpoint_id, el("option", { value: "", text: "any endpoint" }));
  const mine = ++asked;
  const page = await api(`${tenantPath()}/deliveries?${query()}`);
  if (!current() || mine !== asked) return;
  redraw($("delivery-list"), [page.data, cursor], () =>
    page.data.length
      ? page.data.map((d) =>
          el(
            "tr",
            { "data-state": d.state },
            el("td", {}, link(`#delivery/${encodeURIComponent(d.id)}`, d.id)),
            cell(d.event_type),
            cell(d.endpoint_id),
            cell(d.state),
            cell(progress(d)),
            cell(d.last_status ?? d.last_error),
            cell(when(d.created_at)),
          ),
        )
      : [emptyRow(7, cursor ? "No more deliveries." : "No deliveries match these filters.")],
  );
  $("delivery-next").disabled = !page.next_cursor;
  $("delivery-next").dataset.cursor = page.next_cursor || "";
  $("delivery-prev").disabled = previous.length === 0;
}

/** Draws the list again now (a filter or page changed), while the page is still open. */
const now = () => show(null, true, () => !$("deliveries").hidden).catch(showError);

form.addEventListener("submit", (event) => {
  event.preventDefault();
  previous = [];
  cursor = null;
  now();
});

$("delivery-next").addEventListener("click", (event) => {
  previous.push(cursor);
  cursor = event.target.dataset.cursor || null;
  now();
});

$("delivery-prev").addEventListener("click", () => {
  cursor = previous.pop() ?? null;
  now();
});
