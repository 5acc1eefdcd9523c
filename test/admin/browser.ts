import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

/** The operating system's Chromium (Debian package `chromium`), or CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** True when the browser tests can run here. */
export const CHROMIUM_AVAILABLE = existsSync(CHROMIUM_PATH);
/** On CI a missing browser is a failure, never a silent skip. */
export const CHROMIUM_REQUIRED = process.env.CI === 'true';

if (!CHROMIUM_AVAILABLE && !CHROMIUM_REQUIRED) {
  console.warn(
    `browser tests skipped: no Chromium at ${CHROMIUM_PATH}; install the Debian package chromium (or set CHROMIUM_PATH) to run them`,
  );
}

/**
 * Where screenshots of the main pages go; `LEDGERFLOW_SCREENSHOTS=1` writes the committed ones,
 * `LEDGERFLOW_SCREENSHOTS_FOLDER` another folder (to look at them without sharing `/tmp`).
 */
const SCREENSHOT_FOLDER =
  process.env.LEDGERFLOW_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))
    : (process.env.LEDGERFLOW_SCREENSHOTS_FOLDER ?? '/tmp/ledgerflow-screenshots/').replace(/\/?$/, '/');

/**
 * Launches Chromium headless, without sandbox, GPU or any network of its own; `extraArgs` adds
 * flags (`--lang=de-DE` for a browser set to another language).
 */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      ...extraArgs,
    ],
  });
}

/** Saves a full-page screenshot of the page under this name. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_FOLDER, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_FOLDER}${name}.png`, fullPage: true });
}
