'use client';
// Handshake latency by region: p50 solid, p95 dashed, one colour per region.
import { Legend, Line, LineChart, ResponsiveContainer, Tooltip, YAxis } from 'recharts';
import { grid, timeAxis, tooltipStyle } from './chart-parts';
import { labelFormat } from './chart-time';

const COLORS = ['var(--rev-3)', 'var(--rev-1)', 'var(--rev-4)', 'var(--rev-0)', 'var(--rev-2)'];

export function LatencyChart({
  points,
  regions,
  since,
  until,
}: {
  points: ({ at: number } & Record<string, number>)[];
  regions: string[];
  since: number;
  until: number;
}) {
  return (
    <div className="chart" data-testid="latency-chart">
      <ResponsiveContainer width="100%" height="100%">
        <LineChart data={points} margin={{ top: 4, right: 12, bottom: 0, left: 0 }}>
          {grid()}
          {timeAxis([since, until], until - since)}
          <YAxis unit=" ms" stroke="var(--muted)" width={84} />
          <Tooltip labelFormatter={labelFormat} contentStyle={tooltipStyle} />
          <Legend />
          {regions.flatMap((r, i) => [
            <Line
              key={`${r}-p50`}
              dataKey={`${r} p50`}
              stroke={COLORS[i % COLORS.length]}
              dot={false}
              connectNulls
              isAnimationActive={false}
            />,
            <Line
              key={`${r}-p95`}
              dataKey={`${r} p95`}
              stroke={COLORS[i % COLORS.length]}
              strokeDasharray="4 3"
              dot={false}
              connectNulls
              isAnimationActive={false}
            />,
          ])}
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}
