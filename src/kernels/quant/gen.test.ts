import { describe, expect, it } from 'vitest';
import {
  blockSums,
  coldBank,
  GEN_F16_ACT_SEED,
  GEN_MMQ_Q4K_SEED,
  GEN_MMQ_SEED,
  genF16Activation,
  genMmq,
  genMmqQ4k,
} from './gen';

// BigInt re-implementations of the seed's generators, written from the Rust text, not from gen.ts:
//   let mut next = || { s ^= s << 13; s ^= s >> 7; s ^= s << 17; s };
//   ((next() % 255) as i64 - 127) as i8
//   (next() % 1000) as f32 / 50000.0 + 0.002        (f32 division and add, so fround each step)
const M64 = (1n << 64n) - 1n;
function stream(seed: bigint): () => bigint {
  let s = seed;
  return () => {
    s ^= (s << 13n) & M64;
    s ^= s >> 7n;
    s ^= (s << 17n) & M64;
    return s;
  };
}
const f = Math.fround;
const i8 = (next: () => bigint) => Number(next() % 255n) - 127;
const scale = (next: () => bigint, div: number, add: number) => f(f(Number(next() % 1000n) / div) + f(add));

describe('genMmq twins gen_mmq', () => {
  it('matches a BigInt twin over every element of a 3x2x64 problem', () => {
    const [m, n, k] = [3, 2, 64];
    const kb = k / 32;
    const next = stream(0xd1b54a32d192ed03n);
    const xq = Array.from({ length: m * k }, () => i8(next));
    const wq = Array.from({ length: n * k }, () => i8(next));
    const xs = Array.from({ length: m * kb }, () => scale(next, 50000, 0.002));
    const wd = Array.from({ length: n * kb }, () => scale(next, 50000, 0.002));
    const d = genMmq(m, n, k);
    expect([...d.xq]).toEqual(xq);
    expect([...d.wq]).toEqual(wq);
    expect([...d.xs]).toEqual(xs);
    expect([...d.wd]).toEqual(wd);
  });

  it('keeps int8 in [-127, 127] and scales in [0.002, 0.022) on a 16x16x256 problem; seed override changes the stream', () => {
    const d = genMmq(16, 16, 256);
    expect(Math.min(...d.xq, ...d.wq)).toBeGreaterThanOrEqual(-127);
    expect(Math.max(...d.xq, ...d.wq)).toBeLessThanOrEqual(127);
    expect(Math.min(...d.xs, ...d.wd)).toBeGreaterThanOrEqual(f(0.002));
    expect(Math.max(...d.xs, ...d.wd)).toBeLessThan(0.022);
    expect(GEN_MMQ_SEED).toBe(0xd1b54a32d192ed03n);
    expect([...genMmq(1, 1, 32, 7n).xq]).not.toEqual([...d.xq.subarray(0, 32)]);
  });
});

describe('genMmqQ4k twins gen_mmq_q4k', () => {
  it('matches a BigInt twin over every element of a 2x3x512 problem, draw order xq,wqs,wsc,wd,wdm,xs', () => {
    const [m, n, k] = [2, 3, 512];
    const kb = k / 32;
    const nsb = k / 256;
    const next = stream(0x243f6a8885a308d3n);
    const xq = Array.from({ length: m * k }, () => i8(next));
    const wqs = Array.from({ length: n * nsb * 32 }, () => Number(next() & 0xffffffffn)); // next() as u32
    const wsc = Array.from({ length: n * nsb * 3 }, () => Number(next() & 0xffffffffn));
    const wd = Array.from({ length: n * nsb }, () => scale(next, 20000, 0.002));
    const wdm = Array.from({ length: n * nsb }, () => f(Number(next() % 1000n) / 40000));
    const xs = Array.from({ length: m * kb }, () => scale(next, 50000, 0.002));
    const xsum: number[] = [];
    for (let i = 0; i < m; i++) {
      for (let b = 0; b < kb; b++) {
        let acc = 0;
        for (let l = 0; l < 32; l++) acc += xq[i * k + b * 32 + l]!;
        xsum.push(f(xs[i * kb + b]! * acc)); // xs[..] * acc as f32
      }
    }
    const d = genMmqQ4k(m, n, k);
    expect(GEN_MMQ_Q4K_SEED).toBe(0x243f6a8885a308d3n);
    expect([...d.xq]).toEqual(xq);
    expect([...d.w.qs]).toEqual(wqs);
    expect([...d.w.scales]).toEqual(wsc);
    expect([...d.w.d]).toEqual(wd);
    expect([...d.w.dmin]).toEqual(wdm);
    expect([...d.xs]).toEqual(xs);
    expect([...d.xsum]).toEqual(xsum);
  });

  it('spot-checks the first elements of the seed test shape 32x64x256 against the twin', () => {
    const next = stream(0x243f6a8885a308d3n);
    const first = [i8(next), i8(next), i8(next)];
    const d = genMmqQ4k(32, 64, 256);
    expect([...d.xq.subarray(0, 3)]).toEqual(first);
    expect(d.w.qs.length).toBe(64 * 32);
    expect(d.w.scales.length).toBe(64 * 3);
    expect(() => genMmqQ4k(1, 1, 100)).toThrow(/multiple of the 256/);
  });

  it('blockSums is xs * sum(xq) per 32-block in f32', () => {
    const xq = new Int8Array(64).map((_, i) => (i % 7) - 3);
    const xs = new Float32Array([0.5, 0.25]);
    let s0 = 0;
    let s1 = 0;
    for (let i = 0; i < 32; i++) s0 += (i % 7) - 3;
    for (let i = 32; i < 64; i++) s1 += (i % 7) - 3;
    expect([...blockSums(xq, xs, 1, 64)]).toEqual([0.5 * s0, 0.25 * s1]);
  });
});

describe('genF16Activation and coldBank', () => {
  it('twins the coopmat test activation: (s % 2000) as f32 / 1000.0 - 1.0 from 0x123456789ABCDEF0', () => {
    const next = stream(0x123456789abcdef0n);
    const want = Array.from({ length: 600 }, () => f(f(Number(next() % 2000n) / 1000) - 1));
    const got = genF16Activation(2, 300);
    expect(GEN_F16_ACT_SEED).toBe(0x123456789abcdef0n);
    expect([...got]).toEqual(want);
    expect(Math.min(...got)).toBeGreaterThanOrEqual(-1);
    expect(Math.max(...got)).toBeLessThan(1);
  });

  it("coldBank is the seed's wqs[i] ^ 0x9E37_79B1.wrapping_mul(i + 1)", () => {
    const qs = new Uint32Array([0, 0xffffffff, 0x12345678, 7]);
    const got = coldBank(qs);
    const want = [...qs].map((v, i) =>
      Number((BigInt(v) ^ ((0x9e3779b1n * BigInt(i + 1)) & 0xffffffffn)) & 0xffffffffn),
    );
    expect([...got]).toEqual(want);
  });
});
