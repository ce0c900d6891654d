// Top bar: the run bar, the adapter and device status, copy-link, the glossary and the diagnostics menu.
import { useEffect, useRef, useState } from 'react';
import { useServices } from '../appContext';
import { act, setGlossary, setLayout, useApp } from '../store';
import { RunBar } from './RunBar';

/**
 * What a cancel could not stop: the GPU work already submitted, which the next run waits behind. Counts
 * down what was expected, else up from the cancel.
 */
function Draining({ since, expectedMs }: { since: number; expectedMs: number | undefined }) {
  const [t, setT] = useState(() => performance.now());
  useEffect(() => {
    const timer = setInterval(() => setT(performance.now()), 500);
    return () => clearInterval(timer);
  }, []);
  const left = expectedMs !== undefined ? expectedMs - (t - since) : undefined;
  return (
    <span className="draining" role="status" data-testid="gpu-draining">
      {' '}
      · GPU still finishing cancelled work
      {left !== undefined && left > 0
        ? `, about ${Math.ceil(left / 1000)} s left`
        : ` (${Math.round((t - since) / 1000)} s so far)`}
      ; the next run waits for it
    </span>
  );
}

/** The device's state: the adapter and its features when ready, else what it is doing. */
function DeviceStatus() {
  const device = useApp((s) => s.device);
  const caps = device.caps;
  const adapter = caps
    ? [caps.vendor, caps.architecture, caps.description].filter(Boolean).join(' · ') || 'WebGPU adapter'
    : '';
  return (
    <div className="device" data-testid="device-status" data-status={device.status}>
      <span className={`dot ${device.status}`} />
      {device.status === 'ready' && (
        <span title={adapter}>
          {adapter} · plane {device.plane}
          {caps && (
            <span className="muted">
              {' '}
              ·{' '}
              {[
                caps.dot4I8Packed && 'dp4a',
                caps.subgroupMatrixConfigs.length > 0 && 'subgroup-matrix',
                caps.shaderF16 && 'f16',
                caps.timestampQuery ? 'timestamps' : 'wall clock',
              ]
                .filter(Boolean)
                .join(', ')}
            </span>
          )}
        </span>
      )}
      {device.status === 'starting' && (
        <span>{device.message ? 'restarting the GPU worker…' : 'opening GPU device…'}</span>
      )}
      {device.status === 'lost' && <span>device lost</span>}
      {device.draining && <Draining since={device.draining.since} expectedMs={device.draining.expectedMs} />}
      {device.status === 'unavailable' && <span>no WebGPU</span>}
    </div>
  );
}

/** Copy the permalink, the glossary, and the menu (simulate a device loss). */
function HeaderActions() {
  const { controller } = useServices();
  const [copied, setCopied] = useState<string>();
  const menu = useRef<HTMLDetailsElement>(null);
  const copy = async () => {
    const url = controller.link(window.location.href);
    try {
      await navigator.clipboard.writeText(url);
      setCopied('link copied');
    } catch {
      // Clipboard denied (http, permissions): show the link to copy by hand.
      window.prompt('Copy this link', url);
      setCopied('link shown');
    }
    setTimeout(() => setCopied(undefined), 2000);
  };
  return (
    <div className="actions">
      <button type="button" onClick={() => void copy()} data-testid="copy-link">
        {copied ?? 'Copy link'}
      </button>
      <button
        type="button"
        onClick={() => act(setGlossary, true)}
        data-testid="glossary-open"
        title="what plane, arm, island, staging and the rest mean"
      >
        Glossary
      </button>
      <details className="menu" ref={menu}>
        <summary aria-label="more">⋯</summary>
        <div className="menu-body">
          <button
            type="button"
            onClick={() => {
              menu.current?.removeAttribute('open');
              controller.loseDevice();
            }}
            data-testid="lose-device"
          >
            Simulate device loss
          </button>
        </div>
      </details>
    </div>
  );
}

export function Header() {
  const collapsed = useApp((s) => s.layout.controlsCollapsed);
  return (
    <header className="topbar">
      <div className="brand">
        <button
          type="button"
          className="icon"
          aria-label={collapsed ? 'show the controls' : 'hide the controls'}
          title={collapsed ? 'show the controls' : 'hide the controls'}
          onClick={() => act(setLayout, { controlsCollapsed: !collapsed })}
          data-testid="toggle-controls"
        >
          ☰
        </button>
        <h1>MMQ Playground</h1>
      </div>
      <RunBar />
      <DeviceStatus />
      <HeaderActions />
    </header>
  );
}
