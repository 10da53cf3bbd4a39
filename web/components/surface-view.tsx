// What a server offers now, per era (and per region when the regions read different surfaces):
// serverInfo, capabilities, tools with their parameters (required marked) and annotations,
// resources, templates and prompts. All of it comes from the probed server (hostile): names,
// descriptions and schemas are text nodes only (React escapes them), cut to a bound; nothing here
// becomes a link, an attribute React does not escape, or markup.
import type { Surface, SurfaceTool } from '@mcp-fleet/probe';
import type { SurfaceNow } from '@mcp-fleet/store';
import { ago, utc } from '../lib/format';
import { annotationsOf, cut, jsonBlock, parametersOf, surfacesByEra } from '../lib/surface';
import { RevisionBadge } from './revision-badge';

/** The most items of one list a view shows (a surface holds at most what SURFACE_MAX_CHARS allows). */
const MAX_ITEMS = 200;

export function SurfaceNowView({ heads }: { heads: SurfaceNow[] }) {
  return (
    <>
      {surfacesByEra(heads).map((e) => (
        <div key={e.era} className="surface-era" data-testid={`surface-${e.era}`}>
          <h3>
            {e.era === 'modern' ? 'Modern' : e.era === 'legacy' ? 'Legacy' : cut(e.era, 40)} era
            {e.split ? <span className="warn"> · regions disagree</span> : null}
          </h3>
          {e.views.map((v) => (
            <div key={v.head.hash} className="surface-view" data-testid="surface-view">
              <p className="sub">
                <RevisionBadge revision={v.head.revision} /> in {v.regions.sort().join(', ')} · unchanged since{' '}
                <span title={utc(v.head.since)}>{ago(v.head.since)}</span> · last read{' '}
                <span title={utc(v.head.lastSeenAt)}>{ago(v.head.lastSeenAt)}</span> ·{' '}
                <code className="muted" title={v.head.hash}>
                  {v.head.hash.slice(0, 12)}
                </code>
              </p>
              {v.head.truncated ? (
                <p className="notice" data-testid="surface-truncated">
                  Truncated: the server offered more than a snapshot holds; the lists show the first items by name.
                </p>
              ) : null}
              <SurfaceLists surface={v.head.surface} />
            </div>
          ))}
        </div>
      ))}
    </>
  );
}

function SurfaceLists({ surface: s }: { surface: Surface }) {
  const info = s.serverInfo;
  const capabilities = Object.keys(s.capabilities).sort();
  return (
    <>
      <p data-testid="surface-info">
        <span className="muted">serverInfo</span>{' '}
        {info ? (
          <>
            <strong>{cut(info.name, 120)}</strong> {cut(info.version, 60)}
            {info.title ? <span className="muted"> ({cut(info.title, 120)})</span> : null}
          </>
        ) : (
          <span className="muted">none</span>
        )}
        {' · '}
        <span className="muted">capabilities</span>{' '}
        {capabilities.length === 0 ? (
          <span className="muted">none</span>
        ) : (
          capabilities.slice(0, 30).map((c) => (
            <span key={c} className="badge">
              {cut(c, 60)}
            </span>
          ))
        )}
      </p>
      {capabilities.length > 0 ? (
        <details>
          <summary>Capabilities as sent</summary>
          <pre className="evidence surface-json">{jsonBlock(s.capabilities)}</pre>
        </details>
      ) : null}

      <h4>Tools ({s.tools.length})</h4>
      {s.tools.length === 0 ? (
        <p className="empty">None.</p>
      ) : (
        <div className="table-wrap">
          <table className="surface" data-testid="surface-tools">
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Parameters</th>
                <th scope="col">Annotations</th>
              </tr>
            </thead>
            <tbody>
              {s.tools.slice(0, MAX_ITEMS).map((t) => (
                <ToolRow key={t.name} tool={t} />
              ))}
            </tbody>
          </table>
          <More shown={MAX_ITEMS} total={s.tools.length} />
        </div>
      )}

      {s.resources.length > 0 ? (
        <>
          <h4>Resources ({s.resources.length})</h4>
          <div className="table-wrap">
            <table className="surface" data-testid="surface-resources">
              <thead>
                <tr>
                  <th scope="col">URI</th>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {s.resources.slice(0, MAX_ITEMS).map((r) => (
                  <tr key={r.uri}>
                    <th scope="row">
                      <code>{cut(r.uri)}</code>
                    </th>
                    <td>{cut(r.title ?? r.name)}</td>
                    <td className="nowrap">{cut(r.mimeType ?? '—', 80)}</td>
                    <td className="muted">{cut(r.description)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <More shown={MAX_ITEMS} total={s.resources.length} />
          </div>
        </>
      ) : null}

      {s.resourceTemplates.length > 0 ? (
        <>
          <h4>Resource templates ({s.resourceTemplates.length})</h4>
          <div className="table-wrap">
            <table className="surface" data-testid="surface-templates">
              <thead>
                <tr>
                  <th scope="col">URI template</th>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {s.resourceTemplates.slice(0, MAX_ITEMS).map((t) => (
                  <tr key={t.uriTemplate}>
                    <th scope="row">
                      <code>{cut(t.uriTemplate)}</code>
                    </th>
                    <td>{cut(t.title ?? t.name)}</td>
                    <td className="muted">{cut(t.description)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <More shown={MAX_ITEMS} total={s.resourceTemplates.length} />
          </div>
        </>
      ) : null}

      {s.prompts.length > 0 ? (
        <>
          <h4>Prompts ({s.prompts.length})</h4>
          <div className="table-wrap">
            <table className="surface" data-testid="surface-prompts">
              <thead>
                <tr>
                  <th scope="col">Prompt</th>
                  <th scope="col">Arguments</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {s.prompts.slice(0, MAX_ITEMS).map((p) => (
                  <tr key={p.name}>
                    <th scope="row">
                      <code>{cut(p.name, 120)}</code>
                    </th>
                    <td>
                      {(Array.isArray(p.arguments) ? p.arguments : []).slice(0, 50).map((a, i) => (
                        // biome-ignore lint/suspicious/noArrayIndexKey: a hostile list may repeat a name
                        <div key={i}>
                          <code>{cut(a?.name, 80)}</code>
                          {a?.required === true ? <span className="badge required">required</span> : null}
                        </div>
                      ))}
                    </td>
                    <td className="muted">{cut(p.description)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <More shown={MAX_ITEMS} total={s.prompts.length} />
          </div>
        </>
      ) : null}
    </>
  );
}

function ToolRow({ tool: t }: { tool: SurfaceTool }) {
  const params = parametersOf(t);
  const annotations = annotationsOf(t);
  return (
    <tr data-tool={cut(t.name, 120)}>
      <th scope="row">
        <code>{cut(t.name, 120)}</code>
        {t.title ? <div>{cut(t.title, 120)}</div> : null}
        {t.description ? <div className="muted description">{cut(t.description)}</div> : null}
      </th>
      <td>
        {params.length === 0 ? <span className="muted">none</span> : null}
        {params.map((p) => (
          <div key={p.name} className="parameter" data-required={p.required}>
            <code>{p.name}</code>
            {p.type ? <span className="muted">: {p.type}</span> : null}
            {p.required ? <span className="badge required">required</span> : null}
            {p.description ? <div className="muted description">{p.description}</div> : null}
          </div>
        ))}
        <details>
          <summary>Schema</summary>
          <pre className="evidence surface-json" data-testid="tool-schema">
            {jsonBlock(
              t.outputSchema === undefined
                ? { inputSchema: t.inputSchema }
                : { inputSchema: t.inputSchema, outputSchema: t.outputSchema },
            )}
          </pre>
        </details>
      </td>
      <td>
        {annotations.length === 0 ? <span className="muted">none</span> : null}
        {annotations.map((a) => (
          <span
            key={a.name}
            className={`badge${a.name === 'destructiveHint' && a.value === 'true' ? ' destructive' : ''}`}
            data-annotation={a.name}
          >
            {a.name}: {a.value}
          </span>
        ))}
      </td>
    </tr>
  );
}

function More({ shown, total }: { shown: number; total: number }) {
  return total > shown ? (
    <p className="muted">
      The first {shown} of {total} shown.
    </p>
  ) : null;
}
