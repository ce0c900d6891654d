// A short glossary of the words the playground uses, with a link to the README (deployed next to the app).
import { useEffect, useRef } from 'react';
import { act, setGlossary, useApp } from '../store';
import { dialogTabTarget } from './keys';

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

/** What can take focus inside the dialog, in tab order. */
const FOCUSABLE = 'button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])';

/**
 * The glossary as a modal dialog: focus moves into it when it opens, Tab and Shift+Tab cycle inside it,
 * Escape (or a click outside, or Close) closes it and returns focus to what had it before.
 */
export function Glossary() {
  const open = useApp((s) => s.glossaryOpen);
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
    dialog.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
    const onKey = (e: KeyboardEvent) => {
      const box = dialog.current;
      if (!box) return;
      if (e.key === 'Escape') {
        e.preventDefault();
        act(setGlossary, false);
        return;
      }
      if (e.key !== 'Tab') return;
      const items = [...box.querySelectorAll<HTMLElement>(FOCUSABLE)];
      const active = document.activeElement;
      const next =
        items[
          dialogTabTarget(
            items.findIndex((el) => el === active),
            items.length,
            e.shiftKey,
          )
        ];
      e.preventDefault();
      next?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      // Closed: focus goes back where it was (the Glossary button, usually).
      if (opener?.isConnected) opener.focus();
    };
  }, [open]);
  if (!open) return null;
  return (
    <div className="overlay" role="presentation" onClick={() => act(setGlossary, false)}>
      <div
        ref={dialog}
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-label="Glossary"
        data-testid="glossary"
        onClick={(e) => e.stopPropagation()}
      >
        <header>
          <h2>Glossary</h2>
          <button type="button" onClick={() => act(setGlossary, false)} data-testid="glossary-close">
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
