import { describe, expect, it } from 'vitest';
import { CATALOG } from '../catalog';
import { ARM_KNOB, controlProblems, type ControlDecl, type FamilyCatalog, type RunConfig } from '../family';
import { DP4A_ARM, SCALAR_ARM } from '../arms';
import { fakeCaps, H200_F16_CONFIGS, H200_INT8_CONFIGS, SWIFTSHADER_CAPS } from '../gpu/testCaps';
import { knobSearch } from './knobs';

const controls: ControlDecl[] = [
  { kind: 'int', key: 'k', label: 'k', group: 'shape', min: 1, max: 4096, step: () => 1 },
  {
    kind: 'choice',
    key: 'mode',
    label: 'mode',
    group: 'tile',
    optional: true,
    options: [
      { value: 'plain', label: 'plain' },
      { value: 'split', label: 'split' },
    ],
    tune: { name: 'MODE' },
  },
  {
    kind: 'int',
    key: 'parts',
    label: 'parts',
    group: 'tile',
    min: 1,
    max: 8,
    step: () => 1,
    visible: (p) => p.mode === 'split',
    tune: { values: [1, 2, 4] },
  },
  {
    kind: 'int',
    key: 'width',
    label: 'width',
    group: 'tile',
    min: 1,
    max: 64,
    step: () => 1,
    tune: { values: [8, 16, 32] },
  },
];

/** A family whose parts must divide k, searched as width x mode x arm x parts, at most 64 lanes. */
const toy: FamilyCatalog = {
  id: 'toy',
  title: 'toy',
  summary: '',
  reference: '-',
  arithmetic: 'int8',
  arms: [SCALAR_ARM, DP4A_ARM],
  controls,
  defaults: { k: 12, mode: 'plain', parts: 1, width: 8 },
  small: {},
  validate: (c) => [
    ...controlProblems(controls, c.params),
    ...(Number(c.params.k) % Number(c.params.parts) ? ['parts must divide k'] : []),
  ],
  tuning: {
    op: 'toy',
    label: 'toy',
    knobs: ['width', 'mode', ARM_KNOB, 'parts'],
    constraints: [{ label: 'width x parts <= 64', holds: (p) => Number(p.width) * Number(p.parts) <= 64 }],
  },
};
const base: RunConfig = {
  kernel: 'toy',
  arm: 'scalar',
  data: { source: 'random', seed: 0 },
  params: toy.defaults,
};

describe('knobSearch', () => {
  const s = knobSearch(toy, base, SWIFTSHADER_CAPS);

  it('makes the space from the declarations, in the declared order, the arm the fast ones here', () => {
    expect(s.space.params.map((p) => [p.name, p.values, p.absent])).toEqual([
      ['WIDTH', [8, 16, 32], undefined],
      ['MODE', [0, 1], 0],
      ['ARM', [0], undefined],
      ['PARTS', [1, 2, 4], undefined],
    ]);
    expect(s.arms).toEqual(['dp4a']);
  });

  it('keeps the configs the rules, the bounds and the hidden knobs allow', () => {
    const names = s.space.enumerate().map((c) => s.space.name(c));
    // plain: parts hidden, so 1; split: parts dividing 12, width x parts <= 64.
    expect(names).toEqual([
      'WIDTH=8,MODE=0,ARM=0,PARTS=1',
      'WIDTH=8,MODE=1,ARM=0,PARTS=1',
      'WIDTH=8,MODE=1,ARM=0,PARTS=2',
      'WIDTH=8,MODE=1,ARM=0,PARTS=4',
      'WIDTH=16,MODE=0,ARM=0,PARTS=1',
      'WIDTH=16,MODE=1,ARM=0,PARTS=1',
      'WIDTH=16,MODE=1,ARM=0,PARTS=2',
      'WIDTH=16,MODE=1,ARM=0,PARTS=4',
      'WIDTH=32,MODE=0,ARM=0,PARTS=1',
      'WIDTH=32,MODE=1,ARM=0,PARTS=1',
      'WIDTH=32,MODE=1,ARM=0,PARTS=2',
    ]);
    expect(
      knobSearch(toy, { ...base, params: { ...base.params, k: 6 } }, SWIFTSHADER_CAPS).space.enumerate(),
    ).toHaveLength(9);
  });

  it('applies every knob and reads a config back, a hidden knob at its resting value', () => {
    const cfg = s.at({ width: 16, mode: 'split', parts: 4 })!;
    expect(s.apply(cfg)).toEqual({
      ...base,
      arm: 'dp4a',
      params: { k: 12, mode: 'split', parts: 4, width: 16 },
    });
    for (const c of s.space.enumerate()) expect(s.choiceOf(s.apply(c))).toEqual(c);
    const plain = { ...base, arm: 'dp4a' as const, params: { k: 12, width: 8, parts: 4 } };
    // No mode: the default's (a config stored before the control existed); parts hidden on 'plain'.
    expect(s.space.name(s.choiceOf(plain)!)).toBe('WIDTH=8,MODE=0,ARM=0,PARTS=1');
    expect(s.space.parse('WIDTH=8,ARM=0,PARTS=1')).toEqual([8, 0, 0, 1]);
    expect(s.choiceOf({ ...plain, arm: 'scalar' })).toBeUndefined();
    expect(s.choiceOf({ ...plain, params: { ...plain.params, width: 12 } })).toBeUndefined();
    expect(
      s.choiceOf({ ...plain, params: { ...plain.params, mode: 'split', parts: 4, width: 32 } }),
    ).toBeUndefined();
  });

  it('refuses declarations that disagree', () => {
    const knobs = ['width', ARM_KNOB, 'parts'];
    expect(() => knobSearch({ ...toy, tuning: { ...toy.tuning!, knobs } }, base, SWIFTSHADER_CAPS)).toThrow(
      /must list exactly the controls that declare tune/,
    );
  });
});

describe("the families' declared spaces", () => {
  const h200 = fakeCaps({ shaderF16: true }, [...H200_INT8_CONFIGS, ...H200_F16_CONFIGS]);
  for (const f of CATALOG.families.filter((c) => c.tuning))
    it(`${f.id}: every config applies to one the family accepts, and reads back`, () => {
      for (const caps of [SWIFTSHADER_CAPS, h200]) {
        const b: RunConfig = {
          kernel: f.id,
          arm: 'scalar',
          data: { source: 'random', seed: 0 },
          params: f.defaults,
        };
        const s = knobSearch(f, b, caps);
        const all = s.space.enumerate();
        expect(all.length).toBeGreaterThan(1);
        for (const c of all) {
          const config = s.apply(c);
          expect(f.validate(config, caps).filter((p) => !/accumulators per lane/.test(p))).toEqual([]);
          expect(s.choiceOf(config)).toEqual(c);
        }
      }
    });

  it('MoE: an int8 config rests on the f16 knobs, an f16 one on the row tiles; each on its route arms', () => {
    const moe = CATALOG.get('moe-q4k-id');
    const b: RunConfig = {
      kernel: moe.id,
      arm: 'scalar',
      data: { source: 'random', seed: 0 },
      params: moe.defaults,
    };
    const s = knobSearch(moe, b, SWIFTSHADER_CAPS);
    expect(s.arms).toEqual(['scalar', 'dp4a']);
    const routes = new Set(
      s.space.enumerate().map((c) => {
        const { arm, params } = s.apply(c);
        if (params.route === 'int8')
          expect([params.wm, params.wn, params.rm, params.rn, params.staging]).toEqual([
            1,
            1,
            1,
            1,
            'prepass',
          ]);
        else expect(params.ytiles).toBe(1);
        return `${String(params.route)}/${arm}`;
      }),
    );
    expect([...routes].sort()).toEqual(['f16/scalar', 'int8/dp4a']);
  });
});
