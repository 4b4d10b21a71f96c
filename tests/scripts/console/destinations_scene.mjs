// Destinations: the create form's picker shows each kind's own fields (the
// URL for HTTP alone; the AWS kinds' secrets as password inputs); a RabbitMQ endpoint made through it, first refused
// with the API's error beside the broker URL; the list and the endpoint's
// page show its kind and target; the edit form is filled from it (no secret)
// and saves a new routing key. The API's view is checked by the test.
import { tenantApi, visit, waitForText } from "./browser.mjs";

const form = "#endpoint-form";

/** The names of the URL and destination inputs the form shows now. */
const shownFields = (page, selector) =>
  page.$$eval(`${selector} input`, (inputs) =>
    inputs
      .filter((i) => i.offsetParent !== null && i.type !== "radio" && (i.name === "url" || i.name.startsWith("destination.")))
      .map((i) => i.name),
  );

/** Picks a kind in the picker of `selector`. */
const pick = (page, selector, type) => page.check(`${selector} input[name="destination.type"][value="${type}"]`);

export async function destinationsScene(ctx) {
  const { page, setup, outDir } = ctx;
  await visit(page, "#endpoints", "endpoints");
  const legend = await page.textContent(`${form} fieldset.destination > legend`);
  const kinds = await page.$$eval(`${form} fieldset.destination-kinds label`, (ls) => ls.map((l) => l.textContent));
  const http = await shownFields(page, form);
  await pick(page, form, "nats");
  const nats = await shownFields(page, form);
  await pick(page, form, "redis");
  const redis = await shownFields(page, form);
  await pick(page, form, "sqs");
  const sqs = await shownFields(page, form);
  await pick(page, form, "sns");
  const sns = await shownFields(page, form);
  await pick(page, form, "kinesis");
  const kinesis = await shownFields(page, form);
  const aws = {
    streamHint: await page.$eval(`${form} [name="destination.stream"]`, (i) => i.placeholder),
    credentials: await page.$$eval(`${form} input[name^="destination.credentials."]`, (inputs) =>
      inputs.filter((i) => i.offsetParent !== null).map((i) => [i.name, i.type]),
    ),
    legend: await page.textContent(`${form} fieldset.destination-credentials > legend`),
  };
  await pick(page, form, "rabbitmq");
  const rabbitmq = await shownFields(page, form);

  // A NATS address for RabbitMQ: the API names the broker URL, shown beside it.
  await page.fill(`${form} [name="description"]`, "orders to rabbit");
  await page.fill(`${form} [name="event_types"]`, "broker.test");
  await page.fill(`${form} [name="destination.url"]`, setup.nats_url);
  await page.fill(`${form} [name="destination.exchange"]`, "hookgate.console");
  await page.fill(`${form} [name="destination.routing_key"]`, "orders.created");
  await page.fill(`${form} [name="destination.credentials.username"]`, "guest");
  await page.fill(`${form} [name="destination.credentials.password"]`, "guest");
  await page.click(`${form} button[type="submit"]`);
  const urlField = `${form} [data-field="destination.url"]`;
  await page.waitForFunction((f) => document.querySelector(f).textContent !== "", urlField);
  const urlError = await page.textContent(urlField);
  const focused = await page.evaluate(() => document.activeElement?.name ?? null);

  await page.fill(`${form} [name="destination.url"]`, setup.rabbitmq_url);
  await page.click(`${form} button[type="submit"]`);
  const cell = await waitForText(page, '#endpoint-list td[data-destination="rabbitmq"]', setup.rabbitmq_url);
  const created = await page.textContent("#created-secret");
  const urlErrorAfter = await page.textContent(urlField);
  // The form is back at HTTP once made.
  const afterCreate = {
    type: await page.$eval(`${form} input[name="destination.type"]:checked`, (r) => r.value),
    fields: await shownFields(page, form),
  };
  await page.screenshot({ path: `${outDir}/endpoints-destination.png`, fullPage: true });

  // Its page: the kind and target; the edit form filled from it, no secret.
  await page.click('#endpoint-list tr:has(td[data-destination="rabbitmq"]) a');
  await page.waitForSelector("#endpoint:not([hidden]):not([aria-busy]) #endpoint-facts dd");
  const id = decodeURIComponent(page.url().split("#endpoint/")[1]);
  const fact = (name) => page.$$eval("#endpoint-facts div", (ds, n) => ds.find((d) => d.querySelector("dt").textContent === n).querySelector("dd").textContent, name);
  const facts = { url: await fact("URL"), destination: await fact("Destination") };
  const edit = "#endpoint-edit";
  const value = (name) => page.$eval(`${edit} [name="${name}"]`, (i) => i.value);
  const filled = {
    type: await page.$eval(`${edit} input[name="destination.type"]:checked`, (r) => r.value),
    url: await value("destination.url"),
    exchange: await value("destination.exchange"),
    username: await value("destination.credentials.username"),
    password: await value("destination.credentials.password"),
    passwordHint: await page.$eval(`${edit} [name="destination.credentials.password"]`, (i) => i.placeholder),
    fields: await shownFields(page, edit),
  };
  // Another client changes the description meanwhile: saving sends only the new routing key.
  await tenantApi(ctx, "PATCH", `/endpoints/${id}`, { description: "rabbit, renamed" }, "application/merge-patch+json");
  await page.fill(`${edit} [name="destination.routing_key"]`, "orders.paid");
  await page.click(`${edit} button[type="submit"]`);
  const afterSave = await waitForText(page, "#endpoint-facts dd", "routing key orders.paid");
  const saved = await page.textContent("#notice");
  await page.screenshot({ path: `${outDir}/endpoint-destination.png`, fullPage: true });
  return { legend, kinds, http, nats, redis, sqs, sns, kinesis, aws, rabbitmq, urlError, focused, cell, created, urlErrorAfter, afterCreate, id, facts, filled, saved, afterSave };
}
