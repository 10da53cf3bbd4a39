'use client';
// The editor's Command mode (issue 20): a stdio server's program, arguments, environment and
// working directory. The program is chosen among those some live agent of the chosen regions
// allows (their heartbeats say which), so the form offers nothing an agent would refuse to start;
// control's API checks it again, since the browser is not the boundary.
import type { HeaderInput } from '../app/servers/actions';
import { type SecretRow, SecretRows } from './secret-rows';

export interface CommandState {
  command: string;
  /** One argument per line (an argument may hold spaces; no shell reads them). */
  args: string;
  env: SecretRow[];
  cwd: string;
}

/** The agents' setting, as their refusals name it. */
const SETTING = '--stdio-commands / MCP_FLEET_STDIO_COMMANDS';

export function CommandFields({
  value,
  onChange,
  allowed,
  regions,
}: {
  value: CommandState;
  onChange: (next: CommandState) => void;
  /** Commands some live agent of `regions` allows. */
  allowed: string[];
  regions: string[];
}) {
  const set = (change: Partial<CommandState>) => onChange({ ...value, ...change });
  const setEnv = (i: number, change: Partial<HeaderInput>) =>
    set({ env: value.env.map((e, j) => (j === i ? { ...e, ...change } : e)) });
  const where = `${regions.length === 1 ? 'region' : 'regions'} ${regions.join(', ')}`;
  const offAllowlist = value.command !== '' && !allowed.includes(value.command);
  return (
    <>
      <label>
        Command
        <select
          name="command"
          required
          value={value.command}
          disabled={allowed.length === 0 && value.command === ''}
          onChange={(e) => set({ command: e.target.value })}
          aria-describedby="command-allowed"
        >
          <option value="">{allowed.length ? 'Choose a command an agent allows' : 'No command allowed'}</option>
          {/* A stored command no agent allows now stays shown (and refused), so the form does not change it silently. */}
          {[...allowed, ...(offAllowlist ? [value.command] : [])].map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <div id="command-allowed" data-testid="command-allowed">
        {allowed.length === 0 ? (
          <p className="notice error">
            No live agent of {where} allows a stdio command, so a stdio server cannot be saved here. Name the program in
            an agent&apos;s {SETTING} there, or choose other regions.
          </p>
        ) : offAllowlist ? (
          <p className="notice error">
            No live agent of {where} allows {value.command}; choose one they allow: {allowed.join(', ')}.
          </p>
        ) : (
          <p className="help">
            Agents of {where} allow: {allowed.join(', ')}. Only these can run; an agent starts nothing else.
          </p>
        )}
      </div>
      <label>
        Arguments
        <textarea
          name="args"
          rows={3}
          value={value.args}
          onChange={(e) => set({ args: e.target.value })}
          placeholder={'server.js\n--stdio'}
        />
      </label>
      <p className="help">One argument per line, passed as given (no shell).</p>
      <fieldset>
        <legend>Environment</legend>
        <p className="help">
          The process gets only these variables (none of the agent&apos;s). Values are stored sealed and never shown.
        </p>
        <SecretRows
          rows={value.env}
          onEdit={setEnv}
          onRows={(env) => set({ env })}
          words={{ name: 'Variable', noun: 'variable', namePlaceholder: 'API_KEY', valuePlaceholder: '' }}
        />
      </fieldset>
      <label>
        Working directory
        <input
          name="cwd"
          value={value.cwd}
          onChange={(e) => set({ cwd: e.target.value })}
          placeholder="(a fresh empty one per process)"
        />
      </label>
      <p className="help">Relative to the agent&apos;s --stdio-root; empty: a fresh empty directory per process.</p>
    </>
  );
}

/** Whether a command can be saved: one some live agent of the chosen regions allows. */
export function commandAllowed(value: CommandState, allowed: string[]): boolean {
  return value.command !== '' && allowed.includes(value.command);
}

/** The arguments as a list: one per line, blank lines dropped. */
export function argList(args: string): string[] {
  return args.split('\n').filter((a) => a !== '');
}
