// Messages that need the user: a permalink that could not be applied, a link's model file to open (or
// the wrong one picked), a run expected to take long, a lost or missing device.
import { useServices } from '../appContext';
import { OpenModelButton } from '../model/OpenModelButton';
import { formatMs } from '../../kernels/perf/estimate';
import { excerpt } from '../../kernels/quant/untrustedText';
import { act, currentCatalog, dismissConfirm, dismissLinkError, fileText, useApp } from '../store';

/**
 * What is missing, in a few words, from the worker's message (its own advice is not repeated: the
 * banner gives it per browser).
 */
export function noWebGpuCause(message: string | undefined): string {
  if (!message || /navigator\.gpu is missing/.test(message))
    return 'the browser does not expose WebGPU (navigator.gpu)';
  if (/no adapter/i.test(message)) return 'WebGPU is exposed, but the browser offers no adapter';
  return message;
}

/** What to do without WebGPU, per browser (issue: one banner, naming what is missing and how to get it). */
export function NoWebGpu({ message }: { message: string | undefined }) {
  return (
    <div className="banner bad" role="alert" data-testid="no-webgpu">
      <div>
        <strong>No WebGPU here: {noWebGpuCause(message)}.</strong> The generated WGSL and the CPU
        oracle&apos;s output are shown; running on a GPU needs WebGPU:
        <ul>
          <li>
            Chrome or Edge 113+: on by default on Windows, macOS and ChromeOS; on Linux start it with{' '}
            <code>--enable-unsafe-webgpu</code> (plus <code>--enable-features=Vulkan</code> where needed).
          </li>
          <li>
            Firefox: WebGPU on Windows from 141, on Apple-silicon macOS from 145 (no subgroups there: scalar
            arms).
          </li>
          <li>Safari 26: WebGPU without subgroup matrices (scalar and dp4a arms).</li>
        </ul>
      </div>
    </div>
  );
}

function WantedFile() {
  const wanted = useApp((s) => s.models.wanted);
  const mismatch = useApp((s) => s.models.mismatch);
  if (!wanted) return null;
  return (
    <div className="banner warn" role="alert" data-testid="wanted-file">
      <span>
        {mismatch ?? (
          <>
            This config runs tensor <code>{excerpt(wanted.tensor)}</code> of the model file{' '}
            {fileText(wanted.file)}. Open that file to run it (it stays on your machine).
          </>
        )}
      </span>
      <OpenModelButton label="Open the file…" testId="wanted-open" inputTestId="wanted-file-input" />
    </div>
  );
}

/** A link opened in this tab: it is shown, and runs only once the visitor says so. */
function LinkPreview() {
  const { controller } = useServices();
  const pending = useApp((s) => s.pendingLink);
  const title = useApp((s) => currentCatalog(s).title);
  const shape = useApp((s) =>
    currentCatalog(s)
      .controls.filter((c) => c.group === 'shape')
      .map((c) => `${c.key}=${String(s.config.params[c.key])}`)
      .join(' '),
  );
  if (!pending) return null;
  return (
    <div className="banner warn" role="alert" data-testid="link-preview">
      <span>
        This link opens <strong>{title}</strong>
        {shape && ` (${shape})`}{' '}
        {pending.edited
          ? 'with WGSL edited by whoever made the link (shown in the editor).'
          : 'with its generated kernel.'}{' '}
        Nothing runs on your GPU and nothing is saved until you choose.
      </span>
      <button
        type="button"
        className="primary"
        onClick={() => controller.acceptLink()}
        data-testid="link-accept"
      >
        Run this linked kernel
      </button>
      <button type="button" onClick={() => controller.declineLink()} data-testid="link-decline">
        Keep my own
      </button>
    </div>
  );
}

/** The go-ahead for an action estimated past the guard's limit (a run, a sweep, a hunt). */
function Confirm() {
  const { controller } = useServices();
  const est = useApp((s) => s.confirm);
  if (!est) return null;
  const action = est.action ?? 'run';
  const go = () => {
    act(dismissConfirm);
    if (action === 'sweep') controller.sweep.start(true);
    else if (est.resume) controller.tuner.resume(true);
    else controller.tuner.hunt(!!est.force, true);
  };
  return (
    <div className="banner warn" role="alert" data-testid="run-estimate" data-action={action}>
      {action === 'run' ? (
        <>
          <span>
            This run is estimated at <strong>{formatMs(est.ms)}</strong> on this adapter ({est.basis}). Run it
            without timing (about {formatMs(est.untimedMs)}), make the shape smaller, or run it anyway.
          </span>
          <button
            type="button"
            onClick={() => controller.runNow({ confirmed: true, untimed: true })}
            data-testid="run-untimed"
          >
            Run without timing
          </button>
          <button
            type="button"
            onClick={() => controller.runNow({ confirmed: true })}
            data-testid="run-anyway"
          >
            Run anyway
          </button>
        </>
      ) : (
        <>
          <span>
            This {action === 'sweep' ? 'sweep' : est.resume ? "hunt's resume" : 'hunt'} is estimated at{' '}
            <strong>{formatMs(est.ms)}</strong> on this adapter ({est.basis}).{' '}
            {action === 'sweep'
              ? 'Narrow the range, or start it anyway.'
              : 'Hunt a smaller shape or fewer generations, or start it anyway.'}{' '}
            It can be cancelled at any time.
          </span>
          <button type="button" onClick={go} data-testid="start-anyway">
            Start anyway
          </button>
        </>
      )}
      <button type="button" onClick={() => act(dismissConfirm)}>
        Not now
      </button>
    </div>
  );
}

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
      <LinkPreview />
      <WantedFile />
      <Confirm />
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
      {device.status === 'unavailable' && <NoWebGpu message={device.message} />}
    </>
  );
}
