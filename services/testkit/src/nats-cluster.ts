// A private JetStream cluster for the tests that lose a broker under load: three nats-servers (by
// default) on free loopback ports, each with its own store directory, routed to one another on
// loopback. Each node is a NatsServer (nats-server.ts), so one can be killed and started again on
// its port and store; `url` names them all, as a client of a cluster is given them.

import { type NatsServer, startNatsServer } from './nats-server';
import { freePort } from './net';
import { waitFor } from './wait';

export interface NatsClusterNode extends NatsServer {
  /** Its server_name: what JetStream's cluster info (a stream's leader, its replicas) calls it. */
  readonly name: string;
  /** Its monitoring port (`/jsz`, `/healthz`) on 127.0.0.1. */
  readonly monitorPort: number;
}

export interface NatsCluster {
  readonly nodes: readonly NatsClusterNode[];
  /** Every node's URL, comma-separated (the bus's `servers`, NATS_URL). */
  readonly url: string;
  /** The node JetStream calls `name` (a stream's `cluster.leader`). */
  node(name: string): NatsClusterNode;
  /** Until every running node sees the same JetStream meta leader (the cluster can create streams). */
  ready(timeoutMs?: number): Promise<void>;
  /** Kill every node and remove their stores. */
  close(): Promise<void>;
}

export interface NatsClusterOptions {
  /** How many nodes (default 3: JetStream's quorum survives losing one). */
  size?: number;
  /** More of every node's config, after the cluster block. */
  config?: string;
}

export async function startNatsCluster(opts: NatsClusterOptions = {}): Promise<NatsCluster> {
  const size = opts.size ?? 3;
  const clusterName = `mcp-fleet-test-${process.pid}`;
  // Route ports first: every node's config names all of them (its own is ignored by nats-server).
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routes = routePorts.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ');
  const nodes: NatsClusterNode[] = [];
  const close = async () => {
    await Promise.all(nodes.map((n) => n.close()));
  };
  try {
    for (let i = 0; i < size; i++) {
      const name = `n${i + 1}`;
      const monitorPort = await freePort();
      const server = await startNatsServer({
        config:
          `server_name: ${name}\nhttp: "127.0.0.1:${monitorPort}"\n` +
          `cluster {\n  name: ${clusterName}\n  listen: "127.0.0.1:${routePorts[i]}"\n  routes: [${routes}]\n}\n` +
          (opts.config ?? ''),
      });
      nodes.push(Object.assign(server, { name, monitorPort }));
    }
  } catch (err) {
    await close();
    throw err;
  }

  /** The meta leader a node sees, or undefined (not running, or no leader elected yet). */
  const metaLeader = async (node: NatsClusterNode): Promise<string | undefined> => {
    try {
      const res = await fetch(`http://127.0.0.1:${node.monitorPort}/jsz`);
      const body = (await res.json()) as { meta_cluster?: { leader?: string } };
      return body.meta_cluster?.leader || undefined;
    } catch {
      return undefined;
    }
  };

  const cluster: NatsCluster = {
    nodes,
    url: nodes.map((n) => n.url).join(','),
    node(name) {
      const found = nodes.find((n) => n.name === name);
      if (!found) throw new Error(`no node ${name} in the cluster (${nodes.map((n) => n.name).join(', ')})`);
      return found;
    },
    async ready(timeoutMs = 30_000) {
      await waitFor(
        'the JetStream cluster to elect a meta leader',
        async () => {
          const seen = await Promise.all(nodes.map(metaLeader));
          const up = seen.filter((l) => l !== undefined);
          return up.length > size / 2 && up.every((l) => l === up[0]);
        },
        timeoutMs,
      );
    },
    close,
  };
  try {
    await cluster.ready();
  } catch (err) {
    await close();
    throw err;
  }
  return cluster;
}
