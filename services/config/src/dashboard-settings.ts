// What the dashboard is started with, besides its database and control's address: the same in
// web's startDashboard and in the monitor that starts it for `up` and the tests.
import type { SignInSettings } from './roles';

export interface DashboardSettings {
  port: number;
  host?: string | undefined;
  /** The dashboard's token for control (admin scope to change the fleet); never sent to a browser. */
  apiToken?: string | undefined;
  /** Who may sign in (the password, the API tokens, the session key), and the host names served with sign-in off. */
  signIn: SignInSettings;
  allowedHosts: readonly string[];
  /** MCP_FLEET_TRACE_URL: a trace UI link for runs. */
  traceUrl?: string | undefined;
  log?: ((msg: string) => void) | undefined;
}
