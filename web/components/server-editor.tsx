'use client';
// Add or edit a server. Typing the URL detects its protocol (detection in the editor:
// docs/protocol.md#detection-in-the-editor): after a 1.5 s pause, at once on paste or leaving the
// field, again when a credential changes; never while an existing server's URL is untouched. Then
// it offers Newest supported or pinned revisions, each at a depth: a handshake, or the conformance
// checks of the era it negotiates. A new server is a URL (HTTP) or a Command (stdio, issue 20:
// command-fields.tsx); an existing one stays what it is.
import { useCallback, useEffect, useRef, useState, useTransition } from 'react';
import { type Depth, type DetectAnswer, detectProtocol, type HeaderInput, saveServer } from '../app/servers/actions';
import { argList, CommandFields, type CommandState, commandAllowed } from './command-fields';
import { DetectionCause, type DetectionEntry, DetectionTable } from './detection-table';
import { type SecretRow, SecretRows } from './secret-rows';
import { urlLooksComplete } from './url-looks-complete';

const PAUSE_MS = 1_500;

export interface EditorInitial {
  id?: string;
  name: string;
  url: string;
  /** Stored header names; their values stay on the server. */
  headerNames: string[];
  regions: string[];
  interval: string;
  timeout: string;
  tests: string[];
  /** Each ticked revision's depth when it is not a handshake alone. */
  depths?: Record<string, DepthChoice>;
  /** A stdio server's command (its env by names: values stay on the server). */
  command?: { command: string; args: string[]; envNames: string[]; cwd: string };
}

/** A revision's tests: a handshake, a conformance test, or both (two tests, each on its own interval). */
export type DepthChoice = Depth | 'both';

type Detection = { state: 'idle' } | { state: 'detecting' } | { state: 'done'; answer: DetectAnswer };

export function ServerEditor({
  initial,
  fleetRegions,
  revisions,
  stdioCommands,
}: {
  initial: EditorInitial;
  fleetRegions: string[];
  revisions: { revision: string; label: string }[];
  /** Per region, the stdio commands some live agent allows (control's /api/stdio-commands). */
  stdioCommands: Record<string, string[]>;
}) {
  const editing = initial.id !== undefined;
  const [mode, setMode] = useState<'url' | 'command'>(initial.command ? 'command' : 'url');
  const [command, setCommand] = useState<CommandState>({
    command: initial.command?.command ?? '',
    args: initial.command?.args.join('\n') ?? '',
    env: (initial.command?.envNames ?? []).map((n) => ({ name: n, value: '', stored: true })),
    cwd: initial.command?.cwd ?? '',
  });
  const [name, setName] = useState(initial.name);
  const [url, setUrl] = useState(initial.url);
  const [headers, setHeaders] = useState<SecretRow[]>(
    initial.headerNames.map((n) => ({ name: n, value: '', stored: true })),
  );
  const [regions, setRegions] = useState<string[]>(initial.regions);
  const [interval, setInterval] = useState(initial.interval);
  const [timeout, setTimeout_] = useState(initial.timeout);
  const [tests, setTests] = useState<string[]>(initial.tests);
  const [depths, setDepths] = useState<Record<string, DepthChoice>>(initial.depths ?? {});
  const [detection, setDetection] = useState<Detection>({ state: 'idle' });
  const [error, setError] = useState<string | null>(null);
  const [saving, startSaving] = useTransition();
  const urlTouched = useRef(!editing);
  const seq = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const lastDetected = useRef<string | null>(null);

  const detect = useCallback(
    async (target: string, hs: HeaderInput[]) => {
      clearTimeout(timer.current);
      if (!urlTouched.current || !urlLooksComplete(target)) return;
      const mine = ++seq.current;
      lastDetected.current = `${target}\n${JSON.stringify(hs)}`;
      setDetection({ state: 'detecting' });
      const answer = await detectProtocol({ url: target, headers: hs, serverId: initial.id }).catch(
        (err: unknown): DetectAnswer => ({ ok: false, error: err instanceof Error ? err.message : String(err) }),
      );
      if (mine !== seq.current) return; // a newer URL is being detected
      setDetection({ state: 'done', answer });
      if (answer.ok && answer.detection.outcome === 'DETECTED' && !editing)
        setTests((t) => (t.includes('newest') ? t : ['newest', ...t]));
    },
    [initial.id, editing],
  );
  const plainHeaders = (hs: typeof headers): HeaderInput[] => hs.map(({ name: n, value }) => ({ name: n, value }));
  const later = (target: string, hs: HeaderInput[]) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => void detect(target, hs), PAUSE_MS);
  };
  useEffect(() => () => clearTimeout(timer.current), []);

  const onUrl = (value: string) => {
    urlTouched.current = true;
    setUrl(value);
    later(value.trim(), plainHeaders(headers));
  };
  const now = (value: string) => {
    const key = `${value.trim()}\n${JSON.stringify(plainHeaders(headers))}`;
    if (key !== lastDetected.current) void detect(value.trim(), plainHeaders(headers));
  };
  const setHeader = (i: number, change: Partial<HeaderInput>) => {
    const next = headers.map((h, j) => (j === i ? { ...h, ...change } : h));
    setHeaders(next);
    // A changed credential detects again (docs/protocol.md#detection-in-the-editor).
    later(url.trim(), plainHeaders(next));
  };
  const toggle = (list: string[], value: string, on: boolean) =>
    on ? [...list.filter((v) => v !== value), value] : list.filter((v) => v !== value);

  const answer = detection.state === 'done' ? detection.answer : null;
  const found = answer?.ok && answer.detection.outcome === 'DETECTED' ? answer.detection : null;
  const supported = new Set(
    (found?.revisions as DetectionEntry[] | undefined)?.filter((r) => r.supported).map((r) => r.revision) ?? [],
  );

  // The regions the server runs in (none ticked: all), and what some live agent of them allows.
  const chosenRegions = regions.length ? regions : fleetRegions;
  const allowed = [...new Set(chosenRegions.flatMap((r) => stdioCommands[r] ?? []))].sort();
  // A stored stdio server left on its command and regions can still be saved (control refuses only a
  // change of either), so its interval can change while its agents are down.
  const unmoved =
    initial.command?.command === command.command && JSON.stringify(initial.regions) === JSON.stringify(regions);
  const blocked = mode === 'command' && !commandAllowed(command, allowed) && !unmoved;

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    setError(null);
    if (blocked) {
      setError('Choose a command some live agent of the chosen regions allows.');
      return;
    }
    startSaving(async () => {
      const res = await saveServer({
        id: initial.id,
        name,
        url: mode === 'url' ? url : '',
        headers: mode === 'url' ? plainHeaders(headers) : [],
        ...(mode === 'command'
          ? { command: { command: command.command, args: argList(command.args), env: command.env, cwd: command.cwd } }
          : {}),
        regions,
        interval,
        timeout,
        tests: tests.flatMap((revision) => {
          const depth = depths[revision] ?? 'handshake';
          return depth === 'both'
            ? [
                { revision, depth: 'handshake' as const },
                { revision, depth: 'conformance' as const },
              ]
            : [{ revision, depth }];
        }),
      });
      if (res && !res.ok) setError(res.error);
    });
  };

  return (
    <form className="editor" onSubmit={submit} aria-label={editing ? 'Edit server' : 'Add server'}>
      {!editing && (
        <label>
          Name
          <input
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="orders-mcp"
            maxLength={100}
          />
        </label>
      )}
      {!editing && (
        // The drift chart's segmented buttons, not radios: the URL field keeps the only label that says URL.
        <div>
          <fieldset className="segmented" aria-label="Server kind" style={{ margin: 0, padding: 0 }}>
            <button type="button" aria-pressed={mode === 'url'} onClick={() => setMode('url')}>
              URL
            </button>
            <button type="button" aria-pressed={mode === 'command'} onClick={() => setMode('command')}>
              Command
            </button>
          </fieldset>
          <p className="help">An HTTP server by its URL, or a stdio server an agent starts as a process.</p>
        </div>
      )}
      {mode === 'command' && (
        <CommandFields value={command} onChange={setCommand} allowed={allowed} regions={chosenRegions} />
      )}
      {mode === 'url' && (
        <>
          <label>
            URL
            <input
              required
              type="url"
              name="url"
              value={url}
              placeholder="https://mcp.example.com/mcp"
              onChange={(e) => onUrl(e.target.value)}
              onPaste={(e) => {
                const pasted = e.clipboardData.getData('text');
                const el = e.currentTarget;
                // Detect at once with what the field holds after the paste.
                requestAnimationFrame(() => {
                  urlTouched.current = true;
                  now(el.value || pasted);
                });
              }}
              onBlur={(e) => urlTouched.current && now(e.target.value)}
              aria-describedby="detection-status"
            />
          </label>

          <fieldset>
            <legend>Headers (credentials)</legend>
            {headers.length === 0 && <p className="help">None. Add one for a bearer token or an API key.</p>}
            <SecretRows
              rows={headers}
              onEdit={setHeader}
              onRows={setHeaders}
              words={{ name: 'Name', noun: 'header', namePlaceholder: 'Authorization', valuePlaceholder: 'Bearer …' }}
            />
          </fieldset>

          <section id="detection-status" aria-live="polite" data-testid="detection">
            {detection.state === 'detecting' && <p className="notice">Detecting protocol…</p>}
            {answer && !answer.ok && (
              <p className="notice error">
                Detection failed. <span className="muted">{answer.error}</span>
              </p>
            )}
            {answer?.ok && answer.detection.outcome === 'NONE' && (
              <DetectionCause
                cause={answer.detection.cause}
                revisions={answer.detection.revisions as DetectionEntry[]}
              />
            )}
            {answer?.ok && answer.detection.outcome === 'NONE' && !answer.detection.cause && (
              <p className="notice">This URL did not identify itself as an MCP server on any revision.</p>
            )}
            {answer?.ok && answer.detection.outcome === 'RATE_LIMITED' && (
              <p className="notice">The server rate-limited the detection (HTTP 429); try again later.</p>
            )}
            {answer?.ok && answer.detection.revisions.length > 0 && answer.detection.outcome !== 'RATE_LIMITED' && (
              <DetectionTable revisions={answer.detection.revisions as DetectionEntry[]} />
            )}
            {answer && (
              <button
                type="button"
                className="link-button"
                onClick={() => {
                  urlTouched.current = true;
                  void detect(url.trim(), plainHeaders(headers));
                }}
              >
                Detect again
              </button>
            )}
          </section>
        </>
      )}

      <fieldset>
        <legend>Protocol revision</legend>
        <p className="help">
          Newest supported runs against the newest protocol revision the server speaks and moves with it when the server
          changes. A dated revision pins the test and it fails if the server stops accepting it.
        </p>
        <div className="test-choice">
          <label className="check">
            <input
              type="checkbox"
              checked={tests.includes('newest')}
              onChange={(e) => setTests(toggle(tests, 'newest', e.target.checked))}
            />
            Newest supported
            {found?.newestSupported ? <span className="muted">currently {found.newestSupported}</span> : null}
          </label>
          {tests.includes('newest') && <DepthSelect revision="newest" depths={depths} onChange={setDepths} />}
        </div>
        {revisions.map((r) => (
          <div className="test-choice" key={r.revision}>
            <label className="check">
              <input
                type="checkbox"
                checked={tests.includes(r.revision)}
                onChange={(e) => setTests(toggle(tests, r.revision, e.target.checked))}
              />
              {r.label}
              {found && !supported.has(r.revision) ? <span className="muted">(not supported now)</span> : null}
            </label>
            {tests.includes(r.revision) && <DepthSelect revision={r.revision} depths={depths} onChange={setDepths} />}
          </div>
        ))}
        <p className="help">
          {mode === 'url'
            ? 'Saving a pinned test runs it once first; it is saved only if it passes.'
            : 'A stdio server’s pinned test is not tried first: control never starts a command, its agents do.'}
        </p>
        <p className="help">
          Depth: a handshake opens a conversation at the revision; conformance opens it, then runs the checks a client
          on that era relies on (MUST and SHOULD rules, bad-input probes), every 15 minutes by default. Both makes two
          tests: the quick handshake on the server's interval and the conformance run on its own.
        </p>
      </fieldset>

      <fieldset>
        <legend>Regions</legend>
        <p className="help">None ticked: every region of the fleet.</p>
        {fleetRegions.map((r) => (
          <label className="check" key={r}>
            <input
              type="checkbox"
              checked={regions.includes(r)}
              onChange={(e) => setRegions(toggle(regions, r, e.target.checked))}
            />
            {r}
          </label>
        ))}
      </fieldset>

      <div className="row">
        <label>
          Interval
          <input value={interval} onChange={(e) => setInterval(e.target.value)} placeholder="60s" size={8} />
        </label>
        <label>
          Timeout
          <input value={timeout} onChange={(e) => setTimeout_(e.target.value)} placeholder="10s" size={8} />
        </label>
      </div>

      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={saving || blocked}>
          {saving
            ? mode === 'url' && tests.some((t) => t !== 'newest')
              ? 'Saving (running the pinned tests)…'
              : 'Saving…'
            : 'Save'}
        </button>
      </div>
    </form>
  );
}

/** A ticked revision's depth. */
function DepthSelect({
  revision,
  depths,
  onChange,
}: {
  revision: string;
  depths: Record<string, DepthChoice>;
  onChange: (next: Record<string, DepthChoice>) => void;
}) {
  return (
    <label className="depth">
      <span className="muted">Depth</span>
      <select
        aria-label={`Depth (${revision})`}
        value={depths[revision] ?? 'handshake'}
        onChange={(e) => onChange({ ...depths, [revision]: e.target.value as DepthChoice })}
      >
        <option value="handshake">handshake</option>
        <option value="conformance">conformance</option>
        <option value="both">handshake and conformance (two tests)</option>
      </select>
    </label>
  );
}
