// A real browser for the web console's tests: Debian's chromium (scripts/ensure-chromium.sh)
// driven by playwright-core, which never downloads a browser of its own. Every page records its
// console errors, uncaught errors and CSP violations, so a test can say there were none.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './processes';

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? execFileSync('bash', [join(ROOT, 'scripts/ensure-chromium.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: the tests run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
}

export interface WatchedPage { page: Page; problems: string[] }

/** A new page in its own context (its own sessionStorage) that records every console error and uncaught error. */
export async function watchedPage(browser: Browser): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  return { page, problems };
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation { id: string; impact: string | null; help: string; targets: string[] }

/** axe-core's accessibility rules on the page as it is now; the violations of serious or critical impact. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, not as a page script: the console's CSP stays as strict as it is.
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
