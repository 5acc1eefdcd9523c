import type { Permission } from '../../modules/auth/permissions.js';
import type { WebPrincipal } from '../../modules/auth/sign-ins.js';
import { type Html, type HtmlValue, html } from './html.js';

/** What every page needs to know about the request: who is signed in and where they are. */
export interface PageContext {
  principal: WebPrincipal;
  /** The path of the page, without the query. */
  path: string;
}

interface NavItem {
  href: string;
  label: string;
  /** Any one of these permissions shows the item. */
  anyOf: readonly Permission[];
}

/** The navigation, in order; each item is shown only to users whose roles allow its page. */
export const NAV_ITEMS: readonly NavItem[] = [
  { href: '/admin/dashboard', label: 'Dashboard', anyOf: ['statistics:read'] },
  { href: '/admin/ingestions', label: 'Ingestions', anyOf: ['ingestion:read'] },
  { href: '/admin/journals', label: 'Journals', anyOf: ['journals:read'] },
  { href: '/admin/balances', label: 'Balances', anyOf: ['journals:read'] },
  { href: '/admin/processing-errors', label: 'Processing errors', anyOf: ['journals:read'] },
  { href: '/admin/reprocessing', label: 'Reprocessing', anyOf: ['journals:read'] },
  { href: '/admin/reversals', label: 'Reversals', anyOf: ['journals:read'] },
  { href: '/admin/approvals', label: 'Approvals', anyOf: ['approvals:read', 'approvals:approve'] },
  { href: '/admin/periods', label: 'Periods', anyOf: ['journals:read'] },
  { href: '/admin/extracts', label: 'Extracts', anyOf: ['journals:read'] },
  { href: '/admin/webhooks', label: 'Webhooks', anyOf: ['webhooks:read'] },
  { href: '/admin/configuration', label: 'Configuration', anyOf: ['configuration:read'] },
  { href: '/admin/configuration/revisions', label: 'Revisions', anyOf: ['configuration:read'] },
  { href: '/admin/audit', label: 'Audit log', anyOf: ['users:manage', 'configuration:read'] },
  { href: '/admin/users', label: 'Users', anyOf: ['users:manage'] },
  { href: '/admin/credentials', label: 'API credentials', anyOf: ['credentials:manage'] },
];

/** The first page a user may see, where `/admin` takes them. */
export function homeOf(principal: WebPrincipal): string {
  const item = NAV_ITEMS.find((nav) => nav.anyOf.some((p) => principal.permissions.has(p)));
  return item?.href ?? '/admin/account';
}

function head(title: string): Html {
  return html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'>
<title>${title} · Ledgerflow</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/admin/assets/admin.css">
<script src="/admin/assets/lib/htmx.min.js" defer></script>
<script src="/admin/assets/admin.js" defer></script>`;
}

/** A whole page for a signed-in user: navigation allowed by their roles, the body, sign-out. */
export function page(
  context: PageContext,
  title: string,
  body: HtmlValue,
  scripts: readonly string[] = [],
): Html {
  const { principal } = context;
  const items = NAV_ITEMS.filter((nav) => nav.anyOf.some((p) => principal.permissions.has(p)));
  // The longest item the path starts with is the current one: revisions are under configuration.
  const current = items
    .filter((nav) => context.path.startsWith(nav.href))
    .reduce<NavItem | undefined>(
      (best, nav) => (best === undefined || nav.href.length > best.href.length ? nav : best),
      undefined,
    );
  return html`<!doctype html>
<html lang="en">
<head>${head(title)}${scripts.map((src) => html`<script src="${src}" defer></script>`)}</head>
<body hx-headers='${JSON.stringify({ 'x-csrf-token': principal.csrfToken })}'>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/admin">Ledgerflow</a>
  <nav aria-label="Main"><ul>${items.map(
    (nav) =>
      html`<li><a href="${nav.href}"${nav === current ? html` aria-current="page"` : ''}>${nav.label}</a></li>`,
  )}</ul></nav>
  <form method="post" action="/admin/logout" class="signout">
    ${csrfField(context)}
    <span class="who">${principal.user.displayName} <small>(${principal.user.roles.join(', ') || 'no role'})</small></span>
    <button type="submit">Sign out</button>
  </form>
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/** A page for someone not signed in (the sign-in form). */
export function publicPage(title: string, body: HtmlValue): Html {
  return html`<!doctype html>
<html lang="en">
<head>${head(title)}</head>
<body class="public">
<main id="main">
${body}
</main>
</body>
</html>`;
}

/** The hidden field that carries the session's CSRF token in every form that changes state. */
export function csrfField(context: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${context.principal.csrfToken}">`;
}

/** A message box: `info` for outcomes, `error` for what went wrong and how to fix it. */
export function notice(kind: 'info' | 'error' | 'warning', content: HtmlValue): Html {
  return html`<div class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${content}</div>`;
}

/** What an empty list says: why it is empty and what to do next. */
export function emptyState(content: HtmlValue): Html {
  return html`<div class="empty">${content}</div>`;
}

/** A column of {@link table}: its heading and how its cells are laid out. */
export interface Column {
  label: string;
  /**
   * `num`: figures, right-aligned in tabular digits and never broken; `long`: free text (a
   * message, a record) that wraps anywhere within a readable width; `words`: sentences and
   * labelled fields, whose words are never broken (identifiers in them still may be).
   */
  kind?: 'num' | 'long' | 'words';
}

function columnOf(header: string | Column): Column {
  return typeof header === 'string' ? { label: header } : header;
}

function kindClass(column: Column | undefined): Html | string {
  return column?.kind === undefined ? '' : html` class="${column.kind}"`;
}

/**
 * A table whose columns can be sorted in the browser (the page's rows) and filtered by text;
 * `id` names it for the filter box. The table scrolls sideways inside its own box, so a wide
 * table never widens the page; `footer` rows (totals) stay below the rows whatever the sorting.
 */
export function table(
  id: string,
  headers: readonly (string | Column)[],
  rows: readonly HtmlValue[][],
  footer: readonly HtmlValue[][] = [],
): Html {
  const columns = headers.map(columnOf);
  const cells = (values: readonly HtmlValue[]) =>
    values.map((c, i) => html`<td${kindClass(columns[i])}>${c}</td>`);
  return html`<div class="table-tools"><label>Filter this page <input type="search" data-filter-table="${id}" placeholder="type to filter rows"></label></div>
<div class="table-scroll" tabindex="0">
<table id="${id}" class="data" data-sortable>
<thead><tr>${columns.map((c) => html`<th scope="col"${kindClass(c)}>${c.label}</th>`)}</tr></thead>
<tbody>${rows.map((values) => html`<tr>${cells(values)}</tr>`)}</tbody>
${footer.length === 0 ? '' : html`<tfoot>${footer.map((values) => html`<tr>${cells(values)}</tr>`)}</tfoot>`}
</table>
</div>`;
}

/** The query parameters that page one list; a page with two lists names the second one's. */
export interface PagingKeys {
  page: string;
  limit: string;
}

/** `page` and `limit`, the parameters of a page's only (or first) list. */
export const DEFAULT_PAGING_KEYS: PagingKeys = { page: 'page', limit: 'limit' };

/**
 * Page links for a server-side paginated list; `query` keeps the filters (and the paging of
 * another list on the same page), `keys` names this list's page and limit parameters.
 */
export function pagination(
  path: string,
  query: Record<string, string | undefined>,
  page: number,
  limit: number,
  total: number,
  keys: PagingKeys = DEFAULT_PAGING_KEYS,
  label = 'Pages',
): Html {
  const pages = Math.max(1, Math.ceil(total / limit));
  const link = (p: number) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v);
    params.set(keys.page, String(p));
    params.set(keys.limit, String(limit));
    return `${path}?${params.toString()}`;
  };
  return html`<nav class="pager" aria-label="${label}">
  ${page > 0 ? html`<a href="${link(page - 1)}" rel="prev">← Previous</a>` : html`<span aria-disabled="true">← Previous</span>`}
  <span>Page ${page + 1} of ${pages} · ${total.toLocaleString('en-US')} in all</span>
  ${page + 1 < pages ? html`<a href="${link(page + 1)}" rel="next">Next →</a>` : html`<span aria-disabled="true">Next →</span>`}
</nav>`;
}

/**
 * A timestamp as people read it (UTC, to the second), or a dash; in a narrow column the time
 * goes under the date, and neither is broken.
 */
export function when(iso: string | null | undefined): Html {
  if (iso === null || iso === undefined) return html`<span class="muted">—</span>`;
  return html`<time datetime="${iso}"><span class="nowrap">${iso.slice(0, 10)}</span> <span class="nowrap">${iso.slice(11, 19)} UTC</span></time>`;
}
