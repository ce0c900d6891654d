// A short glossary of the words the playground uses, with a link to the README (deployed next to the app).
import { act, setGlossary, useApp } from '../store';

const TERMS: readonly [string, string][] = [
  [
    'kernel family',
    'One kernel of the reference module and its WGSL twin, with the knobs it declares (shape, tile, staging...).',
  ],
  [
    'reference generator',
    "The reference module's own deterministic data generators (xorshift streams), reproduced bit for bit: data source 'reference'.",
  ],
  [
    'data seed',
    'The number that picks a data stream. 0 is the reference generator’s own constant; for a model tensor it draws the activation.',
  ],
  [
    'oracle',
    'The exact CPU computation a GPU result is checked against (the f16 family’s oracle emulates its f16 rounding).',
  ],
  [
    'gate',
    'How close the GPU result must be: bit-exact for the int8 kernels, or rel_to_max below a tolerance.',
  ],
  [
    'rel_to_max',
    'max |GPU − oracle| / max |oracle|: an error relative to the output’s scale, since int8 sums often cancel to near zero.',
  ],
  [
    'plane',
    'A group of lanes that run in lockstep (a subgroup, warp or wave). Kernels partition their tiles by the plane width: 4 on SwiftShader, 32 on NVIDIA.',
  ],
  [
    'lane',
    'One invocation of a plane; the ownership view colours each output element by the plane and lane that stored it.',
  ],
  [
    'arm',
    'One implementation of a kernel’s inner products: scalar (portable, the reference), dp4a (packed int8 dot products) or subgroup matrix (hardware matrix units).',
  ],
  [
    'island',
    'The reference module’s word for the hardware-specific part of a kernel that an arm swaps (the matrix multiply-accumulate).',
  ],
  [
    'staging',
    'How operands reach the matrix work: decoded in the GEMM’s tile (one pass), or by pre-passes into f16 tiles first (a split plan of several passes).',
  ],
  [
    'pass',
    'One dispatch of a plan. A split plan has pre-passes and a main pass; only the main pass is edited.',
  ],
  [
    'tile',
    'The output block one workgroup computes: wm × wn planes, each holding rm × rn 16×16 subtiles (BM = wm·rm·16, BN = wn·rn·16).',
  ],
  [
    'batch',
    'Runs timed back to back between two timestamps; its length is calibrated to a target duration and the fastest batch counts.',
  ],
  [
    'coarse',
    'A time within 10× of the timer’s resolution (browsers round GPU timestamps to 100 µs): no finer than one step.',
  ],
  [
    'hunt',
    'The tuner’s genetic search over a family’s tiles (and staging), each config gated against the oracle and timed as its whole plan.',
  ],
];

export function Glossary() {
  const open = useApp((s) => s.glossaryOpen);
  if (!open) return null;
  return (
    <div className="overlay" role="presentation" onClick={() => act(setGlossary, false)}>
      <div
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-label="Glossary"
        data-testid="glossary"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => e.key === 'Escape' && act(setGlossary, false)}
      >
        <header>
          <h2>Glossary</h2>
          <button type="button" onClick={() => act(setGlossary, false)} autoFocus>
            Close
          </button>
        </header>
        <dl>
          {TERMS.map(([term, text]) => (
            <div key={term}>
              <dt>{term}</dt>
              <dd>{text}</dd>
            </div>
          ))}
        </dl>
        <p className="small">
          More in the{' '}
          <a href="./README.md" target="_blank" rel="noreferrer" data-testid="readme-link">
            README
          </a>{' '}
          (what you can do, the kernel table, how the timing works).
        </p>
      </div>
    </div>
  );
}
