// Every evaluated config of a hunt, sortable; rejected and gate-failed configs stay listed with their
// reasons. Clicking a row loads that config into the playground.
import { useState } from 'react';
import type { TuneRecordEntry } from '../../workers/protocol';
import { formatMs, formatRel, sortRows, type SortDir, type SortKey } from './tunerData';

export interface ConfigTableProps {
  entries: readonly TuneRecordEntry[];
  winner: string;
  onPick(entry: TuneRecordEntry): void;
}

const COLUMNS: { key: SortKey | undefined; label: string; title?: string }[] = [
  { key: 'order', label: '#', title: 'evaluation order' },
  { key: undefined, label: 'config' },
  { key: 'area', label: 'BM x BN', title: 'the output block one workgroup computes' },
  { key: undefined, label: 'arm' },
  { key: 'generation', label: 'gen' },
  { key: undefined, label: 'verdict' },
  { key: 'ms', label: 'ms', title: 'the whole plan, fastest batch' },
  { key: 'worstRel', label: 'rel err', title: 'rel_to_max against the oracle' },
  { key: undefined, label: 'reason' },
];

/** The sortable config table (data-testid tuner-table; rows tuner-row with data-config/data-verdict). */
export function ConfigTable({ entries, winner, onPick }: ConfigTableProps) {
  const [sort, setSort] = useState<{ key: SortKey; dir: SortDir }>({ key: 'ms', dir: 'asc' });
  const rows = sortRows(entries, sort.key, sort.dir);
  const clickHeader = (key: SortKey) =>
    setSort((s) => (s.key === key ? { key, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: 'asc' }));
  return (
    <div className="tuner-table-wrap">
      <table className="tuner-table" data-testid="tuner-table" data-sort={`${sort.key}:${sort.dir}`}>
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th
                key={c.label}
                title={c.title}
                className={c.key ? 'tuner-sortable' : undefined}
                aria-sort={c.key === sort.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : undefined}
                data-testid={c.key ? `tuner-sort-${c.key}` : undefined}
                onClick={c.key ? () => clickHeader(c.key!) : undefined}
              >
                {c.label}
                {c.key === sort.key ? (sort.dir === 'asc' ? ' \u25b4' : ' \u25be') : ''}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={COLUMNS.length} className="tuner-empty">
                no configs evaluated yet
              </td>
            </tr>
          ) : (
            rows.map(({ order, entry: e }) => {
              const isWinner = e.config === winner && e.verdict === 'measured';
              return (
                <tr
                  key={e.config}
                  data-testid="tuner-row"
                  data-config={e.config}
                  data-verdict={e.verdict}
                  className={`tuner-row tuner-${e.verdict}${isWinner ? ' tuner-winner' : ''}`}
                  title="load this config into the playground"
                  onClick={() => onPick(e)}
                >
                  <td className="num">{order}</td>
                  <td className="mono">
                    {isWinner ? '\u2605 ' : ''}
                    {e.config}
                  </td>
                  <td className="num">{e.bm !== undefined ? `${e.bm} x ${e.bn ?? '?'}` : '--'}</td>
                  <td className="mono">{e.arm}</td>
                  <td className="num">{e.generation}</td>
                  <td>
                    <span className={`tuner-badge tuner-badge-${e.verdict}`}>{e.verdict}</span>
                  </td>
                  <td className="num">{formatMs(e.ms)}</td>
                  <td className="num">{formatRel(e.worstRel)}</td>
                  <td className="tuner-reason">{e.reason ?? ''}</td>
                </tr>
              );
            })
          )}
        </tbody>
      </table>
    </div>
  );
}
