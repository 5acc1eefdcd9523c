import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { AppError } from '../lib/errors.js';
import type { Configuration } from '../modules/configuration/model.js';
import type { CheckedUpload, ConfigurationValidator } from '../modules/configuration/service.js';
import {
  readConfigurationUpload,
  type SectionText,
  type UploadJob,
  type UploadReading,
} from './configuration-upload.js';

/** Uploads smaller than this are read on the calling thread: a thread hop would cost more than it saves. */
export const CONFIGURATION_WORKER_THRESHOLD_BYTES = 64 * 1024;
/**
 * Large uploads waiting for the worker at most; more are read on the calling thread. Uploads are
 * rare and replace one another, so a queue means a client in a loop, and a bound on the bodies
 * held (12 MiB each) matters more than the event loop of that client's requests.
 */
const CONFIGURATION_READS_QUEUED_MAX = 4;
/**
 * JSON text parsed on the event loop between two turns of it when a valid document is taken over
 * from the worker: a few milliseconds of parsing, then the loop serves what waits.
 */
const TEXT_CHARS_PER_TURN_MAX = 256 * 1024;
/** How long an idle worker thread is kept: an upload is often followed by its corrections. */
const WORKER_IDLE_TIMEOUT_MS = 60_000;

/** Reads configuration uploads; `close` ends its worker thread. */
export interface ConfigurationReader {
  readonly validate: ConfigurationValidator;
  close(): Promise<void>;
}

/**
 * The document of a valid upload from its sections' JSON text, parsed on the event loop in steps
 * of at most about {@link TEXT_CHARS_PER_TURN_MAX} characters with a turn of the loop between
 * them: passing the object graph from the worker instead would hold the loop for the whole
 * structured clone (about 0.2 s at 8 MB).
 */
async function configurationOf(sections: readonly SectionText[]): Promise<Configuration> {
  const configuration: Record<string, unknown> = {};
  let charsThisTurn = 0;
  const parse = async (text: string): Promise<unknown> => {
    if (charsThisTurn >= TEXT_CHARS_PER_TURN_MAX) {
      charsThisTurn = 0;
      await nextTurn();
    }
    charsThisTurn += text.length;
    return JSON.parse(text);
  };
  for (const [name, text] of sections) {
    if (typeof text === 'string') {
      configuration[name] = await parse(text);
      continue;
    }
    const elements: unknown[] = [];
    for (const element of text) elements.push(await parse(element));
    configuration[name] = elements;
  }
  return configuration as Configuration;
}

async function checkedUploadOf(reading: UploadReading): Promise<CheckedUpload> {
  switch (reading.kind) {
    case 'refused':
      throw new AppError(reading.code, reading.detail, reading.extensions);
    case 'invalid':
      return { kind: 'invalid', errors: reading.errors };
    case 'unprepared':
      return { kind: 'unprepared', message: reading.message };
    case 'valid':
      return {
        kind: 'valid',
        version: reading.version,
        configuration: await configurationOf(reading.sections),
      };
  }
}

/** The job of a body: raw bytes are read as a request; a value already parsed is checked as a document. */
function jobOf(body: unknown): UploadJob {
  if (body instanceof Uint8Array) return { raw: body, checks: 'request' };
  return { raw: Buffer.from(JSON.stringify(body) ?? 'null'), checks: 'document' };
}

/**
 * The configuration service's validator: reads an upload (`configuration-upload.ts`) on a worker
 * thread when its body is large, on the calling thread otherwise, so a multi-megabyte upload
 * holds the event loop only for short steps (docs/adr/0017-configuration-off-the-event-loop.md).
 * A body may be the raw bytes of the request (refused as the application refuses a JSON body it
 * cannot read: `malformed-json`, `validation-failed`) or a value its caller parsed already. The
 * worker is the built `configuration-worker.js` beside this file; running from TypeScript
 * sources (tests, `npm run dev`) it is the `.ts` file, loaded through tsx. No thread is started
 * before the first large upload.
 */
export function configurationReader(): ConfigurationReader {
  const fromSources = import.meta.url.endsWith('.ts');
  const pool = new Piscina({
    filename: fileURLToPath(new URL(`./configuration-worker.${fromSources ? 'ts' : 'js'}`, import.meta.url)),
    ...(fromSources ? { execArgv: ['--import', 'tsx'] } : {}),
    minThreads: 0,
    maxThreads: 1,
    maxQueue: CONFIGURATION_READS_QUEUED_MAX,
    idleTimeout: WORKER_IDLE_TIMEOUT_MS,
  });
  return {
    async validate(body) {
      const job = jobOf(body);
      const onWorker =
        job.raw.byteLength >= CONFIGURATION_WORKER_THRESHOLD_BYTES &&
        pool.queueSize < CONFIGURATION_READS_QUEUED_MAX;
      const reading = onWorker ? ((await pool.run(job)) as UploadReading) : readConfigurationUpload(job);
      return checkedUploadOf(reading);
    },
    close: () => pool.destroy(),
  };
}
