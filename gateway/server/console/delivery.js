// One delivery: where it stands ("attempt n of N, next at 14:03:07", or the
// breaker holding it), its event's payload as received (or that it was
// expunged), and its attempt timeline, oldest first (attempt_item.js).
// Polled while open, so retries appear.

import { $, api, apiText, tenantPath, el, definitions, when, pressed, showNotice, redraw, clear } from "./api.js";
import { breakerText, endpointName } from "./endpoints.js";
import { progress } from "./deliveries.js";
import { attemptItem } from "./attempt_item.js";
import { indentJson, memberText } from "./json_text.js";

/** Polled again this often while the page is open. */
export const poll = 1000;

let current = null;
/** The delivery whose event is shown: the event is read once per visit. */
let eventShown = null;

/**
 * The event's uid, channels and tags, and its payload indented but otherwise
 * as received (its text is cut from the answer, never parsed), or a note that
 * it was expunged.
 */
async function showEvent(eventId, isCurrent) {
  const text = await apiText(`${tenantPath()}/events/${encodeURIComponent(eventId)}`);
  const event = JSON.parse(text);
  if (!isCurrent()) return;
  const raw = memberText(text, "payload");
  const shown = raw == null ? JSON.stringify(event.payload, null, 2) : indentJson(raw);
  // Open at first; a long payload folds away under its summary.
  const payload = event.payload_expunged_at
    ? el("p", { class: "note", "data-payload": "expunged", text: `Payload expunged at ${when(event.payload_expunged_at)}.` })
    : el(
        "details",
        { class: "payload", open: true },
        el("summary", { text: `Payload (${new Intl.NumberFormat().format(new TextEncoder().encode(raw ?? shown).length)} bytes)` }),
        el("pre", { class: "json", "data-payload": "shown", text: shown }),
      );
  $("delivery-event").replaceChildren(
    el(
      "dl",
      { class: "facts" },
      ...definitions([
        ["Event uid", event.uid],
        ["Channels", (event.channels || []).join(", ")],
        ["Tags", (event.tags || []).join(", ")],
      ]),
    ),
    payload,
  );
}

/** Why a pending delivery is not going now, when its endpoint's breaker holds it. */
function holding(delivery, endpoint) {
  if (!endpoint || delivery.state !== "pending") return null;
  if (endpoint.disabled) return `held: endpoint ${endpoint.id} is disabled`;
  if (endpoint.breaker.state === "closed") return null;
  return `held by the breaker of ${endpoint.id}: ${breakerText(endpoint.breaker)}`;
}

export async function show(id, polled, isCurrent) {
  if (!polled) {
    current = null;
    eventShown = null;
    $("delivery-replay").hidden = true;
    $("delivery-title").textContent = `Delivery ${id}`;
    for (const list of ["delivery-facts", "timeline", "delivery-event"]) clear($(list));
    $("delivery-progress").textContent = "";
  }
  const base = `${tenantPath()}/deliveries/${encodeURIComponent(id)}`;
  const delivery = await api(base);
  const endpoint = await api(`${tenantPath()}/endpoints/${encodeURIComponent(delivery.endpoint_id)}`).catch(() => null);
  if (!isCurrent()) return;
  current = delivery;
  $("delivery-title").textContent = `Delivery ${delivery.id}`;
  $("delivery-progress").textContent = holding(delivery, endpoint) || progress(delivery);
  $("delivery-facts").replaceChildren(
    ...definitions([
      ["State", delivery.state],
      ["Event", `${delivery.event_type} (${delivery.event_id})`],
      ["Endpoint", endpoint ? `${endpointName(endpoint)} (${endpoint.url})` : `${delivery.endpoint_id} (deleted)`],
      ["Created", when(delivery.created_at)],
      ["Updated", when(delivery.updated_at)],
    ]),
  );
  const log = delivery.attempt_log;
  redraw($("timeline"), log, () =>
    log.length ? log.map(attemptItem) : [el("li", { class: "empty", text: "No attempt yet: the first is due now." })],
  );
  // The event does not change while the page is open; it is read once, and
  // a failure to read it leaves the rest of the page (and a poll tries again).
  if (eventShown !== delivery.id) {
    try {
      await showEvent(delivery.event_id, isCurrent);
      eventShown = delivery.id;
    } catch (error) {
      const gone = error.status === 404;
      if (gone) eventShown = delivery.id;
      if (isCurrent()) $("delivery-event").replaceChildren(el("p", { class: "note", text: gone ? "The event is no longer kept." : `The event could not be read: ${error.message}` }));
    }
  }
  const replay = $("delivery-replay");
  replay.hidden = delivery.state !== "dead" && delivery.state !== "succeeded";
  replay.textContent = delivery.state === "succeeded" ? "Send again" : "Replay";
}

$("delivery-replay").addEventListener("click", (event) =>
  pressed(event.target, async () => {
    if (!current) return;
    const force = current.state === "succeeded";
    const path = `${tenantPath()}/deliveries/${encodeURIComponent(current.id)}/replay`;
    await api(path, "POST", force ? { force: true } : {});
    const id = current.id;
    await show(id, true, () => !$("delivery").hidden);
    showNotice(`Delivery ${id} is pending again.`);
  }),
);
