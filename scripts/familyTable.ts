// The README's family table, generated from the families' own declarations (scripts/docs.ts writes it):
// id, the reference kernel it twins, its summary, its arms, and the gate its output is held to against the
// oracle -- read from the problem each arm (and each kernel-variant choice) builds, so the table cannot
// state a gate the code does not apply.
import { gateText } from '../src/kernels/compare';
import type { KernelFamily } from '../src/kernels/family';
import { resolveConfig } from '../src/kernels/arms';
import type { AdapterCaps } from '../src/kernels/gpu/caps';
import { fakeCaps, H200_F16_CONFIGS, H200_INT8_CONFIGS } from '../src/kernels/gpu/testCaps';
import { choiceCombos } from '../test/hw/tier';

/** An adapter that offers every arm (f16, dot4I8Packed, int8 and f16 subgroup matrices): gates only. */
export const EVERY_ARM_CAPS: AdapterCaps = fakeCaps(
  { shaderF16: true, features: ['subgroups', 'shader-f16', 'chromium-experimental-subgroup-matrix'] },
  [...H200_INT8_CONFIGS, ...H200_F16_CONFIGS],
);

/**
 * A gate as the table writes it: the oracle gate, and the full-precision gate where the family has one;
 * undefined where the family refuses the arm with this choice (MoE's f16 route has no dp4a arm).
 */
function gateCell(
  f: KernelFamily,
  arm: string,
  choice: Record<string, string>,
  caps: AdapterCaps,
): string | undefined {
  const config = resolveConfig(
    {
      kernel: f.id,
      arm: arm as never,
      data: { source: 'reference', seed: 0 },
      params: { ...f.defaults, ...f.small, ...choice },
    },
    caps,
  );
  if (f.validate(config, caps).length) return undefined;
  const { facts } = f.build(config, caps);
  const full = facts.fullPrecisionGate ? `, ${gateText(facts.fullPrecisionGate)} vs full precision` : '';
  return `${gateText(facts.gate)}${full}`;
}

/**
 * Each arm's gate(s) for a family, e.g. 'bit-exact' when every arm and choice agrees, else per arm
 * ('scalar: rel_to_max < 1e-5; subgroup-matrix: ...') and, where a choice changes it, per choice value.
 * @example familyGates(KERNELS.get('hello-wmma'), EVERY_ARM_CAPS) // 'bit-exact'
 */
export function familyGates(f: KernelFamily, caps: AdapterCaps = EVERY_ARM_CAPS): string {
  const perArm = f.arms.map((decl) => {
    const byChoice = choiceCombos(f).flatMap((choice) => {
      const gate = gateCell(f, decl.arm, choice, caps);
      return gate ? [{ choice, gate }] : [];
    });
    const gates = [...new Set(byChoice.map((c) => c.gate))];
    // The one choice control that decides the gate (MoE's route), named with its values.
    const key = Object.keys(byChoice[0]?.choice ?? {}).find((k) =>
      byChoice.every((c) => byChoice.every((d) => d.choice[k] !== c.choice[k] || d.gate === c.gate)),
    );
    const label = (g: string) =>
      [
        ...new Set(
          byChoice
            .filter((c) => c.gate === g)
            .map((c) => (key ? `${key} ${c.choice[key]}` : Object.values(c.choice).join(' '))),
        ),
      ].join(', ');
    return {
      arm: decl.arm,
      text: gates.length === 1 ? gates[0]! : gates.map((g) => `${g} (${label(g)})`).join('; '),
    };
  });
  const distinct = [...new Set(perArm.map((a) => a.text))];
  return distinct.length === 1 ? distinct[0]! : perArm.map((a) => `${a.arm}: ${a.text}`).join('; ');
}

/**
 * The markdown table of every family: id, reference kernel, summary, arms, gate vs oracle.
 * @example familyTable(KERNELS.families).split('\n')[0] // '| family id | twin of | what | arms | gate vs oracle |'
 */
export function familyTable(families: readonly KernelFamily[], caps: AdapterCaps = EVERY_ARM_CAPS): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    '| family id | twin of | what | arms | gate vs oracle |',
    '| --- | --- | --- | --- | --- |',
    ...families.map(
      (f) =>
        `| \`${f.id}\` | \`${f.reference}\` | ${cell(f.summary)} | ${f.arms.map((a) => a.arm).join(', ')} | ${cell(familyGates(f, caps))} |`,
    ),
  ].join('\n');
}
