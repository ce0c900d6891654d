// Child process of test/spirv.ts: opens Dawn with `dump_shaders` (plus `disable_symbol_renaming`, so the
// SPIR-V keeps the WGSL's names) and prepares each job's plan through the runner, the only code that
// creates pipelines. Dawn hands every dumped shader to the device's logging callback, which the `webgpu`
// package prints with C stdio to fd 1 ("info:\n// Dumped WGSL: ..." at createShaderModule, then
// "info:\n/* Dumped SPIRV disassembly */ ..." at pipeline creation); nothing of it reaches JavaScript, so
// the parent reads this process's stdout. Jobs are prepared one after the other, so each SPIR-V dump
// follows the WGSL dump of its own module. The manifest (every pass's label and exact WGSL) goes to the
// file named by argv[3], never to stdout, whose C-level buffer would not interleave with console.log.
// Usage: node --import tsx test/spirvDumpChild.ts JOBS.json MANIFEST.json
import { readFileSync, writeFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import type { FamilyParams } from '../src/kernels/family';
import { resolveConfig } from '../src/kernels/arms';
import { readAdapterCaps, wantedFeatures, type Arm } from '../src/kernels/gpu/caps';
import { preparePlan } from '../src/kernels/gpu/runner';
import { KERNELS } from '../src/kernels';
import type { SpirvJob, SpirvManifestEntry } from './spirv';

const [jobsPath, manifestPath] = process.argv.slice(2);
if (!jobsPath || !manifestPath) throw new Error('usage: spirvDumpChild.ts JOBS.json MANIFEST.json');
const jobs = JSON.parse(readFileSync(jobsPath, 'utf8')) as SpirvJob[];

process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
Object.assign(globalThis, globals);
// disable_workgroup_init: the zero-fill loop Dawn adds is irrelevant here and costs compile time.
const gpu = create(['enable-dawn-features=dump_shaders,disable_symbol_renaming,disable_workgroup_init']);
const adapter = await gpu.requestAdapter();
if (!adapter) throw new Error('no WebGPU adapter (VK_ICD_FILENAMES?)');
const caps = readAdapterCaps(adapter, gpu.wgslLanguageFeatures);
const device = await adapter.requestDevice({ requiredFeatures: wantedFeatures(caps) });
const manifest: SpirvManifestEntry[] = [];
for (const job of jobs) {
  const family = KERNELS.get(job.family);
  const config = resolveConfig(
    {
      kernel: family.id,
      arm: job.arm as Arm,
      data: { source: 'reference', seed: 0 },
      params: { ...family.defaults, ...job.params } as FamilyParams,
    },
    caps,
  );
  const { plan } = family.build(config, caps);
  const wgslOverride: Record<number, string> = {};
  plan.passes.forEach((pass, i) => {
    let code = pass.wgsl;
    for (const [from, to] of job.replace ?? []) code = code.split(from).join(to);
    if (code !== pass.wgsl) wgslOverride[i] = code;
    manifest.push({ job: job.id, pass: i, label: pass.label, wgsl: code });
  });
  const prepared = await preparePlan(device, plan, { wgslOverride });
  prepared.destroy();
}
writeFileSync(manifestPath, JSON.stringify(manifest));
device.destroy();
