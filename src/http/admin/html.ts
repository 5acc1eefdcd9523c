/** Markup that is safe to insert as it is: built by {@link html} or marked by {@link trusted}. */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** A value that may appear in a template: text is escaped, markup kept, lists joined. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text escaped for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * The one way pages are written: a tagged template whose interpolated values are escaped
 * unless they are markup already, so nothing a user or a record holds can become markup.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** JSON for a `<script type="application/json">` block: `<` escaped so it cannot end the block. */
export function jsonScript(id: string, data: unknown): Html {
  const json = JSON.stringify(data).replaceAll('<', '\\u003c');
  return new Html(`<script type="application/json" id="${escapeHtml(id)}">${json}</script>`);
}
