// Messages that need the user: a permalink that could not be applied, a lost or missing device.
import { useServices } from '../appContext';
import { act, dismissLinkError, useApp } from '../store';

export function Banners() {
  const { controller } = useServices();
  const linkError = useApp((s) => s.linkError);
  const device = useApp((s) => s.device);
  return (
    <>
      {linkError && (
        <div className="banner warn" role="alert" data-testid="link-error">
          <span>{linkError}</span>
          <button type="button" onClick={() => act(dismissLinkError)}>
            Dismiss
          </button>
        </div>
      )}
      {device.status === 'lost' && (
        <div className="banner bad" role="alert" data-testid="device-lost">
          <span>
            The GPU device was lost: {device.message}. Results stay on screen; the next run re-opens the
            device.
          </span>
          <button
            type="button"
            className="primary"
            onClick={() => controller.recover()}
            data-testid="recover"
          >
            Re-open device and run
          </button>
        </div>
      )}
      {device.status === 'unavailable' && (
        <div className="banner bad" role="alert" data-testid="no-webgpu">
          <span>
            WebGPU is not available here: {device.message}. Use a Chromium-based browser with WebGPU enabled
            (on Linux: --enable-unsafe-webgpu).
          </span>
        </div>
      )}
    </>
  );
}
