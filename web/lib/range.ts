// The time range shared by the pages: `?range=` when a link carries one, else the picker's cookie.
import { isRangeName, type RangeName, rangeWindow } from '@mcp-fleet/store';
import { cookies } from 'next/headers';
import { RANGE_COOKIE } from './cookies';

export const DEFAULT_RANGE: RangeName = '24h';

export type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export function param(params: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = params[name];
  return Array.isArray(v) ? v[0] : v;
}

export async function pickRange(params: Record<string, string | string[] | undefined>) {
  const fromUrl = param(params, 'range');
  const fromCookie = (await cookies()).get(RANGE_COOKIE)?.value;
  const name: RangeName = isRangeName(fromUrl) ? fromUrl : isRangeName(fromCookie) ? fromCookie : DEFAULT_RANGE;
  return { name, ...rangeWindow(name) };
}
