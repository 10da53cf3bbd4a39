// Reads a text/event-stream body with bounds: total bytes, event count and a per-wait deadline.
// Parsing is eventsource-parser's (a well-kept, spec-following parser); this file only adds the
// bounds a monitor needs against servers it does not control.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  /** The event type; the SSE default `message` when the server named none. */
  event: string;
  data: string;
}

export interface SseBounds {
  maxBytes: number;
  maxEvents: number;
}

export const DEFAULT_SSE_BOUNDS: SseBounds = { maxBytes: 1024 * 1024, maxEvents: 1000 };

export type SseWait = SseEvent | 'end' | 'timeout' | 'overflow';

export class SseReader {
  readonly #queue: SseEvent[] = [];
  readonly #bounds: SseBounds;
  readonly #body: AsyncIterable<Uint8Array> & { destroy?: (err?: Error) => void };
  #bytes = 0;
  #events = 0;
  #state: 'open' | 'end' | 'overflow' = 'open';
  #wake: (() => void) | undefined;
  /** The first bytes of the stream, kept for evidence. */
  preview = '';

  constructor(body: AsyncIterable<Uint8Array> & { destroy?: (err?: Error) => void }, bounds = DEFAULT_SSE_BOUNDS) {
    this.#body = body;
    this.#bounds = bounds;
    void this.#pump();
  }

  async #pump(): Promise<void> {
    const decoder = new TextDecoder();
    const parser = createParser({
      maxBufferSize: this.#bounds.maxBytes,
      onEvent: (e: EventSourceMessage) => {
        this.#events += 1;
        if (this.#events > this.#bounds.maxEvents) return this.#stop('overflow');
        this.#queue.push({ event: e.event ?? 'message', data: e.data });
        this.#notify();
      },
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') this.#stop('overflow');
      },
    });
    try {
      for await (const chunk of this.#body) {
        if (this.#state !== 'open') break;
        this.#bytes += chunk.byteLength;
        const text = decoder.decode(chunk, { stream: true });
        if (this.preview.length < 512) this.preview += text.slice(0, 512 - this.preview.length);
        if (this.#bytes > this.#bounds.maxBytes) {
          this.#stop('overflow');
          break;
        }
        parser.feed(text);
      }
    } catch {
      // A reset or abort ends the stream like a close: the waiter sees 'end'.
    }
    if (this.#state === 'open') this.#state = 'end';
    this.#notify();
  }

  #stop(state: 'overflow'): void {
    this.#state = state;
    this.close();
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** The next event, or why there is none: the stream ended, overflowed its bounds, or the wait ran out. */
  async next(waitMs: number): Promise<SseWait> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const event = this.#queue.shift();
      if (event) return event;
      if (this.#state !== 'open') return this.#state;
      const left = deadline - Date.now();
      if (left <= 0) return 'timeout';
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  close(): void {
    try {
      this.#body.destroy?.();
    } catch {
      // already closed
    }
  }
}
