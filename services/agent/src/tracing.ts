// Exporting spans: the OTel Node SDK with the OTLP/HTTP trace exporter when a URL is given (config
// makes it from OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, unless
// OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none), and no SDK at all otherwise, so an agent without a collector pays nothing. Only traces: the
// agent's metrics are scraped from /metrics, and its logs go to stdout.
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
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

export function startTracing(opts: TracingOptions): Tracing {
  const url = opts.url;
  if (!url) return { enabled: false, shutdown: async () => {} };
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
