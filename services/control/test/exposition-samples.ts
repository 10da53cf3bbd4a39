// Sample lines of the Prometheus text format read back strictly (a line that is not one fails).

/** Every sample line as [name, labels, value], parsed the way the text format is. */
export function samples(text: string) {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-z_]+)\{((?:[a-z_]+="(?:[^"\\]|\\.)*",?)*)\} (\S+)$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      const labels = Object.fromEntries(
        [...m[2]!.matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [
          x[1],
          x[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)),
        ]),
      );
      return [m[1], labels, m[3]] as const;
    });
}
