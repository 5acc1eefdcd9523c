import autocannon, { type Options, type Result } from 'autocannon';
import {
  DIALECT_TITLE,
  formatNumber,
  type RunContext,
  type Section,
  sectionHead,
  stampNow,
  table,
} from './report.js';
import { type Dialect, uploadBenchConfiguration, withService } from './service.js';

/** Issue 2: load from 10 connections for 10 seconds per endpoint. */
const CONNECTIONS = 10;
const DURATION_SECONDS = 10;
/** An untimed run first, so the measured run starts with a warm service and open connections. */
const WARMUP_SECONDS = 1;

/** A warm-up run, then the measured one; both must answer every request with 2xx. */
async function load(options: Options): Promise<Result> {
  await autocannon({ ...options, connections: CONNECTIONS, duration: WARMUP_SECONDS });
  return autocannon({ ...options, connections: CONNECTIONS, duration: DURATION_SECONDS });
}

function row(label: string, result: Result): string[] {
  const failures = result.non2xx + result.errors + result.timeouts;
  return [
    label,
    formatNumber(result.requests.average),
    `${formatNumber(result.latency.p50)} ms`,
    `${formatNumber(result.latency.p99)} ms`,
    `${formatNumber(result.requests.total)}${failures === 0 ? '' : ` (**${formatNumber(failures)} failed**)`}`,
  ];
}

/** Runs the token and bearer-validation load on each dialect. */
export async function runToken(context: RunContext, dialects: readonly Dialect[]): Promise<Section[]> {
  const sections: Section[] = [];
  for (const dialect of dialects) {
    const stamp = stampNow();
    const { storage, grant, bearer } = await withService(dialect, async (service) => {
      await uploadBenchConfiguration(service);
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: service.clientId,
        client_secret: service.clientSecret,
      }).toString();
      const grantResult = await load({
        url: `${service.url}/auth/token`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      console.log(
        `token ${dialect}: POST /auth/token ${formatNumber(grantResult.requests.average)} requests/s`,
      );
      const bearerResult = await load({
        url: `${service.url}/api/v1/namespaces`,
        method: 'GET',
        headers: { authorization: `Bearer ${service.accessToken}` },
      });
      console.log(
        `token ${dialect}: GET /api/v1/namespaces ${formatNumber(bearerResult.requests.average)} requests/s`,
      );
      return { storage: service.storage, grant: grantResult, bearer: bearerResult };
    });
    const markdown = [
      ...sectionHead({
        title: `Token endpoint and bearer validation, ${DIALECT_TITLE[dialect]}`,
        machine: context.machine,
        storage,
        command: context.command,
        stamp,
      }),
      ...table(
        ['request', 'requests/s', 'latency p50', 'latency p99', 'requests (failed)'],
        [
          row(
            '`POST /auth/token` client_credentials, form body (secret checked, token family stored)',
            grant,
          ),
          row('`GET /api/v1/namespaces` with a bearer token (token, credential and owner read)', bearer),
        ],
      ),
      '',
      `Method. autocannon 8 as a library in the benchmark process, ${CONNECTIONS} keep-alive connections, ${DURATION_SECONDS} s per request after an untimed ${WARMUP_SECONDS} s run; requests/s is autocannon's mean of per-second samples. Every request must be answered 2xx. No target figure is set for these; they are tracked for regressions.`,
    ].join('\n');
    console.log(`\n${markdown}\n`);
    sections.push({ id: `token-${dialect}`, markdown });
  }
  return sections;
}
