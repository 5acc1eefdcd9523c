import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { validateConfiguration } from '../../src/composition/configuration-checks.js';
import { CONFIGURATION_BODY_BYTES_MAX } from '../../src/modules/configuration/inputs.js';
import { createTestApp } from '../helpers/app.js';
import { realisticConfiguration } from '../helpers/fixtures.js';
import { largeConfiguration } from '../helpers/large-configuration.js';

/**
 * Issue 14, point 7: a 9 MiB configuration upload stalled every client for 15 s and a 28 MiB
 * download for 4 s. The flow rules looked every flow's input entity up in the whole entity list
 * (quadratic), and bodies up to 32 MiB were taken.
 */
describe('point 7: configuration uploads keep the event loop short', () => {
  it('validates 2,000 flows over 4,000 entities in linear time', () => {
    const document = largeConfiguration(4000);
    // CPU time of this process, not wall time: other work on the machine does not count.
    const started = process.cpuUsage();
    const result = validateConfiguration(document);
    const used = process.cpuUsage(started);
    const cpuMs = (used.user + used.system) / 1000;
    expect(result.ok).toBe(true);
    // Measured on a shared two-core machine: 5.2 s before, 2.1 s after (most of it reading the
    // document as far as it is sound and the structural schema, both linear).
    expect(cpuMs).toBeLessThan(4000);
  });

  it(`refuses a body over ${CONFIGURATION_BODY_BYTES_MAX} bytes with 413`, async () => {
    expect(CONFIGURATION_BODY_BYTES_MAX).toBe(12 * 1024 * 1024);
    const t = await createTestApp();
    try {
      const operator = await t.tokenFor(['bulk-operator']);
      const payload = JSON.stringify(realisticConfiguration());
      const response = await t.call(operator, {
        method: 'PUT',
        url: '/api/v1/configuration/bulk',
        headers: { 'content-type': 'application/json' },
        payload: `${payload}${' '.repeat(CONFIGURATION_BODY_BYTES_MAX + 1 - payload.length)}`,
      });
      expect(response.statusCode).toBe(413);
      expect(response.json().type).toBe('urn:ledgerflow:problem:payload-too-large');
    } finally {
      await t.close();
    }
  });
});

describe('a large upload is read off the event loop', () => {
  it('answers cheap requests while an 8 MB document is checked, the loop held far less than the check takes', async () => {
    const payload = JSON.stringify(largeConfiguration(2800));
    expect(payload.length).toBeGreaterThan(7 * 1024 * 1024);
    // What the check costs when it holds the loop: parsing and every check, as before the worker;
    // the quicker of two runs, so that the first run's compilation is not counted.
    let inlineMs = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 2; run += 1) {
      const started = performance.now();
      expect(validateConfiguration(JSON.parse(payload)).ok).toBe(true);
      inlineMs = Math.min(inlineMs, performance.now() - started);
    }
    const t = await createTestApp();
    try {
      const operator = await t.tokenFor(['bulk-operator']);
      // The longest time between two ticks of a 5 ms timer is the longest the loop was held.
      let lastTick = performance.now();
      let heldMs = 0;
      const probe = setInterval(() => {
        const now = performance.now();
        heldMs = Math.max(heldMs, now - lastTick);
        lastTick = now;
      }, 5);
      let uploading = true;
      const upload = t
        .call(operator, {
          method: 'PUT',
          url: '/api/v1/configuration/bulk?dryRun=true',
          headers: { 'content-type': 'application/json' },
          payload,
        })
        .finally(() => {
          uploading = false;
        });
      // Cheap requests, one every 10 ms, for as long as the upload is under way (an injected
      // request is answered without a turn of the loop, so the pause lets the loop turn).
      let answeredWhileUploading = 0;
      const deadline = performance.now() + 120_000;
      while (uploading && performance.now() < deadline) {
        const health = await t.app.inject({ method: 'GET', url: '/healthz' });
        expect(health.statusCode).toBe(200);
        if (uploading) answeredWhileUploading += 1;
        await sleep(10);
      }
      clearInterval(probe);
      const answer = await upload;
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.json().sections.entities).toBeGreaterThan(2800);
      expect(answeredWhileUploading).toBeGreaterThan(0);
      // Read on the event loop, the upload held it for the whole check (inlineMs: 0.5 s to 0.8 s
      // on a shared two-core machine; the test fails so); now for short steps around it (20 ms
      // to 40 ms). A generous bound, as a loaded machine slows every step: a full run under
      // faketime (`npm run test:any-day`, every clock reading intercepted) once saw 265 ms
      // against a check of 741 ms.
      expect(heldMs, `loop held ${heldMs} ms; the check alone takes ${inlineMs} ms`).toBeLessThan(
        Math.max(inlineMs / 2, 100),
      );
    } finally {
      await t.close();
    }
  });
});
