// The current config as JSON: exactly what the worker runs and what the permalink holds, with the kernel
// generated for it (every pass of the plan) and the device.
import { editedWgsl, effectivePlane, useApp } from '../store';

export function ConfigJson() {
  const config = useApp((s) => s.config);
  const plane = useApp(effectivePlane);
  const generated = useApp((s) => s.generated);
  const edited = useApp((s) => editedWgsl(s) !== undefined);
  const deviceId = useApp((s) => s.device.deviceId);
  const doc = {
    config,
    plane: config.plane === undefined ? `the adapter's (${plane ?? 'unknown'})` : config.plane,
    kernel: generated?.passes.length
      ? {
          passes: generated.passes.map((p, i) => ({
            label: p.label,
            entryPoint: p.entryPoint,
            workgroupSize: p.workgroupSize,
            workgroups: p.workgroups,
            ...(i === generated.mainPass ? { main: true, edited } : {}),
          })),
          phases: generated.phases,
        }
      : { problems: generated?.problems ?? [] },
    device: deviceId ?? null,
  };
  return (
    <div className="view config-view">
      <pre className="json" data-testid="config-json">
        {JSON.stringify(doc, null, 2)}
      </pre>
    </div>
  );
}
