// The event-type catalog: its page, by group with each type's marks and its
// latest schema and example, the archived type hidden until asked for; the
// endpoint form's picker, which subscribes from the catalog beside typed
// patterns, ticks an endpoint's names again when it is edited, and keeps the
// names the catalog does not offer; the admin reads the catalog too.
import { signIn, waitForText } from "./browser.mjs";

/** The catalog page's groups, each with its types' names, marks and descriptions. */
const listed = (page) =>
  page.$$eval("#event-type-list .event-group", (groups) =>
    groups.map((g) => ({
      group: g.querySelector("h3").textContent,
      types: [...g.querySelectorAll("li[data-type]")].map((li) => ({
        name: li.querySelector("h4 code").textContent,
        badges: [...li.querySelectorAll(".badge")].map((b) => b.textContent),
        description: li.querySelector(".description").textContent,
      })),
    })),
  );

/** A form's picker: its groups of checkboxes (name, ticked, marks) and the typed text. */
const picker = (page, form) =>
  page.$eval(`${form} .event-type-picker`, (p) => ({
    groups: [...p.querySelectorAll(".event-type-group")].map((g) => ({
      group: g.querySelector(".group-name").textContent,
      types: [...g.querySelectorAll("label")].map((l) => ({
        name: l.querySelector("input").value,
        ticked: l.querySelector("input").checked,
        badges: [...l.querySelectorAll(".badge")].map((b) => b.textContent),
      })),
    })),
    typed: p.querySelector('[name="event_types"]').value,
  }));

/** Opens the catalog page from the nav; waits until it is drawn. */
async function openCatalog(page) {
  await page.click('#nav a[href="#event-types"]');
  await page.waitForSelector("#event-types:not([hidden]):not([aria-busy]) #event-types-count:not(:empty)");
}

/** An opened document of a type: its summary, its text, and whether it shows. */
async function opened(page, type, doc) {
  const details = `#event-type-list li[data-type="${type}"] details[data-doc="${doc}"]`;
  const hiddenBefore = !(await page.isVisible(`${details} pre`));
  await page.click(`${details} summary`);
  return {
    summary: await page.textContent(`${details} summary`),
    text: await page.textContent(`${details} pre`),
    hiddenBefore,
    shown: await page.isVisible(`${details} pre`),
  };
}

export async function catalogScene({ page, outDir }) {
  await openCatalog(page);
  const current = await page.getAttribute('#nav a[href="#event-types"]', "aria-current");
  const before = await listed(page);
  const count = await page.textContent("#event-types-count");
  const schema = await opened(page, "order.paid", "schema");
  const example = await opened(page, "order.paid", "example");
  await page.screenshot({ path: `${outDir}/event-types.png`, fullPage: true });
  await page.check("#event-types-archived");
  await waitForText(page, "#event-type-list h4 code", "order.legacy");
  const archived = await listed(page);
  const keptOpen = await page.isVisible('#event-type-list li[data-type="order.paid"] details[data-doc="schema"] pre');
  const countArchived = await page.textContent("#event-types-count");
  await page.screenshot({ path: `${outDir}/event-types-archived.png`, fullPage: true });
  await page.uncheck("#event-types-archived");
  const hiddenAgain = await page.$$eval("#event-type-list li[data-type]", (lis) => lis.map((li) => li.dataset.type));
  return { current, before, count, schema, example, archived, keptOpen, countArchived, hiddenAgain };
}

export async function pickerScene({ page, setup, outDir }) {
  await page.click('#nav a[href="#endpoints"]');
  await page.waitForSelector('#endpoint-form .event-type-picker[data-catalog="loaded"]');
  const offered = await picker(page, "#endpoint-form");
  await page.fill('#endpoint-form [name="url"]', setup.url);
  await page.fill('#endpoint-form [name="description"]', "picked from the catalog");
  await page.check('#endpoint-form input[type=checkbox][value="order.paid"]');
  await page.fill('#endpoint-form [name="event_types"]', "invoice.*");
  await page.screenshot({ path: `${outDir}/endpoint-picker.png`, fullPage: true });
  await page.click('#endpoint-form button[type="submit"]');
  await waitForText(page, "#endpoint-list td", "picked from the catalog");
  const afterCreate = await picker(page, "#endpoint-form");

  // Its own page: the edit form ticks what it subscribes to.
  await page.click('#endpoint-list tr:has-text("picked from the catalog") a');
  await waitForText(page, "#endpoint-title", "picked from the catalog");
  await page.waitForSelector('#endpoint-edit .event-type-picker[data-catalog="loaded"]');
  const id = decodeURIComponent(page.url().split("#endpoint/")[1]);
  const restored = await picker(page, "#endpoint-edit");
  await page.check('#endpoint-edit input[type=checkbox][value="user.created"]');
  await page.click('#endpoint-edit button[type="submit"]');
  await waitForText(page, "#notice", "Saved picked from the catalog");
  const saved = await picker(page, "#endpoint-edit");
  return { offered, afterCreate, id, restored, saved };
}

/** An endpoint subscribed to an archived name and one the catalog lacks: both stay in the text, and stay on save. */
export async function legacyScene({ page }) {
  await page.click('#nav a[href="#endpoints"]');
  await page.waitForSelector("#endpoints:not([hidden]):not([aria-busy])");
  await page.click('#endpoint-list tr:has-text("legacy names") a');
  await waitForText(page, "#endpoint-title", "legacy names");
  await page.waitForSelector('#endpoint-edit .event-type-picker[data-catalog="loaded"]');
  const shown = await picker(page, "#endpoint-edit");
  await page.check('#endpoint-edit input[type=checkbox][value="order.refunded"]');
  await page.click('#endpoint-edit button[type="submit"]');
  await waitForText(page, "#notice", "Saved legacy names");
  const saved = await picker(page, "#endpoint-edit");
  return { shown, saved };
}

/** The admin, signed in without a tenant, reads the same catalog. */
export async function adminCatalogScene({ page, base, setup }) {
  await page.click("#sign-out");
  await page.waitForSelector("#sign-in:not([hidden])");
  await signIn(page, base, setup.admin, "");
  await openCatalog(page);
  return { who: await page.textContent("#who"), groups: await listed(page) };
}
