// mcp-fleet check without a server: its arguments (usage errors are exit 2, before any request),
// and its four renderings of a run (table, --json, --junit, --format conformance) from hand-built
// runs. The runs against real servers are in check-run.test.ts.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type CheckResult, type ConformanceRun, type Evidence, tally } from '@mcp-fleet/probe';
import { describe, expect, it } from 'vitest';
import { conformanceProtocol } from '../src/args';
import { checkJson, failuresFirst, formatCheckRun, terminalText } from '../src/check-report';
import { officialChecks } from '../src/conformance-format';
import { checkExit } from '../src/exit-status';
import { junitReport, xmlAttr, xmlText } from '../src/junit';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));

function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

const evidence = (over: Partial<Evidence> = {}): Evidence => ({
  status: 200,
  contentType: 'application/json',
  bodyPreview: null,
  jsonRpcErrorCode: -32002,
  jsonRpcErrorMessage: 'Resource not found',
  millis: 3,
  reachabilityFailure: null,
  message: 'resources/read: answered -32002',
  ...over,
});

const check = (
  id: CheckResult['id'],
  level: CheckResult['level'],
  status: CheckResult['status'],
  message: string,
  more: Partial<CheckResult> = {},
): CheckResult => ({ id, level, status, message, millis: 4, requests: 1, ...more });

/** A modern run with one of each: MUST failure, SHOULD failure, passes, a skip; in table order. */
function modernRun(over: Partial<ConformanceRun> = {}): ConformanceRun {
  return {
    target: 'http://127.0.0.1:7404/mcp',
    protocol: { requested: 'auto', negotiated: '2026-07-28', era: 'modern' },
    pass: false,
    outcome: 'success',
    message: 'connected on 2026-07-28',
    serverInfo: { name: 'modern', version: '2.4.0' },
    checks: [
      check('discover_succeeds', 'MUST', 'pass', 'supportedVersions lists 2026-07-28'),
      check('discover_server_info', 'SHOULD', 'fail', 'no serverInfo in _meta'),
      check('cache_scope_consistent_across_pages', 'MUST', 'skip', 'no list returned a nextCursor'),
      check('resource_not_found_error', 'MUST', 'fail', 'a missing resource got -32002', {
        evidence: evidence(),
      }),
      check('no_session_id', 'SHOULD', 'pass', 'no Mcp-Session-Id header'),
    ],
    requests: 31,
    millis: 120,
    evidence: null,
    ...over,
  };
}

/** A run whose connection was refused: no check ran. */
function refusedRun(): ConformanceRun {
  return {
    target: 'http://127.0.0.1:9/mcp',
    protocol: { requested: 'auto', negotiated: null, era: null },
    pass: false,
    outcome: 'unreachable',
    message: 'unreachable: the connection was refused',
    serverInfo: null,
    checks: [],
    requests: 1,
    millis: 2,
    evidence: evidence({
      status: null,
      contentType: null,
      jsonRpcErrorCode: null,
      jsonRpcErrorMessage: null,
      reachabilityFailure: 'connection_refused',
      message: 'server/discover: the connection was refused',
    }),
  };
}

describe('mcp-fleet check: arguments', () => {
  it('--protocol: auto by default, legacy, or a revision', () => {
    expect(conformanceProtocol(undefined)).toBe('auto');
    expect(conformanceProtocol('auto')).toBe('auto');
    expect(conformanceProtocol('legacy')).toBe('legacy');
    expect(conformanceProtocol('2025-06-18')).toBe('2025-06-18');
    expect(() => conformanceProtocol('newest')).toThrow(/--protocol takes auto, legacy or one of 2024-11-05/);
  });

  // Each is refused before any request (port 9 is never asked: the runner is not even called).
  const cases: [string, string[], RegExp][] = [
    ['no URL', ['check'], /check needs a URL/],
    ['a URL that is not one', ['check', 'not a url'], /not a URL/],
    ['another scheme', ['check', 'ftp://127.0.0.1/'], /must be http/],
    ['a bad --protocol', ['check', 'http://127.0.0.1:9/', '--protocol', '2030-01-01'], /--protocol takes auto, legacy/],
    ['--protocol without a value', ['check', 'http://127.0.0.1:9/', '--protocol'], /--protocol needs a value/],
    ['--junit without a file', ['check', 'http://127.0.0.1:9/', '--junit'], /--junit needs a value/],
    [
      '--junit swallowing the next flag',
      ['check', 'http://127.0.0.1:9/', '--junit', '--json'],
      /--junit needs a value, and the next argument starts with "-"/,
    ],
    ['--junit=', ['check', 'http://127.0.0.1:9/', '--junit='], /--junit needs a file name/],
    [
      '--junit to a directory that does not exist',
      ['check', 'http://127.0.0.1:9/', '--junit', '/nonexistent-mcp-fleet-dir/report.xml'],
      /--junit \/nonexistent-mcp-fleet-dir\/report.xml: ENOENT/,
    ],
    ['another --format', ['check', 'http://127.0.0.1:9/', '--format', 'tap'], /--format takes conformance, got tap/],
    [
      '--json with --format conformance',
      ['check', 'http://127.0.0.1:9/', '--json', '--format', 'conformance'],
      /--json and --format conformance are two outputs/,
    ],
    ['--no-probe given a value', ['check', 'http://127.0.0.1:9/', '--no-probe=yes'], /--no-probe takes no value/],
    ['a flag of another verb', ['check', 'http://127.0.0.1:9/', '--revision', 'newest'], /unknown option --revision/],
    [
      'a header name alone (never a value: it is a credential)',
      ['check', 'http://127.0.0.1:9/', '--header', 'Authorization'],
      /--header 'Authorization': missing ':' and value/,
    ],
    ['two URLs', ['check', 'http://127.0.0.1:9/', 'http://127.0.0.1:10/'], /unexpected argument/],
  ];
  it.concurrent.each(cases)('%s: exit 2, one line and a pointer', async (_what, args, message) => {
    const r = await run(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^mcp-fleet check: /);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(/\nsee mcp-fleet check --help\n$/);
    expect(r.stdout).toBe('');
  });

  it('--help prints the contract and its exit codes', async () => {
    const r = await run('check', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^Usage:\n {2}mcp-fleet check <url> \[--protocol legacy\|auto\|<revision>\] \[--header 'Name: value'\]\.\.\.\n\s+\[--no-probe\] \[--json\] \[--junit FILE\] \[--format conformance\]/,
    );
    expect(r.stdout).toMatch(/^ {2}1 {3}a MUST check failed, or the connection did not open/m);
    const all = await run('--help');
    expect(all.stdout).toContain('mcp-fleet check <url>');
  });
});

describe('mcp-fleet check: exit status', () => {
  it('is 0 when the run passes, 1 when a MUST failed or it could not connect', () => {
    expect(checkExit(modernRun({ pass: true }))).toBe(0);
    expect(checkExit(modernRun())).toBe(1);
    expect(checkExit(refusedRun())).toBe(1);
  });
});

describe('mcp-fleet check: the table', () => {
  it('orders MUST failures, then warnings, then passes, then skips (table order within each)', () => {
    expect(failuresFirst(modernRun().checks).map((c) => c.id)).toEqual([
      'resource_not_found_error',
      'discover_server_info',
      'discover_succeeds',
      'no_session_id',
      'cache_scope_consistent_across_pages',
    ]);
  });

  it('prints the header, the verdict with counts, and Check · Level · Result · Message failures first', () => {
    const text = formatCheckRun(modernRun());
    expect(text).toMatch(/^Target {4}http:\/\/127\.0\.0\.1:7404\/mcp$/m);
    expect(text).toMatch(/^Protocol {2}auto → 2026-07-28 \(modern\)$/m);
    expect(text).toMatch(/^Server {4}modern 2\.4\.0$/m);
    expect(text).toMatch(
      /^Verdict {3}FAIL · 2 passed · 1 MUST failed · 1 warning · 1 skipped · 31 requests in 120 ms$/m,
    );
    const rows = text.split('\n\n')[1]!.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^Check\s+Level\s+Result\s+Message$/);
    expect(rows[1]).toMatch(/^resource_not_found_error\s+MUST\s+FAIL\s+a missing resource got -32002$/);
    expect(rows[2]).toBe(
      '  └ HTTP 200, application/json · JSON-RPC -32002 Resource not found · resources/read: answered -32002',
    );
    expect(rows[3]).toMatch(/^discover_server_info\s+SHOULD\s+WARN\s+no serverInfo in _meta$/);
    expect(rows[4]).toMatch(/^discover_succeeds\s+MUST\s+pass\s/);
    expect(rows[5]).toMatch(/^no_session_id\s+SHOULD\s+pass\s/);
    expect(rows[6]).toMatch(/^cache_scope_consistent_across_pages\s+MUST\s+skip\s+no list returned a nextCursor$/);
  });

  it('a passing run says PASS', () => {
    const passing = modernRun({
      pass: true,
      checks: modernRun().checks.filter((c) => !(c.status === 'fail' && c.level === 'MUST')),
    });
    expect(formatCheckRun(passing)).toMatch(/^Verdict {3}PASS · 2 passed · 0 MUST failed · 1 warning · 1 skipped/m);
  });

  it('a run that could not connect leads with its cause and what to do, as handshake does', () => {
    const text = formatCheckRun(refusedRun());
    expect(text).toMatch(/^Protocol {2}auto → none$/m);
    expect(text).toMatch(
      /^Outcome {3}unreachable\nCause {5}unreachable: the connection was refused\n {10}Is the server running/m,
    );
    expect(text).toMatch(/^Verdict {3}FAIL · could not connect, no check ran · 1 request in 2 ms$/m);
    expect(text).not.toMatch(/^Check/m);
  });

  it('a run that reached something else says its outcome and message', () => {
    const notMcp: ConformanceRun = {
      ...refusedRun(),
      outcome: 'not_mcp',
      message: 'the target did not identify itself as an MCP server',
      evidence: evidence({
        status: 200,
        contentType: 'text/html',
        jsonRpcErrorCode: null,
        message: 'initialize: HTML',
      }),
    };
    expect(formatCheckRun(notMcp)).toMatch(/^Outcome {3}not_mcp: the target did not identify itself/m);
  });

  it('a hostile message cannot break a row or reach the terminal as a control sequence', () => {
    const hostile = '\u001b[2J\u001b]0;pwned\u0007line one\nline two\r\u202eevil\u0085';
    expect(terminalText(hostile)).toBe('\ufffd[2J\ufffd]0;pwned\ufffdline one line two \ufffdevil\ufffd');
    const text = formatCheckRun(
      modernRun({
        checks: [
          check('resource_not_found_error', 'MUST', 'fail', hostile, {
            evidence: evidence({ jsonRpcErrorMessage: 'x\n\u001b[31mred' }),
          }),
        ],
      }),
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
    expect(text).not.toMatch(/[\u001b\u0007\u0085\u202e\r]/);
    const rows = text.split('\n\n')[1]!.trimEnd().split('\n');
    expect(rows).toHaveLength(3);
  });
});

describe('mcp-fleet check --json', () => {
  it("prints issue 15's keys: target, protocol {requested, negotiated, era}, pass, checks [{id, level, status, message, evidence?}]", () => {
    const json = JSON.parse(JSON.stringify(checkJson(modernRun())));
    expect(Object.keys(json).sort()).toEqual(
      ['target', 'protocol', 'pass', 'checks', 'outcome', 'message', 'requests', 'millis'].sort(),
    );
    expect(json.protocol).toEqual({ requested: 'auto', negotiated: '2026-07-28', era: 'modern' });
    expect(json.pass).toBe(false);
    // In the run's (table) order, not failures first: a script reads ids, not rows.
    expect(json.checks.map((c: { id: string }) => c.id)).toEqual(modernRun().checks.map((c) => c.id));
    expect(Object.keys(json.checks[0]).sort()).toEqual(['id', 'level', 'message', 'status']);
    expect(Object.keys(json.checks[3]).sort()).toEqual(['evidence', 'id', 'level', 'message', 'status']);
    expect(json.checks[3].evidence.jsonRpcErrorCode).toBe(-32002);
  });
});

/** The text of an attribute or element as an XML parser would give it back (the five entities and numeric references). */
function unescapeXml(s: string): string {
  return s
    .replace(/&#(\d+);/g, (_m, n) => String.fromCodePoint(Number(n)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Every tag of the document, in order: a hostile text that opened or closed an element would show here. */
const tags = (xml: string) => [...xml.matchAll(/<\/?([A-Za-z?][\w-]*)/g)].map((m) => m[0]);

describe('mcp-fleet check --junit', () => {
  it('one testsuite, one testcase per check (classname the era, name the id); MUST failures fail, SHOULD failures warn in system-out, skips skip', () => {
    const xml = junitReport(modernRun());
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true);
    expect(xml.match(/<testsuite /g)).toHaveLength(1);
    expect(xml).toMatch(
      /<testsuite name="mcp-fleet check http:\/\/127.0.0.1:7404\/mcp" tests="5" failures="1" skipped="1" errors="0" time="0.120">/,
    );
    expect(xml.match(/<testcase classname="modern" name="/g)).toHaveLength(5);
    expect(xml).toContain('<testcase classname="modern" name="discover_succeeds" time="0.004"/>');
    expect(xml).toMatch(
      /<testcase classname="modern" name="resource_not_found_error" time="0.004">\n\s+<failure message="a missing resource got -32002" type="MUST">a missing resource got -32002\nRule: A missing resource is -32602, not -32002 or empty contents \(2026-07-28 server\/resources: error handling\)\nEvidence: HTTP 200/,
    );
    // A warning does not fail the pipeline: no <failure> in its testcase.
    expect(xml).toMatch(
      /<testcase classname="modern" name="discover_server_info" time="0.004">\n\s+<system-out>WARNING \(SHOULD\): no serverInfo in _meta\nRule: /,
    );
    expect(xml.match(/<failure /g)).toHaveLength(1);
    expect(xml).toContain('<skipped message="no list returned a nextCursor"/>');
  });

  it('a run that could not connect is one failing testcase, so CI does not read "0 tests"', () => {
    const xml = junitReport(refusedRun());
    expect(xml).toMatch(/tests="1" failures="1"/);
    expect(xml).toMatch(
      /<testcase classname="connection" name="connect" time="0.002">\n\s+<failure message="unreachable: the connection was refused" type="unreachable">/,
    );
  });

  it('a hostile server cannot break out of the text it is quoted in: ]]>, <, &, quotes, control characters', () => {
    const markup = ']]></failure></testcase><testcase name="forged"/><![CDATA[ & &amp; "quoted" \'single\' <x/>';
    // Characters XML 1.0 cannot carry (C0 controls, U+FFFE, a lone surrogate) and C1 controls.
    const unrepresentable = [
      '\u0000',
      '\u0001',
      '\u0008',
      '\u000b',
      '\u000c',
      '\u001b',
      '\u007f',
      '\u0085',
      '\ufffe',
      '\ud800',
    ];
    const attack = `${markup}${unrepresentable.join('')}[31m tab\tline\nend`;
    const expected = `${markup}${'\ufffd'.repeat(unrepresentable.length)}[31m tab\tline\nend`;
    const xml = junitReport(
      modernRun({
        target: 'http://127.0.0.1:7404/mcp?x="><evil/>',
        checks: [
          check('resource_not_found_error', 'MUST', 'fail', attack, {
            evidence: evidence({ jsonRpcErrorMessage: attack, bodyPreview: attack }),
          }),
          check('discover_server_info', 'SHOULD', 'fail', attack),
          check('no_session_id', 'SHOULD', 'skip', attack),
        ],
      }),
    );
    // The document's tags are ours alone, in our order.
    expect(tags(xml)).toEqual([
      '<?xml',
      '<testsuites',
      '<testsuite',
      '<properties',
      ...Array(6).fill('<property'),
      '</properties',
      '<testcase',
      '<failure',
      '</failure',
      '</testcase',
      '<testcase',
      '<system-out',
      '</system-out',
      '</testcase',
      '<testcase',
      '<skipped',
      '</testcase',
      '</testsuite',
      '</testsuites',
    ]);
    expect(xml).not.toContain(']]>');
    expect(xml).not.toContain('<![CDATA[');
    // No character XML 1.0 cannot carry, and no C1 control or escape either.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/);
    expect(xml).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    // The message comes back whole from its attribute (what XML cannot carry as U+FFFD), with its line break.
    const message = /<failure message="([^"]*)"/.exec(xml)![1]!;
    expect(unescapeXml(message)).toBe(expected);
    expect(message).toContain('&#10;');
    expect(unescapeXml(/<skipped message="([^"]*)"/.exec(xml)![1]!)).toBe(expected);
    // The element text comes back whole too.
    const body = /<failure [^>]*>([^<]*)<\/failure>/.exec(xml)![1]!;
    expect(unescapeXml(body).startsWith(expected)).toBe(true);
  });

  it('xmlText and xmlAttr', () => {
    expect(xmlText('a < b && c > d ]]>')).toBe('a &lt; b &amp;&amp; c &gt; d ]]&gt;');
    expect(xmlAttr(`"it's"\n\t\r`)).toBe('&quot;it&apos;s&quot;&#10;&#9;&#13;');
    // A character outside the BMP is kept (a pair, not two lone surrogates).
    expect(xmlText('🙂')).toBe('🙂');
  });
});

describe('mcp-fleet check --format conformance', () => {
  it("maps each check to the official suite's ConformanceCheck", () => {
    const now = new Date('2026-12-03T12:00:00.000Z');
    const checks = officialChecks(modernRun(), now);
    expect(checks.map((c) => [c.id, c.status])).toEqual([
      ['discover_succeeds', 'SUCCESS'],
      ['discover_server_info', 'WARNING'],
      ['cache_scope_consistent_across_pages', 'SKIPPED'],
      ['resource_not_found_error', 'FAILURE'],
      ['no_session_id', 'SUCCESS'],
    ]);
    expect(checks[3]).toMatchObject({
      id: 'resource_not_found_error',
      name: 'resource_not_found_error',
      description: 'A missing resource is -32602, not -32002 or empty contents',
      status: 'FAILURE',
      timestamp: '2026-12-03T12:00:00.000Z',
      specReferences: [{ id: '2026-07-28 server/resources: error handling' }],
      errorMessage: 'a missing resource got -32002',
      details: { level: 'MUST', era: 'modern', evidence: { jsonRpcErrorCode: -32002 } },
    });
    expect(checks[0]).not.toHaveProperty('errorMessage');
    expect(checks[2]!.errorMessage).toBe('no list returned a nextCursor');
    for (const c of checks)
      expect(Object.keys(c)).toEqual(
        expect.arrayContaining(['id', 'name', 'description', 'status', 'timestamp', 'specReferences']),
      );
  });

  it('a run that could not connect is one FAILURE', () => {
    const [only, ...rest] = officialChecks(refusedRun());
    expect(rest).toHaveLength(0);
    expect(only).toMatchObject({
      id: 'connection',
      status: 'FAILURE',
      errorMessage: 'unreachable: the connection was refused',
    });
  });

  it('counts agree with the run', () => {
    const t = tally(modernRun());
    const checks = officialChecks(modernRun());
    expect(checks.filter((c) => c.status === 'FAILURE')).toHaveLength(t.failedMust);
    expect(checks.filter((c) => c.status === 'WARNING')).toHaveLength(t.warnings);
  });
});
