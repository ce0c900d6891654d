// `mmq model` for the GPU kit: bench/build-carry.sh bundles this file as .gpu/bench/model.mjs and
// bench/h200.sh's `model` step runs it with the kit's node. The kit has no tsx to start the GPU child
// process (cli/gpuChild.ts), so the worker core runs in this process; Dawn's own lines then share its
// stderr (the step's log), which is all the kit needs.
//   node model.mjs --preset llama-3.1-8b --m 512 --decode --json model.json --yes
import { KERNELS } from '../src/kernels';
import { safeText } from '../src/kernels/quant';
import { inProcessGpu } from './gpuInProcess';
import { dispatch } from './main';
import { modelCommand } from './model';

process.exitCode = await dispatch(
  ['model', ...process.argv.slice(2)],
  {
    stdout: (t) => process.stdout.write(safeText(t, { keepNewlines: true })),
    stderr: (t) => process.stderr.write(safeText(t, { keepNewlines: true })),
  },
  [modelCommand((io, cmd) => inProcessGpu(KERNELS, io, cmd))],
);
