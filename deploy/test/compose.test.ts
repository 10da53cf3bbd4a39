// docker-compose.yml, checked without a Docker engine: every image, build, port, volume and config
// file it names exists and agrees with the services' own defaults and with the other config files.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseFleet } from '@mcp-fleet/control';
import { type Sim, startSim, TARGET_NAMES } from '@mcp-fleet/fleet-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { envNamesReadByCode, REPO } from './source-env';

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string; target: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  profiles?: string[];
  network_mode?: string;
}

const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
const ours = (s: Service) => s.image?.startsWith('mcp-fleet/') ?? false;
const agents = Object.entries(services).filter(([, s]) => s.command?.[0] === 'agent');
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
      'nats',
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
    expect(services.nats!.command).toEqual(expect.arrayContaining(['-js', '-sd']));
    const demo = Object.entries(services).filter(([, s]) => s.profiles?.includes('demo'));
    expect(demo.length).toBe(agents.length);
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
    expect(dockerfile).toContain('ENTRYPOINT ["node", "services/cli/bin/mcp-fleet.js"]');
    expect(existsSync(join(REPO, 'services/cli/bin/mcp-fleet.js'))).toBe(true);
    expect(existsSync(join(REPO, 'node_modules/next/dist/bin/next'))).toBe(true);
    expect(dockerfile).toContain('"node_modules/next/dist/bin/next", "start", "web"');
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
    const known = envNamesReadByCode();
    for (const [name, s] of Object.entries(services).filter(([, s]) => ours(s)))
      for (const key of Object.keys(s.environment ?? {})) expect(known, `${name}: ${key}`).toContain(key);
    expect(services.control!.environment!.MCP_FLEET_API_HOST).toBe('0.0.0.0');
    for (const [, s] of agents) expect(s.environment!.MCP_FLEET_AGENT_HOST).toBe('0.0.0.0');
    // Everything of ours that talks to another service names one that exists, on its port.
    const urls = Object.values(services)
      .filter(ours)
      .flatMap((s) => Object.values(s.environment ?? {}))
      .filter((v) => /^(postgres|nats|https?):\/\//.test(v) && !v.includes('127.0.0.1'));
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
  });
});
