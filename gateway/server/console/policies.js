// Policies: the herd simulator. A policy (an endpoint's, edited or not) is run
// through `POST /v1/policy/simulate` beside every preset; each is drawn as the
// per-second histogram of its first retry wave and of the recovery once the
// receiver is back, with the simulator's figures.

import { $, api, store, el, definitions, duration, pressed } from "./api.js";
import { histogram } from "./charts.js";
import { checkNumber, fillPolicy, policyFieldset, policyOver, showFieldError, PRESET_NAMES } from "./forms.js";
import { endpointChoices } from "./endpoints.js";

/** Seconds drawn in each histogram. */
const WINDOW_S = 60;

const form = $("simulate-form");
form.querySelector("#simulate-policy").replaceWith(policyFieldset("Policy to simulate (empty: the default's)"));
let endpoints = [];

/** Per-second counts from `from` for `WINDOW_S` seconds. */
function window(arrivals, from) {
  const counts = new Array(WINDOW_S).fill(0);
  for (const { second, count } of arrivals) {
    if (second >= from && second < from + WINDOW_S) counts[second - from] = count;
  }
  return counts;
}

/**
 * Where the recovery histogram starts: the end of the outage, or, when the
 * recovery peak comes later than the window would show, half a window before it.
 */
function recoveryWindow(arrivals, outageS) {
  const after = arrivals.filter((a) => a.second >= outageS);
  const peak = after.reduce((best, a) => (best && best.count >= a.count ? best : a), null);
  if (!peak || peak.second < outageS + WINDOW_S) return { from: outageS, peak };
  return { from: peak.second - WINDOW_S / 2, peak };
}

function card(title, report) {
  const arrivals = report.retry_arrivals;
  const first = arrivals.length ? arrivals[0].second : 0;
  const outageS = Math.ceil(report.config.outage_ms / 1000);
  const recovery = recoveryWindow(arrivals, outageS);
  const recoveryCaption =
    recovery.from === outageS
      ? `Recovery, from the end of the ${duration(report.config.outage_ms)} outage`
      : `Recovery, around its peak at ${recovery.peak.second} s (the outage ended at ${outageS} s)`;
  const figures = definitions([
    ["Peak", `${report.peak_per_second}/s at ${report.peak_second} s`],
    ["Herd ratio", report.herd_ratio.toFixed(2)],
    ["Recovery peak", `${report.recovery_peak_per_second}/s`],
    ["Attempts", String(report.total_attempts)],
    ["Delivered", String(report.delivered)],
    ["Dead", Object.entries(report.dead).map(([r, n]) => `${n} ${r}`).join(", ") || "0"],
    ["Last delivery", duration(report.last_delivery_ms)],
  ]);
  return el(
    "article",
    { class: "simulation" },
    el("h3", { text: title }),
    el("dl", { class: "figures small" }, ...figures),
    el("div", { class: "charts" },
      el("figure", {}, histogram(window(arrivals, first), first, `${title}: first retry wave`), el("figcaption", { text: "First retry wave (retries per second)" })),
      el("figure", {}, histogram(window(arrivals, recovery.from), recovery.from, `${title}: recovery`), el("figcaption", { text: recoveryCaption })),
    ),
  );
}

/** The simulation's parameters from the form. */
function parameters() {
  checkNumber(form.elements.events);
  const events = form.elements.events.value.trim();
  const outage = form.elements.outage.value.trim();
  const body = {};
  if (events) body.events = Number(events);
  if (outage) body.outage = /^\d+$/.test(outage) ? Number(outage) : outage;
  return body;
}

export async function show() {
  const picker = form.elements.endpoint;
  if (!store.getItem("hookgate.tenant")) {
    picker.replaceChildren(el("option", { value: "", text: "(sign in with a tenant to pick its endpoints)" }));
    return;
  }
  endpoints = await endpointChoices(picker, el("option", { value: "", text: "none: start from the default" }));
}

/** A policy object as text with its keys sorted, to tell an edited one from the stored one. */
const canonical = (policy) => JSON.stringify(Object.fromEntries(Object.entries(policy || {}).sort(([a], [b]) => a.localeCompare(b))));

form.elements.endpoint.addEventListener("change", () => {
  const ep = endpoints.find((e) => e.id === form.elements.endpoint.value);
  fillPolicy(form, ep ? ep.policy : null);
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  pressed(form.querySelector("button[type=submit]"), simulate);
});

/** The chosen policy (the endpoint's, with the form's fields laid over it) and every preset. */
async function simulate() {
  $("simulations").replaceChildren(el("p", { class: "note", text: "Simulating…" }));
  try {
    const base = parameters();
    const ep = endpoints.find((e) => e.id === form.elements.endpoint.value);
    const policy = policyOver(form, ep ? ep.policy : null);
    const same = ep && canonical(ep.policy) === canonical(policy);
    const title = ep ? (same ? `${ep.id}'s policy` : `${ep.id}'s policy, edited`) : "This policy";
    const cards = [card(title, await api("/v1/policy/simulate", "POST", { ...base, policy }))];
    showFieldError(form, null);
    for (const preset of PRESET_NAMES) {
      cards.push(card(`Preset ${preset}`, await api("/v1/policy/simulate", "POST", { ...base, preset })));
    }
    $("simulations").replaceChildren(...cards);
  } catch (error) {
    $("simulations").replaceChildren();
    showFieldError(form, error);
  }
}
