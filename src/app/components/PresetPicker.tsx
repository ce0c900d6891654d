// Model presets for a shape: the GEMMs of real models (built in, and derived from each opened GGUF's
// metadata) with prefill row counts. Picking one sets the family's shape through shapeParams; GEMMs the
// family cannot take (another block size, a bank for a matrix kernel) are listed with the reason.
import { useId, useState } from 'react';
import type { FamilyCatalog } from '../../kernels/family';
import type { ModelGemm, ModelPreset } from '../../kernels/models/presets';
import { gemmFits, modelPresets, useApp } from '../store';

/** A preset's GEMMs; those the family cannot take are disabled with the reason. */
function GemmSelect({
  catalog,
  preset,
  value,
  onChange,
  testPrefix,
}: {
  catalog: FamilyCatalog;
  preset: ModelPreset;
  value: string;
  onChange(name: string): void;
  testPrefix: string;
}) {
  return (
    <select
      aria-label="GEMM"
      data-testid={`${testPrefix}-preset-gemm`}
      value={value}
      onChange={(e) => onChange(e.target.value)}
    >
      <option value="">GEMM…</option>
      {preset.gemms.map((g) => {
        const no = gemmFits(catalog, g);
        return (
          <option key={g.name} value={g.name} disabled={no !== undefined} title={no}>
            {g.name} {g.n}×{g.k}
            {g.experts !== undefined ? ` ×${g.experts} experts, top-${g.topk ?? 1}` : ''}
            {no ? ` (${no})` : ''}
          </option>
        );
      })}
    </select>
  );
}

export function PresetPicker(props: {
  catalog: FamilyCatalog;
  onApply(gemm: ModelGemm, rows: number): void;
  testPrefix: string;
}) {
  const { catalog, testPrefix } = props;
  const id = useId();
  const opened = useApp((s) => s.models.files);
  const presets = modelPresets(opened);
  const [presetId, setPresetId] = useState('');
  const [gemmName, setGemmName] = useState('');
  const [rows, setRows] = useState(512);
  const preset = presets.find((p) => p.id === presetId);
  const gemm = preset?.gemms.find((g) => g.name === gemmName);
  const why = gemm ? gemmFits(catalog, gemm) : undefined;
  if (!catalog.takes) return null;
  return (
    <div className="preset" data-testid={`${testPrefix}-preset`}>
      <label className="field wide" htmlFor={id}>
        <span>model preset</span>
        <select
          id={id}
          data-testid={`${testPrefix}-preset-model`}
          value={presetId}
          onChange={(e) => {
            setPresetId(e.target.value);
            setGemmName('');
          }}
        >
          <option value="">a real model's GEMM…</option>
          {presets.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      {preset && (
        <div className="preset-row">
          <GemmSelect
            catalog={catalog}
            preset={preset}
            value={gemmName}
            onChange={setGemmName}
            testPrefix={testPrefix}
          />
          <select
            aria-label="activation rows"
            data-testid={`${testPrefix}-preset-rows`}
            value={rows}
            onChange={(e) => setRows(Number(e.target.value))}
            title="activation rows (prefill tokens)"
          >
            {preset.prefillM.map((m) => (
              <option key={m} value={m}>
                {m} rows
              </option>
            ))}
          </select>
          <button
            type="button"
            data-testid={`${testPrefix}-preset-apply`}
            disabled={!gemm || why !== undefined}
            title={why ?? 'set this shape'}
            onClick={() => gemm && props.onApply(gemm, rows)}
          >
            use
          </button>
        </div>
      )}
      {why && <small className="muted">{why}</small>}
    </div>
  );
}
