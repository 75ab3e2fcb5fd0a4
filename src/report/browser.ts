/**
 * Headless Chromium for PNG export and browser tests: Debian's `chromium` package driven by
 * playwright-core (which never downloads a browser of its own). Each session gets a fresh profile in a
 * temp directory, removed afterwards, and flags that keep Chromium off the network.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// playwright-core loads when a browser is launched: at every CLI start it cost 0.4 s.
import type { BrowserContext } from 'playwright-core';
import { StarpoError } from '../errors.ts';

export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** STARPO_CHROMIUM overrides the Debian path (e.g. a chromium elsewhere on a developer machine). */
export function chromiumPath(): string {
  const path = process.env.STARPO_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(path)) {
    throw new StarpoError(
      `no Chromium at ${path}: install Debian's package (apt-get install -y chromium) or set STARPO_CHROMIUM`,
    );
  }
  return path;
}

export interface BrowserOptions {
  /** Device pixels per CSS pixel: 2 gives sharp images for papers. Default 1. */
  scale?: number;
  viewport?: { width: number; height: number };
}

/** Runs `fn` with a fresh browser context and always closes it and removes its profile. */
export async function withBrowser<T>(
  fn: (context: BrowserContext) => Promise<T>,
  options: BrowserOptions = {},
): Promise<T> {
  const profile = await mkdtemp(join(tmpdir(), 'starpo-chromium-'));
  try {
    const { chromium } = await import('playwright-core');
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath(),
      headless: true,
      args: [...CHROMIUM_ARGS],
      deviceScaleFactor: options.scale ?? 1,
      viewport: options.viewport ?? { width: 1400, height: 900 },
    });
    try {
      return await fn(context);
    } finally {
      await context.close();
    }
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
