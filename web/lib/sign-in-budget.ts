// Failed sign-ins are rationed: at most FAILED_SIGN_INS_PER_MINUTE in any minute, after which the
// form is refused (a correct password too) until the oldest failure leaves the window. With the
// 400 ms pause per failure and a password of 12+ characters, guessing is hopeless either way.
//
// The budget is the dashboard's, not a client's: Next does not tell a route the client's address,
// and X-Forwarded-For says whatever the client likes unless a proxy we cannot see set it. So
// under attack everyone waits out the minute: a short lockout, never a way in.
export const FAILED_SIGN_INS_PER_MINUTE = 10;
const WINDOW_MS = 60_000;

export interface SignInBudget {
  /** Milliseconds until a sign-in may be tried again; 0 = now. */
  wait(now?: number): number;
  failed(now?: number): void;
}

export function signInBudget(limit = FAILED_SIGN_INS_PER_MINUTE, windowMs = WINDOW_MS): SignInBudget {
  const failures: number[] = [];
  const forgetOld = (now: number) => {
    while (failures.length > 0 && failures[0]! <= now - windowMs) failures.shift();
  };
  return {
    wait(now = Date.now()) {
      forgetOld(now);
      return failures.length < limit ? 0 : failures[0]! + windowMs - now;
    },
    failed(now = Date.now()) {
      forgetOld(now);
      failures.push(now);
    },
  };
}

const KEY = Symbol.for('mcp-fleet.web.sign-in-budget');

/** The process's budget (kept on globalThis: every route bundle must share one). */
export function sharedSignInBudget(): SignInBudget {
  const g = globalThis as unknown as Record<symbol, SignInBudget | undefined>;
  g[KEY] ??= signInBudget();
  return g[KEY];
}
