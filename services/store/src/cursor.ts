// History cursors: a page of runs or era moves ends at a (time, id) keyset, and the next page
// starts before it. One format for the API's `next` and the dashboard's "Older" links: base64url
// of `<ISO time>|<id>`, opaque to clients.

/** A time Postgres can compare with (years 1 to 9999; further out, its ISO form does not parse there). */
export function storableTime(d: Date): boolean {
  const year = d.getUTCFullYear();
  return !Number.isNaN(d.getTime()) && year >= 1 && year <= 9999;
}

export function encodeCursor(at: Date, id: number): string {
  return Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');
}

/** The keyset a cursor names, or undefined when the text is not a cursor `encodeCursor` gave. */
export function decodeCursor(text: string | undefined): { at: Date; id: number } | undefined {
  if (text === undefined) return undefined;
  const [at = '', id = ''] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const time = new Date(at);
  const n = Number(id);
  return storableTime(time) && Number.isSafeInteger(n) && n >= 0 ? { at: time, id: n } : undefined;
}
