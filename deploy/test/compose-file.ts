// docker-compose.yml as the tests read it, and a small stand-in for what Docker would do with it:
// compose's interpolation, each named volume as a directory, the `secrets` service's command run
// as a process, and each service's environment with its `<VAR>_FILE` paths on this machine.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { runCli } from './secrets-init';
import { REPO } from './source-env';

export interface Service {
  image?: string;
  build?: { context: string; dockerfile: string; target: string };
  command?: string[];
  entrypoint?: string[];
  user?: string;
  environment?: Record<string, string>;
  networks?: string[];
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  profiles?: string[];
  network_mode?: string;
}

export const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
export const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  networks: Record<string, { internal?: boolean }>;
};
export const services = compose.services;
export const agents = Object.entries(services).filter(([, s]) => s.command?.[0] === 'agent');
/** The nodes of the NATS cluster: the services running nats-server on deploy/nats/cluster.conf. */
export const natsNodes = Object.entries(services).filter(([, s]) => s.command?.includes('/etc/nats/cluster.conf'));
/** The service that runs `mcp-fleet secrets init` (a stand-in when there is none, for the tests to say so). */
export const initEntry = Object.entries(services).find(([, s]) => s.command?.[0] === 'secrets');
export const [initName, init]: [string, Service] = initEntry ?? [
  'secrets',
  { command: ['secrets', 'init', '--dir', '/none'] },
];

/** Compose's interpolation of the forms the file uses: ${VAR}, ${VAR:-default} and $$. */
export const interpolate = (value: string, dotenv: Record<string, string>) =>
  value.replace(/\$\$|\$\{(\w+)(?::-([^}]*))?\}|\$/g, (m, name?: string, fallback?: string) => {
    if (m === '$$') return '$';
    if (!name) throw new Error(`an interpolation form this test does not know: ${value}`);
    return dotenv[name] || fallback || '';
  });

/** The stack's volumes under `root`, laid out as the secrets service's own mounts say. */
export function composeOnDisk(root: string) {
  const args = init.command!;
  const dirInContainer = args[args.indexOf('--dir') + 1]!;
  const initDir = join(root, 'secrets');
  const volumeDirs = new Map<string, string>();
  for (const v of init.volumes ?? []) {
    const [source, target] = v.split(':') as [string, string];
    if (target !== dirInContainer && !target.startsWith(`${dirInContainer}/`))
      throw new Error(`the secrets service mounts ${v} outside its --dir ${dirInContainer}`);
    volumeDirs.set(source, join(initDir, target.slice(dirInContainer.length)));
  }

  /** Where a path inside a service's container is on this machine: through its longest mount. */
  function hostPath(service: Service, path: string): string {
    let best: { target: string; source: string } | undefined;
    for (const v of service.volumes ?? []) {
      const [source, target] = v.split(':') as [string, string];
      if ((path === target || path.startsWith(`${target}/`)) && target.length > (best?.target.length ?? -1))
        best = { target, source: source.startsWith('./') ? join(REPO, source) : volumeDirs.get(source)! };
    }
    if (!best?.source) throw new Error(`${path} is on no mount this test knows`);
    return join(best.source, path.slice(best.target.length));
  }

  /** A service's environment as its process sees it: interpolated, `_FILE` paths on this machine. */
  function envOf(name: string, dotenv: Record<string, string> = {}): Record<string, string> {
    const s = services[name]!;
    return Object.fromEntries(
      Object.entries(s.environment ?? {}).map(([k, v]) => {
        const value = interpolate(String(v), dotenv);
        return [k, /_FILE$/.test(k) ? hostPath(s, value) : value];
      }),
    );
  }

  /** Run the secrets service's command with `.env` values, its owners made this test's user. */
  async function runInit(dotenv: Record<string, string> = {}) {
    const argv = init.command!.map((a) => interpolate(a, dotenv));
    const uid = String(process.getuid?.() ?? 0);
    for (let i = 0; i < argv.length; i++)
      if (argv[i - 1] === '--owner') argv[i] = argv[i]!.replace(/\d+$/, uid);
      else if (argv[i - 1] === '--dir') argv[i] = initDir;
    return runCli(argv, envOf(initName, dotenv));
  }

  /** Every file the secrets service wrote, relative path → content, mode. */
  function written(): Record<string, { text: string; mode: number }> {
    const out: Record<string, { text: string; mode: number }> = {};
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, e.name);
        if (e.isDirectory()) walk(path);
        else out[relative(initDir, path)] = { text: readFileSync(path, 'utf8'), mode: statSync(path).mode & 0o777 };
      }
    };
    walk(initDir);
    return out;
  }

  return { initDir, hostPath, envOf, runInit, written };
}
