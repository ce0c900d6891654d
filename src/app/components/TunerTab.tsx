// The Tuner tab: helper C's dashboard, wired to the worker through the controller.
import { TunerDashboard } from '../tuner/TunerDashboard';
import { useServices } from '../appContext';
import { useApp } from '../store';

export function TunerTab() {
  const { controller } = useServices();
  const deviceId = useApp((s) => s.device.deviceId);
  const status = useApp((s) => s.device.status);
  const shape = useApp((s) => ({ m: s.config.m, n: s.config.n, k: s.config.k }));
  const t = controller.tuner;
  return (
    <div className="view tuner-view">
      <TunerDashboard
        deviceId={deviceId ?? 'unknown'}
        runTune={t.runTune}
        cancelTune={t.cancelTune}
        runAutokernel={t.runAutokernel}
        onLoadTile={t.loadTile}
        initial={{ shape }}
        {...(status !== 'ready'
          ? { disabledReason: status === 'starting' ? 'the GPU device is starting' : 'no GPU device' }
          : {})}
      />
    </div>
  );
}
