'use client';
// Downgrades over time, stacked by `requested → negotiated`.
import { Bar, BarChart, Legend, ResponsiveContainer, Tooltip, YAxis } from 'recharts';
import { grid, timeAxis, tooltipStyle } from './chart-parts';
import { labelFormat } from './chart-time';

const COLORS = ['var(--bad)', 'var(--warn)', 'var(--rev-0)', 'var(--rev-3)', 'var(--muted)'];

export function DowngradeChart({
  points,
  pairs,
}: {
  points: ({ at: number } & Record<string, number>)[];
  pairs: string[];
}) {
  const span = points.length > 1 ? points[points.length - 1]!.at - points[0]!.at : 0;
  return (
    <div className="chart" data-testid="downgrade-chart">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={points} margin={{ top: 4, right: 12, bottom: 0, left: 0 }}>
          {grid()}
          {timeAxis(['dataMin', 'dataMax'], span)}
          <YAxis allowDecimals={false} stroke="var(--muted)" width={44} />
          <Tooltip labelFormatter={labelFormat} contentStyle={tooltipStyle} />
          <Legend />
          {pairs.map((p, i) => (
            <Bar key={p} dataKey={p} stackId="d" fill={COLORS[i % COLORS.length]} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
