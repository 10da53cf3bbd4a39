// Control's own probes (a pin's first run, /api/detect) dial through a guarded dispatcher, as
// agents do, under control's floor narrowed by the fleet's policy: checkTarget judges address
// literals, the dispatcher what a name resolves to.
import { guardedDispatcher, handshake, isPassing, type Revision, type TargetPolicy } from '@mcp-fleet/probe';
import { serverHasSpoken } from '@mcp-fleet/store';
import { HttpError } from '../http';
import type { ApiContext } from './context';

/** A URL the policy refuses (by its address literal) is the request's to fix: 400. */
export function checkTarget(url: string, policy: TargetPolicy): void {
  const refused = policy.refusesUrl(new URL(url));
  if (refused) throw new HttpError(400, `url: ${refused}`);
}

export class OwnProbes {
  readonly #ctx: ApiContext;
  readonly #guarded = new WeakMap<TargetPolicy, ReturnType<typeof guardedDispatcher>>();

  constructor(ctx: ApiContext) {
    this.#ctx = ctx;
  }

  /** The dispatcher for the probe policy in force (one per policy: a new apply makes a new one). */
  dispatcher(): ReturnType<typeof guardedDispatcher> {
    const policy = this.#ctx.probePolicy();
    let d = this.#guarded.get(policy);
    if (!d) {
      d = guardedDispatcher(policy);
      this.#guarded.set(policy, d);
    }
    return d;
  }

  /**
   * Saving a pinned test (docs/protocol.md#saving-a-pinned-test) runs it once first; it is saved
   * only if it passes. Its failure says the server "no longer" speaks the pin only if the server's
   * history shows it once did.
   */
  async runPinFirst(
    url: string,
    headers: Record<string, string>,
    timeoutMs: number,
    revision: Revision,
    serverId?: string,
  ): Promise<void> {
    const spoken = serverId !== undefined && (await serverHasSpoken(this.#ctx.db, serverId, revision));
    const run = await handshake(url, {
      revision,
      headers,
      timeoutMs,
      dispatcher: this.dispatcher(),
      ...(spoken ? { current: revision } : {}),
    });
    if (!isPassing(run.outcome)) throw new PinRefused(revision, run);
  }
}

/** A pinned test that does not pass today cannot be saved (docs/protocol.md#saving-a-pinned-test). */
export class PinRefused extends HttpError {
  constructor(
    revision: string,
    readonly run: Awaited<ReturnType<typeof handshake>>,
  ) {
    super(
      422,
      `the pinned test did not pass, so it was not saved: ${run.message} (outcome ${run.outcome}, revision ${revision})`,
    );
  }
}
