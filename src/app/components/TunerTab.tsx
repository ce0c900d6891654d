// The Tuner tab: helper C's dashboard, wired to the worker through the controller.
import { TunerDashboard } from '../tuner/TunerDashboard';
import { useServices } from '../appContext';
import { useApp } from '../store';
import { TUNE_OP_KERNEL } from '../controller';
import type { TuneOp } from '../../workers/protocol';

/** The tuning op of the playground's kernel (its family's hunt), else the int8 tile hunt. */
const opOfKernel = (kernel: string): TuneOp =>
  (Object.keys(TUNE_OP_KERNEL) as TuneOp[]).find((op) => TUNE_OP_KERNEL[op] === kernel) ?? 'mmq_q4k_tile';

export function TunerTab() {
  const { controller } = useServices();
  const deviceId = useApp((s) => s.device.deviceId);
  const status = useApp((s) => s.device.status);
  const shape = useApp((s) => ({ m: s.config.m, n: s.config.n, k: s.config.k }));
  const kernel = useApp((s) => s.config.kernel);
  const t = controller.tuner;
  return (
    <div className="view tuner-view">
      <TunerDashboard
        deviceId={deviceId ?? 'unknown'}
        runTune={t.runTune}
        cancelTune={t.cancelTune}
        runAutokernel={t.runAutokernel}
        onLoadTile={t.loadTile}
        initial={{ shape, op: opOfKernel(kernel) }}
        {...(status !== 'ready'
          ? { disabledReason: status === 'starting' ? 'the GPU device is starting' : 'no GPU device' }
          : {})}
      />
    </div>
  );
}
