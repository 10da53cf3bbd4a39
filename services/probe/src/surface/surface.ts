// A surface: what a server offers in one era (tools with their schemas and annotations, resources,
// resource templates, prompts, capabilities, serverInfo), read over one connection. Snapshots are
// content-addressed (the hash of the canonical JSON), so an unchanged surface costs a reference;
// two snapshots of the same era are diffed into classified surface changes (breaking, warning,
// info), and a server's surfaces in two eras are compared by the cross-era checks.
import type { ServerInfo } from '../opening';
import type { Era } from '../revisions';

export interface SurfaceTool {
  name: string;
  title?: string;
  description?: string;
  /** The tool's JSON Schema for its arguments, as the server sent it (bounded). */
  inputSchema: unknown;
  outputSchema?: unknown;
  /** readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title… as sent. */
  annotations?: Record<string, unknown>;
}

export interface SurfaceResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

export interface SurfaceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

export interface SurfacePromptArgument {
  name: string;
  description?: string;
  required?: boolean;
}

export interface SurfacePrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: SurfacePromptArgument[];
}

export interface Surface {
  era: Era;
  /** The revision the connection that read it negotiated. */
  revision: string;
  serverInfo: ServerInfo | null;
  capabilities: Record<string, unknown>;
  /** Each list sorted by its key (name, uri, uriTemplate), so equal surfaces hash equal. */
  tools: SurfaceTool[];
  resources: SurfaceResource[];
  resourceTemplates: SurfaceTemplate[];
  prompts: SurfacePrompt[];
  /**
   * The server offered more than the bounds let a snapshot hold (SURFACE_MAX_CHARS, page and item
   * limits): the lists hold the first items by key. A diff does not call an item beyond the cut removed.
   */
  truncated: boolean;
}

/** A surface as it travels and is stored: canonical JSON (ASCII only), and its hash. */
export interface SurfaceSnapshot {
  era: Era;
  revision: string;
  /** sha256 of `body`, lowercase hex (64 characters). */
  hash: string;
  /** The canonical JSON of the Surface: keys sorted, no spaces, every non-ASCII character \u-escaped. */
  body: string;
  truncated: boolean;
}

/** The most characters a snapshot's body may have (a result carries at most SURFACE_MAX_PER_RESULT). */
export const SURFACE_MAX_CHARS = 90_000;
/** A result carries at most one snapshot per era. */
export const SURFACE_MAX_PER_RESULT = 2;

export const SURFACE_SEVERITIES = ['breaking', 'warning', 'info'] as const;
export type SurfaceSeverity = (typeof SURFACE_SEVERITIES)[number];

export const SURFACE_KINDS = ['tool', 'resource', 'resource_template', 'prompt', 'capability', 'server_info'] as const;
export type SurfaceKind = (typeof SURFACE_KINDS)[number];

/**
 * One change between two snapshots of the same era, classified (issue 16):
 * breaking — a tool, prompt, resource or capability removed; a required parameter added; a
 * parameter's type narrowed or enum values removed; an output field removed;
 * warning — a description or annotation changed (e.g. readOnlyHint flipped), an optional parameter removed;
 * info — something added.
 */
export interface SurfaceChange {
  severity: SurfaceSeverity;
  kind: SurfaceKind;
  /** The item: a tool's or prompt's name, a resource's uri, a template's uriTemplate, a capability's key. */
  name: string;
  /** What happened, as a code: removed, added, required_added, type_narrowed, enum_removed, … */
  change: string;
  /** One line as the history reads it: "tool `create_order`: parameter `currency` now required". */
  message: string;
  /** Where in the item, when it is inside one (e.g. `inputSchema.properties.currency`). */
  path?: string;
}

/** A cross-era difference: the item and the protocols (eras) that disagree about it. */
export interface CrossEraDifference {
  kind: SurfaceKind;
  name: string;
  /** The protocol (revision or era) whose surface differs from the first one's, or lacks the item. */
  era: string;
  detail: string;
}

export interface CrossEraCheck {
  /** cross_era_connect, tools_match, tool_definitions_match, resources_match, resource_templates_match, prompts_match, capabilities_match, auto_picks_modern. */
  id: string;
  level: 'MUST' | 'SHOULD';
  status: 'pass' | 'fail' | 'skip';
  message: string;
  differences: CrossEraDifference[];
}

export interface CrossEraRun {
  pass: boolean;
  /** Each protocol compared, and what its connection negotiated. */
  protocols: { protocol: string; negotiated: string | null; era: Era | null; outcome: string; message: string }[];
  checks: CrossEraCheck[];
  requests: number;
  millis: number;
}
