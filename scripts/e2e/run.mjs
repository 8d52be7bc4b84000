#!/usr/bin/env node
// End-to-end: starts the whole system with the launcher (`node scripts/start.mjs`, simulated WhatsApp,
// dev sign-in, a short send delay), drives the web app in headless Chromium through playwright-core
// (the system Chromium) like a user would, and saves a screenshot of each screen in test-output/e2e/.
// The launcher gets a fresh private Postgres and NATS (DATABASE_URL / NATS_URL, which it honours), so
// the run never depends on, or touches, the developer's own .data/.
//
//   node scripts/e2e/run.mjs            builds, starts everything, then runs the journey
//   E2E_NO_BUILD=1 node scripts/e2e/run.mjs   reuses the last build (faster while iterating)
//   E2E_URL=http://localhost:8080 node scripts/e2e/run.mjs   drives a system that is already running
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { chromium } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { mediaFiles } from '@bns/testing';
import { ROOT, useNode24 } from '../lib.mjs';
import { CHROMIUM, OUT, startSystem } from './system.mjs';

// Run on its own (`node scripts/e2e/run.mjs`) it moves to Node 24 too; under npm test it already is.
await useNode24();

const RESULTS = join(ROOT, 'test-output', 'results');
const SEND_DELAY_MS = 300;
// A number the simulated phone network reports as "not on WhatsApp", so the failed list is exercised.
const FAIL_NUMBER = '55550000';
const UNREAD_NUMBERS = ['56880010', '56880011'];
const DONATION_URL = 'https://donate.example.org/bns';
// The product's session-check timeout (SPEC §4.1, LIMITS.sessionCheckTimeoutMs): waited for in full.
const SESSION_CHECK_TIMEOUT_MS = 30_000;

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });

const results = [];
/** The running system (`startSystem`), when this run started one. */
let system;
/** What the page threw or logged as an error so far (printed when a step fails). */
let pageErrors = [];
let browser;

/** `npm start` on a free port with private infrastructure and this journey's settings. */
function startJourneySystem() {
  return startSystem({
    SEND_DELAY_MS: String(SEND_DELAY_MS),
    SEND_JITTER_MS: '0',
    SIM_FAIL_NUMBERS: FAIL_NUMBER,
    SIM_DELIVERED_DELAY_MS: '200',
    SIM_READ_DELAY_MS: '600',
    // Two guests of the contacts step never open the message: the "not read" follow-up.
    SIM_UNREAD_NUMBERS: UNREAD_NUMBERS.join(','),
    // The webhook receiver of the API step listens on loopback.
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    DONATION_URL,
  });
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** The public page is captured whole; the tool at the viewport (its header and backdrops are fixed). */
async function shot(page, name, fullPage = false) {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage });
}

async function step(page, name, fn) {
  const started = Date.now();
  try {
    await fn();
    results.push({ name, ok: true, ms: Date.now() - started });
    process.stdout.write(`  ✓ ${name} (${Date.now() - started} ms)\n`);
  } catch (err) {
    results.push({ name, ok: false, ms: Date.now() - started, error: err.message });
    process.stdout.write(`  ✗ ${name}: ${err.message}\n`);
    if (pageErrors.length > 0)
      process.stdout.write(`    page errors so far:\n${pageErrors.map((e) => `    ${e}`).join('\n')}\n`);
    await page
      ?.screenshot({ path: join(OUT, `failure-${name.replace(/\W+/g, '-')}.png`), fullPage: true })
      .catch(() => undefined);
    throw err;
  }
}

/** Pastes text into the focused element the way a browser does (a paste event carrying clipboard data). */
async function pasteInto(locator, text) {
  await locator.focus();
  await locator.evaluate((el, value) => {
    const data = new DataTransfer();
    data.setData('text/plain', value);
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

async function api(url, token, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json().catch(() => ({}));
  return { status: res.status, body: json };
}

async function journey(url) {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, acceptDownloads: true });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('pageerror', (e) => {
    consoleErrors.push(e.message);
    pageErrors.push(`${e.message}\n${e.stack ?? ''}`);
  });
  // Only for the diagnosis of a failed step (a refused request is logged as an error, too).
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
  });
  const email = `e2e-${Date.now()}@shop.hk`;
  let token = '';

  await step(page, 'landing page', async () => {
    await page.goto(url);
    await page.getByText('Professional Bulk Messaging Solution').waitFor();
    check(await page.getByRole('link', { name: 'Start Messaging' }).isVisible(), 'Start Messaging is missing');
    check(await page.getByText('99.9%').first().isVisible(), 'the statistics strip is missing');
    check(await page.getByText('All systems operational').isVisible(), 'the status indicator is missing');
    const favicon = await fetch(`${url}/favicon.ico`);
    check(
      favicon.status === 200 && /image/.test(favicon.headers.get('content-type') ?? ''),
      `/favicon.ico answered ${favicon.status} ${favicon.headers.get('content-type')}`,
    );
    check((await page.locator('a[href="#donate"]').count()) === 0, 'a donation link leads nowhere (#donate)');
    await shot(page, '01-landing', true);
  });

  await step(page, 'landing page at 360 px', async () => {
    const mobile = await context.newPage();
    await mobile.setViewportSize({ width: 360, height: 780 });
    await mobile.goto(url);
    await mobile.getByText('Professional Bulk Messaging Solution').waitFor();
    const overflow = await mobile.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await mobile.screenshot({ path: join(OUT, '02-landing-360px.png'), fullPage: true });
    await mobile.close();
    check(overflow <= 0, `the landing page is ${overflow}px wider than a 360px screen`);
  });

  await step(page, 'dev sign-in', async () => {
    await page.getByRole('link', { name: 'Start Messaging' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in' });
    await dialog.getByLabel('E-mail').fill(email);
    await dialog.getByLabel('First name (optional)').fill('Ann');
    await dialog.getByRole('button', { name: 'Sign In' }).click();
    await page.getByText('Welcome,').waitFor();
    check(
      (await page.locator('.welcome').innerText()).includes('Ann'),
      'the header does not welcome the user by first name',
    );
    token = await page.evaluate(() => JSON.parse(localStorage.getItem('bns.devSession') ?? '{}').token ?? '');
    check(token.length > 20, 'no token in localStorage after sign-in');
  });

  // E2E_JOURNEY=account: only the account-and-data steps (a faster loop while working on them).
  if (process.env.E2E_JOURNEY === 'account') {
    await accountAndData(page, url, email);
    check(consoleErrors.length === 0, `page errors: ${consoleErrors.join(' | ')}`);
    return;
  }

  await step(page, 'a second tab is signed in too (one sign-in per browser)', async () => {
    const second = await context.newPage();
    await second.goto(url);
    await second.getByText('Welcome,').waitFor({ timeout: 15_000 });
    check(
      (await second.locator('.welcome').innerText()).includes('Ann'),
      'the second tab does not welcome the same user',
    );
    await second.close();
  });

  await step(
    page,
    `session check gives up after ${SESSION_CHECK_TIMEOUT_MS / 1000} s when the socket never connects`,
    async () => {
      // Another tab of the same user whose socket.io requests never get through (a proxy that blocks them).
      const blocked = await context.newPage();
      blocked.on('pageerror', (e) => consoleErrors.push(e.message));
      await blocked.route('**/socket.io/**', (route) => route.abort('connectionrefused'));
      // The page's clock is Playwright's, so the 30 s pass in a jump instead of being waited out: the
      // page's own timers (the check's time-out among them) fire as they would after 30 real seconds.
      await blocked.clock.install();
      await blocked.goto(url);
      await blocked.getByText('Checking for an existing WhatsApp session…').waitFor({ timeout: 15_000 });
      const connect = blocked.getByRole('button', { name: 'Connect WhatsApp' });
      // Two seconds short of the time-out the page still checks…
      await blocked.clock.fastForward(SESSION_CHECK_TIMEOUT_MS - 2_000);
      await blocked.waitForTimeout(300);
      check(!(await connect.isVisible()), 'the Connect button came before the 30 s check ended');
      check(
        await blocked.getByText('Checking for an existing WhatsApp session…').isVisible(),
        'the page stopped checking before the 30 s check ended',
      );
      // …and once they have passed, it gives up and offers to connect.
      await blocked.clock.fastForward(2_500);
      await connect.waitFor({ timeout: 15_000 });
      await blocked.screenshot({ path: join(OUT, '02b-check-timed-out.png') });
      check(
        await blocked
          .getByText(/Checking for an existing session timed out/)
          .first()
          .isVisible(),
        'the time-out is not in the Activity Log',
      );
      await blocked.close();
    },
  );

  await step(page, 'connect WhatsApp by QR (simulated scan)', async () => {
    await page.getByRole('button', { name: 'Connect WhatsApp' }).click({ timeout: 40_000 });
    const qr = page.getByRole('img', { name: /WhatsApp QR code/ });
    await qr.waitFor({ timeout: 30_000 });
    await page.getByText(/Attempt 1 of 5/).waitFor();
    check((await qr.getAttribute('data-qr'))?.length > 10, 'the QR image has no engine string');
    check(await page.getByText('Tap Linked Devices').isVisible(), 'the QR steps are missing');
    await shot(page, '03-qr');
    // The dev-only phone control of the simulated engine: what a newcomer of `npm start` clicks.
    await page.getByRole('button', { name: 'Simulate scan' }).click();
    await page.locator('.connected-banner').waitFor({ timeout: 15_000 });
    const banner = await page.locator('.connected-banner').innerText();
    check(/Connected/.test(banner) && /\d{8}/.test(banner), `the banner does not show the number: ${banner}`);
    check(await page.getByText('simulated WhatsApp').isVisible(), 'the simulated WhatsApp badge is missing');
    for (const tab of ['Send Messages', 'Dashboard', 'Templates'])
      check(await page.getByRole('tab', { name: new RegExp(tab) }).isVisible(), `tab ${tab} missing`);
  });

  const typed = ['91230001', '91230002'];
  const pasted = ['61230001', '61230002', FAIL_NUMBER];
  await step(page, 'add numbers by typing and by pasting a column', async () => {
    await page
      .getByLabel('Message', { exact: true })
      .fill('Hello from the *e2e* run: _paced_ and tracked, see https://example.com/track');
    await page.getByRole('button', { name: 'Add Phone Numbers' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add Phone Numbers' });
    check((await dialog.getByRole('textbox').count()) === 10, 'the spreadsheet does not start with 10 rows');
    await dialog.getByLabel('Phone number row 1', { exact: true }).fill(typed[0]);
    await dialog.getByLabel('Phone number row 1', { exact: true }).press('Enter');
    await page.keyboard.type(typed[1]);
    await pasteInto(
      dialog.getByLabel('Phone number row 3', { exact: true }),
      `${pasted.join('\n')}\n12345\n${typed[0]}\n`,
    );
    await dialog.getByRole('button', { name: 'Add Numbers' }).click();
    await dialog.waitFor({ state: 'detached' });
    const chips = await page.getByRole('list', { name: 'Phone numbers' }).getByRole('listitem').allInnerTexts();
    check(chips.length === 5, `expected 5 numbers (one invalid dropped, one duplicate merged), got ${chips.length}`);
  });

  const csvPeople = [
    ['71230001', 'Bob'],
    ['71230002', 'Cat'],
  ];
  await step(page, 'upload a CSV with names (invalid rows shown with reasons)', async () => {
    const csv = `phone,name,discount\n${csvPeople.map(([p, n]) => `${p},${n},10%`).join('\n')}\nabc,Bad,1%\n`;
    await page
      .getByLabel('Upload contacts file')
      .setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByText('Rows that will be skipped').waitFor();
    check(
      await page.getByText('Phone number must be exactly 8 digits (Hong Kong)').isVisible(),
      'the invalid row reason is missing',
    );
    await page.getByRole('button', { name: 'Use 2 recipients' }).click();
    // The file's rows join the sender a slice at a time, then the toast says so.
    await page.getByText('2 recipients added from contacts.csv').waitFor();
    const chips = await page.getByRole('list', { name: 'Phone numbers' }).getByRole('listitem').count();
    check(chips === 7, `expected 7 recipients after the file, got ${chips}`);
    await shot(page, '04-send-setup');
  });

  await step(page, 'download the CSV and XLSX templates and read the XLSX back', async () => {
    const [csvDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download Template (CSV)' }).click(),
    ]);
    const csvPath = join(OUT, csvDownload.suggestedFilename());
    await csvDownload.saveAs(csvPath);
    const [xlsxDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download Template (XLSX)' }).click(),
    ]);
    const xlsxPath = join(OUT, xlsxDownload.suggestedFilename());
    await xlsxDownload.saveAs(xlsxPath);
    const { readFileSync } = await import('node:fs');
    check(readFileSync(csvPath, 'utf8').startsWith('phone,name,discount'), 'the CSV template has the wrong columns');
    check(readFileSync(xlsxPath).subarray(0, 2).toString() === 'PK', 'the XLSX template is not a zip (xlsx) file');
    await page.getByLabel('Upload contacts file').setInputFiles(xlsxPath);
    await page.getByRole('button', { name: 'Use 2 recipients' }).waitFor();
    const phoneColumn = await page.getByLabel('Phone number column').inputValue();
    check(phoneColumn === '0', 'the phone column of the XLSX template was not recognised');
    await page.getByRole('button', { name: 'Discard' }).click();
  });

  await step(page, 'send with confirm and watch progress to completion', async () => {
    const start = page.getByRole('button', { name: 'Start Sending' });
    check(await start.isEnabled(), 'Start Sending is disabled');
    await start.click();
    const confirm = page.getByRole('dialog', { name: 'Confirm Bulk Send' });
    check(
      (await confirm.getByRole('list', { name: 'Recipients' }).getByRole('listitem').count()) === 7,
      'the confirm does not list the recipients',
    );
    await confirm.getByRole('button', { name: 'Send Messages' }).click();
    await page.getByRole('heading', { name: /Send Messages/ }).waitFor();
    check(await page.getByRole('button', { name: 'Go Back' }).isDisabled(), 'Go Back is enabled while sending');
    await shot(page, '05-progress-running');
    await page.locator('.status-pill.status-completed').waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('[data-testid="count-percent"]')?.textContent === '100%');
    const sent = await page.getByTestId('count-sent').innerText();
    const failed = await page.getByTestId('count-failed').innerText();
    check(sent === '6' && failed === '1', `expected 6 sent and 1 failed, got ${sent} / ${failed}`);
    await page.getByRole('list', { name: 'Failed numbers' }).getByText(FAIL_NUMBER).waitFor();
    await page
      .waitForFunction(
        () => document.querySelectorAll('[aria-label="Successful numbers"] li').length === 6,
        undefined,
        { timeout: 5000 },
      )
      .catch(() => check(false, 'the success list is incomplete'));
    const donation = page.getByRole('dialog', { name: /on their way/ });
    await donation.waitFor();
    check(
      (await donation.getByRole('link', { name: 'Donate' }).getAttribute('href')) === DONATION_URL,
      'the donation prompt does not link to DONATION_URL',
    );
    await shot(page, '06-progress-completed');
    await page.keyboard.press('Escape');
    await donation.waitFor({ state: 'detached' });
    check((await page.locator('.activity-log .log-entry').count()) > 3, 'the Activity Log is nearly empty');
    const outbox = await api(url, token, 'GET', '/dev/simulator/outbox');
    const texts = (outbox.body.messages ?? []).map((m) => `${m.to}|${m.text}`);
    for (const n of [...typed, ...pasted.slice(0, 2), ...csvPeople.map(([p]) => p)]) {
      check(
        texts.some((t) => t.includes(n) && t.includes('Hello from the *e2e* run')),
        `the simulated phone did not receive the message for ${n}`,
      );
    }
    await page.getByRole('button', { name: 'Go Back' }).click();
    await page.getByRole('button', { name: 'Start Sending' }).waitFor();
  });

  await step(page, 'personalised send from the CSV names', async () => {
    await page.getByLabel('Message', { exact: true }).fill('Hi {{name}}, your discount is {{discount}}');
    const csv = `phone,name,discount\n${csvPeople.map(([p, n], i) => `${p},${n},${10 + i}%`).join('\n')}\n`;
    await page
      .getByLabel('Upload contacts file')
      .setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Use 2 recipients' }).click();
    // The file's rows join the list a slice at a time, off the click: wait for them, not for the click.
    const preview = page.getByLabel('Message preview');
    await preview
      .getByText('Hi Bob, your discount is 10%')
      .waitFor({ timeout: 10_000 })
      .catch(async () => check(false, `the preview is not the first recipient’s text: ${await preview.innerText()}`));
    await page.getByRole('button', { name: 'Start Sending' }).click();
    await page
      .getByRole('dialog', { name: 'Confirm Bulk Send' })
      .getByRole('button', { name: 'Send Messages' })
      .click();
    await page.locator('.status-pill.status-completed').waitFor({ timeout: 60_000 });
    const outbox = await api(url, token, 'GET', '/dev/simulator/outbox');
    const texts = (outbox.body.messages ?? []).map((m) => m.text);
    check(
      texts.includes('Hi Bob, your discount is 10%') && texts.includes('Hi Cat, your discount is 11%'),
      'personalised texts did not arrive',
    );
    await page.getByRole('button', { name: 'Go Back' }).click();
  });

  await step(
    page,
    'attach a PNG and a PDF: review shows each, the campaign completes, the report shows it',
    async () => {
      await page.getByLabel('Message', { exact: true }).fill('Our *new* menu');
      // Go Back emptied the list: the two people of the file again.
      const csv = `phone,name\n${csvPeople.map(([p, n]) => `${p},${n}`).join('\n')}\n`;
      await page
        .getByLabel('Upload contacts file')
        .setInputFiles({ name: 'menu-people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.getByRole('button', { name: 'Use 2 recipients' }).click();
      await page.getByRole('list', { name: 'Phone numbers' }).getByText(csvPeople[1][0]).waitFor();
      const input = page.getByTestId('attachment-input');
      await input.setInputFiles({ name: 'poster.png', mimeType: 'image/png', buffer: mediaFiles.png(20_000) });
      const chip = page.getByTestId('attachment-chip');
      await chip.getByText('poster.png').waitFor();
      check((await chip.innerText()).includes('Image'), 'the chip does not say the kind');
      check((await chip.locator('img').count()) === 1, 'the image has no thumbnail');
      // Review: the image above its caption, as WhatsApp shows it.
      const bubble = page.getByLabel('Message preview');
      check(
        await bubble.evaluate((b) => b.firstElementChild?.tagName === 'IMG' && b.innerText.includes('new menu')),
        'the review does not show the image above its caption',
      );
      await shot(page, '06b-attachment-image');
      await page.getByRole('button', { name: 'Remove poster.png' }).click();
      await input.setInputFiles({ name: 'menu.pdf', mimeType: 'application/pdf', buffer: mediaFiles.pdf() });
      await chip.getByText('menu.pdf').waitFor();
      check((await chip.innerText()).includes('Document'), 'the PDF is not shown as a document');
      await bubble.getByTestId('bubble-file').getByText('menu.pdf').waitFor();
      check(
        (await page.getByTestId('review-estimate').innerText()).includes('to upload the attachment once'),
        'the estimate does not count the upload',
      );
      await shot(page, '06c-attachment-document');
      await page.getByRole('button', { name: 'Start Sending' }).click();
      await page
        .getByRole('dialog', { name: 'Confirm Bulk Send' })
        .getByRole('button', { name: 'Send Messages' })
        .click();
      await page.locator('.status-pill.status-completed').waitFor({ timeout: 60_000 });
      await page.getByTestId('report-attachment').getByText('menu.pdf').waitFor({ timeout: 15_000 });
      await shot(page, '06d-attachment-report');
      const outbox = await api(url, token, 'GET', '/dev/simulator/outbox');
      const withFile = (outbox.body.messages ?? []).filter((m) => m.text === 'Our *new* menu');
      check(withFile.length > 0, 'no message with the attachment arrived');
      check(
        withFile.every((m) => m.media?.kind === 'document' && m.media?.fileName === 'menu.pdf'),
        'a message arrived without its attachment',
      );
      await page.getByRole('button', { name: 'Go Back' }).click();
      // Go Back starts a new send: text only again.
      await page.getByRole('button', { name: 'Start Sending' }).waitFor();
      check((await page.getByTestId('attachment-chip').count()) === 0, 'the attachment outlived Go Back');
    },
  );

  await step(
    page,
    'Go Back stays disabled after monitoring stopped while the job is active; Resume monitoring',
    async () => {
      await page.getByLabel('Message', { exact: true }).fill('Monitoring check');
      // 50 × SEND_DELAY_MS (300 ms) ≈ 15 s: long enough to look at the stopped state while it runs.
      const many = Array.from({ length: 50 }, (_, i) => String(92340000 + i));
      await page.getByRole('button', { name: 'Add Phone Numbers' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add Phone Numbers' });
      await pasteInto(dialog.getByLabel('Phone number row 1', { exact: true }), many.join('\n'));
      await dialog.getByRole('button', { name: 'Add Numbers' }).click();
      await dialog.waitFor({ state: 'detached' });
      // The status calls answer 429 (Too Many Requests): monitoring stops (SPEC §4.6) while the job runs on.
      const limited = (route) =>
        route.fulfill({
          status: 429,
          headers: { 'Retry-After': '30', 'Content-Type': 'application/json' },
          body: JSON.stringify({ success: false, error: 'Too Many Requests' }),
        });
      await page.route('**/job-status/**', limited);
      await page.getByRole('button', { name: 'Start Sending' }).click();
      const started = page.waitForResponse(
        (r) => r.url().endsWith('/start-bulk-messages') && r.request().method() === 'POST',
      );
      await page
        .getByRole('dialog', { name: 'Confirm Bulk Send' })
        .getByRole('button', { name: 'Send Messages' })
        .click();
      const jobId = (await (await started).json().catch(() => ({})))?.jobId;
      const resume = page.getByRole('button', { name: 'Resume monitoring' });
      await resume.waitFor({ timeout: 15_000 });
      check(
        await page.getByRole('button', { name: 'Go Back' }).isDisabled(),
        'Go Back is enabled while the server says the job is active',
      );
      await shot(page, '06b-monitoring-stopped');
      await page.unroute('**/job-status/**', limited);
      await resume.click();
      // The job itself takes about 15 s; on a loaded machine much longer. Wait for the server to say it
      // ended (the test's own question, not the page's), then for the page to show it.
      const deadline = Date.now() + 150_000;
      let job = {};
      while (Date.now() < deadline) {
        job = (await api(url, token, 'GET', `/job-status/${jobId}`)).body?.job ?? {};
        if (['completed', 'failed', 'cancelled'].includes(job.status)) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      check(
        job.status === 'completed',
        `the 50-number job did not complete within 150 s: ${JSON.stringify({ status: job.status, pausedReason: job.pausedReason, progress: job.progress })}`,
      );
      await page.locator('.status-pill.status-completed').waitFor({ timeout: 30_000 });
      // The list is virtualised (only the rows in view are in the DOM): its heading carries the count.
      await page
        .getByRole('heading', { name: `Successful (${many.length})` })
        .waitFor({ timeout: 15_000 })
        .catch(() => check(false, 'the result list did not fill after Resume monitoring'));
      check(
        (await page.locator('[aria-label="Successful numbers"] li').count()) > 0,
        'the successful list shows no rows after Resume monitoring',
      );
      const goBack = page.getByRole('button', { name: 'Go Back' });
      check(await goBack.isEnabled(), 'Go Back stays disabled after the job ended');
      await goBack.click();
      await page.getByRole('button', { name: 'Start Sending' }).waitFor();
    },
  );

  await step(page, 'a reload during a running job shows the job again (and says WhatsApp connected once)', async () => {
    await page.getByLabel('Message', { exact: true }).fill('Reload check');
    // 30 × SEND_DELAY_MS (300 ms) ≈ 9 s: time to reload while it sends.
    const numbers = Array.from({ length: 30 }, (_, i) => String(93450000 + i));
    await page.getByRole('button', { name: 'Add Phone Numbers' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add Phone Numbers' });
    await pasteInto(dialog.getByLabel('Phone number row 1', { exact: true }), numbers.join('\n'));
    await dialog.getByRole('button', { name: 'Add Numbers' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Start Sending' }).click();
    await page
      .getByRole('dialog', { name: 'Confirm Bulk Send' })
      .getByRole('button', { name: 'Send Messages' })
      .click();
    await page.waitForFunction(
      () => Number(document.querySelector('[data-testid="count-sent"]')?.textContent ?? 0) >= 1,
      undefined,
      { timeout: 30_000 },
    );
    await page.reload();
    await page.getByRole('heading', { name: /Send Messages/ }).waitFor({ timeout: 20_000 });
    check(
      (await page.getByRole('heading', { name: /Create message/ }).count()) === 0,
      'Step 1 is shown after the reload instead of the job',
    );
    check(
      (await page.getByTestId('count-total').innerText()) === String(numbers.length),
      'the reloaded progress view does not count the job’s recipients',
    );
    check(
      await page.getByRole('button', { name: 'Go Back' }).isDisabled(),
      'Go Back is enabled while the reloaded job runs',
    );
    await shot(page, '06a-reloaded-running-job');
    await page.locator('.status-pill.status-completed').waitFor({ timeout: 90_000 });
    await page.waitForFunction(
      (n) => document.querySelector('[data-testid="count-sent"]')?.textContent === String(n),
      numbers.length,
      { timeout: 15_000 },
    );
    const connectedLines = await page.locator('.activity-log .log-entry', { hasText: 'WhatsApp connected' }).count();
    check(connectedLines === 1, `"WhatsApp connected" is logged ${connectedLines} times after the reload`);
    // Newest first: the job's end above its start.
    const lines = await page.locator('.activity-log .log-entry span').allInnerTexts();
    const end = lines.findIndex((t) => t.startsWith('Job completed'));
    const begin = lines.findIndex((t) => t.startsWith('Job started'));
    check(
      end !== -1 && (begin === -1 || end < begin),
      `the Activity Log is out of order: ${JSON.stringify(lines.slice(0, 8))}`,
    );
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Go Back' }).click();
    await page.getByRole('button', { name: 'Start Sending' }).waitFor();
  });

  await step(
    page,
    'a file with blank cells: rows listed by spreadsheet row, the server names the same row, send to the others',
    async () => {
      await page.getByLabel('Message', { exact: true }).fill('Hi {{name}}, blank-cell check');
      const csv = 'phone,name\n73450001,Eve\n73450002,\n73450003,Fay\n';
      await page
        .getByLabel('Upload contacts file')
        .setInputFiles({ name: 'blanks.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.getByRole('button', { name: 'Use 3 recipients' }).click();
      const panel = page.getByRole('group', { name: 'Rows with missing values' });
      await panel.waitFor();
      const listed = await panel.getByRole('listitem').allInnerTexts();
      check(
        listed.length === 1 && listed[0].startsWith('Row 3 · 73450002'),
        `the blank row is not listed as spreadsheet row 3: ${JSON.stringify(listed)}`,
      );
      // The checklist says so before any confirm, and Start Sending waits for it (the server's check stays).
      check(
        (await page.getByTestId('check-variables').innerText()).includes('{{name}} missing in 1 row'),
        'the checklist does not name the missing {{name}}',
      );
      check(
        await page.getByRole('button', { name: 'Start Sending' }).isDisabled(),
        'Start Sending is enabled with a blank {{name}}',
      );
      await shot(page, '06c-blank-cells');
      await panel.getByRole('button', { name: 'Send to the other 2' }).click();
      const confirm = page.getByRole('dialog', { name: 'Confirm Bulk Send' });
      check(
        (await confirm.getByRole('list', { name: 'Recipients' }).getByRole('listitem').count()) === 2,
        'the confirm does not list the other 2',
      );
      await confirm.getByRole('button', { name: 'Send Messages' }).click();
      await page.locator('.status-pill.status-completed').waitFor({ timeout: 60_000 });
      const outbox = await api(url, token, 'GET', '/dev/simulator/outbox');
      const texts = (outbox.body.messages ?? []).map((m) => m.text);
      check(
        texts.includes('Hi Eve, blank-cell check') && texts.includes('Hi Fay, blank-cell check'),
        'the others did not get their messages',
      );
      check(
        !texts.some((t) => t.startsWith('Hi , blank-cell') || t.includes('{{name}}, blank-cell')),
        'a blank name was sent',
      );
      await page.getByRole('button', { name: 'Go Back' }).click();
    },
  );

  await step(page, 'dashboard shows the messages', async () => {
    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await page.getByRole('heading', { name: 'Recent messages' }).waitFor();
    // The read model follows the events; give it a moment to catch up with the last sends.
    await page
      .waitForFunction(
        () =>
          [...document.querySelectorAll('.message-content')].some((el) =>
            el.textContent?.includes('Hi Fay, blank-cell check'),
          ),
        undefined,
        { timeout: 20_000, polling: 500 },
      )
      .catch(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        await page.getByText('Hi Fay, blank-cell check').waitFor({ timeout: 10_000 });
      });
    const statsText = await page.locator('.stats-grid').innerText();
    check(/Total Messages/.test(statsText), 'stats cards missing');
    check(await page.getByRole('img', { name: /Messages per month/ }).isVisible(), 'the monthly chart is missing');
    // The Opt-outs card has a switch of its own: name the one meant.
    const autoLogin = page.getByRole('switch', { name: 'Auto-Login Success Message' });
    const settings = page.locator('.settings-card');
    check((await autoLogin.getAttribute('aria-checked')) !== null, 'the Auto-Login toggle is missing');
    await autoLogin.click();
    await settings.getByText('Disabled').waitFor();
    await autoLogin.click();
    await settings.getByText('Enabled', { exact: true }).waitFor();
    await shot(page, '07-dashboard');
    // Sending pace: the settings show under Custom only (picking Custom saves nothing by itself).
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByRole('tab', { name: 'Sending pace' }).click();
    const pace = page.locator('.pacing-card').first();
    await pace.scrollIntoViewIfNeeded();
    const preset = await pace.locator('.pacing-preset.selected strong').innerText();
    check(
      (await pace.getByLabel(/Gap between messages/).count()) === (preset === 'Custom' ? 1 : 0),
      `the custom settings show under ${preset}`,
    );
    await pace.screenshot({ path: join(OUT, '07c-sending-pace.png') });
    await pace.getByRole('radio', { name: /^Custom/ }).check();
    await pace.getByLabel(/Gap between messages/).waitFor();
    await pace.screenshot({ path: join(OUT, '07d-sending-pace-custom.png') });
  });

  await step(page, 'opt-outs card: add a number, find it, remove it', async () => {
    await page.getByRole('tab', { name: 'Opt-outs' }).click();
    const card = page.locator('.opt-outs-card');
    await card.getByLabel(/Add numbers/).fill('+852 6123 9999');
    await card.getByRole('button', { name: 'Add to opt-outs' }).click();
    await card.getByRole('list', { name: 'Opted-out numbers' }).getByText('61239999').waitFor();
    await card.getByPlaceholder('Search numbers').fill('9999');
    await card.getByRole('list', { name: 'Opted-out numbers' }).getByText('61239999').waitFor();
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(OUT, '07b-opt-outs.png') });
    await card.getByRole('button', { name: 'Remove 61239999' }).click();
    await card.getByText('No number matches.').waitFor();
  });

  await step(page, 'templates: create, favorite, duplicate, use, delete', async () => {
    await page.getByRole('tab', { name: /Templates/ }).click();
    await page.getByRole('button', { name: '+ New Template' }).click();
    const form = page.getByRole('dialog', { name: 'Create Template' });
    await form.getByRole('button', { name: 'Create Template' }).click();
    await form.getByText('Template name is required').waitFor();
    await form.getByLabel('Template name').fill('E2E Promo');
    await form.getByLabel('Message content').fill('Weekend *sale*: 20% off at https://example.com');
    await form.getByLabel(/Phone numbers/).fill('91239901\n91239902');
    await form.getByLabel('Category').selectOption('marketing');
    await form.getByRole('button', { name: 'Create Template' }).click();
    await form.waitFor({ state: 'detached' });
    const card = page.getByRole('article', { name: 'E2E Promo', exact: true });
    await card.waitFor();

    await card.getByRole('button', { name: 'Add E2E Promo to favorites' }).click();
    await card.getByRole('button', { name: 'Remove E2E Promo from favorites' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.stat-card .stat-value')[1]?.textContent === '1');

    await card.getByRole('button', { name: 'Duplicate E2E Promo' }).click();
    const copy = page.getByRole('article', { name: 'E2E Promo (Copy)' });
    await copy.waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.stat-card .stat-value')[0]?.textContent === '2');

    await page.getByLabel('Favorites Only').check();
    await page.waitForFunction(() => document.querySelectorAll('.template-card').length === 1);
    await page.getByLabel('Favorites Only').uncheck();
    await page.waitForFunction(() => document.querySelectorAll('.template-card').length === 2);

    // The category filter offers the categories this user has, with counts (GET …/categories).
    await page.getByRole('button', { name: '+ New Template' }).click();
    const note = page.getByRole('dialog', { name: 'Create Template' });
    await note.getByLabel('Template name').fill('E2E Note');
    await note.getByLabel('Message content').fill('A personal note');
    await note.getByLabel('Category').selectOption('personal');
    await note.getByRole('button', { name: 'Create Template' }).click();
    await note.waitFor({ state: 'detached' });
    const category = page.getByLabel('Category');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('.toolbar select option')].some((o) => o.textContent === 'Personal (1)'),
    );
    const options = await category.locator('option').allInnerTexts();
    check(
      JSON.stringify(options) === JSON.stringify(['All categories', 'Marketing (2)', 'Personal (1)']),
      `category options: ${JSON.stringify(options)}`,
    );
    await category.selectOption('personal');
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.template-card').length === 1 &&
        document.querySelector('.template-card h3')?.textContent === 'E2E Note',
    );
    await category.selectOption('all');
    await page.waitForFunction(() => document.querySelectorAll('.template-card').length === 3);
    await shot(page, '08-templates');

    await copy.getByRole('button', { name: 'Edit E2E Promo (Copy)' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Template' });
    await edit.getByLabel('Description (optional)').fill('Copy for the weekend list');
    await edit.getByRole('button', { name: 'Save Changes' }).click();
    await edit.waitFor({ state: 'detached' });
    await copy.getByText('Copy for the weekend list').waitFor();

    await copy.getByRole('button', { name: 'Delete E2E Promo (Copy)' }).click();
    await page.getByRole('dialog', { name: 'Delete template' }).getByRole('button', { name: 'Delete' }).click();
    await copy.waitFor({ state: 'detached' });

    await card.getByRole('button', { name: 'Use E2E Promo' }).click();
    const confirm = page.getByRole('dialog', { name: /Send “E2E Promo”/ });
    check(
      (await confirm.getByRole('list', { name: 'Recipients' }).getByRole('listitem').count()) === 2,
      'the template send confirm does not list its 2 numbers',
    );
    await confirm.getByRole('button', { name: 'Send Messages' }).click();
    await page.getByRole('tab', { name: 'Send Messages', selected: true }).waitFor();
    await page.locator('.status-pill.status-completed').waitFor({ timeout: 60_000 });
    await page
      .waitForFunction(
        () => document.querySelectorAll('[aria-label="Successful numbers"] li').length === 2,
        undefined,
        { timeout: 10_000 },
      )
      .catch(() => check(false, 'the template send did not reach its 2 numbers'));

    // Use again while the finished job is still on screen (no Go Back): a fresh send starts, counted once.
    await page.getByRole('tab', { name: /Templates/ }).click();
    await page.getByRole('article', { name: 'E2E Promo', exact: true }).getByText('Used 1×').waitFor();
    const outboxBefore = (await api(url, token, 'GET', '/dev/simulator/outbox')).body.messages.length;
    await page
      .getByRole('article', { name: 'E2E Promo', exact: true })
      .getByRole('button', { name: 'Use E2E Promo' })
      .click();
    const again = page.getByRole('dialog', { name: /Send “E2E Promo”/ });
    await again.getByRole('button', { name: 'Send Messages' }).click();
    await page.getByRole('tab', { name: 'Send Messages', selected: true }).waitFor();
    await page.locator('.status-pill.status-completed').waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('[data-testid="count-sent"]')?.textContent === '2');
    const outboxAfter = (await api(url, token, 'GET', '/dev/simulator/outbox')).body.messages.length;
    check(
      outboxAfter === outboxBefore + 2,
      `Use after a finished job sent ${outboxAfter - outboxBefore} messages instead of 2`,
    );
    await page.getByRole('button', { name: 'Go Back' }).click();
    await page.getByRole('tab', { name: /Templates/ }).click();
    await page.getByRole('article', { name: 'E2E Promo', exact: true }).getByText('Used 2×').waitFor();
  });

  await step(
    page,
    'API & Webhooks: create a key, send with it, see the message and a signed webhook, revoke it',
    async () => {
      // A local receiver that verifies every delivery with the standardwebhooks package.
      const hits = [];
      let signingSecret = '';
      const receiver = createHttpServer((req, res) => {
        let raw = '';
        req.on('data', (c) => (raw += c));
        req.on('end', () => {
          try {
            hits.push({ verified: true, body: new Webhook(signingSecret).verify(raw, req.headers) });
          } catch {
            hits.push({ verified: false, body: JSON.parse(raw) });
          }
          res.end('ok');
        });
      });
      await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
      try {
        await page.getByRole('tab', { name: 'Settings' }).click();
        await page.getByRole('tab', { name: 'API & Webhooks' }).click();
        await page.getByLabel('Endpoint URL').fill(`http://127.0.0.1:${receiver.address().port}/hook`);
        await page.getByRole('checkbox', { name: 'message.sent' }).check();
        await page.getByRole('button', { name: 'Add endpoint' }).click();
        signingSecret = await page.getByRole('status', { name: 'Signing secret' }).locator('code').innerText();
        check(signingSecret.startsWith('whsec_'), `no signing secret shown: ${signingSecret}`);
        await page.getByLabel('Key name').fill('e2e shop');
        await page.getByRole('button', { name: 'Create key' }).click();
        const key = (await page.getByTestId('new-key-secret').innerText()).trim();
        check(/^bns_[A-Za-z0-9_-]{43}$/.test(key), 'the new key is not shown');
        await shot(page, '08b-api-webhooks');
        const sent = await api(url, key, 'POST', '/v1/messages', {
          to: '91230001',
          text: 'Your order has shipped (sent with an API key)',
        });
        check(
          sent.status === 202 && sent.body.status === 'queued',
          `POST /v1/messages: ${sent.status} ${JSON.stringify(sent.body)}`,
        );
        const deadline = Date.now() + 30_000;
        while (!hits.some((h) => h.body.type === 'message.sent' && h.body.data?.campaignId === sent.body.id)) {
          check(Date.now() < deadline, 'no message.sent webhook arrived within 30 s');
          await new Promise((r) => setTimeout(r, 200));
        }
        check(
          hits.every((h) => h.verified),
          'a webhook did not verify with its signing secret',
        );
        // The message shows in the history like any other.
        await page.getByRole('tab', { name: 'Dashboard' }).click();
        await page.getByRole('heading', { name: 'Recent messages' }).waitFor();
        await page
          .getByText('Your order has shipped (sent with an API key)')
          .first()
          .waitFor({ timeout: 20_000 })
          .catch(async () => {
            await page.getByRole('button', { name: 'Refresh' }).click();
            await page.getByText('Your order has shipped (sent with an API key)').first().waitFor({ timeout: 10_000 });
          });
        // Revoked, the key is refused.
        await page.getByRole('tab', { name: 'Settings' }).click();
        await page.getByRole('tab', { name: 'API & Webhooks' }).click();
        page.once('dialog', (d) => void d.accept());
        // The list drops the key at once (optimistically): the revocation is done when the server answers.
        await Promise.all([
          page.waitForResponse((r) => r.url().includes('/api/keys/') && r.request().method() === 'DELETE'),
          page.getByRole('button', { name: 'Revoke e2e shop' }).click(),
        ]);
        await page.getByText('No API keys yet.').waitFor();
        const refused = await api(url, key, 'GET', '/v1/account');
        check(refused.status === 401, `a revoked key still works: ${refused.status}`);
      } finally {
        receiver.close();
      }
    },
  );

  await step(page, 'toasts close after 3 s; the tool fits a 360 px screen', async () => {
    await page.getByRole('tab', { name: 'Send Messages' }).click();
    await page
      .locator('.toast')
      .first()
      .waitFor({ state: 'detached', timeout: 5_000 })
      .catch(() => undefined);
    await page.getByRole('button', { name: 'Add Phone Numbers' }).click();
    await page.getByRole('dialog', { name: 'Add Phone Numbers' }).getByRole('button', { name: 'Add Numbers' }).click();
    const alert = page.getByRole('dialog', { name: 'Add Phone Numbers' }).getByRole('alert');
    check(
      (await alert.innerText()) === 'No valid phone numbers found in spreadsheet',
      'an empty spreadsheet is not refused in the spec words',
    );
    await page.keyboard.press('Escape');
    await page.getByLabel('Message', { exact: true }).fill('x');
    await page.getByRole('button', { name: 'Add Phone Numbers' }).click();
    await page.getByLabel('Phone number row 1', { exact: true }).fill('91230009');
    await page.getByRole('button', { name: 'Add Numbers' }).click();
    const toast = page.locator('.toast', { hasText: 'Phone numbers added' });
    await toast.waitFor();
    const shown = Date.now();
    // The Activity Log's title row (title, count, Clear) stays visible while toasts show.
    const overlap = await page.evaluate(() => {
      const a = document.querySelector('.toaster .toast')?.getBoundingClientRect();
      const b = document.querySelector('.activity-log .card-title-row')?.getBoundingClientRect();
      return a && b
        ? Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top)) *
            Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left))
        : -1;
    });
    check(overlap === 0, `a toast covers the Activity Log's title row (${overlap} px²)`);
    await toast.waitFor({ state: 'detached', timeout: 6_000 });
    const ms = Date.now() - shown;
    check(ms > 2_000 && ms < 6_000, `the toast stayed ${ms} ms instead of about 3 s`);
    check(
      (await page.evaluate(() => document.querySelector('.toaster')?.getBoundingClientRect().right ?? 0)) > 1200,
      'toasts are not top-right',
    );
    await page.setViewportSize({ width: 360, height: 780 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await shot(page, '09-send-360px', true);
    await page.setViewportSize({ width: 1280, height: 1000 });
    check(overflow <= 0, `the tool is ${overflow}px wider than a 360px screen`);
    await shot(page, '09-send-connected');
  });

  await step(page, 'the header stays on one line at 1366 px with a long e-mail as the welcome', async () => {
    const signIn = await fetch(`${url}/auth/dev/sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: `a.rather.long.mailbox.name.${Date.now()}@example-trading-company.com.hk` }),
    });
    const session = await signIn.json();
    const wide = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    await wide.addInitScript((value) => localStorage.setItem('bns.devSession', value), JSON.stringify(session));
    const tab = await wide.newPage();
    await tab.goto(url);
    await tab.getByText('Welcome,').waitFor({ timeout: 15_000 });
    const layout = await tab.evaluate(() => {
      const top = (sel) => document.querySelector(sel)?.getBoundingClientRect().top ?? -1;
      const welcome = document.querySelector('.welcome');
      return {
        brand: top('.app-header .brand'),
        signOut: top('.app-header .header-user button'),
        truncated: welcome.scrollWidth > welcome.clientWidth,
        height: document.querySelector('.app-header').getBoundingClientRect().height,
      };
    });
    await tab.screenshot({ path: join(OUT, '09b-header-1366px.png') });
    await wide.close();
    check(
      Math.abs(layout.brand - layout.signOut) < 20 && layout.height < 90,
      `the header wraps at 1366 px: ${JSON.stringify(layout)}`,
    );
    check(layout.truncated, 'the long e-mail is not cut with an ellipsis');
  });

  await step(
    page,
    'contacts: import 20 with tags, a segment, send to it, a reply in the Inbox answered, follow up the unread',
    async () => {
      const guests = Array.from({ length: 20 }, (_, i) => [
        `5688${String(i).padStart(4, '0')}`,
        `Guest ${i}`,
        i < 12 ? 'vip' : 'walk-in',
      ]);
      await page.getByRole('tab', { name: 'Contacts' }).click();
      await page.getByLabel('Upload contacts file').setInputFiles({
        name: 'guests.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(`phone,name,tags\n${guests.map((g) => g.join(',')).join('\n')}\n`),
      });
      await page.getByRole('button', { name: 'Use 20 contacts' }).click();
      await page.getByText('guests.csv: 20 created, 0 updated').waitFor();
      await page.getByLabel('Segment name').fill('VIP guests');
      await page.getByLabel('Any of tags').fill('vip');
      await page.getByRole('button', { name: 'Save segment' }).click();
      await page.getByRole('listitem').filter({ hasText: 'VIP guests' }).getByText('12 contacts').waitFor();
      await shot(page, '12-contacts');

      // Compose: "Choose contacts" brings the segment's 12 contacts with their names.
      await page.getByRole('tab', { name: 'Send Messages' }).click();
      const clear = page.getByRole('button', { name: 'Clear All' });
      if (await clear.isEnabled()) await clear.click();
      await page.getByLabel('Message', { exact: true }).fill('Dear {{name}}, your table is ready');
      await page.getByRole('button', { name: 'Choose contacts' }).click();
      await page.getByLabel('Segment', { exact: true }).selectOption({ label: 'VIP guests' });
      await page.getByRole('button', { name: 'Add to recipients' }).click();
      await page.getByText('12 contacts of VIP guests added').waitFor();
      await page.getByRole('button', { name: 'Start Sending' }).click();
      await page
        .getByRole('dialog', { name: 'Confirm Bulk Send' })
        .getByRole('button', { name: 'Send Messages' })
        .click();
      await page.locator('.status-pill.status-completed').waitFor({ timeout: 60_000 });
      // The donation prompt may follow a completed send.
      const donation = page.getByRole('dialog', { name: /on their way/ });
      if (await donation.isVisible().catch(() => false)) {
        await page.keyboard.press('Escape');
        await donation.waitFor({ state: 'detached' });
      }
      const outbox = await api(url, token, 'GET', '/dev/simulator/outbox');
      const sent = (outbox.body.messages ?? []).filter((m) => m.text.endsWith('your table is ready'));
      check(sent.length === 12, `the segment's 12 contacts did not all get the message (${sent.length})`);
      check(
        sent.some((m) => m.text === 'Dear Guest 3, your table is ready'),
        'the contact names did not fill {{name}}',
      );
      await page.getByRole('button', { name: 'Go Back' }).click();

      // A reply shows live on the Inbox tab, is read there and answered.
      const reply = await api(url, token, 'POST', '/dev/simulator/inbound', {
        from: '85256880003',
        text: 'Can I bring a friend?',
      });
      check(reply.status === 200, `the simulated reply was refused (${reply.status})`);
      await page.getByLabel('1 unread conversations').waitFor({ timeout: 15_000 });
      await page.getByRole('tab', { name: /Inbox/ }).click();
      await page.getByRole('button', { name: /Guest 3/ }).click();
      await page.getByText('Can I bring a friend?').last().waitFor();
      await page.getByLabel('Answer').fill('Of course, {{name|friend}}!');
      await page.getByRole('button', { name: 'Send answer' }).click();
      await page
        .waitForFunction(
          async () => {
            const t = JSON.parse(localStorage.getItem('bns.devSession') ?? '{}').token;
            const r = await fetch('/dev/simulator/outbox', { headers: { Authorization: `Bearer ${t}` } });
            const b = await r.json();
            return (b.messages ?? []).some((m) => m.text === 'Of course, Guest 3!');
          },
          undefined,
          { timeout: 30_000, polling: 500 },
        )
        .catch(() => check(false, 'the answer did not reach the simulated phone'));
      await shot(page, '13-inbox');

      // Follow up those who did not read it (read acks come 600 ms after a send; two guests never read).
      await page.getByRole('tab', { name: 'Campaigns' }).click();
      const followUp = page.getByTestId('campaign').filter({ hasText: 'your table is ready' }).getByLabel('Follow up');
      await followUp.selectOption('notRead');
      await page.getByText(/2 contacts who did not read it are in the sender/).waitFor({ timeout: 15_000 });
      const chips = await page.getByRole('list', { name: 'Phone numbers' }).getByRole('listitem').allInnerTexts();
      check(
        chips.length === 2 && UNREAD_NUMBERS.every((n) => chips.some((c) => c.includes(n))),
        `the follow-up did not load exactly the two guests who did not read: ${chips.join(' | ')}`,
      );
      await page.getByRole('button', { name: 'Clear All' }).click();
    },
  );

  await step(page, 'Simulate unlink, then link again with Connect WhatsApp and Simulate scan', async () => {
    await page.getByRole('button', { name: 'Simulate unlink' }).click();
    await page.getByRole('button', { name: 'Connect WhatsApp' }).waitFor({ timeout: 15_000 });
    check(
      (await page.getByRole('tab', { name: /Dashboard|Templates/ }).count()) === 0,
      'Dashboard and Templates are still shown without a connection',
    );
    await page.getByRole('button', { name: 'Connect WhatsApp' }).click();
    await page.getByRole('button', { name: 'Simulate scan' }).click({ timeout: 30_000 });
    await page.locator('.connected-banner').waitFor({ timeout: 15_000 });
  });

  await step(
    page,
    'link by phone number instead: an 8-character code, Cancel back to the QR, then enter it',
    async () => {
      await page.getByRole('button', { name: 'Simulate unlink' }).click();
      await page.getByRole('button', { name: 'Connect WhatsApp' }).click({ timeout: 15_000 });
      await page.getByAltText('WhatsApp QR code to scan with your phone').waitFor({ timeout: 30_000 });
      const askCode = async (number) => {
        await page.getByRole('button', { name: 'Link with phone number instead' }).click();
        await page.getByLabel('Phone number of your WhatsApp account, with the country code').fill(number);
        await page.getByRole('button', { name: 'Get code' }).click();
        const code = page.getByLabel('Pairing code');
        await code.waitFor({ timeout: 15_000 });
        return code.innerText();
      };
      // A number WhatsApp would not take is refused in words, and the QR stays.
      await page.getByRole('button', { name: 'Link with phone number instead' }).click();
      await page.getByLabel('Phone number of your WhatsApp account, with the country code').fill('12ab');
      await page.getByRole('button', { name: 'Get code' }).click();
      check(
        (await page.getByRole('alert').filter({ hasText: 'country code' }).count()) === 1,
        'a bad number is not refused in words',
      );
      await page.reload();
      await page.getByAltText('WhatsApp QR code to scan with your phone').waitFor({ timeout: 30_000 });
      const first = await askCode('+852 9123 4567');
      check(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/.test(first), `the pairing code is not shown as ABCD-EFGH: ${first}`);
      for (const stepText of ['Tap Link a device', 'Tap Link with phone number instead'])
        check((await page.getByText(stepText).count()) === 1, `the step "${stepText}" is not shown`);
      check((await page.getByText(/A new code replaces this one at/).count()) === 1, 'the expiry is not shown');
      await shot(page, '11-pairing-code');
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.getByAltText('WhatsApp QR code to scan with your phone').waitFor({ timeout: 30_000 });
      const second = await askCode('85291234567');
      check(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/.test(second), `the second pairing code is not ABCD-EFGH: ${second}`);
      await page.getByRole('button', { name: 'Simulate entering the code' }).click();
      await page.locator('.connected-banner').waitFor({ timeout: 15_000 });
      // The account linked is the number the code was asked for (digits 3 to 11 shown).
      check(
        (await page.locator('.connected-banner .phone').innerText()).trim() === '91234567',
        'the linked number is not the one the code was asked for',
      );
    },
  );

  await step(page, 'sign out (the other tabs sign out too)', async () => {
    const other = await context.newPage();
    await other.goto(url);
    await other.getByText('Welcome,').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Sign Out' }).click();
    await page.getByRole('link', { name: 'Start Messaging' }).waitFor();
    const left = await page.evaluate(() => localStorage.getItem('bns.devSession'));
    check(left === null, 'the token is still in localStorage after sign-out');
    await other
      .getByRole('link', { name: 'Start Messaging' })
      .waitFor({ timeout: 5_000 })
      .catch(() => check(false, 'the other tab is still signed in after sign-out'));
    await other.close();
    // The signed-out token is refused from now on.
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url'));
    const stale = await api(url, token, 'POST', '/api/session/cleanup', { clerkUserId: claims.sub });
    check(stale.status === 401, `the token still works after sign-out: ${stale.status}`);
    // Cleanup logged the WhatsApp account out: a new sign-in (the same e-mail is the same user) finds no session.
    const fresh = await (
      await fetch(`${url}/auth/dev/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: claims.email }),
      })
    ).json();
    check(fresh.userId === claims.sub, `a new sign-in with ${claims.email} is another user`);
    const again = await api(url, fresh.token, 'POST', '/api/session/cleanup', { clerkUserId: fresh.userId });
    check(
      again.status === 200 && again.body.sessionsCleanedUp === 0,
      `the session was not cleaned up at sign-out: ${JSON.stringify(again.body)}`,
    );
    await shot(page, '10-signed-out', true);
  });

  await step(page, 'sign in again with the same e-mail', async () => {
    await page.getByRole('link', { name: 'Start Messaging' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in' });
    await dialog.getByLabel('E-mail').fill(email);
    await dialog.getByRole('button', { name: 'Sign In' }).click();
    await page.getByText('Welcome,').waitFor();
  });
  await accountAndData(page, url, email);

  check(consoleErrors.length === 0, `page errors: ${consoleErrors.join(' | ')}`);
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's WCAG 2.x A/AA violations inside `selector` (the app's CSP forbids inline scripts: evaluated via DevTools). */
async function axeViolations(page, selector) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (within) => {
    const result = await window.axe.run(within, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }, selector);
}

/** The signed-in user's token, as the web app keeps it. */
function pageToken(page) {
  return page.evaluate(() => JSON.parse(localStorage.getItem('bns.devSession') ?? '{}').token ?? '');
}

/**
 * Settings › Account & data: change the retention, download the take-out and read it back, see the
 * audit log, delete the account (its progress and confirmation), then sign in again with the same
 * e-mail and find the account empty.
 */
async function accountAndData(page, url, email) {
  let userId = '';
  await step(page, 'account & data: change how long message details are kept', async () => {
    const token = await pageToken(page);
    userId = JSON.parse(Buffer.from(token.split('.')[1], 'base64url')).sub;
    // Data of every kind the take-out and the deletion must cover.
    const made = await api(url, token, 'POST', `/api/templates/${userId}`, { name: 'E2E data', message_content: 'Hi' });
    check(made.status === 201, `template: ${made.status}`);
    check(
      (await api(url, token, 'POST', `/api/opt-outs/${userId}`, { phoneNumbers: ['61230001'] })).status === 200,
      'opt-out',
    );
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByRole('tab', { name: 'Account & data' }).click();
    const select = page.getByLabel('Keep message details for');
    await select.selectOption('90');
    await page.getByText('Saved', { exact: true }).waitFor();
    const saved = await api(url, await pageToken(page), 'GET', '/api/account/retention');
    check(saved.body.days === 90, `the retention was not saved: ${JSON.stringify(saved.body)}`);
    await select.selectOption({ label: 'Until I delete them' });
    await page.getByText('Saved', { exact: true }).waitFor();
    check(
      (await api(url, await pageToken(page), 'GET', '/api/account/retention')).body.days === null,
      'keep not saved',
    );
    await shot(page, '11-account-data');
    const violations = await axeViolations(page, '.settings-panel');
    check(violations.length === 0, `axe: ${violations.join(' | ')}`);
  });

  await step(page, 'account & data: download my data and read the zip back', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download my data' }).click(),
    ]);
    check(/^my-data-\d{4}-\d{2}-\d{2}\.zip$/.test(download.suggestedFilename()), download.suggestedFilename());
    const path = join(OUT, download.suggestedFilename());
    await download.saveAs(path);
    const files = unzipSync(new Uint8Array(readFileSync(path)));
    for (const area of ['templates', 'campaigns', 'opt-outs', 'contacts', 'preferences', 'policy', 'audit-log'])
      for (const ext of ['json', 'csv']) check(files[`${area}.${ext}`] !== undefined, `${area}.${ext} is missing`);
    const templates = JSON.parse(strFromU8(files['templates.json']));
    check(
      templates.some((t) => t.name === 'E2E data'),
      'the template is not in the take-out',
    );
    const optOuts = JSON.parse(strFromU8(files['opt-outs.json']));
    check(
      optOuts.some((o) => o.phoneNumber === '61230001'),
      'the opt-out is not in the take-out',
    );
    // The download is in the audit log, shown in the table.
    const table = page.getByRole('table', { name: 'Audit log' });
    await page.waitForTimeout(500);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await table.getByRole('cell', { name: 'takeout.downloaded' }).waitFor({ timeout: 10_000 });
  });

  await step(page, 'account & data: delete the account and see it done', async () => {
    const button = page.getByRole('button', { name: 'Delete account' });
    check(await button.isDisabled(), 'Delete account is enabled before the e-mail is typed');
    await page.getByLabel('Type your e-mail address to confirm').fill(email.toUpperCase());
    await button.click();
    await page.getByText('Your account and all its data are deleted.').waitFor({ timeout: 60_000 });
    await shot(page, '12-account-deleted');
    const violations = await axeViolations(page, '.settings-panel');
    check(violations.length === 0, `axe after the deletion: ${violations.join(' | ')}`);
    await page.getByTestId('deletion-progress').getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Start Messaging' }).waitFor();
  });

  await step(page, 'sign in again with the same e-mail: the account is empty', async () => {
    await page.getByRole('link', { name: 'Start Messaging' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in' });
    await dialog.getByLabel('E-mail').fill(email);
    await dialog.getByRole('button', { name: 'Sign In' }).click();
    await page.getByText('Welcome,').waitFor();
    const token = await pageToken(page);
    const again = JSON.parse(Buffer.from(token.split('.')[1], 'base64url')).sub;
    check(again === userId, 'the same e-mail is another user after the deletion');
    const templates = await api(url, token, 'GET', `/api/templates/${userId}`);
    check(
      templates.status === 200 && templates.body.templates.length === 0,
      `templates left: ${JSON.stringify(templates.body)}`,
    );
    const jobs = await api(url, token, 'GET', `/api/jobs/${userId}`);
    check(jobs.status === 200 && jobs.body.jobs.length === 0, `campaigns left: ${jobs.body.jobs?.length}`);
    const optOuts = await api(url, token, 'GET', `/api/opt-outs/${userId}`);
    check(optOuts.status === 200 && optOuts.body.optOuts.length === 0, 'opt-outs left');
    const retention = await api(url, token, 'GET', '/api/account/retention');
    check(retention.body.days === 365, `the retention setting survived: ${JSON.stringify(retention.body)}`);
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByRole('tab', { name: 'Account & data' }).click();
    // Only this new sign-in is in the new account's log.
    const table = page.getByRole('table', { name: 'Audit log' });
    await table
      .getByRole('cell', { name: 'auth.signed_in' })
      .first()
      .waitFor({ timeout: 10_000 })
      .catch(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        await table.getByRole('cell', { name: 'auth.signed_in' }).first().waitFor({ timeout: 10_000 });
      });
    check(
      (await table.getByRole('cell', { name: 'takeout.downloaded' }).count()) === 0,
      'the old audit log is still there',
    );
  });
}

let exitCode = 0;
const started = Date.now();
try {
  check(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  process.stdout.write('e2e: starting the system (npm start)…\n');
  if (!process.env.E2E_URL) system = await startJourneySystem();
  const url = process.env.E2E_URL ?? system.url;
  process.stdout.write(`e2e: system ready at ${url} after ${Math.round((Date.now() - started) / 1000)} s\n`);
  await journey(url);
} catch (err) {
  exitCode = 1;
  process.stderr.write(`e2e failed: ${err.message}\n`);
  // The services' own lines explain a stall (they carry no phone numbers or message text).
  if (system)
    process.stderr.write(`launcher output (last lines):\n${system.log().split('\n').slice(-60).join('\n')}\n`);
} finally {
  await browser?.close().catch(() => undefined);
  await system?.stop();
}

const passed = results.filter((r) => r.ok).length;
const failed = results.filter((r) => !r.ok).length || (exitCode ? 1 : 0);
mkdirSync(RESULTS, { recursive: true });
writeFileSync(
  join(RESULTS, 'e2e.json'),
  JSON.stringify({
    name: 'e2e',
    passed,
    failed,
    skipped: 0,
    failures: results
      .filter((r) => !r.ok)
      .map((r) => `e2e › ${r.name}: ${String(r.error).split('\n')[0].slice(0, 300)}`),
  }),
);
writeFileSync(join(OUT, 'steps.json'), JSON.stringify(results, null, 2));
process.stdout.write(
  `e2e: ${passed} passed, ${failed} failed in ${Math.round((Date.now() - started) / 1000)} s; screenshots in ${OUT}\n`,
);
process.exit(exitCode);
