'use client';
// Revision drift: a stacked area of how many servers negotiate each revision over the range,
// or the same folded into eras.
import { useState } from 'react';
import { Area, AreaChart, Legend, ResponsiveContainer, Tooltip, YAxis } from 'recharts';
import { grid, timeAxis, tooltipStyle } from './chart-parts';
import { labelFormat } from './chart-time';

export interface DriftSeries {
  key: string;
  label: string;
  color: string;
  era: 'legacy' | 'modern';
}

export function DriftChart({
  points,
  series,
}: {
  points: ({ at: number } & Record<string, number>)[];
  series: DriftSeries[];
}) {
  const [byEra, setByEra] = useState(false);
  const eras: DriftSeries[] = [
    { key: 'legacy', label: 'legacy', color: 'var(--rev-2)', era: 'legacy' },
    { key: 'modern', label: 'modern', color: 'var(--rev-4)', era: 'modern' },
  ];
  const shown = byEra ? eras : series;
  const data = byEra
    ? points.map((p) => {
        const row: { at: number } & Record<string, number> = { at: p.at, legacy: 0, modern: 0 };
        for (const s of series) row[s.era] = (row[s.era] ?? 0) + (p[s.key] ?? 0);
        return row;
      })
    : points;
  const span = points.length > 1 ? points[points.length - 1]!.at - points[0]!.at : 0;
  return (
    <div>
      <fieldset className="segmented" aria-label="Drift by" style={{ margin: '0 0 8px', padding: 0 }}>
        <button type="button" aria-pressed={!byEra} onClick={() => setByEra(false)}>
          By revision
        </button>
        <button type="button" aria-pressed={byEra} onClick={() => setByEra(true)}>
          By era
        </button>
      </fieldset>
      <div className="chart" data-testid="drift-chart">
        <ResponsiveContainer width="100%" height="100%">
          <AreaChart data={data} margin={{ top: 4, right: 12, bottom: 0, left: 0 }}>
            {grid()}
            {timeAxis(['dataMin', 'dataMax'], span)}
            <YAxis allowDecimals={false} stroke="var(--muted)" width={44} />
            <Tooltip labelFormatter={labelFormat} contentStyle={tooltipStyle} />
            <Legend />
            {shown.map((s) => (
              <Area
                key={s.key}
                type="stepAfter"
                dataKey={s.key}
                name={s.label}
                stackId="servers"
                stroke={s.color}
                fill={s.color}
                fillOpacity={0.55}
                isAnimationActive={false}
              />
            ))}
          </AreaChart>
        </ResponsiveContainer>
      </div>
    </div>
  );
}
