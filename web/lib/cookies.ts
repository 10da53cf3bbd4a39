// The two preferences the dashboard keeps in cookies (read by the server, written by the browser).
export const RANGE_COOKIE = 'mcp-fleet-range';
export const THEME_COOKIE = 'mcp-fleet-theme';
export const RANGE_NAMES = ['1h', '24h', '7d', '30d'] as const;
