import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  type AddressPolicy,
  AddressRefused,
  checkedLookup,
  checkLiteralHost,
  checkWebhookUrl,
  type Resolver,
  refusalOfAddress,
} from '../../src/modules/events/address-rules.js';
import { DEFAULT_SCHEDULE, retryDelayMs } from '../../src/modules/events/deliverer.js';
import { signatureHeader } from '../../src/modules/events/signing.js';

const STRICT: AddressPolicy = { allowHttpLoopback: false };
const LOCAL: AddressPolicy = { allowHttpLoopback: true };

/** The message `checkWebhookUrl` refuses `url` with under `policy`; undefined when it accepts it. */
function urlRefusal(url: string, policy: AddressPolicy): string | undefined {
  try {
    checkWebhookUrl(url, policy);
    return undefined;
  } catch (error) {
    if (!(error instanceof AddressRefused)) throw error;
    return error.message;
  }
}

/** What `checkedLookup` answers for `hostname` when the resolver answers `addresses`. */
function lookupWith(
  policy: AddressPolicy,
  addresses: readonly string[],
  hostname = 'hooks.example.com',
): Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }> {
  const resolve: Resolver = (_name, _options, callback) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  return new Promise((done) =>
    checkedLookup(policy, resolve)(hostname, { all: true }, (error, address) => done({ error, address })),
  );
}

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
    ['FD00:EC2::254'],
    ['fe80::1'],
    ['fe80::1%eth0'],
    ['fec0::1'],
    ['::ffff:a9fe:a9fe'],
    ['::'],
    // IPv4-mapped and IPv4-compatible: judged as the IPv4 address they carry.
    ['::ffff:10.0.0.1'],
    ['0:0:0:0:0:ffff:a00:1'],
    ['::10.0.0.1'],
    ['::a9fe:a9fe'],
    // IPv4-compatible loopback does not reach this machine's loopback: refused, setting or not.
    ['::127.0.0.1'],
    ['::7f00:1'],
    // 6to4, whatever IPv4 address it carries: loopback, private, public.
    ['2002:7f00:1::'],
    ['2002:a00:1::1'],
    ['2002:5db8:d70e::1'],
    // Teredo, here with the obfuscated client 127.0.0.1 (0x80ff:fffe XOR ones).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe'],
    // NAT64, well-known and local-use, and the stateless IPv4-translated form.
    ['64:ff9b::7f00:1'],
    ['64:ff9b::5db8:d70e'],
    ['64:ff9b:1::a00:1'],
    ['64:ff9b:1:7f00:1::'],
    ['::ffff:0:7f00:1'],
    // Reserved, benchmarking, documentation and outside global unicast.
    ['2001:2::1'],
    ['2001:db8::1'],
    ['3fff::1'],
    ['5f00::1'],
    ['4000::1'],
    ['::1:2:3:4'],
  ])('refuses %s whatever the settings', (address) => {
    expect(refusalOfAddress(address, STRICT)).toBeDefined();
    expect(refusalOfAddress(address, LOCAL)).toBeDefined();
  });

  it.each([
    ['127.0.0.1'],
    ['127.255.255.254'],
    ['::1'],
    ['0:0:0:0:0:0:0:1'],
    ['::ffff:127.0.0.1'],
    ['::ffff:7f00:1'],
    ['0:0:0:0:0:ffff:7f00:1'],
  ])('refuses the loopback address %s, unless the setting allows loopback', (address) => {
    expect(refusalOfAddress(address, STRICT)).toContain('loopback');
    expect(refusalOfAddress(address, LOCAL)).toBeUndefined();
  });

  it.each([
    ['93.184.215.14'],
    ['::ffff:93.184.215.14'],
    ['::ffff:5db8:d70e'],
    ['::5db8:d70e'],
    ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  ])('allows the public address %s', (address) => {
    expect(refusalOfAddress(address, STRICT)).toBeUndefined();
    expect(refusalOfAddress(address, LOCAL)).toBeUndefined();
  });

  it('names the rule: the IPv4 address carried, the tunnel or translator range, the zone', () => {
    expect(refusalOfAddress('::ffff:a00:1', STRICT)).toContain('10.0.0.1 written as IPv6');
    expect(refusalOfAddress('::7f00:1', LOCAL)).toContain('127.0.0.1 written as IPv4-compatible IPv6');
    expect(refusalOfAddress('2002:7f00:1::', STRICT)).toContain('6to4 (2002::/16)');
    expect(refusalOfAddress('2001:0:4136:e378:8000:63bf:80ff:fffe', STRICT)).toContain('Teredo');
    expect(refusalOfAddress('64:ff9b:1::a00:1', STRICT)).toContain('NAT64 (64:ff9b:1::/48)');
    expect(refusalOfAddress('::ffff:0:7f00:1', STRICT)).toContain('IPv4-translated');
    expect(refusalOfAddress('fe80::1%eth0', STRICT)).toContain('zone');
    expect(refusalOfAddress('4000::1', STRICT)).toContain('2000::/3');
    expect(refusalOfAddress('hooks.example.com', STRICT)).toContain('not an IP address');
  });

  // Node 20's WHATWG URL parser writes every IPv4 form (decimal, octal, hex, short, trailing dot)
  // as dotted decimal and compresses IPv6 (second column); the rules judge what it makes of the
  // URL, and each form is refused naming its rule (third column), so a parser that normalised
  // less would show here.
  it.each([
    ['http://2130706433/', '127.0.0.1', 'loopback'],
    ['http://0177.0.0.1/', '127.0.0.1', 'loopback'],
    ['http://0x7f.1/', '127.0.0.1', 'loopback'],
    ['https://0x7f000001/', '127.0.0.1', 'loopback'],
    ['https://017700000001/', '127.0.0.1', 'loopback'],
    ['https://127.1/', '127.0.0.1', 'loopback'],
    ['https://127.0.0.1./', '127.0.0.1', 'loopback'],
    ['https://[::127.0.0.1]/', '[::7f00:1]', 'loopback'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]', 'loopback'],
    ['https://[0:0:0:0:0:ffff:127.0.0.1]/', '[::ffff:7f00:1]', 'loopback'],
    ['https://[::ffff:7f00:1]/', '[::ffff:7f00:1]', 'loopback'],
    ['https://[2002:7f00:1::]/', '[2002:7f00:1::]', '6to4'],
  ])('refuses %s, which the parser reads as %s, as %s when the setting is off', (url, hostname, rule) => {
    expect(new URL(url).hostname).toBe(hostname);
    expect(urlRefusal(url, STRICT)).toContain(rule);
  });

  it.each([
    ['https://167772161/', 'private'],
    ['https://012.0.0.1/', 'private'],
    ['https://0xa9.0xfe.0xa9.0xfe/', 'metadata'],
    ['https://0/', 'reserved'],
    ['https://[::ffff:a00:1]/', 'private'],
    ['https://[::a00:1]/', 'private'],
    ['https://[::7f00:1]/', 'loopback'],
    ['https://[2002:a9fe:a9fe::]/', '6to4'],
    ['https://[2002:7f00:1::]/', '6to4'],
    ['https://[64:ff9b::a00:1]/', 'NAT64'],
    ['https://[64:ff9b:1::a00:1]/', 'NAT64'],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'Teredo'],
    ['http://10.0.0.1/', 'private'],
    ['http://[fd00:ec2::254]/', 'private'],
  ])('refuses %s whatever the settings, naming the rule (%s)', (url, rule) => {
    expect(urlRefusal(url, STRICT)).toContain(rule);
    expect(urlRefusal(url, LOCAL)).toContain(rule);
  });

  it.each([
    ['https://localhost/'],
    ['https://localhost./'],
    ['https://LOCALHOST/'],
    ['https://LocalHost./'],
    ['https://hooks.localhost/'],
    ['https://hooks.localhost./'],
    ['https://Hooks.LOCALHOST./'],
    ['https://localhost.localdomain/'],
    ['https://LOCALHOST.LOCALDOMAIN./'],
    ['https://localhost6/'],
    ['https://ip6-localhost/'],
    ['https://%6c%6fcalhost/'],
    ['https://localhost%2e/'],
  ])('refuses the name of this machine %s unless the setting allows loopback', (url) => {
    expect(urlRefusal(url, STRICT)).toContain('names this machine (loopback)');
    expect(urlRefusal(url, LOCAL)).toBeUndefined();
    expect(urlRefusal(url.replace('https:', 'http:'), LOCAL)).toBeUndefined();
  });

  it('allows plain http only to loopback with the setting, and https to public hosts always', () => {
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'http://127.0.0.2/',
      'http://[::1]:8080/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://localhost:8080/',
      'http://hooks.localhost./',
    ]) {
      expect(urlRefusal(url, LOCAL), url).toBeUndefined();
      expect(urlRefusal(url, STRICT), url).toContain('loopback');
    }
    for (const url of ['http://example.com/', 'http://93.184.215.14/', 'http://[2606:2800:21f:cb07::1]/']) {
      expect(urlRefusal(url, LOCAL), url).toContain('must be an https:// URL');
      expect(urlRefusal(url, STRICT), url).toBe('must be an https:// URL');
    }
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'ws://localhost/'])
      expect(urlRefusal(url, LOCAL), url).toContain('must be an https:// URL');
    for (const url of ['https://example.com/', 'https://93.184.215.14/', 'https://[::ffff:5db8:d70e]/']) {
      expect(urlRefusal(url, STRICT), url).toBeUndefined();
      expect(urlRefusal(url, LOCAL), url).toBeUndefined();
    }
  });

  it('refuses again before each attempt what the lookup cannot see, and leaves names of this machine to it', async () => {
    expect(() => checkLiteralHost(new URL('http://hooks.example.com/hooks'), LOCAL)).toThrow('https://');
    expect(() => checkLiteralHost(new URL('http://hooks.example.com/hooks'), STRICT)).toThrow('https://');
    expect(() => checkLiteralHost(new URL('http://93.184.215.14/'), LOCAL)).toThrow('https://');
    expect(() => checkLiteralHost(new URL('ftp://hooks.example.com/'), LOCAL)).toThrow('https://');
    expect(() => checkLiteralHost(new URL('http://[::ffff:7f00:1]:8080/'), STRICT)).toThrow('loopback');
    expect(() => checkLiteralHost(new URL('https://[2002:7f00:1::]/'), LOCAL)).toThrow('6to4');
    expect(() => checkLiteralHost(new URL('https://[::ffff:a00:1]/'), LOCAL)).toThrow('private');
    expect(() => checkLiteralHost(new URL('http://127.0.0.1:8080/hooks'), LOCAL)).not.toThrow();
    expect(() => checkLiteralHost(new URL('http://[::ffff:7f00:1]:8080/'), LOCAL)).not.toThrow();
    expect(() => checkLiteralHost(new URL('https://hooks.example.com/'), STRICT)).not.toThrow();
    // A name of this machine passes here and is refused by the connection's lookup, in turn.
    expect(() => checkLiteralHost(new URL('http://localhost:8080/hooks'), STRICT)).not.toThrow();
    expect((await lookupWith(STRICT, ['127.0.0.1'], 'localhost')).error?.message).toContain('loopback');
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

  it.each([
    [['::ffff:a9fe:a9fe'], 'metadata'],
    [['::7f00:1'], 'loopback'],
    [['2002:7f00:1::'], '6to4'],
    [['2002:a00:1::1'], '6to4'],
    [['64:ff9b:1::a00:1'], 'NAT64'],
    [['2001:0:4136:e378:8000:63bf:80ff:fffe'], 'Teredo'],
    [['fe80::1%eth0'], 'zone'],
    [['93.184.215.14', '10.0.0.1'], 'private'],
    [['2606:2800:21f:cb07::1', '2002:7f00:1::'], '6to4'],
  ])('refuses a host name that resolves to %j, as the connection looks it up', async (addresses, rule) => {
    for (const policy of [STRICT, LOCAL]) {
      const { error } = await lookupWith(policy, addresses);
      expect(error).toBeInstanceOf(AddressRefused);
      expect(error?.code).toBe('EADDRREFUSED');
      expect(error?.message).toContain('hooks.example.com');
      expect(error?.message).toContain(rule);
    }
  });

  it('hands the connection the checked addresses of a public host, and loopback only with the setting', async () => {
    expect(await lookupWith(STRICT, ['93.184.215.14', '::ffff:5db8:d70e'])).toEqual({
      error: null,
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '::ffff:5db8:d70e', family: 6 },
      ],
    });
    for (const mapped of ['::ffff:127.0.0.1', '::ffff:7f00:1']) {
      expect((await lookupWith(STRICT, [mapped])).error?.message).toContain('loopback');
      expect(await lookupWith(LOCAL, [mapped])).toMatchObject({ error: null });
    }
  });

  it('refuses a name of this machine before resolving it, and one that resolves elsewhere even with the setting', async () => {
    const refused = await lookupWith(STRICT, ['93.184.215.14'], 'Hooks.LocalHost.');
    expect(refused.error?.message).toContain('names this machine (loopback)');
    const elsewhere = await lookupWith(LOCAL, ['93.184.215.14'], 'localhost.localdomain');
    expect(elsewhere.error?.message).toContain('not a loopback address');
    expect(await lookupWith(LOCAL, ['127.0.0.1', '::1'], 'localhost.')).toMatchObject({ error: null });
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
