// The shape sweep's pure parts: the values of a range, the plan that refuses what the family refuses (with
// its reason, before anything runs), and the record filled point by point.
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../kernels/catalog';
import type { RunConfig } from '../../kernels/family';
import {
  endSweep,
  INITIAL_SWEEP,
  newSweep,
  sweepAxes,
  sweepPlan,
  sweepValues,
  SWEEP_MAX_POINTS,
  withPoint,
} from './sweep';

const form = INITIAL_SWEEP.form;
const naive = CATALOG.get('mmq-q8-naive');
const base: RunConfig = {
  kernel: naive.id,
  arm: 'scalar',
  data: { source: 'reference', seed: 0 },
  params: { ...naive.defaults, m: 32, n: 32, k: 64 },
};

describe('sweep values', () => {
  it('powers of two within the range, 1..4096 by default', () => {
    expect(sweepValues(form)).toEqual({ values: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096] });
    expect(sweepValues({ ...form, from: 3, to: 20 })).toEqual({ values: [4, 8, 16] });
  });
  it('a custom list, ascending and once each', () => {
    expect(sweepValues({ ...form, mode: 'list', list: '100, 1 16  16,4096' })).toEqual({
      values: [1, 16, 100, 4096],
    });
  });
  it('says what is wrong with a range or a list', () => {
    expect(sweepValues({ ...form, from: 0 })).toHaveProperty('error');
    expect(sweepValues({ ...form, from: 5, to: 7 })).toEqual({ error: 'no power of two lies in 5..7' });
    expect(sweepValues({ ...form, mode: 'list', list: '4, -2' })).toEqual({
      error: "'-2' is not a whole number >= 1",
    });
    expect(sweepValues({ ...form, mode: 'list', list: '2.5' })).toEqual({
      error: "'2.5' is not a whole number >= 1",
    });
    expect(sweepValues({ ...form, mode: 'list', list: ' ' })).toEqual({ error: 'list at least one value' });
    const many = Array.from({ length: SWEEP_MAX_POINTS + 1 }, (_, i) => i + 1).join(',');
    expect(sweepValues({ ...form, mode: 'list', list: many })).toHaveProperty('error');
  });
});

describe('sweep plan and record', () => {
  it('offers the shape params of a family', () => {
    expect(sweepAxes(naive)).toEqual(['m', 'n', 'k']);
  });
  it("refuses the points that break the kernel's preconditions, in the family's words", () => {
    const plan = sweepPlan(naive, base, 'm', [8, 16, 48]);
    expect(plan.map((p) => p.config.params.m)).toEqual([8, 16, 48]);
    expect(plan[0]!.problems.join()).toMatch(/^m = 8 is not a multiple of 16/);
    expect(plan[1]!.problems).toEqual([]);
    const k = sweepPlan(naive, base, 'k', [48]);
    expect(k[0]!.problems.join()).toContain('Q8_0 block');
  });
  it('records refused points with their reason and ends cancelled points', () => {
    const plan = sweepPlan(naive, base, 'm', [8, 16, 32]);
    let r = newSweep('dev', base, 'm', plan, '2026-01-01T00:00:00.000Z');
    expect(r.key).toBe('dev|mmq-q8-naive|m|2026-01-01T00:00:00.000Z');
    expect(r.points.map((p) => p.status)).toEqual(['refused', 'pending', 'pending']);
    r = withPoint(r, 1, { value: 16, status: 'done', ms: 1, medianMs: 1.1, batches: 6, pass: true });
    const ended = endSweep(r, 'cancelled');
    expect(ended.status).toBe('cancelled');
    expect(ended.points.map((p) => p.status)).toEqual(['refused', 'done', 'cancelled']);
  });
});
