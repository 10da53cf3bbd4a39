// History cursors in URLs: `<ISO time>_<id>`, the keyset the store pages by.

export function formatCursor(at: Date, id: number): string {
  return `${at.toISOString()}_${id}`;
}

export function parseCursor(v: string | undefined): { at: Date; id: number } | undefined {
  const m = v?.match(/^(.+)_(\d+)$/);
  if (!m) return undefined;
  const at = new Date(m[1]!);
  const id = Number(m[2]);
  return Number.isNaN(at.getTime()) || !Number.isSafeInteger(id) ? undefined : { at, id };
}
