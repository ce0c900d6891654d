// The k-block drill-down: every family's partials sum (in the oracle's order) to the oracle's value, their
// operand blocks are the ones the element reads, and the deviation locator names the block a broken
// reduction lost.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from './arms';
import { SWIFTSHADER_CAPS } from './gpu/testCaps';
import { KERNELS } from './index';
import { mmqPartials } from './mmq';
import { mmqDataset } from './mmq/mmq.data';
import { mmqQ4kRef, mmqQ8Ref } from './mmq/mmq.oracle';
import { deviationText, gateTolerance, locateDeviation, type ElementPartials } from './partials';

const f = Math.fround;

describe('MMQ k-block partials', () => {
  for (const weights of ['q8_0', 'q4k'] as const) {
    for (const source of ['reference', 'random'] as const) {
      it(`${weights} (${source}): the running sum ends on the oracle's value for every element`, () => {
        const [m, n, k] = [3, 5, 512];
        const ds = mmqDataset(weights, m, n, k, source, 0);
        const oracle =
          ds.inputs.weights === 'q8_0'
            ? mmqQ8Ref(ds.inputs.data, m, n, k)
            : mmqQ4kRef(ds.inputs.data, m, n, k);
        for (let i = 0; i < m; i++)
          for (let j = 0; j < n; j++) {
            const p = mmqPartials(ds.inputs, i, j, k);
            expect(p.blocks).toHaveLength(k / 32);
            expect(p.value).toBe(oracle[i * n + j]);
            let acc = 0;
            for (const b of p.blocks) expect(b.cumulative).toBe((acc = f(acc + b.contribution)));
            expect([p.row, p.col]).toEqual([i, j]);
          }
      });
    }
  }

  it('shows the codes and scales the element reads (Q8_0 block 2 of row 1, col 4)', () => {
    const [n, k] = [5, 256];
    const ds = mmqDataset('q8_0', 2, n, k, 'reference', 0);
    if (ds.inputs.weights !== 'q8_0') throw new Error('q8_0 expected');
    const d = ds.inputs.data;
    const b = mmqPartials(ds.inputs, 1, 4, k).blocks[2]!;
    expect(b.activation.q).toEqual(Array.from(d.xq.subarray(k + 64, k + 96)));
    expect(b.weight.q).toEqual(Array.from(d.wq.subarray(4 * k + 64, 4 * k + 96)));
    expect(b.activation.scales.d).toBe(d.xs[k / 32 + 2]);
    expect(b.weight.scales.d).toBe(d.wd[4 * (k / 32) + 2]);
    expect(b.terms.isum).toBe(b.activation.q.reduce((s, x, l) => s + x * b.weight.q[l]!, 0));
  });

  it('Q4_K blocks carry d, dmin and the 6-bit scale and min of their sub-block', () => {
    const ds = mmqDataset('q4k', 1, 2, 512, 'random', 3);
    const p = mmqPartials(ds.inputs, 0, 1, 512);
    for (const b of p.blocks) {
      expect(Object.keys(b.weight.scales)).toEqual(['d', 'dmin', 'sc', 'm']);
      expect(b.weight.q.every((q) => q >= 0 && q < 16)).toBe(true);
      expect(b.activation.scales.s).toBeDefined();
      expect(b.terms.D).toBe(f(b.weight.scales.d! * b.weight.scales.sc!));
    }
  });

  it('every family that exposes partials agrees with its own oracle (MoE reads its expert rows)', () => {
    const checked: string[] = [];
    for (const family of KERNELS.families) {
      const config = resolveConfig(
        {
          kernel: family.id,
          arm: 'scalar',
          data: { source: 'reference', seed: 0 },
          params: { ...family.defaults, ...family.small },
        },
        SWIFTSHADER_CAPS,
      );
      if (!family.arms.some((a) => a.arm === 'scalar') || family.validate(config, SWIFTSHADER_CAPS).length)
        continue;
      const facts = family.build(config, SWIFTSHADER_CAPS).facts;
      if (!facts.partials) continue;
      const oracle = facts.oracle();
      for (const [r, c] of [
        [0, 0],
        [facts.rows - 1, facts.cols - 1],
      ] as const)
        expect(facts.partials(r, c).value, `${family.id} (${r}, ${c})`).toBe(oracle[r * facts.cols + c]);
      checked.push(family.id);
    }
    expect(checked).toEqual(expect.arrayContaining(['mmq-q8-naive', 'mmq-q4k-tile', 'moe-q4k-id']));
  });
});

/** A breakdown of the contributions given, in plain f64 sums (the locator only reads the numbers). */
function partialsOf(contributions: number[]): Pick<ElementPartials, 'blocks' | 'value'> {
  let acc = 0;
  const blocks = contributions.map((contribution, block) => ({
    block,
    k0: block * 32,
    terms: {},
    contribution,
    cumulative: (acc += contribution),
    activation: { format: 'q8_1', q: [], scales: {} },
    weight: { format: 'Q8_0', q: [], scales: {} },
  }));
  return { blocks, value: acc };
}

describe('locateDeviation', () => {
  const p = partialsOf([1, 2, 4, 8, 16]);
  it('finds nothing when the GPU value is the oracle', () => {
    expect(locateDeviation(p, 31)).toEqual({ kind: 'none' });
  });
  it('finds a reduction that stopped early: the first block it lost', () => {
    expect(locateDeviation(p, 7)).toEqual({ kind: 'stops', block: 3 });
    expect(locateDeviation(p, 0)).toEqual({ kind: 'stops', block: 0 });
  });
  it('finds one dropped or doubled block', () => {
    expect(locateDeviation(p, 31 - 4)).toEqual({ kind: 'dropped', block: 2 });
    expect(locateDeviation(p, 31 + 8)).toEqual({ kind: 'doubled', block: 3 });
  });
  it('finds a block an f32 reduction skipped, whatever its rounding (real Q4_K partials)', () => {
    const ds = mmqDataset('q4k', 1, 1, 1024, 'random', 1);
    const real = mmqPartials(ds.inputs, 0, 0, 1024);
    for (const skip of [1, 17, 30]) {
      let acc = 0;
      for (const b of real.blocks) if (b.block !== skip) acc = f(acc + b.contribution);
      expect(locateDeviation(real, acc, 0)).toEqual({ kind: 'dropped', block: skip });
    }
  });
  it('honours the tolerance, and names the closest running sum otherwise', () => {
    expect(locateDeviation(p, 27.0001, 1e-3)).toEqual({ kind: 'dropped', block: 2 });
    expect(locateDeviation(p, 31.0001, 1e-3)).toEqual({ kind: 'none' });
    const d = locateDeviation(p, 14);
    expect(d).toMatchObject({ kind: 'unexplained', block: 3 });
    expect(deviationText(d)).toContain('k-block 3');
  });
});

describe('gateTolerance', () => {
  it('is 0 for a bit-exact gate and scales rel-to-max by the largest oracle value', () => {
    expect(gateTolerance({ kind: 'bit-exact' }, 100)).toBe(0);
    expect(gateTolerance({ kind: 'rel-to-max', tol: 1e-3 }, 250)).toBe(0.25);
  });
});
