/**
 * The audit page's words for the extract changes (docs/reference.md, Audit trail): the
 * configuration an entry names, what a change changed, and the execution a trigger queued.
 * `audit-words.ts` lists them with every other action's.
 */
import type { AuditEntry } from '../../../modules/audit/entry.js';
import { type HtmlValue, html } from '../html.js';
import { idHtml, keyInWords } from '../words.js';

/** An entry in words, as `audit-words.ts` shows it: a sentence, labelled fields, the details they say. */
interface ExtractWords {
  what: HtmlValue;
  fields: (readonly [label: string, value: HtmlValue])[];
  said: readonly string[];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The configuration an entry names: a link while it exists, its id and name once deleted. */
function configurationHtml(entry: AuditEntry, id: number, name: string | undefined): HtmlValue {
  const label = name === undefined ? `configuration ${id}` : `${name} (${id})`;
  return entry.action === 'extracts.configuration-delete'
    ? label
    : html`<a href="/admin/extracts/${String(id)}">${label}</a>`;
}

/**
 * A change of extracts (`sentence`): its configuration, the members a change named (the state
 * with what it was), and the execution a trigger queued. Other details are listed as they are.
 */
export function extractChange(sentence: string) {
  return (entry: AuditEntry, details: Record<string, unknown>): ExtractWords => {
    const id = typeof details.configurationId === 'number' ? details.configurationId : undefined;
    const changed = Array.isArray(details.changed) ? details.changed.map(String) : undefined;
    const state = text(details.state);
    const execution = details.executionId;
    return {
      what: sentence,
      fields: [
        ...(id === undefined
          ? []
          : [['Configuration', configurationHtml(entry, id, text(details.name))] as const]),
        ...(changed === undefined ? [] : [['Changed', changed.map(keyInWords).join(', ')] as const]),
        ...(state === undefined
          ? []
          : [
              [
                'State',
                text(details.stateBefore) === undefined
                  ? state
                  : html`${state} <span class="muted">(was ${text(details.stateBefore)})</span>`,
              ] as const,
            ]),
        ...(typeof execution === 'number' ? [['Execution', idHtml(String(execution))] as const] : []),
      ],
      said: ['configurationId', 'name', 'changed', 'state', 'stateBefore', 'executionId', 'offsetsMoved'],
    };
  };
}
