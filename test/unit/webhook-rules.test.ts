import { describe, expect, it } from 'vitest';
import { checkedLookup, refusalOfAddress } from '../../src/modules/events/address-rules.js';
import { DEFAULT_SCHEDULE, retryDelayMs } from '../../src/modules/events/deliverer.js';
import { signatureHeader } from '../../src/modules/events/signing.js';

const STRICT = { allowHttpLoopback: false };
const LOCAL = { allowHttpLoopback: true };

/** Issue 26: the address rules, the backoff and the signature header, as pure rules. */
describe('webhook rules', () => {
  it.each([
    ['10.0.0.1'],
    ['172.31.255.255'],
    ['192.168.1.1'],
    ['169.254.169.254'],
    ['100.100.100.200'],
    ['0.0.0.0'],
    ['224.0.0.1'],
    ['255.255.255.255'],
    ['fd00:ec2::254'],
    ['fe80::1'],
    ['::ffff:a9fe:a9fe'],
    ['::'],
  ])('refuses %s whatever the settings', (address) => {
    expect(refusalOfAddress(address, STRICT)).toBeDefined();
    expect(refusalOfAddress(address, LOCAL)).toBeDefined();
  });

  it('allows loopback only with the setting, and public addresses always', () => {
    expect(refusalOfAddress('127.0.0.1', STRICT)).toContain('loopback');
    expect(refusalOfAddress('::1', STRICT)).toContain('loopback');
    expect(refusalOfAddress('::ffff:127.0.0.1', STRICT)).toContain('loopback');
    expect(refusalOfAddress('127.0.0.1', LOCAL)).toBeUndefined();
    expect(refusalOfAddress('93.184.215.14', STRICT)).toBeUndefined();
    expect(refusalOfAddress('2606:2800:21f:cb07:6820:80da:af6b:8b2c', STRICT)).toBeUndefined();
  });

  it('checks the addresses a host name resolves to, at resolution', async () => {
    const refused = await new Promise<unknown>((resolve) =>
      checkedLookup(STRICT)('localhost', { all: true }, (error) => resolve(error)),
    );
    expect(String(refused)).toContain('loopback');
    const allowed = await new Promise<unknown>((resolve) =>
      checkedLookup(LOCAL)('localhost', {}, (error, address) => resolve(error ?? address)),
    );
    expect(String(allowed)).toMatch(/^(127\.0\.0\.1|::1)$/);
  });

  it('backs off exponentially with jitter in the upper half, capped, for about a day', () => {
    expect(retryDelayMs(1, DEFAULT_SCHEDULE, () => 0)).toBe(15_000);
    expect(retryDelayMs(1, DEFAULT_SCHEDULE, () => 1)).toBe(30_000);
    expect(retryDelayMs(3, DEFAULT_SCHEDULE, () => 1)).toBe(120_000);
    expect(retryDelayMs(30, DEFAULT_SCHEDULE, () => 1)).toBe(DEFAULT_SCHEDULE.retryDelayMsMax);
    let total = 0;
    for (let attempt = 1; attempt < DEFAULT_SCHEDULE.attemptsMax; attempt += 1)
      total += retryDelayMs(attempt, DEFAULT_SCHEDULE, () => 1);
    expect(total / 3_600_000).toBeGreaterThan(20);
    expect(total / 3_600_000).toBeLessThan(26);
  });

  it('signs "<t>.<body>" once per secret, in the order given', () => {
    const header = signatureHeader('{"a":1}', 1_700_000_000, ['whsec_a', 'whsec_b']);
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(header.split(',')[1]).not.toBe(header.split(',')[2]);
  });
});
