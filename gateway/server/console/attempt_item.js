// One attempt on a delivery's timeline: its time, status or error kind,
// latency, verdict, the delay chosen, who decided, the gateway that made it,
// the request headers it sent and the receiver's response snippet.

import { el, definitions, duration, when, clock } from "./api.js";

/**
 * The request headers an attempt sent (`request_headers`: `[{name, value}]`,
 * sensitive endpoint header values already masked by the API), or "not
 * recorded" for an attempt made before the gateway kept them.
 */
export function requestHeaders(attempt) {
  const sent = Array.isArray(attempt.request_headers) ? attempt.request_headers : [];
  if (!sent.length) return el("p", { class: "note request-headers", "data-recorded": "no", text: "Request headers: not recorded" });
  return el(
    "details",
    { class: "request-headers", "data-recorded": "yes" },
    el("summary", { text: `Request headers sent (${sent.length})` }),
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, el("th", { text: "Name" }), el("th", { text: "Value" }))),
      el("tbody", {}, ...sent.map((h) => el("tr", {}, el("td", {}, el("code", { text: h.name })), el("td", { class: "header-value", text: h.value })))),
    ),
  );
}

/** The attempt's `<li>`: `failed` or `ok`, with its facts and what was sent and answered. */
export function attemptItem(a) {
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
    { class: failed ? "attempt failed" : "attempt ok", "data-status": a.status ?? a.error_kind ?? "", "data-attempt-id": a.id ?? "" },
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
        ["Attempt id", a.id],
      ]),
    ),
    requestHeaders(a),
    a.response_snippet ? el("pre", { class: "snippet", text: a.response_snippet }) : null,
  );
}
