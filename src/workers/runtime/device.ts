// Opening the one GPUDevice the worker owns: the adapter's own limits and every feature an arm may need,
// so the kernels' static checks (workgroup storage, invocations) and the device agree.
import {
  planeWidth,
  readAdapterCaps,
  wantedFeatures,
  wantedLimits,
  type AdapterCaps,
} from '../../kernels/gpu/caps';
import { deviceId } from '../../kernels/gpu/caps';

export interface OpenedDevice {
  device: GPUDevice;
  caps: AdapterCaps;
  deviceId: string;
  /** The adapter's plane (subgroup) width. */
  plane: number;
}

/**
 * Request an adapter and a device from a WebGPU entry point (`navigator.gpu` in a browser or worker,
 * Dawn's `create([])` in Node).
 * @example const { device, caps } = await openDevice(navigator.gpu);
 */
export async function openDevice(gpu: GPU, options: GPURequestAdapterOptions = {}): Promise<OpenedDevice> {
  const adapter = await gpu.requestAdapter(options);
  if (!adapter) {
    throw new Error(
      'WebGPU: no adapter. In Chrome enable WebGPU (chrome://flags, --enable-unsafe-webgpu on Linux).',
    );
  }
  const caps = readAdapterCaps(adapter, gpu.wgslLanguageFeatures);
  const device = await adapter.requestDevice({
    requiredFeatures: wantedFeatures(caps),
    requiredLimits: wantedLimits(caps),
  });
  return { device, caps, deviceId: deviceId(caps), plane: planeWidth(caps) };
}
