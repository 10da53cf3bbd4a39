// @mcp-fleet/monitor: the whole monitor started one way (see monitor.ts).
export {
  type AgentsConfig,
  type DashboardConfig,
  type DashboardStarter,
  type Monitor,
  type MonitorAddresses,
  type MonitorConfig,
  startMonitor,
} from './monitor';
