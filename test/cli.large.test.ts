// Valid GGUF headers past a call's argument limit (~120,000): gguf.cpp reads 150,000 metadata keys or
// tensors, and so must `mmq inspect` (a spread into Math.max over the rows overflowed the stack), in both
// outputs; a per-layer array that long must not overflow the preset's largest-entry either.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { presetFromGgufMetadata } from '../src/kernels/models';
import { runMmq } from './cliProcess';

const tmp = mkdtempSync(join(tmpdir(), 'mmq-large-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * A GGUF v3 of `keys` u8 metadata keys ("key0000001"...) and `tensors` F32 [32] tensors, written into
 * one buffer (the test writer's byte-at-a-time array is too slow for a 27 MB header).
 */
function bigGguf(keys: number, tensors: number): Uint8Array {
  const name = (p: string, i: number) => p + String(i).padStart(9, '0'); // 10 ASCII bytes
  const header = 24 + keys * (8 + 10 + 4 + 1) + tensors * (8 + 10 + 4 + 8 + 4 + 8);
  const dataAt = Math.ceil(header / 32) * 32;
  const b = new Uint8Array(dataAt + tensors * 128);
  const dv = new DataView(b.buffer);
  const enc = new TextEncoder();
  let p = 0;
  const u32 = (v: number) => (dv.setUint32(p, v, true), (p += 4));
  const u64 = (v: number) => (dv.setBigUint64(p, BigInt(v), true), (p += 8));
  const str = (s: string) => (u64(s.length), b.set(enc.encode(s), p), (p += s.length));
  b.set(enc.encode('GGUF'));
  p = 4;
  u32(3);
  u64(tensors);
  u64(keys);
  for (let i = 0; i < keys; i++) {
    str(name('k', i));
    u32(0); // UINT8
    b[p++] = i & 255;
  }
  for (let i = 0; i < tensors; i++) {
    str(name('t', i));
    u32(1); // n_dims
    u64(32);
    u32(0); // F32
    u64(128 * i);
  }
  expect(p).toBe(header);
  return b;
}

describe('headers past the argument-spread limit', () => {
  const keysFile = join(tmp, 'keys.gguf');
  const tensorsFile = join(tmp, 'tensors.gguf');
  writeFileSync(keysFile, bigGguf(150_000, 0));
  writeFileSync(tensorsFile, bigGguf(0, 150_000));

  it('inspect lists 150,000 metadata keys, as text and as JSON', async () => {
    const r = await runMmq(['inspect', keysFile], { timeoutMs: 100_000 });
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(': GGUF v3, ');
    expect(r.stdout).toMatch(/\n {2}k000149999 +UINT8 +239\n/); // 149999 & 255
    const j = await runMmq(['inspect', keysFile, '--json'], { timeoutMs: 100_000 });
    expect([j.status, j.stderr]).toEqual([0, '']);
    const parsed = JSON.parse(j.stdout) as { metadata: Record<string, { value: number }> };
    expect(Object.keys(parsed.metadata)).toHaveLength(150_000);
    expect(parsed.metadata.k000149999!.value).toBe(149_999 & 255);
  }, 120_000);

  it('inspect lists 150,000 tensors, as text and as JSON', async () => {
    const r = await runMmq(['inspect', tensorsFile], { timeoutMs: 100_000 });
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/\n {2}t000149999 +F32 +\[32\] +\[32\] +\d+ +128 +no: not taken/);
    const j = await runMmq(['inspect', tensorsFile, '--json'], { timeoutMs: 100_000 });
    expect(j.status).toBe(0);
    expect((JSON.parse(j.stdout) as { tensors: unknown[] }).tensors).toHaveLength(150_000);
  }, 120_000);

  it('a per-layer head count array of 200,000 entries gives its largest entry (no spread into Math.max)', () => {
    const heads = Array.from({ length: 200_000 }, (_, i) => (i === 123_456 ? 64 : 32));
    const p = presetFromGgufMetadata(
      new Map<string, number | string | number[]>([
        ['general.architecture', 'llama'],
        ['llama.embedding_length', 4096],
        ['llama.attention.head_count', heads],
        ['llama.attention.key_length', 128],
      ]),
    );
    // attn_q is heads x key_length = 64 x 128 wide (the largest entry, not the common 32).
    expect(p.gemms.find((g) => g.name === 'attn_q')).toMatchObject({ n: 8192, k: 4096 });
  });
});
