// Exporting spans: the OTel Node SDK with the OTLP/HTTP trace exporter when a URL is given (config
// makes it from OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, unless
// OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none), and no SDK at all otherwise, so an agent without
// a collector pays nothing: the SDK and the exporter are imported only then (loading them costs
// tens of MB of heap and code in every process, bench:memory). Only traces: the agent's metrics
// are scraped from /metrics, and its logs go to stdout.
import { AGENT_VERSION } from './version';

export interface TracingOptions {
  serviceName: string;
  serviceVersion?: string;
  /** Where spans go (`<collector>/v1/traces`: config's tracing settings); unset, tracing is off. */
  url?: string | undefined;
}

export interface Tracing {
  /** Whether an SDK is running; when false the global tracer is the no-op one and results carry no trace id. */
  readonly enabled: boolean;
  /** Flush pending spans and stop exporting. */
  shutdown(): Promise<void>;
}

export async function startTracing(opts: TracingOptions): Promise<Tracing> {
  const url = opts.url;
  if (!url) return { enabled: false, shutdown: async () => {} };
  const [{ OTLPTraceExporter }, { defaultResource, resourceFromAttributes }, { NodeSDK }, { ATTR_SERVICE_VERSION }] =
    await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/semantic-conventions'),
    ]);
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
