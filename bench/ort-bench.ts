// ONNX Runtime's WebGPU MatMulNBits alone (bench/ort.ts), until the bench's runner calls benchOrt itself:
//
//   npx tsx bench/ort-bench.ts [--shapes m,n,k;m,n,k | --shapes m,n,k] [--quick] [--json out.json]
//                              [--reps N] [--target-ms T] [--variants f16,f32-al4,f32] [--zero-points]
//                              [--no-profile] [--with-dawn]
//                              [--corrupt-scale] [--cpu-check] [--log-level verbose|info|warning|error]
//
// --with-dawn: open the bench's own Dawn device first and keep it open (as `npm run bench` will), so a run
//              shows that the two Dawns (the webgpu package's and ORT's) live in one process.
// --corrupt-scale: double one scale of bank 0 in the reference only: every row must then fail its check.
// --cpu-check: first run the same models and checks on ORT's CPU EP (ortCpuCheck): the model bytes, the f16
//              conversions and the reference, where the adapter cannot run a variant (no shader-f16).
// On SwiftShader: VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json npx tsx bench/ort-bench.ts --quick
import { writeFileSync } from 'node:fs';
import { eachFlag } from './args';
import { dawnFlags, openBenchGpu, type BenchGpu } from './dawn';
import type { Shape } from './result';
import {
  benchOrt,
  loadOrt,
  ORT_VARIANTS,
  ortCandidates,
  ortCpuCheck,
  ortRowLine,
  ortVariants,
  type BenchOrtOptions,
} from './ort';
import { ortRatioLines, ortRatios, peerTable } from './peers';

function parseArgs(argv: string[]) {
  const opts: BenchOrtOptions & { shapes: Shape[]; json?: string; withDawn?: boolean; cpuCheck?: boolean } = {
    shapes: [],
  };
  eachFlag(argv, (a, next) => {
    if (a === '--quick') opts.quick = true;
    else if (a === '--shapes')
      // "m,n,k;m,n,k", or the "32,64,256" for one shape.
      opts.shapes.push(
        ...next()
          .split(';')
          .map((s) => {
            const [m, n, k] = s.split(',').map(Number);
            if (!m || !n || !k) throw new Error(`--shapes: bad shape "${s}" (want m,n,k)`);
            return { m, n, k };
          }),
      );
    else if (a === '--json') opts.json = next();
    else if (a === '--reps') opts.reps = Number(next());
    else if (a === '--target-ms') opts.targetMs = Number(next());
    else if (a === '--variants') opts.variants = ortVariants(next());
    else if (a === '--zero-points') opts.zeroPoints = true;
    else if (a === '--no-profile') opts.profile = false;
    else if (a === '--with-dawn') opts.withDawn = true;
    else if (a === '--cpu-check') opts.cpuCheck = true;
    else if (a === '--corrupt-scale')
      opts.corruptReference = (w) => {
        w.scales[0] = 2 * w.scales[0]!;
      };
    else if (a === '--log-level') opts.logLevel = next() as NonNullable<BenchOrtOptions['logLevel']>;
    else throw new Error(`unknown argument ${a}`);
  });
  if (!opts.shapes.length)
    opts.shapes = opts.quick
      ? [{ m: 32, n: 64, k: 256 }]
      : [
          { m: 32, n: 4096, k: 4096 },
          { m: 2048, n: 4096, k: 4096 },
        ];
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let gpu: BenchGpu | undefined;
  if (opts.withDawn) {
    gpu = await openBenchGpu(dawnFlags());
    console.log(`[ort-bench] the bench's Dawn is open too: ${gpu.caps.vendor} ${gpu.caps.description}`);
  }
  let cpuFailed = 0;
  if (opts.cpuCheck) {
    const loaded = loadOrt(ortCandidates(process.env, process.cwd()));
    if ('note' in loaded) console.log(`[ort] ${loaded.note}`);
    else
      for (const shape of opts.shapes)
        for (const v of opts.variants ?? ORT_VARIANTS) {
          const c = await ortCpuCheck(loaded.ort, shape, v, opts);
          if (!c.pass) cpuFailed++;
          console.log(
            `[ort cpu-check] ${v.arm} ${shape.m}x${shape.n}x${shape.k}: ${c.pass ? 'ok' : 'WRONG'} rel_to_max ${c.relToMax.toExponential(2)} (tol ${v.tol}, ${c.samples} samples)`,
          );
        }
  }
  const r = await benchOrt(opts.shapes, { ...opts, log: (s) => console.log(s) });
  if (r.note) console.log(`[ort] ${r.note}`);
  console.log('');
  console.log(
    'ONNX Runtime WebGPU MatMulNBits (bits 4, block 32): ms = wall per session.run, queued back to back',
  );
  for (const row of r.rows) console.log(ortRowLine(row));
  for (const line of [...peerTable(r.rows), ...ortRatioLines(ortRatios(r.rows))]) console.log(line);
  const failed = r.rows.filter((x) => x.error || (x.correctness && !x.correctness.pass));
  if (failed.length) console.log(`${failed.length} ORT row(s) FAILED (error or wrong result)`);
  if (opts.json) writeFileSync(opts.json, JSON.stringify(r, null, 1));
  gpu?.device.destroy();
  return failed.length || cpuFailed ? 1 : 0;
}

main().then(
  (rc) => process.exit(rc),
  (e: unknown) => {
    console.error('ort-bench failed:', e);
    process.exit(1);
  },
);
