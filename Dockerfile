# syntax=docker/dockerfile:1
# Two small images from one build:
#   services  the mcp-fleet command (control, agent, sim, up); TypeScript runs through tsx, but for
#             an agent: bundled into plain JavaScript (services/cli/dist), which the launcher runs
#   web       the dashboard: its own HTTP server over the built Next app (web/bin/dashboard.js)
# Built with every dependency, then trimmed to what runs; both run as the unprivileged `node` user.
ARG NODE_IMAGE=node:20.20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1 TURBO_TELEMETRY_DISABLED=1
COPY . .
RUN npm ci \
 && npm run build --workspace @mcp-fleet/web \
 && npm run build:agent \
 && npm prune --omit=dev \
 && rm -rf web/.next/cache

FROM ${NODE_IMAGE} AS services
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/services ./services
COPY --from=build --chown=node:node /app/migrations ./migrations
# `up` without DATABASE_URL keeps its embedded database here.
RUN mkdir -p /app/.mcp-fleet && chown node:node /app /app/.mcp-fleet
USER node
# control's API and /metrics; an agent's /metrics (set MCP_FLEET_API_HOST / MCP_FLEET_AGENT_HOST=0.0.0.0).
EXPOSE 7070 7071
# The mcp-fleet command under node, with the V8 flags its verb needs (an agent's memory): the launcher says which and why.
ENTRYPOINT ["/bin/sh", "services/cli/bin/mcp-fleet.sh"]
CMD ["help"]

FROM ${NODE_IMAGE} AS web
# Listening on every address of the container: sign-in on (MCP_FLEET_WEB_PASSWORD or API tokens),
# or MCP_FLEET_ALLOW_UNAUTHENTICATED=1 where something in front authenticates; it refuses to start otherwise.
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 PORT=3000 MCP_FLEET_WEB_HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/services ./services
COPY --from=build --chown=node:node /app/web ./web
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Not `next start`: the dashboard's own server sets the client address its sign-in budget keys on
# (from the socket, over any header a client sends) and the anti-framing headers on every answer.
CMD ["node", "web/bin/dashboard.js"]
