// The committed console bundle is what `npm run build:console` makes from src/http/console/app/ now,
// so the served console never lags behind its sources.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildConsoleAssets, consoleAssetsFile } from '../../../functions/build-console.ts';

describe('src/http/console/console-assets.ts', () => {
  it('equals a fresh build of the console sources (run npm run build:console after changing them)', async () => {
    const fresh = await buildConsoleAssets();
    const committed = readFileSync(consoleAssetsFile, 'utf8');
    expect(committed === fresh, 'console-assets.ts is stale: run npm run build:console').toBe(true);
  });

  it('holds the script and styles with nothing that evaluates strings or reaches another origin', async () => {
    const { consoleScript, consoleStyle } = await import('../../../src/http/console/console-assets.ts');
    expect(consoleScript.length).toBeGreaterThan(10_000);
    expect(consoleStyle).toContain('.diff-add');
    expect(consoleScript).not.toMatch(/\beval\(|new Function\(/);
    expect(consoleStyle).not.toMatch(/@import|url\(/);
  });
});
