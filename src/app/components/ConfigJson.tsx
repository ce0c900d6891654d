// The current config as JSON: exactly what the worker runs (plane resolved) and what the permalink holds.
import { editedWgsl, runConfig, useApp } from '../store';

export function ConfigJson() {
  const config = useApp((s) => s.config);
  const resolved = useApp(runConfig);
  const generated = useApp((s) => s.generated);
  const edited = useApp((s) => editedWgsl(s) !== undefined);
  const deviceId = useApp((s) => s.device.deviceId);
  const doc = {
    config: resolved,
    planeChoice: config.plane === 0 ? 'adapter default' : config.plane,
    kernel: generated?.entryPoint
      ? {
          entryPoint: generated.entryPoint,
          workgroupSize: generated.workgroupSize,
          workgroups: generated.workgroups,
          phases: generated.phases,
          edited,
        }
      : { problems: generated?.problems ?? [] },
    device: deviceId,
  };
  return (
    <div className="view config-view">
      <pre className="json" data-testid="config-json">
        {JSON.stringify(doc, null, 2)}
      </pre>
    </div>
  );
}
