// Endpoints: the tenant's list, each by its name (description, uid or id)
// with its uid, destination (a broker's or AWS service's kind and target beside its address), channels, filter, state and breaker (as badges), success rate
// over the last day (one read of the tenant's stats history) and limits, and
// the form that creates one. An endpoint's own page (endpoint.js) edits it.

import { $, api, allPages, can, MOST_LISTED, tenantPath, el, cell, link, emptyRow, when, pressed, showError } from "./api.js";
import { plain } from "./chart_axes.js";
import { showFieldError } from "./forms.js";
import { endpointForm } from "./endpoint_form.js";
import { KIND_LABELS, awsTarget } from "./destination_picker.js";

/** What people call an endpoint: its description, else its uid, else its id. */
export const endpointName = (ep) => ep.description || ep.uid || ep.id;

/** A filter in one line, for a table cell. */
const filterLine = (filter) => (filter == null ? null : JSON.stringify(filter));

/** A breaker in a few words: its state, and until when it holds. */
export function breakerText(breaker) {
  if (!breaker) return "–";
  if (breaker.state === "closed") return breaker.trips ? `closed (${breaker.trips} trips)` : "closed";
  return `${breaker.state} until ${when(breaker.open_until)} (${breaker.trips} trips)`;
}

/** What a broker or AWS destination publishes to, in a few words; nothing for HTTP. */
function targetText(d) {
  if (d.type === "rabbitmq") return `exchange ${d.exchange || "(default)"}${d.routing_key ? `, key ${d.routing_key}` : ""}`;
  if (d.type === "nats") return `subject ${d.subject}`;
  if (d.type === "redis") return `stream ${d.stream}`;
  return awsTarget(d);
}

/** The destination cell: an HTTP endpoint's URL; another kind's kind, address and target. */
function destinationCell(ep) {
  const d = ep.destination;
  if (!d || d.type === "http") return el("td", { class: "url", text: ep.url });
  return el(
    "td",
    { class: "url", "data-destination": d.type },
    el("span", { class: "kind", text: KIND_LABELS[d.type] || d.type }),
    " ",
    ep.url,
    el("small", { class: "target", text: targetText(d) }),
  );
}

/** The badge's colour for each breaker state; the text says the state too. */
const BREAKER_TONES = { closed: "tone-good", half_open: "tone-warn", open: "tone-bad" };

/** A small coloured label; `tone` is one of console.css's `tone-*` classes. */
const badge = (text, tone) => el("span", { class: `badge ${tone}`, text });

/** The state cell: an enabled or disabled badge, and why it was disabled. */
function stateCell(ep) {
  if (!ep.disabled) return el("td", {}, badge("enabled", "tone-good"));
  return el("td", {}, badge("disabled", "tone-bad"), ep.disabled_reason ? ` (${ep.disabled_reason})` : null);
}

/** The breaker cell: its state as a badge, then until when it holds and its trips. */
function breakerCell(breaker) {
  if (!breaker) return cell(null);
  const until = breaker.state === "closed" ? "" : ` until ${when(breaker.open_until)}`;
  const trips = breaker.trips ? ` (${breaker.trips} trips)` : "";
  return el("td", {}, badge(breaker.state, BREAKER_TONES[breaker.state] || "tone-warn"), `${until}${trips}`);
}

const ONE_DECIMAL = new Intl.NumberFormat(undefined, { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** Recent totals as "98.5 % of 200" (delivered of all attempts), or a dash without attempts. */
export function successText(totals) {
  if (!totals || !totals.attempts) return "–";
  return `${ONE_DECIMAL.format((totals.delivered / totals.attempts) * 100)} % of ${plain(totals.attempts)}`;
}

/** The success cell of endpoint `id`, from its totals over the last day (if it had attempts). */
function successCell(id, totals) {
  const title = totals ? `Last 24 hours: ${plain(totals.delivered)} delivered, ${plain(totals.failed)} failed` : null;
  return el("td", { "data-success": id, class: "success", title, text: successText(totals) });
}

/**
 * Each endpoint's totals over the last 24 hours (the history's default
 * range), by id, from one read of the tenant's history. A gateway without
 * the route gives none; another failure is shown, and the list still drawn.
 */
async function recentTotals() {
  try {
    const history = await api(`${tenantPath()}/stats/history`);
    return new Map(history.endpoints.map((e) => [e.endpoint_id, e]));
  } catch (error) {
    if (error.status !== 404 && error.status !== 405) showError(error);
    return new Map();
  }
}

/** Every endpoint of the tenant, up to `MOST_LISTED` (for lists and pickers). */
export const allEndpoints = () => allPages(`${tenantPath()}/endpoints`);

/**
 * Fills an endpoint `<select>` (after `first`, the "any" choice), keeping the
 * choice made while the list loaded.
 */
export async function endpointChoices(select, first, label = (ep) => `${endpointName(ep)} (${ep.url})`) {
  const endpoints = await allEndpoints();
  const chosen = select.value;
  select.replaceChildren(first, ...endpoints.map((ep) => el("option", { value: ep.id, text: label(ep) })));
  select.value = chosen;
  return endpoints;
}

export async function show(_arg, polled, current) {
  // The secret of the last creation is shown once, not on the next visit.
  if (!polled) $("created-secret").hidden = true;
  const [endpoints, totals] = await Promise.all([allEndpoints(), recentTotals()]);
  if (!current()) return;
  $("endpoint-list-note").textContent = endpoints.length >= MOST_LISTED ? `The first ${MOST_LISTED} endpoints.` : "";
  $("endpoint-list").replaceChildren(
    ...(endpoints.length
      ? endpoints.map((ep) =>
          el(
            "tr",
            {},
            el("td", {}, link(`#endpoint/${encodeURIComponent(ep.id)}`, endpointName(ep)), endpointName(ep) === ep.id ? null : el("small", { class: "id", text: ep.id })),
            cell(ep.uid),
            destinationCell(ep),
            cell((ep.channels || []).join(", ")),
            el("td", {}, ep.filter == null ? "–" : el("code", { text: filterLine(ep.filter) })),
            stateCell(ep),
            breakerCell(ep.breaker),
            successCell(ep.id, totals.get(ep.id)),
            cell(`${ep.policy_effective.preset}, ${ep.policy_effective.max_attempts} attempts`),
            cell(ep.plugin),
            cell(ep.max_in_flight),
            cell(ep.rate_limit_per_s),
          ),
        )
      : [emptyRow(12, "No endpoints yet: create the first one below.")]),
  );
}

const form = $("endpoint-form");
const fields = endpointForm(form);
const createButton = el("button", { type: "submit", text: "Create endpoint" });
form.append(createButton);
form.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(createButton, () => create());
});

/** Creates the endpoint the form describes; a second press meanwhile is ignored. */
async function create() {
  try {
    const created = await api(`${tenantPath()}/endpoints`, "POST", fields.createBody());
    showFieldError(form, null);
    fields.reset();
    const name = endpointName(created);
    const key = created.public_key ? ` Its v1a public key, for the receiver: ${created.public_key}` : "";
    // A portal session without read_secrets is not shown the secret.
    $("created-secret").textContent = created.secret && can("read_secrets")
      ? `Created ${name}. Its signing secret, shown this once: ${created.secret}${key}`
      : `Created ${name}.`;
    $("created-secret").hidden = false;
    await show(null, true, () => true);
  } catch (error) {
    showFieldError(form, error);
  }
}
