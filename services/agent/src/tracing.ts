// Exporting spans: the OTel Node SDK with the OTLP/HTTP trace exporter when an endpoint is
// configured (OTEL_EXPORTER_OTLP_ENDPOINT, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or `endpoint`),
// and no SDK at all otherwise, so an agent without a collector pays nothing. Only traces: the
// agent's metrics are scraped from /metrics, and its logs go to stdout.
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { AGENT_VERSION } from './version';

export interface TracingOptions {
  serviceName: string;
  serviceVersion?: string;
  /** The collector's base URL (as OTEL_EXPORTER_OTLP_ENDPOINT); spans go to `<endpoint>/v1/traces`. */
  endpoint?: string;
  env?: Record<string, string | undefined>;
}

export interface Tracing {
  /** Whether an SDK is running; when false the global tracer is the no-op one and results carry no trace id. */
  readonly enabled: boolean;
  /** Flush pending spans and stop exporting. */
  shutdown(): Promise<void>;
}

/** Where spans go: a signal-specific endpoint is used as is, a base endpoint gets `/v1/traces` (as the OTel spec says). */
export function tracesUrl(opts: { endpoint?: string; env?: Record<string, string | undefined> }): string | undefined {
  const env = opts.env ?? process.env;
  const base = opts.endpoint ?? (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? undefined : env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (base) return `${base.replace(/\/+$/, '')}/v1/traces`;
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || undefined;
}

export function startTracing(opts: TracingOptions): Tracing {
  const env = opts.env ?? process.env;
  const url = tracesUrl(opts);
  if (!url || env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') {
    return { enabled: false, shutdown: async () => {} };
  }
  const sdk = new NodeSDK({
    serviceName: opts.serviceName,
    resource: defaultResource().merge(
      resourceFromAttributes({ [ATTR_SERVICE_VERSION]: opts.serviceVersion ?? AGENT_VERSION }),
    ),
    traceExporter: new OTLPTraceExporter({ url }),
    // Nothing else: no metric readers or log processors (the SDK would default both to OTLP).
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown: () => {
      stopped ??= sdk.shutdown();
      return stopped;
    },
  };
}
