import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { api, REPO_ROOT, startSystem, waitFor, type System } from '@bns/testing';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const built = existsSync(join(REPO_ROOT, 'web', 'dist', 'index.html')) && existsSync(CHROMIUM);

/**
 * The built web app under the gateway's Content-Security-Policy, in a real browser: sign in, get a QR,
 * link, open every tab. Any CSP violation (an inline script, a blocked image or socket) fails the test.
 */
(built ? describe : describe.skip)('the web app under the CSP (headless Chromium)', () => {
  let sys: System;
  let browser: Browser;

  beforeAll(async () => {
    sys = await startSystem({ shards: 1 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-dev-shm-usage',
        '--no-first-run',
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
  });

  it('runs with no CSP violation', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    await page.exposeFunction('reportViolation', (v: string) => violations.push(v));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as unknown as { reportViolation: (v: string) => void }).reportViolation(
          `${e.violatedDirective} ${e.blockedURI}`,
        );
      });
    });
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const response = await page.goto(sys.gateway.url);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByText('Professional Bulk Messaging Solution').waitFor();
    await page.getByRole('link', { name: 'Start Messaging' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in' });
    await dialog.getByLabel('E-mail').fill('csp@shop.hk');
    await dialog.getByRole('button', { name: 'Sign In' }).click();
    await page.getByText('Welcome,').waitFor();
    await page.getByRole('button', { name: 'Connect WhatsApp' }).click({ timeout: 40_000 });
    await page.getByRole('img', { name: /WhatsApp QR code/ }).waitFor({ timeout: 30_000 });
    const token = await page.evaluate(() => JSON.parse(localStorage.getItem('bns.devSession') ?? '{}').token ?? '');
    await waitFor(
      async () => (await api(sys.gateway.url, token).post('/dev/simulator/scan')).status === 200,
      15_000,
      100,
      'the scan',
    );
    await page.locator('.connected-banner').waitFor({ timeout: 15_000 });
    for (const tab of ['Dashboard', 'Templates', 'Send Messages']) {
      await page.getByRole('tab', { name: new RegExp(tab) }).click();
      await page.waitForTimeout(300);
    }
    expect(violations).toEqual([]);
  }, 120_000);
});
