import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import type { AuditActor } from '../../modules/audit/entry.js';
import type { Html } from './html.js';
import { DEFAULT_PAGING_KEYS, type PageContext, type PagingKeys } from './layout.js';

/**
 * What a page handler reads from its request and how it answers, apart from the plugin that
 * registers the pages: the pages import this file and the plugin imports the pages, so neither
 * imports the other.
 */

/**
 * The cookie that names a sign-in; scripts cannot read it and it never leaves /admin. Its name
 * is older than the word *sign-in* and is kept, since browsers hold it.
 */
export const SIGN_IN_COOKIE = 'lf_admin_session';

/** Rows per page of a list unless `limit` says otherwise. */
export const ADMIN_PAGE_SIZE_DEFAULT = 50;
/** Most rows per page of a list. */
export const ADMIN_PAGE_SIZE_MAX = 200;

/** An error shown as a page: what went wrong and how to fix it. */
export class AdminPageError extends Error {
  readonly status: number;
  readonly title: string;
  readonly hint: string;
  constructor(status: number, title: string, detail: string, hint: string) {
    super(detail);
    this.status = status;
    this.title = title;
    this.hint = hint;
  }
}

/** The fields of a submitted form. */
export function formOf(request: FastifyRequest): URLSearchParams {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

/** The signed-in user of a page; the sign-in hook guarantees it on every non-public route. */
export function contextOf(request: FastifyRequest): PageContext {
  const principal = request.webPrincipal;
  if (principal === undefined) throw new AppError('unauthorized', 'not signed in');
  return { principal, path: request.url.split('?')[0] ?? request.url };
}

/**
 * The cookie value of the request's sign-in, which only the browser holds: what the sign-in's
 * one-time views are sealed under. The sign-in hook guarantees it on every non-public route, as
 * it does the principal.
 */
export function signInIdOf(request: FastifyRequest): string {
  const signInId = request.cookies[SIGN_IN_COOKIE];
  if (request.webPrincipal === undefined || signInId === undefined) {
    throw new AppError('unauthorized', 'not signed in');
  }
  return signInId;
}

/** Sends a page; administration pages are never stored by caches. */
export function sendPage(reply: FastifyReply, body: Html, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(body.value);
}

/** A query string value as a whole number from 0, or the default. */
function wholeNumber(value: unknown, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : fallback;
  return Math.min(n, max);
}

/** Who the audit trail names for a change made from a page: the signed-in user (no credential). */
export function actorOf(request: FastifyRequest): AuditActor {
  return { user: contextOf(request).principal.user.email };
}

/** The page (from 0) and rows per page of a list, from the query parameters `keys` names. */
export function pagingOf(
  request: FastifyRequest,
  keys: PagingKeys = DEFAULT_PAGING_KEYS,
): { page: number; limit: number } {
  const query = request.query as Record<string, unknown>;
  return {
    page: wholeNumber(query[keys.page], 0),
    limit: Math.max(1, wholeNumber(query[keys.limit], ADMIN_PAGE_SIZE_DEFAULT, ADMIN_PAGE_SIZE_MAX)),
  };
}

/** A text query value, trimmed; undefined when absent or empty. */
export function queryText(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
