import type { AddressInfo } from 'node:net';
import { type Io, isYes, usageError } from '../../src/cli/output.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** An Io that keeps what a command writes. */
export interface CapturedIo extends Io {
  lines: { out: string[]; err: string[] };
  /** The questions asked on the (pretend) terminal. */
  questions: string[];
  /** Everything written to standard output, one line per write. */
  stdout(): string;
  stderr(): string;
}

/**
 * An Io that captures standard output and error. Without `answers` standard input is not a
 * terminal; with them it is one, and each question (yes/no or secret) takes the next answer.
 * `input` is what standard input holds.
 */
export function captureIo(answers?: string[], input = ''): CapturedIo {
  const lines = { out: [] as string[], err: [] as string[] };
  const questions: string[] = [];
  const pending = [...(answers ?? [])];
  return {
    interactive: false,
    inputInteractive: answers !== undefined,
    async confirm(question) {
      questions.push(question);
      const answer = pending.shift();
      if (answer === undefined) throw new Error(`unexpected question: ${question}`);
      return isYes(answer);
    },
    async askSecret(question) {
      questions.push(question);
      const answer = pending.shift();
      if (answer === undefined) throw new Error(`unexpected question: ${question}`);
      return answer;
    },
    async readInput(bytesMax) {
      if (Buffer.byteLength(input) > bytesMax)
        throw usageError(`standard input holds more than ${bytesMax} bytes`);
      return input;
    },
    questions,
    lines,
    out: (line) => lines.out.push(line),
    err: (line) => lines.err.push(line),
    stdout: () => lines.out.join('\n'),
    stderr: () => lines.err.join('\n'),
  };
}

/** The whole app on a fresh store, listening on 127.0.0.1 at a free port. */
export interface RunningService extends TestApp {
  url: string;
  /** `--url --client-id --client-secret` of a new bulk-operator credential. */
  connectionArgs(roles?: string[]): Promise<string[]>;
}

/** Starts the app of createTestApp on a real socket, as the CLI needs one. */
export async function startService(...settings: Parameters<typeof createTestApp>): Promise<RunningService> {
  const t = await createTestApp(...settings);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  return {
    ...t,
    url: `http://127.0.0.1:${port}`,
    async connectionArgs(roles = ['bulk-operator']) {
      const credential = await t.credentialFor(roles);
      return [
        '--url',
        `http://127.0.0.1:${port}`,
        '--client-id',
        credential.clientId,
        '--client-secret',
        credential.clientSecret,
      ];
    },
  };
}
