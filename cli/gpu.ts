// Dawn's WebGPU for mmq (the child process of cli/gpuProcess.ts opens it): this machine's GPU, else
// SwiftShader, said aloud.
import { existsSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { FULL_DAWN_FLAGS, orSwiftShader, SWIFTSHADER_ICD } from '../bench/dawn';
import { CliError, EXIT } from './args';

// The Dawn entry points stay reachable while their device lives (bench/dawn.ts says why).
const liveGpus: GPU[] = [];
const keep = (gpu: GPU) => (liveGpus.push(gpu), gpu);

/**
 * Dawn with every accelerated arm exposed, on this machine's GPU, else on SwiftShader (`note` says so).
 * @example const gpu = await openGpu((line) => notes.push(line));
 */
export function openGpu(note: (text: string) => void): Promise<GPU> {
  Object.assign(globalThis, globals);
  const open = async () => {
    const gpu = create([...FULL_DAWN_FLAGS]);
    if (!(await gpu.requestAdapter({ powerPreference: 'high-performance' })))
      throw new CliError(`no WebGPU adapter. ${noAdapterHint()}`, EXIT.machine);
    return keep(gpu);
  };
  return orSwiftShader(open, (icd) =>
    note(`no GPU adapter; running on SwiftShader (${icd}), timings are not a GPU's`),
  );
}

/**
 * Why Dawn found no adapter, in words: the Vulkan loader's own "Found no drivers!" warnings say what
 * failed, not what to do.
 */
function noAdapterHint(): string {
  const named = (process.env.VK_ICD_FILENAMES ?? process.env.VK_DRIVER_FILES ?? '')
    .split(':')
    .filter(Boolean);
  const missing = named.filter((p) => !existsSync(p));
  const fix = `set VK_ICD_FILENAMES to a Vulkan driver's ICD file (without a GPU, SwiftShader's: ${SWIFTSHADER_ICD})`;
  if (missing.length) return `VK_ICD_FILENAMES names ${missing.join(', ')}, which does not exist: ${fix}`;
  if (named.length) return `the Vulkan driver ${named.join(', ')} offers no WebGPU adapter: ${fix}`;
  return `The Vulkan loader found no driver (see the webgpu line above): install one, or ${fix}`;
}
