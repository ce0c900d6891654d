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

/** No adapter or device: WebGPU is unavailable here (reported as 'unsupported'). */
export class NoDeviceError extends Error {}

/** The worker's one device: opened on first use, and again on the next use after a loss. */
export interface DeviceKeeper {
  /** The open device, or one opened now (`onOpen` is told when a new one opens). Throws NoDeviceError. */
  ensure(onOpen: (d: OpenedDevice) => void): Promise<OpenedDevice>;
  /** The open device, if any. */
  live(): OpenedDevice | undefined;
}

/**
 * Keep the device of a WebGPU entry point (undefined where WebGPU is missing); `onLost` is told when the
 * live device is lost, after which the next ensure() opens a new one.
 * @example const gpu = keepDevice(navigator.gpu, {}, () => post({ type: 'device-lost', ... }));
 */
export function keepDevice(
  gpu: GPU | undefined,
  options: GPURequestAdapterOptions,
  onLost: (info: GPUDeviceLostInfo) => void,
): DeviceKeeper {
  let opened: Promise<OpenedDevice> | undefined;
  let live: OpenedDevice | undefined;
  return {
    ensure(onOpen) {
      if (!opened) {
        const p = (
          gpu
            ? openDevice(gpu, options)
            : Promise.reject(new Error('WebGPU is not available here (navigator.gpu is missing)'))
        ).catch((e: unknown) => {
          throw new NoDeviceError(e instanceof Error ? e.message : String(e));
        });
        opened = p;
        p.then(
          (d) => {
            live = d;
            void d.device.lost.then((info) => {
              if (live !== d) return;
              live = undefined;
              opened = undefined;
              onLost(info);
            });
            onOpen(d);
          },
          () => {
            opened = undefined;
          },
        );
      }
      return opened;
    },
    live: () => (opened ? live : undefined),
  };
}
