// Newline-delimited framing of a child's stdout (the MCP stdio transport: one JSON-RPC message per
// line), read under two caps. Hand-written rather than the SDKs' ReadBuffer: that buffer holds a
// line until its newline (up to 10 MB) and throws on a line that is not a valid message, while a
// probe reading a hostile process must hold at most one capped line, drop the rest of an overlong
// one unread, keep non-JSON lines as findings rather than errors, and count every byte the process
// ever wrote to stop a flood. It is small; the caps are the point of it.

export interface Line {
  /** The line without its newline, at most `maxLineBytes` of it (decoded as UTF-8). */
  text: string;
  /** The line was longer than `maxLineBytes`: `text` is its beginning, the rest was dropped. */
  cut: boolean;
}

export class LineReader {
  /** Every byte pushed so far. */
  total = 0;
  readonly #maxLineBytes: number;
  #parts: Buffer[] = [];
  #held = 0;
  #cut = false;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /** The complete lines in `chunk` (with what was held before it); an unfinished line is held, within its cap. */
  push(chunk: Buffer): Line[] {
    this.total += chunk.byteLength;
    const lines: Line[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      this.#hold(chunk.subarray(start, nl));
      lines.push(this.#take());
      start = nl + 1;
    }
    if (start < chunk.byteLength) this.#hold(chunk.subarray(start));
    return lines;
  }

  #hold(bytes: Buffer): void {
    const room = this.#maxLineBytes - this.#held;
    if (bytes.byteLength > room) this.#cut = true;
    const kept = bytes.byteLength > room ? bytes.subarray(0, Math.max(0, room)) : bytes;
    if (kept.byteLength === 0) return;
    // Copied: a subarray would keep the whole chunk alive while only its head is needed.
    this.#parts.push(Buffer.from(kept));
    this.#held += kept.byteLength;
  }

  #take(): Line {
    let text = Buffer.concat(this.#parts, this.#held).toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    const line = { text, cut: this.#cut };
    this.#parts = [];
    this.#held = 0;
    this.#cut = false;
    return line;
  }
}
