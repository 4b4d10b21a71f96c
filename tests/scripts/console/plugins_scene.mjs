// Plugins: two versions uploaded from the file picker, each with its checks'
// results; a rollback to the first; the plugin bound to the retried endpoint.
import { waitForText } from "./browser.mjs";

async function upload(page, name, path, version) {
  await page.fill('#plugin-upload [name="name"]', name);
  await page.setInputFiles('#plugin-upload [name="file"]', path);
  await page.click('#plugin-upload button[type="submit"]');
  return waitForText(page, "#notice", `Uploaded ${name} version ${version}:`);
}

const versions = (page) =>
  page.$$eval("article.plugin tbody tr", (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)));

export async function pluginsScene({ page, outDir, setup, seen }) {
  await page.click('a[href="#plugins"]');
  await page.waitForSelector("#plugins:not([hidden])");
  const empty = await waitForText(page, "#plugin-list", "No plugins yet");
  const [first, second] = setup.plugins;
  const uploads = [await upload(page, "retry-rules", first, 1)];
  await page.waitForSelector('article.plugin tr[data-version="1"]');
  uploads.push(await upload(page, "retry-rules", second, 2));
  await page.waitForSelector('article.plugin tr[data-version="2"]');
  const before = await versions(page);
  await page.click('button[data-plugin="retry-rules"]');
  const rolledBack = await waitForText(page, "#notice", "is back at version");
  await page.waitForSelector('article.plugin h3:has-text("version 1 active")');
  await page.selectOption('article.plugin select', seen.endpoints.id);
  await page.click('button[data-bind="retry-rules"]');
  await waitForText(page, "#notice", "now asks retry-rules");
  await page.waitForSelector("ul.bindings button[data-unbind]");
  const bindings = await page.$$eval("ul.bindings li", (items) => items.map((i) => i.textContent));
  await page.screenshot({ path: `${outDir}/plugins.png`, fullPage: true });
  return { empty, uploads, before, after: await versions(page), rolledBack, bindings };
}
