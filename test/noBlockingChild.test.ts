// ESLint keeps blocking child processes out of every file a test runner loads (eslint.config.js): a vitest
// worker blocked in spawnSync cannot answer its runner, which under load gives up on it mid-suite.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from './cliProcess';

const eslint = new ESLint({ cwd: ROOT });
const flagged = async (filePath: string, code: string) =>
  (await eslint.lintText(code, { filePath }))
    .flatMap((r) => r.messages)
    .filter((m) => m.ruleId === 'no-restricted-syntax')
    .map((m) => m.line);

const BLOCKING = `import { spawnSync } from 'node:child_process';
import * as cp from 'child_process';
export const a = spawnSync('git', []);
export const b = cp.execSync('git');
export async function c() {
  const { execFileSync } = await import('node:child_process');
  return execFileSync('git', []);
}
`;

describe('no blocking child processes where a test runner loads the file', () => {
  it.each([
    'test/x.test.ts',
    'test/helper.ts',
    'e2e/x.spec.ts',
    'src/app/x.test.ts',
    'src/kernels/x.test.tsx',
  ])('%s: an import, a namespace call and a destructured dynamic import are each flagged', async (file) => {
    expect(await flagged(file, BLOCKING)).toEqual([1, 4, 6]);
  });

  it('test/hw/main.ts, a standalone command, may block; spawn (what test/cliProcess.ts uses) is fine anywhere', async () => {
    expect(await flagged('test/hw/main.ts', BLOCKING)).toEqual([]);
    const spawning = `import { spawn } from 'node:child_process';\nexport const p = spawn('git', []);\n`;
    expect(await flagged('test/x.test.ts', spawning)).toEqual([]);
  });
});
