// The pieces every time chart shares: a UTC time axis, the grid and the tooltip's look.
import { CartesianGrid, XAxis } from 'recharts';
import { tickFormat } from './chart-time';

export function timeAxis(domain: [number, number] | ['dataMin', 'dataMax'], spanMs: number) {
  return (
    <XAxis
      dataKey="at"
      type="number"
      scale="time"
      domain={domain}
      tickFormatter={tickFormat(spanMs)}
      stroke="var(--muted)"
    />
  );
}

export function grid() {
  return <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" />;
}

export const tooltipStyle = { background: 'var(--panel)', border: '1px solid var(--border)' };
