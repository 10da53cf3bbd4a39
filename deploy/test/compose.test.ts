// docker-compose.yml, checked without a Docker engine: every image, build, port, volume and config
// file it names exists and agrees with the services' own defaults and with the other config files;
// auth is on from the first start (the `secrets` service is run as compose would run it, and
// control, the dashboard, the agents and NATS are started, or configured, from what it wrote).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKeyring } from '@mcp-fleet/auth';
import { connectNatsBus, type NatsBus } from '@mcp-fleet/bus';
import { capturedLogger, job, result } from '@mcp-fleet/bus/testing';
import { agentEnv, controlEnv, type NatsSettings, parseEnv, secretEnv, webEnv as webRoleEnv } from '@mcp-fleet/config';
import { apiAuthFromEnv, assertSafeBind, isLoopbackHost, parseFleet } from '@mcp-fleet/control';
import { type Sim, startSim, TARGET_NAMES } from '@mcp-fleet/fleet-sim';
import { TargetPolicy } from '@mcp-fleet/probe';
import { freePort } from '@mcp-fleet/testkit';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { probeFloor } from '../../services/cli/src/probe-floor';
import { webAuthFromEnv } from '../../web/lib/auth-env';
import {
  agents,
  compose,
  composeOnDisk,
  init,
  initEntry,
  initName,
  interpolate,
  natsNodes,
  read,
  type Service,
  services,
} from './compose-file';
import { NATS_USERS } from './secrets-init';
import { REPO, roleVariables } from './source-env';

const ours = (s: Service) => s.image?.startsWith('mcp-fleet/') ?? false;
const dockerfile = read('Dockerfile');
const stages = [...dockerfile.matchAll(/^FROM \S+ AS (\S+)$/gm)].map((m) => m[1]!);

/** The port a service of ours listens on, from its environment and the code's defaults. */
function listenPort(name: string): number {
  const s = services[name]!;
  const env = s.environment ?? {};
  if (s.command?.[0] === 'control') return Number(env.MCP_FLEET_API_PORT ?? 7070);
  if (s.command?.[0] === 'agent') return Number(env.MCP_FLEET_AGENT_PORT ?? 7071);
  if (s.image === 'mcp-fleet/web:0.1.0') return Number(env.PORT ?? 3000);
  throw new Error(`${name} is not one of ours`);
}

describe('docker-compose.yml', () => {
  it('runs the whole stack, with pinned images and the demo fleet as a profile', () => {
    for (const name of [
      'nats-1',
      'nats-2',
      'nats-3',
      'postgres',
      'control',
      'web',
      'prometheus',
      'alertmanager',
      'grafana',
      'otel-collector',
      'jaeger',
    ])
      expect(services, name).toHaveProperty(name);
    expect(agents.map(([, s]) => s.command?.[2]).sort()).toEqual(['eu-west', 'us-east']);
    for (const [name, s] of Object.entries(services)) {
      expect(s.image, `${name} names its image`).toMatch(/^[\w./-]+:[\w.-]+$/);
      expect(s.image, `${name} pins a version`).not.toMatch(/:latest$/);
    }
    for (const [name, s] of natsNodes) expect(s.command, name).toEqual(expect.arrayContaining(['-js', '-sd']));
    const demo = Object.entries(services).filter(([, s]) => s.profiles?.includes('demo'));
    expect(demo.length).toBe(agents.length);
  });

  it('runs NATS as a three-node JetStream cluster: routes among all nodes, route auth, clients given every node, streams in three copies', () => {
    const names = natsNodes.map(([n]) => n).sort();
    expect(names).toEqual(['nats-1', 'nats-2', 'nats-3']);
    const conf = read('deploy/nats/cluster.conf');
    // The account and users nats.conf has, then the cluster: routes to every node, opened only with the route password.
    expect(conf).toMatch(/^include "nats\.conf"$/m);
    const cluster = conf.slice(conf.indexOf('cluster {'));
    expect(cluster).toMatch(/listen: 0\.0\.0\.0:6222/);
    expect(cluster).toMatch(
      /authorization \{\s*user: mcp-fleet-route\s*password: \$MCP_FLEET_NATS_ROUTE_PASSWORD\s*\}/,
    );
    const routeVars = [...(cluster.match(/routes: \[([^\]]*)\]/)?.[1] ?? '').matchAll(/\$(\w+)/g)].map((m) => m[1]);
    expect(routeVars).toEqual(['NATS_ROUTE_1', 'NATS_ROUTE_2', 'NATS_ROUTE_3']);
    const serverNames = new Set<string>();
    const stores = new Set<string>();
    for (const [name, s] of natsNodes) {
      const cmd = s.command!;
      expect(cmd.slice(0, 2), name).toEqual(['-c', '/etc/nats/cluster.conf']);
      serverNames.add(cmd[cmd.indexOf('--name') + 1]!);
      // Its own store, on a volume of its own, and the secrets (route password included) from the NATS role's volume.
      const store = cmd[cmd.indexOf('-sd') + 1]!;
      const volume = s.volumes!.find((v) => v.split(':')[1] === store)?.split(':')[0];
      expect(volume, `${name}'s store`).toBeDefined();
      stores.add(volume!);
      expect(s.volumes).toContain('./deploy/nats:/etc/nats:ro');
      expect(s.volumes).toContain('secrets-nats:/run/mcp-fleet:ro');
      // Each route (NATS_ROUTE_1..3) is made from NATS_PEERS: every node, by its service name, on the route port.
      expect(String(s.environment!.NATS_PEERS).split(/\s+/).sort(), name).toEqual(names.map((n) => `${n}:6222`));
      const script = interpolate(s.entrypoint![2]!, {});
      expect(script).toContain('for peer in $NATS_PEERS');
      expect(script).toContain(
        'export "NATS_ROUTE_$i=nats-route://mcp-fleet-route:$MCP_FLEET_NATS_ROUTE_PASSWORD@$peer"',
      );
      expect(s.healthcheck!.test.join(' ')).toContain('/healthz');
      expect(s.networks).toEqual(['bus']);
    }
    expect(serverNames).toEqual(new Set(names));
    expect(stores.size).toBe(3);
    // Clients know every node (one going is a reconnect to another), and wait for all three to be healthy.
    for (const [name, s] of [['control', services.control!] as const, ...agents]) {
      const urls = String(s.environment!.NATS_URL).split(',');
      expect(urls.map((u) => new URL(u).host).sort(), name).toEqual(names.map((n) => `${n}:4222`));
      for (const n of names) expect(s.depends_on?.[n]?.condition, `${name} waits for ${n}`).toBe('service_healthy');
    }
    // Control keeps each stream in three copies: one per node, so a node's loss keeps a majority of two.
    // (Its secrets' files are the container's, not this machine's: not read here.)
    const env = Object.entries(services.control!.environment ?? {}).filter(([k]) => !k.endsWith('_FILE'));
    const replicas = parseEnv(controlEnv, Object.fromEntries(env)).nats.replicas;
    expect(replicas).toBe(names.length);
    // Agents declare nothing, so they are given no replica count.
    for (const [name, s] of agents) expect(s.environment, name).not.toHaveProperty('MCP_FLEET_NATS_REPLICAS');
  });

  it('builds our images from this repository: existing stages, a non-root user, a lean context', () => {
    for (const [name, s] of Object.entries(services).filter(([, s]) => ours(s))) {
      expect(s.build, `${name} builds its image`).toBeDefined();
      expect(existsSync(join(REPO, s.build!.context, s.build!.dockerfile))).toBe(true);
      expect(stages, `${name}'s target`).toContain(s.build!.target);
      expect(s.image).toBe(s.build!.target === 'web' ? 'mcp-fleet/web:0.1.0' : 'mcp-fleet/mcp-fleet:0.1.0');
    }
    // Each image's stage ends as the unprivileged user, and what it runs exists.
    for (const stage of ['services', 'web']) {
      const body = dockerfile.split(/^FROM /m).find((b) => new RegExp(`AS ${stage}$`, 'm').test(b.split('\n')[0]!))!;
      expect(body, stage).toMatch(/^USER node$/m);
    }
    // The launcher: the mcp-fleet command under node, with the flags its verb needs (services/cli/test/launcher.test.ts).
    expect(dockerfile).toContain('ENTRYPOINT ["/bin/sh", "services/cli/bin/mcp-fleet.sh"]');
    for (const bin of ['mcp-fleet.sh', 'mcp-fleet.js'])
      expect(existsSync(join(REPO, 'services/cli/bin', bin))).toBe(true);
    // The dashboard runs behind its own server (the client address, anti-framing), never `next start`.
    expect(dockerfile).toContain('CMD ["node", "web/bin/dashboard.js"]');
    expect(existsSync(join(REPO, 'web/bin/dashboard.js'))).toBe(true);
    expect(dockerfile).not.toMatch(/next\/dist\/bin\/next", "start"/);
    const ignore = read('.dockerignore').split('\n');
    for (const entry of ['**/node_modules', '**/.next', '.git']) expect(ignore).toContain(entry);
  });

  it('mounts files that exist and declares its volumes', () => {
    for (const [name, s] of Object.entries(services))
      for (const v of s.volumes ?? []) {
        const [source] = v.split(':');
        if (source!.startsWith('./')) expect(existsSync(join(REPO, source!)), `${name}: ${source}`).toBe(true);
        else expect(compose.volumes, `${name}: volume ${source}`).toHaveProperty(source!);
      }
  });

  it('publishes distinct ports on 127.0.0.1 only, each where the service listens', () => {
    const published = new Set<string>();
    for (const [name, s] of Object.entries(services))
      for (const p of s.ports ?? []) {
        const [host, hostPort, containerPort] = p.split(':');
        expect(host, `${name} publishes on loopback`).toBe('127.0.0.1');
        expect(published.has(hostPort!), `${hostPort} published twice`).toBe(false);
        published.add(hostPort!);
        if (ours(s)) expect(Number(containerPort), name).toBe(listenPort(name));
      }
  });

  it('starts in order: dependencies exist and health conditions wait on real health checks', () => {
    for (const [name, s] of Object.entries(services))
      for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
        expect(services, `${name} depends on ${dep}`).toHaveProperty(dep);
        if (condition === 'service_healthy')
          expect(services[dep]!.healthcheck, `${dep} has a health check`).toBeDefined();
      }
    // Our health checks ask the port the service listens on, at /readyz.
    for (const [name, s] of Object.entries(services).filter(([, s]) => ours(s) && s.healthcheck))
      expect(s.healthcheck!.test.join(' '), name).toContain(`http://127.0.0.1:${listenPort(name)}/readyz`);
  });

  it('sets only environment our code reads, binding to all interfaces inside the container', () => {
    // Each against its role's schema (services/config). The secrets service takes the secrets' own
    // names (checked against what it writes, below); the simulated servers take none.
    for (const [name, s] of Object.entries(services).filter(([, s]) => ours(s) && s !== init)) {
      const role = s.image?.startsWith('mcp-fleet/web:') ? 'web' : s.command?.[0];
      const known = role === 'control' || role === 'agent' || role === 'web' ? roleVariables(role) : new Set();
      for (const key of Object.keys(s.environment ?? {})) expect(known, `${name} (${role}): ${key}`).toContain(key);
    }
    expect(services.control!.environment!.MCP_FLEET_API_HOST).toBe('0.0.0.0');
    for (const [, s] of agents) expect(s.environment!.MCP_FLEET_AGENT_HOST).toBe('0.0.0.0');
    // Everything of ours that talks to another service names one that exists, on its port.
    // (NATS_URL names several servers, comma-separated.)
    const urls = Object.values(services)
      .filter(ours)
      .flatMap((s) => Object.values(s.environment ?? {}))
      .filter((v) => /^(postgres|nats|https?):\/\//.test(v) && !v.includes('127.0.0.1'))
      .flatMap((v) => (v.startsWith('nats://') ? v.split(',') : [v]));
    for (const u of urls) expect(services, u).toHaveProperty(new URL(u).hostname);
    expect(services.web!.environment!.MCP_FLEET_API_URL).toBe(`http://control:${listenPort('control')}`);
  });

  it('has Prometheus scrape control and every agent where they listen, and alert through Alertmanager', () => {
    const prom = parse(read('deploy/prometheus/prometheus.yml')) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
      alerting: { alertmanagers: { static_configs: { targets: string[] }[] }[] };
      rule_files: string[];
    };
    const targets = prom.scrape_configs.flatMap((c) => c.static_configs.flatMap((sc) => sc.targets));
    for (const name of ['control', ...agents.map(([n]) => n)]) expect(targets).toContain(`${name}:${listenPort(name)}`);
    for (const t of targets) expect(services, t).toHaveProperty(t.split(':')[0]!);
    expect(prom.alerting.alertmanagers.flatMap((a) => a.static_configs.flatMap((s) => s.targets))).toContain(
      'alertmanager:9093',
    );
    // The rules directory is mounted where rule_files looks.
    expect(services.prometheus!.volumes).toContain('./deploy/prometheus/rules:/etc/prometheus/rules:ro');
    expect(prom.rule_files.every((f) => f.startsWith('/etc/prometheus/rules/'))).toBe(true);
  });

  it('wires Grafana to Prometheus and traces through the collector to Jaeger', () => {
    const dir = join(REPO, 'deploy/grafana/provisioning/datasources');
    const datasources = parse(readFileSync(join(dir, 'prometheus.yml'), 'utf8')) as {
      datasources: { type: string; url: string }[];
    };
    for (const d of datasources.datasources) expect(services, d.url).toHaveProperty(new URL(d.url).hostname);
    const collector = parse(read('deploy/otel/collector.yml')) as {
      receivers: { otlp: { protocols: { http: { endpoint: string } } } };
      exporters: Record<string, { endpoint: string }>;
    };
    const otlpHttpPort = collector.receivers.otlp.protocols.http.endpoint.split(':')[1];
    for (const [, s] of Object.entries(services).filter(
      ([, s]) => ours(s) && s.environment?.OTEL_EXPORTER_OTLP_ENDPOINT,
    ))
      expect(s.environment!.OTEL_EXPORTER_OTLP_ENDPOINT).toBe(`http://otel-collector:${otlpHttpPort}`);
    for (const e of Object.values(collector.exporters)) expect(services).toHaveProperty(e.endpoint.split(':')[0]!);
  });

  it('keeps Prometheus, Grafana and Postgres closed: no lifecycle API, no default password, no anonymous access', () => {
    const prometheus = services.prometheus!.command ?? [];
    for (const flag of ['--web.enable-lifecycle', '--web.enable-admin-api', '--web.enable-remote-write-receiver'])
      expect(
        prometheus.some((a) => a.startsWith(flag)),
        flag,
      ).toBe(false);
    const grafana = services.grafana!.environment!;
    expect(grafana).not.toHaveProperty('GF_SECURITY_ADMIN_PASSWORD');
    expect(grafana.GF_SECURITY_ADMIN_PASSWORD__FILE).toMatch(/^\/run\//);
    expect(grafana.GF_AUTH_ANONYMOUS_ENABLED).toBe('false');
    expect(grafana.GF_USERS_ALLOW_SIGN_UP).toBe('false');
    expect(services.postgres!.environment).not.toHaveProperty('POSTGRES_PASSWORD');
    expect(services.postgres!.environment!.POSTGRES_PASSWORD_FILE).toMatch(/^\/run\//);
    // No secret has a default anywhere in the file: every ${VAR:-default} defaults to nothing.
    const text = read('docker-compose.yml');
    expect([...text.matchAll(/\$\{(\w+):-([^}]*)\}/g)].filter((m) => m[2] !== '').map((m) => m[0])).toEqual([]);
    expect(text).not.toMatch(/ALLOW_UNAUTHENTICATED/);
  });

  it('keeps agents off Postgres, the dashboard, Alertmanager and Grafana, and Postgres to control and the dashboard', () => {
    const nets = (name: string) => new Set(services[name]!.networks ?? []);
    const share = (a: string, b: string) => [...nets(a)].some((n) => nets(b).has(n));
    for (const [agent] of agents) {
      for (const other of ['postgres', 'web', 'alertmanager', 'grafana', 'jaeger'])
        expect(share(agent, other), `${agent} and ${other}`).toBe(false);
      // What it needs: NATS, the collector, the scraper, and a way out to the servers it probes.
      for (const other of [...natsNodes.map(([n]) => n), 'otel-collector', 'prometheus'])
        expect(share(agent, other), other).toBe(true);
      expect(
        [...nets(agent)].some((n) => !compose.networks[n]?.internal),
        `${agent} reaches out`,
      ).toBe(true);
    }
    const withPostgres = Object.keys(services).filter((n) => n !== 'postgres' && share(n, 'postgres'));
    expect(withPostgres.sort()).toEqual(['control', 'web']);
    // Everything a service talks to shares a network with it.
    for (const [a, b] of [
      ...natsNodes.map(([n]) => ['control', n]),
      ['control', 'postgres'],
      ['web', 'control'],
      ['web', 'postgres'],
      ['prometheus', 'control'],
      ['prometheus', 'alertmanager'],
      ['grafana', 'prometheus'],
      ['grafana', 'jaeger'],
      ['otel-collector', 'jaeger'],
    ])
      expect(share(a!, b!), `${a} and ${b}`).toBe(true);
    // A published port needs a network that is not internal; every network used is declared.
    for (const [name, s] of Object.entries(services)) {
      for (const n of s.networks ?? []) expect(compose.networks, `${name}: ${n}`).toHaveProperty(n);
      if (s.ports?.length)
        expect(
          (s.networks ?? []).some((n) => !compose.networks[n]?.internal),
          name,
        ).toBe(true);
    }
    expect(init.network_mode).toBe('none');
  });

  describe('auth on from the first start (the secrets service, run as compose runs it)', () => {
    let root: string;
    let disk: ReturnType<typeof composeOnDisk>;
    const processes: ChildProcess[] = [];
    const buses: NatsBus[] = [];
    const hostPath = (service: Service, path: string) => disk.hostPath(service, path);
    const envOf = (name: string, dotenv?: Record<string, string>) => disk.envOf(name, dotenv);

    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), 'mcp-fleet-compose-'));
      disk = composeOnDisk(root);
    });

    afterAll(async () => {
      await Promise.all(buses.map((b) => b.close().catch(() => {})));
      for (const p of processes) p.kill('SIGKILL');
      if (root) rmSync(root, { recursive: true, force: true });
    });

    it('runs before everything that reads a secret, alone with the secrets volume, as root only to chown', () => {
      expect(initEntry, 'a service runs `mcp-fleet secrets init`').toBeDefined();
      expect(init.image).toBe('mcp-fleet/mcp-fleet:0.1.0');
      expect(init.command!.slice(0, 2)).toEqual(['secrets', 'init']);
      // Every agent's region gets its NATS user; files go to our images' user (node, 1000) and Grafana's (472).
      const regions = init.command!.filter((_, i, a) => a[i - 1] === '--region').sort();
      expect(regions).toEqual(agents.map(([, s]) => s.command![2]).sort());
      expect(init.command!.filter((_, i, a) => a[i - 1] === '--owner').sort()).toEqual(['1000', 'grafana=472']);
      expect(init.user).toBe('0:0');
      for (const [name, s] of Object.entries(services)) {
        const mounts = (s.volumes ?? []).map((v) => v.split(':')[0]!);
        const secretVolumes = mounts.filter((m) => m.startsWith('secrets'));
        if (s === init) continue;
        // The master copies are the secrets service's alone; a role's volume is mounted read-only.
        expect(secretVolumes, name).not.toContain('secrets');
        for (const v of (s.volumes ?? []).filter((x) => x.startsWith('secrets-'))) expect(v, name).toMatch(/:ro$/);
        if (secretVolumes.length)
          expect(s.depends_on?.[initName]?.condition, name).toBe('service_completed_successfully');
      }
    });

    it('generates every secret once, 0600, and keeps it on the next start', async () => {
      const first = await disk.runInit();
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      const files = disk.written();
      expect(Object.keys(files).length).toBeGreaterThan(20);
      for (const [path, { mode }] of Object.entries(files)) expect(mode, path).toBe(0o600);
      // The secrets service passes exactly the secrets it knows from .env: no more, no fewer.
      const names = Object.keys(files).filter((f) => !f.includes('/') && f !== 'MCP_FLEET_SECRET_KEY_PREVIOUS');
      expect(Object.keys(init.environment!).sort()).toEqual([...names, 'MCP_FLEET_SECRET_KEY_PREVIOUS'].sort());
      // Every file a service is pointed at exists (its role's volume holds it).
      for (const [name, s] of Object.entries(services))
        for (const [k, path] of Object.entries(envOf(name)))
          if (k.endsWith('_FILE') || k.endsWith('__FILE'))
            expect(existsSync(path), `${name}: ${k} → ${s.environment![k]}`).toBe(true);
      const second = await disk.runInit();
      expect(second.code).toBe(0);
      expect(second.stdout).toContain('generated none');
      expect(disk.written()).toEqual(files);
    });

    it('lets a value set in .env win, and gives the services that value', async () => {
      const dotenv = {
        MCP_FLEET_WEB_PASSWORD: 'my own dashboard password',
        MCP_FLEET_ADMIN_TOKEN: 'my-own-admin-token-0123456789abcdef',
        GRAFANA_ADMIN_PASSWORD: 'my own grafana password',
      };
      const run = await disk.runInit(dotenv);
      expect(run.stderr).toBe('');
      for (const v of Object.values(dotenv)) expect(run.stdout).not.toContain(v);
      const web = secretEnv(envOf('web'));
      expect(web.MCP_FLEET_WEB_PASSWORD).toBe(dotenv.MCP_FLEET_WEB_PASSWORD);
      expect(web.MCP_FLEET_API_TOKEN).toBe(dotenv.MCP_FLEET_ADMIN_TOKEN);
      expect(secretEnv(envOf('control')).MCP_FLEET_ADMIN_TOKEN).toBe(dotenv.MCP_FLEET_ADMIN_TOKEN);
      expect(readFileSync(envOf('grafana').GF_SECURITY_ADMIN_PASSWORD__FILE!, 'utf8')).toBe(
        dotenv.GRAFANA_ADMIN_PASSWORD,
      );
      for (const [path, { mode }] of Object.entries(disk.written())) expect(mode, path).toBe(0o600);
    });

    it('runs no service with auth off beyond loopback: control and the dashboard start with auth on', () => {
      const problems: string[] = [];
      for (const [name, s] of Object.entries(services)) {
        const all = [...Object.entries(s.environment ?? {}).flat(), ...(s.command ?? []), ...(s.entrypoint ?? [])];
        if (all.some((x) => /ALLOW_UNAUTHENTICATED/.test(String(x)))) problems.push(`${name} turns auth off`);
      }
      expect(problems).toEqual([]);
      for (const [name, s] of Object.entries(services).filter(([, x]) => x.command?.[0] === 'control')) {
        const env = envOf(name);
        const flag = s.command!.indexOf('--host');
        const host = flag >= 0 ? s.command![flag + 1]! : (env.MCP_FLEET_API_HOST ?? '127.0.0.1');
        const auth = apiAuthFromEnv(env);
        expect(auth.enabled, name).toBe(true);
        expect(auth.counts).toEqual({ admin: 1, read: 1 });
        // What `mcp-fleet control` checks before it starts: it would refuse an open API beyond loopback.
        expect(isLoopbackHost(host)).toBe(false);
        expect(() =>
          assertSafeBind({
            what: name,
            host,
            authEnabled: auth.enabled,
            allowUnauthenticated: parseEnv(controlEnv, env).exposure.allowUnauthenticated,
            how: '',
          }),
        ).not.toThrow();
        expect(() =>
          assertSafeBind({
            what: name,
            host,
            authEnabled: false,
            allowUnauthenticated: parseEnv(controlEnv, env).exposure.allowUnauthenticated,
            how: '',
          }),
        ).toThrow(/no authentication/);
        // The credentials key, and the database password for a URL without one.
        expect(loadKeyring(parseEnv(controlEnv, env).secretKey)).not.toBeNull();
        expect(new URL(env.DATABASE_URL!).password).toBe('');
        expect(secretEnv(env).PGPASSWORD).toBe(
          readFileSync(hostPath(services.postgres!, services.postgres!.environment!.POSTGRES_PASSWORD_FILE!), 'utf8'),
        );
      }
      // The dashboard (its image listens on all interfaces): signing in is required, with the password
      // or an API token, and its own token for control is control's admin token.
      const webEnv = secretEnv(envOf('web'));
      const web = webAuthFromEnv(webEnv);
      expect(web.enabled).toBe(true);
      expect(web.login(webEnv.MCP_FLEET_WEB_PASSWORD!)).toBe('admin');
      expect(web.login(webEnv.MCP_FLEET_READ_TOKEN!)).toBe('read');
      expect(web.login('')).toBeNull();
      expect(apiAuthFromEnv(envOf('control')).identify(webEnv.MCP_FLEET_API_TOKEN!)).toBe('admin');
      expect(loadKeyring(parseEnv(webRoleEnv, envOf('web')).secretKey)?.id).toBe(
        loadKeyring(parseEnv(controlEnv, envOf('control')).secretKey)?.id,
      );
    });

    it('starts the NATS nodes with their entrypoint as a cluster; control (streams in three copies) and each agent connect as their own users: the pipeline runs', async () => {
      // Each node's entrypoint and command, its mounts on this machine, its ports free ones on
      // loopback: clients, monitoring and routes (the peers' names mapped to those route ports).
      const nodes = await Promise.all(
        natsNodes.map(async ([name, s]) => ({
          name,
          s,
          port: await freePort(),
          monitor: await freePort(),
          route: await freePort(),
          log: '',
        })),
      );
      const peers = (value: string) =>
        value.replace(/([\w-]+):6222/g, (m, host: string) => {
          const node = nodes.find((n) => n.name === host);
          if (!node) throw new Error(`NATS_PEERS names ${m}, which is no NATS node`);
          return `127.0.0.1:${node.route}`;
        });
      for (const node of nodes) {
        const [shell, flag, script, argv0] = node.s.entrypoint!.map((a) => interpolate(a, {}));
        const mapped = script!.replace(/\/run\/mcp-fleet/g, hostPath(node.s, '/run/mcp-fleet'));
        const store = join(root, `${node.name}-data`);
        mkdirSync(store);
        const args = node.s.command!.map((a, i, all) => {
          if (all[i - 1] === '-c') return hostPath(node.s, a);
          if (all[i - 1] === '-sd') return store;
          if (all[i - 1] === '-m') return String(node.monitor);
          return a;
        });
        const extra = ['-a', '127.0.0.1', '-p', String(node.port), '--cluster', `nats://127.0.0.1:${node.route}`];
        const env = Object.fromEntries(Object.entries(node.s.environment ?? {}).map(([k, v]) => [k, peers(String(v))]));
        const child = spawn(shell!, [flag!, mapped, argv0!, ...args, ...extra], {
          env: { PATH: '/usr/sbin:/usr/bin:/bin', ...env } as unknown as NodeJS.ProcessEnv,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        processes.push(child);
        child.stderr!.on('data', (d: Buffer) => {
          node.log += d.toString();
        });
        const deadline = Date.now() + 20_000;
        while (!node.log.includes('Server is ready')) {
          if (child.exitCode !== null || Date.now() > deadline)
            throw new Error(`${node.name} did not start: ${node.log}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      // Routes open with the generated route password: the three elect a JetStream meta leader.
      const metaLeader = (n: (typeof nodes)[number]) =>
        fetch(`http://127.0.0.1:${n.monitor}/jsz`)
          .then((r) => r.json() as Promise<{ meta_cluster?: { leader?: string; cluster_size?: number } }>)
          .then(
            (j) => j.meta_cluster,
            () => undefined,
          );
      const until = Date.now() + 30_000;
      for (;;) {
        const seen = await Promise.all(nodes.map(metaLeader));
        if (seen.every((m) => m?.leader && m.leader === seen[0]?.leader && m.cluster_size === nodes.length)) break;
        if (Date.now() > until)
          throw new Error(`no JetStream cluster of ${nodes.length}: ${JSON.stringify(seen)}\n${nodes[0]!.log}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      for (const n of nodes) expect(n.log, n.name).not.toMatch(/Authorization Violation|authentication error/);

      const url = nodes.map((n) => `nats://127.0.0.1:${n.port}`).join(',');
      const open = async (name: string, settings: NatsSettings, declare: boolean) => {
        const log = capturedLogger();
        const bus = await connectNatsBus({ ...settings, servers: url, name, declare, log: log.log });
        buses.push(bus);
        return { bus, user: settings.user, lines: log.lines };
      };
      // Control as compose runs it: its own user, every stream in MCP_FLEET_NATS_REPLICAS copies. A
      // stream made with one copy first (a stack from before the cluster) is changed, with its rights.
      const controlSettings = parseEnv(controlEnv, envOf('control')).nats;
      expect(controlSettings.replicas).toBe(nodes.length);
      const older = await open('control', { ...controlSettings, replicas: 1 }, true);
      await older.bus.ensure(agents.map(([, s]) => s.command![2]!));
      const control = await open('control', controlSettings, true);
      expect(control.user).toBe(NATS_USERS.control);
      await control.bus.ensure(agents.map(([, s]) => s.command![2]!));
      for (const stream of [control.bus.names.jobsStream, control.bus.names.resultsStream]) {
        expect(control.lines()).toContainEqual(
          expect.objectContaining({ msg: 'stream replicas changed', stream, from: 1, to: nodes.length }),
        );
        const info = await (await jetstreamManager(control.bus.connection)).streams.info(stream);
        expect(info.config.num_replicas).toBe(nodes.length);
        expect([info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)].sort()).toEqual(
          nodes.map((n) => n.name),
        );
      }
      for (const [name, s] of agents) {
        const region = s.command![2]!;
        const agent = await open(name, parseEnv(agentEnv, envOf(name)).nats, false);
        expect(agent.user, name).toBe(NATS_USERS.agent(region));
        const got: string[] = [];
        const sub = agent.bus.consumeJobs(
          region,
          async (d) => {
            got.push(d.value.jobId);
            await agent.bus.publishResult(result(region, { jobId: d.value.jobId }));
            await d.ack();
          },
          { concurrency: 1 },
        );
        const sent = job(region);
        await control.bus.publishJob(sent);
        const deadline = Date.now() + 20_000;
        while (!got.includes(sent.jobId)) {
          if (Date.now() > deadline) throw new Error(`${name} never got its job`);
          await new Promise((r) => setTimeout(r, 50));
        }
        await sub.stop();
      }
      for (const n of nodes) expect(n.log, n.name).not.toMatch(/Violation/);
    });
  });

  describe('the demo fleet', () => {
    let sim: Sim;
    beforeAll(async () => {
      sim = await startSim();
    });
    afterAll(() => sim?.close());

    it('is the fleet file control loads, and each agent has a simulated fleet where it says', () => {
      const mount = services.control!.volumes!.find((v) => v.endsWith(':/etc/mcp-fleet/fleet.yaml:ro'))!;
      expect(services.control!.command).toEqual(['control', '--fleet', '/etc/mcp-fleet/fleet.yaml']);
      const fleet = parseFleet(read(mount.split(':')[0]!), 'deploy/compose/fleet.yaml', {});
      expect([...fleet.regions].sort()).toEqual(agents.map(([, s]) => s.command![2]).sort());
      // `sim --port 7400` puts target i on 7400 + i; the file points at exactly those.
      for (const server of fleet.servers) {
        const index = TARGET_NAMES.indexOf(server.name);
        expect(index, server.name).toBeGreaterThanOrEqual(0);
        const url = new URL(server.url);
        expect([url.hostname, Number(url.port), url.pathname]).toEqual([
          '127.0.0.1',
          7400 + index,
          new URL(sim.target(server.name).url).pathname,
        ]);
      }
      // One sim per agent, inside the agent's network namespace (so probes stay on loopback).
      const sims = Object.values(services).filter((s) => s.command?.[0] === 'sim');
      expect(sims.map((s) => s.network_mode).sort()).toEqual(agents.map(([n]) => `service:${n}`).sort());
      for (const s of sims) expect(s.command).toEqual(['sim', '--port', '7400', '--drift']);
    });

    it("is within every agent's own probe floor (no job can reach further, so the demo needs it there)", () => {
      const mount = services.control!.volumes!.find((v) => v.endsWith(':/etc/mcp-fleet/fleet.yaml:ro'))!;
      const fleet = parseFleet(read(mount.split(':')[0]!), 'deploy/compose/fleet.yaml', {});
      for (const [name, agent] of agents) {
        // The floor as `mcp-fleet agent` reads it from the service's environment.
        // (Its secrets' files are the container's, not this machine's: not read here.)
        const env = Object.fromEntries(Object.entries(agent.environment ?? {}).filter(([k]) => !k.endsWith('_FILE')));
        const floor = new TargetPolicy(probeFloor(parseEnv(agentEnv, env).probeFloor)).narrow(fleet.policy);
        for (const server of fleet.servers)
          expect(floor.refusesUrl(new URL(server.url)), `${name}: ${server.name}`).toBeUndefined();
        // And no further than the demo needs: the metadata address stays refused.
        expect(floor.refusesUrl(new URL('http://169.254.169.254/')), name).toBeDefined();
      }
    });
  });
});
