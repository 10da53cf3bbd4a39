'use client';
// Era moves as a timeline: one dot per move at the revision it moved to; downgrades in red.
// A dot opens its server.
import { useRouter } from 'next/navigation';
import { ResponsiveContainer, Scatter, ScatterChart, Tooltip, YAxis, ZAxis } from 'recharts';
import { grid, timeAxis } from './chart-parts';
import { labelFormat } from './chart-time';

export interface TimelineMove {
  at: number;
  level: number;
  serverId: string;
  serverName: string;
  region: string;
  from: string;
  to: string;
  downgrade: boolean;
}

export function EraMoveTimeline({
  moves,
  revisions,
  since,
  until,
}: {
  moves: TimelineMove[];
  revisions: string[];
  since: number;
  until: number;
}) {
  const router = useRouter();
  const up = moves.filter((m) => !m.downgrade);
  const down = moves.filter((m) => m.downgrade);
  const open = (m: unknown) => {
    const id = (m as { payload?: TimelineMove }).payload?.serverId ?? (m as TimelineMove).serverId;
    if (id) router.push(`/servers/${id}`);
  };
  return (
    <div className="chart" data-testid="era-move-timeline">
      <ResponsiveContainer width="100%" height="100%">
        <ScatterChart margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          {grid()}
          {timeAxis([since, until], until - since)}
          <YAxis
            dataKey="level"
            type="number"
            domain={[-0.5, revisions.length - 0.5]}
            ticks={revisions.map((_, i) => i)}
            tickFormatter={(i: number) => revisions[i] ?? ''}
            width={96}
            stroke="var(--muted)"
          />
          <ZAxis range={[40, 40]} />
          <Tooltip
            cursor={false}
            content={({ payload }) => {
              const m = payload?.[0]?.payload as TimelineMove | undefined;
              if (!m) return null;
              return (
                <div className="panel" style={{ padding: '6px 10px' }}>
                  <strong>{m.serverName}</strong> ({m.region})
                  <br />
                  now {m.to}, was {m.from}
                  <br />
                  <span className="muted">{labelFormat(m.at)}</span>
                </div>
              );
            }}
          />
          <Scatter name="moves" data={up} fill="var(--good)" onClick={open} isAnimationActive={false} />
          <Scatter name="downgrades" data={down} fill="var(--bad)" onClick={open} isAnimationActive={false} />
        </ScatterChart>
      </ResponsiveContainer>
    </div>
  );
}
