import type { FastifyRequest } from 'fastify';

/**
 * Query parameters whose value is a secret, by lower-case name. Clients sometimes put credentials
 * in a URL (`/auth/token?client_secret=...`, `?access_token=...`); the server never reads them
 * there, but the request line is logged, so their values are replaced before it is.
 */
export const SECRET_QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  'client_secret',
  'access_token',
  'refresh_token',
  'token',
  'password',
  'code',
]);

/** What replaces a secret in a log line. */
export const LOG_CENSOR = '[redacted]';

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/** A request URL with the value of every secret query parameter replaced by `[redacted]`. */
export function redactedUrl(url: string): string {
  const question = url.indexOf('?');
  if (question < 0) return url;
  const parameters = url
    .slice(question + 1)
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      const name = equals < 0 ? part : part.slice(0, equals);
      return SECRET_QUERY_PARAMETERS.has(decodedName(name)) ? `${name}=${LOG_CENSOR}` : part;
    });
  return `${url.slice(0, question + 1)}${parameters.join('&')}`;
}

/**
 * The pino serializers of request log lines: Fastify's own fields, with secrets of the query
 * redacted from the URL.
 */
export const REQUEST_LOG_SERIALIZERS = {
  req(request: FastifyRequest) {
    return {
      method: request.method,
      url: redactedUrl(request.url),
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    };
  },
};
