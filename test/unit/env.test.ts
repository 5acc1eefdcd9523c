import { describe, expect, it } from 'vitest';
import { EnvError, parseEnv } from '../../src/env.js';

describe('environment', () => {
  it('has the documented defaults', () => {
    expect(parseEnv({})).toEqual({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/ledgerflow.db',
      accessTokenTtlSeconds: 300,
      refreshTokenTtlSeconds: 1800,
      refreshReuseGraceSeconds: 10,
      bootstrapClientId: undefined,
      bootstrapClientSecret: undefined,
      adminEmail: 'admin@localhost',
      adminPassword: undefined,
      businessDate: undefined,
      logLevel: 'info',
      publicUrl: undefined,
      ingestWorkerThreads: 0,
      trustProxy: false,
      databaseConnectTimeoutMs: 5_000,
      databaseStatementTimeoutMs: 30_000,
      flowScriptTimeoutMs: 50,
      flowScriptMemoryMb: 64,
      rateLimitMax: 20_000,
      rateLimitWindowMs: 60_000,
      processingThread: true,
      webhookAllowHttpLoopback: false,
      webhookSecretsKey: undefined,
      approvalRequired: [],
    });
  });

  it('reads the webhook settings and refuses a sealing key that is not 32 bytes of base64', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(parseEnv({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_SECRETS_KEY: key })).toMatchObject({
      webhookAllowHttpLoopback: true,
      webhookSecretsKey: key,
    });
    expect(() => parseEnv({ WEBHOOK_SECRETS_KEY: 'short' })).toThrow(
      /WEBHOOK_SECRETS_KEY must be the base64 of 32/,
    );
    expect(() => parseEnv({ WEBHOOK_SECRETS_KEY: Buffer.alloc(16).toString('base64') })).toThrow(EnvError);
    expect(() => parseEnv({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'yes' })).toThrow(EnvError);
  });

  it('reads APPROVAL_REQUIRED as a list of kinds of action, and names a kind it does not know', () => {
    expect(
      parseEnv({ APPROVAL_REQUIRED: ' reversal, configuration.delete,reversal' }).approvalRequired,
    ).toEqual(['reversal', 'configuration.delete']);
    expect(() => parseEnv({ APPROVAL_REQUIRED: 'reversal,wipe' })).toThrow(
      /APPROVAL_REQUIRED must list kinds of action among configuration.upload, configuration.delete, reversal, period.reopen.*"wipe"/,
    );
  });

  it('holds ADMIN_PASSWORD to the rule of every password', () => {
    expect(() => parseEnv({ ADMIN_PASSWORD: 'pw' })).toThrow(
      /ADMIN_PASSWORD must be 12 to 256 characters long/,
    );
    expect(parseEnv({ ADMIN_PASSWORD: '' }).adminPassword).toBeUndefined();
  });

  it('reads PROCESSING_THREAD as true or false', () => {
    expect(parseEnv({ PROCESSING_THREAD: 'false' }).processingThread).toBe(false);
    expect(parseEnv({ PROCESSING_THREAD: 'true' }).processingThread).toBe(true);
    expect(() => parseEnv({ PROCESSING_THREAD: 'no' })).toThrow(/PROCESSING_THREAD must be true or false/);
  });

  it('reads TRUST_PROXY as false, true, or a list of addresses and ranges', () => {
    expect(parseEnv({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(parseEnv({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(parseEnv({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1,fd00::/8,loopback' }).trustProxy).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
  });

  it('reads every variable', () => {
    const env = parseEnv({
      PORT: '0',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@h/db',
      ACCESS_TOKEN_TTL: '2',
      REFRESH_TOKEN_TTL: '5',
      REFRESH_REUSE_GRACE_SECONDS: '0',
      BOOTSTRAP_CLIENT_ID: 'id',
      BOOTSTRAP_CLIENT_SECRET: 'lfs_unit-secret-0123456789abcdef',
      ADMIN_EMAIL: 'root@x.y',
      ADMIN_PASSWORD: 'a password of the right length',
      BUSINESS_DATE: '2024-02-29',
      LOG_LEVEL: 'debug',
      PUBLIC_URL: 'https://ledger.example.com/',
      DATABASE_CONNECT_TIMEOUT_MS: '1500',
      DATABASE_STATEMENT_TIMEOUT_MS: '250',
      RATE_LIMIT_MAX: '0',
      RATE_LIMIT_WINDOW_MS: '1000',
    });
    expect(env).toMatchObject({
      port: 0,
      databaseConnectTimeoutMs: 1500,
      databaseStatementTimeoutMs: 250,
      rateLimitMax: 0,
      rateLimitWindowMs: 1000,
      accessTokenTtlSeconds: 2,
      refreshTokenTtlSeconds: 5,
      refreshReuseGraceSeconds: 0,
      businessDate: '2024-02-29',
      publicUrl: 'https://ledger.example.com',
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ ACCESS_TOKEN_TTL: '0' }, 'ACCESS_TOKEN_TTL'],
    [{ REFRESH_TOKEN_TTL: '-5' }, 'REFRESH_TOKEN_TTL'],
    [{ REFRESH_REUSE_GRACE_SECONDS: '301' }, 'REFRESH_REUSE_GRACE_SECONDS'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ BUSINESS_DATE: '2023-02-29' }, 'BUSINESS_DATE'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ PUBLIC_URL: 'ledger.example.com' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://ledger.example.com' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://ledger.example.com/?a=1' }, 'PUBLIC_URL'],
    [{ DATABASE_CONNECT_TIMEOUT_MS: '99' }, 'DATABASE_CONNECT_TIMEOUT_MS'],
    [{ DATABASE_CONNECT_TIMEOUT_MS: '5s' }, 'DATABASE_CONNECT_TIMEOUT_MS'],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '0' }, 'DATABASE_STATEMENT_TIMEOUT_MS'],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '3600001' }, 'DATABASE_STATEMENT_TIMEOUT_MS'],
    [{ RATE_LIMIT_MAX: '-1' }, 'RATE_LIMIT_MAX'],
    [{ RATE_LIMIT_WINDOW_MS: '999' }, 'RATE_LIMIT_WINDOW_MS'],
    [{ BOOTSTRAP_CLIENT_ID: 'only-id' }, 'BOOTSTRAP_CLIENT_ID'],
    [{ BOOTSTRAP_CLIENT_ID: 'ci', BOOTSTRAP_CLIENT_SECRET: 'short' }, 'at least 24 characters'],
    [{ BOOTSTRAP_CLIENT_ID: 'ci', BOOTSTRAP_CLIENT_SECRET: 'x'.repeat(257) }, 'BOOTSTRAP_CLIENT_SECRET'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1,proxy.example' }, 'proxy.example'],
    [{ TRUST_PROXY: '::1/129' }, 'TRUST_PROXY'],
  ])('rejects %j naming %s', (vars, name) => {
    expect(() => parseEnv(vars)).toThrow(EnvError);
    expect(() => parseEnv(vars)).toThrow(name);
  });
});
