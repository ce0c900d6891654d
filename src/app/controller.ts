// The controller: the only place that turns state changes into worker requests and worker messages into
// actions, one concern a module -- the run (./runController.ts), the device (./deviceController.ts),
// permalinks and the stored buffers (./permalinkController.ts), the adapter's peaks
// (./probeController.ts), the tuner, the model files and the shape sweep -- over one worker client. This
// shell makes them, routes the store's changes to those that follow the state, and starts them. React
// components call the functions returned here and never see the worker or the GPU.
import type { BufferStorage } from './editor/bufferStorage';
import { CONFIRM_MS } from '../kernels/perf/estimate';
import { createDeviceController, type DeviceController } from './deviceController';
import { createGuard } from './guard';
import { createModelController, type ModelController } from './modelController';
import type { ModelRunEnv } from './modelRunController';
import { createPermalinkController, type PermalinkController } from './permalinkController';
import type { TuneRunStore } from './persistence/tuneRuns';
import { createProbeController, type ProbeController } from './probeController';
import { createRunController, type RunController } from './runController';
import { configKey, subscribeApp, type AppState } from './store';
import { createSweepController, type SweepController } from './sweepController';
import { createTunerController, type TunerController } from './tunerController';
import type { WorkerClient } from './worker/client';

export type { PartialsAnswer, RunChoice } from './runController';

export interface ControllerEnv {
  client: WorkerClient;
  storage: BufferStorage;
  /**
   * The tab's session storage: the hash this tab wrote last, so reloading one's own state applies it
   * without asking (any other link asks first). Absent: every link asks.
   */
  session?: Pick<Storage, 'getItem' | 'setItem'>;
  /** Current URL hash and a way to replace it without a history entry. */
  getHash(): string;
  replaceHash(hash: string): void;
  /** Where tuning runs are kept (IndexedDB); tests pass their own. */
  openTuneStore(): Promise<TuneRunStore>;
  /** Debounce delays in ms (tests shorten them). */
  delays?: { generate?: number; run?: number; hash?: number };
  /** Runs estimated to take longer than this ask first, ms. */
  confirmMs?: number;
  /** The clock (performance.now in the app). */
  now?: () => number;
}

/** Everything the components can ask for: each concern's controller, flat, and the tuner, models and sweep. */
export type Controller = Omit<RunController, 'scheduleGenerate'> &
  Pick<DeviceController, 'loseDevice'> &
  Omit<PermalinkController, 'restore' | 'follow'> &
  ProbeController & {
    /** Restore buffers and the permalink, open the device. */
    start(): void;
    tuner: TunerController;
    models: ModelController;
    sweep: SweepController;
    /** What the model view's controller runs on (./modelRunController.ts, loaded with the view). */
    modelRunEnv: ModelRunEnv;
  };

/**
 * Create the controller and subscribe it to the store.
 * @example const ctl = createController({ client, storage: localStorage, getHash, replaceHash, openTuneStore: openTuneRuns }); ctl.start();
 */
export function createController(env: ControllerEnv): Controller {
  const { client } = env;
  const delay = { generate: 120, run: 600, hash: 250, ...env.delays };
  const now = env.now ?? (() => performance.now());
  const guard = createGuard(env.confirmMs ?? CONFIRM_MS);
  const tuner = createTunerController({ client, openStore: env.openTuneStore, now, guard });
  const models = createModelController({ client });
  const sweep = createSweepController({ client, openStore: env.openTuneStore, guard });
  const device = createDeviceController({ client, guard });
  const run = createRunController({ client, guard, device, now, delays: delay });
  const links = createPermalinkController({ ...env, hashDelay: delay.hash, runNow: () => run.runNow() });
  const { scheduleGenerate: _scheduleGenerate, ...runFns } = run;

  subscribeApp((s: AppState, prev: AppState) => {
    const statusChanged =
      s.device.status !== prev.device.status &&
      (s.device.status === 'ready' || s.device.status === 'unavailable');
    const filesChanged = s.models.files !== prev.models.files && s.config.data.source === 'tensor';
    if (configKey(s.config) !== configKey(prev.config) || statusChanged || filesChanged)
      run.scheduleGenerate();
    models.follow(s, prev);
    links.follow(s, prev);
  });

  return {
    start() {
      links.restore();
      device.init();
      tuner.start();
    },
    ...runFns,
    loseDevice: device.loseDevice,
    link: links.link,
    openHash: links.openHash,
    acceptLink: links.acceptLink,
    declineLink: links.declineLink,
    ...createProbeController({ client }),
    tuner,
    models,
    sweep,
    modelRunEnv: { client, openStore: env.openTuneStore, guard, confirmMs: env.confirmMs ?? CONFIRM_MS, now },
  };
}
