// The time range shared by the pages: `?range=` when a link carries one, else the picker's cookie,
// else the default fitted to how old the data is (store's fittedRange), so a fresh install's first
// minutes fill the charts rather than one pixel of a day.
import { fittedRange, isRangeName, oldestRunAt, type RangeName, rangeWindow } from '@mcp-fleet/store';
import { cookies } from 'next/headers';
import { cache } from 'react';
import { RANGE_COOKIE } from './cookies';
import { getDb } from './db';

export type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export function param(params: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = params[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Once per request (the layout's picker and the page both ask). */
export const defaultRange = cache(async (): Promise<RangeName> => fittedRange(await oldestRunAt(await getDb())));

/** The range nobody picked in a link: the cookie's, or the fitted default (`fitted` true). */
export async function savedRange(): Promise<{ name: RangeName; fitted: boolean }> {
  const fromCookie = (await cookies()).get(RANGE_COOKIE)?.value;
  if (isRangeName(fromCookie)) return { name: fromCookie, fitted: false };
  return { name: await defaultRange(), fitted: true };
}

export async function pickRange(params: Record<string, string | string[] | undefined>) {
  const fromUrl = param(params, 'range');
  const { name, fitted } = isRangeName(fromUrl) ? { name: fromUrl, fitted: false } : await savedRange();
  return { name, fitted, ...rangeWindow(name) };
}
