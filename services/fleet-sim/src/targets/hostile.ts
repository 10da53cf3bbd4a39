// The hostile and broken targets, in their fixed fleet order (appended after every other target).
import type { TargetDefinition } from '../target';
import {
  hostileBatchAnswer,
  hostileDeepJson,
  hostileGzipBomb,
  hostileHugeBody,
  hostileHugeError,
  hostileInvalidUtf8,
  hostileRedirectDenied,
  hostileRedirectLoop,
  hostileReset,
  hostileSseEndless,
  hostileSseFlood,
  hostileSseHugeLine,
  hostileTrickleBody,
  hostileUnicodeEscapes,
  hostileWrongId,
} from './hostile-http';
import {
  hostileGarbage,
  hostileHttp09,
  hostileHugeHeaders,
  hostileInformational,
  hostileSlowloris,
} from './hostile-tcp';
import { hostileTlsExpired, hostileTlsSelfSigned, hostileTlsWrongName } from './hostile-tls';

export const HOSTILE: readonly TargetDefinition[] = [
  hostileSlowloris,
  hostileTrickleBody,
  hostileSseEndless,
  hostileSseFlood,
  hostileHugeBody,
  hostileGzipBomb,
  hostileDeepJson,
  hostileInvalidUtf8,
  hostileHugeHeaders,
  hostileRedirectLoop,
  hostileGarbage,
  hostileReset,
  hostileRedirectDenied,
  hostileTlsSelfSigned,
  hostileTlsExpired,
  hostileWrongId,
  hostileUnicodeEscapes,
  hostileBatchAnswer,
  hostileSseHugeLine,
  hostileHttp09,
  hostileInformational,
  hostileTlsWrongName,
  hostileHugeError,
];
