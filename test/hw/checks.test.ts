// The hardware tier's declarations, checked without a GPU (fast, CI): every family declares conformance
// shapes; each shape builds on every arm x choice on the adapters the tier runs on (the H200 as
// FINDINGS.md describes it, and SwiftShader); together they hold a multi-workgroup grid and, where the
// kernel takes tails, a tail. The enumeration is generic (a new choice control multiplies the rows), and
// the summary renders failures and reasons.
import { describe, expect, it } from 'vitest';
import { KERNELS } from '../../src/kernels';
import { checkApplies, type KernelFamily } from '../../src/kernels/family';
import type { AdapterCaps } from '../../src/kernels/gpu/caps';
import {
  fakeCaps,
  H200_F16_CONFIGS,
  H200_INT8_CONFIGS,
  SWIFTSHADER_CAPS,
} from '../../src/kernels/gpu/testCaps';
import { renderHardware } from './render';
import { checkConfig, checksOf, choiceCombos, tierTotals, type TierRow, type TierSummary } from './tier';

const H200_CAPS = fakeCaps(
  { vendor: 'nvidia', description: 'NVIDIA H200 (as FINDINGS.md lists it)', shaderF16: true },
  [...H200_INT8_CONFIGS, ...H200_F16_CONFIGS],
);
const ADAPTERS: [string, AdapterCaps][] = [
  ['H200', H200_CAPS],
  ['SwiftShader', SWIFTSHADER_CAPS],
];

/** Build every check of a family on every offered arm x choice; returns what was built. */
function buildAll(f: KernelFamily, caps: AdapterCaps) {
  const built = [];
  for (const decl of f.arms)
    for (const choice of choiceCombos(f))
      for (const check of checksOf(f).filter((c) => checkApplies(c, choice))) {
        const config = checkConfig(f, check, choice, decl.arm, caps);
        if (decl.unavailable(caps, config.params)) continue;
        const label = `${f.id}/${decl.arm}/${Object.values(choice).join('/')} ${check.label}`;
        expect(f.validate(config, caps), label).toEqual([]);
        const b = f.build(config, caps);
        const main = b.plan.passes[b.plan.mainPass]!;
        const t = b.facts.outputTile;
        built.push({
          label,
          workgroups: main.workgroups[0] * main.workgroups[1] * main.workgroups[2],
          tail: !!t && (b.facts.rows % t.rows !== 0 || b.facts.cols % t.cols !== 0),
        });
      }
  return built;
}

/** Whether the family accepts a shape with a partial output tile: one shape param of a check, plus one. */
function takesTails(f: KernelFamily, caps: AdapterCaps): boolean {
  const arm = f.arms[0]!.arm;
  return checksOf(f).some((check) =>
    f.controls
      .filter((c) => c.kind === 'int' && c.group === 'shape')
      .some((c) => {
        const base = checkConfig(f, check, choiceCombos(f)[0]!, arm, caps);
        const v = base.params[c.key];
        if (typeof v !== 'number') return false;
        const config = { ...base, params: { ...base.params, [c.key]: v + 1 } };
        if (f.validate(config, caps).length) return false;
        const b = f.build(config, caps);
        const t = b.facts.outputTile;
        return !!t && (b.facts.rows % t.rows !== 0 || b.facts.cols % t.cols !== 0);
      }),
  );
}

describe('hardware tier declarations', () => {
  it('every family declares conformance shapes', () => {
    expect(KERNELS.families.filter((f) => !f.checks?.length).map((f) => f.id)).toEqual([]);
  });

  for (const f of KERNELS.families)
    for (const [name, caps] of ADAPTERS)
      it(`${f.id}: every check builds on every arm x choice ${name} offers; a grid and a tail where it has them`, () => {
        const built = buildAll(f, caps);
        expect(built.length).toBeGreaterThan(0);
        if (f.controls.some((c) => c.kind === 'int' && c.group === 'shape'))
          expect(
            built.some((b) => b.workgroups > 1),
            'a multi-workgroup grid',
          ).toBe(true);
        if (takesTails(f, caps))
          expect(
            built.some((b) => b.tail),
            'a partial output tile',
          ).toBe(true);
      });

  it("iterates every kernel-variant choice control, their product, generically; the problem's own choices not", () => {
    const options = (values: string[]) => values.map((value) => ({ value, label: value }));
    const fake = {
      controls: [
        { kind: 'choice', key: 'staging', label: 's', group: 'tile', options: options(['a', 'b', 'c']) },
        { kind: 'int', key: 'm', label: 'm', group: 'shape', min: 1, max: 9, step: () => 1 },
        { kind: 'choice', key: 'route', label: 'r', group: 'tile', options: options(['x', 'y']) },
        { kind: 'choice', key: 'routing', label: 'g', group: 'route', options: options(['u', 'v']) },
      ],
    } as const satisfies Pick<KernelFamily, 'controls'>;
    expect(choiceCombos(fake)).toEqual([
      { staging: 'a', route: 'x' },
      { staging: 'a', route: 'y' },
      { staging: 'b', route: 'x' },
      { staging: 'b', route: 'y' },
      { staging: 'c', route: 'x' },
      { staging: 'c', route: 'y' },
    ]);
    expect(choiceCombos({ controls: [] })).toEqual([{}]);
  });

  it('the summary renders passes, failures with their error, and reasons an arm is not offered', () => {
    const rows: TierRow[] = [
      {
        family: 'fam',
        arm: 'scalar',
        armLabel: 'scalar',
        choice: { staging: 'a' },
        status: 'fail',
        checks: [
          {
            label: 'tails',
            params: { m: 17 },
            status: 'fail',
            rows: 17,
            cols: 50,
            workgroups: 1,
            tail: true,
            oracle: {
              gate: 'bit-exact',
              pass: false,
              relToMax: 3e-7,
              maxAbsDelta: 1e-6,
              mismatches: 12,
              firstBad: [[16, 3]],
            },
            ms: 5,
          },
        ],
        ms: 5,
      },
      {
        family: 'fam',
        arm: 'subgroup-matrix',
        armLabel: 'matrix',
        choice: { staging: 'a' },
        status: 'not-offered',
        reason: 'no matrices here',
        checks: [
          { label: 'tails', params: { m: 17 }, status: 'not-offered', reason: 'no matrices here', ms: 0 },
        ],
        ms: 0,
      },
    ];
    const summary: TierSummary = {
      tool: 'mmq-hw-tier',
      version: 1,
      date: '2026-12-04T00:00:00Z',
      commit: 'abc1234',
      adapter: { description: 'Test GPU', architecture: 'test' },
      features: [],
      dawnFlags: [],
      node: 'v20',
      undeclared: [],
      rows,
      totals: tierTotals(rows),
      wallMs: 1234,
    };
    expect(summary.totals).toEqual({ rows: 2, pass: 0, fail: 1, notOffered: 1, checks: 1 });
    const md = renderHardware([summary], [['m1', summary]]);
    expect(md).toContain('| fam | scalar | a | **FAIL** (0/1 pass) |');
    expect(md).toContain('| fam | subgroup-matrix | a | not offered |');
    expect(md).toContain('Not offered (1 rows): no matrices here');
    expect(md).toMatch(/oracle bit-exact: FAIL, rel_to_max 3\.00e-7, 12\/850 off \(first at \[16,3\]\)/);
    expect(md).toMatch(/\| m1 \| Test GPU \| killed \| 1 of 1 run \|/);
  });
});
