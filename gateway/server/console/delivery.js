// One delivery: where it stands ("attempt n of N, next at HH:MM:SS", or the
// breaker holding it) and its attempt timeline, oldest first, each attempt
// with its time, status or error kind, latency, verdict, delay chosen, who
// decided, and the response snippet. Polled while open, so retries appear.

import { $, api, tenantPath, el, definitions, duration, when, clock, pressed, showNotice, redraw, clear } from "./api.js";
import { breakerText } from "./endpoints.js";
import { progress } from "./deliveries.js";

/** Polled again this often while the page is open. */
export const poll = 1000;

let current = null;

/** Why a pending delivery is not going now, when its endpoint's breaker holds it. */
function holding(delivery, endpoint) {
  if (!endpoint || delivery.state !== "pending") return null;
  if (endpoint.disabled) return `held: endpoint ${endpoint.id} is disabled`;
  if (endpoint.breaker.state === "closed") return null;
  return `held by the breaker of ${endpoint.id}: ${breakerText(endpoint.breaker)}`;
}

function attemptItem(a) {
  const failed = !(a.status >= 200 && a.status < 300);
  const outcome = a.status != null ? `HTTP ${a.status}` : a.error_kind || "no answer";
  const decision =
    a.delay_ms != null
      ? `retry in ${duration(a.delay_ms)}${a.next_attempt_at ? ` (at ${clock(a.next_attempt_at)})` : ""}`
      : a.dead_reason
        ? `dead: ${a.dead_reason}`
        : "";
  return el(
    "li",
    { class: failed ? "attempt failed" : "attempt ok", "data-status": a.status ?? a.error_kind ?? "" },
    el("h4", { text: `Attempt ${a.attempt}${a.series > 1 ? ` (series ${a.series})` : ""} at ${when(a.started_at)}` }),
    el(
      "dl",
      {},
      ...definitions([
        ["Outcome", a.error_kind && a.status != null ? `${outcome}, ${a.error_kind}` : outcome],
        ["Latency", duration(a.duration_ms)],
        ["Verdict", a.verdict],
        ["Decision", decision],
        ["Decided by", a.decided_by],
        ["Policy", a.policy],
        ["Gateway", a.node_id],
      ]),
    ),
    a.response_snippet ? el("pre", { class: "snippet", text: a.response_snippet }) : null,
  );
}

export async function show(id, polled, isCurrent) {
  if (!polled) {
    current = null;
    $("delivery-replay").hidden = true;
    $("delivery-title").textContent = `Delivery ${id}`;
    for (const list of ["delivery-facts", "timeline"]) clear($(list));
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
      ["Endpoint", endpoint ? `${delivery.endpoint_id} (${endpoint.url})` : `${delivery.endpoint_id} (deleted)`],
      ["Created", when(delivery.created_at)],
      ["Updated", when(delivery.updated_at)],
    ]),
  );
  const log = delivery.attempt_log;
  redraw($("timeline"), log, () =>
    log.length ? log.map(attemptItem) : [el("li", { class: "empty", text: "No attempt yet: the first is due now." })],
  );
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
