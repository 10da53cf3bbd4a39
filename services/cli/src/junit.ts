// `mcp-fleet check --junit FILE`: the run as a JUnit XML report for CI pipelines, one testsuite,
// one testcase per check (classname: the era, name: the check id).
//
// Escaped by hand: no XML library is a dependency of the workspace, and what a report needs is
// small and closed: text and attribute values, never a name from outside (element and attribute
// names are our own literals). Three rules cover it (XML 1.0, section 2.2 and 2.4):
//   - `&`, `<`, `>` in text, and also `"`, `'`, TAB, LF, CR in attributes (where a raw line break
//     would be normalized to a space), become references;
//   - characters XML 1.0 cannot carry at all, even as a reference (C0 controls but TAB, LF, CR;
//     U+FFFE, U+FFFF; lone surrogates), and C1 controls (allowed but "discouraged", and terminal
//     escapes when a CI log echoes them), become U+FFFD;
//   - no CDATA sections: escaping `>` makes `]]>` harmless, and there is no section to break out of.
import { type CheckResult, type ConformanceRun, checkById } from '@mcp-fleet/probe';
import { connected, evidenceLine } from './check-report';

/** Not representable in an XML 1.0 document (or discouraged there): replaced by U+FFFD. */
const NOT_XML = /[^\t\n\r\u0020-\u007e\u00a0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

/**
 * Trust boundary: every message, evidence and URL in a report may be a hostile server's text
 * (an error message with `</failure><testcase …>` or `]]>` in it, control characters…). Whatever
 * it holds, it stays character data of the element it is in.
 */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, '\ufffd').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value (written between double quotes). */
export function xmlAttr(text: string): string {
  return xmlText(text)
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\t/g, '&#9;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;');
}

const seconds = (millis: number) => (Math.max(0, millis) / 1000).toFixed(3);

function attrs(pairs: Record<string, string | number>): string {
  return Object.entries(pairs)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join('');
}

/** A check's detail under its failure or warning: the rule, its spec reference, the evidence. */
function detail(c: CheckResult): string {
  const def = checkById(c.id);
  const lines = [c.message];
  if (def) lines.push(`Rule: ${def.rule} (${def.spec})`);
  if (c.evidence) lines.push(`Evidence: ${evidenceLine(c.evidence)}`);
  return lines.join('\n');
}

function testcase(c: CheckResult, classname: string): string {
  const open = `    <testcase${attrs({ classname, name: c.id, time: seconds(c.millis) })}`;
  if (c.status === 'pass') return `${open}/>`;
  if (c.status === 'skip') return `${open}>\n      <skipped${attrs({ message: c.message })}/>\n    </testcase>`;
  if (c.level === 'MUST')
    return `${open}>\n      <failure${attrs({ message: c.message, type: 'MUST' })}>${xmlText(detail(c))}</failure>\n    </testcase>`;
  // A failing SHOULD is a warning (issue 15), and JUnit has no warning: a <failure> of any type
  // fails every CI pipeline that reads the report, which would make a SHOULD a MUST. So it is a
  // passing testcase that says WARNING in its output, where CI report views show it.
  return `${open}>\n      <system-out>${xmlText(`WARNING (SHOULD): ${detail(c)}`)}</system-out>\n    </testcase>`;
}

export function junitReport(run: ConformanceRun): string {
  const classname = run.protocol.era ?? 'connection';
  const name = `mcp-fleet check ${run.target}`;
  const properties = [
    ['target', run.target],
    ['protocol.requested', run.protocol.requested],
    ['protocol.negotiated', run.protocol.negotiated ?? ''],
    ['era', run.protocol.era ?? ''],
    ['outcome', run.outcome],
    ['requests', String(run.requests)],
  ]
    .map(([k, v]) => `      <property${attrs({ name: k!, value: v! })}/>`)
    .join('\n');
  let cases: string[];
  let counts: { tests: number; failures: number; skipped: number };
  if (!connected(run)) {
    // No check ran: one failing testcase says why, so CI fails rather than reading "0 tests".
    cases = [
      `    <testcase${attrs({ classname, name: 'connect', time: seconds(run.millis) })}>\n      <failure${attrs({ message: run.message, type: run.outcome })}>${xmlText(run.evidence ? `${run.message}\nEvidence: ${evidenceLine(run.evidence)}` : run.message)}</failure>\n    </testcase>`,
    ];
    counts = { tests: 1, failures: 1, skipped: 0 };
  } else {
    cases = run.checks.map((c) => testcase(c, classname));
    counts = {
      tests: run.checks.length,
      failures: run.checks.filter((c) => c.status === 'fail' && c.level === 'MUST').length,
      skipped: run.checks.filter((c) => c.status === 'skip').length,
    };
  }
  const totals = { ...counts, errors: 0, time: seconds(run.millis) };
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name: 'mcp-fleet check', ...totals })}>`,
    `  <testsuite${attrs({ name, ...totals })}>`,
    '    <properties>',
    properties,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
