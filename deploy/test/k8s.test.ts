// The Kubernetes manifests (deploy/k8s), rendered offline by `kubectl kustomize` for every overlay and
// checked against the code they run: images, ports and probes, the environment each process really
// reads, regions against the fleet file (parsed by control's own parser), Services against pods,
// references to ConfigMaps and Secrets, and the pod security settings.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseFleet } from '@mcp-fleet/control';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { NATS_USERS } from './secrets-init';
import { type Role, roleVariables } from './source-env';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const K8S = join(ROOT, 'deploy', 'k8s');
const OVERLAYS = join(K8S, 'overlays');
const KUBECTL = process.env.KUBECTL || 'kubectl';
const NAMESPACE = 'mcp-fleet';
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const IMAGES = { cli: 'mcp-fleet/mcp-fleet', web: 'mcp-fleet/web' };

/** The variable that gives each process its HTTP port, and the one that gives its bind address. */
const PORT_ENV: Record<Role, string> = { control: 'MCP_FLEET_API_PORT', agent: 'MCP_FLEET_AGENT_PORT', web: 'PORT' };
const HOST_ENV: Partial<Record<Role, string>> = { control: 'MCP_FLEET_API_HOST', agent: 'MCP_FLEET_AGENT_HOST' };

/** Where each CLI subcommand declares its options. */
const COMMAND_SOURCE: Partial<Record<Role, string>> = {
  control: 'services/cli/src/commands/control.ts',
  agent: 'services/cli/src/commands/agent.ts',
};

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Meta;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}
interface KeyRef {
  name: string;
  key: string;
  optional?: boolean;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: KeyRef; configMapKeyRef?: KeyRef; fieldRef?: { fieldPath: string } };
}
interface Probe {
  httpGet?: { path: string; port: number | string };
  tcpSocket?: { port: number | string };
  exec?: unknown;
}
interface SecurityContext {
  runAsNonRoot?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string }; prefix?: string }[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
}
interface Volume {
  name: string;
  configMap?: { name: string; items?: { key: string; path: string }[] };
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  projected?: { sources: { configMap?: { name: string }; secret?: { name: string } }[] };
  emptyDir?: unknown;
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  securityContext?: { runAsNonRoot?: boolean };
}
interface Deployment extends K8sObject {
  spec: {
    replicas?: number;
    strategy?: { type?: string; rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string } };
    selector: { matchLabels?: Record<string, string> };
    template: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  };
}
interface StatefulSet extends Deployment {
  spec: Deployment['spec'] & {
    serviceName?: string;
    podManagementPolicy?: string;
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
}
interface Service extends K8sObject {
  spec: {
    selector?: Record<string, string>;
    ports: { name?: string; port: number; targetPort?: number | string }[];
    clusterIP?: string;
    publishNotReadyAddresses?: boolean;
  };
}
interface DisruptionBudget extends K8sObject {
  spec: {
    maxUnavailable?: number | string;
    minAvailable?: number | string;
    selector: { matchLabels?: Record<string, string> };
  };
}

interface Rendered {
  overlay: string;
  objects: K8sObject[];
}

const overlayNames = readdirSync(OVERLAYS, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(OVERLAYS, d.name, 'kustomization.yaml')))
  .map((d) => d.name)
  .sort();

async function render(dir: string): Promise<K8sObject[]> {
  const { stdout } = await run(KUBECTL, ['kustomize', dir], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((doc) => {
    if (doc.errors.length) throw new Error(`${dir}: ${doc.errors[0]?.message}`);
    return doc.toJS() as K8sObject;
  });
}

const deploymentsOf = (r: Rendered) => r.objects.filter((o): o is Deployment => o.kind === 'Deployment');
/** Deployments and StatefulSets (NATS): what runs pods, with the same template shape. */
const workloadsOf = (r: Rendered) =>
  r.objects.filter((o): o is Deployment => o.kind === 'Deployment' || o.kind === 'StatefulSet');
const servicesOf = (r: Rendered) => r.objects.filter((o): o is Service => o.kind === 'Service');
const containersOf = (d: Deployment) => [
  ...(d.spec.template.spec.initContainers ?? []),
  ...d.spec.template.spec.containers,
];
const find = (r: Rendered, kind: string, name: string) =>
  r.objects.find((o) => o.kind === kind && o.metadata.name === name);
/** Whether a Service's (non-empty) selector picks a Deployment's pods. */
const selects = (s: Service, d: Deployment) =>
  Object.keys(s.spec.selector ?? {}).length > 0 &&
  Object.entries(s.spec.selector ?? {}).every(([k, v]) => d.spec.template.metadata.labels?.[k] === v);
const keysOf = (o: K8sObject | undefined) =>
  new Set([...Object.keys(o?.data ?? {}), ...Object.keys(o?.stringData ?? {})]);
const envLiteral = (c: Container, name: string) => c.env?.find((e) => e.name === name)?.value;

/** What a container runs: the dashboard image, or the CLI image's subcommand. */
function roleOf(c: Container): Role | undefined {
  if (c.image.startsWith(`${IMAGES.web}:`)) return 'web';
  if (!c.image.startsWith(`${IMAGES.cli}:`)) return undefined;
  const sub = c.command ? undefined : c.args?.[0]; // the image's entrypoint is the mcp-fleet command
  return sub === 'control' || sub === 'agent' ? sub : undefined;
}

/** The value following `--flag` (or `--flag=value`) in a container's args. */
function flag(c: Container, name: string): string | undefined {
  const args = c.args ?? [];
  for (let i = 0; i < args.length; i += 1) {
    if (args[i] === `--${name}`) return args[i + 1];
    if (args[i]?.startsWith(`--${name}=`)) return args[i]?.slice(name.length + 3);
  }
  return undefined;
}

function containerPort(c: Container, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return c.ports?.some((p) => p.containerPort === port) ? port : undefined;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

/** Whether a process serves GET `path`: control's router, the agent's HTTP server, a dashboard route handler. */
function serves(role: Role, path: string): boolean {
  if (role === 'web') return existsSync(join(ROOT, 'web', 'app', path, 'route.ts'));
  const source = role === 'control' ? 'services/control/src/api.ts' : 'services/agent/src/http.ts';
  return readFileSync(join(ROOT, source), 'utf8').includes(`'${path}'`);
}

/** Every variable name a container ends up with: its env plus the keys of what envFrom pulls in. */
function envNames(r: Rendered, c: Container): string[] {
  const names = (c.env ?? []).map((e) => e.name);
  for (const from of c.envFrom ?? []) {
    const ref = from.secretRef
      ? find(r, 'Secret', from.secretRef.name)
      : find(r, 'ConfigMap', from.configMapRef?.name ?? '');
    for (const key of keysOf(ref)) names.push(`${from.prefix ?? ''}${key}`);
  }
  return names;
}

/** The fleet file control is given: the ConfigMap key its `--fleet` path lands on. */
function fleetFileOf(r: Rendered, d: Deployment, c: Container): { text?: string; problem?: string } {
  const path = flag(c, 'fleet');
  if (!path) return { problem: 'control runs without --fleet' };
  for (const m of c.volumeMounts ?? []) {
    const prefix = m.mountPath.replace(/\/$/, '');
    // A subPath mount is the file itself; a directory mount holds one file per key.
    let rel: string | undefined;
    if (m.subPath) rel = path === prefix ? m.subPath : undefined;
    else if (path.startsWith(`${prefix}/`)) rel = path.slice(prefix.length + 1);
    if (rel === undefined) continue;
    const cm = d.spec.template.spec.volumes?.find((v) => v.name === m.name)?.configMap;
    if (!cm) return { problem: `--fleet ${path} is not on a ConfigMap volume` };
    const key = cm.items?.find((i) => i.path === rel)?.key ?? rel;
    const text = find(r, 'ConfigMap', cm.name)?.data?.[key];
    return text === undefined ? { problem: `ConfigMap ${cm.name} has no key ${key} for --fleet ${path}` } : { text };
  }
  return { problem: `--fleet ${path} is on no volume mount` };
}

/** The `${NAME}` references in the fleet file's header values (they must be in control's environment). */
function headerRefs(fleetText: string): string[] {
  const file = parse(fleetText) as { servers?: { headers?: Record<string, string> }[] } | null;
  const refs = new Set<string>();
  for (const s of file?.servers ?? [])
    for (const v of Object.values(s.headers ?? {}))
      for (const m of v.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) refs.add(m[1]!);
  return [...refs];
}

/** The keys a volume projects: the listed items', or (undefined) the whole object. */
const itemKeys = (items: { key: string }[] | undefined) => (items ? items.map((i) => i.key) : [undefined]);

/** A region's agent: `--region <r>` or MCP_FLEET_REGION. */
const regionOf = (c: Container) => flag(c, 'region') ?? envLiteral(c, 'MCP_FLEET_REGION');

describe('Kubernetes manifests (kubectl kustomize deploy/k8s/overlays/*)', () => {
  const rendered: Rendered[] = [];
  let baseFleet = '';

  beforeAll(async () => {
    try {
      await run(KUBECTL, ['version', '--client']);
    } catch (err) {
      throw new Error(
        `kubectl is needed to render deploy/k8s (\`${KUBECTL} kustomize\`, offline, no cluster): ` +
          `install kubectl >= 1.27 or set KUBECTL to its path (${(err as Error).message.split('\n')[0]})`,
      );
    }
    for (const overlay of overlayNames) rendered.push({ overlay, objects: await render(join(OVERLAYS, overlay)) });
    baseFleet = readFileSync(join(K8S, 'base', 'fleet.yaml'), 'utf8');
  });

  /** control's Deployment and container, wherever an overlay renders it. */
  const controls = () =>
    rendered.flatMap((r) =>
      deploymentsOf(r).flatMap((d) =>
        containersOf(d)
          .filter((c) => roleOf(c) === 'control')
          .map((c) => ({ r, d, c })),
      ),
    );

  it('renders a central overlay and one per region, all into the mcp-fleet namespace', () => {
    expect(overlayNames).toEqual(expect.arrayContaining(['central', 'eu-west', 'us-east']));
    const problems: string[] = [];
    for (const r of rendered) {
      if (!deploymentsOf(r).length) problems.push(`${r.overlay}: no Deployment`);
      for (const o of r.objects) {
        const where = `${r.overlay}: ${o.kind} ${o.metadata.name}`;
        if (o.kind === 'Namespace') {
          if (o.metadata.name !== NAMESPACE) problems.push(`${where}: another namespace`);
        } else if (o.metadata.namespace !== NAMESPACE) problems.push(`${where}: namespace ${o.metadata.namespace}`);
        if (JSON.stringify(o).includes('SET-BY-OVERLAY'))
          problems.push(`${where}: a value the overlay must set is left`);
        if (['Deployment', 'StatefulSet', 'Service', 'PodDisruptionBudget'].includes(o.kind)) {
          const labels = { ...o.metadata.labels, ...(o as Deployment).spec.template?.metadata.labels };
          for (const l of ['app.kubernetes.io/name', 'app.kubernetes.io/component'])
            if (!labels[l]) problems.push(`${where}: no label ${l}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('runs our two images at the release version, each CLI container a subcommand with options it has', () => {
    const problems: string[] = [];
    const allowed = [`${IMAGES.cli}:${VERSION}`, `${IMAGES.web}:${VERSION}`];
    for (const r of rendered)
      for (const d of deploymentsOf(r))
        for (const c of containersOf(d)) {
          const where = `${r.overlay}: ${d.metadata.name}/${c.name}`;
          if (!allowed.includes(c.image)) problems.push(`${where}: image ${c.image}, not one of ${allowed.join(', ')}`);
          const role = roleOf(c);
          if (!role) {
            problems.push(`${where}: runs neither control, agent nor the dashboard (args ${JSON.stringify(c.args)})`);
            continue;
          }
          if (role === 'web' && (c.command || c.args)) problems.push(`${where}: the dashboard image runs as built`);
          const source = COMMAND_SOURCE[role];
          if (!source) continue;
          const text = readFileSync(join(ROOT, source), 'utf8');
          for (const a of (c.args ?? []).slice(1).filter((x) => x.startsWith('--'))) {
            const name = a.slice(2).split('=')[0]!;
            if (!new RegExp(`['\\s{]${name}'?: \\{ type:`).test(text))
              problems.push(`${where}: ${role} has no option ${a}`);
          }
        }
    expect(problems).toEqual([]);
  });

  it('probes /healthz and /readyz, which each process serves, on the port its env gives, bound beyond loopback', () => {
    const problems: string[] = [];
    for (const r of rendered)
      for (const d of deploymentsOf(r))
        for (const c of d.spec.template.spec.containers) {
          const role = roleOf(c);
          if (!role) continue;
          const where = `${r.overlay}: ${d.metadata.name}/${c.name}`;
          const portEnv = PORT_ENV[role];
          const port = Number(envLiteral(c, portEnv));
          if (!Number.isInteger(port) || port <= 0) {
            problems.push(`${where}: ${portEnv} is not set to a port`);
            continue;
          }
          if (!c.ports?.some((p) => p.containerPort === port)) problems.push(`${where}: no containerPort ${port}`);
          const hostEnv = HOST_ENV[role];
          if (hostEnv && envLiteral(c, hostEnv) !== '0.0.0.0')
            problems.push(`${where}: ${hostEnv} is not 0.0.0.0 (the default 127.0.0.1 is unreachable for probes)`);
          const expected = { livenessProbe: '/healthz', readinessProbe: '/readyz', startupProbe: '/healthz' } as const;
          for (const kind of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
            const probe = c[kind];
            if (!probe) {
              if (kind !== 'startupProbe') problems.push(`${where}: no ${kind}`);
              continue;
            }
            if (!probe.httpGet) {
              problems.push(`${where}: ${kind} is not an HTTP GET`);
              continue;
            }
            const probed = containerPort(c, probe.httpGet.port);
            if (probed !== port)
              problems.push(`${where}: ${kind} on port ${probe.httpGet.port}, not ${portEnv}=${port}`);
            const path = probe.httpGet.path;
            if (path !== expected[kind]) problems.push(`${where}: ${kind} on ${path}, not ${expected[kind]}`);
            else if (!serves(role, path)) problems.push(`${where}: ${role} serves no ${path}`);
          }
          const ann = d.spec.template.metadata.annotations ?? {};
          if (role !== 'web' && ann['prometheus.io/scrape'] !== 'true') problems.push(`${where}: not scraped`);
          if (ann['prometheus.io/scrape'] === 'true') {
            if (ann['prometheus.io/port'] !== String(port))
              problems.push(`${where}: scraped on ${ann['prometheus.io/port']}`);
            if (ann['prometheus.io/path'] !== '/metrics')
              problems.push(`${where}: scraped on ${ann['prometheus.io/path']}`);
          }
        }
    expect(problems).toEqual([]);
  });

  it("sets only variables its role reads (the role's schema in services/config)", () => {
    const problems: string[] = [];
    for (const r of rendered)
      for (const d of deploymentsOf(r))
        for (const c of containersOf(d)) {
          const role = roleOf(c);
          if (!role) continue;
          const fleet = role === 'control' ? fleetFileOf(r, d, c).text : undefined;
          const allowed = new Set([...roleVariables(role), ...(fleet ? headerRefs(fleet) : [])]);
          const names = envNames(r, c);
          for (const n of names)
            if (!allowed.has(n))
              problems.push(`${r.overlay}: ${d.metadata.name}/${c.name} sets ${n}, which ${role} does not read`);
          if (new Set(names).size !== names.length)
            problems.push(`${r.overlay}: ${d.metadata.name}/${c.name} sets a variable twice`);
          if (role !== 'web' && !envLiteral(c, 'NATS_URL'))
            problems.push(`${r.overlay}: ${d.metadata.name} has no NATS_URL`);
        }
    expect(problems).toEqual([]);
  });

  it("gives control the fleet file, valid for control's parser, and every variable its headers reference", () => {
    const found = controls();
    expect(found.map(({ r }) => r.overlay)).toEqual(['central']);
    const { r, d, c } = found[0]!;
    const { text, problem } = fleetFileOf(r, d, c);
    expect(problem).toBeUndefined();
    expect(text).toBe(baseFleet);
    const refs = headerRefs(baseFleet);
    const env = envNames(r, c);
    expect(refs.filter((n) => !env.includes(n))).toEqual([]);
    const fleet = parseFleet(baseFleet, 'deploy/k8s/base/fleet.yaml', Object.fromEntries(refs.map((n) => [n, 'fake'])));
    expect(fleet.regions.length).toBeGreaterThan(0);
    expect(fleet.servers.length).toBeGreaterThan(0);
  });

  it('runs two controls (one schedules: docs/control-replicas.md), both serving through an update', () => {
    const problems: string[] = [];
    for (const { r, d } of controls()) {
      if (d.spec.replicas !== 2) problems.push(`${r.overlay}: ${d.metadata.name} has ${d.spec.replicas} replicas`);
      if (d.spec.strategy?.type !== 'RollingUpdate' || d.spec.strategy.rollingUpdate?.maxUnavailable !== 0)
        problems.push(`${r.overlay}: ${d.metadata.name} is not a RollingUpdate with maxUnavailable 0`);
      if (d.spec.template.spec.containers.length !== 1) problems.push(`${r.overlay}: ${d.metadata.name} has sidecars`);
    }
    expect(problems).toEqual([]);
  });

  it("runs agents for every fleet region, each overlay's for a region of the fleet file, side by side", () => {
    const regions = parseFleet(
      baseFleet,
      'deploy/k8s/base/fleet.yaml',
      Object.fromEntries(headerRefs(baseFleet).map((n) => [n, 'fake'])),
    ).regions;
    const problems: string[] = [];
    const agentRegions = new Map<string, string>();
    for (const r of rendered)
      for (const d of deploymentsOf(r))
        for (const c of d.spec.template.spec.containers.filter((x) => roleOf(x) === 'agent')) {
          const where = `${r.overlay}: ${d.metadata.name}`;
          const region = regionOf(c);
          if (!region || !regions.includes(region)) {
            problems.push(`${where}: region ${region}, not one of the fleet file's (${regions.join(', ')})`);
            continue;
          }
          if (agentRegions.has(region)) problems.push(`${where}: ${region} is also run by ${agentRegions.get(region)}`);
          agentRegions.set(region, r.overlay);
          if (r.overlay !== region) problems.push(`${where}: runs ${region} from overlay ${r.overlay}`);
          if (!d.metadata.name.endsWith(`-${region}`)) problems.push(`${where}: the name does not end in -${region}`);
          for (const labels of [d.spec.selector.matchLabels, d.spec.template.metadata.labels])
            if (labels?.['mcp-fleet/region'] !== region)
              problems.push(`${where}: no label mcp-fleet/region: ${region}`);
        }
    for (const region of regions) if (!agentRegions.has(region)) problems.push(`no overlay runs agents for ${region}`);
    // Applied to one cluster, every overlay together: nothing but the namespace is defined twice.
    const seen = new Map<string, string>();
    for (const r of rendered)
      for (const o of r.objects) {
        const key = `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
        if (o.kind !== 'Namespace' && seen.has(key)) problems.push(`${key} is in ${seen.get(key)} and ${r.overlay}`);
        seen.set(key, r.overlay);
      }
    expect(problems).toEqual([]);
  });

  it("selects a workload's pods with every Service, on a port they listen on; the dashboard reaches control", () => {
    const problems: string[] = [];
    for (const r of rendered)
      for (const s of servicesOf(r)) {
        const where = `${r.overlay}: Service ${s.metadata.name}`;
        const targets = workloadsOf(r).filter((d) => selects(s, d));
        if (targets.length !== 1) {
          problems.push(`${where}: selects ${targets.length} Deployments or StatefulSets`);
          continue;
        }
        const containers = targets[0]!.spec.template.spec.containers;
        for (const p of s.spec.ports)
          if (!containers.some((c) => containerPort(c, p.targetPort ?? p.port) !== undefined))
            problems.push(
              `${where}: targetPort ${p.targetPort ?? p.port} is no containerPort of ${targets[0]!.metadata.name}`,
            );
      }
    for (const r of rendered)
      for (const d of deploymentsOf(r))
        for (const c of d.spec.template.spec.containers.filter((x) => roleOf(x) === 'web')) {
          const url = new URL(envLiteral(c, 'MCP_FLEET_API_URL') ?? 'http://unset');
          const svc = find(r, 'Service', url.hostname.split('.')[0]!) as Service | undefined;
          const target = svc && deploymentsOf(r).find((x) => selects(svc, x));
          const reaches =
            svc?.spec.ports.some((p) => String(p.port) === (url.port || '80')) &&
            target?.spec.template.spec.containers.some((x) => roleOf(x) === 'control');
          if (!reaches)
            problems.push(`${r.overlay}: ${d.metadata.name}'s MCP_FLEET_API_URL ${url.href} is not control's Service`);
        }
    expect(problems).toEqual([]);
  });

  it('defines every ConfigMap, Secret, key and volume the pods reference', () => {
    const problems: string[] = [];
    for (const r of rendered)
      for (const d of workloadsOf(r)) {
        const where = `${r.overlay}: ${d.metadata.name}`;
        const need = (kind: 'ConfigMap' | 'Secret', name: string, key?: string, optional?: boolean) => {
          const o = find(r, kind, name);
          if (!o) {
            if (!optional) problems.push(`${where}: ${kind} ${name} is not defined`);
          } else if (key !== undefined && !keysOf(o).has(key) && !optional)
            problems.push(`${where}: ${kind} ${name} has no key ${key}`);
        };
        const volumes = d.spec.template.spec.volumes ?? [];
        for (const v of volumes) {
          if (v.configMap) for (const key of itemKeys(v.configMap.items)) need('ConfigMap', v.configMap.name, key);
          if (v.secret) for (const key of itemKeys(v.secret.items)) need('Secret', v.secret.secretName, key);
          for (const s of v.projected?.sources ?? []) {
            if (s.configMap) need('ConfigMap', s.configMap.name);
            if (s.secret) need('Secret', s.secret.name);
          }
        }
        for (const c of containersOf(d)) {
          for (const e of c.env ?? []) {
            const { secretKeyRef: s, configMapKeyRef: m } = e.valueFrom ?? {};
            if (s) need('Secret', s.name, s.key, s.optional);
            if (m) need('ConfigMap', m.name, m.key, m.optional);
          }
          for (const f of c.envFrom ?? []) {
            if (f.secretRef) need('Secret', f.secretRef.name);
            if (f.configMapRef) need('ConfigMap', f.configMapRef.name);
          }
          // A StatefulSet's volumeClaimTemplates are volumes of its pods too.
          const claims = (d as StatefulSet).spec.volumeClaimTemplates ?? [];
          for (const m of c.volumeMounts ?? [])
            if (!volumes.some((v) => v.name === m.name) && !claims.some((t) => t.metadata.name === m.name))
              problems.push(`${where}/${c.name}: mounts undefined volume ${m.name}`);
        }
      }
    expect(problems).toEqual([]);
  });

  it("connects control and each region's agents to NATS as their own users, the ones deploy/nats defines", async () => {
    const account = readFileSync(join(ROOT, 'deploy', 'nats', 'mcp-fleet-account.conf'), 'utf8');
    /** A user's password variable in the account, or undefined when it has no such user. */
    const passwordOf = (user: string) => account.match(new RegExp(`user: ${user}\\n\\s*password: \\$(\\w+)\\n`))?.[1];
    const secretValue = (r: Rendered, ref: KeyRef | undefined) => {
      const o = ref && find(r, 'Secret', ref.name);
      const raw =
        o?.stringData?.[ref!.key] ?? (o?.data?.[ref!.key] && Buffer.from(o.data[ref!.key]!, 'base64').toString());
      return raw;
    };
    const problems: string[] = [];
    const users = new Set<string>();
    for (const r of rendered)
      for (const d of deploymentsOf(r))
        for (const c of d.spec.template.spec.containers) {
          const role = roleOf(c);
          if (role !== 'control' && role !== 'agent') continue;
          const where = `${r.overlay}: ${d.metadata.name}`;
          const want = role === 'control' ? NATS_USERS.control : NATS_USERS.agent(regionOf(c) ?? '?');
          const user = secretValue(r, c.env?.find((e) => e.name === 'NATS_USER')?.valueFrom?.secretKeyRef);
          if (user !== want) problems.push(`${where}: NATS_USER is ${user}, not ${want}`);
          if (!passwordOf(want)) problems.push(`${where}: deploy/nats has no user ${want}`);
          users.add(want);
          // The account's subjects and streams are the default namespace's.
          const ns = envLiteral(c, 'MCP_FLEET_NATS_NAMESPACE');
          if (ns !== undefined && ns !== 'mcpfleet') problems.push(`${where}: namespace ${ns}, not mcpfleet`);
        }
    expect(problems).toEqual([]);
    expect(users.size).toBe(3);
    // deploy/nats, for the operator's NATS: the account file as it is, and one password per user.
    const nats = await render(join(ROOT, 'deploy', 'nats'));
    expect(find({ overlay: 'nats', objects: nats }, 'ConfigMap', 'mcp-fleet-nats-account')?.data).toEqual({
      'mcp-fleet-account.conf': account,
    });
    const variables = [...account.matchAll(/password: \$(\w+)/g)].map((m) => m[1]);
    expect([...keysOf(find({ overlay: 'nats', objects: nats }, 'Secret', 'mcp-fleet-nats-users'))].sort()).toEqual(
      variables.sort(),
    );
    expect(variables.sort()).toEqual([...users].map((u) => passwordOf(u)).sort());
  });

  it('runs NATS as a three-node JetStream cluster: a StatefulSet, routes over a headless Service, a disruption budget, streams in three copies', () => {
    const central = rendered.find((r) => r.overlay === 'central')!;
    const sets = rendered.flatMap((r) => r.objects.filter((o) => o.kind === 'StatefulSet').map((o) => ({ r, o })));
    expect(sets.map(({ r, o }) => `${r.overlay}: ${o.metadata.name}`)).toEqual(['central: mcp-fleet-nats']);
    const sts = sets[0]!.o as StatefulSet;
    const size = sts.spec.replicas!;
    expect(size).toBe(3);
    // All start together (a meta leader needs a majority), each with its own store on its own volume.
    expect(sts.spec.podManagementPolicy).toBe('Parallel');
    const [c] = sts.spec.template.spec.containers as [Container];
    const arg = (name: string) => c.args![c.args!.indexOf(name) + 1];
    expect(arg('-c')).toBe('/etc/nats/cluster.conf');
    expect(c.args).toContain('-js');
    const store = c.volumeMounts!.find((m) => m.mountPath === arg('-sd'));
    expect(sts.spec.volumeClaimTemplates?.map((t) => t.metadata.name)).toEqual([store?.name]);
    // The image compose runs.
    const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { image?: string }>;
    };
    expect(c.image).toBe(compose.services['nats-1']?.image);
    // Its name is the pod's: unique, and what the routes call it.
    expect(arg('--name')).toBe('$(POD_NAME)');
    expect(c.env?.find((e) => e.name === 'POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    // deploy/nats's files, as they are, where cluster.conf includes them.
    const config = c.volumeMounts!.find((m) => m.mountPath === '/etc/nats');
    const cm = sts.spec.template.spec.volumes!.find((v) => v.name === config?.name)?.configMap?.name;
    const files = find(central, 'ConfigMap', cm ?? '')?.data ?? {};
    for (const f of ['cluster.conf', 'nats.conf', 'mcp-fleet-account.conf'])
      expect(files[f], f).toBe(readFileSync(join(ROOT, 'deploy', 'nats', f), 'utf8'));
    // Routes: cluster.conf's NATS_ROUTE_1..n, each node by its name on the headless Service, with the
    // route password from a Secret (defined before them: Kubernetes expands only earlier variables).
    const headless = find(central, 'Service', sts.spec.serviceName ?? '') as Service | undefined;
    expect(headless?.spec.clusterIP).toBe('None');
    expect(headless?.spec.publishNotReadyAddresses).toBe(true);
    expect(selects(headless!, sts)).toBe(true);
    expect(headless!.spec.ports.map((p) => p.port)).toEqual(expect.arrayContaining([4222, 6222]));
    const names = (c.env ?? []).map((e) => e.name);
    const password = c.env!.find((e) => e.name === 'MCP_FLEET_NATS_ROUTE_PASSWORD')?.valueFrom?.secretKeyRef;
    expect(keysOf(find(central, 'Secret', password?.name ?? ''))).toContain(password?.key);
    const conf = readFileSync(join(ROOT, 'deploy', 'nats', 'cluster.conf'), 'utf8');
    const routeVars = [...(conf.match(/routes: \[([^\]]*)\]/)?.[1] ?? '').matchAll(/\$(\w+)/g)].map((m) => m[1]!);
    const node = (i: number) => `${sts.metadata.name}-${i}.${headless!.metadata.name}`;
    expect(routeVars).toHaveLength(size);
    routeVars.forEach((v, i) => {
      expect(envLiteral(c, v), v).toBe(`nats-route://mcp-fleet-route:$(MCP_FLEET_NATS_ROUTE_PASSWORD)@${node(i)}:6222`);
      expect(names.indexOf(v)).toBeGreaterThan(names.indexOf('MCP_FLEET_NATS_ROUTE_PASSWORD'));
    });
    expect(conf).toMatch(/user: mcp-fleet-route\s*password: \$MCP_FLEET_NATS_ROUTE_PASSWORD/);
    // Every user's password the account reads is in its environment.
    const account = readFileSync(join(ROOT, 'deploy', 'nats', 'mcp-fleet-account.conf'), 'utf8');
    const env = envNames(central, c);
    for (const m of account.matchAll(/password: \$(\w+)/g)) expect(env, m[1]).toContain(m[1]);
    // A voluntary disruption (a drain) takes one node at a time: two of three keep the quorum.
    const pdbs = central.objects.filter((o): o is DisruptionBudget => o.kind === 'PodDisruptionBudget');
    expect(pdbs).toHaveLength(1);
    expect(pdbs[0]!.spec.maxUnavailable).toBe(1);
    expect(pdbs[0]!.spec.selector.matchLabels).toEqual(sts.spec.selector.matchLabels);
    // Control knows every node and keeps each stream in one copy per node.
    const control = controls()[0]!.c;
    expect(envLiteral(control, 'MCP_FLEET_NATS_REPLICAS')).toBe(String(size));
    const urls = envLiteral(control, 'NATS_URL')!
      .split(',')
      .map((u) => new URL(u));
    expect(urls.map((u) => u.host)).toEqual(Array.from({ length: size }, (_, i) => `${node(i)}:4222`));
    expect(c.ports?.some((p) => p.containerPort === 4222)).toBe(true);
  });

  it('runs every container as non-root, without privileges or capabilities, with resource requests', () => {
    const problems: string[] = [];
    for (const r of rendered)
      for (const d of workloadsOf(r)) {
        const pod = d.spec.template.spec;
        for (const c of containersOf(d)) {
          const where = `${r.overlay}: ${d.metadata.name}/${c.name}`;
          const sc = c.securityContext ?? {};
          if ((sc.runAsNonRoot ?? pod.securityContext?.runAsNonRoot) !== true)
            problems.push(`${where}: runAsNonRoot is not true`);
          if (sc.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation is not false`);
          if (sc.privileged) problems.push(`${where}: privileged`);
          if (!sc.capabilities?.drop?.includes('ALL') || sc.capabilities.add?.length)
            problems.push(`${where}: capabilities are not all dropped`);
          if (!c.resources?.requests?.cpu || !c.resources.requests.memory)
            problems.push(`${where}: no cpu and memory requests`);
          if (!c.resources?.limits?.memory) problems.push(`${where}: no memory limit`);
          // Ours write nothing but temporary files (tsx's compile cache), under /tmp; NATS its store, on its volume.
          if (sc.readOnlyRootFilesystem !== true) problems.push(`${where}: the root filesystem is writable`);
          const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
          if (roleOf(c) && (!tmp || !pod.volumes?.find((v) => v.name === tmp.name)?.emptyDir))
            problems.push(`${where}: no emptyDir on /tmp`);
        }
      }
    expect(problems).toEqual([]);
  });
});
