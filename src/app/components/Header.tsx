// Top bar: the adapter, device status, copy-link and the diagnostics menu.
import { useRef, useState } from 'react';
import { useServices } from '../appContext';
import { useApp } from '../store';

export function Header() {
  const { controller } = useServices();
  const device = useApp((s) => s.device);
  const [copied, setCopied] = useState<string>();
  const menu = useRef<HTMLDetailsElement>(null);
  const caps = device.caps;
  const adapter = caps
    ? [caps.vendor, caps.architecture, caps.description].filter(Boolean).join(' · ') || 'WebGPU adapter'
    : '';

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
    <header className="topbar">
      <div className="brand">
        <span className="logo">▦</span>
        <h1>MMQ Playground</h1>
        <span className="muted">block-quantized int8 GEMM on WebGPU</span>
      </div>
      <div className="device" data-testid="device-status" data-status={device.status}>
        <span className={`dot ${device.status}`} />
        {device.status === 'ready' && (
          <span>
            {adapter} · plane {device.plane}
            {caps && (
              <span className="muted">
                {' '}
                ·{' '}
                {[
                  caps.dot4I8Packed && 'dp4a',
                  caps.subgroupMatrixConfigs.length > 0 && 'subgroup-matrix',
                  caps.shaderF16 && 'f16',
                  caps.timestampQuery && 'timestamps',
                ]
                  .filter(Boolean)
                  .join(', ')}
              </span>
            )}
          </span>
        )}
        {device.status === 'starting' && <span>opening GPU device…</span>}
        {device.status === 'lost' && <span>device lost</span>}
        {device.status === 'unavailable' && <span>no WebGPU</span>}
      </div>
      <div className="actions">
        <button type="button" onClick={() => void copy()} data-testid="copy-link">
          {copied ?? 'Copy link'}
        </button>
        <details className="menu" ref={menu}>
          <summary>⋯</summary>
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
    </header>
  );
}
