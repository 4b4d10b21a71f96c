// Event types: the install-wide catalog (`GET /v1/event-types`), by group,
// each type with its description, its deprecated, archived and validating
// marks, and its latest schema and example. Read-only: the admin writes the
// catalog through the API. Archived types show only on request.

import { $, api, el } from "./api.js";

/** Every type of the catalog, archived ones too, following the cursor to the end. */
export async function allEventTypes() {
  const all = [];
  let cursor = null;
  do {
    const page = await api(`/v1/event-types?include_archived=true&limit=250${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

/** `[group, types]` pairs: groups by name, the ungrouped (`null`) last; types as listed. */
export function byGroup(types) {
  const groups = new Map();
  for (const type of types) {
    const group = type.group ?? null;
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(type);
  }
  return [...groups].sort(([a], [b]) => (a === null) - (b === null) || (a ?? "").localeCompare(b ?? ""));
}

/** A group's heading. */
export const groupName = (group) => group ?? "Ungrouped";

/** A small mark beside a type's name. */
export const badge = (kind) => el("span", { class: `badge ${kind}`, text: kind });

/** The marks a type carries: deprecated, archived, validating. */
export function badges(type) {
  return [type.deprecated && "deprecated", type.archived && "archived", type.validate && "validating"].filter(Boolean).map(badge);
}

/** The highest schema version and its document, or null. */
function latestSchema(schemas) {
  const versions = Object.keys(schemas || {}).map(Number);
  if (!versions.length) return null;
  const version = String(Math.max(...versions));
  return [version, schemas[version]];
}

const pretty = (value) => JSON.stringify(value, null, 2);

/** A document folded under `summary`, shown as two-space JSON when opened. */
const folded = (kind, summary, value) => el("details", { "data-doc": kind }, el("summary", { text: summary }), el("pre", { class: "json", text: pretty(value) }));

function typeItem(type) {
  const latest = latestSchema(type.schemas);
  const versions = Object.keys(type.schemas || {}).length;
  return el(
    "li",
    { "data-type": type.name },
    el("h4", {}, el("code", { text: type.name }), ...badges(type)),
    el("p", type.description ? { class: "description", text: type.description } : { class: "description empty", text: "No description." }),
    latest ? folded("schema", `Schema, version ${latest[0]}${versions > 1 ? ` (latest of ${versions})` : ""}`, latest[1]) : el("p", { class: "note", text: "No schema." }),
    type.example == null ? el("p", { class: "note", text: "No example." }) : folded("example", "Example", type.example),
  );
}

/** Which document of which type a `<details>` holds. */
const docKey = (details) => `${details.closest("[data-type]").dataset.type}\n${details.dataset.doc}`;

/** The catalog as last read. */
let types = [];

/** Lists `types` by group; archived ones only while the box is ticked. */
function draw() {
  const list = $("event-type-list");
  // A redraw keeps the documents that were opened open.
  const opened = new Set([...list.querySelectorAll("details[open]")].map(docKey));
  const withArchived = $("event-types-archived").checked;
  const shown = types.filter((t) => withArchived || !t.archived);
  const hidden = types.length - shown.length;
  $("event-types-count").textContent = `${shown.length} ${shown.length === 1 ? "type" : "types"}${hidden ? `; ${hidden} archived not shown` : ""}.`;
  let empty = "The catalog is empty: the admin adds types with POST /v1/event-types.";
  if (hidden) empty = "Every type is archived: tick the box above to see them.";
  list.replaceChildren(
    ...(shown.length
      ? byGroup(shown).map(([group, members]) =>
          el("div", { class: "event-group", "data-group": group ?? "" }, el("h3", { text: groupName(group) }), el("ul", { class: "event-types" }, ...members.map(typeItem))),
        )
      : [el("p", { class: "empty", text: empty })]),
  );
  for (const details of list.querySelectorAll("details")) details.open = opened.has(docKey(details));
}

export async function show(_arg, _polled, current) {
  const read = await allEventTypes();
  if (!current()) return;
  types = read;
  draw();
}

// Ticking redraws from what was read: the archived types are in it already.
$("event-types-archived").addEventListener("change", draw);
